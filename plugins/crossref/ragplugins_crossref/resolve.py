"""Resolving raw references to documents and chunks, over a whole collection.

Order of evidence for each kind of reference (never the chunk's own document):

- document mention: the document with that name (file name, title, first heading, alias);
- identifier ("RFC 9000"): the document that carries it in its name;
- citation ("[BROWN19]"): the citing document's own reference-list entry, read for a name or identifier;
- label ("Exhibit A - Financial Terms"):
  1. written with its owner ("... of the Acquisition Agreement"): that owner;
  2. a document that defines it: a title or heading, or a definition line ("Exhibit A: ...");
  3. a label other documents attribute to one owner: that owner;
  4. the referring document's own label that other documents restate
     ("Exhibit A - Financial Terms of the Acquisition Agreement"): those documents;
- section ("Section 4.3 of the Master Agreement"): the owner, and the chunk where that section starts.

Unresolved references are kept with ``target: null``. The per-chunk cap keeps
resolved references first, so a long list never crowds out the useful ones.
"""

from __future__ import annotations

import json
import posixpath
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragplugins_crossref.families import ReferenceFamily, families_for
from ragplugins_crossref.names import NameIndex, tokens
from ragplugins_crossref.scan import (
    LINKED_NAME,
    OTHER_NAME,
    WEB_ADDRESS,
    Profile,
    RawRef,
    anchor_key,
    build_profile,
    captions_agree,
    entry_name_key,
    in_folders,
    link_path,
    scan_chunk,
)

REFS_KEY = "crossref_refs"
DOC_KEY = "crossref_doc"


def _parent_sections(key: str) -> Iterable[str]:
    """'section 4.1.2' -> 'section 4.1.2', 'section 4.1', 'section 4'."""
    word, _, number = key.partition(" ")
    parts = number.split(".")
    for n in range(len(parts), 0, -1):
        yield f"{word} {'.'.join(parts[:n])}"


class Reads:
    """The registry entries looked up while one document is read and resolved ("files|x.md",
    "claims|exhibit a"): what its references depend on, so that a later write re-resolves only
    the documents whose entries it changed (ragplugins_crossref.corpus_state)."""

    def __init__(self) -> None:
        self.into: set[str] | None = None

    def note(self, table: str, key: Any) -> None:
        if self.into is not None:
            # Interned: many documents read the same entries, and every document's set is kept in the state.
            self.into.add(sys.intern(entry_key(table, key)))


def entry_key(table: str, key: Any) -> str:
    """One registry entry, as kept in the plugin state: 'exact|master services agreement'."""
    return f"{table}|{' '.join(key) if isinstance(key, tuple) else key}"


class _Watched(dict):
    """A registry table that notes each key looked up (not the lookups that build it)."""

    def __init__(self, table: str, data: dict, reads: Reads):
        super().__init__(data)
        self._name, self._reads = table, reads

    def get(self, key: Any, default: Any = None) -> Any:
        self._reads.note(self._name, key)
        return dict.get(self, key, default)

    def __contains__(self, key: object) -> bool:
        self._reads.note(self._name, key)
        return dict.__contains__(self, key)

    def __getitem__(self, key: Any) -> Any:
        self._reads.note(self._name, key)
        return dict.__getitem__(self, key)


# The tables a reference's resolution reads (names are found through ``names``: see corpus_state).
WATCHED_TABLES = ("profiles", "exact", "files", "unsuffixed", "ids", "definers", "claims", "anchors", "headings",
                  "paths", "stems", "folders")


