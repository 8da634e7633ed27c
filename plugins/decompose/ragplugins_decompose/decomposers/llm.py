"""Decomposition by the host's LLM, parsed defensively: junk means no split, never a failed query."""

from __future__ import annotations

import json
import re
from typing import Any, ClassVar, cast

from llama_index.core.bridge.pydantic import Field
from llama_index.core.prompts import PromptTemplate

from ragplugins import api
from ragplugins_decompose.decomposers.base import Decomposer, Decomposition
from ragplugins_decompose.decomposers.rules import has_content, words

DEFAULT_PROMPT = (
    "Split the question below into the separate questions it asks, so that each can be looked up on its "
    "own. Keep every name, number and qualifier a sub-question needs; do not add anything and do not answer. "
    "If it asks only one thing, return it unchanged as the only item.\n"
    "Question: {query}\n"
    # LlamaIndex's formatter leaves unknown {fields} alone and does not unescape {{ }}: single braces.
    'Reply with JSON only: {"sub_queries": ["<first question>", "<second question>"]}\n'
)

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```(?:json)?", re.IGNORECASE)
_LIST_KEYS = ("sub_queries", "sub_questions", "subqueries", "questions", "queries", "items")
_ITEM_KEYS = ("sub_question", "question", "query", "text")
_MARKER = re.compile(r"^\s*(?:[-*•]|\(?\d{1,2}[.):]|[a-z][.)])\s+")


def _item_text(item: Any) -> str | None:
    if isinstance(item, str):
        return item
    if isinstance(item, dict):
        # SubQuestionQueryEngine's format: [{"sub_question": ..., "tool_name": ...}]
        for key in _ITEM_KEYS:
            if isinstance(item.get(key), str):
                return item[key]
    return None


def _from_json(data: Any) -> list[str] | None:
    if isinstance(data, dict):
        for key in _LIST_KEYS:
            if isinstance(data.get(key), list):
                data = data[key]
                break
        else:
            return None
    if not isinstance(data, list):
        return None
    texts = [_item_text(item) for item in data]
    return None if any(t is None for t in texts) else cast(list[str], texts)


def _json_candidates(text: str) -> list[str]:
    out = [text]
    for open_, close in (("{", "}"), ("[", "]")):
        start, end = text.find(open_), text.rfind(close)
        if 0 <= start < end:
            out.append(text[start:end + 1])
    return out


def parse_reply(reply: str) -> tuple[list[str] | None, str]:
    """(sub-queries, how they were read); None when the reply holds no list of questions."""
    text = _FENCE.sub("", _THINK.sub("", reply or "")).strip()
    for candidate in _json_candidates(text):
        try:
            parsed = _from_json(json.loads(candidate))
        except json.JSONDecodeError:
            continue
        if parsed is not None:
            return parsed, "json"
    # Open models often answer with a numbered or bulleted list instead of JSON.
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    marked = [_MARKER.sub("", ln).strip() for ln in lines if _MARKER.match(ln)]
    if len(marked) >= 2:
        return marked, "list"
    asked = [ln for ln in lines if ln.endswith("?")]
    if asked and "{" not in text and "[" not in text:
        return asked, "lines"
    return None, "none"


def _stem(word: str) -> str:
    return word.casefold()[:5]


class LLMDecomposer(Decomposer):
    """The host's LLM (``ctx.llm``) splits the question, at temperature 0 where the LLM has one.

    A reply that is not a list of questions, a sub-query far longer than the
    question (an answer), or one sharing no word with the question (chatter)
    means no split; the reason and the raw reply go to the trace.
    """

    name: ClassVar[str] = "llm"
    prompt: PromptTemplate = Field(default_factory=lambda: PromptTemplate(DEFAULT_PROMPT))
    max_length_factor: float = Field(2.0, description="A sub-query longer than this times the question "
                                                      "(plus 40 characters) is an answer, not a question.")

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins_decompose.LLMDecomposer"

    def prompts(self) -> dict[str, Any]:
        return {"decompose_prompt": self.prompt}

    def update_prompts(self, prompts: dict[str, Any]) -> None:
        if "decompose_prompt" in prompts:
            self.prompt = prompts["decompose_prompt"]

    @staticmethod
    def deterministic(llm: Any) -> tuple[Any, float | None]:
        """A copy of ``llm`` at temperature 0 when it has that field: a sampled decomposition would make
        the same question rank differently from one call to the next."""
        if "temperature" not in getattr(type(llm), "model_fields", {}):
            return llm, None
        try:
            return llm.model_copy(update={"temperature": 0.0}), 0.0
        except Exception:  # noqa: BLE001 - an LLM that cannot be copied is used as given
            return llm, None

    def decompose(self, query: str, ctx: api.RagContext | None) -> Decomposition:
        if ctx is None or ctx.llm is None:
            return Decomposition([], "decomposer 'llm' needs an LLM, and the host gave none (ctx.llm is None)")
        llm, temperature = self.deterministic(ctx.llm)
        try:
            reply = llm.complete(self.prompt.format(query=query)).text
        except Exception as exc:  # noqa: BLE001 - a failing LLM means no split, not a failed query
            return Decomposition([], f"the LLM call failed: {type(exc).__name__}: {exc}")
        return self.check(query, reply, temperature)

    async def adecompose(self, query: str, ctx: api.RagContext | None) -> Decomposition:
        if ctx is None or ctx.llm is None:
            return Decomposition([], "decomposer 'llm' needs an LLM, and the host gave none (ctx.llm is None)")
        llm, temperature = self.deterministic(ctx.llm)
        try:
            reply = (await llm.acomplete(self.prompt.format(query=query))).text
        except Exception as exc:  # noqa: BLE001
            return Decomposition([], f"the LLM call failed: {type(exc).__name__}: {exc}")
        return self.check(query, reply, temperature)

    def check(self, query: str, reply: str, temperature: float | None = None) -> Decomposition:
        details = {"reply": (reply or "")[:500], "temperature": temperature}
        parts, read_as = parse_reply(reply)
        details["parsed_as"] = read_as
        if parts is None:
            return Decomposition([], "the LLM reply holds no list of sub-questions", details)
        parts = [" ".join(p.split()) for p in parts if p and p.strip()]
        limit = self.max_length_factor * len(query) + 40
        too_long = [p for p in parts if len(p) > limit]
        if too_long:
            return Decomposition([], f"a sub-query is {len(too_long[0])} characters long for a "
                                     f"{len(query)}-character question (an answer, not a question)", details)
        asked = {_stem(w) for w in words(query) if has_content(w)}
        unrelated = [p for p in parts if not {_stem(w) for w in words(p) if has_content(w)} & asked]
        if unrelated:
            return Decomposition([], f"the sub-query {unrelated[0]!r} shares no word with the question", details)
        return Decomposition(parts, "", details)
