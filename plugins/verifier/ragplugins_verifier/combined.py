"""``fidelity+nli``: both backends check every sentence; a sentence is supported only if both say so.

The documented choice for a host that has an NLI checkpoint on disk: the NLI model judges
paraphrase and entailment, which the offline rules only approximate, and the fidelity rules
keep the exact checks (numbers, units, codes, names, swapped values, instructions in the
evidence) that a sentence-pair model can miss. Either one rejecting rejects.
"""

from __future__ import annotations

from typing import ClassVar

from llama_index.core.bridge.pydantic import Field, SerializeAsAny

from ragplugins_verifier.base import NOTHING_CHECKABLE, Evidence, Verifier
from ragplugins_verifier.verdict import Verdict


class CombinedVerifier(Verifier):
    """Runs ``first`` and ``second`` on the same answer and evidence; grounded only when both are."""

    backend: ClassVar[str] = "fidelity+nli"

    first: SerializeAsAny[Verifier] = Field(description="Checked first; its spans are reported.")
    second: SerializeAsAny[Verifier] = Field(description="Checked second.")

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins_verifier.CombinedVerifier"

    @property
    def name(self) -> str:
        return f"{self.first.name}+{self.second.name}"

    def _verify(self, question: str, answer: str, evidence: list[Evidence]) -> Verdict:
        a = self.first.verify(question, answer, evidence)
        b = self.second.verify(question, answer, evidence)
        # One backend finding nothing to check ("Yes." reads as a claim only with the question, which the nli
        # model never sees) leaves the sentences to the other; both finding nothing is concluded below.
        failed = next((v for v in (a, b) if v.error and v.error != NOTHING_CHECKABLE), None)
        if failed:
            return self.failed(f"{failed.backend}: {failed.error}", failed.sentences)
        for s, t in zip(a.sentences, b.sentences):
            if not s.checked and not t.checked:
                continue
            s.checked = True
            s.reasons += [f"{b.backend}: {r}" for r in t.reasons]
            s.supported = s.supported and t.supported
            s.score = min(x for x in (s.score, t.score) if x is not None) if s.supported else 0.0
        verdict = self.conclude(a.sentences)
        verdict.threshold = self.first.threshold
        return verdict
