"""Letting an embedder that reads only the start of a chunk see all of it.

MiniLM reads 256 word pieces; a 512-token chunk of documentation has about 550, so the dense leg
never sees the second half of most chunks. With ``embed_windows = true`` a chunk's vector is the mean
of its windows' vectors: the chunk as usual (the embedder reads its start), then the text from
where the embedder stopped, with the same metadata header in front, until the chunk is covered.
One vector per chunk, so the store and the query side are unchanged.

An embedder whose tokenizer and input length cannot be found (not a sentence-transformers model) is
left as it is: its vectors are the usual ones.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from llama_index.core.bridge.pydantic import Field
from llama_index.core.schema import BaseNode, MetadataMode, TransformComponent


def embedder_reader(embed_model: Any) -> tuple[Any, int] | None:
    """(tokenizer, word pieces read per text, special tokens excluded) of an embedder that names its
    model (``model_name``: a local folder or a Hub name in the local cache, with a ``tokenizer.json``)
    and its input length (``max_length``), as LlamaIndex's HuggingFaceEmbedding and the bundled ONNX
    embedder do; else None."""
    name, length = getattr(embed_model, "model_name", None), getattr(embed_model, "max_length", None)
    if not isinstance(name, str) or not isinstance(length, int) or length < 8:
        return None
    path: Any = Path(name).expanduser() / "tokenizer.json"
    if not path.is_file():
        from huggingface_hub import try_to_load_from_cache

        path = try_to_load_from_cache(name, "tokenizer.json")
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


def window_texts(tokenizer: Any, limit: int, node: BaseNode) -> list[str]:
    """The texts the embedder still has to read to cover ``node``: each starts where the previous
    window stopped, with the node's metadata header (as embedded) in front."""
    full, content = node.get_content(MetadataMode.EMBED), node.get_content()
    header = full[: len(full) - len(content)] if content and full.endswith(content) else ""
    offsets = tokenizer.encode(full, add_special_tokens=False).offsets
    step = limit - len(tokenizer.encode(header, add_special_tokens=False).ids)
    if len(offsets) <= limit or step < 1:
        return []
    return [header + full[offsets[start][0]:] for start in range(limit, len(offsets), step)]


class WindowedEmbedding(TransformComponent):
    """The embedder's own transformation, then each chunk longer than it reads re-embedded as the
    mean of its windows' unit vectors (at the first vector's length)."""

    embed_model: Any = Field(description="The LlamaIndex embedder that embeds the chunks.")

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins.WindowedEmbedding"

    def __call__(self, nodes: Sequence[BaseNode], **kwargs: Any) -> Sequence[BaseNode]:
        nodes = self.embed_model(nodes, **kwargs)
        reader = embedder_reader(self.embed_model)
        if reader is None:
            return nodes
        texts, owners = [], []
        for position, node in enumerate(nodes):
            for text in window_texts(*reader, node):
                texts.append(text)
                owners.append(position)
        if not texts:
            return nodes
        extra: dict[int, list[list[float]]] = {}
        for position, vector in zip(owners, self.embed_model.get_text_embedding_batch(texts)):
            extra.setdefault(position, []).append(vector)
        for position, vectors in extra.items():
            node = nodes[position]
            first = np.asarray(node.embedding, dtype=np.float64)
            stack = np.asarray([first, *vectors], dtype=np.float64)
            stack /= np.linalg.norm(stack, axis=1, keepdims=True) + 1e-12
            mean = stack.mean(axis=0)
            node.embedding = (mean / (np.linalg.norm(mean) + 1e-12) * np.linalg.norm(first)).tolist()
        return nodes
