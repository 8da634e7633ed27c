from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ragplugins.api import check_prompt_template


class DecomposeConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    decomposer: str = Field(
        "rules",
        description="How a question is split into sub-queries: 'rules' (LLM-free: coordinated questions such "
                    "as 'what is X and when does Y', comma lists of three or more items, 'both X and Y'; "
                    "anything else is left alone), 'llm' (the host's LLM, temperature 0; a reply that cannot "
                    "be parsed means no split), 'none' (never split: a plain rerank stage), or a decomposer "
                    "another plugin registers through ragplugins_decompose_decomposers.")
    aggregate: Literal["mean", "max", "coverage"] = Field(
        "max",
        description="How a candidate's scores against the question and its sub-queries combine: 'max' "
                    "(the default: the least harmful on the benchmarks, see the README), 'mean', or 'coverage' "
                    "(each sub-query's best candidate is placed right after the overall best; the rest follow "
                    "the mean).")
    scorer: Literal["hybrid", "embedding", "cross-encoder", "postprocessor"] = Field(
        "hybrid",
        description="What scores a candidate against one query: 'hybrid' (the first stage's own signals among "
                    "the candidates: the index's embedder cosine and BM25, fused by reciprocal rank), "
                    "'embedding' (the cosine alone), 'cross-encoder' (LlamaIndex's SentenceTransformerRerank "
                    "with `model`), or 'postprocessor' (any LlamaIndex reranking postprocessor, built by "
                    "the factory named in `postprocessor`).")
    model: str | None = Field(
        None,
        description="scorer 'cross-encoder': a local directory saved with save_pretrained, or a model name "
                    "already in the Hugging Face cache (e.g. 'cross-encoder/ms-marco-MiniLM-L-6-v2').")
    postprocessor: str | None = Field(
        None,
        description="scorer 'postprocessor': 'package.module:factory', a zero-argument callable returning a "
                    "LlamaIndex BaseNodePostprocessor that scores nodes against query_bundle.")
    device: str | None = Field(
        None, description="scorer 'cross-encoder': torch device ('cpu', 'cuda'); unset: what torch finds.")
    fusion: Literal["rrf", "scores"] = Field(
        "rrf",
        description="How the scorer's order meets the first-stage order: 'rrf' (reciprocal-rank fusion of "
                    "the first-stage rank and the scorer rank, as the core fuses dense and BM25) or "
                    "'scores' (the scorer's order alone, like a plain reranker).")
    rrf_k: int = Field(60, ge=1, le=1000, description="The k of reciprocal-rank fusion (1 / (k + rank)).")
    rerank_unsplit: bool | None = Field(
        None,
        description="Rerank questions that do not split too. Unset: only when the scorer adds a signal the "
                    "first stage lacks (cross-encoder, postprocessor); the hybrid and embedding scorers only "
                    "repeat the first stage's own signals for the question, so unsplit questions keep their order.")
    max_sub_queries: int = Field(4, ge=2, le=10,
                                 description="At most this many sub-queries are scored (the first ones).")
    top_n: int | None = Field(None, ge=1, description="Cut the reranked list to this many; unset: keep all.")
    llm_prompt: str | None = Field(
        None,
        description="decomposer 'llm': the prompt, a template with a {query} placeholder asking for JSON "
                    "{\"sub_queries\": [...]}. Unset: the built-in prompt.")

    @field_validator("llm_prompt")
    @classmethod
    def _prompt_has_query(cls, value: str | None) -> str | None:
        return check_prompt_template(value, {"query": "the question"})

    @field_validator("postprocessor")
    @classmethod
    def _import_path(cls, value: str | None) -> str | None:
        if value is not None and (value.count(":") != 1 or not all(value.split(":"))):
            raise ValueError(f"{value!r} is not an import path; write 'package.module:factory'")
        return value

    @model_validator(mode="after")
    def _scorer_settings(self) -> DecomposeConfig:
        if self.scorer == "cross-encoder" and not self.model:
            raise ValueError("scorer = 'cross-encoder' needs model = '<local directory or cached model name>'")
        if self.scorer == "postprocessor" and not self.postprocessor:
            raise ValueError("scorer = 'postprocessor' needs postprocessor = 'package.module:factory'")
        if self.model is not None and self.scorer != "cross-encoder":
            raise ValueError(f"model = {self.model!r} is only read with scorer = 'cross-encoder' "
                             f"(scorer is {self.scorer!r}); set the scorer or remove the model")
        if self.postprocessor is not None and self.scorer != "postprocessor":
            raise ValueError(f"postprocessor = {self.postprocessor!r} is only read with scorer = 'postprocessor' "
                             f"(scorer is {self.scorer!r}); set the scorer or remove the postprocessor")
        return self
