"""The benchmark metrics, exactly as ../shared/bench/README.md defines them."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

_WS = re.compile(r"\s+")


def norm(text: str) -> str:
    """Collapse whitespace runs to one space, lowercase."""
    return _WS.sub(" ", text).lower()


def is_relevant(chunk_text: str, expected: Sequence[str]) -> bool:
    """A chunk is relevant iff some normalised expected string is a substring of it."""
    chunk = norm(chunk_text)
    return any(norm(e) in chunk for e in expected)


def hit(texts: Sequence[str], expected: Sequence[str], match: str = "any") -> bool:
    """Whether the joined texts (" || ") contain any / all expected strings."""
    joined = " || ".join(norm(t) for t in texts)
    found = [norm(e) in joined for e in expected]
    return all(found) if match == "all" else any(found)


def recall_at(texts: Sequence[str], expected: Sequence[str], match: str, k: int) -> float:
    return 1.0 if hit(list(texts)[:k], expected, match) else 0.0


def ndcg_at(texts: Sequence[str], expected: Sequence[str], k: int = 10) -> float:
    """Binary gains; IDCG from the same candidate list re-sorted by relevance; 0 without a relevant chunk."""
    gains = [1.0 if is_relevant(t, expected) else 0.0 for t in texts]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains[:k]))
    ideal = sorted(gains, reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def first_relevant_rank(texts: Sequence[str], expected: Sequence[str]) -> int | None:
    for i, t in enumerate(texts, 1):
        if is_relevant(t, expected):
            return i
    return None


def list_metrics(texts: Sequence[str], expected: Sequence[str], match: str,
                 asked: int | None = None) -> dict[str, float | int | None]:
    """The bench's metrics of one list; ``asked``: also recall and nDCG at the k the list was asked for (a plugin
    may append to a list: at k = 3, crossref's hop makes it 4 long, and R@3 is still what the top 3 hold)."""
    out: dict[str, float | int | None] = {
        "recall@5": recall_at(texts, expected, match, 5),
        "recall@10": recall_at(texts, expected, match, 10),
        "recall@20": recall_at(texts, expected, match, 20),
        "ndcg@10": ndcg_at(texts, expected, 10),
        "first_relevant_rank": first_relevant_rank(texts, expected),
        "len": len(texts),
    }
    if asked is not None:
        out[f"recall@{asked}"] = recall_at(texts, expected, match, asked)
        out[f"ndcg@{asked}"] = ndcg_at(texts, expected, asked)
    return out
