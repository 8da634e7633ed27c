"""The one interface through which the core and the plugins reach a vector store.

A :class:`StoreAdapter` is chosen once per index (:func:`ragplugins.stores.adapter_for`) and kept
on the context (``ctx.store``). Everything that depends on which store holds the chunks lives in
an adapter; the core and the plugins ask the adapter, never the store. See docs/stores.md.
"""

from __future__ import annotations

import json
import threading
import uuid
import warnings
from collections.abc import Collection, Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

from ragplugins.errors import RagPluginsError
from ragplugins.nodes import hide_metadata

DOC_HASH_KEY = "ragplugins_doc_hash"
CHUNK_INDEX_KEY = "ragplugins_chunk_index"
# The anchors (HTML ids) that begin in a chunk, space-separated in reading order (ragplugins.anchors).
ANCHORS_KEY = "ragplugins_anchors"
# Stored with each chunk for the core's own search (ragplugins.windows: every window's vector), not a
# description of the chunk: left out where a plugin or a listing reads "all of a chunk's metadata".
WINDOWS_KEY = "ragplugins_windows"
CORE_ONLY_KEYS = frozenset({WINDOWS_KEY})
# The keys LlamaIndex's node_to_metadata_dict stores next to a node's own metadata.
LLAMAINDEX_KEYS = frozenset({"_node_content", "_node_type", "doc_id", "document_id", "ref_doc_id"})


def unknown_filter_key(key: str, keys: Collection[str]) -> str:
    """What to say of a filter on a metadata key that no stored chunk has (a misspelt key would match
    nothing, silently): the chunks' own keys, not a store's internal ones."""
    own = sorted(k for k in keys if k not in CORE_ONLY_KEYS and not k.startswith("_"))
    return (f"cannot filter on metadata key '{key}': no indexed chunk has it (their keys: {', '.join(own)}); "
            "check the filter's key")


def filter_keys(filters: Any) -> Iterator[str]:
    """Every key a (possibly nested) MetadataFilters names."""
    for f in getattr(filters, "filters", None) or ():
        if hasattr(f, "filters"):
            yield from filter_keys(f)
        else:
            yield f.key
# Written into every stored state envelope: what it is of, so a copy of another index's state is recognised.
STATE_FORMAT = 1


class StateError(RagPluginsError):
    """Stored plugin state exists but cannot be read; the message says where and why."""


@dataclass
class DocumentInfo:
    doc_id: str
    metadata: dict[str, Any]
    node_ids: list[str] = field(default_factory=list)

    @property
    def doc_hash(self) -> str | None:
        return self.metadata.get(DOC_HASH_KEY)


class ChunkRow(NamedTuple):
    """A stored chunk without its vector or node: what corpus-wide statistics and the BM25 leg read."""

    id: str
    doc_id: str | None
    text: str
    metadata: dict[str, Any]
    # Where the store can read the row back without a search (LanceDB: its row id), or None.
    locator: Any = None


@dataclass
class StoredState:
    """One named collection of a plugin's records, as read back: the records, the ``meta`` dict the
    plugin wrote with them, and the id of the index the adapter that wrote them served."""

    records: list[dict[str, Any]]
    meta: dict[str, Any]
    index_id: str


