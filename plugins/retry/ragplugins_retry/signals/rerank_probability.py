from __future__ import annotations

from typing import ClassVar

from llama_index.core.schema import NodeWithScore

from ragplugins import api
from ragplugins.api import annotation
from ragplugins_retry.signals.base import Measurement, RetrySignal

ANNOTATION = "rerank_probability"


class RerankProbabilitySignal(RetrySignal):
    """The highest calibrated reranker probability among the candidates.

    A reranker that runs inside the first stage (the host's base retriever or
    a ``first_stage`` wrapper) and outputs calibrated probabilities of relevance
    puts them on each node as the ``rerank_probability`` annotation
    (``ragplugins.nodes.annotate``). Raw cross-encoder logits or RRF scores are
    not probabilities and are never read. On the retry set the probability
    refers to the reformulated query: the reranker scored what it was given.
    """

    name: ClassVar[str] = "rerank_probability"
    default_threshold: ClassVar[float] = 0.5

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins_retry.RerankProbabilitySignal"

    def measure(self, query: str, nodes: list[NodeWithScore], ctx: api.RagContext, retrieved_for: str) -> Measurement:
        annotated = [annotation(n).get(ANNOTATION) for n in nodes]
        probs = [float(p) for p in annotated if isinstance(p, (int, float)) and 0.0 <= p <= 1.0]
        if not probs:
            return Measurement(None, "no candidate carries a rerank_probability in [0, 1] "
                                     "(no calibrated reranker ran before the retry)", {"candidates": len(nodes)})
        return Measurement(max(probs), "", {"scored": len(probs), "candidates": len(nodes)})
