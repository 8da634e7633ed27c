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
    assert sparse.document_name({"file_name": "runtime-config-wal.html"}) == \
        "runtime-config-wal runtime config wal"
    assert sparse.document_name({"file_name": "os.path.rst.txt"}) == "os.path os path"
    assert sparse.document_name({"file_name": "a.txt", "title": "Write Ahead Log"}) == "Write Ahead Log"


def test_a_question_that_names_the_document_finds_its_chunks():
    nodes = [_node("a", "The setting is described below in detail.", file_name="checkpoints.md"),
             _node("b", "The setting controls how often data is written.", file_name="vacuum.md")]
    index = sparse.SparseIndex.from_nodes(nodes)
    assert [nodes[i].node_id for i, _ in index.search("what does the checkpoints page describe", 2)][0] == "a"
    # an identifier is a token of its own (its parts too): the chunk that has it whole comes first
    index = sparse.SparseIndex.from_nodes([_node("b", "The size of the wal."), _node("a", "Set max_wal_size higher.")])
    assert [i for i, _ in index.search("max_wal_size", 2)] == [1, 0]


def test_ranked_sorts_ties_in_stored_order_past_the_head():
    # More matches than ranked() sorts first: the order must be the full stable sort all the same.
    nodes = [_node(f"n{i:04d}", "wal " * (1 + i % 3) + "filler text here") for i in range(5 * sparse.HEAD)]
    index = sparse.SparseIndex.from_nodes(nodes)
    got = list(index.ranked("wal"))
    assert len(got) == len(nodes)
    assert got == sorted(got, key=lambda pair: (-pair[1], pair[0]))
    assert index.search("wal", 3) == got[:3]


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


def test_sparse_leg_on_lancedb_reads_no_vectors_and_fetches_only_the_winners(tiny_corpus, tmp_path,
                                                                            bundled_embed_model, monkeypatch):
    """The BM25 leg of a stored index: the same ranking as one built from every stored node, built
    from the projected columns (no node, no vector held), the winners read by id; a host filter is
    never widened."""
    from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters

    from ragplugins.testing import make_rag

    rag = make_rag([], {"splitter": "auto"}, embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
    index, _ = rag.index_paths([tiny_corpus])
    store = rag.context(index).store
    model = sparse.build(store)
    every = list(store.iter_nodes())
    reference = sparse.SparseIndex.from_nodes(every)
    assert model.ids == [n.node_id for n in every] and not hasattr(model, "nodes")
    assert None not in model.locators  # LanceDB row ids: the winners are taken by them, not searched for
    a, b = every[0].node_id, every[-1].node_id
    assert [n.node_id for n in store.get_nodes([a], [model.locators[0]])] == [a]
    # a stale locator (another chunk's row) is noticed and the chunk found by id instead
    assert [n.node_id for n in store.get_nodes([a], [model.locators[-1]])] == [a] and a != b
    for query in ("annual fee payable quarterly", "descale the boiler", "Exhibit A termination"):
        assert model.search(query, 8) == reference.search(query, 8), query

    asked: list[list[str]] = []
    get_nodes = type(store).get_nodes
    monkeypatch.setattr(type(store), "get_nodes",
                        lambda self, ids, locators=None: asked.append(list(ids)) or get_nodes(self, ids, locators))
    top = search.sparse_search(store, "annual fee payable quarterly", 2)
    assert [n.node.node_id for n in top] == [model.ids[i] for i, _ in model.search("annual fee payable quarterly", 2)]
    assert asked == [[n.node.node_id for n in top]] and all(n.node.embedding for n in top)

    only = MetadataFilters(filters=[MetadataFilter(key="file_name", value="espresso_manual.md")])
    filtered = search.sparse_search(store, "annual fee payable quarterly descale", 5, only)
    assert filtered and {n.node.metadata["file_name"] for n in filtered} == {"espresso_manual.md"}
    want = {n.node_id for n in every if n.metadata.get("file_name") == "espresso_manual.md"}
    ranked_allowed = [model.ids[i] for i, _ in model.ranked("annual fee payable quarterly descale")
                      if model.ids[i] in want][:5]
    assert [n.node.node_id for n in filtered] == ranked_allowed


def test_a_filtered_search_asks_the_store_which_chunks_pass_once_a_block_leaves_too_few(tmp_path, bundled_embed_model,
                                                                                          monkeypatch):
    """A host filter that keeps one tenant's documents of an index: once the first block of candidates
    leaves fewer than k that pass, the store says which chunks pass (their ids, read from one column) and
    only those are read; the lists are the ones reading candidates until enough pass gives."""
    from llama_index.core.vector_stores.types import FilterOperator, MetadataFilter, MetadataFilters

    from ragplugins.testing import make_rag

    docs = tmp_path / "docs"
    docs.mkdir()
    for n in range(12):
        (docs / f"contract_{n:02d}.md").write_text(f"Contract {n}: the annual fee is {100 + n} euros, payable yearly.")
    (docs / "tenant_b.md").write_text("Tenant B pays its annual fee in spring.")
    rag = make_rag([], embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
    index, _ = rag.index_paths([docs])
    store = rag.context(index).store
    every = list(store.iter_nodes())
    one = MetadataFilters(filters=[MetadataFilter(key="file_name", value="tenant_b.md")])
    want = {n.node_id for n in every if n.metadata.get("file_name") == "tenant_b.md"}
    assert set(store.ids_passing(one)) == want and len(want) == 1 and len(every) == 13
    others = MetadataFilters(filters=[MetadataFilter(key="file_name", value="tenant_b.md",
                                                     operator=FilterOperator.NE)])
    assert set(store.ids_passing(others)) == {n.node_id for n in every} - want

    asked: list[list[str]] = []
    get_nodes = type(store).get_nodes
    monkeypatch.setattr(type(store), "get_nodes",
                        lambda self, ids, locators=None: asked.append(list(ids)) or get_nodes(self, ids, locators))
    lists = {}
    for way, passing in (("store", lambda: store.ids_passing(one)), ("read", None)):
        asked.clear()
        lists[way] = [n.node.node_id for n in search.sparse_search(store, "annual fee euros", 1, one, passing)]
        first, later = set(asked[0]), {i for block in asked[1:] for i in block}
        assert len(first) == 1 and not first <= want, asked        # a contract's chunk leads
        if way == "store":
            assert later == want, asked
        else:
            assert later - want, asked
    assert lists["store"] == lists["read"] == list(want)
    hits = rag.search("annual fee", filters=one).final
    assert [h.node.node_id for h in hits] == list(want)
