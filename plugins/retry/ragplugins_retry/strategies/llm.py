from __future__ import annotations

import json
import re
from typing import Any, ClassVar

from llama_index.core.bridge.pydantic import Field
from llama_index.core.prompts import PromptTemplate
from llama_index.core.schema import NodeWithScore

from ragplugins import api
from ragplugins_retry import text
from ragplugins_retry.strategies.base import Reformulation, RetryStrategy, same_query

DEFAULT_PROMPT = (
    "A document search for the question below returned weak matches. Rewrite it once as a single, "
    "self-contained search query that uses the concrete nouns, technical terms and synonyms a document "
    "would use instead of the asker's phrasing. Keep every entity, number and constraint of the question. "
    "Do not answer it.\n"
    "Question: {query}\n"
    # LlamaIndex's formatter leaves unknown {fields} alone and does not unescape {{ }}: single braces.
    'Reply with JSON only: {"query": "<the rewritten search query>"}\n'
)

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_JSON = re.compile(r"\{.*\}", re.DOTALL)
# Words that carry an entity or a number: digits, inner capitals, or identifier punctuation.
_MUST_KEEP = re.compile(r"\d|[A-Z].*[A-Z]|[_./\-]")


def must_keep(query: str) -> list[str]:
    """Numbers, identifiers and names the rewrite has to carry over as whole words (any case)."""
    found = [w for w in text.words(query) if _MUST_KEEP.search(w)]
    # A capitalised word that does not open the question is a name ("Acme", "Globex").
    found += [w for w in text.words(query)[1:] if w[:1].isupper() and text.is_content(w)]
    return list(dict.fromkeys(found))


class LLMStrategy(RetryStrategy):
    """The host's LLM (``ctx.llm``) rewrites the question once.

    The reply must be JSON ``{"query": ...}``; anything else, an empty or
    unchanged rewrite, one far longer than the question, or one that drops a
    number, identifier or name of the question means no retry rather than a
    bad one (the reason goes to the trace).
    """

    name: ClassVar[str] = "llm"
    prompt: PromptTemplate = Field(default_factory=lambda: PromptTemplate(DEFAULT_PROMPT))
    max_length_factor: float = 4.0

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins_retry.LLMStrategy"

    def prompts(self) -> dict[str, Any]:
        return {"reformulate_prompt": self.prompt}

    def update_prompts(self, prompts: dict[str, Any]) -> None:
        if "reformulate_prompt" in prompts:
            self.prompt = prompts["reformulate_prompt"]

    def reformulate(self, query: str, nodes: list[NodeWithScore], ctx: api.RagContext) -> Reformulation:
        if ctx.llm is None:
            return Reformulation(None, "strategy 'llm' needs an LLM, and the host gave none (ctx.llm is None)")
        try:
            reply = ctx.llm.complete(self.prompt.format(query=query)).text
        except Exception as exc:  # noqa: BLE001 - a failing LLM means no retry, not a failed query
            return Reformulation(None, f"the LLM call failed: {type(exc).__name__}: {exc}")
        return self.check(query, reply)

    async def areformulate(self, query: str, nodes: list[NodeWithScore], ctx: api.RagContext) -> Reformulation:
        if ctx.llm is None:
            return Reformulation(None, "strategy 'llm' needs an LLM, and the host gave none (ctx.llm is None)")
        try:
            reply = (await ctx.llm.acomplete(self.prompt.format(query=query))).text
        except Exception as exc:  # noqa: BLE001
            return Reformulation(None, f"the LLM call failed: {type(exc).__name__}: {exc}")
        return self.check(query, reply)

    def check(self, query: str, reply: str) -> Reformulation:
        """Parse the LLM's reply; reject anything that is not a faithful single query."""
        raw = _THINK.sub("", reply or "").strip()
        details = {"reply": raw[:500]}
        match = _JSON.search(raw)
        try:
            rewrite = json.loads(match.group(0)).get("query") if match else None
        except (json.JSONDecodeError, AttributeError):
            rewrite = None
        if not isinstance(rewrite, str) or not rewrite.strip():
            return Reformulation(None, 'the LLM reply is not JSON {"query": "<text>"}', details)
        rewrite = " ".join(rewrite.split())
        if same_query(rewrite, query):
            return Reformulation(None, "the LLM returned the question unchanged", details)
        if len(rewrite) > self.max_length_factor * len(query) + 80:
            return Reformulation(None, f"the rewrite is {len(rewrite)} characters long for a "
                                       f"{len(query)}-character question (an answer, not a query)", details)
        present = {w.casefold() for w in text.words(rewrite)}
        dropped = [w for w in must_keep(query) if w.casefold() not in present]
        if dropped:
            return Reformulation(None, f"the rewrite dropped {', '.join(repr(w) for w in dropped)} "
                                       f"from the question", details)
        return Reformulation(rewrite, "", details)