@dataclass
class Registry:
    """Every document's names, labels, sections and claims, for one collection."""

    profiles: dict[str, Profile]
    aliases: dict[str, list[str]] = field(default_factory=dict)
    names: NameIndex = field(default_factory=NameIndex)
    exact: dict[tuple, set[str]] = field(default_factory=lambda: defaultdict(set))
    files: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    unsuffixed: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    ids: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    definers: dict[str, list[tuple[str, str, str]]] = field(default_factory=lambda: defaultdict(list))
    claims: dict[str, list[tuple[str, str, str]]] = field(default_factory=lambda: defaultdict(list))
    anchors: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    headings: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    paths: dict[str, str] = field(default_factory=dict)
    stems: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    folders: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    entry_owners: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    # Set by watch(): every lookup of a table in WATCHED_TABLES is noted there.
    reads: Reads | None = None

    def __post_init__(self) -> None:
        for doc_id, prof in self.profiles.items():
            declared = self.aliases.get(doc_id, []) + self.aliases.get(prof.file_name, [])
            for name in prof.names():
                self.names.add(name, doc_id)
                self.exact[tokens(name)].add(doc_id)
            for alias in declared:
                self.names.add(alias, doc_id, trusted=True)
                self.exact[tokens(alias)].add(doc_id)
            for base in file_bases(prof):
                self.files[base].add(doc_id)
            for base in unsuffixed_bases(prof):
                self.unsuffixed[base].add(doc_id)
            for key in prof.ids:
                self.ids[key].add(doc_id)
            for key in prof.named_links:
                self.ids[LINKED_NAME + key].add(doc_id)
            for key, info in prof.labels.items():
                self.definers[key].append((doc_id, info.get("caption", ""), info.get("chunk", "")))
            for key in prof.anchors:
                self.anchors[key].add(doc_id)
            for name in prof.terms:
                self.anchors[anchor_key("term", name)].add(doc_id)
            for key in prof.defined:
                self.anchors[key].add(doc_id)
            for key in prof.headings:
                self.headings[key].add(doc_id)
            own, *compressed = document_paths(doc_id)
            self.paths[own] = doc_id
            for path in compressed:   # a page of that path itself, if indexed, keeps it
                self.paths.setdefault(path, doc_id)
            self.stems[_source_stem(doc_id)].add(doc_id)
            self.folders[_folder(doc_id)].add(doc_id)
        self.refresh_claims()

    def refresh_claims(self) -> None:
        claims: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
        for doc_id, prof in self.profiles.items():
            for label, caption, owner in prof.claims:
                claims[label].append((doc_id, caption, owner))
        self.claims = _Watched("claims", claims, self.reads) if self.reads is not None else claims

    def watch(self) -> Reads:
        """Note from now on which entries each lookup reads (into ``reads.into`` while it is a set)."""
        self.reads = Reads()
        for table in WATCHED_TABLES:
            setattr(self, table, _Watched(table, getattr(self, table), self.reads))
        return self.reads

    def scan(self, text: str, families: Sequence[ReferenceFamily]) -> list[RawRef]:
        return scan_chunk(text, families, self.names, self.files, self.exact)


def _file_name(path: str) -> str:
    """The last part of a path, written with either slash."""
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def file_bases(prof: Profile) -> set[str]:
    """The file names a document is written by, in lower case: its own, and without ``.gz`` (Debian compresses a
    package's notes: "the AUTHORS file" is AUTHORS.gz)."""
    names = {prof.file_name.lower(), _file_name(prof.doc_id).lower()}
    return names | {n.removesuffix(".gz") for n in names}


def document_paths(doc_id: str) -> list[str]:
    """The paths a link reaches a document by: its own, and a compressed page's without ``.gz`` (Debian compresses
    a manual's long pages: the Securing Debian Manual links "changelog.html", installed as changelog.html.gz)."""
    path = posixpath.normpath(doc_id.replace("\\", "/"))
    return [path, path.removesuffix(".gz")] if path.endswith(".gz") else [path]


def unsuffixed_bases(prof: Profile) -> set[str]:
    """The document's file names without their last suffix ("lxml.html.html" -> "lxml.html")."""
    return {base.rsplit(".", 1)[0] for base in file_bases(prof) if "." in base.strip(".")}


def _owner_docs(ref: RawRef | None, doc_id: str, registry: Registry, families: Sequence[ReferenceFamily],
                depth: int = 0) -> set[str]:
    """The documents a name, identifier or citation names (possibly including ``doc_id``)."""
    if ref is None:
        return set()
    if ref.kind == "document":
        if ref.family == "name":
            # The title of a folder's front page, on a page in that folder, is the name of the page's own work.
            return {doc_id if _front_page_above(d, doc_id) else d for d in ref.docs}
        if ref.family != "filename":
            return set(ref.docs)
        if ref.docs:
            named = {d for d in ref.docs if _written_as(d, ref.text)}
            # A file name that is also another page's name without its suffix may be either: lxml's prose writes
            # "lxml.html" for the module, whose page is lxml.html.html, beside the package's page lxml.html
            # (37 of a new user's 160 resolved references). No guess.
            written = _file_name(ref.text).lower()
            return set() if registry.unsuffixed.get(written, set()) - named else named
        if not ref.text.lower().endswith(_SOURCES):
            return set()
        # A source named for the document rendered from it, as a link to a rendered page names its source: "see
        # clsguide.tex" with clsguide.pdf indexed, the kernel's "Documentation/admin-guide/cgroup-v1/cpusets.rst"
        # with its HTML. (Not any file name's stem: "index.html" in Python's http.server page is a file a server
        # serves.)
        return _link_target(ref.text, doc_id, registry, named=True)
    if ref.kind == "identifier":
        # Names in one case match whatever one case they are written in; names in mixed case as written.
        # A page's own name first, then a manual page whose NAME section lists it, then the page that other
        # pages' links give the name (their link resolved where it stands).
        own = registry.ids.get(ref.case_key) or registry.ids.get(OTHER_NAME + ref.case_key)
        if own:
            return set(own)
        linked: set[str] = set()
        for linking in registry.ids.get(LINKED_NAME + ref.case_key) or ():
            prof = registry.profiles.get(linking)
            if prof is not None and ref.case_key in prof.named_links:
                linked |= _link_target(prof.named_links[ref.case_key], linking, registry)
        return linked if len(linked) == 1 else set()   # links that disagree name no page
    if ref.kind == "citation" and depth == 0:
        # Each entry is read once per document, however often the key is cited.
        if (doc_id, ref.key) not in registry.entry_owners:
            entry = registry.profiles.get(doc_id, Profile(doc_id)).citations.get(ref.key)
            # A link definition or hyperlink target is a path, relative to the citing file; a reference
            # list's entry is prose naming a document.
            path = link_path(entry) if entry and not any(c.isspace() for c in entry) else ""
            found: set[str] = _link_target(path, doc_id, registry, fragment=(entry or "").partition("#")[2]) \
                - {doc_id} if path else set()
            for inner in registry.scan(entry, families) if entry and not found else ():
                if inner.kind in ("document", "identifier", "link"):
                    found |= _owner_docs(inner, doc_id, registry, families, depth + 1) - {doc_id}
            registry.entry_owners[(doc_id, ref.key)] = found
        return set(registry.entry_owners[(doc_id, ref.key)])
    if ref.kind == "link":
        return _link_target(ref.key, doc_id, registry, fragment=ref.fragment)
    return set()


