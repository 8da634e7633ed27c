"""The corpus vocabulary the `vocabulary` strategy expands from, built once per index state.

Per lower-cased token: its chunk postings (so document frequency and co-occurrence
with the question's other words come from the same table), its most frequent
surface form; identifier parts ("lru_cache" -> lru, cache; "getQueryEmbedding" ->
get, query, embedding) indexed by stem; upper-case acronyms ("ANN") and, for
each acronym, the word sequences with its initials that stand in a chunk that
also contains the acronym (a definition such as "approximate nearest
neighbour (ANN)").
"""

from __future__ import annotations

import functools
import math
import re
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

from ragplugins import api
from ragplugins_retry import text

_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_ACRONYM = re.compile(r"[A-Z][A-Z0-9]*[A-Z][A-Z0-9]*s?")
_CAPITALS = re.compile(r"[A-Z][A-Z0-9]*[A-Z]")   # where an acronym can stand at all: a cheap test first
# Acronyms are short: longer capitalised words are names or shouting, not abbreviations.
MAX_ACRONYM = 6


def parts(word: str) -> list[str]:
    """Identifier parts of a word, lower-cased: split on ``_ . -`` and camelCase boundaries."""
    out = []
    for piece in re.split(r"[_.\-]+", word):
        out += [p.lower() for p in (_CAMEL.findall(piece) or [piece]) if p]
    return out


def is_acronym(word: str) -> bool:
    return 2 <= len(word.rstrip("s")) <= MAX_ACRONYM and bool(_ACRONYM.fullmatch(word))


def initials(words: list[str]) -> str:
    return "".join(w[0] for w in words).lower()


class Postings:
    """Which chunks hold each key, as one compressed sparse row table (keys x chunks): 4 bytes per
    (key, chunk) pair where Python sets of ints take about 60, which is what lets a million chunks'
    vocabulary fit beside the BM25 leg in a query process."""

    EMPTY = np.empty(0, dtype=np.int32)

    def __init__(self, keys: dict[str, int] | None = None, table: sparse.csr_array | None = None):
        self._keys = keys or {}
        self._rows = table if table is not None else sparse.csr_array((0, 0), dtype=np.bool_)

    @classmethod
    def from_pairs(cls, keys: dict[str, int], key_ids: array, chunk_ids: array, n_chunks: int) -> Postings:
        rows = np.frombuffer(key_ids, dtype=np.int32)
        cols = np.frombuffer(chunk_ids, dtype=np.int32)
        table = sparse.csr_array((np.ones(len(rows), dtype=np.bool_), (rows, cols)),
                                 shape=(len(keys), n_chunks))
        table.sum_duplicates()   # also sorts each key's chunks, which the intersections rely on
        return cls(keys, table)

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def chunks(self, key: str) -> np.ndarray:
        """The chunks holding ``key``, ascending (empty when none does)."""
        row = self._keys.get(key)
        if row is None:
            return self.EMPTY
        return self._rows.indices[self._rows.indptr[row]:self._rows.indptr[row + 1]]

    def count(self, key: str) -> int:
        """In how many chunks ``key`` stands (its document frequency)."""
        row = self._keys.get(key)
        return 0 if row is None else int(self._rows.indptr[row + 1] - self._rows.indptr[row])

    def all_of(self, keys: Iterable[str]) -> np.ndarray:
        """The chunks holding every one of ``keys`` (none when ``keys`` is empty)."""
        found = [self.chunks(k) for k in keys]
        if not found:
            return self.EMPTY
        return functools.reduce(lambda a, b: np.intersect1d(a, b, assume_unique=True), found)


@dataclass
class Vocabulary:
    n_chunks: int = 0
    postings: Postings = field(default_factory=Postings)                # lower token -> chunks
    stem_postings: Postings = field(default_factory=Postings)           # stem -> chunks
    surface: dict[str, str] = field(default_factory=dict)               # lower token -> commonest surface
    by_part: dict[str, set[str]] = field(default_factory=dict)          # part stem -> compound lower tokens
    acronyms: set[str] = field(default_factory=set)                     # lower tokens written as acronyms
    expansions: dict[str, Counter] = field(default_factory=dict)        # acronym -> defining phrases

    def df(self, token: str) -> int:
        return self.postings.count(token.lower())

    def idf(self, chunks_with: int) -> float:
        """BM25's idf of a term found in ``chunks_with`` of the chunks (its Okapi form, +0.5 smoothed)."""
        return math.log((self.n_chunks + 1) / (chunks_with + 0.5))

    def informative(self, token: str) -> bool:
        """In at least one chunk and in fewer than half of them: where BM25's idf is positive."""
        return 0 < self.df(token) < self.n_chunks / 2


