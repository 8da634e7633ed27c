"""Test doubles shared by the retry plugin's tests (conftest puts this folder on sys.path)."""

from __future__ import annotations

from typing import ClassVar

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from ragplugins_retry import Measurement, RetrySignal


def node(node_id: str, text: str = "", embedding=None, score: float = 1.0) -> NodeWithScore:
    return NodeWithScore(node=TextNode(id_=node_id, text=text or node_id, embedding=embedding), score=score)


class ScriptedRetriever(BaseRetriever):
    """Returns a fixed candidate list per query string and counts the calls."""

    def __init__(self, results: dict[str, list[NodeWithScore]]):
        super().__init__()
        self.results, self.calls = results, []

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        self.calls.append(query_bundle.query_str)
        return list(self.results.get(query_bundle.query_str, []))


class ScriptedSignal(RetrySignal):
    """Scores a candidate set by a value per first node id (None when unknown)."""

    name: ClassVar[str] = "scripted"
    default_threshold: ClassVar[float] = 0.5
    values: dict[str, float] = {}
    seen: list = []

    @classmethod
    def class_name(cls) -> str:
        return "tests.ScriptedSignal"

    def measure(self, query, nodes, ctx, retrieved_for):
        self.seen.append((query, retrieved_for))
        value = self.values.get(nodes[0].node.node_id) if nodes else None
        return Measurement(value, "" if value is not None else "scripted: unknown set")




def rag_with(tiny_rag, embed_model, retry: dict, llm=None, extra=(), core: dict | None = None):
    """A RagPlugins over the shared tiny index with the retry plugin configured as ``retry`` (and ``core``
    settings of the first stage)."""
    import ragplugins_retry.plugin as plugin
    from ragplugins.testing import make_rag

    _, root = tiny_rag
    return make_rag(
        [plugin, *extra],
        {"enable": ["retry"], "splitter": "auto", "retry": retry, **(core or {})},
        embed_model=embed_model,
        persist_dir=root / "idx",
        llm=llm,
    )
