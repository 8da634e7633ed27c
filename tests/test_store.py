"""The embedded LanceDB store: upserts, deletes, incremental adds, schema, filters, embedder identity."""

import warnings

import pytest
from llama_index.core import Document
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
)

import ragplugins.store as store_module
from ragplugins import EmbedderMismatchError
from ragplugins.store import RagLanceDBVectorStore
from ragplugins.testing import make_rag


def _texts(rag):
    return sorted(n.get_content() for n in rag.context(rag.index()).all_nodes())


def _doc(doc_id, text, **meta):
    return Document(text=text, id_=doc_id, metadata=meta)


def test_reindex_changed_delete_and_incremental_add(tmp_path, bundled_embed_model):
    rag = make_rag([], embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
    rag.build_index(
        [_doc("a.md", "Alpha policy: refunds within 30 days."), _doc("b.md", "Beta guide: reset the router.")]
    )
    ctx = rag.context(rag.index())
    assert set(ctx.list_documents()) == {"a.md", "b.md"}
    # Changed document: re-indexed, the other untouched, nothing duplicated.
    rag.build_index([_doc("a.md", "Alpha policy: refunds within 45 days.")])
    assert _texts(rag) == ["Alpha policy: refunds within 45 days.", "Beta guide: reset the router."]
    # Unchanged: skipped.
    _, report = rag._upsert([_doc("b.md", "Beta guide: reset the router.")])
    assert report.unchanged == ["b.md"] and report.chunks_written == 0
    # Incremental add with a new metadata key the table has never seen: the table is migrated once
    # (nothing lost, no "cannot be filtered on" warning) and the key can be filtered on.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rag.build_index([_doc("c.md", "Gamma note: the office opens at 9.", team="ops")])
    assert not [w for w in caught if "cannot be filtered on" in str(w.message)]
    assert len(_texts(rag)) == 3
    gamma = [n for n in ctx.all_nodes() if n.ref_doc_id == "c.md"][0]
    assert gamma.metadata["team"] == "ops"
    team = MetadataFilters(filters=[MetadataFilter(key="team", value="ops")])
    assert [n.ref_doc_id for n in rag.index().vector_store.get_nodes(filters=team)] == ["c.md"]
    # Delete.
    assert rag.delete_documents(["a.md", "zzz.md"]) == ["a.md"]
    assert set(ctx.list_documents()) == {"b.md", "c.md"}
    # Reopen from disk in a new process-like object: everything is still there and searchable.
    again = make_rag([], embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
    assert len(_texts(again)) == 2
    assert again.search("router reset").final[0].node.ref_doc_id == "b.md"


def test_failed_transformation_leaves_index_intact(tmp_path, bundled_embed_model, plugin_module):
    from llama_index.core.schema import TransformComponent

    from ragplugins import Contribution

    class Breaks(TransformComponent):
        @classmethod
        def class_name(cls):
            return "tests.Breaks"

        def __call__(self, nodes, **kw):
            raise RuntimeError("transform failed")

    rag = make_rag([], embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
    rag.build_index([_doc("a.md", "Alpha policy: refunds within 30 days.")])
    broken = make_rag(
        [plugin_module("breaker", ragplugins_transformations=lambda: [Contribution(Breaks(), "post_split")])],
        embed_model=bundled_embed_model,
        persist_dir=tmp_path / "idx",
    )
    with pytest.raises(Exception, match="transform failed"):
        broken.build_index([_doc("a.md", "Alpha policy: refunds within 99 days.")])
    assert _texts(rag) == ["Alpha policy: refunds within 30 days."]


def test_opening_with_another_embedder_is_refused(tmp_path, bundled_embed_model):
    rag = make_rag([], embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
    rag.build_index([_doc("a.md", "Alpha.")])
    other = make_rag([], embed_model=MockEmbedding(embed_dim=384), persist_dir=tmp_path / "idx")
    with pytest.raises(EmbedderMismatchError, match="was built with embedder 'HuggingFaceEmbedding:.*all-MiniLM"):
        other.index()


def _store(tmp_path):
    store = RagLanceDBVectorStore(uri=str(tmp_path / "db"), table_name="t", declared_metadata={"score": float})
    nodes = []
    for i, (doc, kind) in enumerate([("d1", "x"), ("d'2", "y"), ("d3", "x")]):
        n = TextNode(
            text=f"text {i}", id_=f"n{i}", metadata={"kind": kind, "score": float(i)}, embedding=[1.0, float(i)]
        )
        n.relationships = {}
        from llama_index.core.schema import NodeRelationship, RelatedNodeInfo

        n.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=doc)
        nodes.append(n)
    store.add(nodes)
    return store


def _ids(store, filters):
    return sorted(n.node_id for n in store.get_nodes(filters=filters))


def test_filters_quote_nest_and_negate(tmp_path):
    store = _store(tmp_path)
    f = MetadataFilter
    assert _ids(store, MetadataFilters(filters=[f(key="doc_id", value="d'2")])) == ["n1"]
    assert _ids(store, MetadataFilters(filters=[f(key="kind", value="x", operator=FilterOperator.NE)])) == ["n1"]
    nested = MetadataFilters(filters=[f(key="kind", value="x"), MetadataFilters(
        filters=[f(key="score", value=0.0), f(key="doc_id", value="d3")], condition=FilterCondition.OR)])
    assert _ids(store, nested) == ["n0", "n2"]
    negated = MetadataFilters(filters=[f(key="kind", value="x")], condition=FilterCondition.NOT)
    assert _ids(store, negated) == ["n1"]
    assert _ids(store, MetadataFilters(filters=[f(key="doc_id", value=["d1", "d3"], operator=FilterOperator.NIN)])) == [
        "n1"
    ]
    with pytest.raises(ValueError, match="cannot filter on metadata key 'colour'"):
        store.get_nodes(filters=MetadataFilters(filters=[f(key="colour", value="red")]))


def test_empty_result_deletes_and_get_nodes(tmp_path):
    store = _store(tmp_path)
    q = VectorStoreQuery(query_embedding=[1.0, 0.0], similarity_top_k=5,
                         filters=MetadataFilters(filters=[MetadataFilter(key="kind", value="nothing")]))
    assert store.query(q).nodes == []
    store.delete("d'2")
    store.delete_nodes(["n0"])
    assert [n.node_id for n in store.get_nodes()] == ["n2"]
    assert store.get_nodes(node_ids=["n2"])[0].embedding == [1.0, 2.0]


def test_update_metadata_keeps_text_and_vectors(tmp_path):
    store = _store(tmp_path)
    before = {n.node_id: (n.get_content(), n.embedding) for n in store.get_nodes()}
    assert store.update_metadata({"n1": {"kind": "z"}}) == 1
    after = {n.node_id: n for n in store.get_nodes()}
    assert {k: (n.get_content(), n.embedding) for k, n in after.items()} == before
    assert after["n1"].metadata["kind"] == "z"
    assert _ids(store, MetadataFilters(filters=[MetadataFilter(key="kind", value="z")])) == ["n1"]


def test_update_metadata_over_many_reads_is_one_write(tmp_path, monkeypatch):
    """An update larger than one read (ids read back a slice at a time) is still one table version, and
    ids that are not stored are left out; an update of none of the stored ids writes nothing."""
    monkeypatch.setattr(store_module, "UPDATE_SLICE_ROWS", 2)
    store = _store(tmp_path)
    before = {n.node_id: (n.get_content(), n.embedding) for n in store.get_nodes()}
    version = store.table.version
    assert store.update_metadata({"n0": {"kind": "a"}, "gone": {"kind": "b"}, "n1": {"kind": "c"},
                                  "n2": {"kind": "d"}}) == 3
    assert store.table.version == version + 1
    after = {n.node_id: n for n in store.get_nodes()}
    assert {k: n.metadata["kind"] for k, n in after.items()} == {"n0": "a", "n1": "c", "n2": "d"}
    assert {k: (n.get_content(), n.embedding) for k, n in after.items()} == before
    assert store.update_metadata({"gone": {"kind": "e"}}) == 0
    assert store.table.version == version + 1


def _vector_nodes(rng, start: int, count: int, dim: int = 32) -> list[TextNode]:
    import numpy as np

    vectors = rng.normal(size=(count, dim)).astype("float32")
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return [TextNode(id_=f"n{start + i}", text=f"chunk {start + i}", embedding=v.tolist(),
                     metadata={"doc_id": f"d{(start + i) // 10}"}) for i, v in enumerate(vectors)]


@pytest.mark.parametrize("kind", ["ivf_flat", "ivf_pq"])
def test_ivf_vector_index_is_built_kept_up_to_date_and_finds_the_exact_neighbour(tmp_path, monkeypatch, kind):
    """vector_index = "ivf_flat" / "ivf_pq": no index below the threshold, one once the table reaches it, the rows
    written since added when they pass a tenth; a stored vector's own nearest neighbour is found through
    the index (refine by the full vectors). The default store never indexes."""
    import numpy as np

    from ragplugins import store as store_module

    monkeypatch.setattr(store_module, "VECTOR_INDEX_MIN_ROWS", 1500)
    rng = np.random.default_rng(7)
    store = RagLanceDBVectorStore(uri=str(tmp_path / "ann"), table_name="chunks", vector_index=kind)
    flat = RagLanceDBVectorStore(uri=str(tmp_path / "flat"), table_name="chunks")
    first = _vector_nodes(rng, 0, 1000)
    for s in (store, flat):
        s.write_batch(first, replace_doc_ids=[])
        assert s.refresh_vector_index() is None
    assert list(store.table.list_indices()) == []
    more = _vector_nodes(rng, 1000, 1000)
    store.write_batch(more, replace_doc_ids=[])
    flat.write_batch(more, replace_doc_ids=[])
    assert store.refresh_vector_index() == "built" and flat.refresh_vector_index() is None
    (index,) = store.table.list_indices()
    assert list(index.columns) == [store.vector_column_name] and list(flat.table.list_indices()) == []
    assert store.table.index_stats(index.name).num_unindexed_rows == 0
    store.write_batch(_vector_nodes(rng, 2000, 100), replace_doc_ids=[])  # 5 %: searched exactly, not yet added
    assert store.refresh_vector_index() is None
    assert store.table.index_stats(index.name).num_unindexed_rows == 100
    store.write_batch(_vector_nodes(rng, 2100, 200), replace_doc_ids=[])  # 15 % in all: added
    assert store.refresh_vector_index() == "updated"
    assert store.table.index_stats(index.name).num_unindexed_rows == 0
    stored = {n.node_id: n for n in store.get_nodes()}
    assert len(stored) == 2300
    for node_id in ("n5", "n1500", "n2050", "n2250"):
        found = store.query(VectorStoreQuery(query_embedding=stored[node_id].embedding, similarity_top_k=3))
        assert found.ids[0] == node_id


def test_vector_index_setting_reaches_the_embedded_store_and_every_write_refreshes_it(tmp_path, tiny_corpus,
                                                                                      bundled_embed_model,
                                                                                      monkeypatch):
    calls = []
    refresh = RagLanceDBVectorStore.refresh_vector_index
    monkeypatch.setattr(RagLanceDBVectorStore, "refresh_vector_index",
                        lambda self: calls.append(self.vector_index) or refresh(self))
    rag = make_rag([], {"vector_index": "ivf_pq"}, embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
    index, _ = rag.index_paths([tiny_corpus])
    store = index.vector_store
    assert (store.vector_index, store.refine_factor) == ("ivf_pq", 10)
    assert calls == ["ivf_pq"] and list(store.table.list_indices()) == []  # a tiny corpus stays exact
    rag.delete_documents(["exhibit_a.md"])
    assert calls == ["ivf_pq", "ivf_pq"]
    default = make_rag([], {}, embed_model=bundled_embed_model, persist_dir=tmp_path / "idx").index().vector_store
    assert (default.vector_index, default.refine_factor) == ("flat", None)
