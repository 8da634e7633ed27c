from __future__ import annotations

import time
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle

from ragplugins import api
from ragplugins_retry.signals.base import Measurement, RetrySignal
from ragplugins_retry.strategies.base import Reformulation, RetryStrategy

PLUGIN = "retry"


class RetryRetriever(BaseRetriever):
    """Wraps any retriever: judge the candidates, reformulate once when they are weak, keep the better set.

    Exactly one retry; the two sets are never merged. Both sets are judged
    against the user's question (never the reformulation) on one scale
    (``RetrySignal.compare``). Without a ``confirm`` signal the retry set
    replaces the original only when the signal is strictly higher. With one,
    it must be no worse on both signals and strictly better on at least one:
    a set that looks better to one view of the evidence (lexical coverage)
    while the other (dense contrast) says it got worse is not kept. The
    decision, the scores, the reformulated query and the kept set are
    recorded in the trace under ``retry/decision``.
    """

    def __init__(self, inner: BaseRetriever, ctx: api.RagContext, signal: RetrySignal, strategy: RetryStrategy,
                 threshold: float, confirm: RetrySignal | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.inner, self.ctx, self.signal, self.strategy, self.threshold = inner, ctx, signal, strategy, threshold
        self.confirm = confirm

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins_retry.RetryRetriever"

    # -- prompts (the llm strategy's prompt is overridable like any LlamaIndex prompt) --
    def _get_prompts(self) -> dict[str, Any]:
        return self.strategy.prompts()

    def _update_prompts(self, prompts: dict[str, Any]) -> None:
        self.strategy.update_prompts(prompts)

    def _get_prompt_modules(self) -> dict[str, Any]:
        return {}

    # -- retrieval -----------------------------------------------------
    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        query = query_bundle.query_str
        first = self.inner.retrieve(query_bundle)
        before = self.signal.measure(query, first, self.ctx, retrieved_for=query)
        if not self._fires(before, first):
            return first
        start = time.perf_counter()
        with api.timed("retry"):
            new = self.strategy.reformulate(query, first, self.ctx)
            second = self.inner.retrieve(new.bundle()) if new.query else None
        return self._decide(query, first, before, new, second, start)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        query = query_bundle.query_str
        first = await self.inner.aretrieve(query_bundle)
        before = self.signal.measure(query, first, self.ctx, retrieved_for=query)
        if not self._fires(before, first):
            return first
        start = time.perf_counter()
        with api.timed("retry"):
            new = await self.strategy.areformulate(query, first, self.ctx)
            second = await self.inner.aretrieve(new.bundle()) if new.query else None
        return self._decide(query, first, before, new, second, start)

    # -- the decision --------------------------------------------------
    def _base(self, before: Measurement) -> dict[str, Any]:
        return {"signal": self.signal.name, "signal_details": before.details}

    def _not_fired(self, before: Measurement, first: list[NodeWithScore], reason: str) -> bool:
        api.record_decision(PLUGIN, "decision", before=first, after=first, reason=reason,
                            numbers={"threshold": self.threshold, "score_before": _round(before.value)},
                            **self._base(before), fired=False, kept="original")
        return False

    def _fires(self, before: Measurement, first: list[NodeWithScore]) -> bool:
        if not first:
            return self._not_fired(before, first, "the first stage returned nothing")
        if before.value is None:
            return self._not_fired(before, first, f"no signal: {before.reason}")
        if before.value >= self.threshold:
            return self._not_fired(before, first, "evidence is not weak (signal at or above the threshold)")
        return True

    def _keep(self, query: str, first: list[NodeWithScore], second: list[NodeWithScore], retry_query: str,
              before: float, after: float, compared: dict[str, Any]) -> tuple[bool, str]:
        """Whether the retry set replaces the original (both already scored on the main signal)."""
        note = ""
        if self.confirm is not None:
            gate = self.confirm.measure(query, first, self.ctx, retrieved_for=query)
            c_before, c_after = self.confirm.compare(query, first, gate, second, retry_query, self.ctx)
            if c_before.value is not None and c_after.value is not None:
                compared[self.confirm.name] = [_round(c_before.value), _round(c_after.value)]
                names = f"{self.signal.name} and {self.confirm.name}"
                if _dominates([(before, after), (c_before.value, c_after.value)]):
                    return True, f"the retry set is no worse on {names} and strictly better on at least one"
                return False, f"the retry set is worse on one of {names}, or equal on both; kept the original"
            # Without the second view the rule applies: strictly higher on the same signal.
            note = f"{self.confirm.name} unavailable ({c_before.reason or c_after.reason}); "
        if after > before:
            return True, note + "the retry set scored strictly higher on the same signal"
        return False, note + "the retry set did not score strictly higher; kept the original"

    def _decide(self, query: str, first: list[NodeWithScore], before: Measurement, new: Reformulation,
                second: list[NodeWithScore] | None, start: float) -> list[NodeWithScore]:
        record = {**self._base(before), "fired": True, "strategy": self.strategy.name,
                  "reformulated": new.query, "strategy_details": new.details,
                  **({"embedded": new.embed} if new.embed else {})}
        numbers = {"threshold": self.threshold, "gate_score": _round(before.value)}
        if second is None:
            api.record_decision(PLUGIN, "decision", before=first, after=first, reason=f"no reformulation: {new.reason}",
                                numbers={**numbers, "score_before": _round(before.value),
                                         "retry_ms": round((time.perf_counter() - start) * 1000, 2)},
                                **record, attempted=False, kept="original")
            return first
        assert new.query is not None  # a retry set exists only for a reformulated query
        ref, after = self.signal.compare(query, first, before, second, new.query, self.ctx)
        compared = {self.signal.name: [_round(ref.value), _round(after.value)]}
        if after.value is None or ref.value is None:
            keep, reason = False, f"no signal on the retry set ({after.reason or ref.reason}); kept the original"
        else:
            keep, reason = self._keep(query, first, second, new.query, ref.value, after.value, compared)
        out = [api.tag(n, PLUGIN, reformulated=new.query) for n in second] if keep else first
        # The scores the two sets were compared on (``compare`` may score the original again on the
        # retry's scale): what the reason is about. The gate's own value is gate_score.
        api.record_decision(PLUGIN, "decision", before=first, after=out, reason=reason,
                            numbers={**numbers, "score_before": _round(ref.value), "score_after": _round(after.value),
                                     "retry_ms": round((time.perf_counter() - start) * 1000, 2)},
                            **record, attempted=True, compared=compared, kept="retry" if keep else "original")
        return out


def _dominates(pairs: list[tuple[float, float]]) -> bool:
    """(before, after) per signal: no worse on any, strictly better on at least one."""
    return all(a >= b for b, a in pairs) and any(a > b for b, a in pairs)


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
