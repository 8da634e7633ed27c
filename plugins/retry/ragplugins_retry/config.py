from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ragplugins.api import check_prompt_template


class RetryConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    signal: str = Field(
        "corpus_coverage",
        description="How weak evidence is judged: 'corpus_coverage' (the idf-weighted share of the question's "
                    "terms the best top candidate holds, divided by the largest share any chunk of the index "
                    "holds: below 1.0 the corpus has a chunk with more of the question than the top "
                    "candidates), 'query_coverage' (idf-weighted share of the question's "
                    "terms the best top candidate contains), 'dense_contrast' ((top cosine - mean cosine of "
                    "ranks 6+) / (1 - that mean)), 'rerank_probability' (the highest calibrated "
                    "reranker probability a first-stage reranker put on the candidates), or a signal another "
                    "plugin registers.")
    threshold: float | None = Field(
        None, ge=0.0, le=1.0,
        description="Retry when the signal is below this. Unset: the signal's own default (corpus_coverage "
                    "1.0, a threshold derived from the index and the question; query_coverage 0.2, "
                    "dense_contrast 0.12, rerank_probability 0.5, constants fitted elsewhere). Choose one on "
                    "your data with `ragplugins retry calibrate --gold FILE`.")
    confirm_signal: str | None = Field(
        "dense_contrast",
        description="A second, independent signal the retry set must also not lose on. The retry set is kept "
                    "only when, judged against the user's question, it is no worse than the original on both "
                    "signals and strictly better on at least one. Unset (or equal to `signal`), or when it "
                    "cannot be computed (no vectors): the retry set is kept only when `signal` is strictly "
                    "higher.")
    strategy: str = Field(
        "vocabulary",
        description="How the query is reformulated: 'vocabulary' (append to the question the corpus's own "
                    "spelling of question words the top candidates lack: identifiers, acronyms; else as "
                    "'keywords'; deterministic), 'keywords' (drop stopwords and question scaffolding; "
                    "deterministic), 'prf' (pseudo-relevance feedback: append terms that distinguish the "
                    "top candidates; deterministic), 'llm' (the host's LLM rewrites it), or a strategy another "
                    "plugin registers.")
    vocabulary_reduce_otherwise: bool = Field(
        False,
        description="'vocabulary': when no mismatch between the question's and the corpus's spelling is found, "
                    "retry with the 'keywords' reduction instead of not retrying. Off by default: the reduction "
                    "adds nothing the question lacked (the sparse leg drops stopwords anyway; only the dense "
                    "embedding changes), and on the Debian documentation corpora it was kept on three "
                    "questions it made worse against one it improved.")
    prf_feedback_docs: int = Field(3, ge=1, le=50,
                                   description="'prf': how many top candidates the expansion terms come from.")
    prf_terms: int = Field(5, ge=1, le=50, description="'prf': how many expansion terms are appended.")
    vocabulary_terms: int = Field(3, ge=1, le=20,
                                  description="'vocabulary': at most this many corpus terms are added (at most "
                                              "one per question word).")
    llm_prompt: str | None = Field(
        None,
        description="'llm': the reformulation prompt (a template with a {query} placeholder that must "
                    "ask for JSON {\"query\": ...}). Unset: the built-in prompt.")

    @field_validator("llm_prompt")
    @classmethod
    def _prompt_has_query(cls, value: str | None) -> str | None:
        return check_prompt_template(value, {"query": "the question"})
