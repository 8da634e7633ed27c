"""Query time: a node postprocessor that follows the reference the question is about.

A question that needs a hop talks about a claim some document makes by pointing
elsewhere ("the NDA can be superseded by a later agreement: as of what date was
it entered into?"). So the hop first finds that pointer: among the references
made by the top ``trigger_depth`` candidates (to documents among the candidates
or not), the one whose sentence is most like the question (soft-wrapped PDF
and HTML source lines joined, each mention of a document scored on its own; ties go to the
higher-ranked referrer, then to a mention naming a section). Which document to
follow is decided by the query, not by the order references appear in the text
(localGPT's 0-of-11 trap), nor by how much the target looks like the question.

A question that names documents (by title, heading, file name or alias, in any
case: questions are typed; in code documentation also by the module a Sphinx
page declares, written as "the time module" or as a dotted name such as
"imp.find_module", and by a manual page's name, "git rm" for "git-rm(1)") is
about them, so only references those documents make count: "the due diligence
report's summary refers to another document" means the report's reference, not
a reference into the report from elsewhere. When no top candidate comes from a
named document, nothing is followed. A name that is ordinary words in a question
("data loading") can only make the hop more cautious, never send it elsewhere.
Such a question retells, in the sentence that names the document, what that
document says around its pointer ("The os module says to look elsewhere for
high-level file and directory handling."); the rest asks what the other end
answers. So that sentence, not the whole question, chooses among the named
document's pointers, read by the better of the pointer's sentence and a passage
around it that makes no other reference.

References written in one breath ("see also the datetime and calendar modules")
share their sentence. Pointers whose sentences match equally (that, or one
sentence naming a label that two documents restate) are told apart by their
targets: the one the top ``window`` holds fewer chunks of first (the hop brings
what the candidates lack), then the one whose best chunk matches the question
better.

Then it fires only on insufficient evidence, two checks and no fallback:

- the pointer, read by its sentence (with ``reading = "passage"``, by the better
  of its sentence and its passage, the sentence with its neighbours in the
  paragraph: "See X for details." says only where to look), must match the
  query at least ``gate`` (1.0) times as well as, with ``swap``, the chunk it
  would displace (the pointer argues for its target at least as strongly as
  the traded chunk argues for itself, the chunk read by its best sentence as
  the pointer is, unless the question names the referring document), else the
  best candidate chunk (issue 14 replaced 0.85 x the best candidate, fitted on
  dev);
- (placements other than ``swap``) the pointer's lead chunk (the section the
  reference names, else the pointed-at document's best match for the query, by
  the core's document-filtered dense search under the host's filters) must not
  be a candidate already. If it is, the evidence is there and nothing is added.

The earlier design skipped references to documents already retrieved and went
to the best remaining one; on questions whose sources were already retrieved
that hop could only land elsewhere, and it never reached an expected source.

Placement: ``swap`` (default; issue 14) brings the pointed-at document's chunks
into the top ``window`` even when its best match is already there: the section the
reference names, or the entry declaring each object a Sphinx role of its sentence
names (best match first), then the document's other candidates (the chunk
that answers is often its second or fourth candidate, ranked below the window):
each takes the place of the lowest-ranked chunk below the referrer that repeats
a third document already represented above it, and nothing else moves, so no
chunk but that repeat leaves the window (the pointer's two documents are never
traded: a question asked from the other end of a reference has its answer in
the referring document; nor are the documents the question names or the top
candidates point at). No chunk to spare, no hop; a list shorter than the
window takes the lead chunk alone at its end. A reference whose named place is listed
already is covered: the page's other chunks are not what it points at.
``after_referrer`` puts hopped
chunks right after the chunk that pointed, dropping nothing (but shifting every
chunk below by one, out of the window at its edge). ``replace_tail`` keeps the
list's length: the lowest-ranked candidates below the referrer make room, so a
wrong hop can displace a relevant one. ``append`` adds the chunks after the
whole list. With the other placements, a pointer whose lead chunk is already a
candidate is "covered" and adds nothing.

A covered pointer (the candidates already hold the page it leads to) uses up no hop: the question may go
on from that page, so the pointers that page makes among the top candidates are weighed next, by the same
gate (a chain: the question's pointer leads to a listed page, which points on to the answer).
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Literal

from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle

from ragplugins import api
from ragplugins_crossref.families import MD_LINK, MD_LINK_TAIL
from ragplugins_crossref.names import STOPWORDS, NameIndex, searchable, tokens
from ragplugins_crossref.resolve import REFS_KEY, Registry, load_refs
from ragplugins_crossref.scan import RST_DIRECTIVE
from ragplugins_crossref.transform import stored_profiles

PLUGIN = "crossref"
_CONTEXT_CHARS = 240
_MAX_MENTIONS = 4
_SENTENCES_AT_ONCE = 8   # a traded chunk's sentences embedded per call, until one outweighs the pointer
_LEAD_LINES = 6       # lines an item may sit below its lead-in (siblings, wrapped lines)
_CLAUSE_SEPARATORS = (",", ";", "(", " - ")
# A list item read with its numbered lead-in: "4.1 Buyer's obligation ... subject to: (b) ...".
_CLAUSE_ID = re.compile(r"(\d+(?:\.\d+)*)\s[^:]{0,200}:\s\(?([a-z0-9]{1,3})\)")
# A line break ends a sentence when the line ends like one, stops well short of the wrap width
# before a line that starts like a sentence, or the next line opens a list item, a numbered clause
# or a heading; any other break is a soft wrap (PDF text wraps mid-sentence, and the sentence is
# what says what a reference is for). Text read from HTML or Markdown keeps its source's wraps,
# whose width counted the markup ("(also possible via" above "[`-D`](../../man/sphinx-build.html)"),
# so there a short line is often mid-sentence.
_HARD_END = re.compile(r"[.;!?]\s*$")
_SOFT_WRAP = 2 / 3   # of the longest line: a wrapped line runs (nearly) to the wrap width
_SENTENCE_START = re.compile(r"\s*[A-Z]")
_LIST_START = re.compile(r"\s*(?:[-*\u2022]|\[[ xX]?\]|\(?[0-9A-Za-z]{1,4}[.)]\s|\d+(?:\.\d+)+|[A-Z]{2,}\b)")


def _hard_breaks(text: str) -> list[int]:
    """Offsets of the line breaks that end a sentence: after a line that ends like a sentence or
    stops well short of the wrap width before a capital, or before a list item, numbered clause or
    heading."""
    lines = text.split("\n")
    width = max(len(line.rstrip()) for line in lines)
    out, offset = [], 0
    for line, nxt in zip(lines, lines[1:]):
        offset += len(line)
        short = len(line.rstrip()) < _SOFT_WRAP * width and _SENTENCE_START.match(nxt)
        if not nxt.strip() or short or _HARD_END.search(line) or _LIST_START.match(nxt):
            out.append(offset)
        offset += 1
    return out


def _line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def _heading(line: str) -> bool:
    return any(c.isalpha() for c in line) and line == line.upper()


def _lead_in(text: str, start: int) -> str:
    """The line introducing the list item that starts at ``start`` ("4.1 Buyer's obligation to close
    is subject to:" above "(b) Completion of due diligence per ..."): an item says what it is for only
    together with its lead-in. The nearest line above ending with a colon, passing over sibling items
    and their wrapped lines; none once a line ends a sentence, a heading or blank line comes, or
    _LEAD_LINES pass."""
    line_start = _line_start(text, start)
    if text[line_start:start].strip() or not _LIST_START.match(text[line_start:]):
        return ""
    end = line_start - 1
    for _ in range(_LEAD_LINES):
        if end <= 0:
            break
        begin = _line_start(text, end)
        line = text[begin:end].strip()
        if not line or _HARD_END.search(line) or _heading(line):
            break
        if line.endswith(":"):
            return line
        end = begin - 1
    return ""


def _items(text: str, end: int) -> str:
    """The list items after a lead-in that ends at ``end`` ("Per Document: X:" then "- item" lines):
    the lead-in's content is in them. Up to _CONTEXT_CHARS characters of item lines."""
    out: list[str] = []
    pos = text.find("\n", end)
    while pos >= 0 and sum(map(len, out)) < _CONTEXT_CHARS:
        nxt = text.find("\n", pos + 1)
        line = text[pos + 1: nxt if nxt >= 0 else len(text)]
        if not line.strip() or not _LIST_START.match(line) or _heading(line.strip()):
            break
        out.append(line.strip())
        pos = nxt
    return " ".join(out)


# References joined only by a conjunction or a comma share their clause ("see also :mod:`datetime`
# and :mod:`calendar`"): the sentence says the same of each. So do references each after the same
# preposition ("limited by [password](...), by the [result of subrequest](...), or by [JWT](...)").
_COORDINATED = re.compile(r"[\s,]*(?:(?:and|or|nor)\s+)?(?:(?P<prep>by|in|of|to|for|with|from|on|at|via|per)\s+)?"
                          r"(?:the\s+)?", re.IGNORECASE)


_WORD_BEFORE = re.compile(r"\b(?P<word>\w+)\s+(?:the\s+)?\Z", re.IGNORECASE)


def _coordinated(text: str, first: tuple[int, int], second: tuple[int, int]) -> bool:
    """Whether two references, ``first`` before ``second``, are joined only by a conjunction or a comma,
    or each follows the same preposition."""
    joined = _COORDINATED.fullmatch(text[first[1]:second[0]])
    if joined is None:
        return False
    prep = joined.group("prep")
    if prep is None:
        return True
    # The word before the first reference (and its "the"), read in place: the whole text is not copied per pair.
    before = _WORD_BEFORE.search(text, max(0, first[0] - 40), first[0])
    return before is not None and before.group("word").lower() == prep.lower()


def _enumeration(text: str, span: tuple[int, int], spans: list[tuple[int, int]]) -> set[tuple[int, int]]:
    """The references listed together with ``span``: the chain of neighbours each coordinated with the next
    ("see also :mod:`a`, :mod:`b` and :mod:`c`": a and c share the sentence through b)."""
    ordered = sorted(set(spans) | {span})
    at = ordered.index(span)
    chain = {span}
    for step in (-1, 1):
        i = at
        while 0 <= i + step < len(ordered):
            first, second = sorted((ordered[i], ordered[i + step]))
            if not _coordinated(text, first, second):
                break
            i += step
            chain.add(ordered[i])
    return chain


def _clause_bound(gap: str) -> int:
    """Where the clause of one reference ends and the next reference's begins, inside the text
    between them: after the last clause separator, else right after the first reference."""
    cut = max(gap.rfind(sep) for sep in _CLAUSE_SEPARATORS)
    return cut + 1 if cut >= 0 else 0


def reference_contexts(text: str, surface: str, breaks: list[int] | None = None,
                       others: list[tuple[int, int]] | None = None) -> list[str]:
    """The sentences of ``text`` that make the reference written as ``surface``, one per mention
    (a chunk may name the same document in several places; each says something else about it).
    ``breaks``: ``_hard_breaks(text)`` when the caller already has them. ``others``: spans of
    references to other documents; a sentence naming several documents is cut between them at a
    clause boundary, so each document gets the clause about it, not the same sentence (which
    left the choice to rank order); references joined only by "and", "or" or a comma share it. A
    list item is read with its lead-in line, a lead-in line with its items."""
    if not surface.split():
        return []
    breaks = _hard_breaks(text) if breaks is None else breaks
    out: list[str] = []
    for start, end in mention_spans(text, surface):
        left = max([text.rfind(". ", 0, start) + 1, start - _CONTEXT_CHARS] + [b for b in breaks if b < start])
        rights = [i for i in (text.find(". ", end),) if i >= 0] + [b for b in breaks if b >= end]
        right = min(rights + [end + _CONTEXT_CHARS, len(text)])
        left = max(left, 0)
        listed = _enumeration(text, (start, end), list(others or ()))
        for o_start, o_end in others or ():
            if (o_start, o_end) in listed:
                continue   # "see the datetime and calendar modules": one clause for both
            if left <= o_start and o_end <= start:
                left = max(left, o_end + _clause_bound(text[o_end:start]))
            elif end <= o_start and o_end <= right:
                right = min(right, end + max(_clause_bound(text[end:o_start]) - 1, 0))
        span = text[left:right]
        sentence = " ".join(span.split())
        lead = _lead_in(text, left + len(span) - len(span.lstrip()))
        if lead:
            sentence = f"{lead} {sentence}"
        elif sentence.endswith(":"):
            sentence = " ".join(f"{sentence} {_items(text, right)}".split())
        if sentence and sentence not in out:
            out.append(sentence)
        if len(out) >= _MAX_MENTIONS:
            break
    return out or [surface]


_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` as a pointer's sentence is read (lines joined where they wrap, cut at
    sentence ends and at the breaks that end one), each at most twice _CONTEXT_CHARS characters."""
    cuts = [0, *_hard_breaks(text), len(text)] if text.strip() else []
    out: list[str] = []
    for left, right in zip(cuts, cuts[1:]):
        for sentence in _SENTENCE_END.split(text[left:right]):
            out += textwrap.wrap(" ".join(sentence.split()), 2 * _CONTEXT_CHARS - 1, break_long_words=False,
                                 break_on_hyphens=False)
    return list(dict.fromkeys(out))


def reference_passages(text: str, surface: str, others: list[tuple[int, int]] | None = None) -> list[str]:
    """The passage around each mention of ``surface``: its paragraph (blank lines bound it), at most
    _CONTEXT_CHARS characters either side of the mention. A pointer sentence often says only where to
    look ("See X for details."); what it is about is said by the sentences around it. With ``others``
    (spans of references to other documents), only the passages that make no other reference."""
    out: list[str] = []
    for start, end in mention_spans(text, surface)[:_MAX_MENTIONS]:
        left = max([m.end() for m in _PARAGRAPH_BREAK.finditer(text, 0, start)] + [start - _CONTEXT_CHARS, 0])
        following = _PARAGRAPH_BREAK.search(text, end)
        right = min(following.start() if following else len(text), end + _CONTEXT_CHARS)
        if left > 0 and not text[left - 1].isspace():
            left = text.find(" ", left, start) + 1 or left
        if right < len(text) and not text[right].isspace():
            right = text.rfind(" ", end, right) if text.rfind(" ", end, right) > end else right
        passage = " ".join(text[left:right].split())
        if others is not None and any(left < o_end and o_start < right for o_start, o_end in others):
            continue
        if passage and passage not in out:
            out.append(passage)
    return out


def cited_clause(sentence: str, query: str) -> bool:
    """Whether the question cites, by its number, the list item a reference sentence comes from:
    "Section 4.1(b)" names item "(b)" under the lead-in "4.1 ... subject to:". A citation says
    which pointer the question is about more surely than any similarity does."""
    match = _CLAUSE_ID.match(sentence)
    if not match:
        return False
    clause = f"{match.group(1)}({match.group(2)})".lower()
    return clause in re.sub(r"\s+", "", query).lower()


def mention_spans(text: str, surface: str) -> list[tuple[int, int]]:
    """Where ``text`` writes ``surface``, across any whitespace (PDF lines wrap inside names), as a whole name:
    not inside a longer one ("mod_access" in "mod_accesslog", "Section 4.3" in "Section 4.3.1": a new user's
    lighttpd pages, where the pointer to mod_access took the sentence about mod_accesslog)."""
    words = surface.split()
    if not words:
        return []
    pattern = r"\s+".join(map(re.escape, words))
    if surface[0].isalnum() or surface[0] == "_":
        pattern = _NAME_BEFORE + pattern
    if surface[-1].isalnum() or surface[-1] == "_":
        pattern += _NAME_AFTER
    return [m.span() for m in re.finditer(pattern, text)]


# What may not touch a name's ends for the text to write that name, not a longer one: a letter, digit or "_",
# or a "." or "-" joining one ("git-config" is not "git", "4.3.1" is not "4.3"; a full stop after a name is).
_NAME_BEFORE = r"(?<!\w)(?<!\w[.-])"
_NAME_AFTER = r"(?!\w)(?![.-]\w)"


# How a question calls a module its documentation declares (".. module:: time"): "the time module",
# "module time"; a module name is often an ordinary word ("time", "random"), so never alone.
_MODULE_MENTION = (re.compile(r"\b(?:module|package)\s+`?(\w[\w.]*\w)", re.IGNORECASE),
                   re.compile(r"(\w[\w.]*\w)`?\s+(?:module|package)\b", re.IGNORECASE))