def _link_target(href: str, doc_id: str, registry: Registry, named: bool = False, fragment: str = "") -> set[str]:
    """The indexed document a hyperlink's path names, relative to the citing document's own path (or,
    rendered from a source, the page beside it: "os.path.html" for os.path.rst.txt); else the one document
    with that file name or stem (the link was written for another folder layout) in the folders the link
    names: ``c3ref/stmt.html`` is not ``stmt.html`` when c3ref/ was not indexed. A link into a folder that was
    indexed and lacks the file names another folder's only where its ``fragment`` names a place there:
    Sphinx's tutorial links "todo.html", its own page, not the extension's page of that name elsewhere, while
    docutils' "latex.html#latex-preamble", written for another layout, is the LaTeX writer's page holding that
    section. A path from the site's root ("/doc/go1.17_spec.html") may name folders above the indexed one.
    ``named``: a source's file name written in prose ("see Documentation/admin-guide/cgroup-v1/cpusets.rst"),
    which names a file wherever it is, not a path from the page."""
    web = WEB_ADDRESS.match(href)
    if web:
        return _web_copy_of(web.group("path") or "", registry, fragment)
    path = href.replace("\\", "/")
    rooted = path.startswith("/")
    astray = False   # the path leads into an indexed folder that lacks its file
    if not rooted:
        where = posixpath.normpath(posixpath.join(posixpath.dirname(doc_id.replace("\\", "/")), path))
        if not named and (where == ".." or where.startswith("../")):
            # The link leaves the folder that was indexed: what it names is not here, whatever shares its file
            # name (a new user's subfolder of Sphinx's documentation: the logo's "../../index.html", the site's
            # welcome page, went to the subfolder's own index.html from 20 of its 21 pages).
            return set()
        exact = registry.paths.get(where)
        if exact is not None:
            return {exact}
        # (Not for a name in prose: "your index.rst" is the reader's file, not the index page beside it.)
        if not named:
            folder = posixpath.dirname(where)
            beside = {d for d in registry.stems.get(_source_stem(path), set()) if _folder(d) == folder}
            if len(beside) == 1:
                return beside
            astray = folder in registry.folders
    folders = path.split("/")[:-1]
    # Documentation sources link to their rendered pages ("link:user-manual.html[...]" in user-manual.txt's
    # neighbours): the one file with that name, else the one source with that stem.
    for table, key in ((registry.files, path.rsplit("/", 1)[-1].lower()), (registry.stems, _source_stem(path))):
        found = {d for d in table.get(key, set()) if in_folders(d, folders, overlap=rooted)
                 and (not rooted or _rooted_path_reaches(d, folders))
                 and (not astray or _holds_place(registry, d, fragment))
                 and (not named or _written_as(d, path) and (table is registry.files or _rendered_from(d, path)))}
        if len(found) == 1:
            return found
    return set()


