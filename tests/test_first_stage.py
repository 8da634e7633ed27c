"""The first stage's BM25 leg (ragplugins.sparse) and the fusion of the two legs (search.fuse)."""

from __future__ import annotations

from llama_index.core.schema import NodeWithScore, TextNode

from ragplugins import search, sparse
from ragplugins.nodes import annotation


def _node(node_id: str, text: str, file_name: str = "a.txt", **meta) -> TextNode:
    return TextNode(id_=node_id, text=text, metadata={"file_name": file_name, **meta})


def test_tokens_keep_identifiers_snake_case_parts_and_section_numbers():
    tokens = sparse.Tokenizer()("See Section 25.1.3 and set max_wal_size, then run git-config or os.path.join.")
    for expected in ("25.1.3", "max_wal_size", "max", "wal", "size", "git-config", "os.path.join", "section"):
        assert expected in tokens, expected
    assert "the" not in tokens and "and" not in tokens  # stop words dropped
    assert "run" in sparse.Tokenizer()("running")  # stemmed


def test_document_name_is_the_title_or_the_file_name_in_words():
    assert sparse.document_name(_node("n", "x", file_name="runtime-config-wal.html")) == \
        "runtime-config-wal runtime config wal"
    assert sparse.document_name(_node("n", "x", file_name="os.path.rst.txt")) == "os.path os path"
    assert sparse.document_name(_node("n", "x", title="Write Ahead Log")) == "Write Ahead Log"


def test_a_question_that_names_the_document_finds_its_chunks():
    nodes = [_node("a", "The setting is described below in detail.", file_name="checkpoints.md"),
             _node("b", "The setting controls how often data is written.", file_name="vacuum.md")]
    index = sparse.SparseIndex(nodes)
    assert [nodes[i].node_id for i, _ in index.search("what does the checkpoints page describe", 2)][0] == "a"
    # an identifier is a token of its own (its parts too): the chunk that has it whole comes first
    index = sparse.SparseIndex([_node("b", "The size of the wal."), _node("a", "Set max_wal_size higher.")])
    assert [i for i, _ in index.search("max_wal_size", 2)] == [1, 0]


def test_filtered_sparse_search_never_returns_an_excluded_chunk():
    nodes = [_node("a", "wal settings", file_name="a.txt"), _node("b", "wal settings again", file_name="b.txt")]
    index = sparse.SparseIndex(nodes)
    assert [i for i, _ in index.search("wal", 2, keep=lambda i: nodes[i].node_id != "a")] == [1]


def _nws(node_id: str, score: float, cosine: float | None = None) -> NodeWithScore:
    nws = NodeWithScore(node=_node(node_id, node_id), score=score)
    return search.annotate(nws, dense_cosine=cosine) if cosine is not None else nws


def test_distribution_fusion_lets_the_leg_whose_best_result_stands_out_lead():
    ids = [f"n{i:02d}" for i in range(20)]
    # dense: evenly spread cosines, no clear winner; BM25: n10 far above a flat rest
    dense = [_nws(i, 0.0, 0.50 - 0.001 * n) for n, i in enumerate(ids)]
    sparse_list = [NodeWithScore(node=_node("n10", "n10"), score=12.0)] + \
                  [NodeWithScore(node=_node(i, i), score=1.0 - 0.01 * n) for n, i in enumerate(ids) if i != "n10"]
    assert search.fuse(dense, sparse_list, 3, "distribution")[0].node.node_id == "n10"
    # reciprocal-rank fusion ignores how far apart the scores are: n00 (ranks 1 and 2) wins
    assert search.fuse(dense, sparse_list, 3, "rrf")[0].node.node_id == "n00"


def test_fusion_records_each_legs_rank_and_keeps_k():
    dense = [_nws("a", 0.9, 0.9), _nws("b", 0.8, 0.8)]
    sparse_list = [NodeWithScore(node=_node("b", "b"), score=3.0), NodeWithScore(node=_node("c", "c"), score=1.0)]
    fused = search.fuse(dense, sparse_list, 2, "distribution")
    assert len(fused) == 2
    by_id = {n.node.node_id: annotation(n) for n in fused}
    assert by_id["b"]["dense_rank"] == 2 and by_id["b"]["sparse_rank"] == 1
