"""Text units the verifiers work on: answer sentences, evidence units, content words.

Sentence splitting is a careful regex (pysbd is not a dependency and nltk's punkt
data is a separate download that fails offline). Evidence is cut into *units*:
sentences, and lines of PDF-extracted or Markdown text that stand on their own
(list items, table rows, ``Label: value`` lines). Each unit keeps its character
span in its node and the heading it sits under, so a value can be attached to
the subject its section names.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

import bm25s.stopwords
import Stemmer

# Words that change what a claim says about a value ("below Grade 7", "not paid",
# "more than 6 months") must count as content, so they are kept out of the stopwords.
_MEANINGFUL = {"above", "below", "under", "over", "up", "down", "more", "most", "few", "further", "before",
               "after", "against", "between", "off", "out", "only", "no", "not", "nor", "same", "other",
               "again", "once", "until"}
_EXTRA = {"also", "would", "could", "may", "might", "must", "shall", "per", "via", "yes", "etc", "e.g", "i.e",
          # light verbs: "get 45 EUR" says no more than "receive 45 EUR"
          "get", "gets", "got", "make", "makes", "made", "take", "takes", "took", "give", "gives", "gave", "use",
          "uses", "used", "need", "needs"}
STOPWORDS = frozenset(w for w in bm25s.stopwords.STOPWORDS_EN_PLUS if w not in _MEANINGFUL) | _EXTRA
# Every function word, for counting what a clause adds ("kick off" adds "kick", not "off").
STOPWORDS_ALL = frozenset(bm25s.stopwords.STOPWORDS_EN_PLUS) | _EXTRA

# Tokens ending in a period that do not end a sentence.
_ABBREVIATIONS = {
    "inc", "ltd", "llc", "llp", "co", "corp", "vs", "etc", "e.g", "i.e", "cf", "al", "dr", "mr", "mrs", "ms",
    "prof", "st", "jr", "sr", "approx", "dept", "est", "u.s", "u.k", "e.u",
    "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
}
# Abbreviations only when a number follows ("No. 17/456,789"); "No. MegaCorp ..." ends a sentence.
_NUMBER_ABBREVIATIONS = {"no", "nos", "art", "sec", "fig", "p", "pp", "vol"}
_SENTENCE_END = re.compile(r"[.!?]+[\"'”’)\]]*(?=\s)")
_WORD = re.compile(r"[A-Za-z0-9]+(?:['’][A-Za-z]+)?")
_LIST_MARKER = re.compile(r"^\s*(?:[-*•·]|\[[ xX]\]|\(?[a-zA-Z0-9]{1,3}[.)](?=\s)|\d+(?:\.\d+)+\.?(?=\s)|#{1,6}\s|\|)")
# Markdown headings, short one-level numbered titles ("3. SICK LEAVE", "1. MegaCorp Inc. - OBTAINED")
# and all-caps lines; dotted items ("1.2 EBITDA: ...") are list items. The length limit is in is_heading.
_HEADING = re.compile(r"^\s*(?:#{1,6}\s+.*|(?:\d+|[A-Z]|[IVX]+)[.)]\s+[^\n]*[^.:;,\s]|"
                      r"[A-Z0-9][A-Z0-9 &,'()/-]{3,})\s*$")

_stemmer = Stemmer.Stemmer("english")


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    return _stemmer.stemWord(word.lower())


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    text: str


def _ends_sentence(text: str, end: int) -> bool:
    """Whether the punctuation ending at ``end`` closes a sentence (not 'Inc.', 'U.S.', 'No. 5', 'J. Smith')."""
    head = text[:end].rstrip("\"'”’)]")
    if not head.endswith("."):
        return True
    if re.fullmatch(r"\s*(?:\d+(?:\.\d+)*|[A-Za-z]|[IVXivx]+)\.", head):
        return False  # the number of a list item or title: "1. OPERATING SPECIFICATIONS"
    word = re.search(r"(?:^|[^A-Za-z.])([A-Za-z][A-Za-z.]*)\.$", head)
    if word is None:
        return True
    token = word.group(1).lower()
    following = text[end:].lstrip()
    next_word = re.match(r"[A-Za-z]+", following)
    if token in _NUMBER_ABBREVIATIONS:
        return not following[:1].isdigit()
    if len(token) == 1 and token.isalpha() and word.group(1).isupper():
        # An initial ("James R. Mitchell") unless an ordinary sentence opener follows ("Exhibit A. The ...").
        return next_word is None or next_word.group(0).lower() in STOPWORDS
    return token not in _ABBREVIATIONS


def split_sentences(text: str) -> list[Span]:
    """Sentences of ``text`` with their character spans. Lines that start a list item
    or follow a blank line start a new sentence."""
    spans: list[Span] = []
    for block_start, block in _blocks(text):
        start = 0
        for m in _SENTENCE_END.finditer(block):
            nxt = block[m.end():].lstrip()
            if nxt and not (nxt[0].isupper() or nxt[0].isdigit() or nxt[0] in "\"'“‘([$€£*-"):
                continue
            if not _ends_sentence(block, m.end()):
                continue
            _add(spans, block, block_start, start, m.end())
            start = m.end()
        _add(spans, block, block_start, start, len(block))
    return spans


def _add(spans: list[Span], block: str, offset: int, start: int, end: int) -> None:
    piece = block[start:end]
    stripped = piece.strip()
    if stripped:
        lead = len(piece) - len(piece.lstrip())
        s = offset + start + lead
        spans.append(Span(s, s + len(stripped), stripped))


def _blocks(text: str) -> list[tuple[int, str]]:
    """Cut text at blank lines and before list items / table rows; join wrapped lines."""
    blocks: list[tuple[int, str]] = []
    lines = text.splitlines(keepends=True)
    pos = 0
    current: list[str] = []
    current_start = 0
    for line in lines:
        stripped = line.strip()
        prev = current[-1].strip() if current else ""
        new_block = (not stripped or not current or _LIST_MARKER.match(line) is not None
                     or not _continues(prev, stripped))
        if new_block and current:
            blocks.append((current_start, "".join(current)))
            current = []
        if stripped:
            if not current:
                current_start = pos
            current.append(line)
        pos += len(line)
    if current:
        blocks.append((current_start, "".join(current)))
    return blocks


def _continues(prev: str, line: str) -> bool:
    """Whether ``line`` continues ``prev`` (a wrapped line) rather than starting a new unit."""
    if not prev or prev.startswith("|") or is_heading(prev):
        return False
    if line[:1].islower() or prev.endswith((",", "-", "(", "&")):
        return True
    # Extracted PDF text wraps long lines without punctuation; short unpunctuated
    # lines are labels ("Contract Value: $3.4M annual") and stand alone.
    return len(prev) >= 60 and not prev.endswith((".", ";", "!", "?"))


@dataclass
class Unit:
    """One evidence unit: a sentence or standalone line of one node, with its heading."""

    node_id: str
    start: int
    end: int
    text: str
    heading: str = ""
    index: int = 0
    words: list[str] = field(default_factory=list)


def evidence_units(node_id: str, text: str) -> list[Unit]:
    units: list[Unit] = []
    heading = ""
    for span in split_sentences(text):
        if is_heading(span.text):
            heading = span.text
        units.append(Unit(node_id, span.start, span.end, span.text, heading if heading != span.text else "",
                          len(units)))
    return units


def is_heading(line: str) -> bool:
    return "\n" not in line.strip() and _HEADING.match(line) is not None and len(line.strip()) <= 60


def words(text: str) -> list[tuple[int, int, str]]:
    """Word tokens as (start, end, lowercased word)."""
    return [(m.start(), m.end(), m.group(0).lower().replace("’", "'")) for m in _WORD.finditer(text)]


def content_stems(text: str) -> list[str]:
    return [stem(w) for _, _, w in words(text) if is_content(w)]


def is_content(word: str) -> bool:
    return word not in STOPWORDS and not word.isdigit() and len(word) > 1


def is_checkable(sentence: str) -> bool:
    """Whether a sentence makes a claim: a number, or two content words besides 'Yes'/'No'."""
    if re.search(r"\d", sentence):
        return True
    content = [w for _, _, w in words(sentence) if is_content(w) and w not in {"yes", "no", "not"}]
    return len(content) >= 2