def _rooted_path_reaches(doc_id: str, folders: list[str]) -> bool:
    """Whether a path from a root ("/doc/go1.17_spec.html") can name ``doc_id``, the folders they share agreeing: one
    that names two folders or more says where its file stands, and a page at the top of what was indexed stands in
    none of them. Debian's Click pages link Python's own pages as "/usr/share/doc/python3-doc/html/library/
    exceptions.html" (892 links, Python's documentation not installed): 10 went to Click's exceptions.html."""
    named = [part for part in folders if part not in ("", ".", "..")]
    return len(named) < 2 or "/" in doc_id.replace("\\", "/")


def _written_as(doc_id: str, written: str) -> bool:
    """Whether a file name written in prose is ``doc_id``'s in its own case, extensions aside: files that differ in
    case are two files ("Create a `TEST.md` file in the repository's root" is not the contributors' test.md)."""
    name = _file_name(doc_id)
    source = _file_name(written)
    return name.startswith(source[: len(_source_stem(source))])


def _rendered_from(doc_id: str, source: str) -> bool:
    """Whether ``doc_id`` can be what a source named in prose is rendered as: a page (HTML, PDF, ...), or that
    source in its own format ("os.path.rst" is os.path.rst.txt), never a source in another ("adds test.txt to
    the image", a file of Docker's example, is not the contributors' test.md)."""
    name = _file_name(doc_id).lower()
    if not name.endswith(_SOURCES):
        return True
    written = next((ext for ext in _SOURCES if source.lower().endswith(ext)), "")
    return bool(written) and f"{written}." in f"{name}."


def _holds_place(registry: Registry, doc_id: str, fragment: str, past_opening: bool = False) -> bool:
    """Whether a document has the anchor or heading a link's ``fragment`` names; ``past_opening``: below its first
    chunk, where a page's title and opening anchors are, which every page of its file name has alike (a texinfo
    manual's "index.html#Top": the bison manual's address named a new user's flex manual's front page)."""
    prof = registry.profiles.get(doc_id) if fragment else None
    if prof is None:
        return False
    place = prof.anchored(fragment) or prof.slugs.get(entry_name_key(fragment))
    return bool(place) and not (past_opening and place == prof.opening)


def _web_copy_of(path: str, registry: Registry, fragment: str = "") -> set[str]:
    """The one indexed document a web address is a copy of: its folders, all of them (at least one), and its
    file name or stem end the address's path ("https://docutils.sourceforge.io/docs/ref/rst/roles.html" is
    ref/rst/roles.txt of a folder indexed with ref/ inside it). A page whose folders are not the address's (or
    that has none: the top of the folder given) is no more likely this site's than any other's, unless it is the
    one of that file name holding, below its opening, the place the address's ``fragment`` names (R's manuals
    link each other as "https://cran.r-project.org/doc/manuals/R-exts.html#Registering-native-routines"; indexed
    from manual/; MathJax's "configuration.html#configuration", its title, is not Sphinx's configuration page)."""
    name = path.rsplit("/", 1)[-1].lower()

    def copied(candidate: str) -> bool:
        # The address's path stands in every folder of the document (read the other way round from a link's).
        held = candidate.replace("\\", "/").split("/")[:-1]
        return bool(held) and in_folders(path, held)

    for table, key in ((registry.files, name), (registry.stems, _source_stem(name))):
        found = {d for d in table.get(key, set()) if copied(d)}
        if found:
            return found if len(found) == 1 else set()
    found = {d for d in registry.files.get(name, set()) if _holds_place(registry, d, fragment, past_opening=True)}
    return found if len(found) == 1 else set()


_TYPESET_SOURCES = (".tex", ".texi", ".texinfo")
# What a page is written in, and what it is rendered as.
_SOURCES = (".rst", ".txt", ".md", ".markdown", ".adoc", ".asciidoc", *_TYPESET_SOURCES)
_DOC_EXTENSIONS = (".html", ".htm", ".pdf", ".docx", ".epub", *_SOURCES)


def _source_stem(path: str) -> str:
    """'os.path.rst.txt' -> 'os.path', 'user-manual.html' -> 'user-manual' (file name, lower case)."""
    name = _file_name(path).lower()
    for _ in range(2):
        for ext in _DOC_EXTENSIONS:
            if name.endswith(ext) and len(name) > len(ext):
                name = name[: -len(ext)]
                break
    return name


def _dotted_prefixes(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:n]) for n in range(len(parts), 0, -1)]


