"""LlamaIndex's in-memory ``SimpleVectorStore`` (persisted with ``index.storage_context.persist``), and
the fallback for any store without an adapter of its own.

Plugin state lives in the index's StorageContext, in a vector store namespace of its own
(``ragplugins_state``: one entry per plugin and name, the records as JSON in its metadata).
``storage_context.persist(persist_dir)`` writes it as ``ragplugins_state__vector_store.json``
beside the chunks and ``StorageContext.from_defaults(persist_dir)`` loads it back, so the state
follows the index wherever the host keeps it. A write replaces the entry in one assignment.
"""

from __future__ import annotations

import json
import uuid
import warnings
from collections.abc import Hashable
from typing import Any

from ragplugins.errors import InputError
from ragplugins.stores.base import LLAMAINDEX_KEYS, StoreAdapter, filter_keys, unknown_filter_key

NAMESPACE = "ragplugins_state"


def _state_store(adapter: StoreAdapter, create: bool) -> Any:
    stores = adapter.index.storage_context.vector_stores
    if NAMESPACE not in stores and create:
        from llama_index.core.vector_stores import SimpleVectorStore

        adapter.index.storage_context.add_vector_store(SimpleVectorStore(), namespace=NAMESPACE)
    return stores.get(NAMESPACE)


class StorageContextAdapter(StoreAdapter):
    """Any store: LlamaIndex's public vector store API; plugin state in the index's StorageContext."""

    name = "storage-context"

    @classmethod
    def handles(cls, vector_store: Any) -> bool:
        return True

    def check_filters(self, filters: Any) -> None:
        # LlamaIndex's in-memory store keeps every chunk's filterable metadata: a key none of them has is a
        # misspelling (it would match nothing, silently). Other stores cannot tell without reading every chunk.
        data = getattr(getattr(self.index.vector_store, "data", None), "metadata_dict", None)
        if not data:
            return
        for key in filter_keys(filters):
            # Found in the first chunks for a real key; only a key no chunk has reads them all (then the message
            # lists every key).
            if not any(key in metadata for metadata in data.values()):
                keys = set().union(*(m.keys() for m in data.values()))
                raise InputError(unknown_filter_key(key, keys - LLAMAINDEX_KEYS))

    def state_label(self) -> str:
        return f"the StorageContext of index {self.index_id} (namespace '{NAMESPACE}')"

    def _entry(self, plugin: str, name: str) -> dict | None:
        store = _state_store(self, create=False)
        return None if store is None else store.data.metadata_dict.get(f"{plugin}/{name}")

    def read_state(self, plugin: str, name: str) -> str | None:
        entry = self._entry(plugin, name)
        return None if entry is None else entry.get("envelope")

    def state_signature(self, plugin: str, name: str) -> Hashable:
        entry = self._entry(plugin, name)
        return None if entry is None else entry.get("generation")

    def write_state(self, plugin: str, name: str, envelope: dict) -> None:
        from llama_index.core.schema import TextNode

        first = self._entry(plugin, name) is None
        store = _state_store(self, create=True)
        text = json.dumps(envelope, separators=(",", ":"), ensure_ascii=False)
        store.add([TextNode(id_=f"{plugin}/{name}", text="", embedding=[0.0],
                            metadata={"generation": envelope.get("generation") or uuid.uuid4().hex,
                                      "envelope": text})])
        if first and self.warns_volatile_state:
            warnings.warn(f"ragplugins: plugin '{plugin}' keeps '{name}' for this {type(self.vector_store).__name__} "
                          "index in its StorageContext, which is in memory; persist it with "
                          "index.storage_context.persist(...), or rebuild it after a restart", stacklevel=4)

    @property
    def warns_volatile_state(self) -> bool:
        """The chunks live outside the StorageContext, so its in-memory state would outlive nothing."""
        return bool(self.vector_store.stores_text)


class SimpleAdapter(StorageContextAdapter):
    """``SimpleVectorStore``: cosine scores; the chunks live in the StorageContext's docstore."""

    name = "simple"
    scores_are_cosines = True

    @classmethod
    def handles(cls, vector_store: Any) -> bool:
        from llama_index.core.vector_stores import SimpleVectorStore

        return isinstance(vector_store, SimpleVectorStore)

    @property
    def warns_volatile_state(self) -> bool:
        return False  # the state is persisted with the chunks, by the same call

    def update_metadata(self, updates: dict[str, dict[str, Any]]) -> int:
        changed = super().update_metadata(updates)
        # The store filters on its own copy of each node's metadata.
        filterable = self.vector_store.data.metadata_dict
        for node_id, patch in updates.items():
            if node_id in filterable:
                filterable[node_id] = {**filterable[node_id], **patch}
        return changed
