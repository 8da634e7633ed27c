"""Assembly: turn a config and the enabled plugins into LlamaIndex components.

    rp = ragplugins.load("ragplugins.toml", embed_model=..., llm=...)
    index = rp.build_index(documents)          # or rp.transformations() in your own pipeline
    engine = rp.query_engine(index)            # or rp.retriever(index) / rp.postprocessors(index)
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import uuid
import warnings
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from llama_index.core import Document, StorageContext, VectorStoreIndex
from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.indices.vector_store.retrievers import VectorIndexRetriever
from llama_index.core.ingestion import IngestionPipeline
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import BaseNode, NodeWithScore, QueryBundle, TransformComponent
from llama_index.core.vector_stores.types import MetadataFilters

from ragplugins import query_inputs, search, trace
from ragplugins.config import Config, parse_config, validate_plugins
from ragplugins.context import CHUNK_INDEX_KEY, DOC_HASH_KEY, RagContext
from ragplugins.contributions import MetadataKey
from ragplugins.embeddings import embedder_identity, load_embed_model
from ragplugins.errors import (ConfigError, EmbedderMismatchError, InputError, PluginError, RagPluginsError,
                               StoreError)
from ragplugins.guards import (BaseRecorder, ChunkBookkeeping, GuardedPostprocessor, GuardedQueryEngine,
                               GuardedRetriever, GuardedTransformation, RecordingQueryEngine)
from ragplugins.nodes import ANNOTATION_KEY, hide_metadata
from ragplugins.plugins import PluginRecord, PluginRegistry
from ragplugins.query_inputs import NOT_GIVEN, NotGiven
from ragplugins.readers import read_documents
from ragplugins.splitting import BlockedSentenceSplitter, MarkdownSections, SectionSplitter
from ragplugins.windows import WindowedEmbedding
from ragplugins.writes import CrashPoint, Journal, WriterLock, atomic_write_text, crash_point

logger = logging.getLogger(__name__)

MANIFEST = "manifest.json"
CORE_METADATA = {
    DOC_HASH_KEY: MetadataKey(str, description="content hash of the source document"),
    CHUNK_INDEX_KEY: MetadataKey(int, description="position of the chunk in its document, from 0"),
}
_VOLATILE = {"creation_date", "last_modified_date", "last_accessed_date", "file_size"}


_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def stable_ids(documents: Sequence[Document]) -> None:
    """Give documents with random (uuid4) ids their file path as id, as SimpleDirectoryReader's
    ``filename_as_id=True`` would: re-running an app must update documents, not duplicate them."""
    by_path: dict[str, list[Document]] = {}
    for doc in documents:
        path = doc.metadata.get("file_path")
        if path and _UUID.match(doc.id_):
            by_path.setdefault(str(path), []).append(doc)
    for path, docs in by_path.items():
        for i, doc in enumerate(docs):
            doc.id_ = path if len(docs) == 1 else f"{path}_part_{i}"


def document_hash(doc: Document) -> str:
    meta = {k: v for k, v in doc.metadata.items() if k not in _VOLATILE and k != DOC_HASH_KEY}
    payload = json.dumps({"id": doc.id_, "text": doc.text, "meta": meta}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


@dataclass
class IndexReport:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    chunks_written: int = 0
    # Indexed documents whose files are gone, kept because pruning was off (index --no-prune).
    kept_missing: list[str] = field(default_factory=list)
    # Indexed documents from no folder indexed since ragplugins records folders (an older index, or
    # build_index): never pruned, since where their files were is unknown.
    unowned: list[str] = field(default_factory=list)


@dataclass
class SearchResult:
    """One retrieval: the first-stage list, the final list and the trace."""

    first_stage: list[NodeWithScore]
    final: list[NodeWithScore]
    trace: trace.Trace


class RagRetriever(BaseRetriever):
    """The first stage: the base retriever inside the plugins' retriever wrappers.

    It puts the query's inputs (ragplugins.query_inputs) in place before any wrapper runs: the
    filters (``filters``: given or built by ragplugins; ``NOT_GIVEN``: the host's base may filter,
    read off ``capture_store`` when that is possible) and the first stage's k."""

    def __init__(self, inner: BaseRetriever, base: BaseRetriever,
                 filters: MetadataFilters | None | NotGiven = NOT_GIVEN, top_k: int | None = None,
                 capture_store: Any = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.inner, self.base, self.filters, self.top_k = inner, base, filters, top_k
        self.capture_store = capture_store

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins.RagRetriever"

    @staticmethod
    def _fresh(query_bundle: QueryBundle) -> QueryBundle:
        if not query_bundle.query_str.strip() and query_bundle.embedding is None:
            # Refused here, before any plugin: an empty question has no meaning to retrieve by.
            raise InputError("the question is empty; ask something")
        # A copy: LlamaIndex retrievers write the query embedding into the bundle they are given.
        return QueryBundle(query_str=query_bundle.query_str, custom_embedding_strs=query_bundle.custom_embedding_strs,
                           embedding=query_bundle.embedding)

    def _declare(self, inputs: query_inputs.QueryInputs) -> None:
        inputs.top_k = inputs.top_k or self.top_k
        if not isinstance(self.filters, NotGiven):
            inputs.declare(self.filters)
        elif self.capture_store is not None:
            inputs.awaiting_capture = True
        else:
            inputs.unknown(f"the host's retriever ({type(self.base).__name__}) may filter: "
                           + query_inputs.PASS_FILTERS.format(where="rp.retriever"))

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        with query_inputs.scope() as (inputs, _), trace.scope(query_bundle.query_str) as tr:
            self._declare(inputs)
            with trace.timed("first_stage"):
                nodes = self.inner.retrieve(self._fresh(query_bundle))
            nodes = inputs.screen(nodes, after="the retriever wrappers")
            tr.first_stage = [n.node.node_id for n in nodes]
            return nodes

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        with query_inputs.scope() as (inputs, _), trace.scope(query_bundle.query_str) as tr:
            self._declare(inputs)
            with trace.timed("first_stage"):
                nodes = await self.inner.aretrieve(self._fresh(query_bundle))
            nodes = inputs.screen(nodes, after="the retriever wrappers")
            tr.first_stage = [n.node.node_id for n in nodes]
            return nodes


class RagQueryEngine(BaseQueryEngine):
    """Outermost engine: opens the trace and puts it in ``response.metadata['ragplugins']``."""

    def __init__(self, inner: BaseQueryEngine, **kwargs: Any):
        super().__init__(callback_manager=getattr(inner, "callback_manager", None))
        self.inner = inner

    def _get_prompt_modules(self) -> dict:
        return {"inner": self.inner}

    def _attach(self, response: Any, tr: trace.Trace) -> Any:
        tr.set_final(getattr(response, "source_nodes", []))
        if getattr(response, "metadata", None) is None:
            response.metadata = {}
        response.metadata[ANNOTATION_KEY] = {**tr.to_dict(), **response.metadata.get(ANNOTATION_KEY, {})}
        return response

    def _query(self, query_bundle: QueryBundle) -> Any:
        with query_inputs.scope(), trace.scope(query_bundle.query_str) as tr:
            return self._attach(self.inner.query(query_bundle), tr)

    async def _aquery(self, query_bundle: QueryBundle) -> Any:
        with query_inputs.scope(), trace.scope(query_bundle.query_str) as tr:
            return self._attach(await self.inner.aquery(query_bundle), tr)


class RagPlugins:
    """A loaded config with its enabled plugins, ready to build LlamaIndex components."""

    # How long a write waits for another process writing the same embedded index.
    lock_timeout: float = 600.0

    def __init__(self, config: Config, registry: PluginRegistry, *, embed_model: Any = None,
                 llm: Any = None, vector_store: Any = None):
        self.config, self.registry, self.llm = config, registry, llm
        self._embed_model = embed_model
        self._vector_store = vector_store
        self._index: VectorStoreIndex | None = None
        self._contexts: dict[int, RagContext] = {}
        # Query-time components built once per index (and filters/top_k for the retriever),
        # so plugin components keep their caches across queries; cleared after every write.
        self._assembled: dict[tuple, Any] = {}
        self._index_uid: str | None = None
        self._writer_lock: WriterLock | None = None

    # -- plugins ---------------------------------------------------------
    @property
    def enabled(self) -> list[PluginRecord]:
        loaded = self.registry.loaded()
        return [loaded[name] for name in sorted(self.config.enabled) if name in loaded]

    def _hook_kwargs(self, record: PluginRecord, ctx: RagContext) -> dict:
        return {"config": self.config.for_plugin(record.name), "ctx": ctx}

    def on_plugin_error(self, err: PluginError) -> None:
        """Raise ``err``, or warn and let the caller go on without that plugin (on_plugin_error = 'warn')."""
        if self.config.core.on_plugin_error == "raise":
            raise err
        warnings.warn(f"ragplugins: {err}; continuing without it (on_plugin_error = 'warn')", stacklevel=3)

    def _contributions(self, hook: str, ctx: RagContext) -> list:
        return self.registry.contributions(hook, self.enabled, on_error=self.on_plugin_error,
                                           kwargs_for=lambda record: self._hook_kwargs(record, ctx))

    def metadata_keys(self) -> dict[str, MetadataKey]:
        keys = dict(CORE_METADATA)
        for record in self.enabled:
            keys.update(record.info.metadata_keys)
        return keys

    # -- models and store ------------------------------------------------
    @property
    def embed_model(self) -> Any:
        if self._embed_model is None:
            self._embed_model = load_embed_model(self.config.core.embed_model)
        return self._embed_model

    @property
    def persist_dir(self) -> Path | None:
        return Path(self.config.core.persist_dir) if self._vector_store is None else None

    def context(self, index: VectorStoreIndex | None = None) -> RagContext:
        index = index or self._index
        key = id(index)
        if key not in self._contexts:
            self._contexts[key] = RagContext(config=self.config, embed_model=self.embed_model, llm=self.llm,
                                             index=index, persist_dir=self.persist_dir,
                                             pluginmanager=self.registry.pm, index_uid=self._index_uid)
        return self._contexts[key]

    def _check_manifest(self) -> str:
        """Refuse another embedder; return the index's stable id (kept when the directory moves)."""
        assert self.persist_dir is not None
        identity = embedder_identity(self.embed_model)
        manifest = self._manifest()
        if not manifest:
            self._refuse_foreign_directory()
        recorded = manifest.get("embedder")
        if recorded and recorded != identity:
            raise EmbedderMismatchError(
                f"the index in '{self.persist_dir}' was built with embedder '{recorded}', not "
                f"'{identity}'; open it with that embedder, or index into another persist_dir")
        if not manifest:
            self.persist_dir.mkdir(parents=True, exist_ok=True)
            manifest = self._manifest(embedder=identity, table=self.config.core.table, index_id=str(uuid.uuid4()))
        return manifest["index_id"]

    def _refuse_foreign_directory(self) -> None:
        """A persist_dir without a manifest: new and empty, or refused (rows without their manifest,
        or another program's files)."""
        assert self.persist_dir is not None
        if (self.persist_dir / "lancedb").is_dir() and any((self.persist_dir / "lancedb").iterdir()):
            raise StoreError(f"the index in '{self.persist_dir}' has lost its {MANIFEST}, which records its "
                             "embedder; run `ragplugins check --repair` to rebuild it from the stored vectors")
        ours = {MANIFEST, "lancedb", "sidecars", "write.lock", "journal.json"}
        others = sorted(p.name for p in self.persist_dir.iterdir() if p.name not in ours) \
            if self.persist_dir.is_dir() else []
        if others:
            raise StoreError(f"persist_dir '{self.persist_dir}' holds files that are not a ragplugins index "
                             f"({', '.join(others[:3])}{', ...' if len(others) > 3 else ''}); point persist_dir "
                             "at a new or empty directory")

    def _writing(self) -> Any:
        """The one-writer lock of the embedded index (nothing to lock for a host's store)."""
        if self.persist_dir is None:
            return nullcontext()
        if self._writer_lock is None:
            self._writer_lock = WriterLock(self.persist_dir, self.lock_timeout)
        self._writer_lock.timeout = self.lock_timeout
        return self._writer_lock

    def _journal(self) -> Journal | None:
        return Journal(self.persist_dir) if self.persist_dir is not None else None

    def index(self) -> VectorStoreIndex:
        """The index: the embedded LanceDB one under persist_dir unless a store was given. A write
        that a stopped process left unfinished is completed first (when no other process is writing)."""
        if self._index is not None:
            return self._index
        store = self._vector_store
        if store is None:
            self._index_uid = self._check_manifest()
            from ragplugins.store import RagLanceDBVectorStore

            try:
                store = RagLanceDBVectorStore(uri=str(self.persist_dir / "lancedb"),
                                              table_name=self.config.core.table)
            except Exception as exc:  # noqa: BLE001 - lance reports damage as OSError, ValueError, RuntimeError
                raise StoreError(f"the index in '{self.persist_dir}' cannot be opened ({type(exc).__name__}: "
                                 f"{str(exc).splitlines()[0][:200]}); run `ragplugins check --repair`") from exc
        storage = StorageContext.from_defaults(vector_store=store)
        self._index = VectorStoreIndex(nodes=[], storage_context=storage, embed_model=self.embed_model)
        self.context(self._index).store.declare_metadata({k: v.type for k, v in self.metadata_keys().items()})
        self._complete_unfinished_write()
        return self._index

    def _complete_unfinished_write(self) -> None:
        journal = self._journal()
        if journal is None or journal.pending() is None:
            return
        lock = self._writing()
        try:
            if not lock.is_free():
                return  # its writer is still at work
            with lock:
                entry = journal.pending()
                if entry is None:
                    return
                self._finish(self._index, entry)
        except (OSError, RagPluginsError) as exc:
            # Reported, not raised: reading the index as it is beats refusing every query until it is fixed.
            warnings.warn(f"ragplugins: the index in '{self.persist_dir}' has a write a stopped process left "
                          f"unfinished, and it cannot be completed now ({exc}); fix that, then run "
                          "`ragplugins check --repair`", stacklevel=3)
            return
        warnings.warn(f"ragplugins: completed the {entry['op']} that a stopped process left unfinished in "
                      f"'{self.persist_dir}' ({len(entry['written'])} documents written, "
                      f"{len(entry['deleted'])} removed)", stacklevel=3)

    def _finish(self, index: VectorStoreIndex, entry: dict, nodes: list[BaseNode] | None = None) -> None:
        """Bring everything derived from the rows in line with them after the write ``entry`` (idempotent):
        the full-text index, the plugins' after-index state, the manifest; then close the journal.
        ``nodes``: the batch as just written (else read back from the store)."""
        journal = self._journal()
        deleted = list(entry["deleted"])
        landed = True
        if nodes is None:
            present = self.context(index).list_documents()
            written = entry["written"]
            # The rows are written in one commit: it landed when every document has the content announced.
            landed = all(d in present and present[d].doc_hash == h for d, h in written.items()) \
                and not any(d in present for d in deleted)
            if not landed and entry["op"] == "delete":
                # A delete needs nothing but its list: done now (rolled forward) rather than forgotten.
                crash_point("store_write")
                self._remove_rows(index, [d for d in deleted if d in present], present)
                present, landed = self.context(index).list_documents(), True
            ids = [n for d in written if d in present for n in present[d].node_ids]
            nodes = self.context(index).store.get_nodes(ids)
            deleted = [d for d in deleted if d not in present]
        self._after_write(index, nodes, deleted)
        if entry.get("manifest") and landed:
            crash_point("manifest")
            self._manifest(**entry["manifest"])
        crash_point("journal_clear")
        if journal is not None:
            journal.clear()

    # -- index time ------------------------------------------------------
    def splitter(self) -> TransformComponent:
        core = self.config.core
        splitter = SectionSplitter if core.splitter == "sections" else BlockedSentenceSplitter
        return splitter(chunk_size=core.chunk_size, chunk_overlap=core.chunk_overlap)

    def transformations(self, index: VectorStoreIndex | None = None) -> list[TransformComponent]:
        """Plugin transformations around the splitter, metadata exclusion, then the embedder (last)."""
        ctx = self.context(index)
        contribs = self._contributions("ragplugins_transformations", ctx)
        policy = self.config.core.on_plugin_error
        pre = [GuardedTransformation(inner=c.component, plugin=c.plugin, policy=policy)
               for c in contribs if c.stage == "pre_split"]
        post = [GuardedTransformation(inner=c.component, plugin=c.plugin, policy=policy)
                for c in contribs if c.stage == "post_split"]
        parsers: list[TransformComponent] = []
        if self.config.core.splitter in ("auto", "markdown"):
            parsers.append(MarkdownSections(only_markdown=self.config.core.splitter == "auto"))
        parsers.append(self.splitter())
        hidden = sorted(k for k, v in self.metadata_keys().items() if not v.searchable)
        embed = WindowedEmbedding(embed_model=self.embed_model) if self.config.core.embed_windows else self.embed_model
        return [*pre, *parsers, ChunkBookkeeping(hidden_keys=hidden), *post, embed]

    def build_index(self, documents: Sequence[Document], show_progress: bool = False,
                    delete_missing: bool = False, reindex: bool = False) -> VectorStoreIndex:
        """Add new documents, re-index changed ones, skip unchanged ones (by content hash);
        ``reindex``: re-index the given ones even when unchanged (after enabling an index-time plugin)."""
        return self._upsert(documents, show_progress=show_progress, delete_missing=delete_missing,
                            reindex=reindex)[0]

    def index_paths(self, paths: Iterable[str | Path], show_progress: bool = False,
                    reindex: bool = False, prune: bool = True) -> tuple[VectorStoreIndex, IndexReport]:
        """Index what lies under ``paths``; ``prune``: documents indexed from there before whose files are
        gone are removed (``report.deleted``), else kept (``report.kept_missing``)."""
        paths = list(paths)
        skip = [self.persist_dir] if self.persist_dir is not None else []
        if self.persist_dir is not None:
            home = self.persist_dir.resolve()
            for raw in paths:
                if Path(raw).resolve().is_relative_to(home):
                    raise InputError(f"'{raw}' lies inside persist_dir '{self.persist_dir}', where the index "
                                     "itself is kept; keep documents and index apart (set persist_dir elsewhere)")
        read = read_documents(paths, max_file_mb=self.config.core.max_file_mb, skip_dirs=skip)
        crash_point("read")
        index, report = self._upsert(read.documents, show_progress=show_progress, reindex=reindex,
                                     sources=read.found, prune=prune)
        report.skipped = read.skipped
        return index, report

    def _index_time_plugins(self) -> list[str]:
        hooks = ("ragplugins_transformations", "ragplugins_after_index")
        return sorted(r.name for r in self.enabled if any(h in r.hooks for h in hooks))

    def _manifest(self, **update: Any) -> dict:
        """The embedded index's manifest ({} for a host store or a new index), with ``update`` written into it."""
        if self.persist_dir is None:
            return {}
        path = self.persist_dir / MANIFEST
        manifest: dict = {}
        if path.is_file():
            try:
                manifest = json.loads(path.read_text(encoding="utf-8"))
            except (ValueError, OSError) as exc:
                raise StoreError(f"'{path}' cannot be read ({type(exc).__name__}: {exc}); run "
                                 "`ragplugins check --repair` to rebuild it from the stored vectors") from None
            if not isinstance(manifest, dict) or not {"index_id", "embedder"} <= set(manifest):
                raise StoreError(f"'{path}' is not a ragplugins manifest (another program's?); point persist_dir "
                                 "at a directory of its own")
        if update:
            manifest.update(update)
            atomic_write_text(path, json.dumps(manifest, indent=2))
        return manifest

    def _warn_about_stale_documents(self, existing: dict, report: IndexReport) -> None:
        recorded = self._manifest().get("index_plugins")
        new = sorted(set(self._index_time_plugins()) - set(recorded or []))
        if recorded is not None and new and report.unchanged:
            warnings.warn(f"ragplugins: {', '.join(new)} now run(s) at index time, but {len(report.unchanged)} "
                          f"unchanged documents were indexed before and were skipped; re-index them with "
                          f"`ragplugins index PATH --reindex` (or build_index(documents, reindex=True))",
                          stacklevel=4)
        def tails(doc_id: str) -> list[str]:  # 'a/b/c.md' -> ['b/c.md', 'c.md']
            parts = doc_id.split("/")
            return ["/".join(parts[i:]) for i in range(1, len(parts))]
        longer = {tail: old for old in existing for tail in tails(old)}
        for doc_id in report.added:
            twin = next((t for t in tails(doc_id) if t in existing), None) or longer.get(doc_id)
            if twin is not None:
                warnings.warn(f"ragplugins: '{doc_id}' was added next to the already indexed '{twin}': document "
                              "ids are paths relative to the folder you index, so index the same folder each "
                              f"time (remove the other with `ragplugins delete '{twin}'`)", stacklevel=4)
                break

    def _upsert(self, documents: Sequence[Document], show_progress: bool = False,
                delete_missing: bool = False, reindex: bool = False, sources: dict[str, list[str]] | None = None,
                prune: bool = True) -> tuple[VectorStoreIndex, IndexReport]:
        with self._writing():
            return self._upsert_locked(documents, show_progress, delete_missing, reindex, sources, prune)

    def _upsert_locked(self, documents: Sequence[Document], show_progress: bool, delete_missing: bool,
                       reindex: bool, sources: dict[str, list[str]] | None,
                       prune: bool) -> tuple[VectorStoreIndex, IndexReport]:
        index = self.index()
        ctx = self.context(index)
        report = IndexReport()
        stable_ids(documents)
        existing = ctx.list_documents()
        todo = []
        for doc in documents:
            doc.metadata[DOC_HASH_KEY] = document_hash(doc)
            hide_metadata(doc, [DOC_HASH_KEY])
            old = existing.get(doc.id_)
            if old is not None and old.doc_hash == doc.metadata[DOC_HASH_KEY] and not reindex:
                report.unchanged.append(doc.id_)
                continue
            (report.updated if old is not None else report.added).append(doc.id_)
            todo.append(doc)
        self._warn_about_stale_documents(existing, report)
        given = {d.id_ for d in documents}
        manifest_update: dict[str, Any] = {}
        if delete_missing:
            report.deleted = sorted(set(existing) - given)
        if sources is not None:
            gone_by_root = self._removed_files(sources, set(existing))
            missing = sorted({d for gone in gone_by_root.values() for d in gone} - given)
            if prune:
                report.deleted = sorted(set(report.deleted) | set(missing))
            else:
                report.kept_missing = missing
            recorded = dict(self._manifest().get("sources") or {})
            for root, found in sources.items():
                recorded[root] = sorted(set(found) | (set() if prune else set(gone_by_root.get(root, ()))))
            manifest_update["sources"] = recorded
            owned = {d for ids in recorded.values() for d in ids}
            report.unowned = sorted(set(existing) - owned - set(report.deleted))
        nodes: list[BaseNode] = []
        if todo:
            # Transform and embed first: a failure (or a crash) here leaves the index as it was.
            steps = self.transformations(index)
            if os.environ.get("RAGPLUGINS_CRASH_AT"):
                steps = self._with_crash_points(steps)
            pipeline = IngestionPipeline(transformations=steps, disable_cache=True)
            nodes = list(pipeline.run(documents=todo, show_progress=show_progress))
            crash_point("embed")
        report.chunks_written = len(nodes)
        if not report.unchanged or "index_plugins" not in self._manifest():
            # Only once no document of the batch was skipped: until then the warning above stays true.
            manifest_update["index_plugins"] = self._index_time_plugins()
        if nodes or report.deleted:
            self._commit(index, nodes, replaced=report.updated, deleted=report.deleted, existing=existing,
                         manifest_update=manifest_update, op="index")
        elif manifest_update:
            self._manifest(**manifest_update)
        return index, report

    def _removed_files(self, sources: dict[str, list[str]], indexed: set[str]) -> dict[str, list[str]]:
        """Per folder indexed before: the indexed documents recorded for it whose files are gone."""
        recorded = self._manifest().get("sources") or {}
        return {root: sorted(d for d in set(recorded.get(root, ())) - set(found) if d in indexed)
                for root, found in sources.items()}

    @staticmethod
    def _with_crash_points(steps: list[TransformComponent]) -> list[TransformComponent]:
        """The crash-injection tests' phases inside the pipeline (only when $RAGPLUGINS_CRASH_AT is set)."""
        out: list[TransformComponent] = []
        for step in steps:
            out.append(step)
            if isinstance(step, ChunkBookkeeping):
                out.append(CrashPoint(phase="split"))
            elif isinstance(step, GuardedTransformation):
                out.append(CrashPoint(phase="transform"))
        return out

    def _commit(self, index: VectorStoreIndex, nodes: list[BaseNode], replaced: Sequence[str],
                deleted: Sequence[str], existing: dict, manifest_update: dict, op: str) -> None:
        """Write the rows of a batch in one step, then everything derived from them, under a journal
        that lets the next process complete the second part when this one is stopped in between."""
        written = {n.ref_doc_id: n.metadata.get(DOC_HASH_KEY) for n in nodes if n.ref_doc_id}
        journal = self._journal()
        if journal is not None:
            journal.begin(op, written, deleted, manifest_update)
        crash_point("journal")
        self._assembled.clear()
        crash_point("store_write")
        self.context(index).store.write_batch(nodes, [*replaced, *deleted], existing)
        crash_point("store_written")
        self._finish(index, {"op": op, "written": written, "deleted": list(deleted), "manifest": manifest_update},
                     nodes=nodes)

    def _remove_rows(self, index: VectorStoreIndex, doc_ids: Sequence[str], existing: dict) -> None:
        self.context(index).store.remove_documents(doc_ids)

    def delete_documents(self, doc_ids: Sequence[str]) -> list[str]:
        with self._writing():
            index = self.index()
            existing = self.context(index).list_documents()
            gone = [d for d in doc_ids if d in existing]
            if gone:
                self._commit(index, [], replaced=(), deleted=gone, existing=existing, manifest_update={},
                             op="delete")
            return gone

    def _after_write(self, index: VectorStoreIndex, nodes: list[BaseNode], deleted: list[str]) -> None:
        self._assembled.clear()
        crash_point("fts")
        self.context(index).store.after_write()
        search.invalidate(index)
        ctx = self.context(index)
        for record in self.registry.in_call_order(self.enabled, "ragplugins_after_index"):
            if "ragplugins_after_index" in record.hooks:
                crash_point(f"after_index:{record.name}")
            try:
                self.registry.call(record, "ragplugins_after_index", nodes=nodes, deleted_doc_ids=list(deleted),
                                   **self._hook_kwargs(record, ctx))
            except PluginError as err:
                self.on_plugin_error(err)
        search.invalidate(index)

    def prepare(self, index: VectorStoreIndex | None = None) -> VectorStoreIndex:
        """Run the index-time plugins over an index built without them (the app's own, or one indexed
        before a plugin was enabled): what ``ragplugins_after_index`` does after a write, over every
        stored chunk (crossref resolves references, overview writes overviews). Only metadata and
        plugin state are written; text and vectors stay as they are."""
        index = index or self.index()
        self._after_write(index, [], [])
        hidden = {k for k, v in self.metadata_keys().items() if not v.searchable}
        if index.docstore.docs and hidden:
            # Nodes the app split itself do not hide the plugins' keys from embed and LLM text.
            changed = [node for node in index.docstore.docs.values()
                       if hide_metadata(node, sorted(hidden & set(node.metadata)))]
            index.docstore.add_documents(changed, allow_update=True)
        return index

    @property
    def last_trace(self) -> trace.Trace | None:
        """The trace of the latest query in this thread, also when the app's own engine ran
        ``rp.retriever(index)`` / ``rp.postprocessors(index)``."""
        return trace.last()

    # -- query time ------------------------------------------------------
    def base_retriever(self, index: VectorStoreIndex | None = None, filters: MetadataFilters | None = None,
                       top_k: int | None = None) -> BaseRetriever:
        index = index or self.index()
        core, ctx = self.config.core, self.context(index)
        return search.HybridRetriever(ctx.store, ctx.embed_query, top_k=top_k or core.top_k, mode=core.retrieval,
                                      filters=filters, fusion_depth=core.fusion_depth, fusion=core.fusion)

    def retriever(self, index: VectorStoreIndex | None = None, base: BaseRetriever | None = None,
                  filters: MetadataFilters | None | NotGiven = NOT_GIVEN, top_k: int | None = None) -> RagRetriever:
        """The first stage with the plugins' retriever wrappers; ``base`` defaults to the core hybrid,
        filtered by ``filters``. With your own ``base``, pass the filters it applies (None: it applies
        none): plugins search the index only with filters they know (ragplugins.query_inputs)."""
        index = index or self.index()
        capture_store = None
        if base is None:
            filters = None if isinstance(filters, NotGiven) else filters
            base = self.base_retriever(index, filters=filters, top_k=top_k)
        elif type(base) is VectorIndexRetriever and self.context(index).store.reports_filters:
            # Its filters reach a store that reports them while this base runs
            # (ANDed with any given here: a filters= that says less than the base does cannot widen it).
            capture_store = index.vector_store
        ctx = self.context(index)
        retriever: BaseRetriever = BaseRecorder(base, capture_store=capture_store,
                                                filters_given=not isinstance(filters, NotGiven))
        for contrib in self._contributions("ragplugins_retriever_wrappers", ctx):
            wrapped = self._wrap(contrib, retriever, BaseRetriever)
            if wrapped is not None:
                retriever = GuardedRetriever(wrapped, retriever, contrib.plugin, self.config.core.on_plugin_error)
        return RagRetriever(retriever, base, filters=filters, top_k=top_k, capture_store=capture_store)

    def postprocessors(self, index: VectorStoreIndex | None = None,
                       filters: MetadataFilters | None | NotGiven = NOT_GIVEN) -> list:
        """The plugins' node postprocessors in stage order (rerank, expand, finalize). In your own
        engine, pass the filters your retriever applies (None: it applies none) so plugins can search."""
        ctx = self.context(index or self.index())
        given = not isinstance(filters, NotGiven)
        return [GuardedPostprocessor(inner=c.component, plugin=c.plugin, policy=self.config.core.on_plugin_error,
                                     filters=filters if given else None, filters_given=given)
                for c in self._contributions("ragplugins_node_postprocessors", ctx)]

    def query_engine(self, index: VectorStoreIndex | None = None, base: BaseRetriever | None = None,
                     filters: MetadataFilters | None | NotGiven = NOT_GIVEN, similarity_top_k: int | None = None,
                     node_postprocessors: Sequence[BaseNodePostprocessor] = (), **kwargs: Any) -> BaseQueryEngine:
        """Like ``index.as_query_engine``: ``similarity_top_k`` sets the first stage's k, your
        ``node_postprocessors`` run after the plugins', other keywords go to the response synthesizer."""
        from llama_index.core.query_engine import RetrieverQueryEngine
        from llama_index.core.response_synthesizers import get_response_synthesizer

        index = index or self.index()
        if self.llm is None:
            from llama_index.core.llms import MockLLM
            from llama_index.core.response_synthesizers.no_text import NoText

            if kwargs:
                raise TypeError(f"query_engine() got {', '.join(sorted(kwargs))}, which only a response synthesizer "
                                "takes, and without an LLM there is none: pass llm= to ragplugins.load()")
            # No LLM: ranked sources without an answer. NoText never calls the LLM; passing
            # one keeps it from resolving Settings.llm (which would import OpenAI).
            synth = NoText(llm=MockLLM())
        else:
            synth = get_response_synthesizer(llm=self.llm, **kwargs)
        engine: BaseQueryEngine = RetrieverQueryEngine(
            retriever=self.retriever(index, base=base, filters=filters, top_k=similarity_top_k),
            response_synthesizer=synth,
            node_postprocessors=[*self.postprocessors(index, filters=filters), *node_postprocessors])
        for contrib in self._contributions("ragplugins_query_engine_wrappers", self.context(index)):
            below = RecordingQueryEngine(engine)
            wrapped = self._wrap(contrib, below, BaseQueryEngine)
            if wrapped is not None:
                engine = GuardedQueryEngine(wrapped, below, contrib.plugin, self.config.core.on_plugin_error)
        return RagQueryEngine(engine)

    def _wrap(self, contrib: Any, inner: Any, expected: type) -> Any:
        """``contrib.component(inner)``, or None (policy 'warn') when the plugin's factory fails."""
        try:
            wrapped = contrib.component(inner)
            if not isinstance(wrapped, expected):
                raise TypeError(f"returned {type(wrapped).__name__}, expected a LlamaIndex {expected.__name__}")
            return wrapped
        except Exception as exc:  # noqa: BLE001
            self.on_plugin_error(PluginError(contrib.plugin, f"its {expected.__name__} wrapper", exc))
            return None

    def search(self, query: str, index: VectorStoreIndex | None = None,
               filters: MetadataFilters | None | NotGiven = NOT_GIVEN, top_k: int | None = None,
               base: BaseRetriever | None = None) -> SearchResult:
        """Retrieve without synthesis: first-stage list, final list (after postprocessors), trace."""
        index = index or self.index()
        if base is None:
            filters = None if isinstance(filters, NotGiven) else filters
            key = ("retriever", id(index), filters.model_dump_json() if filters else None, top_k)
            if key not in self._assembled:
                self._assembled[key] = self.retriever(index, filters=filters, top_k=top_k)
            retriever = self._assembled[key]
        else:
            retriever = self.retriever(index, base=base, filters=filters, top_k=top_k)
        key = ("postprocessors", id(index))
        if key not in self._assembled:
            self._assembled[key] = self.postprocessors(index)
        with query_inputs.scope(top_k=top_k), trace.scope(query) as tr:
            first = retriever.retrieve(query)
            final = list(first)
            bundle = QueryBundle(query_str=query)
            with trace.timed("postprocess"):
                for pp in self._assembled[key]:
                    final = pp.postprocess_nodes(final, query_bundle=bundle)
            tr.set_final(final)
        return SearchResult(first_stage=first, final=final, trace=tr)


def load(config: str | Path | dict | None = None, *, embed_model: Any = None, llm: Any = None,
         vector_store: Any = None, registry: PluginRegistry | None = None, without: Sequence[str] = ()) -> RagPlugins:
    """Load a config (file path, dict, or the ragplugins.toml found in the working directory)
    and the installed plugins. Raises ConfigError listing every problem.

    The embedder and the LLM are each taken from, in order: the argument, the config
    (``embed_model``/``llm``), what the app set on LlamaIndex's ``Settings``, the bundled default
    (MiniLM; no LLM). ``rp.models`` says which, and the ``ragplugins`` logger says it once.
    ``without``: enabled plugins to leave out this time (the rest of the config as written)."""
    cfg = parse_config(config, strict=False)
    if without:
        cfg.core.enable = [name for name in cfg.core.enable if name not in set(without)]
    registry = registry or PluginRegistry.discover()
    loaded = registry.loaded()
    failed = {r.name: r.error or "" for r in registry.all_records() if not r.loaded}
    validate_plugins(cfg, {n: r.info for n, r in loaded.items()}, failed)
    problems = [problem for name in cfg.enabled if name in loaded
                for found in registry.call(loaded[name], "ragplugins_check_config", config=cfg.for_plugin(name),
                                           pluginmanager=registry.pm)
                for problem in found]
    if problems:
        raise ConfigError(problems, cfg.source)
    from ragplugins.models import choose_models

    models = choose_models(cfg.core, embed_model=embed_model, llm=llm)
    rp = RagPlugins(cfg, registry, embed_model=models.embed_model, llm=models.llm, vector_store=vector_store)
    rp.models = models
    return rp