class PluginState:
    """Named collections of JSON-serialisable records that one plugin keeps beside an index.

    ``write`` replaces a collection in one step: a reader sees the old records or the new ones,
    never a mixture. ``signature`` changes with every write (None: nothing stored), so a plugin can
    keep what it parsed until the next write."""

    def __init__(self, adapter: StoreAdapter, plugin: str):
        self.adapter, self.plugin = adapter, plugin

    @property
    def label(self) -> str:
        """Where this plugin's state lives, for messages."""
        return f"{self.adapter.state_label()}, plugin '{self.plugin}'"

    def read(self, name: str) -> StoredState | None:
        """The collection ``name``; None when it was never written; StateError when it cannot be used."""
        raw = self.adapter.read_state(self.plugin, name)
        if raw is None:
            return None
        try:
            envelope = json.loads(raw) if isinstance(raw, str) else raw
            if envelope.get("format") != STATE_FORMAT:
                raise StateError(f"the collection '{name}' in {self.label} has format {envelope.get('format')!r}, "
                                 f"this version reads {STATE_FORMAT}")
            records, meta = envelope["records"], envelope.get("meta") or {}
            if not isinstance(records, list) or not isinstance(meta, dict):
                raise TypeError("records must be a list and meta a dict")
            return StoredState(records, meta, str(envelope.get("index_id", "")))
        except StateError:
            raise
        except Exception as exc:  # noqa: BLE001 - bad JSON, missing keys, wrong types: all unreadable
            raise StateError(f"the collection '{name}' in {self.label} cannot be read "
                             f"({type(exc).__name__}: {exc})") from exc

    def write(self, name: str, records: Sequence[dict[str, Any]], meta: dict[str, Any] | None = None) -> None:
        envelope = {"format": STATE_FORMAT, "index_id": self.adapter.index_id, "generation": uuid.uuid4().hex,
                    "meta": dict(meta or {}), "records": list(records)}
        self.adapter.write_state(self.plugin, name, envelope)

    def signature(self, name: str) -> Hashable:
        return self.adapter.state_signature(self.plugin, name)