# A manual page's title: its name and section, "git-rm(1)".
_MANUAL_PAGE = re.compile(r"([A-Za-z][\w.+-]*)\(\d[a-z]{0,3}\)")
_QUESTION_SENTENCE = re.compile(r"(?<=[.?!])\s+")
# A dotted name ("os.path", "imp.find_module") is code, never prose.
_DOTTED_NAME = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")


_FILE_WORD = re.compile(r"[\w.\-]+\.\w+\.?")


def declared_names(profiles: Mapping[str, Any]) -> tuple[dict[str, set[str]], dict[str, set[str]], NameIndex]:
    """(module name -> documents that declare it with ``.. module::``, dotted name -> documents that
    declare it: modules and the objects documented under them, "imp.find_module", lower case; the
    names of manual pages, titled "git-rm(1)", of two words or more: a question types "git rm", and
    the shortest are too short for the name table's guards, while one word, "git", is prose)."""
    modules: dict[str, set[str]] = {}
    dotted: dict[str, set[str]] = {}
    pages = NameIndex()
    for doc_id, prof in profiles.items():
        for title in prof.titles:
            page = _MANUAL_PAGE.fullmatch(title.strip())
            if page and len(tokens(page.group(1))) > 1:
                pages.add(page.group(1), doc_id, trusted=True)
        if prof.scope:
            modules.setdefault(prof.scope.lower(), set()).add(doc_id)
        for anchor in prof.anchors:
            space, _, name = anchor.partition(":")
            if space == "py" and "." in name.strip("."):
                dotted.setdefault(name.lower(), set()).add(doc_id)
    for name, docs in modules.items():
        if "." in name:
            dotted.setdefault(name, set()).update(docs)
    return modules, dotted, pages


