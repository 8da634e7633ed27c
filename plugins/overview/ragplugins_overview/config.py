from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ragplugins import api
from ragplugins.api import check_prompt_template

# Raised when the extractive writer changes what it writes, so stored overviews are rewritten.
EXTRACTIVE_VERSION = 1


class OverviewConfig(BaseModel):
    """``[ragplugins.overview]``."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["adaptive", "boost", "restrict"] = Field(
        "adaptive",
        description="'adaptive': only for queries where some documents' overviews stand out from the rest by a "
                    "clear margin, search inside those documents and fuse their best chunks with the candidates "
                    "(RRF, k=60), dropping no candidate and keeping those documents' candidates in the first "
                    "stage's order; 'boost': always fuse the top_documents best documents "
                    "into the candidate order; 'restrict': when the margin is clear, search inside those documents "
                    "and merge with the unrestricted candidates, cut to the same length, keeping the unrestricted "
                    "ones whenever the restricted evidence is weaker.",
        json_schema_extra=api.QUERY_TIME)
    top_documents: int = Field(5, ge=1, le=100,
                               description="At most this many documents are boosted or searched inside.",
        json_schema_extra=api.QUERY_TIME)
    outlier_z: float = Field(
        3.5, gt=0,
        description="'adaptive' and 'restrict' steer only towards documents whose overview score has a modified "
                    "z-score (distance from this query's median score in units of 1.4826 x the median absolute "
                    "deviation) of at least this; 3.5 is the usual outlier cut-off (Iglewicz & Hoaglin).",
        json_schema_extra=api.QUERY_TIME)
    min_gap: float | None = Field(
        None, ge=0,
        description="'adaptive' and 'restrict' also require those documents to be separated from the next one by "
                    "at least this many robust standard deviations (the largest gap among the best "
                    "top_documents + 1 scores). Unset: derived from the number of documents n, the gap that "
                    "scores without any signal exceed on 1% of queries, ln(100) / sqrt(2 ln n) (1.98 at n = 10, "
                    "1.37 at n = 268).",
        json_schema_extra=api.QUERY_TIME)
    require_runner_up: bool = Field(
        True,
        description="'adaptive' and 'restrict' act only when the first stage leaves the choice of document open: "
                    "the documents the overviews pick hold the first stage's second candidate while another "
                    "document holds the first, and that first place is in doubt (its lead over the second no "
                    "larger than the median step between the candidates below it in the top 10), and in a question of "
                    "several sentences the one that asks wants the picked documents too. Where the first "
                    "stage already ranks the picked document first, steering adds nothing but its other chunks; "
                    "where it ranks it lower, the overviews overrule it, which lost on questions that describe one "
                    "document to ask about another; where its first place stands out, there is no contest. False: "
                    "act on every decisive pick (the behaviour before issue 14).",
        json_schema_extra=api.QUERY_TIME)
    runner_up_depth: int = Field(
        1, ge=1, le=100,
        description="Opt-in (1 = off): 'adaptive' and 'restrict' also steer towards the overviews' best document when "
                    "it holds one of the first stage's runners-up (ranks 2 to runner_up_depth) and another document "
                    "holds rank 1. It gained on the bench corpora it was found on and lost on questions that describe "
                    "one document to ask about another (docs/benchmarks.md): measure it on your own questions.",
        json_schema_extra=api.QUERY_TIME)
    window: int = Field(
        10, ge=1, le=1000,
        description="'adaptive': the top positions (the chunks an answer is read from) the steering may change: "
                    "the selected documents take the first place and keep the others they held there; every other "
                    "document's candidate stays among them, in its order.",
        json_schema_extra=api.QUERY_TIME)
    overview: Literal["extractive", "llm"] = Field(
        "extractive",
        description="How overviews are written at index time: 'extractive' (no model beyond the embedder: title, "
                    "headings, lead sentences, distinctive terms) or 'llm' (the host's LLM, see llm_prompt).")
    llm_prompt: str | None = Field(
        None,
        description="Prompt for overview = 'llm', with {text} (the head of the document) and optionally {title}. "
                    "Default: ask for what the document is, its type, key entities, numbers and dates in about "
                    "120 tokens.")
    head_chars: int = Field(5000, ge=200, le=100_000,
                            description="Characters from the start of a document the LLM sees.")
    key_terms: int = Field(10, ge=0, le=50,
                           description="Distinctive terms in an extractive overview (0 = none).")

    def writer_settings(self) -> dict[str, Any]:
        """The settings an overview's text depends on. Stored with the overviews: when they differ from the
        stored ones, the next write to the index rewrites every overview instead of mixing two kinds."""
        settings: dict[str, Any] = {"overview": self.overview, "key_terms": self.key_terms,
                                    "extractive_version": EXTRACTIVE_VERSION}
        if self.overview == "llm":
            settings |= {"llm_prompt": self.llm_prompt, "head_chars": self.head_chars}
        return settings

    @field_validator("llm_prompt")
    @classmethod
    def _prompt_variables(cls, value: str | None) -> str | None:
        return check_prompt_template(value, {"text": "the document"}, optional=("title",))
