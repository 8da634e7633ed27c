"""Turning per-query scores into one order: aggregates, fusion with the first stage, coverage.

Everything here is rank arithmetic over the incoming (first-stage) order, with
no tuned weight: the fusion is the same reciprocal-rank fusion the core uses
for dense + BM25, and ties always keep the first-stage order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field


def ranks(scores: Sequence[float]) -> list[int]:
    """1-based rank of each candidate by descending score; ties keep the incoming order."""
    order = sorted(range(len(scores)), key=lambda i: (-_value(scores[i]), i))
    out = [0] * len(scores)
    for rank, i in enumerate(order, start=1):
        out[i] = rank
    return out


def _value(x: float) -> float:
    return -math.inf if x is None or math.isnan(x) else x


def fuse(scores: Sequence[float], fusion: str, rrf_k: int) -> list[float]:
    """The value candidates are ordered by: RRF of first-stage rank and scorer rank, or the score alone."""
    if fusion == "scores":
        return [_value(s) for s in scores]
    scorer_rank = ranks(scores)
    return [1.0 / (rrf_k + i + 1) + 1.0 / (rrf_k + scorer_rank[i]) for i in range(len(scores))]


def order_by(values: Sequence[float]) -> list[int]:
    """Candidate indices by descending value; ties keep the incoming order."""
    return sorted(range(len(values)), key=lambda i: (-values[i], i))


def aggregate(matrix: Sequence[Sequence[float]], how: str) -> list[float]:
    """Per candidate, the mean or max of its scores over the queries (rows)."""
    columns = list(zip(*matrix))
    if how == "max":
        return [max(_value(x) for x in col) for col in columns]
    return [sum(_value(x) for x in col) / len(col) for col in columns]


@dataclass
class Ranking:
    order: list[int]
    aggregate: list[float]
    # Sub-query index (1-based, as in the query list) -> the candidate placed as its best evidence.
    best: dict[int, int] = field(default_factory=dict)


def rank(matrix: Sequence[Sequence[float]], how: str, fusion: str, rrf_k: int) -> Ranking:
    """Order candidates scored against [question, sub-query 1, ...] (rows of ``matrix``).

    Each sub-query's best candidate is the one the scorer ranks first for it,
    without the first-stage order: that order ranks candidates for the whole
    question, which is what a sub-query is meant to look past. ``coverage``:
    the mean order, except that those best candidates move up to sit right
    after the overall best (in mean order among themselves), so every part of
    the question has its best evidence within the first 1 + (number of
    sub-queries) places.
    """
    best = {j: order_by(fuse(matrix[j], "scores", rrf_k))[0] for j in range(1, len(matrix))}
    agg = aggregate(matrix, "mean" if how == "coverage" else how)
    order = order_by(fuse(agg, fusion, rrf_k))
    if how == "coverage" and best:
        position = {c: p for p, c in enumerate(order)}
        head = sorted({order[0], *best.values()}, key=position.__getitem__)
        order = head + [c for c in order if c not in head]
    return Ranking(order, agg, best)