def _anchor_candidates(key: str, scope: str) -> list[str]:
    """Keys to try for a Python role, in the order of Sphinx's Python domain (a name as written
    first, then inside the citing document's module), then, as a fallback for objects documented
    inside another directive, their enclosing objects and modules ('os.path.join' -> 'os.path' ->
    'os'). Labels are looked up as written."""
    space, _, name = key.partition(":")
    if space != "py":
        return [key]
    local_first = name.startswith(".")   # ':func:`.open`': this module's open before the built-in
    name = name.lstrip(".")
    exact = _dotted_prefixes(name)
    # Never the citing module itself or its parents: those are where the name was looked for, not found.
    scoped = [p for p in _dotted_prefixes(f"{scope}.{name}") if len(p) > len(scope)] if scope else []
    keys = [*scoped[:1], exact[0]] if local_first else [exact[0], *scoped[:1]]
    keys += [*exact[1:], *scoped[1:]]
    return [f"py:{k}" for k in dict.fromkeys(keys)]


def _entry_chunk(registry: Registry, target: str, names: Sequence[str], fragment: str = "") -> str | None:
    """The chunk of ``target`` holding the entry a reference names: where the page's anchor a link's ``fragment``
    names begins (an HTML id), else a name it defines, as written or respelt (a configuration name; a link's
    fragment, then its shown words), else the heading a link's ``fragment`` makes an anchor of. A reference
    into a 400-chunk reference page points at that entry, as "Section 4.3" points at its section. None when
    the target has none of them: a link to the whole page ("[Stream](stream.md)") names no heading, even the
    title its words repeat."""
    prof = registry.profiles.get(target) if names or fragment else None
    if prof is None:
        return None
    anchored = prof.anchored(fragment) if fragment else None
    if anchored:
        return anchored   # where the page's own anchor of that name begins
    for name in names:
        chunk = prof.terms.get(name) or prof.respelt_terms.get(entry_name_key(name))
        if chunk:
            return chunk
    return prof.slugs.get(entry_name_key(fragment)) if fragment else None


def _link_entry(ref: RawRef, doc_id: str, registry: Registry) -> tuple[tuple[str, ...], str]:
    """The names and fragment a reference gives for an entry of its target. A citation of a Markdown
    reference list ("[`EventEmitter`]: events.md#class-eventemitter") gives its definition's fragment."""
    if ref.kind != "citation":
        return ref.entries, ref.fragment
    entry = registry.profiles.get(doc_id, Profile(doc_id)).citations.get(ref.key, "")
    fragment = entry.partition("#")[2] if "#" in entry and not any(c.isspace() for c in entry) else ""
    return ((fragment,) if fragment else ()), fragment


def _front_page_above(target: str, doc_id: str) -> bool:
    """``target`` is the front page (``index.html``, ``index.en.html``) of a folder holding ``doc_id``: its title is
    the name of the work the page is part of, so a page naming it names its own work ("this updated 'Guide for
    Debian Maintainers'" in a chapter of that guide), not a document to go to."""
    if target == doc_id or _source_stem(target).split(".")[0] != "index":
        return False
    return f"{_folder(doc_id)}/".startswith(f"{_folder(target)}/".lstrip("/"))


def _folder(doc_id: str) -> str:
    """The folder a document was indexed in ('' at the top)."""
    return doc_id.replace("\\", "/").rpartition("/")[0]


def _record(ref: RawRef, target: str | None, how: str | None, chunk: str | None = None) -> dict[str, Any]:
    rec: dict[str, Any] = {"kind": ref.kind, "ref": ref.key, "text": " ".join(ref.text.split()),
                           "target": target, "how": how}
    if chunk:
        rec["chunk"] = chunk
    return rec


def _own_place(ref: RawRef, doc_id: str, registry: Registry) -> list[dict[str, Any]]:
    """A link within the page: the place of this document it lands on, when the page has that anchor or heading."""
    citing = registry.profiles.get(doc_id)
    place = citing.anchored(ref.fragment) or citing.slugs.get(entry_name_key(ref.fragment)) if citing else None
    return [_record(ref, None, "internal", place)] if place else []


