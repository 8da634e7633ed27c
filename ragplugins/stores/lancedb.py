"""The embedded default store, :class:`ragplugins.store.RagLanceDBVectorStore`.

Plugin state lives in files beside the table: ``<persist_dir>/sidecars/<plugin>/<name>.<table>.json``
for the index ragplugins manages (``<uri>.ragplugins/...`` for a LanceDB store a host gave), each
replaced atomically (a temporary file, fsynced, renamed over the old one; on object storage one PUT).
They go through the index's home (:mod:`ragplugins.home`), so an index in an s3:// persist_dir keeps
its state in the same bucket. A Lance table would do
too, but a whole collection is always read and written at once, which is what a file is for.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Hashable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragplugins.stores.base import CHUNK_INDEX_KEY, CORE_ONLY_KEYS, ChunkRow, DocumentInfo, StoreAdapter

if TYPE_CHECKING:
    from ragplugins.home import IndexHome

STATE_DIR = "sidecars"


class LanceDBAdapter(StoreAdapter):
    name = "lancedb"
    reports_filters = True  # RagLanceDBVectorStore.query reports a host retriever's filters

    @classmethod
    def handles(cls, vector_store: Any) -> bool:
        # Without importing LanceDB for an app that never opened one: no RagLanceDBVectorStore exists
        # until ragplugins.store was imported.
        module = sys.modules.get("ragplugins.store")
        return module is not None and isinstance(vector_store, module.RagLanceDBVectorStore)

    @property
    def index_id(self) -> str:
        if self.index_uid is not None:
            return f"{self.index_uid}:{self.table or self.vector_store.table_name}"
        return f"lancedb:{Path(str(self.vector_store.uri)).resolve()}:{self.vector_store.table_name}"

    def version(self) -> Hashable:
        return self.vector_store.table_version()  # bumped by every write, whoever made it

    # -- reads -------------------------------------------------------------
    def iter_nodes(self) -> Iterator[Any]:
        return iter(self.vector_store.get_nodes())

    def iter_chunk_rows(self, metadata_keys: Sequence[str] | None = ()) -> Iterator[ChunkRow]:
        store = self.vector_store  # the projected columns only, never the vectors, a batch at a time
        own = store.node_metadata_keys()
        keys = [k for k in own if k not in CORE_ONLY_KEYS] if metadata_keys is None else \
            [k for k in metadata_keys if k in own]
        columns = {"id": "id", "doc": store.doc_id_key, "text": store.text_key, **{k: f"metadata.{k}" for k in keys}}
        for r in store.scan_rows(columns, with_row_id=True):
            yield ChunkRow(r["id"], r["doc"], r["text"] or "", {k: r[k] for k in keys if r[k] is not None},
                           r["_rowid"])

    def check_filters(self, filters: Any) -> None:
        from ragplugins.errors import InputError

        if not self.vector_store.metadata_fields():
            return  # nothing written yet: every key is still possible
        try:
            self.vector_store.where_clause(filters)   # names a key no chunk has, or an operator LanceDB lacks
        except ValueError as exc:
            raise InputError(str(exc)) from None

    def ids_passing(self, filters: Any) -> set[str] | None:
        return self.vector_store.ids_where(filters)

    def get_nodes(self, node_ids: Sequence[str], locators: Sequence[Any] | None = None) -> list[Any]:
        if not node_ids:
            return []
        if locators is not None and None not in locators:
            # A few rows by row id instead of a scan of the table for their ids; a row id that no longer
            # holds the chunk (the table was rewritten since) falls back to the search.
            nodes = self.vector_store.get_nodes_at(list(locators))
            if sorted(n.node_id for n in nodes) == sorted(node_ids):
                return nodes
        return self.vector_store.get_nodes(node_ids=list(node_ids))

    def list_documents(self) -> dict[str, DocumentInfo]:
        store = self.vector_store
        keys = {k: f"metadata.{k}" for k in store.node_metadata_keys() if k not in CORE_ONLY_KEYS}
        rows = store.document_rows({"id": "id", "doc": store.doc_id_key, **keys})
        rows.sort(key=lambda r: (r["doc"], r.get(CHUNK_INDEX_KEY) or 0))
        docs: dict[str, DocumentInfo] = {}
        for row in rows:
            info = docs.get(row["doc"])
            if info is None:
                meta = {k: row[k] for k in keys if row.get(k) is not None}
                info = docs[row["doc"]] = DocumentInfo(row["doc"], meta)
            info.node_ids.append(row["id"])
        return docs

    # -- writes ------------------------------------------------------------
    def declare_metadata(self, keys: dict[str, type]) -> None:
        self.vector_store.declare_metadata(keys)

    def update_metadata(self, updates: dict[str, dict[str, Any]]) -> int:
        return self.vector_store.update_metadata(updates, hide=self.hidden_keys)

    def write_batch(self, nodes: Sequence[Any], replace_doc_ids: Sequence[str],
                    existing: dict[str, DocumentInfo]) -> None:
        # One Lance commit: a reader sees each document as it was or as it is now.
        self.vector_store.write_batch(nodes, replace_doc_ids=list(replace_doc_ids))

    def remove_documents(self, doc_ids: Sequence[str]) -> None:
        self.vector_store.write_batch([], replace_doc_ids=list(doc_ids))

    def after_write(self) -> None:
        self.vector_store.refresh_vector_index()

    # -- plugin state --------------------------------------------------------
    def state_home(self) -> IndexHome:
        """Where the state lives: the index's home (a folder or an object-store prefix) for the index
        ragplugins manages, else ``<uri>.ragplugins`` beside a host's LanceDB database."""
        from ragplugins.home import LocalHome

        if self.home is not None:
            return self.home
        if self.persist_dir is not None:
            return LocalHome(self.persist_dir)
        return LocalHome(f"{Path(str(self.vector_store.uri)).resolve()}.ragplugins")

    @property
    def state_dir(self) -> Path:
        """The local folder of the state (for an index on object storage, see :meth:`state_label`)."""
        return Path(self.state_home().location(STATE_DIR))

    def _name(self, plugin: str, name: str) -> str:
        return f"{STATE_DIR}/{plugin}/{name}.{self.vector_store.table_name}.json"

    def state_label(self) -> str:
        return f"'{self.state_home().location(STATE_DIR)}' (table '{self.vector_store.table_name}')"

    def read_state(self, plugin: str, name: str) -> str | None:
        return self.state_home().read_text(self._name(plugin, name))

    def state_signature(self, plugin: str, name: str) -> Hashable:
        return self.state_home().signature(self._name(plugin, name))

    def write_state(self, plugin: str, name: str, envelope: dict) -> None:
        self.state_home().write_text(self._name(plugin, name),
                                     json.dumps(envelope, separators=(",", ":"), ensure_ascii=False))


def recorded_index_uid(home: IndexHome | Path) -> str | None:
    """The index uid the plugin state in ``home`` (a persist_dir) was written for (to keep it when the
    manifest that records it is rebuilt), or None."""
    from ragplugins.home import IndexHome, LocalHome

    home = home if isinstance(home, IndexHome) else LocalHome(home)
    for name in home.files(STATE_DIR):
        if name.count("/") != 2 or not name.endswith(".json"):  # sidecars/<plugin>/<name>.<table>.json
            continue
        try:
            index_id = json.loads(home.read_text(name) or "{}").get("index_id")
        except Exception:  # noqa: BLE001 - unreadable state is its plugin's check's business
            continue
        if index_id:
            return str(index_id).split(":")[0]
    return None
