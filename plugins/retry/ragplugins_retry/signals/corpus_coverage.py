from __future__ import annotations

from typing import ClassVar

import numpy as np
from llama_index.core.schema import NodeWithScore

from ragplugins import api
from ragplugins_retry import text, vocabulary
from ragplugins_retry.signals.base import Measurement, RetrySignal


class CorpusCoverageSignal(RetrySignal):
    """How much of what the corpus can offer for this question the top candidates already hold.

    Each content term of the question (stemmed, stopwords dropped) is weighted by its rarity in the chunks the
    query may see (the whole index, or those the host's filter allows; while the host's filters are unknown the
    signal abstains), idf = ln((N + 1) / (df + 0.5)); terms the index never contains are left out, since no
    retrieval can find them. The *ceiling* is the best idf-weighted share of the question any chunk of the index
    holds (read from the index's postings, built once per index state); the value is the best share among the
    first ``top_n`` candidates divided by that ceiling. 1.0 means the first stage already ranks a chunk as
    complete as the corpus has near the top, so nothing a reformulation could find would hold more of the
    question: the evidence is not weak. Below 1.0 the corpus holds a chunk that contains more of the question
    than anything at the top.

    The threshold therefore comes from the corpus and the query, not from a constant fitted on questions: the
    default retries only below 1.0. Both sets of a retry are judged against the same ceiling (the user's
    question, the same index), so they are on one scale."""

    name: ClassVar[str] = "corpus_coverage"
    default_threshold: ClassVar[float] = 1.0
    top_n: int = 3

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins_retry.CorpusCoverageSignal"

    def measure(self, query: str, nodes: list[NodeWithScore], ctx: api.RagContext, retrieved_for: str) -> Measurement:
        terms = text.content_stems(query)
        if not terms:
            return Measurement(None, "the question has no content words (only stopwords)")
        if not nodes:
            return Measurement(None, "no candidates")
        if ctx is None or getattr(ctx, "index", None) is None:
            return Measurement(None, "no index to read term statistics from")
        try:
            vocab = vocabulary.vocabulary_for_query(ctx)
        except Exception as exc:  # noqa: BLE001 - a store that cannot list its text has no ceiling
            return Measurement(None, f"the index's text could not be read ({type(exc).__name__}: {exc})")
        if vocab is None:
            return Measurement(None, vocabulary.FILTERS_UNKNOWN)
        weight = {t: vocab.idf(vocab.stem_postings.count(t)) for t in terms if t in vocab.stem_postings}
        weight = {t: w for t, w in weight.items() if w > 0}
        if not weight:
            return Measurement(None, "none of the question's words is a distinguishing term of the index")
        ceiling = _ceiling(weight, vocab)
        top = [text.stem_set(n.node.get_content()) for n in nodes[: self.top_n]]
        best = max(sum(w for t, w in weight.items() if t in bag) for bag in top)
        # The candidates' text is the indexed text, so best <= ceiling up to rounding.
        value = 1.0 if best >= ceiling - 1e-9 else best / ceiling
        missing = [t for t in weight if not any(t in bag for bag in top)]
        return Measurement(value, "", {"terms": list(weight), "missing_in_top": missing,
                                       "ceiling": round(ceiling / sum(weight.values()), 4),
                                       "top": round(best / sum(weight.values()), 4)})


def _ceiling(weight: dict[str, float], vocab: vocabulary.Vocabulary) -> float:
    """The largest summed weight of the question's terms that one chunk of the index contains."""
    held = np.zeros(vocab.n_chunks)
    for term, w in weight.items():   # summed term by term, as a chunk would be on its own
        held[vocab.stem_postings.chunks(term)] += w
    return float(held.max())