def build(texts: Iterable[str]) -> Vocabulary:
    """The vocabulary of ``texts``, read once. Postings are gathered as (key, chunk) pairs in flat int
    arrays and packed at the end; the text of a chunk is kept only when it writes a word as an acronym
    (the definitions beside the acronyms are looked for once the acronyms are known)."""
    tokens: dict[str, int] = {}
    stems: dict[str, int] = {}
    token_ids, token_chunks, stem_ids, stem_chunks = array("i"), array("i"), array("i"), array("i")
    # Surface forms in first-seen order: the commonest per token, the first seen on a tie, as a Counter
    # per token would pick, at one entry per form.
    forms: Counter[str] = Counter()
    with_acronyms: list[str] = []
    stemmer = text._stemmer()
    n_chunks = 0
    for i, chunk in enumerate(texts):
        n_chunks = i + 1
        words = text.words(chunk)
        forms.update(words)
        lowers = list(dict.fromkeys(w.lower() for w in words))
        for token in lowers:
            token_ids.append(tokens.setdefault(token, len(tokens)))
        token_chunks.extend([i] * len(lowers))
        # Not text.stem_set: a corpus would flush the candidates' stem cache the signal relies on.
        chunk_stems = set(stemmer.stemWords(lowers))
        for s in chunk_stems:
            stem_ids.append(stems.setdefault(s, len(stems)))
        stem_chunks.extend([i] * len(chunk_stems))
        if _CAPITALS.search(chunk) and any(map(is_acronym, set(words))):
            with_acronyms.append(chunk)
    surface: dict[str, str] = {}
    best: dict[str, int] = {}
    for form, count in forms.items():
        token = form.lower()
        if count > best.get(token, 0):
            surface[token], best[token] = form, count
    del forms, best
    vocab = Vocabulary(n_chunks=n_chunks,
                       postings=Postings.from_pairs(tokens, token_ids, token_chunks, n_chunks),
                       stem_postings=Postings.from_pairs(stems, stem_ids, stem_chunks, n_chunks),
                       surface=surface)
    del token_ids, token_chunks, stem_ids, stem_chunks
    for token in vocab.postings:
        split = parts(vocab.surface[token])  # the surface form keeps camelCase boundaries
        if len(split) > 1:
            for s in set(stemmer.stemWords(split)):
                vocab.by_part.setdefault(s, set()).add(token)
        if is_acronym(vocab.surface[token]):
            vocab.acronyms.add(token)
    for chunk in with_acronyms:
        words = text.words(chunk)
        # Where the chunk writes the acronym as one ("RRF", not "rrf"): a definition stands beside that.
        present = {w.lower() for w in set(words) if is_acronym(w)} & vocab.acronyms
        if present:
            for phrase in _definitions(words, present):
                vocab.expansions.setdefault(initials(phrase), Counter())[" ".join(phrase).lower()] += 1
    return vocab


def _definitions(words: list[str], present: set[str]) -> list[list[str]]:
    """The phrases of ``words`` that define one of the acronyms ``present``, in text order.

    A definition stands next to its acronym: "reciprocal rank fusion (RRF)", "RRF (reciprocal rank
    fusion)"; initials that merely match elsewhere are chance ("UI" / "uploads index"). So only the
    phrases of 2 to MAX_ACRONYM alphabetic parts just before or just after an acronym are tried."""
    flat = [p for w in words for p in re.split(r"[_.\-]+", w) if p]
    lower = [p.lower() for p in flat]
    spans: set[tuple[int, int]] = set()
    for j, part in enumerate(lower):
        if part in present:
            spans.update((j + 1, n) for n in range(2, MAX_ACRONYM + 1))
            spans.update((j - n, n) for n in range(2, MAX_ACRONYM + 1) if j - n >= 0)
    found = []
    for start, n in sorted(spans):
        phrase = flat[start:start + n]
        if len(phrase) < n or not all(p.isalpha() for p in phrase):
            continue
        key = initials(phrase)
        beside = {lower[start - 1] if start else "", lower[start + n] if start + n < len(lower) else ""}
        if key in present and key in beside and text.is_content(phrase[0]) and text.is_content(phrase[-1]):
            found.append(phrase)
    return found


def vocabulary_of(ctx: api.RagContext) -> Vocabulary:
    """The vocabulary of ``ctx``'s whole index, built on first use and kept until the index is written."""
    return ctx.cached("retry.vocabulary", lambda c: build(c.store.iter_texts()))


# Why the query-time statistics abstain: a vocabulary over chunks the host's filter may exclude would
# steer the query by them, and show their words in the trace.
FILTERS_UNKNOWN = ("the host's filters are not known, so the index's term statistics could include chunks "
                   "they exclude")


def vocabulary_for_query(ctx: api.RagContext) -> Vocabulary | None:
    """The vocabulary of the chunks the query being answered may see (those passing the host's filters;
    the whole index when it has none), kept per filters until the index is written; None when the
    host's filters are not known (see ``FILTERS_UNKNOWN``)."""
    return ctx.cached_for_query("retry.vocabulary", lambda rows: build(r.text for r in rows))
