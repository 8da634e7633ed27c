"""Index time: writing documents into the index (one writer, a journal, the manifest) and running the
index-time plugins over them. Part of :class:`ragplugins.app.RagPlugins`."""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
import warnings
from collections.abc import Iterable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from llama_index.core import Document, StorageContext, VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.ingestion import IngestionPipeline
from llama_index.core.schema import BaseNode, TransformComponent

from ragplugins import search
from ragplugins.app_part import AppPart
from ragplugins.context import DOC_HASH_KEY
from ragplugins.contributions import CORE_KEYS_KEPT_APART, changed_settings, index_time_settings
from ragplugins.embeddings import embedder_identity
from ragplugins.errors import EmbedderMismatchError, InputError, PluginError, RagPluginsError, StoreError
from ragplugins.executors import check_executor
from ragplugins.guards import ChunkBookkeeping, GuardedTransformation
from ragplugins.home import LocalHome
from ragplugins.nodes import hide_metadata
from ragplugins.readers import list_files, read_documents
from ragplugins.resume import UNFINISHED, ResumableEmbedding
from ragplugins.splitting import BlockedSentenceSplitter, MarkdownSections, SectionSplitter
from ragplugins.windows import WindowedEmbedding
from ragplugins.writes import CrashPoint, Journal, crash_point

if TYPE_CHECKING:
    from ragplugins.app import RagPlugins

MANIFEST = "manifest.json"
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


def classify(doc: Document, indexed: dict[str, str | None], reindex: bool) -> str:
    """Stamp ``doc`` with its content hash and say what indexing does with it: 'added', 'updated' or
    'unchanged' (``indexed``: the content hash of every document already in the index)."""
    doc.metadata[DOC_HASH_KEY] = document_hash(doc)
    hide_metadata(doc, [DOC_HASH_KEY])
    if doc.id_ not in indexed:
        return "added"
    return "unchanged" if indexed[doc.id_] == doc.metadata[DOC_HASH_KEY] and not reindex else "updated"


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
    # Texts not embedded again: a run that stopped before writing had embedded them (ragplugins.resume).
    vectors_reused: int = 0