def code_names(query: str, modules: Mapping[str, set[str]], dotted: Mapping[str, set[str]],
               pages: NameIndex) -> set[str]:
    """The documents a question names the way code is named: a declared module written next to the
    word "module" ("the time module"), a dotted name a document declares ("imp.find_module"), else
    its longest declared prefix ("os.path.join" without its own entry: the os.path page), or the
    name of a manual page ("git rm")."""
    out = {doc for mention in pages.find(query, as_written=False) for doc in mention.doc_ids}
    for pattern in _MODULE_MENTION:
        for m in pattern.finditer(query):
            out |= modules.get(m.group(1).lower(), set())
    for m in _DOTTED_NAME.finditer(query):
        parts = m.group().lower().split(".")
        for n in range(len(parts), 0, -1):
            name = ".".join(parts[:n])
            docs = dotted.get(name) if n > 1 else modules.get(name)
            if docs:
                out |= docs
                break
    return out


# A Sphinx role naming an object (not a module, whose page is the whole document): ":class:`io.TextIOWrapper`",
# ":func:`~os.path.join`", ":attr:`ssl.SSLContext.check_hostname`", ":meth:`text <itertools.groupby>`".
_OBJECT_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|data|exc|obj|const|deco):`(?:[^`<]*<)?[~!]?"
                          r"([\w.]+?)(?:\(\))?>?`")


def object_declarations(rows: Any) -> dict[str, dict[str, str]]:
    """Document id -> {declared name, lower case -> the chunk holding its entry}: ".. class:: TextIOWrapper"
    declares "textiowrapper", a method declared inside a class block in the same chunk "class.method" too.
    Chunks overlap, so a directive at the end of one chunk starts the next: the entry's chunk is the one
    where the directive comes earliest (its body follows it there)."""
    out: dict[str, dict[str, tuple[int, str]]] = {}
    for row in rows:
        if ".. " not in row.text:
            continue
        names = out.setdefault(row.doc_id, {})
        cls, cls_indent = "", -1
        for m in RST_DIRECTIVE.finditer(row.text):
            what, name, indent = m.group("what"), m.group("name").lower(), len(m.group("indent").expandtabs())
            if what in ("module", "currentmodule"):
                continue
            keys = [name]
            if cls and indent > cls_indent and "." not in name:
                keys.append(f"{cls}.{name}")
            elif indent <= cls_indent:
                cls, cls_indent = "", -1
            for key in keys:
                if key not in names or m.start() < names[key][0]:
                    names[key] = (m.start(), row.id)
            if what in ("class", "exception"):
                cls, cls_indent = name, indent
    return {doc: {name: chunk for name, (_, chunk) in names.items()} for doc, names in out.items() if names}


def declaring_chunk(ref: str, declared: Mapping[str, str], scope: str) -> str | None:
    """The chunk of the pointed-at document that declares the object a role names (Sphinx resolves the
    role to that object's entry, not to the top of its page): the name without the document's module,
    "SSLContext.check_hostname" for ":attr:`ssl.SSLContext.check_hostname`" on the ssl page, else as
    written. None for a role naming a module, or an object the document does not declare."""
    m = _OBJECT_ROLE.fullmatch(ref.strip())
    if not m:
        return None
    name = m.group(1).lower().lstrip(".")
    scope = scope.lower()
    local = name[len(scope) + 1:] if scope and name.startswith(scope + ".") else name
    return declared.get(local) or declared.get(name)


_SHOWN = re.compile(r"\[(?P<text>[^\]]{1,300})\]\(")
_NUMBERED = re.compile(r"(?P<word>[a-z]+) (?P<number>\d+(?:\.\d+)*)")


def names_place(query: str, ref: Mapping[str, Any]) -> bool:
    """Whether a question names the place a reference within its document points at: every word a link to it
    shows ("[Webbooting](#anchor-65)": "the Webbooting section"), when those words would name a document
    (``searchable``, or one long word), or the number it gives ("Section 7.2", "chapter 8")."""
    asked = " ".join(tokens(query))
    numbered = _NUMBERED.fullmatch(str(ref.get("ref") or ""))
    if numbered and ref.get("kind") in ("section", "label"):
        return re.search(rf"\b{numbered['word']} {re.escape(' '.join(tokens(numbered['number'])))}\b", asked) \
            is not None
    shown = _SHOWN.match(str(ref.get("text") or ""))
    words = tokens(shown["text"]) if shown else ()
    content = [w for w in words if w not in STOPWORDS]
    if not content or not (searchable(words) or max(map(len, content)) >= 8):
        return False
    return set(content) <= set(asked.split())


def _surface(ref: Mapping[str, Any]) -> str:
    """A stored reference as its chunk writes it."""
    return ref.get("text") or ref.get("ref") or ""


def _mentions(considered: list[NodeWithScore], refs_of: Mapping[str, list[dict[str, Any]]], named: set[str],
              keep: Callable[[NodeWithScore, dict[str, Any]], bool], place: Callable[[dict[str, Any]], Any]
              ) -> Iterator[tuple[int, NodeWithScore, str, dict[str, Any], list[tuple[int, int]], list[str]]]:
    """(rank, referrer, its text, reference, the spans of its references elsewhere, the sentences that say it) for
    each reference ``keep`` selects in the top candidates (those of the documents the question names, when it names
    any): read to where a reference to another place (``place``: its document, or its chunk) begins."""
    for rank, nws in enumerate(considered):
        if named and nws.node.ref_doc_id not in named:
            continue
        text = nws.node.get_content()
        breaks = _hard_breaks(text)
        refs = [r for r in refs_of[nws.node.node_id] if keep(nws, r)]
        spans = {id(r): mention_spans(text, _surface(r)) for r in refs}
        for ref in refs:
            others = [span for r in refs if place(r) != place(ref) for span in spans[id(r)]]
            sentences = [s for s in reference_contexts(text, _surface(ref), breaks, others) if not contents_entry(s)]
            if sentences:
                yield rank, nws, text, ref, others, sentences


# The hyperlink families' links: whole, or the second half the splitter cut at a chunk's start ("Partitioning and
# Constraint Exclusion](ddl-partitioning.html#...)").
_LINKS = (re.compile(MD_LINK), re.compile(MD_LINK_TAIL))
_WORD_LEFT = re.compile(r"[^\W\d_]{2,}")


def contents_entry(sentence: str) -> bool:
    """Whether a reference's sentence is links and their numbering alone: an entry of a contents list
    ("[3.1.11. Start PAM session management](adg-interface-by-app-expected.html#adg-pam_open_session)"), which
    leads a reader around a book and says nothing the text claims of the place. Followed at k = 3 from Linux-PAM's
    and SCons' contents pages, such entries brought 2 chunks, neither an answer (new users' walkthroughs); none of
    the 102 pointers followed at k = 3 on the nine Debian corpora's dev questions was one."""
    rest = sentence
    for link in _LINKS:
        rest = link.sub(" ", rest)
    return rest != sentence and not _WORD_LEFT.search(rest)


