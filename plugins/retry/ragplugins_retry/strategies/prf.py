from __future__ import annotations

import math
from collections import Counter
from typing import ClassVar

from llama_index.core.schema import NodeWithScore

from ragplugins import api
from ragplugins_retry import text
from ragplugins_retry.strategies.base import Reformulation, RetryStrategy


class PseudoRelevanceFeedbackStrategy(RetryStrategy):
    """Append the terms that distinguish the top candidates from the rest of the candidate set.

    A term's weight is its relative frequency in each of the ``feedback_docs``
    top candidates times its rarity across all candidates,
    ln((N + 1) / (df + 0.5)) (RM3-style feedback restricted to the candidate set,
    so no corpus statistics are needed). Question terms, stopwords, bare numbers
    and words shorter than 3 letters are never added. Deterministic, LLM-free.
    """

    name: ClassVar[str] = "prf"
    feedback_docs: int = 3
    terms: int = 5

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins_retry.PseudoRelevanceFeedbackStrategy"

    def reformulate(self, query: str, nodes: list[NodeWithScore], ctx: api.RagContext) -> Reformulation:
        if len(nodes) <= self.feedback_docs:
            return Reformulation(None, f"{len(nodes)} candidates: too few to tell the top ones from the rest")
        asked = set(text.content_stems(query))
        contents = [n.node.get_content() for n in nodes]
        docs = [list(zip(text.words(c), text.stems(c))) for c in contents]
        df = Counter(s for doc in docs for s in {s for _, s in doc})
        weight: Counter = Counter()
        surface: dict[str, str] = {}
        for doc in docs[: self.feedback_docs]:
            tf = Counter(s for _, s in doc)
            for word, s in doc:
                surface.setdefault(s, word)
            for s, count in tf.items():
                word = surface[s]
                if s in asked or not text.is_content(word) or len(word) < 3 or word.isdigit():
                    continue
                # Counter adds floats as well; typeshed types its counts int.
                weight[s] += count / len(doc) * math.log((len(docs) + 1) / (df[s] + 0.5))  # type: ignore[assignment]
        added = [surface[s] for s, w in weight.most_common(self.terms) if w > 0]
        if not added:
            return Reformulation(None, "the top candidates share no distinguishing terms")
        return Reformulation(f"{query} {' '.join(added)}", "", {"added_terms": added})
