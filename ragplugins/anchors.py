"""A page's anchors (HTML ids), carried from the reader to the chunks they begin in.

The reader knows where each anchor of a page begins in the page's text (``html_reader.HtmlPage``); the
splitter does not keep that text's offsets reliably (MarkdownNodeParser's sections restart them). So a
document carries each anchor with the words that follow it (``PAGE_ANCHORS_KEY``, read by nothing but the
chunk step), and after splitting every chunk names the anchors that begin in it (``ANCHORS_KEY``: what a
host deep-links a chunk with, and what a link's ``#fragment`` names).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from llama_index.core.schema import BaseNode, MetadataMode, TextNode

from ragplugins.stores.base import ANCHORS_KEY

# On a document only, between the reader and the chunk step, which replaces it by ``ANCHORS_KEY``.
PAGE_ANCHORS_KEY = "ragplugins_page_anchors"
# Enough of the text after an anchor to find it again in a chunk: an anchor's words are rarely repeated
# word for word this far (nginx's "Syntax: | `gzip_proxied` `off` | ..." tables differ by the name).
LEAD_CHARS = 80
# Where a chunk boundary cuts into those words, the chunk after it still holds their start.
SHORT_LEAD_CHARS = 24


def page_anchors(text: str, offsets: Mapping[str, int]) -> str:
    """``PAGE_ANCHORS_KEY``'s value for a page: each anchor's offset in ``text`` and the words there."""
    return json.dumps({name: [at, text[at:at + LEAD_CHARS]] for name, at in offsets.items()},
                      ensure_ascii=False, separators=(",", ":"))


def anchor_names(metadata: Mapping[str, Any]) -> list[str]:
    """The anchors that begin in a chunk, in reading order ([] when it has none or was read without them)."""
    value = metadata.get(ANCHORS_KEY)
    return value.split() if isinstance(value, str) else []


def place_anchors(nodes: Sequence[BaseNode]) -> None:
    """Replace each chunk's copy of its page's anchors by the names of those that begin in it. An anchor
    begins in the chunk whose text holds its words nearest its offset, and where two overlapping chunks
    both hold them, in the one where they stand earliest (the one its body follows). An anchor whose words
    no chunk holds is left out."""
    by_page: dict[tuple[str | None, str], list[BaseNode]] = {}
    for node in nodes:
        raw = node.metadata.pop(PAGE_ANCHORS_KEY, None)
        if isinstance(raw, str) and isinstance(node, TextNode):
            by_page.setdefault((node.ref_doc_id, raw), []).append(node)
    for (_, raw), chunks in by_page.items():
        try:
            anchors = json.loads(raw)
        except json.JSONDecodeError:
            continue
        texts = [c.get_content(metadata_mode=MetadataMode.NONE) for c in chunks]
        found: dict[int, list[tuple[int, str]]] = {}
        for name, (offset, lead) in anchors.items():
            best = _where(texts, chunks, offset, lead) or _where(texts, chunks, offset, lead[:SHORT_LEAD_CHARS])
            if best is not None:
                found.setdefault(best[0], []).append((best[1], name))
        for i, chunk in enumerate(chunks):
            if i in found:
                chunk.metadata[ANCHORS_KEY] = " ".join(name for _, name in sorted(found[i]))


def _where(texts: Sequence[str], chunks: Sequence[BaseNode], offset: int, lead: str) -> tuple[int, int] | None:
    """(chunk, position in it) where ``lead`` stands nearest ``offset`` in the page, earliest in its chunk."""
    if not lead.strip():
        return None
    best: tuple[tuple[int, int], int, int] | None = None
    for i, text in enumerate(texts):
        pos = text.find(lead)
        while pos >= 0:
            start = getattr(chunks[i], "start_char_idx", None)
            key = (abs(start + pos - offset) if isinstance(start, int) else 0, pos)
            if best is None or key < best[0]:
                best = (key, i, pos)
            pos = text.find(lead, pos + 1)
    return None if best is None else (best[1], best[2])
