from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from llama_index.core.schema import MetadataMode, NodeWithScore

from ragplugins import api
from ragplugins_decompose.scorers.base import Scorer


class EmbeddingScorer(Scorer):
    """Cosine between each query and each candidate with the index's own embedder (``ctx.embed_model``).

    Candidates keep the vector the store returned with them (LanceDB does);
    those without one, or with one of another width, are embedded from the
    same text the index embedded (``MetadataMode.EMBED``).
    """

    name: ClassVar[str] = "embedding"
    independent_of_first_stage: ClassVar[bool] = False

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins_decompose.EmbeddingScorer"

    def score(self, queries: list[str], nodes: list[NodeWithScore], ctx: api.RagContext | None) -> list[list[float]]:
        if ctx is None:
            raise ValueError(f"the '{self.name}' scorer compares with the index's own embedder: build DecomposeRerank "
                             "with ctx= (the app's context; ragplugins_node_postprocessors does)")
        q = np.asarray([ctx.embed_query(text) for text in queries], dtype=np.float64)
        vectors: list[Any] = [n.node.embedding for n in nodes]
        missing = [i for i, v in enumerate(vectors) if v is None or len(v) != q.shape[1]]
        if missing:
            texts = [nodes[i].node.get_content(metadata_mode=MetadataMode.EMBED) for i in missing]
            for i, vector in zip(missing, ctx.embed_model.get_text_embedding_batch(texts)):
                vectors[i] = vector
        c = np.asarray(vectors, dtype=np.float64)
        q /= np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)
        c /= np.maximum(np.linalg.norm(c, axis=1, keepdims=True), 1e-12)
        return (q @ c.T).tolist()
