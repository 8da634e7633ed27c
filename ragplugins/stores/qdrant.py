"""Qdrant (``llama-index-vector-stores-qdrant``; local mode, server or memory alike).

Plugin state lives in a payload-only collection ``<collection>_ragplugins_state`` of the same
client, one point per plugin and name (its records as JSON in the payload); it lives wherever the
chunk collection lives. Upserting one point replaces it in one step.
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Hashable, Iterator
from typing import Any

from ragplugins.stores.base import StoreAdapter

STATE_SUFFIX = "_ragplugins_state"


class QdrantAdapter(StoreAdapter):
    name = "qdrant"
    scores_are_cosines = True  # the collection's default distance

    @classmethod
    def handles(cls, vector_store: Any) -> bool:
        module = sys.modules.get("llama_index.vector_stores.qdrant")
        return module is not None and isinstance(vector_store, module.QdrantVectorStore)

    @property
    def client(self) -> Any:
        return self.vector_store.client

    def iter_nodes(self) -> Iterator[Any]:
        # No collection exists until the first add; the store's get_nodes would raise.
        if not self.client.collection_exists(self.vector_store.collection_name):
            return iter(())
        return super().iter_nodes()

    # -- plugin state ---------------------------------------------------------
    @property
    def state_collection(self) -> str:
        return f"{self.vector_store.collection_name}{STATE_SUFFIX}"

    def state_label(self) -> str:
        return f"the Qdrant collection '{self.state_collection}'"

    @staticmethod
    def _point_id(plugin: str, name: str) -> str:
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"ragplugins-state/{plugin}/{name}"))

    def _payload(self, plugin: str, name: str, keys: Any = True) -> dict | None:
        if not self.client.collection_exists(self.state_collection):
            return None
        points = self.client.retrieve(self.state_collection, [self._point_id(plugin, name)], with_payload=keys,
                                      with_vectors=False)
        return dict(points[0].payload or {}) if points else None

    def read_state(self, plugin: str, name: str) -> str | None:
        payload = self._payload(plugin, name)
        return None if payload is None else payload.get("envelope")

    def state_signature(self, plugin: str, name: str) -> Hashable:
        payload = self._payload(plugin, name, keys=["generation"])
        return None if payload is None else payload.get("generation")

    def write_state(self, plugin: str, name: str, envelope: dict) -> None:
        from qdrant_client import models

        if not self.client.collection_exists(self.state_collection):
            self.client.create_collection(self.state_collection, vectors_config={})
        payload = {"plugin": plugin, "name": name, "generation": envelope.get("generation"),
                   "envelope": json.dumps(envelope, separators=(",", ":"), ensure_ascii=False)}
        self.client.upsert(self.state_collection, [models.PointStruct(id=self._point_id(plugin, name), vector={},
                                                                      payload=payload)], wait=True)
