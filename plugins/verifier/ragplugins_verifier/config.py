"""``[ragplugins.verifier]``: which backend checks answers and what happens to ungrounded ones."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

DEFAULT_REFUSAL = ("I could not verify this answer against the retrieved sources. "
                   "Unsupported: {unsupported}")


class FidelitySettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    threshold: float = Field(0.35, ge=0, le=1, description="Minimum embedder cosine between each sentence and its "
                                                           "best evidence unit (MiniLM: unrelated text is ~0-0.3).")
    candidates: int = Field(2, ge=1, le=20, description="Evidence units embedded per sentence (the best lexical "
                                                        "matches); more is slower.")
    attachment_margin: float = Field(0.3, gt=0, description="How much more strongly another value must fit the "
                                                            "sentence's subject (in nearby words weighted by "
                                                            "rarity, 1 = one word unique to one unit, adjacent) "
                                                            "before the claimed value counts as swapped.")
    novelty: float = Field(0.5, gt=0, le=1, description="Share of a clause's content words absent from the "
                                                        "evidence above which the clause is unsupported.")
    lexical_support: float = Field(0.6, gt=0, le=1, description="Share of an English sentence's content words "
                                                                "(3 or more, weighted by rarity) one evidence unit "
                                                                "must hold to be supported without the embedder.")
    foreign_support: float = Field(0.6, gt=0, le=1, description="Share of threshold a German, French or Spanish "
                                                                "sentence must reach (the bundled embedder is "
                                                                "English and scores across languages lower).")


class NLISettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str | None = Field(None, description="Hugging Face model name or local directory of a "
                                                "sequence-classification checker (required for backend 'nli').")
    threshold: float = Field(0.5, ge=0, le=1, description="Minimum entailment probability of every sentence.")
    trust_remote_code: bool = Field(False, description="Allow the model's own modelling code to run (opt-in).")
    device: str = Field("cpu", description="torch device for the model.")
    max_length: int | None = Field(None, ge=16, description="Tokens per model input; default: the model's limit.")
    stride: int = Field(64, ge=0, description="Tokens shared by consecutive evidence windows.")
    batch_size: int = Field(16, ge=1, description="Pairs per forward pass.")
    entailment_label: str | None = Field(None, description="Label of the supported class when the label map does "
                                                           "not make it clear.")


class LLMSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prompt: str | None = Field(None, description="Prompt template with {question}, {evidence} and {sentences} "
                                                 "(default: the built-in JSON per-sentence prompt).")


class VerifierConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: str = Field("fidelity", description="'fidelity' (offline default), 'nli', 'fidelity+nli' (both must "
                                                 "accept: the choice when an NLI checkpoint is on disk), 'llm', or "
                                                 "a backend added by another plugin.")
    mode: Literal["annotate", "flag", "abstain"] = Field(
        "annotate", description="annotate: verdict in response.metadata only; flag: also append a warning to an "
                                "ungrounded answer; abstain: replace an ungrounded answer with a refusal.")
    refusal: str = Field(DEFAULT_REFUSAL, description="The abstain message; {unsupported} lists the unsupported "
                                                      "sentences.")
    fidelity: FidelitySettings = Field(default_factory=FidelitySettings, description="Offline backend settings.")
    nli: NLISettings = Field(default_factory=NLISettings, description="NLI backend settings.")
    llm: LLMSettings = Field(default_factory=LLMSettings, description="LLM backend settings.")
    options: dict[str, Any] = Field(default_factory=dict, description="Settings for a third-party backend.")

    @model_validator(mode="after")
    def _backend_settings(self) -> VerifierConfig:
        if self.backend in ("nli", "fidelity+nli") and not self.nli.model:
            raise ValueError(f"backend = '{self.backend}' needs [ragplugins.verifier.nli] model = '<local directory "
                             "or Hugging Face name>' (ragplugins verify: --nli-model PATH)")
        if "{unsupported}" not in self.refusal:
            raise ValueError("refusal must contain {unsupported} so the user sees what could not be verified")
        return self
