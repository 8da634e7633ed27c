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

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from ragplugins_retry import text

_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_ACRONYM = re.compile(r"[A-Z][A-Z0-9]*[A-Z][A-Z0-9]*s?")
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


@dataclass
class Vocabulary:
    n_chunks: int = 0
    postings: dict[str, frozenset[int]] = field(default_factory=dict)   # lower token -> chunk indices
    stem_postings: dict[str, frozenset[int]] = field(default_factory=dict)  # stem -> chunk indices
    surface: dict[str, str] = field(default_factory=dict)               # lower token -> commonest surface
    by_part: dict[str, set[str]] = field(default_factory=dict)          # part stem -> compound lower tokens
    acronyms: set[str] = field(default_factory=set)                     # lower tokens written as acronyms
    expansions: dict[str, Counter] = field(default_factory=dict)        # acronym -> defining phrases

    def df(self, token: str) -> int:
        return len(self.postings.get(token.lower(), ()))

    def informative(self, token: str) -> bool:
        """In at least one chunk and in fewer than half of them: where BM25's idf is positive."""
        return 0 < self.df(token) < self.n_chunks / 2


def build(texts: list[str]) -> Vocabulary:
    postings: dict[str, set[int]] = defaultdict(set)
    stem_postings: dict[str, set[int]] = defaultdict(set)
    surfaces: dict[str, Counter] = defaultdict(Counter)
    chunk_words = []
    stemmer = text._stemmer()
    for i, chunk in enumerate(texts):
        words = text.words(chunk)
        chunk_words.append(words)
        for w in words:
            postings[w.lower()].add(i)
            surfaces[w.lower()][w] += 1
        # Not text.stem_set: a corpus would flush the candidates' stem cache the signal relies on.
        for s in stemmer.stemWords(list({w.lower() for w in words})):
            stem_postings[s].add(i)
    vocab = Vocabulary(n_chunks=len(texts), postings={t: frozenset(p) for t, p in postings.items()},
                       stem_postings={s: frozenset(p) for s, p in stem_postings.items()},
                       surface={t: c.most_common(1)[0][0] for t, c in surfaces.items()})
    for token in vocab.postings:
        split = parts(vocab.surface[token])  # the surface form keeps camelCase boundaries
        if len(split) > 1:
            for s in set(stemmer.stemWords(split)):
                vocab.by_part.setdefault(s, set()).add(token)
        if is_acronym(vocab.surface[token]):
            vocab.acronyms.add(token)
    for words in chunk_words:
        present = {w.lower() for w in words} & vocab.acronyms
        if not present:
            continue
        flat = [p for w in words for p in re.split(r"[_.\-]+", w) if p]
        lower = [p.lower() for p in flat]
        for start in range(len(flat)):
            for n in range(2, MAX_ACRONYM + 1):
                phrase = flat[start:start + n]
                if len(phrase) < n or not all(p.isalpha() for p in phrase):
                    break
                key = initials(phrase)
                # A definition stands next to its acronym: "reciprocal rank fusion (RRF)", "RRF (reciprocal
                # rank fusion)". Initials that merely match elsewhere are chance ("UI" / "uploads index").
                beside = {lower[start - 1] if start else "", lower[start + n] if start + n < len(lower) else ""}
                if key in present and key in beside and text.is_content(phrase[0]) and text.is_content(phrase[-1]):
                    vocab.expansions.setdefault(key, Counter())[" ".join(lower[start:start + n])] += 1
    return vocab


def _texts(ctx: Any) -> list[str]:
    return list(ctx.store.iter_texts())


def vocabulary_of(ctx: Any) -> Vocabulary:
    """The vocabulary of ``ctx``'s whole index, built on first use and kept until the index is written."""
    return ctx.cached("retry.vocabulary", lambda c: build(_texts(c)))


# Why the query-time statistics abstain: a vocabulary over chunks the host's filter may exclude would
# steer the query by them, and show their words in the trace.
FILTERS_UNKNOWN = ("the host's filters are not known, so the index's term statistics could include chunks "
                   "they exclude")


def vocabulary_for_query(ctx: Any) -> Vocabulary | None:
    """The vocabulary of the chunks the query being answered may see (those passing the host's filters;
    the whole index when it has none), kept per filters until the index is written; None when the
    host's filters are not known (see ``FILTERS_UNKNOWN``)."""
    return ctx.cached_for_query("retry.vocabulary", lambda rows: build([r.text for r in rows]))