def resolve_ref(ref: RawRef, doc_id: str, registry: Registry,
                families: Sequence[ReferenceFamily]) -> list[dict[str, Any]]:
    """Records for one raw reference: one per target, or one with ``target: None``."""
    if ref.kind == "anchor":
        citing = registry.profiles.get(doc_id)
        for key in _anchor_candidates(ref.key, citing.scope if citing else ""):
            declared = registry.anchors.get(key)
            if not declared:
                continue
            if doc_id in declared:
                return []   # declared here: the document pointing into itself
            if citing and key.startswith("term:") and key[len("term:"):] in citing.parameters:
                return []   # a parameter of the page's own signature, whoever else defines that name
            if len(declared) > 1 and (key.startswith("term:") or any(
                    key in registry.profiles[d].defined for d in declared if d in registry.profiles)):
                # nginx's `$remote_addr` is defined by its http and its stream core page: a page under http/
                # means the one beside it, as a relative link would. Still two beside it: no guess.
                declared = {d for d in declared if _folder(d) == _folder(doc_id)} or declared
            if len(declared) == 1:
                target = next(iter(declared))
                chunk = registry.profiles[target].defined.get(key) if target in registry.profiles else None
                return [_record(ref, target, "declaration",
                                chunk or _entry_chunk(registry, target, [key.partition(":")[2]]))]
            return [_record(ref, None, "ambiguous")]
        return [_record(ref, None, None)]
    if ref.kind == "link" and not ref.key:
        return _own_place(ref, doc_id, registry)
    if ref.kind in ("document", "identifier", "citation", "link"):
        if ref.kind == "citation" and ref.key not in registry.profiles.get(doc_id, Profile(doc_id)).citations:
            return []  # brackets that no reference list defines are not citations
        owners = _owner_docs(ref, doc_id, registry, families)
        if doc_id in owners and ref.kind in ("document", "identifier", "link"):
            # The document's own name, number or path: a mention of itself, never of a document
            # that merely quotes it ("RFC 9000" inside RFC 9000, not the RFC whose title cites it). A link to a place
            # of the page written with its own file name ("apt.html#sect.apt-update" in apt.html: DocBook's chunked
            # HTML writes every cross-reference so) lands on that place, as "#sect.apt-update" would.
            return _own_place(ref, doc_id, registry) if ref.kind == "link" and ref.fragment else []
        targets = owners - {doc_id}
        if len(targets) == 1:
            by_file = ref.family == "filename" or ref.family != "name" and ref.key in registry.files
            how = {"document": "filename" if by_file else "name",
                   "identifier": "identifier", "citation": "citation", "link": "link"}[ref.kind]
            target = targets.pop()
            return [_record(ref, target, how, _entry_chunk(registry, target, *_link_entry(ref, doc_id, registry)))]
        if ref.kind == "link" and not targets:
            return []   # a link to a file that is not indexed (or to another site) names nothing here
        return [_record(ref, None, "ambiguous" if targets else None)]
    owners = _owner_docs(ref.qualifier, doc_id, registry, families)
    if ref.kind == "section" and ref.qualifier is None:
        if ref.designated or ref.work and not _names_itself(ref.work, doc_id, registry):
            return [_record(ref, None, None)]
        return _section_by_heading(ref, doc_id, registry)
    if ref.kind == "section":
        owners.discard(doc_id)
        if len(owners) != 1:
            return [_record(ref, None, "ambiguous" if owners else None)]
        owner = owners.pop()
        sections = registry.profiles[owner].sections if owner in registry.profiles else {}
        chunk = next((sections[k] for k in _parent_sections(ref.key) if k in sections), None)
        return [_record(ref, owner, "qualifier", chunk)]
    # Labels.
    other_owners = owners - {doc_id}
    if len(other_owners) == 1:
        owner = other_owners.pop()
        info = registry.profiles[owner].labels.get(ref.key, {}) if owner in registry.profiles else {}
        return [_record(ref, owner, "qualifier", info.get("chunk"))]
    if other_owners:
        return [_record(ref, None, "ambiguous")]
    defined = [(d, chunk) for d, cap, chunk in registry.definers.get(ref.key, ()) if captions_agree(cap, ref.caption)]
    if any(d == doc_id for d, _ in defined):
        return [_record(ref, None, "internal", next(chunk for d, chunk in defined if d == doc_id))]
    if len(defined) == 1:
        return [_record(ref, defined[0][0], "definition", defined[0][1])]
    if defined:
        return [_record(ref, None, "ambiguous")]
    claims = [(claimer, owner) for claimer, cap, owner in registry.claims.get(ref.key, ())
              if captions_agree(cap, ref.caption) and claimer != doc_id]
    claimed_owners = {owner for _, owner in claims}
    if claimed_owners - {doc_id} and len(claimed_owners - {doc_id}) == 1 and doc_id not in claimed_owners:
        return [_record(ref, claimed_owners.pop(), "owner")]
    restaters = sorted({claimer for claimer, owner in claims if owner == doc_id})
    if restaters and doc_id in claimed_owners:
        return [_record(ref, d, "restated") for d in restaters]
    return [_record(ref, None, None)]


def _top_section(key: str) -> str:
    """'section 4.1.2' -> 'section 4'."""
    return key.split(".", 1)[0]


def _names_itself(work: str, doc_id: str, registry: Registry) -> bool:
    """Whether a work named in words is the citing document by its title ("section 2 of the Management Guide" in
    the HAProxy Management Guide)."""
    titles = registry.profiles[doc_id].titles if doc_id in registry.profiles else []
    return any(work.casefold() in title.casefold() for title in titles)


