"""The first stage's BM25 leg: bm25s over each chunk's text and its document's name.

Tokens are English word stems without stop words (as bm25s and LlamaIndex's BM25Retriever
make them), plus what technical documentation is searched by and a stemmer splits apart:
whole identifiers (``git-config``, ``os.path.join``, ``max_wal_size``), the parts of
``snake_case`` names, and dotted section numbers (``25.1.3``). A chunk is indexed with its
document's name in front, so a question that names the document finds its chunks.

One leg for every store: the same tokens and scores whatever holds the vectors.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import PurePath
from typing import Any

import numpy as np
from llama_index.core.schema import BaseNode

WORD = re.compile(r"(?u)\b\w\w+\b")
# Names joined by . - : / (an option, a module path, a command) and dotted numbers.
IDENTIFIER = re.compile(r"(?u)\w+(?:[.\-:/]\w+)+")
NUMBER_PATH = re.compile(r"\d+(?:\.\d+)+")
_SUFFIXES = re.compile(r"(\.(md|markdown|txt|rst|html?|pdf))+$", re.IGNORECASE)


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


def document_name(node: BaseNode) -> str:
    """The words of a chunk's document name: its title when a reader recorded one, else its file name."""
    meta = node.metadata or {}
    title = meta.get("title") or meta.get("document_title")
    if isinstance(title, str) and title.strip():
        return title
    name = str(meta.get("file_name") or meta.get("file_path") or node.ref_doc_id or "")
    stem = _SUFFIXES.sub("", PurePath(name).name)
    return f"{stem} {re.sub(r'[_.-]+', ' ', stem)}"


class SparseIndex:
    """BM25 (bm25s) over ``nodes``; ``search`` returns (position, score) pairs, best first."""

    def __init__(self, nodes: Sequence[BaseNode]):
        import bm25s

        self.nodes = list(nodes)
        self.tokenize = Tokenizer()
        vocab: dict[str, int] = {}
        ids = [[vocab.setdefault(t, len(vocab)) for t in self.tokenize(f"{document_name(n)}\n{n.get_content()}")]
               for n in self.nodes]
        self.vocab = vocab
        self.model = bm25s.BM25()
        if self.nodes:
            self.model.index(bm25s.tokenization.Tokenized(ids=ids, vocab=vocab), show_progress=False)

    def search(self, query: str, k: int, keep: Callable[[int], bool] | None = None) -> list[tuple[int, float]]:
        if not self.nodes:
            return []
        terms = [self.vocab[t] for t in self.tokenize(query) if t in self.vocab]
        if not terms:
            return []
        scores = np.asarray(self.model.get_scores(terms), dtype=float)
        if keep is not None:
            scores = np.where([keep(i) for i in range(len(scores))], scores, 0.0)
        order = np.argsort(-scores, kind="stable")[:k]
        return [(int(i), float(scores[i])) for i in order if scores[int(i)] > 0]

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"SparseIndex({len(self.nodes)} chunks, {len(self.vocab)} terms)"


def build(nodes: Sequence[BaseNode]) -> Any:
    return SparseIndex(nodes)
