"""The contract of a decomposer, what it returns, and the checks every decomposition passes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from llama_index.core.schema import BaseComponent

from ragplugins import api


@dataclass
class Decomposition:
    """The sub-queries of a question; empty means it does not split, and ``reason`` says why."""

    sub_queries: list[str]
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)


def same_text(a: str, b: str) -> bool:
    return " ".join(a.split()).strip(" ?.!").casefold() == " ".join(b.split()).strip(" ?.!").casefold()


def clean(query: str, decomposition: Decomposition, max_sub_queries: int) -> Decomposition:
    """Keep distinct, non-empty sub-queries that differ from the question, at most ``max_sub_queries``.

    Fewer than two left means the question does not split: one sub-query that
    restates the question adds nothing the question itself does not score.
    """
    kept: list[str] = []
    for part in decomposition.sub_queries:
        if not isinstance(part, str):
            continue
        part = " ".join(part.split())
        if part and not same_text(part, query) and not any(same_text(part, k) for k in kept):
            kept.append(part)
    details = dict(decomposition.details)
    if len(kept) > max_sub_queries:
        details["dropped"] = kept[max_sub_queries:]
        kept = kept[:max_sub_queries]
    if len(kept) < 2:
        reason = decomposition.reason or "the question asks one thing"
        if decomposition.sub_queries and not decomposition.reason:
            reason = f"fewer than two distinct sub-queries ({len(kept)})"
        return Decomposition([], reason, details)
    return Decomposition(kept, decomposition.reason, details)


class Decomposer(BaseComponent):
    """Splits a question into the separate questions it asks (or not at all)."""

    name: ClassVar[str]

    def decompose(self, query: str, ctx: api.RagContext | None) -> Decomposition:
        raise NotImplementedError

    async def adecompose(self, query: str, ctx: api.RagContext | None) -> Decomposition:
        return self.decompose(query, ctx)

    def prompts(self) -> dict[str, Any]:
        """PromptTemplates the decomposer uses (exposed through the postprocessor's PromptMixin)."""
        return {}

    def update_prompts(self, prompts: dict[str, Any]) -> None:
        """Replace prompts by name; decomposers without prompts ignore it."""


class NoDecomposer(Decomposer):
    """Never splits: the rerank stage scores against the question alone."""

    name: ClassVar[str] = "none"

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins_decompose.NoDecomposer"

    def decompose(self, query: str, ctx: api.RagContext | None) -> Decomposition:
        return Decomposition([], "decomposer 'none' never splits")