class StoreAdapter:
    """What ragplugins needs from a vector store, in one place. Subclass it for a store and give it
    a :meth:`handles` classmethod; publish it with the ``ragplugins_store_adapters`` hook.

    The defaults use only LlamaIndex's public vector store API (``get_nodes``, ``add``,
    ``delete_nodes``, the index's docstore), so a store that implements that API works with
    :class:`GenericAdapter` as it is; an adapter overrides what its store does better or differently.
    """

    # Shown in messages and docs ("lancedb", "simple", "qdrant").
    name: ClassVar[str] = "generic"
    # Whether the store's similarity scores are cosines of the query and chunk vectors.
    scores_are_cosines: ClassVar[bool] = False
    # Whether the store reports the filters of a host's VectorIndexRetriever while it runs
    # (ragplugins.query_inputs.store_queried), so plugins may search under them.
    reports_filters: ClassVar[bool] = False
    # Where an embedded index ragplugins manages keeps its files (ragplugins.home.IndexHome), set by
    # adapter_for; None for a host's store.
    home: Any = None
    # Set by the core (declare_hidden): metadata keys kept out of embed and LLM text.
    hidden_keys: frozenset[str] = frozenset()

    def __init__(self, index: Any, *, embedder_id: str | None = None, index_uid: str | None = None,
                 persist_dir: Any = None, table: str | None = None):
        self.index = index
        self.embedder_id = embedder_id
        # The stable id an embedded index records in its manifest (None for a host's store).
        self.index_uid = index_uid
        self.persist_dir = persist_dir
        self.table = table

    @classmethod
    def handles(cls, vector_store: Any) -> bool:
        """Whether this adapter is the one for ``vector_store`` (checked without importing its library)."""
        raise NotImplementedError

    @property
    def vector_store(self) -> Any:
        return self.index.vector_store

    # -- identity ----------------------------------------------------------
    @property
    def index_id(self) -> str:
        """Names this index, the same after a restart, so state kept for another index is never used for it."""
        if self.index_uid is not None:
            return f"{self.index_uid}:{self.table}" if self.table else self.index_uid
        collection = getattr(self.vector_store, "collection_name", None)
        if isinstance(collection, str) and collection:
            return f"{type(self.vector_store).__name__}:{collection}"
        return f"{type(self.vector_store).__name__}:{self.index.index_struct.index_id}"

    def identity(self) -> dict[str, str | None]:
        return {"index_id": self.index_id, "embedder": self.embedder_id, "store": self.name}

    def version(self) -> Hashable:
        """Changes when the stored chunks change behind ragplugins' back (None: the store cannot tell;
        then only ragplugins' own writes, through ``index_cache.invalidate``, mark caches stale)."""
        return None

    # -- reads -------------------------------------------------------------
    def iter_nodes(self) -> Iterator[Any]:
        """Every stored chunk: from the docstore when the index keeps one, else the store."""
        index = self.index
        docs = index.docstore.docs
        if docs or not self.vector_store.stores_text:
            ids = set(index.index_struct.nodes_dict.values()) if hasattr(index.index_struct, "nodes_dict") else None
            yield from (n for nid, n in docs.items() if ids is None or nid in ids)
            return
        try:
            nodes = list(self.vector_store.get_nodes())
        except Exception as exc:  # noqa: BLE001
            raise RuntimeError(f"cannot list the nodes of {type(self.vector_store).__name__}: {exc}") from exc
        yield from nodes

    def iter_chunk_rows(self, metadata_keys: Sequence[str] | None = ()) -> Iterator[ChunkRow]:
        """Every stored chunk's id, document id, text and the given metadata keys (those it has; None:
        all of its metadata but the core's own, ``CORE_ONLY_KEYS``), in stored order, without vectors: a
        store that can project columns streams them."""
        for n in self.iter_nodes():
            meta = n.metadata or {}
            keys = [k for k in meta if k not in CORE_ONLY_KEYS] if metadata_keys is None else \
                [k for k in metadata_keys if k in meta]
            yield ChunkRow(n.node_id, n.ref_doc_id, n.get_content(), {k: meta[k] for k in keys})

    def iter_texts(self) -> Iterator[str]:
        """The text of every stored chunk (without metadata), for corpus statistics."""
        return (row.text for row in self.iter_chunk_rows())

    def get_nodes(self, node_ids: Sequence[str], locators: Sequence[Any] | None = None) -> list[Any]:
        """The stored chunks of ``node_ids`` (any order; missing ones left out). ``locators``: the same
        rows' ``ChunkRow.locator``, which a store may read by instead of searching by id."""
        if not node_ids:
            return []
        wanted = set(node_ids)
        if self.index.docstore.docs:
            return [n for n in self.iter_nodes() if n.node_id in wanted]
        return list(self.vector_store.get_nodes(node_ids=list(node_ids)))

    def list_documents(self) -> dict[str, DocumentInfo]:
        """The documents already indexed, with the metadata of their first chunk."""
        nodes = sorted(self.iter_nodes(), key=lambda n: (n.ref_doc_id or "", n.metadata.get(CHUNK_INDEX_KEY) or 0))
        docs: dict[str, DocumentInfo] = {}
        for node in nodes:
            info = docs.setdefault(node.ref_doc_id, DocumentInfo(
                node.ref_doc_id, {k: v for k, v in node.metadata.items() if k not in CORE_ONLY_KEYS}))
            info.node_ids.append(node.node_id)
        return docs

    def check_filters(self, filters: Any) -> None:
        """Raise InputError naming a filter key that no stored chunk can have (a misspelt key otherwise
        matches nothing, silently); a store that cannot tell checks nothing."""

    def ids_passing(self, filters: Any) -> Collection[str] | None:
        """The ids of the stored chunks that pass ``filters``, read by the store itself without reading the
        chunks, or None when it cannot (the in-memory legs then read candidates until enough pass)."""
        return None

    def sparse_search(self, query: str, k: int, filters: Any = None) -> list[Any] | None:
        """The store's own keyword search (NodeWithScore, best first), or None when it has none and
        the core's BM25 (ragplugins.sparse) is to be used."""
        return None

    # -- writes ------------------------------------------------------------
    def declare_metadata(self, keys: dict[str, type]) -> None:
        """Metadata keys (name -> scalar type) the enabled plugins write; a store with a schema makes room."""

    def declare_hidden(self, keys: frozenset[str]) -> None:
        """Metadata keys kept out of embed and LLM text: ``update_metadata`` hides those it adds to a chunk
        stored before the plugin that writes them was enabled (what ``prepare`` patches)."""
        self.hidden_keys = frozenset(keys)

    def update_metadata(self, updates: dict[str, dict[str, Any]]) -> int:
        """Merge ``{node_id: {key: value}}`` into stored chunks without touching text or vectors."""
        index = self.index
        if index.docstore.docs:
            changed = []
            for node_id, patch in updates.items():
                node = index.docstore.get_node(node_id, raise_error=False)
                if node is not None:
                    node.metadata = {**node.metadata, **patch}
                    hide_metadata(node, sorted(self.hidden_keys & set(patch)))
                    changed.append(node)
            index.docstore.add_documents(changed, allow_update=True)
            return len(changed)
        # Re-write the stored nodes with their own vectors (an upsert by id).
        nodes = self.vector_store.get_nodes(node_ids=list(updates))
        if any(n.embedding is None for n in nodes):
            raise NotImplementedError(f"{type(self.vector_store).__name__} does not return vectors with get_nodes, "
                                      "so metadata cannot be updated without re-embedding; re-index instead")
        for node in nodes:
            node.metadata = {**node.metadata, **updates[node.node_id]}
            hide_metadata(node, sorted(self.hidden_keys & set(updates[node.node_id])))
        self.vector_store.add(nodes)
        return len(nodes)

    def write_batch(self, nodes: Sequence[Any], replace_doc_ids: Sequence[str],
                    existing: dict[str, DocumentInfo]) -> None:
        """Write ``nodes`` and remove every other chunk of the documents ``replace_doc_ids``. Here: add
        first (an id already stored is replaced), then remove what is stale, so a document is never
        absent in between. ``existing``: list_documents() before the write."""
        new_ids = {n.node_id for n in nodes}
        rewritten = {n.ref_doc_id for n in nodes}
        stale = [nid for d in replace_doc_ids if d in rewritten and d in existing
                 for nid in existing[d].node_ids if nid not in new_ids]
        gone = [d for d in replace_doc_ids if d not in rewritten]
        if nodes:
            self.index.insert_nodes(list(nodes))
        if stale:
            self.index.delete_nodes(stale, delete_from_docstore=True)
        self.remove_documents(gone)

    def remove_documents(self, doc_ids: Sequence[str]) -> None:
        for doc_id in doc_ids:
            self.index.delete_ref_doc(doc_id, delete_from_docstore=True)

    def after_write(self) -> None:
        """Bring what the store derives from its rows in line after a write (a store with a derived
        index of its own refreshes it here; none of the built-in stores has one)."""

    # -- plugin state --------------------------------------------------------
    def state(self, plugin: str) -> PluginState:
        """The named record collections ``plugin`` keeps beside this index."""
        return PluginState(self, plugin)

    def state_label(self) -> str:
        return "this process's memory"

    def read_state(self, plugin: str, name: str) -> dict | str | None:
        """The envelope stored for (plugin, name), as a dict or its JSON text; None when absent."""
        return _MEMORY.read(self.vector_store, (plugin, name))

    def write_state(self, plugin: str, name: str, envelope: dict) -> None:
        """Replace the envelope stored for (plugin, name) in one step."""
        if _MEMORY.write(self.vector_store, (plugin, name), envelope):
            warnings.warn(f"ragplugins: {type(self.vector_store).__name__} offers no place for plugin state, so "
                          f"plugin '{plugin}' keeps '{name}' in this process's memory only; after a restart it is "
                          "rebuilt (e.g. ragplugins check --repair, or the plugin's rebuild command)", stacklevel=4)

    def state_signature(self, plugin: str, name: str) -> Hashable:
        envelope = self.read_state(plugin, name)
        if envelope is None:
            return None
        if isinstance(envelope, str):
            return hash(envelope)
        return envelope.get("generation")


class _MemoryStates:
    """Plugin state of stores that keep none: per store object, gone with it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_store: dict[int, dict[tuple[str, str], dict]] = {}

    def read(self, store: Any, key: tuple[str, str]) -> dict | None:
        with self._lock:
            return self._by_store.get(id(store), {}).get(key)

    def write(self, store: Any, key: tuple[str, str], envelope: dict) -> bool:
        """Store ``envelope``; True when it is the first write of ``key`` for ``store``."""
        import weakref

        with self._lock:
            if id(store) not in self._by_store:
                self._by_store[id(store)] = {}
                weakref.finalize(store, self._by_store.pop, id(store), None)
            first = key not in self._by_store[id(store)]
            self._by_store[id(store)][key] = envelope
        return first


_MEMORY = _MemoryStates()
