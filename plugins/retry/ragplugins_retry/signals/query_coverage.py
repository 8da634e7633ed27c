from __future__ import annotations

import math
from typing import ClassVar

from llama_index.core.schema import NodeWithScore

from ragplugins import api
from ragplugins_retry import text
from ragplugins_retry.signals.base import Measurement, RetrySignal


class QueryCoverageSignal(RetrySignal):
    """How much of the question the best top candidate actually contains.

    Each content term of the question (stemmed, stopwords dropped) is weighted
    by its rarity within the candidate set, idf = ln((N + 1) / (df + 0.5)), so
    a term every candidate shares says little and a term none contains says a
    lot. The value is the best, over the first ``top_n`` candidates, of the
    weighted share of the question's terms that candidate contains. It is
    always measured against the user's question, so terms a reformulation
    appended cannot raise it; when the original and the retry set are
    compared, the weights come from both sets pooled, so both are on one scale.
    """

    name: ClassVar[str] = "query_coverage"
    # localGPT's selection rule (the largest threshold with at most 10% false fires) gives 0.20 on
    # both `mixed` and `docs` (bench/sections/retry.md); calibrate it for your corpus.
    default_threshold: ClassVar[float] = 0.2
    top_n: int = 3

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins_retry.QueryCoverageSignal"

    def measure(self, query: str, nodes: list[NodeWithScore], ctx: api.RagContext, retrieved_for: str) -> Measurement:
        return self._coverage(query, nodes, nodes)

    def compare(self, query: str, original: list[NodeWithScore], before: Measurement, retry: list[NodeWithScore],
                retry_query: str, ctx: api.RagContext) -> tuple[Measurement, Measurement]:
        # Term weights from the two sets pooled (each distinct chunk once): with per-set weights a retry
        # set scores higher merely because its other candidates lack a term the original's contain.
        pool = list({n.node.node_id: n for n in [*original, *retry]}.values())
        return self._coverage(query, original, pool), self._coverage(query, retry, pool)

    def _coverage(self, query: str, nodes: list[NodeWithScore], background: list[NodeWithScore]) -> Measurement:
        terms = text.content_stems(query)
        if not terms:
            return Measurement(None, "the question has no content words (only stopwords)")
        if not nodes:
            return Measurement(None, "no candidates")
        bags = [text.stem_set(n.node.get_content()) for n in background]
        n = len(bags)
        weight = {t: math.log((n + 1) / (sum(t in b for b in bags) + 0.5)) for t in terms}
        total = sum(weight.values())
        top = [text.stem_set(n.node.get_content()) for n in nodes[: self.top_n]]
        best = max(sum(weight[t] for t in terms if t in bag) / total for bag in top)
        missing = [t for t in terms if not any(t in bag for bag in top)]
        return Measurement(best, "", {"terms": terms, "missing_in_top": missing})
