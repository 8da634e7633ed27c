from __future__ import annotations

from typing import ClassVar

from llama_index.core.schema import NodeWithScore

from ragplugins import api
from ragplugins_decompose import ranking
from ragplugins_decompose.scorers.embedding import EmbeddingScorer


def bm25_scores(queries: list[str], texts: list[str]) -> list[list[float]]:
    """BM25 of each query against each text, with the candidates as the collection (as the core tokenizes:
    English stop words, Snowball stemming)."""
    import bm25s
    import numpy as np
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    model = bm25s.BM25()
    model.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
    rows = []
    for query in queries:
        tokens = bm25s.tokenize([query], stopwords="en", stemmer=stemmer, show_progress=False, return_ids=False)[0]
        # A query of stop words only has no tokens, and bm25s refuses an empty query.
        rows.append(np.asarray(model.get_scores(tokens), dtype=float).tolist() if tokens else [0.0] * len(texts))
    return rows


class HybridScorer(EmbeddingScorer):
    """The first stage's own two signals, applied to any query among the candidates: the embedder's cosine
    and BM25 (over the candidate texts), fused by reciprocal rank with the core's k.

    A candidate gets a BM25 term only when it matches the query at all, as in
    the core's sparse leg. Scores are RRF values, so they are on one scale for
    every query and average meaningfully.
    """

    name: ClassVar[str] = "hybrid"
    independent_of_first_stage: ClassVar[bool] = False
    rrf_k: int = 60

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins_decompose.HybridScorer"

    def score(self, queries: list[str], nodes: list[NodeWithScore], ctx: api.RagContext | None) -> list[list[float]]:
        dense = super().score(queries, nodes, ctx)
        sparse = bm25_scores(queries, [n.node.get_content() for n in nodes])
        out = []
        for d, s in zip(dense, sparse):
            dense_rank, sparse_rank = ranking.ranks(d), ranking.ranks(s)
            out.append([1.0 / (self.rrf_k + dense_rank[i]) + (1.0 / (self.rrf_k + sparse_rank[i]) if s[i] > 0 else 0.0)
                        for i in range(len(nodes))])
        return out
