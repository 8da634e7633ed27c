"""Document names: which names a document goes by, and finding them in text.

A document is known by its title, its first heading, its file name (numeric
prefix and extension stripped: ``08_regulatory_approval.pdf`` -> "regulatory
approval") and any alias the user declares. Mentions are found by looking up
token n-grams in a dictionary, so the scan is linear in the text whatever the
number of documents.

Guards against short and common names (a name that is also ordinary prose
would link every chunk that uses the phrase):

- a name needs two content words and six letters ("IP Certification" yes,
  "Verifier" or "NDA" no) unless the user declared it as an alias;
- a name made only of generic document words ("Final Report", "Table of
  Contents") is never searched;
- the mention must be written as a name: every content word capitalised
  ("the Customer Consent Letters", not "obtaining customer consents").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

TOKEN = re.compile(r"[^\W_]+")
STOPWORDS = frozenset("a an the of and or for to in on at by with from as per via".split())
GENERIC = frozenset(
    "document documents report reports agreement letter letters memo memorandum note notes overview summary "
    "introduction intro contents table index readme guide draft final chapter part page pages section file "
    "files untitled copy version appendix exhibit schedule annex attachment addendum misc general "
    "other new old main".split())
MIN_NAME_CHARS = 6
MIN_CONTENT_TOKENS = 2
# Characters allowed between the words of a name in running text ("Non-Disclosure", "R & D", line breaks,
# a possessive: "System Administrators' Guide", "Writer's Guide", the edge of emphasis on some of its words: "the
# *Linux-PAM* System Administrators' Guide", a DocBook page's <emphasis>).
_GAP = re.compile(r"[ \t\r\n\u00a0\-–—&/'’*]{1,5}")
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,5}$")
_NUMERIC_PREFIX = re.compile(r"^\d{1,6}[\s_.\-]+")
_PARENTHETICAL = re.compile(r"\([^()]{0,200}\)")
_TITLE_SPLIT = re.compile(r"\s+[-–—|]\s+|:\s+")


def tokens(text: str) -> tuple[str, ...]:
    return tuple(t.lower() for t in TOKEN.findall(text))


def content_tokens(toks: tuple[str, ...]) -> list[str]:
    return [t for t in toks if t not in STOPWORDS and not t.isdigit()]


def searchable(toks: tuple[str, ...]) -> bool:
    """True when a name is distinctive enough to be searched for in prose."""
    content = content_tokens(toks)
    return (len(content) >= MIN_CONTENT_TOKENS and sum(len(t) for t in content) >= MIN_NAME_CHARS
            and not all(t in GENERIC for t in content))


def file_stem_name(file_name: str) -> str:
    """'08_regulatory_approval.pdf' -> 'regulatory_approval'."""
    base = PurePosixPath(file_name.replace("\\", "/")).name
    return _NUMERIC_PREFIX.sub("", _EXTENSION.sub("", base))


def title_variants(title: str) -> list[str]:
    """A title and its shorter forms: without parentheticals, and each side of ' - ' or ': '."""
    plain = _PARENTHETICAL.sub(" ", title).strip()
    out = [title, plain, *(p for p in _TITLE_SPLIT.split(plain) if p.strip())]
    seen, unique = set(), []
    for v in out:
        key = tokens(v)
        if key and key not in seen:
            seen.add(key)
            unique.append(v.strip())
    return unique


def written_as_name(surfaces: list[str]) -> bool:
    """Every content word capitalised (or a number): 'Risk Assessment Memo', 'IP Certification' ("s" is a
    possessive's: "Writer's Guide")."""
    return all(s[0].isupper() or s[0].isdigit() for s in surfaces if s.lower() not in STOPWORDS and s != "s")


@dataclass
class Mention:
    start: int
    end: int
    text: str
    doc_ids: frozenset[str]


@dataclass
class NameIndex:
    """Token n-gram -> documents. ``add`` applies the guards unless ``trusted`` (declared aliases)."""

    by_tokens: dict[tuple[str, ...], set[str]] = field(default_factory=dict)
    # First word -> the lengths of the names starting with it, longest first: most
    # words start no name, so the scan costs one dict lookup per word.
    lengths: dict[str, list[int]] = field(default_factory=dict)
    # Names the user declared (aliases): found as declared, in any case ("the management guide").
    declared: set[tuple[str, ...]] = field(default_factory=set)
    # Names given with their words joined by "_" (a file's "FILTER_README"), as each is written: found so joined and
    # so written too (bash's "BASH_ALIASES" is a shell variable, not its examples' file Bash_aliases).
    joined: dict[tuple[str, ...], set[str]] = field(default_factory=dict)

    def add(self, name: str, doc_id: str, trusted: bool = False) -> bool:
        toks = tokens(name)
        if not toks or not (trusted or searchable(toks)):
            return False
        self.by_tokens.setdefault(toks, set()).add(doc_id)
        if "_" in name:
            self.joined.setdefault(toks, set()).add(name.strip())
        if trusted:
            self.declared.add(toks)
        sizes = self.lengths.setdefault(toks[0], [])
        if len(toks) not in sizes:
            sizes.append(len(toks))
            sizes.sort(reverse=True)
        return True

    def lookup(self, name: str) -> set[str]:
        return set(self.by_tokens.get(tokens(name), ()))

    def find(self, text: str, as_written: bool = True) -> list[Mention]:
        """Longest name at each position, left to right, words separated by spaces; written as a name
        unless ``as_written`` is False (a question is typed, not typeset: "the due diligence report")."""
        if not self.by_tokens:
            return []
        toks = list(TOKEN.finditer(text))
        out: list[Mention] = []
        i = 0
        while i < len(toks):
            hit = None
            for n in self.lengths.get(toks[i].group().lower(), ()):
                if i + n > len(toks):
                    continue
                key = tuple(m.group().lower() for m in toks[i:i + n])
                docs = self.by_tokens.get(key)
                if docs is None:
                    continue
                span = toks[i:i + n]
                gaps = [text[a.end():b.start()] for a, b in zip(span, span[1:])]
                # A file's own name written in prose joins its words as the file does: "see the FILTER_README
                # document" (Postfix's READMEs, 117 such mentions); git's GIT_COMMIT is a variable, no git-commit.
                start, end = span[0].start(), span[-1].end()
                gaps_ok = all(_GAP.fullmatch(gap) for gap in gaps) or (
                    all(gap == "_" for gap in gaps) and text[start:end] in self.joined.get(key, ()))
                # Not a part of an identifier: "POST_BUILD\n  COMMAND" holds no mention of "Build Command".
                whole = text[start - 1:start] != "_" and text[end:end + 1] != "_"
                if gaps_ok and whole and (not as_written or key in self.declared
                                          or written_as_name([m.group() for m in span])):
                    hit = (n, Mention(start, end, text[start:end], frozenset(docs)))
                    break
            if hit:
                out.append(hit[1])
                i += hit[0]
            else:
                i += 1
        return out