def _section_by_heading(ref: RawRef, doc_id: str, registry: Registry) -> list[dict[str, Any]]:
    """A section named without its document ("see Section 8.3", "Chapter 21"), for collections
    whose sections are separate files: the one other document whose headings or title start that
    section ("# Section 8: Overtime", "## 25.1.3. Restoring the Dump"), the nearest enclosing
    section when none starts the exact one. Internal when the citing document numbers sections
    under the same top-level number itself (any numbered line counts there, not only headings)."""
    own = registry.profiles[doc_id].sections if doc_id in registry.profiles else {}
    if _top_section(ref.key) in {_top_section(key) for key in own}:
        # "Section 1.5" in a document numbering its own sections 1.1-1.4: its own numbering (a
        # section it lacks is a dangling internal reference, not a pointer to another file's 1.5). Its place is
        # where that section, or the nearest enclosing one, starts.
        place = next((own[key] for key in _parent_sections(ref.key) if key in own), None)
        return [_record(ref, None, "internal", place)]
    for key in _parent_sections(ref.key):
        definers = registry.headings.get(key, set()) - {doc_id}
        if len(definers) == 1:
            owner = next(iter(definers))
            return [_record(ref, owner, "heading", registry.profiles[owner].sections.get(key))]
        if definers:
            return [_record(ref, None, "ambiguous")]
    return [_record(ref, None, None)]


