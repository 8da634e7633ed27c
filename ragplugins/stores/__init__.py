"""Store adapters: everything ragplugins knows about particular vector stores (see docs/stores.md).

    adapter = ragplugins.stores.adapter_for(index)      # chosen once; the context keeps it (ctx.store)
    adapter.list_documents(); adapter.update_metadata({...}); adapter.state("myplugin").write("names", rows)

Third parties add an adapter with the ``ragplugins_store_adapters`` hook; the conformance kit
(:func:`ragplugins.testing.check_store_adapter`) runs the store tests against it.
"""

from __future__ import annotations

from typing import Any

from ragplugins.stores.base import (
    CHUNK_INDEX_KEY,
    DOC_HASH_KEY,
    ChunkRow,
    DocumentInfo,
    PluginState,
    StateError,
    StoreAdapter,
    StoredState,
)

__all__ = ["CHUNK_INDEX_KEY", "DOC_HASH_KEY", "ChunkRow", "DocumentInfo", "PluginState", "StateError",
           "StoreAdapter", "StoredState", "adapter_class_for", "adapter_for"]


def _builtin() -> list[type[StoreAdapter]]:
    from ragplugins.stores.lancedb import LanceDBAdapter
    from ragplugins.stores.qdrant import QdrantAdapter
    from ragplugins.stores.simple import SimpleAdapter

    return [LanceDBAdapter, QdrantAdapter, SimpleAdapter]


def adapter_class_for(vector_store: Any, pluginmanager: Any = None) -> type[StoreAdapter]:
    """The adapter class for ``vector_store``: the plugins' adapters first (so a third party can serve a
    store more specifically), then the built-in ones, else the StorageContext-based fallback."""
    from ragplugins.stores.simple import StorageContextAdapter

    offered: list[type[StoreAdapter]] = []
    if pluginmanager is not None:
        for classes in pluginmanager.hook.ragplugins_store_adapters():
            offered.extend(classes or ())
    for cls in [*offered, *_builtin()]:
        if cls.handles(vector_store):
            return cls
    return StorageContextAdapter


def adapter_for(index: Any, *, pluginmanager: Any = None, embedder_id: str | None = None,
                index_uid: str | None = None, persist_dir: Any = None, table: str | None = None,
                home: Any = None) -> StoreAdapter:
    """The adapter for ``index`` (a VectorStoreIndex). ``index_uid``/``persist_dir``/``table``/``home``: what
    the manifest of an index ragplugins manages records and where its files live (None for a host's store)."""
    cls = adapter_class_for(index.vector_store, pluginmanager)
    adapter = cls(index, embedder_id=embedder_id, index_uid=index_uid, persist_dir=persist_dir, table=table)
    if home is not None:  # set after construction: an adapter's own __init__ need not know of it
        adapter.home = home
    return adapter
