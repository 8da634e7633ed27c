"""Documents as the overview writers see them: text rebuilt from stored chunks, plus corpus term statistics."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import PurePosixPath
from typing import Any, cast

from llama_index.core.schema import BaseNode, MetadataMode, TextNode

from ragplugins.api import CHUNK_INDEX_KEY, DOC_HASH_KEY, ChunkRow

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-'][A-Za-z0-9]+)*")


@dataclass
class DocumentText:
    doc_id: str
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def doc_hash(self) -> str:
        return str(self.metadata.get(DOC_HASH_KEY) or "")

    @property
    def file_label(self) -> str:
        """The file name without extension or numeric prefix, as words: '08_regulatory_approval.pdf' ->
        'regulatory approval'."""
        name = PurePosixPath(str(self.metadata.get("file_name") or self.doc_id)).name
        stem = re.sub(r"\.[A-Za-z0-9]{1,5}$", "", name)
        words = re.sub(r"[^A-Za-z0-9]+", " ", stem).strip()
        return re.sub(r"^\d+\s+(?=\D)", "", words)


def _reading_order(node: BaseNode) -> tuple:
    position = node.metadata.get(CHUNK_INDEX_KEY)
    return (position if isinstance(position, int) else 0, cast(TextNode, node).start_char_idx or 0, node.node_id)


def _without_overlap(previous: str, current: str, limit: int = 4000) -> str:
    """``current`` minus the longest prefix that repeats the end of ``previous`` (the splitter's overlap)."""
    probe = current[:16]
    if len(probe) < 16:
        return current
    tail = previous[-limit:]
    best = 0
    start = tail.find(probe)
    while start != -1:
        length = len(tail) - start
        if length > best and current.startswith(tail[start:]):
            best = length
        start = tail.find(probe, start + 1)
    return current[best:]


def _joined(texts: Iterable[str]) -> str:
    """A document's chunk texts, in reading order, joined without the overlap between chunks."""
    parts: list[str] = []
    for text in texts:
        parts.append(_without_overlap(parts[-1], text) if parts else text)
    return "\n".join(p for p in parts if p)


def documents_from_nodes(nodes: Iterable[BaseNode]) -> dict[str, DocumentText]:
    """Group chunks by document and join them in reading order without the overlap between chunks."""
    by_doc: dict[str, list[BaseNode]] = {}
    for node in nodes:
        if node.ref_doc_id is not None:
            by_doc.setdefault(node.ref_doc_id, []).append(node)
    out = {}
    for doc_id, chunks in by_doc.items():
        chunks.sort(key=_reading_order)
        meta = {k: v for k, v in chunks[0].metadata.items() if k != "ragplugins"}
        text = _joined(c.get_content(metadata_mode=MetadataMode.NONE) for c in chunks)
        out[doc_id] = DocumentText(doc_id, text, meta)
    return out


def documents_from_rows(rows: Iterable[ChunkRow], metadata: Mapping[str, dict[str, Any]]) -> dict[str, DocumentText]:
    """``documents_from_nodes`` from chunk rows (text and position only: no node or vector is read) of
    the documents in ``metadata`` (each document's first-chunk metadata, as ``ctx.list_documents()``
    gives it)."""
    by_doc: dict[str, list[tuple[int, str, str]]] = {}
    for row in rows:
        if row.doc_id is not None and row.doc_id in metadata:
            position = row.metadata.get(CHUNK_INDEX_KEY)
            by_doc.setdefault(row.doc_id, []).append((position if isinstance(position, int) else 0, row.id, row.text))
    return {doc_id: DocumentText(doc_id, _joined(text for *_, text in sorted(chunks)),
                                 {k: v for k, v in metadata[doc_id].items() if k != "ragplugins"})
            for doc_id, chunks in by_doc.items()}


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


@lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN_PLUS

    return frozenset(STOPWORDS_EN_PLUS)


def terms(text: str) -> list[tuple[str, str]]:
    """(stem, surface form) pairs of the content words of ``text``."""
    stop = _stopwords()
    words = [w.lower() for w in _WORD.findall(text)]
    words = [w for w in words if len(w) > 2 and w not in stop]
    return list(zip(_stemmer().stemWords(words), words))


@dataclass
class TermStatistics:
    """Document frequencies of stems over the whole corpus (what makes a term distinctive)."""

    n_documents: int
    document_frequency: Counter

    @classmethod
    def of(cls, texts: Iterable[str]) -> TermStatistics:
        df: Counter = Counter()
        n = 0
        for text in texts:
            n += 1
            df.update({stem for stem, _ in terms(text)})
        return cls(n, df)

    def distinctive(self, text: str, limit: int, exclude: Mapping[str, Any] = {}) -> list[str]:
        """The ``limit`` terms of ``text`` with the highest tf-idf (log tf, smoothed idf as in scikit-learn),
        shown in their most frequent surface form; stems in ``exclude`` are skipped."""
        pairs = terms(text)
        tf = Counter(stem for stem, _ in pairs)
        forms: dict[str, Counter] = {}
        for stem, word in pairs:
            forms.setdefault(stem, Counter())[word] += 1
        n = max(self.n_documents, 1)

        def weight(stem: str) -> float:
            idf = math.log((1 + n) / (1 + self.document_frequency.get(stem, 0))) + 1
            return (1 + math.log(tf[stem])) * idf

        ranked = sorted((s for s in tf if s not in exclude), key=lambda s: (-weight(s), s))
        return [forms[s].most_common(1)[0][0] for s in ranked[:limit]]
