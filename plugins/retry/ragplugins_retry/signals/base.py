"""The contract of a weak-evidence signal, and the value it returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from llama_index.core.bridge.pydantic import BaseModel
from llama_index.core.schema import NodeWithScore

from ragplugins import api


@dataclass
class Measurement:
    """A signal's value for one candidate set; ``value`` None means it could not be computed (``reason`` says why)."""

    value: float | None
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)


class RetrySignal(BaseModel):
    """Judges a candidate set against the user's question: higher = stronger evidence, in [0, 1].

    ``measure`` is called on the original set and on the retry set with the
    same ``query`` (the user's question); ``retrieved_for`` is the query the
    set was retrieved with, so a signal knows whether per-query annotations on
    the nodes refer to ``query``.
    """

    name: ClassVar[str]
    default_threshold: ClassVar[float]
    # The fewest candidates the signal can judge; with fewer, ``measure`` returns no value.
    min_candidates: int = 1
    # Thresholds the calibrate command tabulates.
    calibration_grid: ClassVar[tuple[float, ...]] = tuple(round(0.05 * i, 2) for i in range(1, 20))

    def measure(self, query: str, nodes: list[NodeWithScore], ctx: api.RagContext, retrieved_for: str) -> Measurement:
        raise NotImplementedError

    def compare(self, query: str, original: list[NodeWithScore], before: Measurement, retry: list[NodeWithScore],
                retry_query: str, ctx: api.RagContext) -> tuple[Measurement, Measurement]:
        """Both sets judged against the user's ``query`` on one scale: (original, retry).

        ``before`` is the gate's measurement of ``original``. A signal whose
        value depends on statistics of the set it scores (term rarity, a
        background) overrides this to score both sets with statistics of the
        two pooled, so the retry set cannot look better only because its own
        background differs.
        """
        return before, self.measure(query, retry, ctx, retrieved_for=retry_query)