def cap_refs(records: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """Distinct records, at most ``limit``: one per target document first (text order), then the
    other resolved ones, then the unresolved ones (references within the document among them: ``how`` is
    "internal", ``chunk`` the place named), so a long list never crowds out a target."""
    seen, unique = set(), []
    for rec in records:
        # The same reference written differently ("Section 27.2" and "Section 27.2.5", both links to
        # warm-standby.html) stays: each text says something else about the target.
        key = (rec["kind"], rec["ref"], rec["target"], rec.get("text"))
        if key not in seen:
            seen.add(key)
            unique.append(rec)
    firsts, covered = [], set()
    for rec in unique:
        if rec["target"] and rec["target"] not in covered:
            covered.add(rec["target"])
            firsts.append(rec)
    first_ids = {id(f) for f in firsts}
    others = [r for r in unique if r["target"] and id(r) not in first_ids]
    # An unresolved duplicate of a resolved reference adds nothing.
    done = {(r["kind"], r["ref"]) for r in unique if r["target"]}
    unresolved = [r for r in unique if not r["target"] and (r["kind"], r["ref"]) not in done]
    # Links within the page ("#place", or the page's own file with a place) come last: a page's contents list of them
    # never crowds out another reference.
    unresolved.sort(key=lambda r: r["kind"] == "link" and r["how"] == "internal")   # stable: text order in each part
    return (firsts + others + unresolved)[:limit]


@dataclass
class Annotation:
    """The result of one extraction: per-document profiles and per-chunk reference lists."""

    profiles: dict[str, Profile]
    refs: dict[str, list[dict[str, Any]]]
    first_chunk: dict[str, str]
    # Per document, the registry entries its reading and resolving looked up (annotate(watch=True)).
    reads: dict[str, set[str]] = field(default_factory=dict)

    def stats(self) -> dict[str, int]:
        recs = [r for rs in self.refs.values() for r in rs]
        return {"chunks": len(self.refs), "chunks_with_refs": sum(1 for rs in self.refs.values() if rs),
                "refs": len(recs), "resolved": sum(1 for r in recs if r["target"]),
                "documents_linked": len({r["target"] for r in recs if r["target"]})}

    def edges(self, chunk_doc: dict[str, str]) -> set[tuple[str, str]]:
        return {(chunk_doc[c], r["target"]) for c, rs in self.refs.items() for r in rs if r["target"]}


class Resolution:
    """Resolving a collection's references in the steps ``annotate`` takes, one document at a time:
    ``scan`` every document's chunks, then ``claim`` each one's labels written with their owner,
    then ``claims_done``, then ``resolve`` each. Whether the chunks are held in memory (``annotate``)
    or streamed from the store (``collection``), the result is the same.
    ``watch``: note, per document, the registry entries its references depend on (``noted``)."""

    def __init__(self, profiles: dict[str, Profile], families: Sequence[ReferenceFamily], *,
                 aliases: dict[str, list[str]] | None = None, max_refs: int = 16, watch: bool = False):
        self.profiles = profiles   # read here without noting: setting a document's claims reads no entry
        self.registry = Registry(profiles, aliases=aliases or {})
        self.families, self.max_refs, self.watch = families, max_refs, watch
        self._reads = self.registry.watch() if watch else Reads()
        self.noted: dict[str, set[str]] = {}

    def _noting(self, doc_id: str) -> None:
        self._reads.into = self.noted.setdefault(doc_id, set()) if self.watch else None

    def scan(self, doc_id: str, texts: Iterable[tuple[str, str]]) -> list[tuple[str, list[RawRef]]]:
        """[(chunk id, its raw references)] of one document's chunks [(chunk id, text)]."""
        self._noting(doc_id)
        texts = list(texts)
        families = families_for(self.families, "\n".join(text for _, text in texts))
        try:
            return [(cid, self.registry.scan(text, families)) for cid, text in texts]
        finally:
            self._reads.into = None

    def claim(self, doc_id: str, scanned: Iterable[tuple[str, list[RawRef]]]) -> None:
        """Set the document's claims ("Exhibit C of the Acquisition Agreement" says whose Exhibit C it is)."""
        self._noting(doc_id)
        try:
            claims: dict[tuple[str, str, str], None] = {}   # a dict: ordered, and membership in constant time
            for _, raws in scanned:
                for ref in raws:
                    if ref.kind == "label" and ref.qualifier is not None:
                        for owner in sorted(_owner_docs(ref.qualifier, doc_id, self.registry, self.families)
                                            - {doc_id}):
                            claims[(ref.key, ref.caption, owner)] = None
            self.profiles[doc_id].claims = [list(claim) for claim in claims]
        finally:
            self._reads.into = None

    def claims_done(self) -> None:
        """After every document's ``claim``: labels resolve against every other document's claims."""
        self.registry.refresh_claims()

    def resolve(self, doc_id: str, scanned: Iterable[tuple[str, list[RawRef]]]) -> dict[str, list[dict[str, Any]]]:
        """{chunk id: its reference records, capped} for the scanned chunks of one document."""
        self._noting(doc_id)
        try:
            return {cid: cap_refs([rec for ref in raws for rec in resolve_ref(ref, doc_id, self.registry,
                                                                             self.families)], self.max_refs)
                    for cid, raws in scanned}
        finally:
            self._reads.into = None


def annotate(documents: dict[str, list[tuple[str, str]]], metadata: dict[str, dict],
             families: Sequence[ReferenceFamily], *, stored: dict[str, Profile] | None = None,
             aliases: dict[str, list[str]] | None = None, max_refs: int = 16, watch: bool = False,
             anchors: Mapping[str, Sequence[str]] | None = None) -> Annotation:
    """Extract and resolve the references of ``documents`` ({doc id: [(chunk id, text)] in reading
    order}) against themselves plus the ``stored`` profiles of documents indexed earlier.
    ``watch``: also note, per document, the registry entries its references depend on. ``anchors``: the
    page anchors that begin in each chunk (by chunk id)."""
    profiles = {d: build_profile(d, chunks, metadata.get(d, {}), families, anchors)
                for d, chunks in documents.items()}
    steps = Resolution({**(stored or {}), **profiles}, families, aliases=aliases, max_refs=max_refs, watch=watch)
    scanned = {d: steps.scan(d, texts) for d, texts in documents.items()}
    for d, raw_chunks in scanned.items():
        steps.claim(d, raw_chunks)
    steps.claims_done()
    refs: dict[str, list[dict[str, Any]]] = {}
    for d, raw_chunks in scanned.items():
        refs.update(steps.resolve(d, raw_chunks))
    first = {d: chunks[0][0] for d, chunks in documents.items() if chunks}
    return Annotation(profiles=profiles, refs=refs, first_chunk=first, reads=steps.noted)


def dump_refs(records: list[dict[str, Any]]) -> str:
    return json.dumps(records, separators=(",", ":"), ensure_ascii=False)


@dataclass
class ReferenceCounts:
    documents: int = 0
    total: int = 0       # references stored
    elsewhere: int = 0   # resolved to another document
    within: int = 0      # to a place of the referring document itself


def reference_counts(rows: Iterable[Any]) -> ReferenceCounts:
    """How many references the stored chunks (``ChunkRow`` with ``REFS_KEY``) hold, and where they resolved."""
    out, documents = ReferenceCounts(), set()
    for row in rows:
        documents.add(row.doc_id)
        for ref in load_refs(row.metadata.get(REFS_KEY)):
            out.total += 1
            if ref.get("how") == "internal" or (ref.get("target") and ref.get("target") == row.doc_id):
                out.within += 1
            elif ref.get("target"):
                out.elsewhere += 1
    out.documents = len(documents)
    return out


def load_refs(raw: Any) -> list[dict[str, Any]]:
    """The references stored on a chunk; [] for a chunk never annotated or holding junk."""
    if not isinstance(raw, str) or not raw:
        return []
    try:
        data = json.loads(raw)
    except json.JSONDecodeError:
        return []
    return [r for r in data if isinstance(r, dict) and "ref" in r] if isinstance(data, list) else []
