"""The LLM overview: the host's LlamaIndex LLM describes the head of each document."""

from __future__ import annotations

import re
from typing import Any, cast

from llama_index.core.bridge.pydantic import Field
from llama_index.core.prompts import PromptTemplate
from llama_index.core.prompts.mixin import PromptDictType, PromptMixin, PromptMixinType
from llama_index.core.schema import BaseComponent

from ragplugins_overview.documents import DocumentText

DEFAULT_PROMPT = (
    "Below is the beginning of a document titled \"{title}\".\n"
    "In at most 120 tokens of plain prose, say what the document is, its type (for example contract, letter, "
    "memo, report, policy, manual, invoice, slide deck, research paper, documentation page) and its 3 to 5 "
    "most important entities, numbers or dates. No preamble, no lists.\n\n"
    "DOCUMENT:\n{text}\n\nOVERVIEW:"
)
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


class LLMOverviewWriter(BaseComponent, PromptMixin):
    """Asks the LLM for a short description of a document's head; the prompt is overridable
    (``llm_prompt`` in the config, or ``update_prompts({"overview_prompt": ...})``)."""

    prompt: PromptTemplate = Field(default_factory=lambda: PromptTemplate(DEFAULT_PROMPT))
    head_chars: int = Field(5000, ge=1, description="Characters from the start of the document the LLM sees.")
    # About 120 tokens asked for; a longer reply is cut so the embedder (256 word pieces) reads all of it.
    max_chars: int = Field(900, ge=100, description="Upper bound on the stored overview.")

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins_overview.LLMOverviewWriter"

    def _get_prompts(self) -> PromptDictType:
        return {"overview_prompt": self.prompt}

    def _get_prompt_modules(self) -> PromptMixinType:
        return {}

    def _update_prompts(self, prompts: PromptDictType) -> None:
        if "overview_prompt" in prompts:
            self.prompt = cast(PromptTemplate, prompts["overview_prompt"])

    def write(self, llm: Any, doc: DocumentText, title: str) -> str:
        """The overview, or ValueError when the LLM answered nothing usable."""
        head = doc.text[: self.head_chars]
        reply = llm.complete(self.prompt.format(title=title, text=head)).text
        text = " ".join(_THINK.sub("", reply or "").split())
        text = re.sub(r"^(overview\s*:\s*)", "", text, flags=re.IGNORECASE)
        if not text:
            raise ValueError("the LLM returned an empty overview")
        return text[: self.max_chars]
