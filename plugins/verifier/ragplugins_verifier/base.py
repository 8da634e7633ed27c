"""The verifier interface every backend implements, and the evidence it accepts."""

from __future__ import annotations

import asyncio
import time
from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from llama_index.core.schema import BaseComponent, BaseNode, MetadataMode, NodeWithScore

from ragplugins.api import RagPluginsError
from ragplugins_verifier.verdict import SentenceVerdict, Verdict

# A backend that finds no claim it can check says so; a combination of backends may still have one that can.
NOTHING_CHECKABLE = "no sentence in the answer makes a checkable claim"


class VerifierError(RagPluginsError):
    """A verifier cannot run as configured (a model that cannot load, a missing LLM, bad input)."""


@dataclass(frozen=True)
class Evidence:
    """One piece of evidence: the node id it came from and its text."""

    node_id: str
    text: str


EvidenceLike = NodeWithScore | BaseNode | Evidence | str | dict


def as_evidence(items: Sequence[EvidenceLike] | None) -> list[Evidence]:
    """Accept what callers have at hand: retrieved nodes, nodes, plain strings or {"id", "text"} dicts."""
    out: list[Evidence] = []
    for i, item in enumerate(items or []):
        if isinstance(item, NodeWithScore):
            item = item.node
        if isinstance(item, Evidence):
            out.append(item)
        elif isinstance(item, BaseNode):
            out.append(Evidence(item.node_id, item.get_content(metadata_mode=MetadataMode.NONE)))
        elif isinstance(item, str):
            out.append(Evidence(f"evidence-{i}", item))
        elif isinstance(item, dict) and isinstance(item.get("text"), str):
            out.append(Evidence(str(item.get("id") or item.get("node_id") or f"evidence-{i}"), item["text"]))
        else:
            raise VerifierError(
                f"evidence item {i} is a {type(item).__name__}; give NodeWithScore, BaseNode, a string or "
                "a dict with a 'text' key")
    return out


class Verifier(BaseComponent):
    """Checks an answer sentence by sentence against its evidence.

    ``verify(question, answer, evidence_nodes) -> Verdict``; the answer's score is the
    minimum over its checked sentences and it is grounded when that score reaches
    ``threshold``. Subclasses implement :meth:`_verify` (and :meth:`_averify` when they
    have real async I/O).
    """

    backend: ClassVar[str] = "custom"
    threshold: float = 0.5

    @property
    def name(self) -> str:
        return self.backend

    def verify(self, question: str, answer: str, evidence_nodes: Sequence[EvidenceLike] | None) -> Verdict:
        start = time.perf_counter()
        evidence = as_evidence(evidence_nodes)
        verdict = self._empty(answer, evidence) or self._verify(question or "", answer, evidence)
        verdict.latency_ms = (time.perf_counter() - start) * 1000
        return verdict

    async def averify(self, question: str, answer: str,
                      evidence_nodes: Sequence[EvidenceLike] | None) -> Verdict:
        start = time.perf_counter()
        evidence = as_evidence(evidence_nodes)
        verdict = self._empty(answer, evidence) or await self._averify(question or "", answer, evidence)
        verdict.latency_ms = (time.perf_counter() - start) * 1000
        return verdict

    @abstractmethod
    def _verify(self, question: str, answer: str, evidence: list[Evidence]) -> Verdict:
        """Verify a non-empty answer against non-empty evidence."""

    async def _averify(self, question: str, answer: str, evidence: list[Evidence]) -> Verdict:
        # CPU-bound backends: keep the event loop free.
        return await asyncio.to_thread(self._verify, question, answer, evidence)

    def _empty(self, answer: str, evidence: list[Evidence]) -> Verdict | None:
        """Nothing to verify, or nothing to verify against: not grounded, and said so."""
        if not (answer or "").strip():
            return self.failed("the answer is empty")
        if not any(e.text.strip() for e in evidence):
            return self.failed("there is no evidence to check the answer against")
        return None

    def failed(self, error: str, sentences: list[SentenceVerdict] | None = None) -> Verdict:
        return Verdict(grounded=False, score=0.0, threshold=self.threshold, backend=self.name,
                       sentences=sentences or [], error=error)

    def conclude(self, sentences: list[SentenceVerdict], **extra: Any) -> Verdict:
        """The answer's verdict from its sentences: grounded when every checked sentence is supported (each
        backend decides that per sentence, its score against its threshold); the score is the weakest one's."""
        checked = [s for s in sentences if s.checked]
        if not checked:
            return self.failed(NOTHING_CHECKABLE, sentences)
        score = min((s.score for s in checked if s.score is not None), default=0.0)
        return Verdict(grounded=all(s.supported for s in checked), score=score, threshold=self.threshold,
                       backend=self.name, sentences=sentences, **extra)
