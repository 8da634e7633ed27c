"""What a verifier returns: a verdict for the answer and one per sentence."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class SentenceVerdict(BaseModel):
    """One answer sentence: its score, whether it is supported, and where its support is."""

    text: str = Field(description="The sentence as written in the answer.")
    start: int = Field(description="Character offset of the sentence in the answer.")
    end: int = Field(description="End offset of the sentence in the answer.")
    score: float | None = Field(description="Support score in [0, 1]; None when the sentence was not checked.")
    supported: bool = Field(description="Whether the sentence is supported by the evidence.")
    checked: bool = Field(True, description="False for sentences with nothing to check ('Yes.').")
    node_id: str | None = Field(None, description="The evidence node that supports it best.")
    span: tuple[int, int] | None = Field(None, description="Character span of that support inside the node's text.")
    evidence: str | None = Field(None, description="The supporting text itself.")
    reasons: list[str] = Field(default_factory=list, description="Why the sentence is not supported.")


class Verdict(BaseModel):
    """The verdict on one answer. ``grounded`` is ``score >= threshold`` unless ``error`` is set."""

    grounded: bool
    score: float
    threshold: float
    backend: str
    sentences: list[SentenceVerdict] = Field(default_factory=list)
    error: str | None = Field(None, description="Set when verification could not be done (fails closed).")
    latency_ms: float = 0.0

    @property
    def unsupported(self) -> list[SentenceVerdict]:
        return [s for s in self.sentences if s.checked and not s.supported]

    def feedback(self) -> str:
        """A short human-readable account, used as EvaluationResult.feedback."""
        if self.error:
            return f"not verified ({self.backend}): {self.error}"
        head = (f"{'grounded' if self.grounded else 'NOT grounded'} ({self.backend}, score {self.score:.2f}, "
                f"threshold {self.threshold:.2f})")
        lines = [head]
        for s in self.unsupported:
            why = "; ".join(s.reasons) or "no supporting evidence"
            lines.append(f"- unsupported: \"{s.text}\" ({why})")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        data = self.model_dump(mode="json")
        data["unsupported"] = [s.text for s in self.unsupported]
        return data
