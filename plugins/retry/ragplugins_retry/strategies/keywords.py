from __future__ import annotations

from typing import ClassVar

from llama_index.core.schema import NodeWithScore

from ragplugins import api
from ragplugins_retry import text
from ragplugins_retry.strategies.base import Reformulation, RetryStrategy, same_query


class KeywordsStrategy(RetryStrategy):
    """Query reduction: keep the question's content words, drop stopwords and scaffolding.

    Verbose natural-language questions ("How many ... does the ... use?") pull
    a small dense embedder towards other questions and generic prose; the bare
    content words keep every entity, number and constraint the user typed and
    nothing else. Deterministic and LLM-free.
    """

    name: ClassVar[str] = "keywords"

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins_retry.KeywordsStrategy"

    def reformulate(self, query: str, nodes: list[NodeWithScore], ctx: api.RagContext) -> Reformulation:
        kept = [w for w in text.words(query) if text.is_content(w)]
        if not kept:
            return Reformulation(None, "the question has no content words to keep")
        reduced = " ".join(kept)
        if same_query(reduced, query):
            return Reformulation(None, "the question is already only content words")
        return Reformulation(reduced, "", {"dropped": len(text.words(query)) - len(kept)})
