"""Chunking: LlamaIndex's SentenceSplitter (large texts a block at a time), after a heading split for
Markdown documents."""

from __future__ import annotations

from typing import Any, Sequence

from llama_index.core.bridge.pydantic import Field
from llama_index.core.node_parser import MarkdownNodeParser, SentenceSplitter
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


# nltk's sentence tokenizer runs each regex over the whole text it is given under a 5-second wall clock
# (nltk.redos); a multi-megabyte paragraph trips it on a busy machine. Blocks this size take milliseconds.
BLOCK_CHARS = 100_000


def text_blocks(text: str, limit: int = BLOCK_CHARS) -> list[str]:
    """``text`` cut into consecutive blocks of at most ``limit`` characters, at a paragraph break, else a
    line break, else a sentence end, else a space (a hard cut only for text with none of them)."""
    blocks = []
    while len(text) > limit:
        window = text[:limit]
        for sep in ("\n\n", "\n", ". ", " "):
            at = window.rfind(sep)
            if at > limit // 4:
                cut = at + len(sep)
                break
        else:
            cut = limit
        blocks.append(text[:cut])
        text = text[cut:]
    blocks.append(text)
    return blocks


class BlockedSentenceSplitter(SentenceSplitter):
    """LlamaIndex's SentenceSplitter, fed large texts a block at a time (chunks never span two blocks),
    so a large file is split in linear time instead of tripping nltk's regex timeout."""

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins.BlockedSentenceSplitter"

    def _split_text(self, text: str, chunk_size: int) -> list[str]:
        if len(text) <= BLOCK_CHARS:
            return super()._split_text(text, chunk_size)
        split = super()._split_text
        return [chunk for block in text_blocks(text) for chunk in split(block, chunk_size)]
