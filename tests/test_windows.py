"""Embedding windows: a chunk longer than the embedder reads is embedded as a whole."""

from __future__ import annotations

import numpy as np
from llama_index.core import MockEmbedding
from llama_index.core.schema import TextNode

from ragplugins.windows import WindowedEmbedding, embedder_reader, window_texts

FILLER = " ".join(f"The committee reviewed budget line {i} and approved it without changes." for i in range(40))
FACT = "Tardigrades survive in outer space by entering a dried tun state."


def _cos(a, b) -> float:
    a, b = np.asarray(a), np.asarray(b)
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


def test_windows_cover_the_whole_chunk_with_its_header(bundled_embed_model):
    tokenizer, limit = embedder_reader(bundled_embed_model)
    node = TextNode(text=FILLER + " " + FACT, metadata={"file_path": "minutes.txt"})
    texts = window_texts(tokenizer, limit, node)
    assert len(texts) >= 1
    assert all(t.startswith("file_path: minutes.txt") for t in texts)
    # Each window runs from where the previous one stopped to the chunk's end (the embedder cuts it).
    assert texts[0].endswith(FACT) and texts[-1].endswith("tun state.")
    assert [len(t) for t in texts] == sorted((len(t) for t in texts), reverse=True)
    assert window_texts(tokenizer, limit, TextNode(text=FACT)) == []


def test_a_fact_past_what_the_embedder_reads_moves_the_vector_toward_it(bundled_embed_model):
    long = TextNode(text=FILLER + " " + FACT, id_="long")
    short = TextNode(text=FACT, id_="short")
    plain = bundled_embed_model([long.model_copy(), short.model_copy()])
    windowed = WindowedEmbedding(embed_model=bundled_embed_model)([long, short])
    query = bundled_embed_model.get_query_embedding("How do tardigrades survive in space?")
    assert _cos(query, windowed[0].embedding) > _cos(query, plain[0].embedding) + 0.05
    assert np.allclose(windowed[1].embedding, plain[1].embedding)  # a chunk it reads whole is unchanged


def test_an_embedder_without_a_known_tokenizer_keeps_its_own_vectors():
    mock = MockEmbedding(embed_dim=8)
    nodes = WindowedEmbedding(embed_model=mock)([TextNode(text=FILLER)])
    assert nodes[0].embedding == mock.get_text_embedding(FILLER)
