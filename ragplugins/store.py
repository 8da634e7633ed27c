"""The embedded default store (its adapter is ragplugins.stores.lancedb).

:class:`RagLanceDBVectorStore` fixes what llama-index-vector-stores-lancedb
0.6 gets wrong with lancedb 0.40: deletes and ``get_nodes`` quote literals as
identifiers, an empty result raises, filters cannot nest or negate, and the
metadata schema is frozen by the first write so a later batch with another
key fails. Here the store owns the schema: every row carries every known key
(explicit nulls), keys the schema lacks stay in the node JSON (readable, just
not filterable) and a warning names them.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import math
import re
import threading
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
from llama_index.core.schema import BaseNode, MetadataMode
from llama_index.core.vector_stores.types import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryResult,
)
from llama_index.core.vector_stores.utils import metadata_dict_to_node, node_to_metadata_dict
from llama_index.vector_stores.lancedb import LanceDBVectorStore
from llama_index.vector_stores.lancedb.base import TableNotFoundError
from pydantic import PrivateAttr

from ragplugins import query_inputs
from ragplugins.errors import StoreError
from ragplugins.nodes import (
    cosine,  # noqa: F401 - plugins import it from here too
    hide_metadata,
)
from ragplugins.stores.base import LLAMAINDEX_KEYS, unknown_filter_key

logger = logging.getLogger(__name__)

_ARROW_TYPES = {str: pa.string(), int: pa.int64(), float: pa.float64(), bool: pa.bool_()}
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _sql_literal(value: Any) -> str:
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def _arrow_type_of(value: Any) -> pa.DataType:
    for py, arrow in _ARROW_TYPES.items():
        if type(value) is py:
            return arrow
    return pa.string()


def _fits(value: Any, arrow_type: pa.DataType) -> tuple[bool, Any]:
    """Whether ``value`` can be stored in a struct field of ``arrow_type`` unchanged."""
    if value is None:
        return True, None
    if pa.types.is_string(arrow_type):
        return isinstance(value, str), value
    if pa.types.is_boolean(arrow_type):
        return isinstance(value, bool), value
    if pa.types.is_integer(arrow_type):
        return (isinstance(value, int) and not isinstance(value, bool)), value
    if pa.types.is_floating(arrow_type):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return ok, float(value) if ok else value
    return False, value


class _NoEmptyTableNotice(logging.Filter):
    """Upstream warns on every open of a not-yet-created table, which is the normal state of a new index."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "doesn't exist yet" not in record.getMessage()


logging.getLogger("llama_index.vector_stores.lancedb.base").addFilter(_NoEmptyTableNotice())


