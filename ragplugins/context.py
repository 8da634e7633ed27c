"""The explicit context every hook receives: models, store, index and shared search.

Plugins never read LlamaIndex's ``Settings``: an unset ``Settings.llm`` raises
an OpenAI import error and ``None`` yields a MockLLM that echoes prompts.
``llm`` is ``None`` when the host gave none; every default mode works without it.
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence, TypeVar

from llama_index.core import VectorStoreIndex
from llama_index.core.schema import NodeWithScore

from ragplugins import index_cache, query_inputs, search
from ragplugins.config import Config
from ragplugins.embeddings import embedder_identity

DOC_HASH_KEY = "ragplugins_doc_hash"
CHUNK_INDEX_KEY = "ragplugins_chunk_index"
# Bounds RagContext.embed_texts' cache (about 30 MB of 384-dim vectors); it starts over when full.
TEXT_CACHE_LIMIT = 20_000
T = TypeVar("T")


def not_prepared(plugin: str) -> str:
    """The reason a plugin gives when the index lacks what its index-time step writes."""
    return (f"this index was not prepared for {plugin}: run rp.prepare(index) once (an index your app "
            "built), or `ragplugins index PATH --reindex`")


@dataclass
class DocumentInfo:
    doc_id: str
    metadata: dict[str, Any]
    node_ids: list[str] = field(default_factory=list)

    @property
    def doc_hash(self) -> str | None:
        return self.metadata.get(DOC_HASH_KEY)


@dataclass
class RagContext:
    config: Config
    embed_model: Any
    llm: Any = None
    index: VectorStoreIndex | None = None
    persist_dir: Path | None = None
    # The pluggy manager, for plugins that call hooks of their own (ragplugins_addhooks).
    pluginmanager: Any = None
    # The stable id recorded in persist_dir/manifest.json (None for host-given stores).
    index_uid: str | None = None

    def __post_init__(self) -> None:
        self._embed_cache = functools.lru_cache(maxsize=512)(self._embed_uncached)
        self._text_vectors: dict[str, list[float]] = {}

    # -- models --------------------------------------------------------
    @property
    def embedder_id(self) -> str:
        return embedder_identity(self.embed_model)

    def _embed_uncached(self, text: str) -> tuple[float, ...]:
        return tuple(self.embed_model.get_query_embedding(text))

    def embed_query(self, text: str) -> list[float]:
        """The query embedding, cached: hop, overview and retry reuse it."""
        return list(self._embed_cache(text))

    def embed_texts(self, texts: Sequence[str]) -> dict[str, list[float]]:
        """Document-side embeddings of ``texts``, batched and cached on this context: query-time
        plugins score the same stored passages (reference sentences, overviews) query after query."""
        missing = sorted({t for t in texts if t not in self._text_vectors})
        if missing:
            if len(self._text_vectors) + len(missing) > TEXT_CACHE_LIMIT:
                self._text_vectors.clear()
            self._text_vectors.update(zip(missing, self.embed_model.get_text_embedding_batch(missing)))
        return {t: self._text_vectors[t] for t in texts}

    # -- the store -----------------------------------------------------
    @property
    def vector_store(self) -> Any:
        return self.index.vector_store if self.index is not None else None

    def _require_index(self) -> VectorStoreIndex:
        if self.index is None:
            raise RuntimeError("this context has no index yet; build or open one first")
        return self.index

    def sidecar_dir(self, plugin: str) -> Path | None:
        """A directory next to the index for ``plugin``'s own files (None for in-memory indexes)."""
        if self.persist_dir is None:
            return None
        path = Path(self.persist_dir) / "sidecars" / plugin
        path.mkdir(parents=True, exist_ok=True)
        return path

    @property
    def index_id(self) -> str:
        """Names this index so a sidecar of another index is never read for it."""
        if self.index_uid is not None:
            return f"{self.index_uid}:{self.config.core.table}"
        store = self.vector_store
        if search.is_lancedb(store):
            return f"lancedb:{Path(str(store.uri)).resolve()}:{store._table_name}"
        # Host-given stores: a name that outlives this process, so what a plugin keeps for the index is
        # recognised after a restart. A collection in a database (Qdrant, Chroma, Milvus, ...) has its
        # name; any other index has the id LlamaIndex persists with its StorageContext.
        collection = getattr(store, "collection_name", None)
        if isinstance(collection, str) and collection:
            return f"{type(store).__name__}:{collection}"
        if self.index is not None:
            return f"{type(store).__name__}:{self.index.index_struct.index_id}"
        return f"{type(store).__name__}:{id(store)}"

    def cached(self, name: str, build: Callable[["RagContext"], T]) -> T:
        """A value derived from this index's contents (a vocabulary, a table of names), made by
        ``build(ctx)`` once and kept until the index is written; ``name`` is unique per plugin
        ("<plugin>.<what>"). See ragplugins.index_cache for when an entry goes stale."""
        return index_cache.cache.get(self._require_index().vector_store, name, lambda: build(self))

    @property
    def top_k(self) -> int:
        """The first stage's k in the query being answered (the config's top_k outside one)."""
        inputs = query_inputs.current()
        return (inputs.top_k if inputs is not None else None) or self.config.core.top_k

    def search_within_documents(self, query: str, doc_ids: Sequence[str], k: int) -> list[NodeWithScore] | None:
        """Dense search inside ``doc_ids`` under the host's filters for this query; None = failed or
        refused (the host's filters are not known, or no query is open), [] = nothing matched."""
        inputs = query_inputs.current()
        if inputs is None:
            warnings.warn("ragplugins: a plugin search outside a query was refused: run the component through "
                          "rp.retriever, rp.query_engine, rp.search or rp.postprocessors, or inside "
                          "ragplugins.query_inputs.scope(filters=...)", stacklevel=2)
            return None
        if not inputs.filters_known:
            inputs.refuse_search()
            return None
        return search.search_within_documents(self._require_index(), query, self.embed_query(query),
                                              doc_ids, k, inputs.filters)

    def all_nodes(self) -> list:
        return search.all_nodes(self._require_index())

    def list_documents(self) -> dict[str, DocumentInfo]:
        """The documents already indexed, with the metadata of their first chunk."""
        index = self._require_index()
        store = index.vector_store
        docs: dict[str, DocumentInfo] = {}
        if search.is_lancedb(store):
            keys = {k: f"metadata.{k}" for k in store._struct_fields() if k != "_node_content"}
            rows = store.document_rows({"id": "id", "doc": store.doc_id_key, **keys})
            rows.sort(key=lambda r: (r["doc"], r.get(CHUNK_INDEX_KEY) or 0))
            for row in rows:
                info = docs.get(row["doc"])
                if info is None:
                    meta = {k: row[k] for k in keys if row.get(k) is not None}
                    info = docs[row["doc"]] = DocumentInfo(row["doc"], meta)
                info.node_ids.append(row["id"])
        else:
            nodes = sorted(search.all_nodes(index),
                           key=lambda n: (n.ref_doc_id or "", n.metadata.get(CHUNK_INDEX_KEY) or 0))
            for node in nodes:
                info = docs.setdefault(node.ref_doc_id, DocumentInfo(node.ref_doc_id, dict(node.metadata)))
                info.node_ids.append(node.node_id)
        return docs

    def update_metadata(self, updates: dict[str, dict[str, Any]]) -> int:
        """Merge metadata into stored chunks without touching text or vectors."""
        index = self._require_index()
        store = index.vector_store
        if search.is_lancedb(store):
            return store.update_metadata(updates)
        if index.docstore.docs:
            changed = []
            for node_id, patch in updates.items():
                node = index.docstore.get_node(node_id, raise_error=False)
                if node is None:
                    continue
                node.metadata = {**node.metadata, **patch}
                changed.append(node)
                data = getattr(store, "data", None)
                if data is not None and node_id in getattr(data, "metadata_dict", {}):
                    data.metadata_dict[node_id] = {**data.metadata_dict[node_id], **patch}
            index.docstore.add_documents(changed, allow_update=True)
            return len(changed)
        # Other stores: re-write the stored nodes with their own vectors (an upsert by id).
        nodes = store.get_nodes(node_ids=list(updates))
        if any(n.embedding is None for n in nodes):
            raise NotImplementedError(f"{type(store).__name__} does not return vectors with get_nodes, so "
                                      "metadata cannot be updated without re-embedding; re-index instead")
        for node in nodes:
            node.metadata = {**node.metadata, **updates[node.node_id]}
        store.add(nodes)
        return len(nodes)
