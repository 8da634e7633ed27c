from __future__ import annotations

from typing import ClassVar

from llama_index.core.schema import NodeWithScore

from ragplugins import api
from ragplugins.api import cosine, dense_cosine
from ragplugins_retry.signals.base import Measurement, RetrySignal


class DenseContrastSignal(RetrySignal):
    """(top cosine - mean cosine of ranks 6+) / (1 - that mean), over the whole candidate set.

    The core's hybrid first stage annotates only the dense leg's hits with a
    cosine; BM25-only hits and the dense tail that RRF cut carry none, so the
    annotated cosines are a biased sample (the tail is missing, the background
    reads high). Every candidate whose vector the store returned (LanceDB
    returns it for both legs) gets its cosine measured against the query, so
    the contrast covers the same k candidates the answer stage sees. Cosines
    are computed on the vectors themselves, so unnormalised embeddings are fine.
    """

    name: ClassVar[str] = "dense_contrast"
    # localGPT's value for its own embedder; calibrate it for yours.
    default_threshold: ClassVar[float] = 0.12
    # Ranks 6+ are the background, so at least 6 cosines are needed.
    min_candidates: int = 6

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins_retry.DenseContrastSignal"

    def measure(self, query: str, nodes: list[NodeWithScore], ctx: api.RagContext, retrieved_for: str) -> Measurement:
        embedding = ctx.embed_query(query) if nodes else None
        values, from_vectors = [], 0
        for nws in nodes:
            value = cosine(embedding, nws.node.embedding)
            if value is not None:
                from_vectors += 1
            elif retrieved_for == query:
                # An annotation is only valid for the query it was measured with.
                value = dense_cosine(nws)
            if value is not None:
                values.append(value)
        details = {"cosines": len(values), "from_vectors": from_vectors, "candidates": len(nodes)}
        if len(nodes) < self.min_candidates:
            return Measurement(None, f"only {len(nodes)} candidates; the contrast needs {self.min_candidates} "
                                     f"(ranks 6+ are its background): a top_k of at least {self.min_candidates}",
                               details)
        if len(values) < self.min_candidates:
            return Measurement(None, f"only {len(values)} of {len(nodes)} candidates carry a dense cosine "
                                     f"(BM25-only retrieval or a store that returns neither vectors nor "
                                     f"cosines); the contrast needs {self.min_candidates}", details)
        values.sort(reverse=True)
        top, tail = values[0], values[5:]
        background = sum(tail) / len(tail)
        headroom = 1.0 - background
        if headroom <= 1e-6:
            return Measurement(None, "every candidate is a near-duplicate of the query (no headroom)", details)
        score = min(1.0, max(0.0, (top - background) / headroom))
        return Measurement(score, "", {**details, "top": round(top, 4), "background": round(background, 4)})
