from __future__ import annotations

import math
from typing import Any, ClassVar

from llama_index.core.bridge.pydantic import SerializeAsAny
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle

from ragplugins import api
from ragplugins_decompose.scorers.base import Scorer


class PostprocessorScorer(Scorer):
    """Any LlamaIndex reranking postprocessor as a scorer (``SentenceTransformerRerank`` for a
    cross-encoder, ``LLMRerank``, ``ColbertRerank``...): it scores the candidates once per query.

    The reranker sees copies, so its in-place score and metadata writes never
    reach the caller's nodes; a candidate it drops scores lowest for that query.
    """

    name: ClassVar[str] = "postprocessor"
    postprocessor: SerializeAsAny[BaseNodePostprocessor]

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins_decompose.PostprocessorScorer"

    @property
    def label(self) -> str:
        return f"{self.name}:{self.postprocessor.class_name()}"

    def _scorer_for(self, n: int) -> BaseNodePostprocessor:
        # Rerankers cut to top_n; every candidate needs a score. The copy shares the loaded model.
        fields = type(self.postprocessor).model_fields
        return self.postprocessor.model_copy(update={"top_n": n}) if "top_n" in fields else self.postprocessor

    def score(self, queries: list[str], nodes: list[NodeWithScore], ctx: api.RagContext | None) -> list[list[float]]:
        reranker = self._scorer_for(len(nodes))
        rows = []
        for query in queries:
            copies = []
            for n in nodes:
                node = n.node.model_copy()
                node.metadata = dict(node.metadata)
                copies.append(NodeWithScore(node=node, score=n.score))
            scored = reranker.postprocess_nodes(copies, query_bundle=QueryBundle(query_str=query))
            by_id = {s.node.node_id: s.score for s in scored}
            rows.append([_finite(by_id.get(n.node.node_id)) for n in nodes])
        return rows


def _finite(value: Any) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        return -math.inf
    return value if math.isfinite(value) else -math.inf
