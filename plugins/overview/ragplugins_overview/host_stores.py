"""Overviews of an index whose vector store the host gave: kept through that store's own backend.

- Qdrant (``QdrantVectorStore``): a sibling collection ``<collection>_ragplugins_overview`` in the
  same client (local path, server or memory), one point per document with the overview's vector
  and its text in the payload, plus one meta point. It lives wherever the chunk collection lives.
- Any other store: a collection (``ragplugins_overview``) of the key-value store behind the index's
  StorageContext docstore. ``index.storage_context.persist(...)`` writes it with the docstore and
  ``load_index_from_storage`` brings it back (for ``SimpleVectorStore`` that is where the chunk
  text lives too); a remote docstore (Redis, MongoDB, ...) holds it like any other record.

Both write a new generation of rows first and switch a small meta record to it last, then drop
the old generation, so a reader sees the old overviews or the new ones, never a mixture. The
meta record's generation is also the cheap per-query signature that says when to re-read.
The identity recorded with the overviews is the core's ``ctx.index_id``, which survives a restart:
the chunk collection's name for Qdrant, the persisted index struct's id for a StorageContext.
"""

from __future__ import annotations

import base64
import uuid
import warnings
from typing import Any

import numpy as np

from ragplugins_overview.sidecar import Location, Overviews, SidecarError

COLLECTION = "ragplugins_overview"
QDRANT_SUFFIX = "_ragplugins_overview"
_BATCH = 256


def _new_generation() -> str:
    return uuid.uuid4().hex


class StorageContextLocation(Location):
    """Overviews in a collection of the key-value store behind the index's docstore."""

    def __init__(self, kvstore: Any, index_id: str, volatile: bool):
        self.kv, self.index_id = kvstore, index_id
        # True when the chunks live outside the StorageContext and it is only in memory: the
        # overviews would then outlive nothing, which the host should hear about once.
        self.volatile = volatile
        self.label = f"the StorageContext of index {index_id} (key-value collection '{COLLECTION}')"

    def _meta(self) -> dict | None:
        return self.kv.get("meta", collection=COLLECTION)

    def signature(self) -> Any:
        meta = self._meta()
        return None if meta is None else meta.get("generation")

    def read(self) -> Overviews | None:
        meta = self._meta()
        if meta is None:
            return None
        data = self.kv.get(f"data:{meta.get('generation')}", collection=COLLECTION)
        if data is None:
            raise SidecarError("its meta record points at rows that are missing")
        try:
            dim = int(meta.get("dim", 0))
            flat = np.frombuffer(base64.b64decode(data["vectors"]), dtype="<f4")
            vectors = flat.reshape(-1, dim) if dim else np.zeros((0, 0), dtype=np.float32)
            rows = [data[k] for k in ("doc_ids", "hashes", "texts", "sources")]
        except Exception as exc:  # noqa: BLE001 - missing keys, bad base64, wrong shape: all unreadable
            raise SidecarError(f"it cannot be read ({type(exc).__name__}: {exc})") from exc
        return Overviews.stored(meta, *rows, vectors)

    def write(self, overviews: Overviews) -> None:
        overviews.check()
        generation, old = _new_generation(), self._meta()
        vectors = np.asarray(overviews.vectors, dtype="<f4").tobytes()
        self.kv.put(f"data:{generation}", {"doc_ids": overviews.doc_ids, "hashes": overviews.hashes,
                                           "texts": overviews.texts, "sources": overviews.sources,
                                           "vectors": base64.b64encode(vectors).decode("ascii")},
                    collection=COLLECTION)
        self.kv.put("meta", overviews.meta(generation=generation), collection=COLLECTION)
        if old is not None:
            self.kv.delete(f"data:{old.get('generation')}", collection=COLLECTION)
        if self.volatile and old is None:
            warnings.warn(f"ragplugins overview: the overviews are kept in {self.label}, which is in memory; "
                          "persist it with index.storage_context.persist(...) (or give the index a persistent "
                          "docstore), or rebuild them after a restart with ragplugins_overview.rebuild(rag)",
                          stacklevel=3)