class RagLanceDBVectorStore(LanceDBVectorStore):
    """LanceDBVectorStore with working deletes, filters, empty results and schema.

    It keeps the table in state of its own (``_rows``) and reaches the upstream store only through
    its public ``client``, ``table`` and fields, so no private attribute of the upstream class is
    read or written; every method that would need one (``query``, ``add``, deletes) is its own."""

    _declared: dict[str, type] = PrivateAttr(default_factory=dict)
    _warned_keys: set = PrivateAttr(default_factory=set)
    _rows: Any = PrivateAttr(default=None)
    _name: str = PrivateAttr(default="")
    # Read-only handles on past table versions, for the queries that read them (_reading).
    _versions: dict = PrivateAttr(default_factory=dict)
    _versions_lock: Any = PrivateAttr(default_factory=threading.Lock)

    # "ivf_flat" / "ivf_pq": keep an approximate vector index up to date after writes (refresh_vector_index).
    vector_index: str = "flat"

    def __init__(self, uri: str, table_name: str = "vectors", *, declared_metadata: dict[str, type] | None = None,
                 vector_index: str = "flat", **kwargs: Any):
        kwargs.setdefault("mode", "create")
        if vector_index == "ivf_pq":
            kwargs.setdefault("refine_factor", 10)  # re-rank by the full vectors: PQ distances are coarse
        super().__init__(uri=uri, table_name=table_name, **kwargs)
        self.vector_index = vector_index
        self._declared = dict(declared_metadata or {})
        self._warned_keys = set()
        self._name = table_name
        try:
            self._rows = super().table  # opened by the upstream constructor when it exists
        except TableNotFoundError:
            self._rows = None

    @property
    def table(self) -> Any:
        """The Lance table (None before the first write)."""
        return self._rows

    # -- which version a read sees -----------------------------------------
    def _latest(self) -> Any:
        """The table at its latest version, whoever wrote it (this process, another one, another
        machine): a LanceDB handle keeps reading the version it opened until told to look again."""
        if self._rows is None:
            try:
                self._rows = self.client.open_table(self._name)  # type: ignore[attr-defined]  # upstream types client as None
            except (ValueError, FileNotFoundError, TableNotFoundError):
                return None
        else:
            self._rows.checkout_latest()
        return self._rows

    def _reading(self) -> Any:
        """The table as the query being answered reads it: the version its first read found, for every
        later read of that query (a write landing meanwhile cannot give one answer a document's old
        chunks beside its new ones); outside a query, the latest version."""
        inputs = query_inputs.current()
        if inputs is None:
            return self._latest()
        if id(self) not in inputs.pinned:
            latest = self._latest()
            if latest is None:
                return None  # no table yet: nothing to pin
            inputs.pinned[id(self)] = self._at_version(latest.version)
        return inputs.pinned[id(self)]

    def _unpin(self) -> None:
        """After a write through this store: the query open here, if any, reads what was just written."""
        inputs = query_inputs.current()
        if inputs is not None:
            inputs.pinned.pop(id(self), None)

    def _at_version(self, version: int) -> Any:
        """A read-only handle on ``version``, shared by the queries that read it (the last few are kept)."""
        with self._versions_lock:
            table = self._versions.get(version)
            if table is None:
                table = self.client.open_table(self._name)  # type: ignore[attr-defined]
                table.checkout(version)
                self._versions[version] = table
                while len(self._versions) > 4:
                    del self._versions[next(iter(self._versions))]
            return table

    @property
    def table_name(self) -> str:
        return self._name

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins.RagLanceDBVectorStore"

    # -- schema ----------------------------------------------------------
    def declare_metadata(self, keys: dict[str, type]) -> None:
        """Keys (name -> scalar type) that every row should carry, even as null."""
        self._declared.update(keys)

    def metadata_fields(self) -> dict[str, pa.DataType]:
        """The filterable metadata keys of the table and their Arrow types ({} before the first write)."""
        table = self._reading()
        if table is None:
            return {}
        struct = table.schema.field("metadata").type
        return {struct.field(i).name: struct.field(i).type for i in range(struct.num_fields)}

    def node_metadata_keys(self) -> list[str]:
        """The metadata columns that hold nodes' own metadata (not the keys LlamaIndex stores beside it)."""
        return [k for k in self.metadata_fields() if k not in LLAMAINDEX_KEYS]

    def _new_schema(self, dim: int, metas: list[dict]) -> pa.Schema:
        fields: dict[str, pa.DataType] = {k: _ARROW_TYPES[t] for k, t in self._declared.items()}
        for meta in metas:
            for key, value in meta.items():
                if key not in fields or (fields[key] == pa.null()):
                    fields[key] = pa.string() if value is None else _arrow_type_of(value)
        struct = pa.struct([pa.field(k, t, nullable=True) for k, t in fields.items()])
        return pa.schema([
            pa.field("id", pa.string()),
            pa.field(self.doc_id_key, pa.string()),
            pa.field(self.vector_column_name, pa.list_(pa.float32(), dim)),
            pa.field(self.text_key, pa.string()),
            pa.field("metadata", struct),
        ])

    def _conform(self, meta: dict, fields: dict[str, pa.DataType]) -> dict:
        row = {}
        for key, arrow_type in fields.items():
            ok, value = _fits(meta.get(key), arrow_type)
            if not ok:
                self._warn_key(key, f"its value {meta.get(key)!r} does not fit the column type {arrow_type}")
                value = None
            row[key] = value
        for key in meta.keys() - fields.keys():
            self._warn_key(key, "the table schema was fixed before this key existed")
        return row

    def _warn_key(self, key: str, why: str) -> None:
        if key in self._warned_keys:
            return
        self._warned_keys.add(key)
        warnings.warn(f"metadata key '{key}' is stored in the node but cannot be filtered on in LanceDB "
                      f"table '{self._name}' ({why}); re-index into a new table to filter on it",
                      stacklevel=4)

    # -- writes ------------------------------------------------------------
    def add(self, nodes: Sequence[BaseNode], **add_kwargs: Any) -> list[str]:
        """Add ``nodes``; a node whose id is already stored replaces that row (no duplicate ids)."""
        self.write_batch(nodes, replace_doc_ids=())
        return [n.node_id for n in nodes]

    def write_batch(self, nodes: Sequence[BaseNode], replace_doc_ids: Sequence[str]) -> None:
        """One commit: ``nodes`` are added or replace the rows with their ids, and every other row of
        the documents ``replace_doc_ids`` is removed, so a reader sees each document as it was or as it
        is now. A new metadata key first migrates the table (one commit of its own that keeps every row)."""
        metas = [node_to_metadata_dict(n, remove_text=False, flat_metadata=self.flat_metadata) for n in nodes]
        doc_clause = (f"{self.doc_id_key} IN ({', '.join(_sql_literal(d) for d in replace_doc_ids)})"
                      if replace_doc_ids else None)
        self._latest()  # written on top of what every other writer wrote
        if not nodes:
            if doc_clause and self._rows is not None:
                self._rows.delete(doc_clause)
                self._unpin()
            return
        if self._rows is None:
            schema = self._new_schema(len(nodes[0].get_embedding()), metas)
            self._rows = self.client.create_table(self._name, schema=schema, mode="create")  # type: ignore[attr-defined]  # upstream types client as None
        else:
            self.migrate_schema(metas)
        fields = self.metadata_fields()
        rows = [{
            "id": n.node_id,
            self.doc_id_key: n.ref_doc_id,
            self.vector_column_name: n.get_embedding(),
            self.text_key: n.get_content(metadata_mode=MetadataMode.NONE),
            "metadata": self._conform(meta, fields),
        } for n, meta in zip(nodes, metas)]
        merge = self._rows.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
        if doc_clause:
            merge = merge.when_not_matched_by_source_delete(doc_clause)
        merge.execute(pa.Table.from_pylist(rows, schema=self._rows.schema))
        self._unpin()

    def migrate_schema(self, metas: Sequence[dict] = ()) -> list[str]:
        """Give the table a column for every declared key (and every key in ``metas``) it lacks, reading
        the values back from each row's stored node; one commit, no row lost. Returns the added keys."""
        if self._rows is None:
            return []
        fields = self.metadata_fields()
        added = {k: _ARROW_TYPES[t] for k, t in self._declared.items() if k not in fields}
        for meta in metas:
            for key, value in meta.items():
                if key not in fields and key not in added:
                    added[key] = pa.string() if value is None else _arrow_type_of(value)
        if not added:
            return []
        new_fields = {**fields, **added}
        struct = pa.struct([pa.field(k, t, nullable=True) for k, t in new_fields.items()])
        old = self._rows.schema
        schema = pa.schema([old.field(i) if old.field(i).name != "metadata" else pa.field("metadata", struct)
                            for i in range(len(old))])
        rows = self._rows.to_arrow().to_pylist()
        for row in rows:
            node = metadata_dict_to_node(row["metadata"])
            meta = node_to_metadata_dict(node, remove_text=False, flat_metadata=self.flat_metadata)
            row["metadata"] = self._conform(meta, new_fields)
        # mode="overwrite" is one Lance commit: a reader sees the table before or after, never without rows.
        # The ignore below: LanceDBVectorStore.client is annotated "-> None"; it returns the connection.
        self._rows = self.client.create_table(self._name, pa.Table.from_pylist(rows, schema=schema),  # type: ignore[attr-defined]
                                                    schema=schema, mode="overwrite")
        self._unpin()
        logger.info("ragplugins: table '%s' migrated: new filterable keys %s", self._name, sorted(added))
        return sorted(added)

    def delete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        if self._rows is not None:
            self._rows.delete(f"{self.doc_id_key} = {_sql_literal(ref_doc_id)}")
            self._unpin()

    def delete_nodes(self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None,
                     **delete_kwargs: Any) -> None:
        if self._rows is None:
            return
        clauses = []
        if node_ids:
            clauses.append(f"id IN ({', '.join(_sql_literal(i) for i in node_ids)})")
        if filters is not None:
            clauses.append(self.where_clause(filters))
        if clauses:
            self._rows.delete(" AND ".join(f"({c})" for c in clauses))
            self._unpin()

    def update_metadata(self, updates: dict[str, dict[str, Any]], hide: frozenset[str] = frozenset()) -> int:
        """Merge ``{node_id: {key: value}}`` into stored nodes; vectors and text are untouched. Keys in ``hide``
        that a patch adds are kept out of the node's embed and LLM text."""
        if self._latest() is None or not updates:
            return 0
        self.migrate_schema([{k: v for patch in updates.values() for k, v in patch.items()}])
        ids = list(updates)
        fields = self.metadata_fields()
        # Only the id and metadata columns are read and written (LanceDB merges a partial row into the
        # stored one): a corpus-wide step may patch every chunk of a million, vectors stay where they are.
        schema = pa.schema([self._rows.schema.field("id"), self._rows.schema.field("metadata")])
        updated = 0

        def patched() -> Iterator[pa.RecordBatch]:
            nonlocal updated
            for start in range(0, len(ids), UPDATE_SLICE_ROWS):
                where = ", ".join(_sql_literal(i) for i in ids[start:start + UPDATE_SLICE_ROWS])
                query = self._rows.search().where(f"id IN ({where})").select(["id", "metadata"]).limit(None)
                for batch in query.to_batches(8192):
                    rows = []
                    for row in batch.to_pylist():
                        node = metadata_dict_to_node(row["metadata"])
                        node.metadata = {**node.metadata, **updates[row["id"]]}
                        hide_metadata(node, sorted(hide & set(updates[row["id"]])))
                        meta = node_to_metadata_dict(node, remove_text=False, flat_metadata=self.flat_metadata)
                        rows.append({"id": row["id"], "metadata": self._conform(meta, fields)})
                    updated += len(rows)
                    yield from pa.Table.from_pylist(rows, schema=schema).to_batches()

        batches = patched()
        first = next(batches, None)   # none of the ids stored: no write, no new table version
        if first is None:
            return 0
        self._rows.merge_insert("id").when_matched_update_all() \
            .execute(pa.RecordBatchReader.from_batches(schema, itertools.chain([first], batches)))
        self._unpin()
        return updated

    # -- reads -------------------------------------------------------------
    def where_clause(self, filters: MetadataFilters) -> str:
        fields = self.metadata_fields()
        top_level = {"id", self.doc_id_key, self.text_key}

        def column(key: str) -> str:
            if key in fields:
                return f"metadata.{key}" if _IDENT.match(key) else f"metadata.`{key}`"
            if key in top_level:
                return key
            raise ValueError(unknown_filter_key(key, self.node_metadata_keys()))

        def one(f: MetadataFilter) -> str:
            col, op, v = column(f.key), f.operator, f.value
            simple = {FilterOperator.EQ: "=", FilterOperator.NE: "!=", FilterOperator.GT: ">",
                      FilterOperator.GTE: ">=", FilterOperator.LT: "<", FilterOperator.LTE: "<="}
            if op in simple:
                return f"{col} {simple[op]} {_sql_literal(v)}"
            if op in (FilterOperator.IN, FilterOperator.NIN):
                values = v if isinstance(v, list) else [v]
                if not values:
                    return "FALSE" if op == FilterOperator.IN else "TRUE"
                neg = "NOT " if op == FilterOperator.NIN else ""
                return f"{col} {neg}IN ({', '.join(_sql_literal(x) for x in values)})"
            if op == FilterOperator.TEXT_MATCH:
                return f"{col} LIKE {_sql_literal('%' + str(v) + '%')}"
            if op == FilterOperator.TEXT_MATCH_INSENSITIVE:
                return f"lower({col}) LIKE {_sql_literal('%' + str(v).lower() + '%')}"
            if op == FilterOperator.IS_EMPTY:
                return f"({col} IS NULL OR {col} = '')"
            raise ValueError(f"filter operator '{op.value}' on key '{f.key}' is not supported by LanceDB")

        def group(fs: MetadataFilters) -> str:
            parts = [group(f) if isinstance(f, MetadataFilters) else one(f) for f in fs.filters]
            if not parts:
                return "TRUE"
            if fs.condition == FilterCondition.NOT:
                return "NOT (" + " AND ".join(parts) + ")"
            joiner = " OR " if fs.condition == FilterCondition.OR else " AND "
            return "(" + joiner.join(parts) + ")"

        return group(filters)

    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        # A host's VectorIndexRetriever over this store filters here: the core reads its filters off.
        query_inputs.store_queried(self, query, kwargs)
        empty = VectorStoreQueryResult(nodes=[], similarities=[], ids=[])
        table = self._reading()
        if table is None or query.query_embedding is None:
            return empty
        if kwargs.get("query_type", self.query_type) != "vector":
            raise ValueError(f"{type(self).__name__} answers vector queries only (query_type 'vector'); ragplugins "
                             "runs its own keyword search beside it")
        search = table.search(query.query_embedding, vector_column_name=self.vector_column_name) \
            .limit(query.similarity_top_k * self.overfetch_factor).nprobes(self.nprobes)  # type: ignore[operator]  # upstream: Optional, default 1
        where = self.where_clause(query.filters) if query.filters is not None else kwargs.get("where")
        if where is not None:
            search = search.where(where)
        if self.refine_factor is not None:
            search = search.refine_factor(self.refine_factor)
        rows = search.to_arrow().to_pylist()
        nodes = self._nodes(rows)
        # As upstream: similarity = exp(-distance).
        return VectorStoreQueryResult(nodes=nodes, similarities=[math.exp(-r["_distance"]) for r in rows],
                                      ids=[r["id"] for r in rows])

    def get_nodes_at(self, row_ids: list[int]) -> list[BaseNode]:
        """The nodes at ``row_ids`` (from ``scan_rows(..., with_row_id=True)``), in any order."""
        table = self._reading()
        if table is None or not row_ids:
            return []
        # Only what a node is made of: each column is a read of its own (a request on object storage).
        taken = table.take_row_ids(row_ids).select(["metadata", self.vector_column_name])
        return self._nodes(taken.to_arrow().to_pylist())

    def get_nodes(self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None,
                  **kwargs: Any) -> list[BaseNode]:
        table = self._reading()
        if table is None:
            return []
        clauses = []
        if node_ids is not None:
            if not node_ids:
                return []
            clauses.append(f"id IN ({', '.join(_sql_literal(i) for i in node_ids)})")
        if filters is not None:
            clauses.append(self.where_clause(filters))
        search = table.search()
        if clauses:
            search = search.where(" AND ".join(clauses))
        nodes = []
        for row in search.limit(None).to_arrow().to_pylist():
            node = metadata_dict_to_node(row["metadata"])
            node.embedding = list(row[self.vector_column_name])
            nodes.append(node)
        return nodes

    def table_version(self) -> int:
        """Bumped by every write to the table, whoever made it (ragplugins.index_cache reads it)."""
        table = self._reading()
        return table.version if table is not None else 0

    def refresh_vector_index(self) -> str | None:
        """With ``vector_index`` "ivf_flat" or "ivf_pq": build the index once the table holds VECTOR_INDEX_MIN_ROWS
        rows, else add the rows written since to it when they are more than a tenth of those it holds
        (LanceDB's optimize: new rows into the index, small files merged; versions younger than 7 days
        kept, so a reader on an older version is unaffected). What was done, or None."""
        table = self._rows
        if self.vector_index not in ("ivf_flat", "ivf_pq") or table is None:
            return None
        rows = table.count_rows()
        index = next((ix for ix in table.list_indices() if list(ix.columns) == [self.vector_column_name]), None)
        if index is None:
            if rows < VECTOR_INDEX_MIN_ROWS:
                return None
            from lancedb.index import IvfFlat, IvfPq

            dim = table.schema.field(self.vector_column_name).type.list_size
            # L2 as the queries measure (unit vectors: the cosine order); about 256+ rows per partition.
            partitions = max(1, min(round(rows ** 0.5), rows // 256))
            config = IvfPq(distance_type="l2", num_partitions=partitions, num_sub_vectors=_sub_vectors(dim)) \
                if self.vector_index == "ivf_pq" else IvfFlat(distance_type="l2", num_partitions=partitions)
            table.create_index(self.vector_column_name, config=config)
            return "built"
        stats = table.index_stats(index.name)
        if stats is not None and stats.num_unindexed_rows > 0.1 * max(1, stats.num_indexed_rows):
            table.optimize()
            return "updated"
        return None

    def deduplicate(self) -> int:
        """Keep one row per chunk id (one commit); returns how many rows were dropped."""
        if self._rows is None:
            return 0
        data = self._rows.to_arrow()
        seen: set[str] = set()
        keep = []
        for i, node_id in enumerate(data.column("id").to_pylist()):
            if node_id not in seen:
                seen.add(node_id)
                keep.append(i)
        if len(keep) == data.num_rows:
            return 0
        # The ignore below: LanceDBVectorStore.client is annotated "-> None"; it returns the connection.
        self._rows = self.client.create_table(self._name, data.take(keep), schema=data.schema,  # type: ignore[attr-defined]
                                                    mode="overwrite")
        self._unpin()
        return data.num_rows - len(keep)

    def _nodes(self, rows: list[dict]) -> list[BaseNode]:
        """The stored nodes of ``rows`` (metadata and vector)."""
        nodes = []
        for row in rows:
            node = metadata_dict_to_node(row["metadata"])
            node.embedding = list(row[self.vector_column_name])
            nodes.append(node)
        return nodes

    def document_rows(self, columns: dict[str, str]) -> list[dict]:
        """Project every row to ``{alias: column}``, e.g. ``{"doc": "doc_id"}``."""
        return list(self.scan_rows(columns))

    def ids_where(self, filters: MetadataFilters) -> set[str]:
        """The ids of the rows that pass ``filters``, read from the id column alone."""
        table = self._reading()
        if table is None:
            return set()
        with _store_errors(self):
            rows = table.search().where(self.where_clause(filters)).select(["id"]).limit(None).to_arrow()
        return set(rows.column("id").to_pylist())

    def scan_rows(self, columns: dict[str, str], batch_size: int = 8192, with_row_id: bool = False) -> Iterator[dict]:
        """``document_rows`` a batch at a time: a million rows' text need not be in memory at once.
        ``with_row_id``: each row's ``_rowid`` too (``get_nodes_at`` reads rows back by it)."""
        table = self._reading()
        if table is None:
            return
        names = [*columns, "_rowid"] if with_row_id else list(columns)
        with _store_errors(self):
            for batch in table.search().select(columns).with_row_id(with_row_id).limit(None).to_batches(batch_size):
                yield from batch.select(names).to_pylist()


@contextlib.contextmanager
def _store_errors(store: RagLanceDBVectorStore) -> Iterator[None]:
    """Lance reports a damaged table (a lost data file, a cut-short version record) with RuntimeError or
    OSError from deep inside; callers get one StoreError that names the table and the fix."""
    try:
        yield
    except (RuntimeError, OSError) as exc:
        if isinstance(exc, RuntimeError) and "lance" not in str(exc).lower():
            raise
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise StoreError(f"the LanceDB table '{store._name}' in '{store.uri}' cannot be read "
                         f"({first.split(', /')[0][:200]}); run `ragplugins check --repair`") from exc


# Ids one metadata update looks up per query (the IN list of one SQL filter).
UPDATE_SLICE_ROWS = 50_000

# Below this an exact scan is fast anyway, and IVF training wants many rows per partition.
VECTOR_INDEX_MIN_ROWS = 10_000


def _sub_vectors(dim: int) -> int:
    """PQ sub-vectors: 8 dimensions each where the dimension allows it (LanceDB's guidance: a divisor)."""
    for size in (8, 16, 4, 2, 1):
        if dim % size == 0:
            return dim // size
    return 1


def _reads_store(method):
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        with _store_errors(self):
            return method(self, *args, **kwargs)
    return wrapper


for _name in ("query", "get_nodes", "get_nodes_at", "write_batch", "update_metadata"):
    setattr(RagLanceDBVectorStore, _name, _reads_store(getattr(RagLanceDBVectorStore, _name)))
