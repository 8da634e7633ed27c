"""A query-engine wrapper that verifies every answer against its source nodes.

Modes: ``annotate`` puts the verdict in ``response.metadata["ragplugins"]["verification"]``;
``flag`` also appends a visible warning to an ungrounded answer; ``abstain`` replaces an
ungrounded answer with a refusal listing the unsupported sentences (the original answer
stays in the verdict). Responses without answer text (no LLM: ragplugins' NoText
synthesis) are marked ``skipped``.

The record says what happened in its ``status``: ``grounded``, ``ungrounded``,
``unverifiable`` (the check could not run: no evidence, an unreadable reply; never a pass)
or ``skipped``. ``grounded`` is true only for the first.

A streaming response stays a ``StreamingResponse``, but it is read to the end before it is
verified (a stream cannot be checked before it is shown); its ``response_gen`` then replays
the checked text (or the refusal) and the verdict says so under ``stream``.
"""

from __future__ import annotations

from typing import Any, Literal

from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.base.response.schema import StreamingResponse
from llama_index.core.prompts.mixin import PromptMixinType
from llama_index.core.schema import QueryBundle

from ragplugins import api
from ragplugins.api import ANNOTATION_KEY
from ragplugins_verifier.base import Verifier
from ragplugins_verifier.config import DEFAULT_REFUSAL
from ragplugins_verifier.verdict import Verdict

PLUGIN = "verifier"
Mode = Literal["annotate", "flag", "abstain"]


class VerifyingQueryEngine(BaseQueryEngine):
    """Wraps any LlamaIndex query engine; verifies each answer with ``verifier``."""

    def __init__(self, inner: BaseQueryEngine, verifier: Verifier, mode: Mode = "annotate",
                 refusal: str = DEFAULT_REFUSAL):
        super().__init__(callback_manager=getattr(inner, "callback_manager", None))
        if mode not in ("annotate", "flag", "abstain"):
            raise ValueError(f"mode must be 'annotate', 'flag' or 'abstain', not {mode!r}")
        self.inner, self.verifier, self.mode, self.refusal = inner, verifier, mode, refusal

    def _get_prompt_modules(self) -> PromptMixinType:
        return {"inner": self.inner}

    def _query(self, query_bundle: QueryBundle) -> Any:
        original = self.inner.query(query_bundle)
        response = _materialise(original)
        answer = _answer(response)
        if answer is None:
            return _restream(original, self._skipped(response))
        verdict = self.verifier.verify(query_bundle.query_str, answer, response.source_nodes)
        return _restream(original, self._apply(response, answer, verdict))

    async def _aquery(self, query_bundle: QueryBundle) -> Any:
        original = await self.inner.aquery(query_bundle)
        response = _materialise(original)
        answer = _answer(response)
        if answer is None:
            return _restream(original, self._skipped(response))
        verdict = await self.verifier.averify(query_bundle.query_str, answer, response.source_nodes)
        return _restream(original, self._apply(response, answer, verdict))

    def _skipped(self, response: Any) -> Any:
        info: dict[str, Any] = {"status": "skipped",
                                "reason": "the response has no answer text (no LLM synthesised one)",
                                "backend": self.verifier.name}
        api.record_decision(PLUGIN, "verdict", changed=False, **info)
        _metadata(response)["verification"] = info
        return response

    def _apply(self, response: Any, answer: str, verdict: Verdict) -> Any:
        unsupported = [s.text for s in verdict.unsupported]
        status = status_of(verdict)
        info = {"status": status, "mode": self.mode, **verdict.to_dict()}
        if not verdict.grounded and self.mode == "flag":
            response.response = f"{answer}\n\n[Unverified: {_listing(verdict)}]"
        elif not verdict.grounded and self.mode == "abstain":
            info["original_answer"] = answer
            response.response = self.refusal.format(unsupported=_listing(verdict))
        changed = response.response != answer
        reason = (f"{status}: {verdict.error}" if verdict.error is not None else
                  f"{status}: {len(unsupported)} unsupported sentence(s)") \
            + (f"; answer replaced (mode '{self.mode}')" if changed else
               f"; answer kept, marked unverified in response.metadata (mode '{self.mode}')"
               if not verdict.grounded else "")
        api.record_decision(PLUGIN, "verdict", changed=changed, reason=reason,
                            numbers={"grounded": verdict.grounded, "score": verdict.score,
                                     "latency_ms": verdict.latency_ms},
                            status=status, backend=verdict.backend, unsupported=unsupported, error=verdict.error,
                            mode=self.mode)
        _metadata(response)["verification"] = info
        return response


def status_of(verdict: Verdict) -> str:
    """What the record says happened: 'grounded', 'ungrounded' or 'unverifiable' (the check could not run)."""
    if verdict.error is not None:
        return "unverifiable"
    return "grounded" if verdict.grounded else "ungrounded"


def _materialise(response: Any) -> Any:
    if isinstance(response, StreamingResponse):
        return response.get_response()
    return response


def _restream(original: Any, response: Any) -> Any:
    """Give a streaming caller a stream back: the checked text (or refusal) replayed through response_gen."""
    if not isinstance(original, StreamingResponse):
        return response
    text = response.response or ""
    info = _metadata(response).get("verification")
    if isinstance(info, dict):
        info["stream"] = ("read to the end and verified before it was shown; response_gen replays the checked "
                          "text")
    return StreamingResponse(response_gen=(t for t in [text] if t), source_nodes=response.source_nodes,
                             metadata=response.metadata, response_txt=None)


def _answer(response: Any) -> str | None:
    text = getattr(response, "response", None)
    return text if isinstance(text, str) and text.strip() and text.strip() != "Empty Response" else None


def _metadata(response: Any) -> dict:
    if getattr(response, "metadata", None) is None:
        response.metadata = {}
    # RagQueryEngine merges this dict with the query trace, so both survive.
    return response.metadata.setdefault(ANNOTATION_KEY, {})


def _listing(verdict: Verdict) -> str:
    if verdict.error and not verdict.unsupported:
        return verdict.error
    return "; ".join(f'"{s.text}"' for s in verdict.unsupported) or "the answer as a whole"