class Indexing(AppPart):
    """The index-time part of the app: the index, writes, deletes and the index-time plugins."""

    # How long a write waits for another process writing the same embedded index.
    lock_timeout: float = 600.0

    def _check_manifest(self) -> str:
        """Refuse another embedder; return the index's stable id (kept when the directory moves)."""
        assert self.home is not None
        identity = embedder_identity(self.embed_model)
        manifest = self._manifest()
        if not manifest:
            self._refuse_foreign_directory()
        recorded = manifest.get("embedder")
        if recorded and recorded != identity:
            raise EmbedderMismatchError(
                f"the index in '{self.home}' was built with embedder '{recorded}', not "
                f"'{identity}'; open it with that embedder, or index into another persist_dir")
        if not manifest:
            self.home.create()
            manifest = self._manifest(embedder=identity, table=self.config.core.table, index_id=str(uuid.uuid4()))
        return manifest["index_id"]

    def _refuse_foreign_directory(self) -> None:
        """A persist_dir without a manifest: new and empty, or refused (rows without their manifest,
        or another program's files)."""
        home = self.home
        assert home is not None
        if home.holds("lancedb"):
            raise StoreError(f"the index in '{home}' has lost its {MANIFEST}, which records its "
                             "embedder; run `ragplugins check --repair` to rebuild it from the stored vectors")
        ours = {MANIFEST, "lancedb", "sidecars", "write.lock", "journal.json", UNFINISHED}
        others = [name for name in home.entries() if name not in ours]
        if others:
            raise StoreError(f"persist_dir '{home}' holds files that are not a ragplugins index "
                             f"({', '.join(others[:3])}{', ...' if len(others) > 3 else ''}); point persist_dir "
                             "at a new or empty directory")

    def _writing(self) -> Any:
        """The one-writer lock of the embedded index (nothing to lock for a host's store)."""
        if self.home is None:
            return nullcontext()
        if self._writer_lock is None:
            self._writer_lock = self.home.writer_lock(self.lock_timeout)
        self._writer_lock.timeout = self.lock_timeout
        return self._writer_lock

    def _journal(self) -> Journal | None:
        return Journal(self.home) if self.home is not None else None

    def index(self) -> VectorStoreIndex:
        """The index: the embedded LanceDB one under persist_dir unless a store was given. A write
        that a stopped process left unfinished is completed first (when no other process is writing).
        Safe from many threads at once: one opens it, the others wait and get the same index."""
        if self._index is not None:
            return self._index
        with self._opening:
            if self._index is not None:
                return self._index
            return self._open()

    def _open(self) -> VectorStoreIndex:
        store = self._vector_store
        if store is None:
            home = self.home
            assert home is not None  # no store given: the embedded one under persist_dir
            self._index_uid = self._check_manifest()
            import lancedb

            from ragplugins.store import RagLanceDBVectorStore

            try:
                options = home.storage_options()
                connection = lancedb.connect(home.lancedb_uri, storage_options=options) if options else None
                store = RagLanceDBVectorStore(uri=home.lancedb_uri, table_name=self.config.core.table,
                                              connection=connection, vector_index=self.config.core.vector_index)
            except Exception as exc:  # noqa: BLE001 - lance reports damage as OSError, ValueError, RuntimeError
                first = home.scrub(str(exc).splitlines()[0][:200])
                raise StoreError(f"the index in '{home}' cannot be opened ({type(exc).__name__}: "
                                 f"{first}); run `ragplugins check --repair`") from None
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
                if entry is None or self._index is None:
                    return
                self._finish(self._index, entry)
        except (OSError, RagPluginsError) as exc:
            # Reported, not raised: reading the index as it is beats refusing every query until it is fixed.
            warnings.warn(f"ragplugins: the index in '{self.home}' has a write a stopped process left "
                          f"unfinished, and it cannot be completed now ({exc}); fix that, then run "
                          "`ragplugins check --repair`", stacklevel=3)
            return
        warnings.warn(f"ragplugins: completed the {entry['op']} that a stopped process left unfinished in "
                      f"'{self.home}' ({len(entry['written'])} documents written, "
                      f"{len(entry['deleted'])} removed)", stacklevel=3)

    def _finish(self, index: VectorStoreIndex, entry: dict, nodes: list[BaseNode] | None = None) -> None:
        """Bring everything derived from the rows in line with them after the write ``entry`` (idempotent):
        the store's derived data, the plugins' after-index state, the manifest; then close the journal.
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

    def transformations(self, index: VectorStoreIndex | None = None,
                        embed_model: BaseEmbedding | None = None) -> list[TransformComponent]:
        """Plugin transformations around the splitter, metadata exclusion, then the embedder (last:
        ``embed_model``, by default the app's)."""
        ctx = self.context(index)
        contribs = self._contributions("ragplugins_transformations", ctx)
        policy = self.config.core.on_plugin_error
        declared = {name: frozenset(r.info.metadata_keys) for name, r in self.registry.loaded().items()
                    if r.info is not None}
        pre = [GuardedTransformation(inner=c.component, plugin=c.plugin, policy=policy, scope=c.scope,
                                     declared=declared.get(c.plugin, frozenset()))
               for c in contribs if c.stage == "pre_split"]
        post = [GuardedTransformation(inner=c.component, plugin=c.plugin, policy=policy, scope=c.scope,
                                      declared=declared.get(c.plugin, frozenset()))
                for c in contribs if c.stage == "post_split"]
        parsers: list[TransformComponent] = []
        if self.config.core.splitter in ("auto", "markdown"):
            parsers.append(MarkdownSections(only_markdown=self.config.core.splitter == "auto"))
        parsers.append(self.splitter())
        hidden = sorted(self.hidden_metadata_keys())
        core = self.config.core
        embed_model = self.embed_model if embed_model is None else embed_model
        embed = (WindowedEmbedding(embed_model=embed_model, mean_vector=core.embed_windows,
                                   keep_windows=core.window_scoring != "off", headings=core.window_headings)
                 if core.embed_windows or core.window_scoring != "off" else embed_model)
        return [*pre, *parsers, ChunkBookkeeping(hidden_keys=hidden), *post, embed]

    def build_index(self, documents: Sequence[Document], show_progress: bool = False,
                    delete_missing: bool = False, reindex: bool = False, executor: str = "serial",
                    workers: int | None = None) -> VectorStoreIndex:
        """Add new documents, re-index changed ones, skip unchanged ones (by content hash);
        ``reindex``: re-index the given ones even when unchanged (after enabling an index-time plugin).
        ``executor='ray'``: split, transform and embed on ``workers`` Ray workers (ragplugins.executors)."""
        if check_executor(executor, workers) != "serial":
            from ragplugins.executors.ray import index_on_ray

            return index_on_ray(cast("RagPlugins", self), documents=documents, workers=workers,
                                show_progress=show_progress, delete_missing=delete_missing, reindex=reindex)[0]
        return self._upsert(documents, show_progress=show_progress, delete_missing=delete_missing,
                            reindex=reindex)[0]

    def index_paths(self, paths: Iterable[str | Path], show_progress: bool = False,
                    reindex: bool = False, prune: bool = True, executor: str = "serial",
                    workers: int | None = None) -> tuple[VectorStoreIndex, IndexReport]:
        """Index what lies under ``paths``; ``prune``: documents indexed from there before whose files are
        gone are removed (``report.deleted``), else kept (``report.kept_missing``). ``executor='ray'``:
        read, split, transform and embed on ``workers`` Ray workers (ragplugins.executors)."""
        paths = list(paths)
        parallel = check_executor(executor, workers) != "serial"
        skip = [self.persist_dir] if self.persist_dir is not None else []
        if self.persist_dir is not None:
            home = self.persist_dir.resolve()
            for raw in paths:
                if Path(raw).resolve().is_relative_to(home):
                    raise InputError(f"'{raw}' lies inside persist_dir '{self.persist_dir}', where the index "
                                     "itself is kept; keep documents and index apart (set persist_dir elsewhere)")
        if parallel:
            from ragplugins.executors.ray import index_on_ray

            listing = list_files(paths, skip, exclude=self.config.core.exclude)
            index, report = index_on_ray(cast("RagPlugins", self), files=listing.files, workers=workers,
                                         show_progress=show_progress, reindex=reindex, prune=prune)
            report.skipped[:0] = listing.skipped
            return index, report
        read = read_documents(paths, max_file_mb=self.config.core.max_file_mb, skip_dirs=skip,
                              exclude=self.config.core.exclude)
        crash_point("read")
        index, report = self._upsert(read.documents, show_progress=show_progress, reindex=reindex,
                                     sources=read.found, prune=prune)
        report.skipped = read.skipped
        return index, report

    def require_index(self) -> None:
        """Stop where persist_dir holds no index: opening one there would create an empty one, and a search of
        it would return nothing without a word."""
        if self.home is not None and self.home.read_text(MANIFEST) is None and not self.home.holds("lancedb"):
            raise InputError(f"no index in '{self.home}' ({self.config.source}: persist_dir); build one with "
                             "`ragplugins index PATH` (rp.index_paths(...)), or point persist_dir at an existing one")

    def index_summaries(self, index: VectorStoreIndex | None = None) -> list[str]:
        """Each enabled plugin's line on what it made of the index (``ragplugins_index_summary``), by name."""
        ctx = self.context(index or self.index())
        return [line for record in self.enabled
                for line in self.registry.call(record, "ragplugins_index_summary",
                                               config=self.config.for_plugin(record.name), ctx=ctx) if line]

    def index_time_plugins(self) -> list[str]:
        hooks = ("ragplugins_transformations", "ragplugins_after_index")
        return sorted(r.name for r in self.enabled if any(h in r.hooks for h in hooks))

    def _manifest(self, **update: Any) -> dict:
        """The embedded index's manifest ({} for a host store or a new index), with ``update`` written into it."""
        home = self.home
        if home is None:
            return {}
        path = home.location(MANIFEST)
        try:
            text = home.read_text(MANIFEST)
            manifest = json.loads(text) if text is not None else {}
        except (ValueError, OSError) as exc:
            raise StoreError(f"'{path}' cannot be read ({type(exc).__name__}: {exc}); run "
                             "`ragplugins check --repair` to rebuild it from the stored vectors") from None
        if text is not None:
            if not isinstance(manifest, dict) or not {"index_id", "embedder"} <= set(manifest):
                raise StoreError(f"'{path}' is not a ragplugins manifest (another program's?); point persist_dir "
                                 "at a directory of its own")
        if update:
            manifest.update(update)
            home.write_text(MANIFEST, json.dumps(manifest, indent=2))
        return manifest

    # Index-time settings that shape no stored chunk: what a failing plugin does, which files are read next
    # time, how LanceDB indexes the vectors (applied by the store itself).
    NOT_IN_CHUNKS = ("on_plugin_error", "max_file_mb", "exclude", "vector_index")

    def index_settings(self) -> dict[str, dict[str, Any]]:
        """What stored chunks depend on, by config table: the core's index-time settings ("ragplugins") and each
        index-time plugin's (fields marked QUERY_TIME left out). Kept in the manifest with the chunks they made."""
        core = {k: v for k, v in index_time_settings(self.config.core).items()
                if k not in CORE_KEYS_KEPT_APART and k not in self.NOT_IN_CHUNKS}
        out = {"ragplugins": core}
        for name in self.index_time_plugins():
            cfg = self.config.for_plugin(name)
            if cfg is not None:
                out[name] = index_time_settings(cfg)
        return out

    def stale_settings(self, skip: Iterable[str] = (), manifest: dict | None = None) -> list[str]:
        """The config's index-time settings that differ from those the stored chunks were made with, each with
        its remedy ("crossref.max_refs_per_chunk 16 -> 4: run `ragplugins prepare`"); [] for an index that did
        not record them (a host's store, or one written before they were kept). ``skip``: tables not to check;
        ``manifest``: the manifest when the caller has read it already."""
        recorded = (self._manifest() if manifest is None else manifest).get("index_settings")
        if not isinstance(recorded, dict):
            return []
        preparable = set(self.preparable_plugins())
        out = []
        for table, settings in self.index_settings().items():
            before = recorded.get(table)
            if table in skip or not isinstance(before, dict):
                continue   # a plugin enabled since the last write: _warn_about_stale_documents says so
            prefix = "" if table == "ragplugins" else f"{table}."
            changed = [f"{prefix}{key} {was!r} -> {now!r}"
                       for key, (was, now) in changed_settings(before, settings).items()]
            if changed:
                remedy = ("run `ragplugins prepare` (rp.prepare()), which does not embed them again"
                          if table in preparable else "re-index with `ragplugins index PATH --reindex`")
                out.append(f"{', '.join(changed)}: {remedy}")
        return out

    def _record_settings(self, manifest: dict, manifest_update: dict[str, Any], tables: Iterable[str]) -> None:
        """Record ``tables``' settings as those the stored chunks are made with, beside the others'."""
        now = self.index_settings()
        recorded = dict(manifest.get("index_settings") or {})
        recorded.update({t: now[t] for t in tables if t in now})
        manifest_update["index_settings"] = {t: recorded[t] for t in now if t in recorded}

    def _warn_about_stale_documents(self, existing: dict, report: IndexReport, writes: bool) -> None:
        manifest = self._manifest()
        # A write runs every after-index step over the whole index: then only the other settings stay stale.
        skip = self.preparable_plugins() if writes else ()
        stale = self.stale_settings(skip, manifest) if report.unchanged else []
        if stale:
            warnings.warn(f"ragplugins: {len(report.unchanged)} unchanged documents were skipped, and their chunks "
                          f"were made with other settings than the config's: {'; '.join(stale)}", stacklevel=4)
        recorded = manifest.get("index_plugins")
        new = sorted(set(self.index_time_plugins()) - set(recorded or []))
        if recorded is not None and new and report.unchanged:
            # A plugin with an after-index step brings stored chunks in line without embedding them again.
            prepares = all("ragplugins_after_index" in r.hooks for r in self.enabled if r.name in new)
            remedy = ("run `ragplugins prepare` once (rp.prepare(index)), which does not embed them again"
                      if prepares else "re-index them with `ragplugins index PATH --reindex` (or "
                      "build_index(documents, reindex=True))")
            warnings.warn(f"ragplugins: {', '.join(new)} now run(s) at index time, but {len(report.unchanged)} "
                          f"unchanged documents were indexed before and were skipped; {remedy}", stacklevel=4)
        def tails(doc_id: str) -> list[str]:  # 'a/b/c.md' -> ['b/c.md', 'c.md']
            parts = doc_id.split("/")
            return ["/".join(parts[i:]) for i in range(1, len(parts))]
        kept = {old for old in existing if old not in report.deleted}   # a re-rooted twin is gone already
        longer = {tail: old for old in kept for tail in tails(old)}
        for doc_id in report.added:
            twin = next((t for t in tails(doc_id) if t in kept), None) or longer.get(doc_id)
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
        indexed = {d: info.doc_hash for d, info in existing.items()}
        todo = []
        for doc in documents:
            change = classify(doc, indexed, reindex)
            getattr(report, change).append(doc.id_)
            if change != "unchanged":
                todo.append(doc)
        manifest_update = self._removals(existing, {d.id_ for d in documents}, delete_missing, sources, prune, report)
        self._warn_about_stale_documents(existing, report, writes=bool(todo or report.deleted))
        nodes: list[BaseNode] = []
        # The vectors embedded so far are kept until the batch is written (ragplugins.resume): a run stopped
        # on the way leaves the index as it was, and the next one embeds only what this one had not.
        unfinished = self.resume_file if todo else None
        resumable = ResumableEmbedding(self.embed_model, unfinished) if unfinished is not None else None
        try:
            if todo:
                # Transform and embed first: a failure (or a crash) here leaves the index as it was.
                steps = self.transformations(index, embed_model=resumable)
                if os.environ.get("RAGPLUGINS_CRASH_AT"):
                    steps = self._with_crash_points(steps)
                pipeline = IngestionPipeline(transformations=steps, disable_cache=True)
                nodes = list(pipeline.run(documents=todo, show_progress=show_progress))
                crash_point("embed")
            report.chunks_written = len(nodes)
            report.vectors_reused = resumable.reused if resumable is not None else 0
            self._record_index_plugins(report, manifest_update, writes=bool(nodes or report.deleted))
            if nodes or report.deleted:
                self._commit(index, nodes, replaced=report.updated, deleted=report.deleted, existing=existing,
                             manifest_update=manifest_update, op="index")
            elif manifest_update:
                self._manifest(**manifest_update)
        finally:
            if resumable is not None:
                resumable.close()
        if unfinished is not None:
            unfinished.unlink(missing_ok=True)
        return index, report

    def _removals(self, existing: dict, given: set[str], delete_missing: bool,
                  sources: dict[str, list[str]] | None, prune: bool, report: IndexReport) -> dict[str, Any]:
        """Which indexed documents this run removes (``report.deleted``, ``kept_missing``, ``unowned``), and the
        manifest's record of the folders indexed (returned as the manifest update)."""
        manifest_update: dict[str, Any] = {}
        if delete_missing:
            report.deleted = sorted(set(existing) - given)
        if sources is not None:
            recorded: dict[str, list[str]] = dict(self._manifest().get("sources") or {})
            self._refuse_taking_over(sources, existing, recorded)
            report.deleted = sorted(set(report.deleted) | self._rerooted(sources, existing, recorded))
            gone_by_root = {root: sorted(d for d in set(recorded.get(root, ())) - set(found) if d in existing)
                            for root, found in sources.items()}
            missing = sorted({d for gone in gone_by_root.values() for d in gone} - given)
            if prune:
                report.deleted = sorted(set(report.deleted) | set(missing))
            else:
                report.kept_missing = missing
            for root, found in sources.items():
                recorded[root] = sorted(set(found) | (set() if prune else set(gone_by_root.get(root, ()))))
            manifest_update["sources"] = recorded
            owned = {d for ids in recorded.values() for d in ids}
            report.unowned = sorted(set(existing) - owned - set(report.deleted))
        return manifest_update

    def _record_index_plugins(self, report: IndexReport, manifest_update: dict[str, Any], writes: bool) -> None:
        manifest = self._manifest()
        if not report.unchanged or "index_plugins" not in manifest:
            # Only once no document of the batch was skipped: until then the stale-documents warning stays true.
            manifest_update["index_plugins"] = self.index_time_plugins()
            self._record_settings(manifest, manifest_update, self.index_settings())
        elif writes:
            # The after-index steps of this write bring every stored chunk in line with their plugin's settings.
            self._record_settings(manifest, manifest_update, self.preparable_plugins())

    @property
    def resume_file(self) -> Path | None:
        """Where a serial index run keeps the vectors it embeds until its batch is written (ragplugins.resume):
        in a local persist_dir; None on object storage or a host's store."""
        return self.home.path / UNFINISHED if isinstance(self.home, LocalHome) else None

    def files_still_there(self, doc_ids: Iterable[str], recorded: dict[str, list[str]] | None = None,
                          besides: str | None = None) -> dict[str, tuple[str, Path]]:
        """Of ``doc_ids``, those whose file is still in a folder indexed before (``recorded``: the manifest's
        folders, read when not given; ``besides``: a folder left out), with that folder and the file."""
        if recorded is None:
            recorded = self._manifest().get("sources") or {}
        wanted = set(doc_ids)
        out: dict[str, tuple[str, Path]] = {}
        for root, ids in recorded.items():
            if root == besides:   # the folder being indexed: its own files are not another's (and the most ids)
                continue
            for doc_id in sorted(wanted.intersection(ids) - out.keys()):
                if (path := _file_of(root, doc_id)).exists():
                    out[doc_id] = (root, path)
        return out

    @staticmethod
    def _rerooted(sources: dict[str, list[str]], existing: dict, recorded: dict[str, list[str]]) -> set[str]:
        """Documents indexed before from a folder (or file) inside one indexed now: the same files arrive again
        under ids relative to the new folder ('a/index.html' for 'index.html' indexed from 'a'), so their old ids
        go (else each file would be indexed twice), and the old folder's record with them."""
        out: set[str] = set()
        for root, found in sources.items():
            new_root, new_ids = Path(root).resolve(), set(found)
            # Only a folder (or file) inside the one indexed now can hold its files: no other is read.
            for old_root in [r for r in recorded if r != root and Path(r).resolve().is_relative_to(new_root)]:
                moved = set()
                for doc_id in recorded[old_root]:
                    file = _file_of(old_root, doc_id).resolve()
                    if doc_id in existing and file.is_relative_to(new_root) \
                            and (new_id := file.relative_to(new_root).as_posix()) != doc_id and new_id in new_ids:
                        moved.add(doc_id)
                if moved:
                    warnings.warn(f"ragplugins: {len(moved)} document(s) indexed before from '{old_root}' are in "
                                  f"'{root}' too and are indexed again under ids relative to it; their old ids "
                                  f"({', '.join(sorted(moved)[:3])}{', ...' if len(moved) > 3 else ''}) are removed",
                                  stacklevel=2)
                    out |= moved
                    recorded[old_root] = sorted(set(recorded[old_root]) - moved)
                    if not recorded[old_root]:
                        del recorded[old_root]
        return out

    def _refuse_taking_over(self, sources: dict[str, list[str]], existing: dict,
                            recorded: dict[str, list[str]]) -> None:
        """Ids are relative to the folder given, so two folders indexed one after the other can both hold
        'index.html': the second would replace the first's document. Refused while the first's file is there
        (a file indexed again on its own is the same document, not another's)."""
        for root, found in sources.items():
            taken = {doc_id: (other, path) for doc_id, (other, path)
                     in self.files_still_there(set(found) & set(existing), recorded, besides=root).items()
                     if path.resolve() != _file_of(root, doc_id).resolve()}
            if taken:
                doc_id, (other, path) = next(iter(taken.items()))
                raise InputError(
                    f"'{_file_of(root, doc_id)}' would replace '{path}', indexed as '{doc_id}' from '{other}' (ids "
                    f"are relative to the folder given); index both from their common parent folder, or use another "
                    f"persist_dir for each; nothing was written")

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
        if self._writer_lock is not None:
            self._writer_lock.confirm()  # still ours (a lease on object storage can lapse): else nothing lands
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

    def compact(self, keep_days: float = 7.0) -> tuple[int, int]:
        """Merge the table's small files and delete the files only versions older than ``keep_days``
        need (LanceDB's optimize; a vector index is brought up to date too). Every write adds a table
        version and keeps the files of the ones before, so bytes stored grow with writes, not only
        with chunks. Returns the number of table versions before and after. A reader still answering
        a query on a version older than ``keep_days`` would fail: 0 only when nothing else reads."""
        if self.home is None:
            raise InputError("compact works on the index ragplugins keeps in persist_dir; a host's own vector "
                             "store is compacted with that store's tools")
        with self._writing():
            index = self.index()
            table = getattr(index.vector_store, "table", None)  # the embedded RagLanceDBVectorStore
            if table is None:
                return 0, 0
            before = len(table.list_versions())
            table.optimize(cleanup_older_than=timedelta(days=keep_days))
            search.invalidate(index)
            return before, len(table.list_versions())

    def _after_write(self, index: VectorStoreIndex, nodes: list[BaseNode], deleted: list[str]) -> None:
        self._assembled.clear()
        crash_point("after_write")
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
        manifest = self._manifest()
        recorded, preparable = set(manifest.get("index_plugins") or []), set(self.preparable_plugins())
        # A plugin with only a transformation changes chunks as they are split: stored ones need a re-index.
        unprepared = [name for name in self.index_time_plugins() if name not in recorded | preparable]
        if unprepared:
            warnings.warn(f"ragplugins: {', '.join(unprepared)} change(s) chunks only as they are split, which "
                          "`prepare` cannot do for stored chunks; re-index them with `ragplugins index PATH "
                          "--reindex` (or build_index(documents, reindex=True))", stacklevel=2)
        if manifest:
            # Stored chunks have been through the after-index steps: the next `index` need not ask for
            # --reindex on those plugins' account (it still does for the ones named above).
            update: dict[str, Any] = {"index_plugins": [p for p in self.index_time_plugins() if p not in unprepared]}
            self._record_settings(manifest, update, preparable)
            self._manifest(**update)
        return index

    def preparable_plugins(self) -> list[str]:
        """The enabled plugins ``prepare`` brings stored chunks in line for: those with an after-index step."""
        return sorted(r.name for r in self.enabled if "ragplugins_after_index" in r.hooks)


def _file_of(root: str, doc_id: str) -> Path:
    """The file a document id names under the root it was indexed from (a file given alone is its own root)."""
    path = Path(root)
    return path if path.name == doc_id and not path.is_dir() else path / doc_id

