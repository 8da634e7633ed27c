"""Overviews of indexes in a store the host gave: kept as plugin state where that store's adapter keeps it."""

import json
import warnings

import pytest
from llama_index.core import StorageContext, load_index_from_storage
from llama_index.core.vector_stores import SimpleVectorStore

import ragplugins_overview.plugin as plugin
from ragplugins.testing import make_rag, write_tiny_corpus
from ragplugins_overview.corpus_terms import TermsLocation
from ragplugins_overview.sidecar import location_for

ESPRESSO = "How do I descale the espresso machine boiler?"


def _ids(result):
    return [n.node.node_id for n in result.first_stage]


def _select(rag, index=None):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = rag.search(ESPRESSO, index=index)
    return result, result.trace.get("overview", "select"), [str(w.message) for w in caught
                                                             if "ragplugins overview" in str(w.message)]


@pytest.fixture
def corpus(tmp_path):
    return write_tiny_corpus(tmp_path / "corpus")


def test_simple_vector_store_overviews_persist_and_reload_with_the_storage_context(corpus, tmp_path,
                                                                                   bundled_embed_model):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # they live where the chunks live: nothing to warn about
        rag = make_rag([plugin], {"overview": {}}, embed_model=bundled_embed_model, vector_store=SimpleVectorStore())
        index, _ = rag.index_paths([corpus])
    assert "StorageContext" in location_for(rag.context(index)).label
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
    envelope = json.loads(stranger.context(other).store.read_state("overview", "overviews"))
    again.context(reloaded).store.write_state("overview", "overviews", envelope)
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
    # Two points (the overviews, the stems of each document) in a payload-only collection beside the chunks;
    # the deleted document's are gone.
    assert client.count("chunks_ragplugins_state").count == 2
    assert sorted(TermsLocation(rag.context()).read().stems) == ["espresso_manual.md", "exhibit_a.md",
                                                                  "master_agreement.md"]
    assert location_for(rag.context()).read().doc_ids == ["espresso_manual.md", "exhibit_a.md", "master_agreement.md"]
    client.close()

    client, store = _qdrant(tmp_path / "qdrant")
    again = make_rag([plugin], {"overview": {}}, embed_model=bundled_embed_model, vector_store=store)
    _, select, warned = _select(again)
    # Scored against the stored overviews (whether the gate then acts is the retriever tests' concern).
    assert select["best"]["doc_id"] == "espresso_manual.md" and not warned

    # Overviews of another embedder: one warning, and the first stage is the plugin-off one.
    location = location_for(again.context())
    stale = location.read()
    stale.embedder = "another-embedder:384"
    location.write(stale)
    off = make_rag([plugin], {"enable": []}, embed_model=bundled_embed_model, vector_store=store)
    result, select, warned = _select(again)
    assert not select["applied"] and "embedded with 'another-embedder:384'" in select["reason"]
    assert _ids(result) == _ids(off.search(ESPRESSO)) and len(warned) == 1
    client.close()
