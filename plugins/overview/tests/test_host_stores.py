"""Overviews of indexes in a store the host gave: kept through that store's backend, checked like the file."""

import warnings

import numpy as np
import pytest
from llama_index.core import StorageContext, load_index_from_storage
from llama_index.core.storage.kvstore.simple_kvstore import SimpleKVStore
from llama_index.core.vector_stores import SimpleVectorStore

import ragplugins_overview.plugin as plugin
from ragplugins.testing import make_rag, write_tiny_corpus
from ragplugins_overview.host_stores import COLLECTION, QdrantLocation, StorageContextLocation
from ragplugins_overview.sidecar import Overviews, SidecarError, location_for

ESPRESSO = "How do I descale the espresso machine boiler?"


def _overviews(n=3, dim=4, index_id="SimpleVectorStore:x"):
    return Overviews([f"d{i}" for i in range(n)], [f"h{i}" for i in range(n)], [f"text {i}" for i in range(n)],
                     ["extractive"] * n, np.eye(n, dim, dtype=np.float32), "emb:4", index_id)


def _ids(result):
    return [n.node.node_id for n in result.first_stage]


def _select(rag, index=None):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = rag.search(ESPRESSO, index=index)
    return result, result.trace.get("overview", "select"), [str(w.message) for w in caught
                                                             if "ragplugins overview" in str(w.message)]


def test_the_storage_context_location_keeps_one_generation_and_reads_back_what_it_wrote():
    kv = SimpleKVStore()
    location = StorageContextLocation(kv, "SimpleVectorStore:x", volatile=False)
    assert location.read() is None and location.signature() is None
    location.write(_overviews())
    first = location.signature()
    location.write(_overviews(n=2))
    read = location.read()
    assert read.doc_ids == ["d0", "d1"] and np.array_equal(read.vectors, np.eye(2, 4, dtype=np.float32))
    assert location.signature() != first
    assert sorted(kv.get_all(collection=COLLECTION)) == ["data:" + location.signature(), "meta"]


@pytest.mark.parametrize("change, message", [
    (lambda kv, m: kv.put("meta", {**m, "count": 5}, collection=COLLECTION), "declares 5 documents but holds 3"),
    (lambda kv, m: kv.put("meta", {**m, "format": 99}, collection=COLLECTION), "format 99"),
    (lambda kv, m: kv.delete(f"data:{m['generation']}", collection=COLLECTION), "rows that are missing"),
    (lambda kv, m: kv.put(f"data:{m['generation']}", {"doc_ids": []}, collection=COLLECTION), "cannot be read"),
])
def test_storage_context_overviews_that_do_not_match_their_meta_record_are_refused(change, message):
    kv = SimpleKVStore()
    location = StorageContextLocation(kv, "SimpleVectorStore:x", volatile=False)
    location.write(_overviews())
    change(kv, kv.get("meta", collection=COLLECTION))
    with pytest.raises(SidecarError, match=message):
        location.read()


def test_an_in_memory_storage_context_beside_a_store_that_keeps_the_chunks_says_so_once():
    location = StorageContextLocation(SimpleKVStore(), "SomeStore:x", volatile=True)
    with pytest.warns(UserWarning, match=r"in memory; persist it with index.storage_context.persist"):
        location.write(_overviews())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        location.write(_overviews(n=2))


@pytest.fixture
def corpus(tmp_path):
    return write_tiny_corpus(tmp_path / "corpus")


def test_simple_vector_store_overviews_persist_and_reload_with_the_storage_context(corpus, tmp_path,
                                                                                   bundled_embed_model):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # they live where the chunks live: nothing to warn about
        rag = make_rag([plugin], {"overview": {}}, embed_model=bundled_embed_model, vector_store=SimpleVectorStore())
        index, _ = rag.index_paths([corpus])
    assert isinstance(location_for(rag.context(index)), StorageContextLocation)
    index.storage_context.persist(persist_dir=str(tmp_path / "storage"))

    reloaded = load_index_from_storage(StorageContext.from_defaults(persist_dir=str(tmp_path / "storage")),
                                       embed_model=bundled_embed_model)
    again = make_rag([plugin], {"overview": {}}, embed_model=bundled_embed_model, vector_store=reloaded.vector_store)
    off = make_rag([plugin], {"enable": []}, embed_model=bundled_embed_model, vector_store=reloaded.vector_store)
    result, select, warned = _select(again, reloaded)
    # Scored against the stored overviews (whether the gate then acts is the retriever tests' concern).
    assert select["best"]["doc_id"] == "espresso_manual.md" and not warned
    assert sorted(_ids(result)) == sorted(_ids(off.search(ESPRESSO, index=reloaded)))
    assert location_for(again.context(reloaded)).read().doc_ids == sorted(again.context(reloaded).list_documents())

    # Another index's overviews copied into this storage context: refused with one warning, plain retrieval.
    stranger = make_rag([plugin], {"overview": {}}, embed_model=bundled_embed_model, vector_store=SimpleVectorStore())
    other, _ = stranger.index_paths([corpus])
    source, target = (location_for(stranger.context(other)).kv, reloaded.storage_context.docstore._kvstore)
    for key, value in source.get_all(collection=COLLECTION).items():
        target.put(key, value, collection=COLLECTION)
    result, select, warned = _select(again, reloaded)
    assert not select["applied"] and "belongs to another index" in select["reason"]
    assert _ids(result) == _ids(off.search(ESPRESSO, index=reloaded)) and len(warned) == 1
    assert _select(again, reloaded)[2] == []  # once


def _qdrant(path):
    qdrant = pytest.importorskip("llama_index.vector_stores.qdrant")
    from qdrant_client import QdrantClient

    client = QdrantClient(path=str(path))
    return client, qdrant.QdrantVectorStore(client=client, collection_name="chunks")


def test_qdrant_overviews_live_in_a_sibling_collection_and_survive_a_restart(corpus, tmp_path, bundled_embed_model):
    client, store = _qdrant(tmp_path / "qdrant")
    rag = make_rag([plugin], {"overview": {}}, embed_model=bundled_embed_model, vector_store=store)
    rag.index_paths([corpus])
    rag.delete_documents(["termination_policy.md"])
    sibling = QdrantLocation(client, "chunks", "QdrantVectorStore:chunks")
    # One point per document of the current generation plus the meta point; the deleted document's is gone.
    assert client.count(sibling.collection).count == 3 + 1
    assert sibling.read().doc_ids == ["espresso_manual.md", "exhibit_a.md", "master_agreement.md"]
    client.close()

    client, store = _qdrant(tmp_path / "qdrant")
    again = make_rag([plugin], {"overview": {}}, embed_model=bundled_embed_model, vector_store=store)
    _, select, warned = _select(again)
    # Scored against the stored overviews (whether the gate then acts is the retriever tests' concern).
    assert select["best"]["doc_id"] == "espresso_manual.md" and not warned

    # Overviews of another embedder: one warning, and the first stage is the plugin-off one.
    stale = QdrantLocation(client, "chunks", "QdrantVectorStore:chunks").read()
    stale.embedder = "another-embedder:384"
    QdrantLocation(client, "chunks", "QdrantVectorStore:chunks").write(stale)
    off = make_rag([plugin], {"enable": []}, embed_model=bundled_embed_model, vector_store=store)
    result, select, warned = _select(again)
    assert not select["applied"] and "embedded with 'another-embedder:384'" in select["reason"]
    assert _ids(result) == _ids(off.search(ESPRESSO)) and len(warned) == 1
    client.close()
