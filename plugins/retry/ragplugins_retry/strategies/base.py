"""The contract of a reformulation strategy, and what it returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from llama_index.core.bridge.pydantic import BaseModel
from llama_index.core.schema import NodeWithScore

from ragplugins import api


@dataclass
class Reformulation:
    """A reformulated query, or ``query`` None with the ``reason`` no retry is made.

    ``embed``: the text the dense leg should embed instead of ``query`` (passed as the
    bundle's ``custom_embedding_strs``, which LlamaIndex's vector retrievers honour);
    None: ``query`` itself.
    """

    query: str | None
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    embed: str | None = None

    def bundle(self) -> Any:
        from llama_index.core.schema import QueryBundle

        assert self.query is not None, "bundle() of a reformulation without a query"
        # A fresh bundle: LlamaIndex caches the query embedding on the bundle it is given.
        return QueryBundle(query_str=self.query, custom_embedding_strs=[self.embed] if self.embed else None)


def same_query(a: str, b: str) -> bool:
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


class RetryStrategy(BaseModel):
    """Turns the question (and the weak first candidate set) into one new query."""

    name: ClassVar[str]

    def reformulate(self, query: str, nodes: list[NodeWithScore], ctx: api.RagContext) -> Reformulation:
        raise NotImplementedError

    async def areformulate(self, query: str, nodes: list[NodeWithScore], ctx: api.RagContext) -> Reformulation:
        return self.reformulate(query, nodes, ctx)

    def prompts(self) -> dict[str, Any]:
        """PromptTemplates the strategy uses (exposed through the retriever's PromptMixin)."""
        return {}

    def update_prompts(self, prompts: dict[str, Any]) -> None:
        """Replace prompts by name; strategies without prompts ignore it."""
