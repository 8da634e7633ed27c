"""The first stage's BM25 leg: bm25s over each chunk's text and its document's name.

Tokens are English word stems without stop words (as bm25s and LlamaIndex's BM25Retriever
make them), plus what technical documentation is searched by and a stemmer splits apart:
whole identifiers (``git-config``, ``os.path.join``, ``max_wal_size``), the parts of
``snake_case`` names, and dotted section numbers (``25.1.3``). A chunk is indexed with its
document's name in front, so a question that names the document finds its chunks.

One leg for every store: the same tokens and scores whatever holds the vectors.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator
from pathlib import PurePath
from typing import Any

import numpy as np
from llama_index.core.schema import BaseNode

WORD = re.compile(r"(?u)\b\w\w+\b")
# Names joined by . - : / (an option, a module path, a command) and dotted numbers.
IDENTIFIER = re.compile(r"(?u)\w+(?:[.\-:/]\w+)+")
NUMBER_PATH = re.compile(r"\d+(?:\.\d+)+")
# How many of the best chunks ranked() sorts first.
HEAD = 256
_SUFFIXES = re.compile(r"(\.(md|markdown|txt|rst|html?|pdf|docx|epub))+$", re.IGNORECASE)


class Tokenizer:
    """Stemmed words, whole identifiers and their snake_case parts."""

    def __init__(self) -> None:
        import bm25s
        import Stemmer

        self._stem = Stemmer.Stemmer("english").stemWords
        self._stop = frozenset(bm25s.stopwords.STOPWORDS_EN)

    def __call__(self, text: str) -> list[str]:
        low = text.lower()
        words = [w for w in WORD.findall(low) if w not in self._stop]
        # Only words are stemmed: "max_wal_size" or "utf8" is a name, not an English word.
        stems = iter(self._stem([w for w in words if w.isalpha()]))
        tokens = [next(stems) if w.isalpha() else w for w in words]
        tokens += [m.strip(".-:/") for m in IDENTIFIER.findall(low)]
        tokens += [p for w in words if "_" in w for p in w.split("_") if len(p) > 1]
        return tokens


# The metadata a chunk's document is named by, best first (what document_name reads).
NAME_KEYS = ("title", "document_title", "file_name", "file_path")


def document_name(metadata: dict[str, Any], doc_id: str | None = None) -> str:
    """The words of a chunk's document name: its title when a reader recorded one, else its file name."""
    title = metadata.get("title") or metadata.get("document_title")
    if isinstance(title, str) and title.strip():
        return title
    name = str(metadata.get("file_name") or metadata.get("file_path") or doc_id or "")
    stem = _SUFFIXES.sub("", PurePath(name).name)
    return f"{stem} {re.sub(r'[_.-]+', ' ', stem)}"


class SparseIndex:
    """BM25 (bm25s) over chunks given as (chunk id, document name, text, locator); ``search`` returns (position,
    score) pairs, best first, and ``ids[position]`` is the chunk. Only ids and the BM25 matrix are kept:
    a query process holds no chunk text or node (the winners are fetched from the store)."""

    def __init__(self, chunks: Iterable[tuple[str, str, str, Any]]):
        import bm25s

        self.tokenize = Tokenizer()
        self.ids: list[str] = []
        # Each chunk's ChunkRow.locator where the store gave one (read back by it, not searched for).
        self.locators: list[Any] = []
        vocab: dict[str, int] = {}
        token_ids = []
        for chunk_id, name, text, locator in chunks:
            self.ids.append(chunk_id)
            self.locators.append(locator)
            token_ids.append([vocab.setdefault(t, len(vocab)) for t in self.tokenize(f"{name}\n{text}")])
        self.vocab = vocab
        self.model = bm25s.BM25()
        if self.ids:
            self.model.index(bm25s.tokenization.Tokenized(ids=token_ids, vocab=vocab), show_progress=False)

    @classmethod
    def from_nodes(cls, nodes: Iterable[BaseNode]) -> SparseIndex:
        return cls((n.node_id, document_name(n.metadata or {}, n.ref_doc_id), n.get_content(), None) for n in nodes)

    def ranked(self, query: str) -> Iterator[tuple[int, float]]:
        """Every chunk that shares a term with ``query``, best first (ties in stored order), sorted as
        far as the caller reads: a common word matches most of a large corpus."""
        if not self.ids:
            return
        terms = [self.vocab[t] for t in self.tokenize(query) if t in self.vocab]
        if not terms:
            return
        scores = np.asarray(self.model.get_scores(terms), dtype=float)
        hits = np.flatnonzero(scores > 0)
        if len(hits) > 4 * HEAD:
            # Everything at or above the HEAD-th best score (ties whole), then the rest only if asked for.
            bar = np.partition(scores[hits], len(hits) - HEAD)[len(hits) - HEAD]
            parts = [hits[scores[hits] >= bar], hits[scores[hits] < bar]]
        else:
            parts = [hits]
        for part in parts:
            for i in part[np.lexsort((part, -scores[part]))]:
                yield int(i), float(scores[i])

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        return list(itertools.islice(self.ranked(query), k))

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"SparseIndex({len(self.ids)} chunks, {len(self.vocab)} terms)"


def build(store: Any) -> SparseIndex:
    """The BM25 leg over every chunk ``store`` (a StoreAdapter) holds, read without vectors."""
    return SparseIndex((row.id, document_name(row.metadata, row.doc_id), row.text, row.locator)
                       for row in store.iter_chunk_rows(NAME_KEYS))
