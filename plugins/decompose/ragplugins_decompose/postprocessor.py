from __future__ import annotations

import asyncio
import math
import time
from typing import Any

from llama_index.core.bridge.pydantic import Field, PrivateAttr, SerializeAsAny
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.prompts.mixin import PromptMixin
from llama_index.core.schema import NodeWithScore, QueryBundle

from ragplugins import api
from ragplugins_decompose import ranking
from ragplugins_decompose.decomposers.base import Decomposer, Decomposition, clean
from ragplugins_decompose.scorers.base import Scorer

PLUGIN = "decompose"


def _round(x: float) -> float | None:
    return round(x, 4) if x is not None and math.isfinite(x) else None


class DecomposeRerank(PromptMixin, BaseNodePostprocessor):
    """A rerank stage that scores every candidate against the question and its sub-queries.

    The question is split once (``decomposer``); each candidate is scored
    against the question and every sub-query (``scorer``); the scores are
    aggregated (``mean``, ``max`` or ``coverage``) and the aggregate's order is
    fused with the first-stage order by reciprocal rank (``fusion = "rrf"``)
    or replaces it (``"scores"``). The list keeps every candidate unless
    ``top_n`` cuts it. ``NodeWithScore.score`` becomes the aggregate score.
    What happened goes to the trace under ``decompose/split`` and
    ``decompose/rerank``; candidates that moved are tagged ``decompose``.
    """

    decomposer: SerializeAsAny[Decomposer]
    scorer: SerializeAsAny[Scorer]
    aggregate: str = Field("max", description="mean, max or coverage")
    fusion: str = Field("rrf", description="rrf or scores")
    rrf_k: int = 60
    rerank_unsplit: bool = False
    max_sub_queries: int = 4
    top_n: int | None = None
    _ctx: api.RagContext | None = PrivateAttr(default=None)

    def __init__(self, ctx: api.RagContext | None = None, **data: Any):
        super().__init__(**data)
        self._ctx = ctx

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins_decompose.DecomposeRerank"

    # -- prompts: get_prompts() / update_prompts() reach the llm decomposer's prompt --
    def _get_prompts(self) -> dict[str, Any]:
        return self.decomposer.prompts()

    def _update_prompts(self, prompts: dict[str, Any]) -> None:
        self.decomposer.update_prompts(prompts)

    def _get_prompt_modules(self) -> dict[str, Any]:
        return {}

    # -- the stage -------------------------------------------------------
    @staticmethod
    def _query(query_bundle: QueryBundle | None) -> str:
        if query_bundle is None or not query_bundle.query_str.strip():
            raise ValueError("DecomposeRerank needs the question: call postprocess_nodes(nodes, "
                             "query_bundle=QueryBundle(query)) or postprocess_nodes(nodes, query_str=query)")
        return query_bundle.query_str

    def _postprocess_nodes(self, nodes: list[NodeWithScore],
                           query_bundle: QueryBundle | None = None) -> list[NodeWithScore]:
        query = self._query(query_bundle)
        start = time.perf_counter()
        with api.timed(PLUGIN):
            try:
                found = self.decomposer.decompose(query, self._ctx)
            except Exception as exc:  # noqa: BLE001 - a failing decomposer means no split, not a failed query
                found = Decomposition([], f"the decomposer failed: {type(exc).__name__}: {exc}")
            return self._rerank(nodes, query, self._split(query, found), start)

    async def _apostprocess_nodes(self, nodes: list[NodeWithScore],
                                  query_bundle: QueryBundle | None = None) -> list[NodeWithScore]:
        query = self._query(query_bundle)
        start = time.perf_counter()
        with api.timed(PLUGIN):
            try:
                found = await self.decomposer.adecompose(query, self._ctx)
            except Exception as exc:  # noqa: BLE001
                found = Decomposition([], f"the decomposer failed: {type(exc).__name__}: {exc}")
            split = self._split(query, found)
            return await asyncio.to_thread(self._rerank, nodes, query, split, start)

    def _split(self, query: str, found: Decomposition) -> Decomposition:
        split = clean(query, found, self.max_sub_queries)
        api.record(PLUGIN, "split", decomposer=self.decomposer.name, sub_queries=list(split.sub_queries),
                   reason=split.reason, details=split.details)
        return split

    def _rerank(self, nodes: list[NodeWithScore], query: str, split: Decomposition,
                start: float) -> list[NodeWithScore]:
        subs = split.sub_queries
        base: dict[str, Any] = {"scorer": self.scorer.label, "aggregate": self.aggregate, "fusion": self.fusion}
        if len(nodes) < 2:
            return self._unranked(nodes, base, f"{len(nodes)} candidate(s)")
        if not subs and not self.rerank_unsplit:
            return self._unranked(nodes, base, f"the question does not split, and the {self.scorer.label} scorer "
                                               "would only repeat the first stage's signal (rerank_unsplit is off)")
        queries = [query, *subs]
        matrix = self.scorer.score(queries, nodes, self._ctx)
        result = ranking.rank(matrix, self.aggregate if subs else "mean", self.fusion, self.rrf_k)
        best_for: dict[int, list[str]] = {}
        for j, c in result.best.items():
            best_for.setdefault(c, []).append(queries[j])
        out, candidates = [], []
        for position, c in enumerate(result.order):
            score = _round(result.aggregate[c])
            nws = NodeWithScore(node=nodes[c].node, score=result.aggregate[c] if score is not None else None)
            if position != c or c in best_for:
                nws = api.tag(nws, PLUGIN, first_rank=c + 1, rank=position + 1, best_for=best_for.get(c, []))
            out.append(nws)
            candidates.append({"id": nodes[c].node.node_id, "first_rank": c + 1, "rank": position + 1,
                               "scores": [_round(row[c]) for row in matrix], "aggregate": score})
        final = self._cut(out)
        moved = sum(p != c for p, c in enumerate(result.order))
        against = f"the question and {len(subs)} sub-queries ({split.reason})" if subs else "the question"
        api.record_decision(PLUGIN, "rerank", before=nodes, after=final,
                            reason=f"scored the candidates against {against} with the {self.scorer.label} scorer"
                                   + self._cut_note(nodes, final),
                            numbers={"moved": moved, "sub_queries": len(subs)}, **base, reranked=True,
                            queries=queries, candidates=candidates,
                            best={queries[j]: nodes[c].node.node_id for j, c in result.best.items()},
                            ms=round((time.perf_counter() - start) * 1000, 2))
        return final

    def _unranked(self, nodes: list[NodeWithScore], base: dict, reason: str) -> list[NodeWithScore]:
        final = self._cut(nodes)
        api.record_decision(PLUGIN, "rerank", before=nodes, after=final, reason=reason + self._cut_note(nodes, final),
                            **base, reranked=False)
        return final

    def _cut(self, nodes: list[NodeWithScore]) -> list[NodeWithScore]:
        return nodes[: self.top_n] if self.top_n is not None else nodes

    def _cut_note(self, nodes: list[NodeWithScore], final: list[NodeWithScore]) -> str:
        return f"; kept the first top_n = {self.top_n}" if len(final) < len(nodes) else ""
