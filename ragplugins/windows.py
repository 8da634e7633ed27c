"""Letting an embedder that reads only the start of a chunk see all of it.

MiniLM reads 256 word pieces; a 512-token chunk of documentation has about 550, so the dense leg
never sees the second half of most chunks. A chunk's windows: the chunk as usual (the embedder reads
its start), then the text from where the embedder stopped, with the same metadata header in front,
until the chunk is covered.

- ``window_scoring = "either"`` (the default) and ``"blend"``: every window's vector is kept with its chunk
  (metadata key ``ragplugins_windows``, hidden from the embedded and the LLM text, and left out of the
  results a host or a plugin receives: ``ragplugins.search.for_callers``) and read into memory at query
  time like the BM25 leg (:class:`WindowIndex`). ``either``: the dense leg ranks the chunks
  twice, by their first window's cosine and by the mean of their first and best windows' cosines,
  normalises each ranking's top on its own, and gives a chunk the better of its two places
  (``ragplugins.search.window_dense_search``): a chunk whose opening matches keeps what the first
  window gives it, and one whose answer lies past what the embedder reads is found by its window.
  ``blend``: one score, the first window's cosine plus a quarter of the way to the best window's.
  The chunk's own vector stays its first window's.
- ``embed_windows = true``: a chunk's vector is the mean of its windows' vectors (one vector per
  chunk, so the query side is unchanged).

An embedder whose tokenizer and input length cannot be found (not a sentence-transformers model) is
left as it is: its vectors are the usual ones.
"""

from __future__ import annotations

import base64
import functools
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from llama_index.core.bridge.pydantic import Field
from llama_index.core.schema import BaseNode, MetadataMode, TransformComponent

from ragplugins import trace
from ragplugins.headings import Heading, chunk_headings, heading_path
from ragplugins.nodes import hide_metadata
from ragplugins.stores.base import WINDOWS_KEY

# How far a chunk's dense score moves from its first window's cosine toward its best window's. Measured
# on dev (bench/sections/core.md, 2026-12-02): 0.5 lifts six corpora and loses a python question; 0.25
# lifts six and lowers none.
BEST_WINDOW_SHARE = 0.25
_MIN_STEP = 32   # word pieces of the chunk's own text a window reads at least


def embedder_reader(embed_model: Any) -> tuple[Any, int] | None:
    """(tokenizer, word pieces read per text, special tokens excluded) of an embedder that names its
    model (``model_name``: a local folder or a Hub name in the local cache, with a ``tokenizer.json``)
    and its input length (``max_length``), as LlamaIndex's HuggingFaceEmbedding and the bundled ONNX
    embedder do, or that wraps such an embedder (``wrapped_embed_model``); else None."""
    wrapped = getattr(embed_model, "wrapped_embed_model", None)
    if wrapped is not None:  # a wrapper (a cache, say) that embeds with another embedder: that one's reader
        return embedder_reader(wrapped)
    name, length = getattr(embed_model, "model_name", None), getattr(embed_model, "max_length", None)
    if not isinstance(name, str) or not isinstance(length, int) or length < 8:
        return None
    path: Any = Path(name).expanduser() / "tokenizer.json"
    if not path.is_file():
        from huggingface_hub import try_to_load_from_cache

        try:
            path = try_to_load_from_cache(name, "tokenizer.json")
        except ValueError:  # not a Hub name (huggingface_hub's HFValidationError)
            path = None
        if not isinstance(path, str):
            return None
    return _tokenizer(str(path)), length - 2  # [CLS] and [SEP]


@functools.lru_cache(maxsize=8)
def _tokenizer(path: str) -> Any:
    """The tokenizer in ``path``, read once per process (every indexing batch asks for it)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(path)
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def window_texts(tokenizer: Any, limit: int, node: BaseNode, found: Sequence[Heading] = ()) -> list[str]:
    """The texts the embedder still has to read to cover ``node``: each starts where the previous
    window stopped, with the node's metadata header (as embedded) in front and, given the headings of
    its document around the chunk (``found``, ``ragplugins.headings.chunk_headings``), the headings in
    force where the window starts (a window that opens mid-section says which section it is in)."""
    full, content = node.get_content(MetadataMode.EMBED), node.get_content()
    header = full[: len(full) - len(content)] if content and full.endswith(content) else ""
    offsets = tokenizer.encode(full, add_special_tokens=False).offsets
    header_pieces = len(tokenizer.encode(header, add_special_tokens=False).ids)
    if len(offsets) <= limit or limit - header_pieces < 1:
        return []
    lead_pieces = {"": header_pieces}   # by heading path: a chunk's windows share most of theirs
    texts, piece = [], limit
    while piece < len(offsets):
        at = offsets[piece][0]
        path = heading_path(found, at - len(header))
        lead = header + (path + "\n\n" if path else "")
        if path not in lead_pieces:
            lead_pieces[path] = len(tokenizer.encode(lead, add_special_tokens=False).ids)
        texts.append(lead + full[at:])
        # A window reads ``limit`` word pieces, its lead's among them; a long lead still leaves some text.
        piece += max(limit - lead_pieces[path], _MIN_STEP)
    return texts


def encode_windows(vectors: Sequence[Sequence[float]] | np.ndarray) -> str:
    """A chunk's window vectors (first window first) as one metadata string: ``"<dim>:<base64 float32>"``."""
    array = np.asarray(vectors, dtype=np.float32)
    return f"{array.shape[1]}:{base64.b64encode(array.tobytes()).decode('ascii')}"


