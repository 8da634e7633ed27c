"""Shared helpers for the benchmark scripts: peer retrievers built on the same index."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ragplugins.eval import Arm

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--bench-dir", default=os.environ.get("RAGPLUGINS_BENCH"),
                   help="Folder with corpora/ and goldset/ (default: $RAGPLUGINS_BENCH or ../shared/bench).")
    p.add_argument("--cache-dir", default=None, help="Index cache (default ~/.cache/ragplugins/eval).")
    return p


class PeerRetrievers:
    """Plain LlamaIndex retrievers over the same index (same embedder and chunking), cached per index."""

    def __init__(self) -> None:
        self._bm25: dict[int, object] = {}

    def dense(self, index, k):
        return index.as_retriever(similarity_top_k=k)

    def bm25(self, index, k):
        from llama_index.retrievers.bm25 import BM25Retriever

        from ragplugins.search import all_nodes

        key = id(index)
        if key not in self._bm25:
            nodes = all_nodes(index)
            self._bm25[key] = (BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=k), len(nodes))
        retriever, size = self._bm25[key]
        retriever.similarity_top_k = min(k, size)  # bm25s refuses a k above the corpus size
        return retriever

    def fusion(self, index, k):
        from llama_index.core.llms import MockLLM
        from llama_index.core.retrievers import QueryFusionRetriever

        # num_queries=1: pure fusion, the LLM is never called (MockLLM keeps Settings.llm unread).
        return QueryFusionRetriever([self.dense(index, k), self.bm25(index, k)], mode="reciprocal_rerank",
                                    num_queries=1, similarity_top_k=k, use_async=False, llm=MockLLM())

    def arms(self) -> list[Arm]:
        return [Arm("llamaindex dense", {"enable": []}, base=self.dense),
                Arm("llamaindex BM25", {"enable": []}, base=self.bm25),
                Arm("llamaindex QueryFusion RRF", {"enable": []}, base=self.fusion)]
