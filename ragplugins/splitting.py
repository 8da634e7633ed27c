"""Chunking: LlamaIndex's SentenceSplitter (large texts a block at a time), after a heading split for
Markdown documents."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llama_index.core.bridge.pydantic import Field
from llama_index.core.node_parser import MarkdownNodeParser, SentenceSplitter
from llama_index.core.schema import BaseNode, TransformComponent
from llama_index.core.utils import get_tokenizer

from ragplugins.markdown_reader import MARKDOWN_SUFFIXES
from ragplugins.markup_lines import UNDERLINE, in_code_fences
from ragplugins.readers import file_type


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
            path = Path(str(node.metadata.get("file_path") or node.metadata.get("file_name") or ""))
            if not self.only_markdown or file_type(path)[0] in MARKDOWN_SUFFIXES:
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


# Where a sentence too long for a chunk is cut: after "," "." or ";" that white space follows (or the text's end),
# and after CJK sentence marks. SentenceSplitter's default, "[^,.;。？！]+[,.;。？！]?", cuts at every mark: inside a
# file name or address in a long code block ("BHYVE_UEFI." | "fd</loader>", "https://github." | "com/...": a new
# user's libvirt pages, 38 such cuts in 1,201 chunks), and it drops a mark that no other character precedes
# ("a...b" reads "a.b"). Every character of the text is in one piece.
WITHIN_SENTENCE = r"(?:[,.;](?=\S)|[^,.;。？！])+[,.;。？！]*|[,.;。？！]+"


class BlockedSentenceSplitter(SentenceSplitter):
    """LlamaIndex's SentenceSplitter, fed large texts a block at a time (chunks never span two blocks),
    so a large file is split in linear time instead of tripping nltk's regex timeout, and cutting a
    sentence too long for a chunk only where white space follows its punctuation (:data:`WITHIN_SENTENCE`).
    Only the splitter's public methods are extended: what they do to one block is LlamaIndex's own."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**{"secondary_chunking_regex": WITHIN_SENTENCE, **kwargs})

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins.BlockedSentenceSplitter"

    def split_text(self, text: str) -> list[str]:
        return [chunk for block in text_blocks(text) for chunk in self.split_block(block, None)]

    def split_text_metadata_aware(self, text: str, metadata_str: str) -> list[str]:
        return [chunk for block in text_blocks(text) for chunk in self.split_block(block, metadata_str)]

    def split_block(self, block: str, metadata_str: str | None) -> list[str]:
        """One block (at most BLOCK_CHARS), split as SentenceSplitter splits a text (``metadata_str``: the
        chunk's metadata text, which the chunk size must leave room for; None: none)."""
        if metadata_str is None:
            return super().split_text(block)
        return super().split_text_metadata_aware(block, metadata_str)


# Lines that open a section in documentation written as plain text. Each must follow a blank line (or
# open the text), so the last line of a paragraph is never cut from its start.
_SECTION_STARTS = re.compile(
    r"#{1,6}\s+\S"                              # Markdown heading (also what the HTML reader writes)
    r"|={1,6}[ \t]+[^\s=]"                       # AsciiDoc title: "== Configuration" (not a table's "=== ===")
    r"|=head[1-6][ \t]+\S"                        # Perl's POD: "=head2 Options"
    r"|\d+(?:\.\d+)*\.?[ \t]+[A-Z][^\n]{0,100}$"  # numbered heading: "4.3. Scope", "25.1.3 Overview"
    # DocBook's chapters as text, no-break spaces and all: "Chapter\u00a01.\u00a0Overview" (X.Org's specifications)
    r"|(?:Chapter|Appendix|Part)[ \t\u00a0]+(?:\d{1,3}|[A-Z]|[IVXLC]{1,6})[.:][ \t\u00a0]+\S[^\n]{0,100}$"
    r"|\.\.[ \t]+[\w:-]+::"                      # reStructuredText directive: ".. function:: open(file)"
    r"|\S[^\n]*::[ \t]*$",                        # AsciiDoc definition term: "--all::", "push [-p]::"
)
def section_starts(text: str) -> list[int]:
    """Character offsets where a section of ``text`` begins (0 always among them): headings (Markdown,
    underlined reStructuredText / AsciiDoc / setext, numbered), reStructuredText directives and
    AsciiDoc definition terms. None inside a Markdown code fence: a shell comment after a blank line began
    one, and so did a code block's last line above its closing "```" (read as a title's underline)."""
    lines = text.splitlines(keepends=True)
    offsets, at = [], 0
    for line in lines:
        offsets.append(at)
        at += len(line)
    starts = {0}
    code = in_code_fences(lines)
    for i, line in enumerate(lines):
        blank_before = i == 0 or not lines[i - 1].strip()
        stripped = line.rstrip("\r\n")
        if code[i] or not stripped.strip() or UNDERLINE.fullmatch(stripped):
            continue
        below = lines[i + 1].rstrip("\r\n") if i + 1 < len(lines) and not code[i + 1] else ""
        # A title is as long as its underline, give or take two (so a "----" block delimiter is not one).
        if UNDERLINE.fullmatch(below) and abs(len(below.strip()) - len(stripped.strip())) <= 2:
            above = lines[i - 1].rstrip("\r\n") if i > 0 else ""
            # An overlined title starts at its overline.
            starts.add(offsets[i - 1] if i > 0 and UNDERLINE.fullmatch(above) else offsets[i])
        elif blank_before and _SECTION_STARTS.match(stripped):
            starts.add(offsets[i])
    return sorted(starts)


class SectionSplitter(BlockedSentenceSplitter):
    """Chunks that begin where a section of the document begins, when they can: consecutive sections
    are packed into one chunk while they fit ``chunk_size``; a section larger than that is split by
    the SentenceSplitter (with its overlap). SentenceSplitter alone cuts wherever the token budget
    runs out, so a chunk usually starts inside one section and ends inside the next."""

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins.SectionSplitter"

    def split_block(self, block: str, metadata_str: str | None) -> list[str]:
        budget = self.chunk_size - (self.token_count(metadata_str) if metadata_str else 0)
        bounds = [*section_starts(block), len(block)]
        sections = [block[a:b] for a, b in zip(bounds, bounds[1:]) if block[a:b].strip()]
        chunks: list[str] = []
        packed: list[str] = []
        size = 0
        for section in sections:
            tokens = self.token_count(section)
            if packed and size + tokens > budget:
                chunks.append("".join(packed).strip())
                packed, size = [], 0
            if tokens > budget:
                chunks.extend(super().split_block(section, metadata_str))
            else:
                packed.append(section)
                size += tokens
        if packed:
            chunks.append("".join(packed).strip())
        return [c for c in chunks if c] or [""]

    @staticmethod
    def token_count(text: str) -> int:
        """Tokens as SentenceSplitter counts them by default (LlamaIndex's global tokenizer)."""
        return len(get_tokenizer()(text))
