"""Store adapters: the conformance kit over LanceDB, SimpleVectorStore, Qdrant and a third party's
adapter added through the ``ragplugins_store_adapters`` hook; no private attribute of another library."""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import pytest
from llama_index.core import StorageContext, VectorStoreIndex, load_index_from_storage
from llama_index.core.vector_stores import SimpleVectorStore

import ragplugins
from ragplugins import stores
from ragplugins.contributions import PluginInfo
from ragplugins.stores.lancedb import LanceDBAdapter
from ragplugins.stores.qdrant import QdrantAdapter
from ragplugins.stores.simple import SimpleAdapter, StorageContextAdapter
from ragplugins.testing import check_store_adapter, make_rag, write_tiny_corpus
from ragplugins.writes import atomic_write_text

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def corpus(tmp_path):
    return write_tiny_corpus(tmp_path / "corpus")


def test_lancedb(corpus, tmp_path, bundled_embed_model):
    persist = tmp_path / "idx"

    def reopen(rag, index):
        again = make_rag([], embed_model=bundled_embed_model, persist_dir=persist)
        return again, again.index()

    check_store_adapter(lambda: make_rag([], embed_model=bundled_embed_model, persist_dir=persist), corpus,
                        LanceDBAdapter, reopen)
    assert (persist / "sidecars" / "conformance" / "rows.chunks.json").is_file()  # where docs/stores.md says


def test_simple_vector_store_with_storage_context_persist(corpus, tmp_path, bundled_embed_model):
    def reopen(rag, index):
        index.storage_context.persist(persist_dir=str(tmp_path / "storage"))
        loaded = load_index_from_storage(StorageContext.from_defaults(persist_dir=str(tmp_path / "storage")),
                                         embed_model=bundled_embed_model)
        return make_rag([], embed_model=bundled_embed_model, vector_store=loaded.vector_store), loaded

    check_store_adapter(lambda: make_rag([], embed_model=bundled_embed_model, vector_store=SimpleVectorStore()),
                        corpus, SimpleAdapter, reopen)
    assert (tmp_path / "storage" / "ragplugins_state__vector_store.json").is_file()


def _qdrant(path: Path):
    from llama_index.vector_stores.qdrant import QdrantVectorStore
    from qdrant_client import QdrantClient

    return QdrantVectorStore(client=QdrantClient(path=str(path)), collection_name="chunks")


def test_qdrant_local_mode(corpus, tmp_path, bundled_embed_model):
    opened = []

    def open_rag():
        opened.append(_qdrant(tmp_path / "qdrant"))
        return make_rag([], embed_model=bundled_embed_model, vector_store=opened[-1])

    def reopen(rag, index):
        opened[-1].client.close()  # a restart: local mode lets one client hold the directory
        store = _qdrant(tmp_path / "qdrant")
        again = make_rag([], embed_model=bundled_embed_model, vector_store=store)
        return again, again.index()

    check_store_adapter(open_rag, corpus, QdrantAdapter, reopen)


# -- a third party's store and adapter -----------------------------------------------------------
class FolderBackedStore(SimpleVectorStore):
    """A host's store (here a SimpleVectorStore that knows a folder of its own)."""

    def __init__(self, state_dir: str):
        super().__init__()
        self.__dict__["folder"] = state_dir  # SimpleVectorStore's __init__ takes no fields of a subclass

    @property
    def state_dir(self) -> str:
        return self.__dict__["folder"]


class FolderStateAdapter(SimpleAdapter):
    """Keeps plugin state as one JSON file per collection in the store's folder."""

    name = "folder"

    @classmethod
    def handles(cls, vector_store: Any) -> bool:
        return isinstance(vector_store, FolderBackedStore)

    @property
    def index_id(self) -> str:
        return f"folder:{Path(self.vector_store.state_dir).resolve()}"

    def _path(self, plugin: str, name: str) -> Path:
        return Path(self.vector_store.state_dir) / f"{plugin}.{name}.json"

    def state_label(self) -> str:
        return f"'{self.vector_store.state_dir}'"

    def read_state(self, plugin: str, name: str) -> str | None:
        path = self._path(plugin, name)
        return path.read_text(encoding="utf-8") if path.is_file() else None

    def state_signature(self, plugin: str, name: str) -> Hashable:
        path = self._path(plugin, name)
        return path.stat().st_mtime_ns if path.is_file() else None

    def write_state(self, plugin: str, name: str, envelope: dict) -> None:
        Path(self.vector_store.state_dir).mkdir(parents=True, exist_ok=True)
        atomic_write_text(self._path(plugin, name), json.dumps(envelope))