class QdrantLocation(Location):
    """Overviews in a sibling collection of a Qdrant chunk collection, in the same client."""

    META_ID = str(uuid.uuid5(uuid.NAMESPACE_URL, "ragplugins-overview/meta"))

    def __init__(self, client: Any, collection_name: str, index_id: str):
        self.client, self.collection = client, f"{collection_name}{QDRANT_SUFFIX}"
        self.index_id = index_id
        self.label = f"the Qdrant collection '{self.collection}'"

    def _meta(self) -> dict | None:
        if not self.client.collection_exists(self.collection):
            return None
        points = self.client.retrieve(self.collection, [self.META_ID], with_payload=True, with_vectors=False)
        if not points:
            raise SidecarError("the collection has no meta record")
        return dict(points[0].payload or {})

    def signature(self) -> Any:
        try:
            meta = self._meta()
        except SidecarError:
            return "no meta record"
        return None if meta is None else meta.get("generation")

    def read(self) -> Overviews | None:
        from qdrant_client import models

        meta = self._meta()
        if meta is None:
            return None
        only = models.Filter(must=[models.FieldCondition(key="generation",
                                                         match=models.MatchValue(value=meta.get("generation")))],
                             must_not=[models.HasIdCondition(has_id=[self.META_ID])])
        rows, offset = [], None
        try:
            while True:
                points, offset = self.client.scroll(self.collection, scroll_filter=only, limit=_BATCH,
                                                    offset=offset, with_payload=True, with_vectors=True)
                rows.extend(points)
                if offset is None:
                    break
            rows.sort(key=lambda p: p.payload["doc_id"])
            fields = [[p.payload[k] for p in rows] for k in ("doc_id", "hash", "text", "source")]
            vectors = np.array([p.vector for p in rows], dtype=np.float32) if rows else np.zeros((0, 0), np.float32)
        except Exception as exc:  # noqa: BLE001 - a payload without our keys, vectors of mixed size
            raise SidecarError(f"it cannot be read ({type(exc).__name__}: {exc})") from exc
        return Overviews.stored(meta, *fields, vectors)

    def write(self, overviews: Overviews) -> None:
        from qdrant_client import models

        overviews.check()
        dim = int(overviews.vectors.shape[1]) if len(overviews) else 1
        if self.client.collection_exists(self.collection):
            size = self.client.get_collection(self.collection).config.params.vectors.size
            if size != dim:  # another embedder's overviews: they are all being replaced anyway
                self.client.delete_collection(self.collection)
        if not self.client.collection_exists(self.collection):
            self.client.create_collection(self.collection, vectors_config=models.VectorParams(
                size=dim, distance=models.Distance.COSINE))
        generation = _new_generation()
        points = [models.PointStruct(id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"{generation}/{doc_id}")),
                                     vector=overviews.vectors[i].tolist(),
                                     payload={"doc_id": doc_id, "hash": overviews.hashes[i],
                                              "text": overviews.texts[i], "source": overviews.sources[i],
                                              "generation": generation})
                  for i, doc_id in enumerate(overviews.doc_ids)]
        for start in range(0, len(points), _BATCH):
            self.client.upsert(self.collection, points[start:start + _BATCH], wait=True)
        # The meta point carries no overview; a unit vector keeps it valid in a cosine collection.
        marker = [1.0] + [0.0] * (dim - 1)
        self.client.upsert(self.collection, [models.PointStruct(
            id=self.META_ID, vector=marker, payload={**overviews.meta(generation=generation), "meta": True})],
            wait=True)
        self.client.delete(self.collection, points_selector=models.FilterSelector(filter=models.Filter(
            must_not=[models.FieldCondition(key="generation", match=models.MatchValue(value=generation)),
                      models.HasIdCondition(has_id=[self.META_ID])])), wait=True)


def host_location(ctx: Any) -> Location | None:
    """Where a host-given store's overviews go, or None when the index offers no place for them."""
    index = getattr(ctx, "index", None)
    if index is None:
        return None
    store = index.vector_store
    if type(store).__name__ == "QdrantVectorStore" and getattr(store, "client", None) is not None:
        return QdrantLocation(store.client, store.collection_name, ctx.index_id)
    kvstore = getattr(index.storage_context.docstore, "_kvstore", None)
    if kvstore is None or not hasattr(kvstore, "put"):
        return None
    from llama_index.core.storage.kvstore.simple_kvstore import SimpleKVStore

    volatile = isinstance(kvstore, SimpleKVStore) and bool(store.stores_text)
    return StorageContextLocation(kvstore, ctx.index_id, volatile)