def _keywords_alone(nws: NodeWithScore) -> bool:
    """Whether the core's first stage placed this chunk by its BM25 leg alone (its dense leg did not rank it)."""
    found = api.annotation(nws)
    return found.get("sparse_rank") is not None and found.get("dense_rank") is None


def hopped(nws: NodeWithScore) -> bool:
    return PLUGIN in api.tags(nws)


def tags_of(nws: NodeWithScore) -> dict[str, Any]:
    return api.tags(nws)[PLUGIN]


class CrossrefHop(BaseNodePostprocessor):
    """Follows the reference the question is about, when the candidates lack what it points at."""

    max_hops: int = Field(1, description="References (pointers) to follow, at most.")
    chunks_per_hop: int = Field(2, description="Chunks pulled from each pointed-at document, at most (swap into a "
                                               "full window; a list shorter than it takes the lead chunk alone).")
    trigger_depth: int = Field(3, description="References in this many top candidates count.")
    gate: float = Field(1.0, description="swap: the pointer must match the query at least gate x as well as the "
                                        "chunk it displaces does (by the better of its cosine and its best "
                                        "sentence's); other placements: as the best candidate does (dense cosine).")
    placement: Literal["swap", "after_referrer", "replace_tail", "append"] = Field(
        "swap", description="Where hopped chunks go.")
    reading: Literal["passage", "sentence"] = Field(
        "sentence", description="How a pointer is matched to the query: by its sentence alone, or by the better "
                                "of its sentence and its passage (the sentence with its neighbours in the "
                                "paragraph). The passage of a link in a chunk that matches the question matches "
                                "it too, whatever the link points at: on BIND's manual the passage of a link to "
                                "the `named` man page argued for that page and traded the answer away.")
    window: int = Field(10, description="swap placement: the top positions the hop may change.")
    aliases: dict[str, list[str]] = Field(default_factory=dict,
                                          description="Extra document names, by doc id or file name.")
    _ctx: api.RagContext | None = PrivateAttr(default=None)

    def __init__(self, ctx: api.RagContext | None = None, **data: Any):
        super().__init__(**data)
        self._ctx = ctx

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins_crossref.CrossrefHop"

    @property
    def context(self) -> api.RagContext:
        """The app's context. The hop steps aside without one (``_postprocess_nodes``), so its helpers,
        which run only after that check, read it here."""
        if self._ctx is None:
            raise RuntimeError("CrossrefHop was built without the app's context (ctx=): "
                               "get it from ragplugins_node_postprocessors")
        return self._ctx

    def named_documents(self, query: str) -> set[str]:
        """The indexed documents the question calls by name (title, heading, file name, alias; in any
        case, as questions are typed)."""
        if getattr(self._ctx, "index", None) is None:
            return set()
        aliases = json.dumps(self.aliases, sort_keys=True)   # configs may differ in aliases, not in documents
        names = self.context.cached(f"crossref.names:{aliases}",
                                 lambda ctx: Registry(self._profiles(), aliases=self.aliases).names)
        named = {doc for mention in names.find(query, as_written=False) for doc in mention.doc_ids}
        declared = self.context.cached(f"{PLUGIN}.declared_names", lambda ctx: declared_names(self._profiles()))
        # A file name typed whole ("usr_12.txt says ..."): too short a name to be read as a title.
        files = self.context.documents_by_file_name()
        typed = {doc for word in _FILE_WORD.findall(query) for doc in files.get(word.rstrip(".").lower(), ())}
        return named | typed | code_names(query, *declared)

    def _profiles(self) -> dict[str, Any]:
        """The stored documents' profiles, read once per index version for every table built from them."""
        return self.context.cached(f"{PLUGIN}.profiles", stored_profiles)

    def _pointers(self, considered: list[NodeWithScore], refs_of: dict[str, list[dict[str, Any]]],
                  named: set[str]) -> dict[str, dict[str, Any]]:
        """Documents referenced by the top candidates ``considered`` (present among the candidates or not), each
        with its mentions: sentence, referrer, section chunk. When the question names documents,
        only references they make count."""
        pointers: dict[str, dict[str, Any]] = {}
        elsewhere = _mentions(considered, refs_of, named,
                              keep=lambda nws, r: bool(r.get("target")) and r.get("target") != nws.node.ref_doc_id,
                              place=lambda r: r.get("target"))
        for rank, nws, text, ref, others, sentences in elsewhere:
            target = ref["target"]
            entry = pointers.setdefault(target, {"target": target, "mentions": [], "passages": [],
                                                 "own_passages": []})
            surface = _surface(ref)
            entry["passages"] += [(rank + 1, passage) for passage in reference_passages(text, surface)]
            entry["own_passages"] += reference_passages(text, surface, others)
            for sentence in sentences:
                entry["mentions"].append({
                    "sentence": sentence, "ref": ref.get("text") or ref.get("ref"), "kind": ref.get("kind"),
                    "section_chunk": ref.get("chunk"), "from_chunk": nws.node.node_id,
                    "from_doc": nws.node.ref_doc_id, "from_rank": rank + 1})
        return pointers

    def _places(self, nodes: list[NodeWithScore], considered: list[NodeWithScore],
                refs_of: dict[str, list[dict[str, Any]]], named: set[str], query: str) -> list[dict[str, Any]]:
        """Places of their own document the top candidates ``considered`` point at ("see Section 7.15" in a book
        numbering its own sections, a link to one of the page's anchors), each with the sentences that point there
        and whether the question names it: one entry per place, first referrer first. Not a place the candidates
        list already, nor the referrer itself (a heading that reads "Chapter 8")."""
        listed = {m for n in nodes for m in api.passage_members(n)}
        places: dict[str, dict[str, Any]] = {}
        within = _mentions(considered, refs_of, named,
                           keep=lambda nws, r: r.get("how") == "internal" and bool(r.get("chunk"))
                           and r["chunk"] not in listed,
                           place=lambda r: r["chunk"])
        for rank, nws, _, ref, _, sentences in within:
            entry = places.setdefault(ref["chunk"], {
                "place": ref["chunk"], "target": nws.node.ref_doc_id, "ref": _surface(ref), "kind": ref.get("kind"),
                "from_chunk": nws.node.node_id, "from_doc": nws.node.ref_doc_id, "from_rank": rank + 1,
                "sentences": [], "named": False})
            entry["sentences"] += [s for s in sentences if s not in entry["sentences"]]
            entry["named"] = entry["named"] or names_place(query, ref)
        return list(places.values())

    def _follow_within(self, places: list[dict[str, Any]], out: list[NodeWithScore], nodes: list[NodeWithScore],
                       query_embedding: list[float], cosine_of: dict[str, float],
                       hops_left: int) -> list[tuple[dict[str, Any], NodeWithScore]]:
        """(place, its chunk) to add at the end of a list that has room, best-matching pointer first, at most
        ``hops_left``: a place the question names (the words a link to it shows, "the Webbooting section", or
        its number, "Section 7.2") whose pointing sentence matches the query at least ``gate`` times as well as
        the weakest candidate does (as a pointer to another document must, where nothing is traded), that the
        list does not hold and the query may see (the host's filters). A place the question does not name is not
        brought: a manual's pages point at their neighbours and its contents at every chapter, and on a new user's
        Word manual the pointer's sentence alone chose 16 places for 24 questions, none an answer."""
        for p in places:
            if not p["named"]:
                p["outcome"] = "the question does not name this place"
        named = [p for p in places if p["named"]]
        # Only the sentences of named places are embedded: a manual's chunk links a dozen places.
        vectors = self.context.embed_texts([text for p in named for text in p["sentences"]]) if named else {}
        for p in named:
            p["context"] = max(round(api.cosine(query_embedding, vectors[text]) or 0.0, 4)
                               for text in p["sentences"])
        weakest = min(cosine_of.get(n.node.node_id, float("inf")) for n in nodes)
        listed = {m for n in out for m in api.passage_members(n)}
        picks: list[tuple[dict[str, Any], NodeWithScore]] = []
        for p in sorted(named, key=lambda p: (-p["context"], p["from_rank"])):
            if len(picks) == hops_left:
                break
            if p["place"] in listed:
                p["outcome"] = "covered"
                continue
            p["displaces"] = round(weakest, 4)
            if p["context"] < self.gate * weakest:
                p["outcome"] = "under the gate"
                continue
            found = self._chunks_of([p["place"]], out, {}, query_embedding, unscreened=True)
            if not found:
                p["outcome"] = "not visible to this query"
                continue
            score, nws = found[0]
            listed.add(nws.node.node_id)
            p["outcome"] = "followed"
            picks.append((p, self._tag(nws, p, score)))
        return picks

    def _references(self, nodes: list[NodeWithScore]) -> dict[str, list[dict[str, Any]]]:
        """The references each result makes: a chunk's own; a passage's (the core joins neighbouring chunks
        that both rank) those of every chunk it joins, the others read from the store in one call."""
        others = [m for n in nodes for m in api.passage_members(n) if m != n.node.node_id]
        stored = {node.node_id: node for node in self.context.store.get_nodes(others)} if others else {}
        out: dict[str, list[dict[str, Any]]] = {}
        for n in nodes:
            members = [n.node if m == n.node.node_id else stored.get(m) for m in api.passage_members(n)]
            out[n.node.node_id] = [r for node in members if node is not None
                                   for r in load_refs(node.metadata.get(REFS_KEY))]
        return out

    def _document_names(self) -> dict[str, str]:
        """Document id -> the name output shows (an app's index has UUID ids), kept until the next write."""
        return self.context.cached(f"{PLUGIN}.document_names", lambda ctx: {
            doc_id: api.document_label(doc_id, info.metadata) for doc_id, info in ctx.list_documents().items()})

    def _postprocess_nodes(self, nodes: list[NodeWithScore],
                           query_bundle: QueryBundle | None = None) -> list[NodeWithScore]:
        if query_bundle is None or not nodes or self.max_hops < 1 or self._ctx is None:
            return nodes
        query = query_bundle.query_str
        # Documents the host's filter excludes are neither followed nor named in the trace.
        allowed = self.context.allowed_documents(nodes)
        named = {d for d in self.named_documents(query) if allowed is None or d in allowed}
        considered = [n for n in nodes if not hopped(n)][: self.trigger_depth]
        refs_of = self._references(considered)
        pointers = self._pointers(considered, refs_of, named)
        # A list shorter than the window has room at its end, where a place its own document names can go without
        # trading anything; a full window is the swap's, which trades only chunks of third documents.
        places = self._places(nodes, considered, refs_of, named, query) if len(nodes) < self.window else []
        withheld = 0
        if allowed is not None:
            withheld = sum(target not in allowed for target in pointers)
            if withheld:   # while the host's filters are unknown, this says how to pass them
                self.context.allowed_documents(nodes, wanted=pointers)
            pointers = {target: p for target, p in pointers.items() if target in allowed}
        if not pointers and not places and withheld:
            api.record_decision(PLUGIN, "hop", before=nodes, after=nodes, fired=False, considered=[], chosen=[],
                                chunks_added=0, named=sorted(named), numbers={"pointers_withheld": withheld},
                                pointers_withheld=withheld,
                                reason="the top candidates' references point only at documents this query may "
                                       "not search (the host's filter excludes them, or its filters are not known)")
            return nodes
        if not pointers and not places:
            # No candidate carries the key the extractor writes on every chunk: the index never met crossref.
            unprepared = not any(REFS_KEY in n.node.metadata for n in nodes)
            # A full list weighs no place of the candidates' own documents: say so rather than that none was found
            # (a new user's one-page manuals, whose every pointer is such a place, read "no resolved references").
            within = 0 if len(nodes) < self.window else sum(
                1 for refs in refs_of.values() for r in refs if r.get("how") == "internal" and r.get("chunk"))
            whose = " from the documents the question names" if named else ""
            reason = f"no resolved references in the top candidates{whose}"
            if within:
                reason = (f"no resolved references to other documents in the top candidates{whose}; their references "
                          f"to places of their own document ({within}) are weighed only in a list shorter than the "
                          f"window ({self.window})")
            api.record_decision(PLUGIN, "hop", before=nodes, after=nodes, fired=False, considered=[], chosen=[],
                                chunks_added=0, named=sorted(named), numbers={"places_within": within},
                                reason=api.not_prepared(PLUGIN) if unprepared else reason)
            return nodes
        query_embedding = self.context.embed_query(query)
        measured = {n.node.node_id: api.query_cosine(n, query_embedding) for n in nodes}
        texts = {n.node.node_id: n.node.get_content(metadata_mode=MetadataMode.EMBED)
                 for n in nodes if measured[n.node.node_id] is None}
        if texts:
            # A host's own retriever returns neither vectors nor ragplugins' dense scores, and the core's
            # sparse leg alone measures none: embed those candidates as the index embedded them (cached
            # on the context across queries). A swap weighs every chunk it may trade.
            vectors = self.context.embed_texts(list(texts.values()))
            measured.update({i: api.cosine(query_embedding, vectors[t]) for i, t in texts.items()})
        cosine_of = {i: c for i, c in measured.items() if c is not None}
        if not cosine_of:
            api.record_decision(PLUGIN, "hop", before=nodes, after=nodes, fired=False,
                                considered=list(pointers.values()), chosen=[], chunks_added=0,
                                reason="no dense scores on the candidates")
            return nodes
        if self.placement == "swap":
            # A swap trades the pointer's evidence for a chunk's own: the least any swap needs is to
            # outweigh the weakest chunk in the window (each swap is checked against its own chunk).
            threshold = self.gate * min(cosine_of.get(n.node.node_id, 0.0) for n in nodes[: self.window])
        else:
            threshold = self.gate * max(cosine_of.values())
        present = {m for n in nodes for m in api.passage_members(n)}  # a passage's chunks are all there
        asked = set(tokens(query)) - STOPWORDS
        # Per chunk a swap may trade: its standing so far, and its sentences not read yet.
        reading: dict[str, tuple[float, list[str]]] = {}

        def standing_against(score: float, nws: NodeWithScore) -> float:
            """How strongly a chunk a swap may trade argues for itself, read as far as a pointer matching the query
            ``score`` needs: whether the chunk outweighs it. A question that names the referring document retells
            the pointer it means (its claim chose it): the chunk counts by its cosine. Any other question has only
            the pointer's sentence to go by, so the chunk is read as a pointer's sentence is, by the better of its
            cosine and its best sentence's: a short text's cosine with a question runs higher than a whole
            chunk's, and weighed against the chunk's cosine a pointer to a module the question never asks about
            traded a chunk that answers it (nodejs_q15: the cluster pointer's sentence 0.38 against the DNS answer
            chunk's 0.31; Django's dj16). Its sentences are embedded a few at a time, those sharing most words
            with the question first, and only until one outweighs the pointer (embedding them all was most of the
            hop's time: 3.5 s for one question of a new user's Sphinx pages on two loaded cores); so a standing
            above the pointer's is a lower bound, one at or below it exact."""
            chunk_id = nws.node.node_id
            if chunk_id not in reading:
                said = [] if named else sentences(nws.node.get_content())
                said.sort(key=lambda t: -len(asked.intersection(tokens(t))))
                reading[chunk_id] = (cosine_of.get(chunk_id, float("inf")), said)
            best, unread = reading[chunk_id]
            while unread and score >= self.gate * best:
                batch, unread = unread[:_SENTENCES_AT_ONCE], unread[_SENTENCES_AT_ONCE:]
                vectors = self.context.embed_texts(batch)
                best = max([best, *(api.cosine(query_embedding, vectors[t]) or 0.0 for t in batch)])
            reading[chunk_id] = (best, unread)
            return best
        depth = len(present) + self.max_hops * self.chunks_per_hop
        searched: dict[str, list[tuple[float, NodeWithScore]] | None] = {}

        def search(pointer: dict[str, Any]) -> list[tuple[float, NodeWithScore]] | None:
            if pointer["target"] not in searched:
                searched[pointer["target"]] = self._search(pointer, query, query_embedding, depth)
            return searched[pointer["target"]]

        ranked = self._rank(pointers, query_embedding, query, named) if pointers else []
        ranked = self._break_ties(ranked, threshold, search, nodes[: self.window])
        hops: list[tuple[dict[str, Any], list[tuple[float, NodeWithScore]]]] = []
        # A swap trades no chunk of a document the question names, nor of one the top candidates point at:
        # retrieved and pointed at, it has two pieces of evidence, and a swap would trade one pointer's
        # target for another's (git_d16: a pack-format answer traded for a second pointer's chunks).
        untradable = named | {p["target"] for p in ranked}
        decided = 0
        onward: set[str] = set()   # after a covered pointer: the pages listed on its way, which the hop goes on from
        for pointer in ranked:
            if decided == self.max_hops:
                break
            if onward and pointer["from_doc"] not in onward:
                continue
            if self.placement == "swap":
                picks = self._follow_swap(pointer, search, present, nodes, query_embedding, cosine_of,
                                          standing_against, untradable)
            else:
                picks = self._follow(pointer, search, present, threshold, nodes, query_embedding)
            present.update(nws.node.node_id for _, nws in picks)
            hops.append((pointer, picks))
            # A pointer to a page the candidates already hold uses up no hop: the question may go on from that
            # page, so its own pointers are weighed next (libcurl's c11: a pointer to CONNECTTIMEOUT's page,
            # listed, ended the hop before that page's "See also the CURLOPT_TIMEOUT(3) option", which leads to
            # the answer). Other candidates' pointers are not: after a covered pointer they led to pages nobody
            # asked for (acq: 18 more hops at k = 3, none reaching an answer).
            if pointer.get("outcome") == "covered":
                onward.add(pointer["target"])
            else:
                decided += 1
                onward.clear()
        if self.placement == "swap":
            out, added, removed = self._swap(nodes, hops, standing_against, untradable)
        else:
            out, added, removed = self._place(nodes, hops)
        if places and len(out) < self.window and decided < self.max_hops:
            for place, nws in self._follow_within(places, out, nodes, query_embedding, cosine_of,
                                                  self.max_hops - decided):
                out.append(nws)
                added.append(nws)
                hops.append((place, [(nws.score or 0.0, nws)]))
        if not _scored_by_cosine(nodes, cosine_of):
            _score_in_line(out)
        name = self._document_names().get
        reason = "; ".join(f"the {'best' if i == 0 else 'next'} pointer, '{p['ref']}' in "
                           f"{name(p['from_doc'], p['from_doc'])} -> {name(p['target'], p['target'])}: "
                           f"{p.get('outcome', 'not followed')}" for i, (p, _) in enumerate(hops)) \
            or "no pointer left to follow"
        api.record_decision(PLUGIN, "hop", before=nodes, after=out, reason=reason,
                            numbers={"threshold": round(threshold, 4), "chunks_added": len(added)},
                            fired=bool(added), considered=ranked + places, named=sorted(named),
                            chosen=list(dict.fromkeys(tags_of(n)["target"] for n in added)),
                            added=[n.node.node_id for n in added], removed=[n.node.node_id for n in removed],
                            placement=self.placement if self.placement != "swap" or len(nodes) >= self.window
                            else f"swap: the list is shorter than its window ({self.window}), so a hopped chunk "
                                 "goes after it and nothing is traded")
        return out

    def _claim(self, query: str, named: set[str]) -> str:
        """The sentences of the question that name a document: a question asked from one end of a
        reference retells there what that document says ("The os module says to look elsewhere for
        high-level file and directory handling."), and the rest asks what the other end answers."""
        if not named:
            return ""
        sentences = _QUESTION_SENTENCE.split(query.strip())
        claim = " ".join(s for s in sentences if self.named_documents(s) & named)
        return claim if claim and claim != query.strip() else ""

    def _rank(self, pointers: dict[str, dict[str, Any]], query_embedding: list[float],
              query: str, named: set[str]) -> list[dict[str, Any]]:
        """Referenced documents, the question's pointer first: by how well the best of their
        reference sentences matches the query."""
        # Reference sentences recur across queries (hub chunks are retrieved again and again): the
        # context caches their embeddings. Passages count only with reading = "passage"; with the default
        # sentence reading they are not embedded (that was half the hop's time), and the trace shows no match.
        reads = self.reading == "passage"
        vectors = self.context.embed_texts([m["sentence"] for p in pointers.values() for m in p["mentions"]]
                                           + [text for p in pointers.values() for _, text in p["passages"]
                                              if reads])
        claim = self._claim(query, named)
        claim_embedding = self.context.embed_query(claim) if claim else None
        asked = set(tokens(query))
        for p in pointers.values():
            for m in p["mentions"]:
                m["match"] = round(api.cosine(query_embedding, vectors[m["sentence"]]) or 0.0, 4)
                if claim_embedding is not None:
                    m["claim_match"] = round(api.cosine(claim_embedding, vectors[m["sentence"]]) or 0.0, 4)
                m["cited"] = cited_clause(m["sentence"], query)
                # The question uses a link's own words ("refers to the dockerd documentation" for "Refer to the
                # [`dockerd` documentation](...) for more information"): it means that link, whatever the
                # sentence around it says (a new user's Docker pages: the hop took the page's other link).
                m["shown"] = m["kind"] == "link" and names_place(query, {"text": m["ref"], "kind": m["kind"]})
            # A mention in the clause the question cites by number speaks for the document, else
            # the best-matching one; on a tie the higher-ranked referrer, then the mention whose own words
            # the question uses (one sentence linking two places of a page: "[IMPORTED](...#imported-targets)
            # or [ALIAS](...#alias-targets)" for "What is an ALIAS target?"), then a mention naming a
            # section (it says which chunk is meant).
            best = min(p["mentions"], key=lambda m: (not m["cited"], not m["shown"], -m["match"], m["from_rank"],
                                                     -len(asked.intersection(tokens(m["ref"] or ""))),
                                                     m["section_chunk"] is None))
            # A pointer sentence often only says where to look ("See X for details."); the sentences
            # around it say what for. The pointer is read both ways and counts by the better reading.
            match = {t: round(api.cosine(query_embedding, vectors[t]) or 0.0, 4)
                     for _, t in p["passages"]} if reads else {}
            passage = max(((match.get(t, 0.0), -rank, t) for rank, t in p.pop("passages")), default=(0.0, 0, ""))
            own_passages = p.pop("own_passages")
            choice = best["match"]
            if reads and named:
                choice = max(choice, max((match[t] for t in own_passages), default=0.0))
            if claim_embedding is not None:
                choice = max(m["claim_match"] for m in p["mentions"])
                if reads:
                    choice = max(choice, max((round(api.cosine(claim_embedding, vectors[t]) or 0.0, 4)
                                              for t in own_passages), default=0.0))
                p["claim"] = claim
            # The references the best sentence makes to this document, in text order ("either an
            # :class:`io.BytesIO` or :class:`io.TextIOWrapper` object"): each names a place in it.
            p["refs"] = list(dict.fromkeys(m["ref"] for m in p["mentions"] if m["sentence"] == best["sentence"]))
            p.update({k: v for k, v in best.items() if k not in ("match", "claim_match")},
                     context=max(best["match"], passage[0]) if reads else best["match"],
                     choice=choice,
                     sentence_match=best["match"], passage_match=passage[0] if reads else None, passage=passage[2],
                     mentions=len(p["mentions"]))
        # Which pointer: its sentence; when the question names the referring document (and so retells
        # what that document says around its pointer), the better of the sentence and a passage that
        # makes no other reference (a passage holding several pointers reads the same for each).
        # Whether to follow it: the better of the sentence and any passage (``context``, _follow_swap).
        return sorted(pointers.values(), key=lambda p: (not p["cited"], not p["shown"], -p["choice"], p["from_rank"]))

    def _break_ties(self, ranked: list[dict[str, Any]], threshold: float,
                    search: Any, shown: list[NodeWithScore]) -> list[dict[str, Any]]:
        """Pointers whose sentences match the question equally (one sentence naming a label that two
        documents restate, or several documents at once: "see the datetime and calendar modules") are
        told apart by their targets: the one the top ``window`` holds fewer chunks of goes first (the
        hop brings what the candidates lack), then the one whose best chunk matches the question
        better."""
        held = {p["target"]: sum(n.node.ref_doc_id == p["target"] for n in shown) for p in ranked}
        out: list[dict[str, Any]] = []
        rest = list(ranked)
        while rest and len(out) < self.max_hops:
            lead = rest[0]
            tied = [p for p in rest if (p["cited"], p["shown"], p["choice"]) == (lead["cited"], lead["shown"],
                                                                              lead["choice"])]
            if len(tied) > 1 and lead["context"] >= threshold:
                for p in tied:
                    search(p)
                tied.sort(key=lambda p: (held[p["target"]], -p["best"] if p.get("best") is not None else 1.0))
            out.extend(tied)
            rest = [p for p in rest if not any(p is t for t in tied)]
        return out + rest

    def _search(self, pointer: dict[str, Any], query: str, query_embedding: list[float],
                depth: int) -> list[tuple[float, NodeWithScore]] | None:
        """(cosine, chunk) of the pointed-at document for the query in the search's order, lead chunk first (the
        section the reference names when the search found it); None when the search failed. The search ranks as
        the first stage's dense leg does, later windows included: by its first window's cosine a new user's m4
        page brought its `--warn-macro-sequence` chunk, not the one whose later half holds `-P` (0.25 there,
        -0.01 as embedded)."""
        results = self.context.search_within_documents(query, [pointer["target"]], depth)
        if not results:
            pointer["outcome"] = "search failed" if results is None else "nothing matched"
            return None if results is None else []
        scored = [(api.query_cosine(r, query_embedding) or 0.0, r) for r in results]
        scored.sort(key=lambda x: x[1].node.node_id != pointer["section_chunk"])
        pointer["best"] = round(max(score for score, _ in scored), 4)
        return scored

    def _follow(self, pointer: dict[str, Any], search: Any, present: set[str],
                threshold: float, nodes: list[NodeWithScore],
                query_embedding: list[float]) -> list[tuple[float, NodeWithScore]]:
        """(cosine, chunk) to add for one pointer, lead chunk first: none when its sentence matches
        the query less than ``threshold`` (the candidates answer it better than the pointer describes
        it), when the lead chunk is already a candidate (the evidence is there), or the search fails."""
        if pointer["context"] < threshold:
            pointer["outcome"] = "under the gate"
            return []
        scored = search(pointer)
        if not scored:
            return []
        lead_score, lead = scored[0]
        if lead.node.node_id in present:
            pointer["outcome"] = "covered"
            return []
        pointer["outcome"] = "followed"
        rest = [(s, r) for s, r in scored[1:] if r.node.node_id not in present]
        picks = [(lead_score, lead), *rest][: self.chunks_per_hop]
        return [(score, self._tag(nws, pointer, score)) for score, nws in picks]

    def _follow_swap(self, pointer: dict[str, Any], search: Any, present: set[str],
                     nodes: list[NodeWithScore], query_embedding: list[float],
                     cosine_of: dict[str, float], standing: Callable[[float, NodeWithScore], float],
                     untradable: set[str]) -> list[tuple[float, NodeWithScore]]:
        """(cosine, chunk) of the pointed-at document to bring into the top ``window``, best first: the
        section the reference names, then the document's candidates ranked below the window in the
        first stage's order (its hybrid ranking, which found them, knows more than one cosine), then
        its best dense matches that no candidate holds. None under the gate (no chunk the window can
        spare matches the query less than the pointer does, see _swap) or when the search fails; the
        target's chunks already in the window stay where they are."""
        top = {m for n in nodes[: self.window] for m in api.passage_members(n)}
        section = pointer["section_chunk"]
        if len(nodes) >= self.window:
            referrer = next(i for i, n in enumerate(nodes) if n.node.node_id == pointer["from_chunk"])
            spare = [i for i in range(referrer + 1, self.window)
                     if self._spare(nodes, i, self._kept(pointer, untradable))]
            if not spare and section and section not in top:
                # The window holds the pointed-at document, not the place the reference names (a new user's
                # BIND manual: a link to a section of the DNSSEC guide, whose other chunks filled the window):
                # one of that document's later chunks may make way for the named place.
                pointer["within_target"] = True
                spare = [i for i in range(referrer + 1, self.window)
                         if self._spare(nodes, i, self._kept(pointer, untradable))]
            if not spare:
                pointer["outcome"] = "no chunk to spare in the window"
                return []
            # Weakest first by cosine, read sentence by sentence until one the pointer outweighs (reading
            # every chunk's sentences would embed them all on each question).
            weakest = float("inf")
            for i in sorted(spare, key=lambda i: cosine_of.get(nodes[i].node.node_id, float("inf"))):
                weakest = min(weakest, standing(pointer["context"], nodes[i]))
                if pointer["context"] >= self.gate * weakest:
                    break
        else:   # room at the end: nothing is traded, the pointer need only match as well as a candidate
            weakest = min(cosine_of.get(n.node.node_id, float("inf")) for n in nodes)
        pointer["displaces"] = round(weakest, 4)
        if pointer["context"] < self.gate * weakest:
            pointer["outcome"] = "under the gate"
            return []
        scored = search(pointer)
        if scored is None:
            return []
        below = [n for n in nodes[self.window:] if n.node.ref_doc_id == pointer["target"] and not hopped(n)]
        by_id = {nws.node.node_id: (score, nws) for score, nws in scored}
        declaring = self._declaring_chunks(pointer, nodes, by_id, query_embedding)
        named = ([section] if section else []) + [n.node.node_id for _, n in declaring]
        if named and set(named) <= top:
            # The places the reference names are listed: the evidence it points at is there, and the page's
            # other chunks are not what it points at (a new user's Flask: the TESTING entry listed, the hop
            # brought config.html's changelog and JSON settings in place of two API entries).
            pointer["outcome"] = "covered"
            return []
        order: list[tuple[float, NodeWithScore]] = []
        if section and section not in top:
            # The section or entry the reference names, even where the document's best matches for the
            # question lie elsewhere (a link into one of a 400-entry page's entries).
            order += self._chunks_of([section], nodes, by_id, query_embedding, unscreened=True)
        order += [entry for entry in declaring if entry[1].node.node_id not in top]
        order += [by_id.get(n.node.node_id, (self._cosine(n, query_embedding), n)) for n in below]
        order += [(s, n) for s, n in scored if n.node.node_id not in present]
        picks = list({n.node.node_id: (s, n) for s, n in order if n.node.node_id not in top}.values())
        # Appended to a short list (nothing traded), only the lead chunk: on fifteen new users' sets at k = 3 the
        # answer a hop brought was its first chunk every time (7 of 7), and the second chunk was never one (76 added).
        picks = picks[: self.chunks_per_hop if len(nodes) >= self.window else 1]
        if pointer.get("within_target"):
            picks = [(s, n) for s, n in picks if n.node.node_id == section]
        if not picks:
            pointer["outcome"] = "covered"
            return []
        pointer["outcome"] = "followed"
        return [(score, self._tag(nws, pointer, score)) for score, nws in picks]

    def _swap(self, nodes: list[NodeWithScore],
              hops: list[tuple[dict[str, Any], list[tuple[float, NodeWithScore]]]],
              standing: Callable[[float, NodeWithScore], float], untradable: set[str],
              ) -> tuple[list[NodeWithScore], list[NodeWithScore], list[NodeWithScore]]:
        """Each hopped chunk takes the place of the weakest chunk the top ``window`` can spare below its
        referrer: the lowest-ranked one that repeats a document already represented above it (never a hopped
        chunk, nor a chunk of the referring or the pointed-at document, of a document the question names or of
        another document the top candidates point at) and that matches the query less than the pointer does (its
        cosine times ``gate`` at most the pointer's match): a chunk that looks more like an answer than the
        pointer looks like the question is not traded. Nothing else moves, and every document keeps its
        best-ranked chunk where it was. The spared chunk takes the hopped chunk's old rank when that was a
        candidate below the window, else the first place below the window (the list keeps its length: its last
        candidate leaves). No chunk to spare, no hop. A list shorter than the window (a small top k) has room: a
        new chunk goes after the whole list and nothing moves.
        (final list, hopped chunks in the window, candidates that left the list)."""
        out = list(nodes)
        length = len(out)
        added: list[NodeWithScore] = []
        removed: list[NodeWithScore] = []
        for pointer, picks in hops:
            placed = 0
            for _, nws in picks:
                start = next(i for i, n in enumerate(out) if n.node.node_id == pointer["from_chunk"]) + 1
                old = next((i for i, n in enumerate(out) if n.node.node_id == nws.node.node_id), None)
                if old is None and len(out) < self.window:
                    # A list shorter than the window has room: the chunk goes after the whole list, so no
                    # candidate moves (placed after its referrer, it pushed relevant chunks down on the
                    # public acq set: nDCG@10 lower on 10 pointer questions at k = 3).
                    out.append(nws)
                    added.append(nws)
                    placed += 1
                    continue
                kept = self._kept(pointer, untradable)
                slot = next((i for i in range(min(self.window, len(out)) - 1, start - 1, -1)
                             if self._spare(out, i, kept)
                             and self.gate * standing(pointer["context"], out[i]) <= pointer["context"]),
                            None)
                if slot is None:
                    continue
                spared = out[slot]
                out[slot] = nws
                if old is not None:
                    out[old] = spared
                else:
                    # Out of the window, not out of the list: a host that reads all top k still gets it
                    # (a wrong hop once traded a BIND question's answer out of the whole list). The list keeps
                    # its length: its last candidate leaves instead.
                    out.insert(self.window, spared)
                    if len(out) > length:
                        removed.append(out.pop())
                added.append(nws)
                placed += 1
            if picks and not placed:
                pointer["outcome"] = "followed, no chunk to spare in the window"
        return out, added, removed

    def _declaring_chunks(self, pointer: dict[str, Any], nodes: list[NodeWithScore],
                          by_id: dict[str, tuple[float, NodeWithScore]],
                          query_embedding: list[float]) -> list[tuple[float, NodeWithScore]]:
        """(cosine, chunk) declaring each object the pointer's sentence names by a Sphinx role, the best
        match for the query first: the role points at that entry, as a "Section N.N" link points at its section
        (issue 14: the hop brought the io page's best dense match, not TextIOWrapper's entry). Only
        chunks the query may see (the host's filters); none while they are unknown."""
        refs = [r for r in pointer.get("refs", []) if r and _OBJECT_ROLE.fullmatch(r.strip())]
        if not refs:
            return []
        declared = self.context.cached_for_query(f"{PLUGIN}.object_declarations", object_declarations)
        if not declared or pointer["target"] not in declared:
            return []
        scopes = self.context.cached(f"{PLUGIN}.scopes",
                                  lambda ctx: {doc: prof.scope for doc, prof in self._profiles().items()})
        scope = scopes.get(pointer["target"]) or ""
        ids = list(dict.fromkeys(c for r in refs if (c := declaring_chunk(r, declared[pointer["target"]], scope))))
        out = self._chunks_of(ids, nodes, by_id, query_embedding)
        # The sentence names its entries alike ("either an io.BytesIO or io.TextIOWrapper object"): the
        # question chooses among them, as it chooses among pointers.
        out.sort(key=lambda entry: -entry[0])
        if out:
            pointer["declared_chunks"] = [n.node.node_id for _, n in out]
        return out

    def _chunks_of(self, ids: list[str], nodes: list[NodeWithScore], by_id: dict[str, tuple[float, NodeWithScore]],
                   query_embedding: list[float], unscreened: bool = False) -> list[tuple[float, NodeWithScore]]:
        """(cosine, chunk) of ``ids`` in that order: the document search's score, else a candidate's or a
        stored chunk's cosine with the question. ``unscreened``: ids read from stored references, not from
        the rows the query may see: a stored chunk is fetched only if the host's filters let the query see it
        (none while they are not known)."""
        known = {n.node.node_id: n for n in nodes}
        missing = [i for i in ids if i not in known and i not in by_id]
        if unscreened and missing:
            visible = self.context.cached_for_query(f"{PLUGIN}.visible_chunks",
                                                    lambda rows: frozenset(r.id for r in rows))
            missing = [i for i in missing if visible is not None and i in visible]
        fetched = {n.node_id: NodeWithScore(node=n, score=0.0) for n in self.context.store.get_nodes(missing)} \
            if missing else {}
        out = []
        for chunk_id in ids:
            if chunk_id in by_id:
                out.append(by_id[chunk_id])
            elif (nws := known.get(chunk_id) or fetched.get(chunk_id)) is not None:
                out.append((self._cosine(nws, query_embedding), nws))
        return out


    @staticmethod
    def _kept(pointer: dict[str, Any], untradable: set[str]) -> set[str]:
        """Documents whose chunks a swap never trades: the pointer's two ends, the documents the
        question names (it is about them) and the other documents the top candidates point at."""
        if pointer.get("within_target"):
            return {pointer["from_doc"], *(untradable - {pointer["target"]})}
        return {pointer["target"], pointer["from_doc"], *untradable}

    @staticmethod
    def _spare(out: list[NodeWithScore], i: int, kept: set[str]) -> bool:
        """Whether the chunk at ``i`` repeats a document already represented above it (the first stage
        ranked another chunk of its document higher), is not hopped, and belongs to neither document of
        the pointer (``kept``): the hop argues for the referring document and the one it points at, so
        it trades only chunks of third documents. (A question asked from the other end of a reference
        has its answer in the referring document.) Nor a chunk the first stage's dense leg did not rank: the
        swap weighs chunks by their cosine with the question, and a chunk placed by its keywords alone has no
        cosine that placed it (python_q06's answer, BM25's second, was traded for a pointer by the cosine of
        what the embedder reads of it)."""
        node = out[i]
        if hopped(node) or node.node.ref_doc_id in kept or _keywords_alone(node):
            return False
        return any(n.node.ref_doc_id == node.node.ref_doc_id and not hopped(n) for n in out[:i])

    def _cosine(self, nws: NodeWithScore, query_embedding: list[float]) -> float:
        """The dense cosine of a chunk and the query; a chunk the first stage found by its sparse leg
        alone carries none, so its text is embedded as the index embedded it (cached on the context)."""
        value = api.query_cosine(nws, query_embedding)
        if value is None:
            text = nws.node.get_content(metadata_mode=MetadataMode.EMBED)
            value = api.cosine(query_embedding, self.context.embed_texts([text])[text])
        return value or 0.0

    @staticmethod
    def _tag(nws: NodeWithScore, pointer: dict[str, Any], score: float) -> NodeWithScore:
        tagged = api.tag(nws, PLUGIN, via_crossref=True, ref=pointer["ref"], kind=pointer["kind"],
                            from_chunk=pointer["from_chunk"], from_doc=pointer["from_doc"],
                            target=pointer["target"], cosine=round(score, 4))
        tagged.score = score
        return tagged

    def _place(self, nodes: list[NodeWithScore],
               hops: list[tuple[dict[str, Any], list[tuple[float, NodeWithScore]]]]
               ) -> tuple[list[NodeWithScore], list[NodeWithScore], list[NodeWithScore]]:
        """(final list, hopped chunks in it, candidates that made room for them)."""
        position = {n.node.node_id: i for i, n in enumerate(nodes)}
        removed: set[int] = set()
        after: dict[int, list[NodeWithScore]] = {}
        for pointer, picks in hops:
            referrer = position[pointer["from_chunk"]]
            for _score, nws in picks:
                if self.placement == "replace_tail":
                    # Budget-neutral: a hopped chunk takes the place of the lowest-ranked candidate
                    # below its referrer (never a referrer); without one it is dropped.
                    referrers = {position[p["from_chunk"]] for p, _ in hops}
                    room = [i for i in range(len(nodes) - 1, referrer, -1)
                            if i not in removed and i not in referrers]
                    if not room:
                        pointer["outcome"] = "followed, no room below the referrer"
                        continue
                    removed.add(room[0])
                after.setdefault(len(nodes) if self.placement == "append" else referrer, []).append(nws)
        out: list[NodeWithScore] = []
        for i, nws in enumerate(nodes):
            if i not in removed:
                out.append(nws)
            out.extend(after.get(i, []))
        out.extend(after.get(len(nodes), []))
        added = [n for group in after.values() for n in group]
        return out, added, [nodes[i] for i in sorted(removed)]


def _scored_by_cosine(nodes: list[NodeWithScore], cosine_of: dict[str, float]) -> bool:
    """Whether the candidates' scores are their cosines with the query (a dense first stage, or a host's
    cosine retriever), the scale a hopped chunk's own cosine is on."""
    return all(n.score is not None and abs(n.score - cosine_of[n.node.node_id]) < 1e-3
               for n in nodes if n.node.node_id in cosine_of)


def _score_in_line(out: list[NodeWithScore]) -> None:
    """Give each hopped chunk the score of the first stage's chunk above it (below it, at the top): on a
    fused scale its cosine would sort it anywhere in a host postprocessor that orders or cuts by score.
    Its cosine stays in its tag. A chunk a swap moved down scores no more than the one above it (a copy: the
    first stage's list keeps its scores), so the scores fall as the list does and a cut by score takes its tail."""
    first_stage = [n.score for n in out if not hopped(n)]
    above: float | None = next((score for score in first_stage if score is not None), None)
    for i, nws in enumerate(out):
        if hopped(nws):
            nws.score = above
        elif nws.score is not None:
            if above is not None and nws.score > above:
                out[i] = NodeWithScore(node=nws.node, score=above)
            above = out[i].score