class FolderStorePlugin:
    @ragplugins.hookimpl
    def ragplugins_plugin_info(self):
        return PluginInfo(name="folder_store", version="0.1")

    @ragplugins.hookimpl
    def ragplugins_store_adapters(self):
        return [FolderStateAdapter]


def test_a_third_party_adapter_through_the_hook(corpus, tmp_path, bundled_embed_model):
    store = FolderBackedStore(state_dir=str(tmp_path / "folder"))
    # Registered but not enabled: adapters serve stores whatever the enable list says.
    open_rag = lambda: make_rag([FolderStorePlugin()], {"enable": []}, embed_model=bundled_embed_model,  # noqa: E731
                                vector_store=store)

    def reopen(rag, index):
        return open_rag(), index

    check_store_adapter(open_rag, corpus, FolderStateAdapter, reopen)
    assert (tmp_path / "folder" / "conformance.rows.json").is_file()
    # Without the plugin the same store is served by the built-in adapter of its base class.
    plain = make_rag([], embed_model=bundled_embed_model, vector_store=store)
    assert type(plain.context(plain.index()).store) is SimpleAdapter


def test_the_kit_fails_an_adapter_that_breaks_the_contract(corpus, tmp_path, bundled_embed_model):
    class ForgetfulAdapter(FolderStateAdapter):
        def update_metadata(self, updates):
            return len(updates)  # says it wrote, writes nothing

    class ForgetfulPlugin(FolderStorePlugin):
        @ragplugins.hookimpl
        def ragplugins_store_adapters(self):
            return [ForgetfulAdapter]

    store = FolderBackedStore(state_dir=str(tmp_path / "folder"))
    with pytest.raises(AssertionError, match="update_metadata"):
        check_store_adapter(lambda: make_rag([ForgetfulPlugin()], {"enable": []}, embed_model=bundled_embed_model,
                                             vector_store=store), corpus)


def test_a_store_without_an_adapter_keeps_state_in_its_storage_context_and_says_it_is_in_memory(
        bundled_embed_model):
    class TextKeepingStore(SimpleVectorStore):
        stores_text: bool = True  # stands for a store that keeps the chunks itself (Chroma, pgvector, ...)

    assert stores.adapter_class_for(object()) is StorageContextAdapter
    index = VectorStoreIndex(nodes=[], storage_context=StorageContext.from_defaults(vector_store=TextKeepingStore()),
                             embed_model=bundled_embed_model)
    adapter = StorageContextAdapter(index)
    with pytest.warns(UserWarning, match=r"StorageContext, which is in memory; persist it"):
        adapter.state("p").write("n", [{"a": 1}])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per collection
        adapter.state("p").write("n", [{"a": 2}])
    assert adapter.state("p").read("n").records == [{"a": 2}]
    assert index.storage_context.vector_stores["ragplugins_state"].data.metadata_dict["p/n"]["generation"]


def test_a_state_collection_that_cannot_be_read_is_reported_with_where(tmp_path, bundled_embed_model, corpus):
    rag = make_rag([], embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
    rag.index_paths([corpus])
    state = rag.context().state("someplugin")
    state.write("names", [{"x": 1}])
    path = tmp_path / "idx" / "sidecars" / "someplugin" / "names.chunks.json"
    path.write_text("{truncated", encoding="utf-8")
    with pytest.raises(
        stores.StateError, match=r"collection 'names' in .*sidecars.*plugin 'someplugin' cannot be read"
    ):
        state.read("names")


# The private attributes ragplugins used to read: LlamaIndex's docstore key-value store and Settings fields,
# Qdrant's collection check and client, the upstream LanceDB store's table, connection and bookkeeping.
PRIVATE = re.compile(r"\._(kvstore|collection_exists|table_name|table|connection|struct_fields|client|"
                     r"fts_index_ready|metadata_keys|reranker)\b|Settings\._|getattr\([^)]*[\"']_[a-z]")


def test_no_private_attribute_of_another_library_is_read():
    """No module of the core or of a plugin reaches into a private attribute of LlamaIndex, LanceDB or Qdrant
    (the LanceDB store subclass included: it keeps its table in state of its own)."""
    sources = [*ROOT.glob("ragplugins/**/*.py"), *ROOT.glob("plugins/*/ragplugins_*/**/*.py")]
    found = [f"{p.relative_to(ROOT)}:{i}: {line.strip()}" for p in sources
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if PRIVATE.search(line)]
    assert found == []
