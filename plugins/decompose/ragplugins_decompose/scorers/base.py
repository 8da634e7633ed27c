"""The contract of a scorer: how well each candidate answers each query."""

from __future__ import annotations

from typing import ClassVar

from llama_index.core.schema import BaseComponent, NodeWithScore

from ragplugins import api


class Scorer(BaseComponent):
    """Scores candidates against queries; higher is better, comparable within one query."""

    name: ClassVar[str]
    # False when scoring the question alone repeats what the first stage already measured
    # (the embedding scorer is the dense leg's cosine): then unsplit questions are left alone.
    independent_of_first_stage: ClassVar[bool] = True

    @property
    def label(self) -> str:
        """How the trace names this scorer."""
        return self.name

    def score(self, queries: list[str], nodes: list[NodeWithScore], ctx: api.RagContext | None) -> list[list[float]]:
        """One row per query, one score per node, in the given orders."""
        raise NotImplementedError
