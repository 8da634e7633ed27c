"""The explicit context every hook receives: models, store, index and shared search.

Plugins never read LlamaIndex's ``Settings``: an unset ``Settings.llm`` raises
an OpenAI import error and ``None`` yields a MockLLM that echoes prompts.
``llm`` is ``None`` when the host gave none; every default mode works without it.
"""

from __future__ import annotations

import functools
import json
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from llama_index.core import VectorStoreIndex
from llama_index.core.schema import NodeWithScore

from ragplugins import index_cache, query_inputs, search, stores
from ragplugins.config import Config
from ragplugins.embeddings import embedder_identity
from ragplugins.stores import CHUNK_INDEX_KEY, DOC_HASH_KEY, ChunkRow, DocumentInfo  # noqa: F401 - part of this module's API

# Bounds RagContext.embed_texts' cache (about 30 MB of 384-dim vectors); it starts over when full.
TEXT_CACHE_LIMIT = 20_000
T = TypeVar("T")


def not_prepared(plugin: str) -> str:
    """The reason a plugin gives when the index lacks what its index-time step writes."""
    return (f"this index was not prepared for {plugin}: run `ragplugins prepare` once (rp.prepare(index) for an "
            "index your app built); the chunks are not embedded again")


@dataclass
class RagContext:
    config: Config
    embed_model: Any
    llm: Any = None
    index: VectorStoreIndex | None = None
    persist_dir: Path | None = None
    # Where the embedded index keeps its files, local or on object storage (ragplugins.home; None for a host's store).
    home: Any = None
    # The pluggy manager, for plugins that call hooks of their own (ragplugins_addhooks).
    pluginmanager: Any = None
    # The stable id recorded in persist_dir/manifest.json (None for host-given stores).
    index_uid: str | None = None
    # Metadata keys the enabled plugins keep out of embed and LLM text (the store hides those a patch adds).
    hidden_keys: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        self._embed_cache = functools.lru_cache(maxsize=512)(self._embed_uncached)
        self._text_vectors: dict[str, list[float]] = {}
        self._store: stores.StoreAdapter | None = None

    # -- models --------------------------------------------------------
    @property
    def embedder_id(self) -> str:
        return embedder_identity(self.embed_model)

    def _embed_uncached(self, text: str) -> tuple[float, ...]:
        return tuple(self.embed_model.get_query_embedding(text))

    def embed_query(self, text: str) -> list[float]:
        """The query embedding, cached: hop, overview and retry reuse it."""
        return list(self._embed_cache(text))

    def forget_query_embeddings(self) -> None:
        """Empty the query-embedding cache, so the next search of a question embeds it again (an eval's
        second pass over the same questions would otherwise time searches without the model's work)."""
        self._embed_cache.cache_clear()

    def embed_texts(self, texts: Sequence[str]) -> dict[str, list[float]]:
        """Document-side embeddings of ``texts``, batched and cached on this context: query-time
        plugins score the same stored passages (reference sentences, overviews) query after query."""
        # Safe under threads: starting over replaces the dict (never empties the one another call reads).
        known = self._text_vectors
        found = {t: known[t] for t in texts if t in known}
        missing = sorted(set(texts) - found.keys())
        if missing:
            found.update(zip(missing, self.embed_model.get_text_embedding_batch(missing)))
            if len(known) + len(missing) > TEXT_CACHE_LIMIT:
                self._text_vectors = known = {}
            known.update((t, found[t]) for t in missing)
        return {t: found[t] for t in texts}

    # -- the store -----------------------------------------------------
    @property
    def vector_store(self) -> Any:
        return self.index.vector_store if self.index is not None else None

    def _require_index(self) -> VectorStoreIndex:
        if self.index is None:
            raise RuntimeError("this context has no index yet; build or open one first")
        return self.index

    @property
    def store(self) -> stores.StoreAdapter:
        """The index's store adapter (ragplugins.stores), chosen when first asked for and kept."""
        if self._store is None:
            self._store = stores.adapter_for(
                self._require_index(), pluginmanager=self.pluginmanager,
                embedder_id=self.embedder_id if self.embed_model is not None else None,
                index_uid=self.index_uid, persist_dir=self.persist_dir, home=self.home,
                table=self.config.core.table if self.index_uid is not None else None)
            self._store.declare_hidden(self.hidden_keys)
        return self._store

    def state(self, plugin: str) -> stores.PluginState:
        """The named record collections ``plugin`` keeps beside this index (``.read(name)``, ``.write(name,
        records, meta)``), wherever its store keeps them."""
        return self.store.state(plugin)

    @property
    def index_id(self) -> str:
        """Names this index, the same after a restart, so what was kept for another index is never used for it."""
        return self.store.index_id

    def cached(self, name: str, build: Callable[[RagContext], T]) -> T:
        """A value derived from this index's contents (a vocabulary, a table of names), made by
        ``build(ctx)`` once and kept until the index is written; ``name`` is unique per plugin
        ("<plugin>.<what>"). See ragplugins.index_cache for when an entry goes stale."""
        return index_cache.cache.get(self.store, name, lambda: build(self))

    @property
    def top_k(self) -> int:
        """The first stage's k in the query being answered (the config's top_k outside one)."""
        inputs = query_inputs.current()
        return (inputs.top_k if inputs is not None else None) or self.config.core.top_k

    def search_within_documents(self, query: str, doc_ids: Sequence[str], k: int) -> list[NodeWithScore] | None:
        """Dense search inside ``doc_ids`` under the host's filters for this query, ranked as the first stage's
        dense leg ranks (its window scoring); None = failed or refused (the host's filters are not known, or no
        query is open), [] = nothing matched."""
        inputs = query_inputs.current()
        if inputs is None:
            warnings.warn("ragplugins: a plugin search outside a query was refused: run the component through "
                          "rp.retriever, rp.query_engine, rp.search or rp.postprocessors, or inside "
                          "ragplugins.api.query_scope(query, filters=...)", stacklevel=2)
            return None
        if not inputs.filters_known:
            inputs.refuse_search()
            return None
        return search.search_within_documents(self.store, query, self.embed_query(query), doc_ids, k,
                                              inputs.filters, self.config.core.window_scoring)

    def cached_for_query(self, name: str, build: Callable[[Iterator[ChunkRow]], T]) -> T | None:
        """``build(rows)`` over the chunks the query being answered may see (``ChunkRow``: id, doc_id,
        text, metadata; read once): those passing the host's known filters (every chunk when it has
        none, read without vectors or metadata), kept per filters until the index is written (as
        :meth:`cached`). None when the host's filters are not known, or no query is open: then no
        statistic over the index can be told apart from what the host's filter excludes."""
        inputs = query_inputs.current()
        if inputs is None or not inputs.filters_known:
            return None
        filters = inputs.filters
        if filters is None:
            return self.cached(name, lambda ctx: build(ctx.store.iter_chunk_rows()))
        key = json.dumps(filters.model_dump(mode="json"), sort_keys=True)
        return self.cached(f"{name}:filters={key}", lambda ctx: build(
            ChunkRow(n.node_id, n.ref_doc_id, n.get_content(), dict(n.metadata or {}))
            for n in ctx.store.iter_nodes() if query_inputs.passes(n, filters)))

    def allowed_documents(self, candidates: Iterable[NodeWithScore] = (),
                          wanted: Iterable[str] = ()) -> frozenset[str] | None:
        """The documents the query being answered may search, rank or name; None: every document (the
        host has no filter). Under known filters, those with a chunk that passes them; while they are
        unknown (or outside a query), only those of ``candidates`` the host's own retriever returned,
        and a document of ``wanted`` (those the plugin meant to reach) outside them is refused as a
        search would be (a warning and the trace say how to pass the filters)."""
        inputs = query_inputs.current()
        if inputs is not None and inputs.filters_known and inputs.filters is None:
            return None
        documents = self.cached_for_query("ragplugins.allowed_documents",
                                          lambda rows: frozenset(r.doc_id for r in rows if r.doc_id))
        if documents is not None:
            return documents
        returned = frozenset(n.node.ref_doc_id for n in candidates if n.node.ref_doc_id
                             and (inputs is None or n.node.node_id in inputs.base_node_ids))
        if inputs is not None and not set(wanted) <= returned:
            inputs.refuse_search()
        return returned

    def all_nodes(self) -> list:
        return list(self.store.iter_nodes())

    def list_documents(self) -> dict[str, DocumentInfo]:
        """The documents already indexed, with the metadata of their first chunk."""
        return self.store.list_documents()

    def documents_by_file_name(self) -> dict[str, frozenset[str]]:
        """Each indexed document's file name, lower case (``guide/usr_12.txt`` -> ``usr_12.txt``, and the
        ``file_name`` a reader recorded) -> the documents of that name; kept until the index is written. A
        question that types one names those documents."""
        def build(ctx: RagContext) -> dict[str, frozenset[str]]:
            out: dict[str, set[str]] = {}
            for doc_id, info in ctx.list_documents().items():
                for name in {str(info.metadata.get("file_name") or ""), doc_id.replace("\\", "/").rsplit("/", 1)[-1]}:
                    if name:
                        out.setdefault(name.lower(), set()).add(doc_id)
            return {name: frozenset(docs) for name, docs in out.items()}
        return self.cached("core.file_names", build)

    def update_metadata(self, updates: dict[str, dict[str, Any]]) -> int:
        """Merge metadata into stored chunks without touching text or vectors."""
        return self.store.update_metadata(updates)
