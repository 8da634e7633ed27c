"""What crossref keeps per document so that a write re-resolves only the references it can change.

How a chunk's references resolve depends on the whole collection: a mention of a document added
later, a label some other document defines, a target that is deleted. Resolving every chunk again
after each write makes adding 40 documents to 4,000 cost as much as a third of a full build, so the
plugin state ``crossref/documents`` keeps, per document and with its content hash:

- its profile (names, labels, sections, claims: what other documents resolve against);
- the registry entries its references looked up ("files|exhibit_a.md", "claims|exhibit a", noted by
  ``resolve.annotate(watch=True)``): its references can change only when one of them changes;
- the words it writes capitalised: a document name is found in text only written as a name (every
  content word capitalised), so a document whose text lacks one of those words cannot mention it.

A write compares the profiles before and after it, collects the entries and names that changed,
and re-reads and re-resolves only the documents it wrote and those depending on a changed entry or
able to mention a changed name (a document whose claims change in turn is followed the same way).
The stored references and profiles equal what resolving the whole collection gives
(``tests/test_incremental_backfill.py``); when the state is missing, unreadable, of another index,
version or configuration, every document is read and resolved again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from ragplugins import api
from ragplugins.api import StateError
from ragplugins_crossref.names import STOPWORDS, tokens
from ragplugins_crossref.resolve import _folder, _source_stem, document_paths, entry_key, file_bases, unsuffixed_bases
from ragplugins_crossref.scan import LINKED_NAME, Profile

logger = logging.getLogger(__name__)

PLUGIN = "crossref"
NAME = "documents"
# Raised when what a record means changes (the profile, the entries noted, the capitalised words, the
# references a text makes: 3, a name inside a link to another site is none; how one resolves: 4, a term two
# pages define goes to the one beside the citing page; 5, a link's fragment names the chunk where the page's
# anchor of that name begins; 6, an identifier written in mixed case keeps its case; 7, a manual page's other
# names, a page's own signature parameters, declared aliases in any case, no file names of server paths; 8, no
# heading that is one link, manual page names in emphasis and under a "## NAME" heading, a link cut at a chunk's
# start; 9, reStructuredText references through the file's targets, underlined headings as anchors; 10, anonymous
# and chained reStructuredText targets, web addresses of an indexed document's web copy, no reference on a target's
# own line; 11, link words holding brackets, file names with their folders, TeX sources; 12, a section starts at
# its heading before a table of contents' entry; 13, a section after a standard's designator is that standard's;
# 14, a page's dashed command-line options, no date as a section, no name alone on its line as a reference; 15, a
# source's path names the page rendered from it; 16, no file name in quotes of its own; 17, a page naming the front
# page of a folder holding it names its own work; 18, a manual page's name only where it opens a title, a section of
# a work named in words is not the page's own, emphasis inside a name), so that the next write resolves every
# document again rather than trusting records made the old way.
STATE_VERSION = 19
_PROFILE_FIELDS = tuple(f.name for f in fields(Profile) if f.name != "claims")


# A word (``names.TOKEN``) not starting with an ASCII lower-case letter: most words are skipped by the
# regex engine; the rest are then checked for a capital or a digit first (any script).
_NOT_LOWER_WORD = re.compile(r"(?<![^\W_])[^\W_a-z][^\W_]*")


def capitalised_words(texts: Iterable[str]) -> frozenset[str]:
    """The words (lower-cased) written with a capital or a digit first: the only ones a document name
    found in these texts can be made of (``names.written_as_name``), stop words aside."""
    # Interned: most documents share most of their words, and every document's set is kept in the state.
    return frozenset(sys.intern(t.lower()) for text in texts for t in _NOT_LOWER_WORD.findall(text)
                     if t[0].isupper() or t[0].isdigit())


@dataclass
class DocRecord:
    """One document's part of the state: its content hash, chunk ids, profile, the registry entries its
    references read, and its capitalised words."""

    doc_hash: str
    node_ids: tuple[str, ...]
    profile: Profile
    reads: frozenset[str]
    capitals: frozenset[str]
    profile_json: str = ""   # the profile as stored, when read back (written again as it is)

    def depends_on(self, change: Change) -> bool:
        if not self.reads.isdisjoint(change.entries):
            return True
        return change.may_be_named_in(self.capitals)


@dataclass
class Change:
    """What differs between two sets of profiles: registry entries, and the names (as their content words)."""

    entries: set[str]
    name_words: list[tuple[str, ...]]

    def __post_init__(self) -> None:
        # word -> the names using it: a document is checked only against the names one of its words is in.
        self._by_word: dict[str, list[frozenset[str]]] = {}
        for words in self.name_words:
            for w in words:
                self._by_word.setdefault(w, []).append(frozenset(words))
        self._everywhere = any(not words for words in self.name_words)   # a name of stop words only

    def since(self, earlier: Change | None) -> Change:
        """What this change adds to ``earlier`` (a record that held against ``earlier`` is checked only
        against the rest)."""
        if earlier is None:
            return self
        known = set(earlier.name_words)
        return Change(self.entries - earlier.entries, [w for w in self.name_words if w not in known])

    def may_be_named_in(self, capitals: frozenset[str]) -> bool:
        """Could text whose capitalised words are ``capitals`` mention one of the changed names?"""
        if self._everywhere:
            return True
        present = capitals.intersection(self._by_word)
        return any(words <= present for w in present for words in self._by_word[w])


def _declared(prof: Profile, aliases: Mapping[str, list[str]]) -> list[str]:
    return aliases.get(prof.doc_id, []) + aliases.get(prof.file_name, [])


def name_tokens(prof: Profile | None, aliases: Mapping[str, list[str]]) -> set[tuple[str, ...]]:
    """Every name the registry files the document under (searched or not), as token tuples."""
    if prof is None:
        return set()
    return {t for t in (tokens(n) for n in [*prof.names(), *_declared(prof, aliases)]) if t}


def registry_entries(prof: Profile | None, aliases: Mapping[str, list[str]]) -> set[str]:
    """The entries of ``resolve.Registry`` the document fills, its claims aside."""
    if prof is None:
        return set()
    d = prof.doc_id
    out = {entry_key("profiles", d), entry_key("stems", _source_stem(d)), entry_key("folders", _folder(d))}
    out.update(entry_key("paths", path) for path in document_paths(d))
    out.update(entry_key("exact", t) for t in name_tokens(prof, aliases))
    out.update(entry_key("files", b) for b in file_bases(prof))
    out.update(entry_key("unsuffixed", b) for b in unsuffixed_bases(prof))
    out.update(entry_key("ids", k) for k in prof.ids)
    out.update(entry_key("ids", LINKED_NAME + k) for k in prof.named_links)
    out.update(entry_key("definers", k) for k in prof.labels)
    out.update(entry_key("anchors", k) for k in prof.anchors)
    out.update(entry_key("headings", k) for k in prof.headings)
    return out


def _same_but_claims(a: Profile, b: Profile) -> bool:
    return all(getattr(a, f) == getattr(b, f) for f in _PROFILE_FIELDS)


def changes(before: Mapping[str, Profile], after: Mapping[str, Profile], aliases: Mapping[str, list[str]]) -> Change:
    """The registry entries and names whose content differs between the collections ``before`` and ``after``."""
    entries: set[str] = set()
    names: set[tuple[str, ...]] = set()
    for d in before.keys() | after.keys():
        old, new = before.get(d), after.get(d)
        if old is new:
            continue
        if old is None or new is None or not _same_but_claims(old, new):
            names |= name_tokens(old, aliases) ^ name_tokens(new, aliases)
            entries |= registry_entries(old, aliases) | registry_entries(new, aliases)
        old_claims = {tuple(c) for c in old.claims} if old is not None else set()
        new_claims = {tuple(c) for c in new.claims} if new is not None else set()
        entries.update(entry_key("claims", c[0]) for c in old_claims ^ new_claims)
    entries.update(entry_key("exact", t) for t in names)
    words = sorted({tuple(w for w in t if w not in STOPWORDS) for t in names})
    if names & {tokens(a) for declared in aliases.values() for a in declared}:
        words.append(())   # a declared alias is found in any case: any document may mention it
    return Change(entries, words)


def fingerprint(family_names: list[str], aliases: Mapping[str, list[str]], max_refs: int) -> str:
    """What the records were made with: another set of families, aliases or cap makes them unusable."""
    raw = json.dumps([STATE_VERSION, family_names, dict(sorted(aliases.items())), max_refs], sort_keys=True)
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


class StateLocation:
    """The records of an index's documents, kept as the plugin state ``crossref/documents``."""

    def __init__(self, ctx: api.RagContext):
        self.state = ctx.state(PLUGIN)
        self.index_id = ctx.index_id

    def read(self, made_with: str) -> dict[str, DocRecord] | None:
        """The stored records, or None when there are none usable (then every document is resolved again)."""
        try:
            stored = self.state.read(NAME)
        except StateError as exc:
            logger.info("crossref: the state is not usable (%s); every document is resolved again", exc)
            return None
        if stored is None or stored.index_id != self.index_id or stored.meta.get("made_with") != made_with:
            return None
        out = {}
        try:
            for r in stored.records:
                doc_id = str(r["doc_id"])
                profile = Profile.from_json(doc_id, r["profile"])
                if profile is None:
                    return None
                out[doc_id] = DocRecord(str(r["hash"]), tuple(r["node_ids"]), profile, frozenset(r["reads"]),
                                        frozenset(str(r["capitals"]).split()), r["profile"])
        except (KeyError, TypeError, AttributeError):
            return None
        return out

    def settings(self) -> dict[str, Any] | None:
        """The settings (``CrossrefExtractor.settings``) the stored references were last resolved with; None
        when that is not known (no state, another index's, or one written before they were kept)."""
        try:
            stored = self.state.read(NAME)
        except StateError:
            return None
        if stored is None or stored.index_id != self.index_id or not isinstance(stored.meta.get("settings"), dict):
            return None
        return stored.meta["settings"]

    def write(self, records: Mapping[str, DocRecord], made_with: str, settings: Mapping[str, Any]) -> None:
        # Sets in no particular order: sorting 4,000 of them costs more than the rest of the write.
        rows = [{"doc_id": d, "hash": r.doc_hash, "node_ids": list(r.node_ids),
                 "profile": r.profile_json or r.profile.to_json(), "reads": list(r.reads),
                 "capitals": " ".join(r.capitals)} for d, r in sorted(records.items())]
        try:
            self.state.write(NAME, rows, {"made_with": made_with, "settings": dict(settings), "documents": len(rows)})
        except StateError as exc:
            # The references are written already; without the state the next write resolves every document.
            logger.warning("crossref: the state could not be written (%s); the next write resolves every "
                           "document again", exc)


@dataclass
class Extracted:
    """Records the extractor of this process made during the write under way, with the collection it
    resolved them against: the after-index step takes them instead of reading those documents again."""

    base: dict[str, Profile]
    records: dict[str, DocRecord]


# Index id -> what this process extracted for it since its last after-index step. Bounded: a process
# that extracts without ever running the after-index step (a Ray worker) does not grow without end.
_EXTRACTED: dict[tuple[str, str], list[Extracted]] = {}
EXTRACTED_LIMIT = 200_000


def keep_extracted(index_id: str, made_with: str, found: Extracted) -> None:
    kept = _EXTRACTED.setdefault((index_id, made_with), [])
    if sum(len(e.records) for e in kept) + len(found.records) > EXTRACTED_LIMIT:
        kept.clear()
        return
    kept.append(found)


def take_extracted(index_id: str, made_with: str) -> list[Extracted]:
    return _EXTRACTED.pop((index_id, made_with), [])


def forget_extracted(index_id: str) -> None:
    for key in [k for k in _EXTRACTED if k[0] == index_id]:
        del _EXTRACTED[key]
