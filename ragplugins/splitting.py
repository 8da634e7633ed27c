"""Chunking: LlamaIndex's SentenceSplitter, after a heading split for Markdown documents."""

from __future__ import annotations

from typing import Any, Sequence

from llama_index.core.bridge.pydantic import Field
from llama_index.core.node_parser import MarkdownNodeParser
from llama_index.core.schema import BaseNode, TransformComponent

MARKDOWN_SUFFIXES = (".md", ".markdown")


class MarkdownSections(TransformComponent):
    """Split Markdown documents at their headings (MarkdownNodeParser, which also records the
    heading path); pass every other document through unchanged. With ``only_markdown=False``
    every document is treated as Markdown."""

    only_markdown: bool = Field(True, description="Split only documents whose file is .md/.markdown.")

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins.MarkdownSections"

    def __call__(self, nodes: Sequence[BaseNode], **kwargs: Any) -> list[BaseNode]:
        parser = MarkdownNodeParser()
        out: list[BaseNode] = []
        for node in nodes:
            path = str(node.metadata.get("file_path") or node.metadata.get("file_name") or "").lower()
            if not self.only_markdown or path.endswith(MARKDOWN_SUFFIXES):
                out.extend(parser([node]))
            else:
                out.append(node)
        return out
