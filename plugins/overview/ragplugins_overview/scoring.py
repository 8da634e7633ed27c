"""Scoring a query against every document overview, and deciding whether the ranking is decisive.

The score of a document is the cosine between the query and its overview (both unit vectors).
Scores are judged against this query's own score distribution, in units of a robust standard
deviation ``1.4826 * MAD`` around the median, so no absolute cosine threshold (which would
depend on the embedder and the corpus) is needed, and a handful of matching documents cannot
inflate the spread they are measured against. The ranking is *decisive* when the best
documents are separated from the rest by a clear margin: cut the top scores at their largest
gap; the documents above the cut must be outliers (modified z-score of Iglewicz & Hoaglin, 3.5
by default) and the gap itself at least ``min_gap`` robust standard deviations (1 by default:
without any signal, the gap between the top scores of n documents exceeds one standard
deviation with probability about exp(-sqrt(2 ln n)), 8% at n = 23 and 2.5% at n = 1000).

Up to ``EXACT_LIMIT`` documents every score is computed exactly (a float32 matrix-vector
product). Beyond that the product becomes memory-bound (100k x 384 float32 is 150 MB per
query), so a 512-bit random-hyperplane code per overview (SimHash: the fraction of differing
bits estimates the angle) preselects candidates, which are then scored exactly, and the median
and MAD come from the exact scores of a fixed, evenly spaced sample of documents.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MAD_TO_SIGMA = 1.4826
EXACT_LIMIT = 16_384
CODE_BITS = 512
# Exactly rescored candidates from the hash codes: the true top documents are far in angle from
# the bulk, so a few thousand candidates hold them with room to spare (see bench/bench_overview.py).
RESCORE = 2048
# The median and MAD of 2048 exact scores are within ~3% of a standard deviation of the full ones.
STATS_SAMPLE = 2048
_SEED = 20_251_130


@dataclass
class DocumentRanking:
    """The best documents for one query, with the statistics the decision is based on."""

    positions: list[int]  # rows of the overview matrix, best first
    scores: list[float]
    median: float
    spread: float  # 1.4826 * MAD: a robust standard deviation
    n_documents: int
    exact: bool

    def z(self, score: float) -> float:
        """The modified z-score of ``score``; 0 when the spread is 0 (nothing can be told apart)."""
        return (score - self.median) / self.spread if self.spread > 0 else 0.0

    def top(self, limit: int) -> list[tuple[int, float, float]]:
        return [(p, s, self.z(s)) for p, s in zip(self.positions[:limit], self.scores[:limit])]

    def decisive(self, min_z: float, min_gap: float, limit: int) -> tuple[list[tuple[int, float, float]], float]:
        """The documents above the largest gap among the best ``limit + 1`` scores when they stand out
        (z >= ``min_z``) and the gap is at least ``min_gap`` robust standard deviations, else [];
        and the gap in those units."""
        if self.spread <= 0 or len(self.scores) < 2:
            return [], 0.0
        head = self.scores[: limit + 1]
        gaps = [(head[i] - head[i + 1]) / self.spread for i in range(len(head) - 1)]
        cut = max(range(len(gaps)), key=lambda i: (gaps[i], -i))
        chosen = self.top(cut + 1)
        if gaps[cut] >= min_gap and chosen[-1][2] >= min_z:
            return chosen, gaps[cut]
        return [], gaps[cut]


def _dot(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    # Not ``matrix @ vector``: OpenBLAS spreads a product of this size over every core, which on a
    # busy machine is 10-20x slower than numpy's own single-threaded loop (measured on 2 cores).
    return np.einsum("ij,j->i", matrix, vector)


def _normalised(vector: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


class OverviewScorer:
    """Ranks documents by overview similarity; exact for up to ``EXACT_LIMIT`` documents."""

    def __init__(self, vectors: np.ndarray, exact_limit: int = EXACT_LIMIT):
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self.n = self.vectors.shape[0] if self.vectors.ndim == 2 else 0
        self.dim = self.vectors.shape[1] if self.n else 0
        self.exact = self.n <= exact_limit
        if not self.exact:
            rng = np.random.default_rng(_SEED)
            self._planes = rng.standard_normal((self.dim, CODE_BITS)).astype(np.float32)
            self._codes = self._encode(self.vectors)
            spaced = np.unique(np.linspace(0, self.n - 1, min(STATS_SAMPLE, self.n)).astype(np.int64))
            self._sample = np.ascontiguousarray(self.vectors[spaced])

    def _encode(self, vectors: np.ndarray) -> np.ndarray:
        bits = np.packbits(vectors @ self._planes > 0, axis=-1)
        return np.ascontiguousarray(bits).view(np.uint64)

    def rank(self, query: np.ndarray | Sequence[float], limit: int, among: np.ndarray | None = None) -> DocumentRanking:
        """The ``limit`` best documents for the (unnormalised) query embedding ``query``; with ``among``
        (rows of the overview matrix), ranked and measured among those documents only."""
        n = self.n if among is None else int(among.shape[0])
        if n == 0:
            return DocumentRanking([], [], 0.0, 0.0, 0, True)
        q = _normalised(np.asarray(query, dtype=np.float32).reshape(-1))
        if q.shape[0] != self.dim:
            raise ValueError(f"the query embedding has {q.shape[0]} dimensions, the overviews {self.dim}")
        limit = min(limit, n)
        exact = self.exact or n <= EXACT_LIMIT
        if among is None and exact:
            scores = _dot(self.vectors, q)
            rows = np.arange(self.n)
            reference = scores
        elif exact:
            rows = np.asarray(among)
            scores = _dot(self.vectors[rows], q)
            reference = scores
        else:
            among = np.arange(self.n) if among is None else among
            counts = np.bitwise_count(self._codes[among] ^ self._encode(q[None, :]))
            distance = counts[:, 0].astype(np.int16)
            for j in range(1, counts.shape[1]):
                distance += counts[:, j]
            # Distances are small integers: a histogram finds the cut-off faster than a partition.
            keep = min(max(RESCORE, limit), n)
            cutoff = int(np.searchsorted(np.cumsum(np.bincount(distance, minlength=CODE_BITS + 1)), keep))
            rows = among[np.flatnonzero(distance <= cutoff)]
            scores = _dot(self.vectors[rows], q)
            sample = (self._sample if n == self.n else
                      self.vectors[among[np.unique(np.linspace(0, n - 1, min(STATS_SAMPLE, n)).astype(np.int64))]])
            reference = _dot(sample, q)
        best = np.argpartition(-scores, limit - 1)[:limit] if limit < scores.shape[0] else np.arange(scores.shape[0])
        best = best[np.lexsort((rows[best], -scores[best]))]
        median = float(np.median(reference))
        spread = MAD_TO_SIGMA * float(np.median(np.abs(reference - median)))
        return DocumentRanking([int(rows[i]) for i in best], [float(scores[i]) for i in best], median, spread,
                               n, exact)