def decode_windows(value: Any) -> np.ndarray | None:
    """The window vectors (one row per window) ``encode_windows`` wrote, or None for anything else."""
    if not isinstance(value, str) or ":" not in value:
        return None
    dim, _, data = value.partition(":")
    try:
        array = np.frombuffer(base64.b64decode(data), dtype=np.float32)
        return array.reshape(-1, int(dim)) if int(dim) > 0 and array.size % int(dim) == 0 and array.size else None
    except ValueError:
        return None


class WindowedEmbedding(TransformComponent):
    """The embedder's own transformation, then each chunk's later windows embedded: kept with the chunk
    (``keep_windows``, for window scoring) and/or averaged into its vector (``mean_vector``: the mean of its
    windows' unit vectors, at the first vector's length)."""

    embed_model: Any = Field(description="The LlamaIndex embedder that embeds the chunks.")
    mean_vector: bool = Field(True, description="Replace a chunk's vector by the mean of its windows' vectors.")
    keep_windows: bool = Field(False, description=f"Keep every window's vector in metadata '{WINDOWS_KEY}'.")
    headings: bool = Field(False, description="Put the headings in force where a later window starts in front "
                                              "of it (ragplugins.headings; the core's window_headings).")

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins.WindowedEmbedding"

    def __call__(self, nodes: Sequence[BaseNode], **kwargs: Any) -> Sequence[BaseNode]:
        reader = embedder_reader(self.embed_model)
        if reader is None:
            return self.embed_model(nodes, **kwargs)
        texts, owners = [], []
        found = chunk_headings(nodes) if self.headings else {}
        for position, node in enumerate(nodes):
            for text in window_texts(*reader, node, found.get(node.node_id, ())):
                texts.append(text)
                owners.append(position)
        # Announced before anything is embedded, so a progress display's time left counts them (ragplugins.progress).
        trace.dispatcher.event(trace.RagPluginsEvent(plugin="core", action="windows", data={"texts": len(texts)}))
        nodes = self.embed_model(nodes, **kwargs)
        extra: dict[int, list[list[float]]] = {}
        vectors = self.embed_model.get_text_embedding_batch(texts) if texts else []
        for position, vector in zip(owners, vectors):
            extra.setdefault(position, []).append(vector)
        for position, node in enumerate(nodes):
            first = np.asarray(node.embedding, dtype=np.float64)
            stack = np.asarray([first, *extra.get(position, [])], dtype=np.float64)
            stack /= np.linalg.norm(stack, axis=1, keepdims=True) + 1e-12
            if self.keep_windows:  # every chunk, one window or several: the query side needs them all
                node.metadata[WINDOWS_KEY] = encode_windows(stack)
                hide_metadata(node, [WINDOWS_KEY])
            if self.mean_vector and position in extra:
                mean = stack.mean(axis=0)
                node.embedding = (mean / (np.linalg.norm(mean) + 1e-12) * np.linalg.norm(first)).tolist()
        return nodes


class WindowIndex:
    """Every stored chunk's window vectors in memory (built from the store's rows, like the BM25 leg), to
    score chunks by their windows. ``complete``: every chunk has them (else the index was written without
    window scoring, and the dense leg stays the store's own search)."""

    def __init__(self, rows: Iterable[Any]):
        self.ids: list[str] = []
        self.locators: list[Any] = []
        blocks: list[np.ndarray] = []
        counts: list[int] = []
        self.complete = True
        for row in rows:
            windows = decode_windows(row.metadata.get(WINDOWS_KEY))
            if windows is None:
                # One chunk without them decides (the dense leg reads first windows): stop reading, so an
                # index written without windows costs one batch of rows, not a scan of the table.
                self.complete = False
                break
            counts.append(len(windows))
            self.ids.append(row.id)
            self.locators.append(row.locator)
            blocks.append(windows)
        dims = {b.shape[1] for b in blocks}
        if len(dims) > 1:
            self.complete = False
        self.vectors = np.concatenate(blocks) if blocks and len(dims) == 1 else np.zeros((0, 1), dtype=np.float32)
        # Each chunk's first window: its windows are stacked in order, first first.
        per_chunk = np.asarray(counts, dtype=np.int64)
        self.first = np.cumsum(per_chunk) - per_chunk

    @classmethod
    def build(cls, store: Any) -> WindowIndex:
        """From ``store`` (a StoreAdapter), read without vectors."""
        return cls(store.iter_chunk_rows([WINDOWS_KEY]))

    def first_and_best(self, query_embedding: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
        """Per chunk (in ``ids`` order): its first window's cosine and its best window's."""
        query = np.asarray(query_embedding, dtype=np.float32)
        if query.shape[0] != self.vectors.shape[1]:
            raise ValueError(f"the query vector has {query.shape[0]} dimensions, the stored windows "
                             f"{self.vectors.shape[1]}: index and query embedders differ")
        cosines = self.vectors @ (query / (np.linalg.norm(query) + 1e-12))
        best = np.maximum.reduceat(cosines, self.first)  # each chunk's windows are contiguous, first first
        return cosines[self.first], best

    def scores(self, query_embedding: Sequence[float], share: float = BEST_WINDOW_SHARE) -> np.ndarray:
        """Per chunk (in ``ids`` order): first window's cosine + ``share`` x (best window's - first's)."""
        first, best = self.first_and_best(query_embedding)
        return first + share * (best - first)
