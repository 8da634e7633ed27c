"""Window scoring: the dense leg scores a chunk by its windows, read from the window vectors kept with every
chunk: "either" (the default) gives a chunk the better of its places in the first-window ranking and the
(first + best window) / 2 ranking; "blend" scores it by its first window's cosine plus a quarter of the way
to its best window's."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
from llama_index.core.schema import MetadataMode, NodeWithScore
from llama_index.core.vector_stores.types import FilterOperator, MetadataFilter, MetadataFilters

import ragplugins
from ragplugins.api import query_scope
from ragplugins.nodes import annotate, annotation
from ragplugins.search import _distribution_normalised, fuse
from ragplugins.stores.base import ChunkRow
from ragplugins.windows import (
    BEST_WINDOW_SHARE,
    WINDOWS_KEY,
    WindowIndex,
    decode_windows,
    embedder_reader,
    encode_windows,
    window_texts,
)

FILLER = " ".join(f"The committee reviewed budget line {i} and approved it without changes." for i in range(21))
FACT = "Tardigrades survive in outer space by entering a dried tun state."
QUERY = "How do tardigrades survive in outer space?"
OTHERS = {
    "bread.txt": "Knead the dough for ten minutes, then let it rise in a warm place for an hour.",
    "tyres.txt": "Check the tyre pressure of the car once a month and before long journeys.",
    "chess.txt": "In chess, castling moves the king two squares toward a rook.",
    "garden.txt": "Water tomato plants in the morning so their leaves dry before evening.",
}


def _corpus(folder: Path) -> Path:
    folder.mkdir()
    (folder / "minutes.txt").write_text(FILLER + " " + FACT)
    for name, text in OTHERS.items():
        (folder / name).write_text(text)
    return folder


def _app(tmp_path: Path, embed, scoring: str, persist: str = "index"):
    return ragplugins.load({"ragplugins": {"enable": [], "retrieval": "dense", "top_k": 5,
                                           "window_scoring": scoring, "persist_dir": str(tmp_path / persist)}},
                           embed_model=embed)


def _names(result) -> list[str]:
    return [n.node.metadata["file_name"] for n in result.final]


def _cos(a, b) -> float:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


def test_windows_round_trip_through_their_metadata_string():
    vectors = np.random.default_rng(0).normal(size=(3, 8)).astype(np.float32)
    assert np.array_equal(decode_windows(encode_windows(vectors)), vectors)
    assert decode_windows("not windows") is None and decode_windows(None) is None


def test_a_chunk_scores_its_first_window_plus_a_quarter_of_the_way_to_its_best():
    first, later = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    rows = [ChunkRow("long", "d1", "", {WINDOWS_KEY: encode_windows([first, later])}),
            ChunkRow("short", "d2", "", {WINDOWS_KEY: encode_windows([[0.6, 0.8]])})]
    windows = WindowIndex(rows)
    scores = windows.scores([0.0, 1.0])
    assert windows.complete and windows.ids == ["long", "short"]
    assert scores[0] == pytest.approx(0.0 + BEST_WINDOW_SHARE * (1.0 - 0.0))  # first 0, best 1
    assert scores[1] == pytest.approx(0.8)  # one window: its cosine
    assert not WindowIndex([*rows, ChunkRow("old", "d3", "", {})]).complete


def _window_cosines(embed, node, query) -> list[float]:
    """The cosines of ``node``'s windows with ``query``, from the embedder's own vectors of the window texts."""
    texts = [node.get_content(MetadataMode.EMBED), *window_texts(*embedder_reader(embed), node)]
    return [_cos(query, embed.get_text_embedding(t)) for t in texts]


def test_an_answer_past_what_the_embedder_reads_is_found_by_its_window(tmp_path, bundled_embed_model):
    corpus = _corpus(tmp_path / "corpus")
    found, apps = {}, {}
    for scoring in ("off", "blend", "either"):
        rp = apps[scoring] = _app(tmp_path, bundled_embed_model, scoring, persist=scoring)
        rp.index_paths([corpus])
        found[scoring] = rp.search(QUERY)
    # Read by its first window only, the chunk is budget minutes; its later window holds the answer.
    assert _names(found["off"])[0] != "minutes.txt"
    assert _names(found["blend"])[0] == "minutes.txt"
    assert _names(found["either"])[0] == "minutes.txt"
    # The score is what the rule says, from the embedder's own vectors of the chunk's windows.
    hit = found["blend"].final[0]
    query = bundled_embed_model.get_query_embedding(QUERY)
    cosines = _window_cosines(bundled_embed_model, hit.node, query)
    assert len(cosines) >= 2
    expected = cosines[0] + BEST_WINDOW_SHARE * (max(cosines) - cosines[0])
    assert annotation(hit)["dense_window_score"] == pytest.approx(expected, abs=1e-4)
    assert annotation(hit)["dense_cosine"] == pytest.approx(cosines[0], abs=1e-4)  # still the chunk's own vector
    # The window vectors stay with the stored chunk: they reach neither the embedded or the LLM text nor the
    # results a host receives (about 6 KB a chunk it would carry into every response it serializes).
    rp = apps["blend"]
    [stored] = rp.context().store.get_nodes([hit.node.node_id])
    assert WINDOWS_KEY in stored.metadata
    assert "ragplugins_windows" not in stored.get_content(MetadataMode.LLM)
    assert "ragplugins_windows" not in stored.get_content(MetadataMode.EMBED)
    for result in (found["either"], found["off"]):
        assert not any(WINDOWS_KEY in n.node.metadata for n in [*result.first_stage, *result.final])
    inside = rp.context().search_within_documents  # a plugin's search inside documents: the same
    with query_scope(QUERY, filters=None):
        assert not any(WINDOWS_KEY in n.node.metadata for n in inside(QUERY, ["minutes.txt"], 3))
    # ... which ranks as the dense leg does, later windows included (a new user's m4 manual: crossref's hop brought
    # a page's chunk by its first window, not the one whose later half answered).
    for scoring in ("off", "either"):
        with query_scope(QUERY, filters=None):
            top = apps[scoring].context().search_within_documents(QUERY, ["minutes.txt", *OTHERS], 5)[0]
        assert (top.node.metadata["file_name"] == "minutes.txt") == (scoring == "either")


def test_either_gives_each_chunk_the_better_of_its_two_normalised_places(tmp_path, bundled_embed_model):
    rp = _app(tmp_path, bundled_embed_model, "either")
    rp.index_paths([_corpus(tmp_path / "corpus")])
    hits = rp.search(QUERY).final
    assert len(hits) == 5  # every chunk: both rankings list all of them
    query = bundled_embed_model.get_query_embedding(QUERY)
    cosines = {h.node.node_id: _window_cosines(bundled_embed_model, h.node, query) for h in hits}
    ids = list(cosines)
    first = dict(zip(ids, _distribution_normalised([cosines[i][0] for i in ids])))
    windows = dict(zip(ids, _distribution_normalised([(cosines[i][0] + max(cosines[i])) / 2 for i in ids])))
    expected = {i: max(first[i], windows[i]) for i in ids}
    assert [annotation(h)["dense_part"] for h in hits] == pytest.approx([expected[h.node.node_id] for h in hits],
                                                                        abs=1e-4)
    assert [h.node.node_id for h in hits] == sorted(ids, key=lambda i: -expected[i])
    # The long chunk's first window alone would not put it first; its windows do.
    top = hits[0].node
    assert top.metadata["file_name"] == "minutes.txt" and windows[top.node_id] > first[top.node_id]


def test_fusion_adds_a_dense_part_as_it_is():
    from llama_index.core.schema import TextNode

    def hit(name: str, score: float, **fields) -> NodeWithScore:
        return annotate(NodeWithScore(node=TextNode(id_=name, text=name), score=score), **fields)

    dense = [hit("a", 0.9, dense_part=0.2), hit("b", 0.1, dense_part=0.7)]
    sparse = [hit("a", 3.0), hit("c", 1.0)]
    fused = {n.node.node_id: n.score for n in fuse(dense, sparse, 3)}
    bm25 = dict(zip("ac", _distribution_normalised([3.0, 1.0])))
    assert fused == pytest.approx({"a": 0.2 + bm25["a"], "b": 0.7, "c": bm25["c"]})


@pytest.mark.parametrize("scoring", ["either", "blend"])
def test_window_scoring_keeps_the_callers_filters(tmp_path, bundled_embed_model, scoring):
    rp = _app(tmp_path, bundled_embed_model, scoring)
    rp.index_paths([_corpus(tmp_path / "corpus")])
    only = MetadataFilters(filters=[MetadataFilter(key="file_name", value=["chess.txt", "garden.txt"],
                                                   operator=FilterOperator.IN)])
    assert sorted(_names(rp.search(QUERY, filters=only))) == ["chess.txt", "garden.txt"]


def test_an_index_written_without_windows_is_searched_by_first_windows(tmp_path, bundled_embed_model, caplog):
    corpus = _corpus(tmp_path / "corpus")
    old = _app(tmp_path, bundled_embed_model, "off")
    old.index_paths([corpus])
    expected = _names(old.search(QUERY))
    with caplog.at_level(logging.INFO, logger="ragplugins.search"):
        assert _names(_app(tmp_path, bundled_embed_model, "either").search(QUERY)) == expected
    assert "re-index" in caplog.text


def test_an_index_with_windows_for_only_some_chunks_warns_and_reads_first_windows(tmp_path, bundled_embed_model,
                                                                                  caplog):
    corpus = _corpus(tmp_path / "corpus")
    _app(tmp_path, bundled_embed_model, "blend").index_paths([corpus])
    (tmp_path / "more").mkdir()
    (tmp_path / "more" / "kites.txt").write_text("Fly a kite on a windy day in an open field.")
    _app(tmp_path, bundled_embed_model, "off").index_paths([tmp_path / "more"])  # no windows for this one
    expected = _names(_app(tmp_path, bundled_embed_model, "off").search(QUERY))
    with caplog.at_level(logging.WARNING, logger="ragplugins.search"):
        assert _names(_app(tmp_path, bundled_embed_model, "blend").search(QUERY)) == expected
    assert "some chunks of this index have window vectors" in caplog.text
