"""The verifier as a LlamaIndex ``BaseEvaluator`` (drop-in where FaithfulnessEvaluator is used)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.async_utils import asyncio_run
from llama_index.core.base.response.schema import Response
from llama_index.core.bridge.pydantic import Field
from llama_index.core.evaluation import BaseEvaluator, EvaluationResult
from llama_index.core.prompts.mixin import PromptDictType

from ragplugins_verifier.base import Verifier, as_evidence


class VerifierEvaluationResult(EvaluationResult):
    """LlamaIndex's result with the backend's own number beside the 1.0/0.0 score."""

    support: float | None = Field(None, description="The weakest checked sentence's support score from the "
                                                     "backend (fidelity: embedder cosine; nli: entailment).")


class VerifierEvaluator(BaseEvaluator):
    """``passing`` = grounded, ``score`` = 1.0 when grounded and 0.0 when not (LlamaIndex's convention, as
    FaithfulnessEvaluator), ``support`` = the weakest sentence's backend score, ``feedback`` lists what is
    unsupported; an error (no evidence, unparseable LLM reply) is an invalid result that does not pass.

    ``evaluate_response`` keeps the response's source nodes, so per-sentence verdicts name node ids.
    """

    def __init__(self, verifier: Verifier):
        self.verifier = verifier

    def _get_prompts(self) -> PromptDictType:
        prompt = getattr(self.verifier, "prompt", None)
        return {"verifier_prompt": prompt} if prompt is not None else {}

    def _update_prompts(self, prompts: PromptDictType) -> None:
        if "verifier_prompt" in prompts and hasattr(self.verifier, "prompt"):
            self.verifier.prompt = prompts["verifier_prompt"]

    async def aevaluate(self, query: str | None = None, response: str | None = None,
                        contexts: Sequence[Any] | None = None, **kwargs: Any) -> EvaluationResult:
        evidence = as_evidence(kwargs.get("source_nodes") or contexts or [])
        verdict = await self.verifier.averify(query or "", response or "", evidence)
        return VerifierEvaluationResult(
            query=query, response=response, contexts=[e.text for e in evidence],
            passing=verdict.grounded, score=1.0 if verdict.grounded else 0.0, support=verdict.score,
            feedback=verdict.feedback(), invalid_result=verdict.error is not None, invalid_reason=verdict.error)

    async def aevaluate_response(self, query: str | None = None, response: Response | None = None,
                                 **kwargs: Any) -> EvaluationResult:
        if response is None:
            return await self.aevaluate(query=query, response=None, contexts=[], **kwargs)
        return await self.aevaluate(query=query, response=response.response, contexts=None,
                                    source_nodes=list(response.source_nodes), **kwargs)

    def evaluate_response(self, query: str | None = None, response: Response | None = None,
                          **kwargs: Any) -> EvaluationResult:
        return asyncio_run(self.aevaluate_response(query=query, response=response, **kwargs))
