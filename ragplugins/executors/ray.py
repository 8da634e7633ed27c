"""Indexing on Ray: ``rp.index_paths(paths, executor="ray", workers=2)``, ``rp.build_index(documents,
executor="ray")``, ``ragplugins index --executor ray``.

Each worker is a Ray actor that rebuilds the app from its config once (the same plugins, splitter
and embedder: the one the config names, or the host's own embedder object shipped to it), then
takes batches of whole documents: reads them (``index_paths``), hashes them (unchanged ones are
skipped), splits, runs the plugins' per-chunk transformations (``Contribution.scope = "chunk"``)
and embeds. The embedded chunks come back in order, a few batches in flight per worker, and this
process writes them through the store adapter in commits of about ``WRITE_CHUNKS`` chunks, under
the index's one-writer lock and journal; it never holds the whole run. A transformation of scope
"corpus" (the default: a plugin that declares nothing) runs here, over every chunk of the run at
once, between the workers' part before it and their part after it (embedding).

Then the corpus-wide steps run once, as after any write: every plugin's
``ragplugins_after_index``, called with an empty batch (the run wrote many), which by the hook's
contract brings the plugin's state in line with the index as it is (crossref resolves references
across batches; overview writes the overviews of new and changed documents).

Each commit holds whole documents, so a failure part-way (a plugin, a worker that dies) leaves
every document as it was or as it is now; the derived state is brought in line with what was
written before the error is raised, and indexing again picks up where it stopped (unchanged
documents are skipped by their content hash).
"""

from __future__ import annotations

import logging
import os
import pickle
import time
import warnings
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llama_index.core import Document
from llama_index.core.ingestion import IngestionPipeline
from llama_index.core.schema import BaseNode

from ragplugins import trace
from ragplugins.errors import InputError, MissingDependencyError, PluginError, RagPluginsError
from ragplugins.executors import corpus_span
from ragplugins.readers import skipped_lines

if TYPE_CHECKING:
    from llama_index.core import VectorStoreIndex

    from ragplugins.app import RagPlugins
    from ragplugins.indexing import IndexReport

logger = logging.getLogger("ragplugins")

RAY_INSTALL = "pip install 'ragplugins[ray]'"
# One task's share of documents, by characters of text (about 250 chunks of 1,000 characters): a result of
# a few MB, large enough that a task's overhead (milliseconds) does not count.
TASK_CHARS = 250_000
# Files per task for index_paths (their size is known only once read).
TASK_FILES = 64
# Chunks per store commit: fewer, larger commits keep LanceDB's versions few; a few tens of MB of vectors.
WRITE_CHUNKS = 5_000
# Tasks in flight per worker: one running and one queued, so no worker waits while this process writes.
IN_FLIGHT = 2


def require_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise MissingDependencyError(f"executor 'ray' needs Ray, which is not installed: {RAY_INSTALL}") from exc
    return ray


# -- what travels to a worker and back ---------------------------------------------------------------------
@dataclass
class WorkerSpec:
    """What a worker rebuilds the app from."""

    config: Any
    # (name registered under, plugin object, distribution, entry point) of every loaded plugin: modules travel
    # by name (imported again in the worker), so the worker has the plugins the host registered.
    plugins: list[tuple[str, Any, str | None, str | None]]
    # The host's embedder object, shipped; None: the worker loads the one the config names.
    embed_model: Any
    llm: Any
    # What this process will record and check: the worker's embedder and steps must be the same.
    embedder_id: str
    steps: list[str]
    max_file_mb: float


@dataclass
class Task:
    """Run ``steps[start:stop]`` of the pipeline over documents (given, or read from ``files``) or nodes."""

    start: int
    stop: int
    documents: list[Document] | None = None
    files: list[tuple[str, str, str]] | None = None
    nodes: list[BaseNode] | None = None
    # The content hash of each of the task's documents already indexed (absent: new).
    indexed: dict[str, str | None] = field(default_factory=dict)
    reindex: bool = False
    # False: the documents were hashed and found new or changed by the indexing process (build_index).
    classify: bool = True


@dataclass
class Failure:
    """An error in a worker, made to survive the trip back (PluginError cannot be unpickled as it is)."""

    cause: BaseException
    plugin: str | None = None
    where: str = ""

    @classmethod
    def of(cls, exc: BaseException) -> Failure:
        if isinstance(exc, PluginError):
            return cls(_shippable(exc.cause), exc.plugin, exc.where)
        return cls(_shippable(exc))

    def error(self) -> BaseException:
        return PluginError(self.plugin, self.where, self.cause) if self.plugin is not None else self.cause


def _shippable(exc: BaseException) -> BaseException:
    try:
        return pickle.loads(pickle.dumps(exc))
    except Exception:  # noqa: BLE001 - an exception with a custom __init__ does not round-trip
        kind = RagPluginsError if isinstance(exc, RagPluginsError) else RuntimeError
        return kind(f"{type(exc).__name__}: {exc}")


@dataclass
class Result:
    nodes: list[BaseNode] = field(default_factory=list)
    # (doc id, 'added' | 'updated' | 'unchanged') of every document the task was given or read, in order.
    changes: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[tuple[str, type]] = field(default_factory=list)
    failure: Failure | None = None


def step_names(steps: Sequence[Any]) -> list[str]:
    return [f"{type(s).__name__}:{getattr(s, 'plugin', '')}" for s in steps]


# -- the worker ------------------------------------------------------------------------------------------
class IndexWorker:
    """A Ray actor (``ray.remote(IndexWorker)``): the app rebuilt once, then one task after another."""

    def __init__(self, spec: WorkerSpec):
        self.spec = spec
        self.steps: list[Any] = []
        self.failure: Failure | None = None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                self.steps = self._build()
            except Exception as exc:  # noqa: BLE001 - reported with the first task, by this process
                self.failure = Failure.of(exc)
        self.startup_warnings = [(str(w.message), w.category) for w in caught]

    def _build(self) -> list[Any]:
        from ragplugins.app import RagPlugins
        from ragplugins.embeddings import embedder_identity
        from ragplugins.plugins import PluginRegistry

        spec = self.spec
        registry = PluginRegistry()
        for name, plugin, distribution, entry_point in spec.plugins:
            registry.register(plugin, name=name, distribution=distribution, entry_point=entry_point)
        registry.check_pending()
        app = RagPlugins(spec.config, registry, embed_model=spec.embed_model, llm=spec.llm)
        identity = embedder_identity(app.embed_model)
        if identity != spec.embedder_id:
            raise RagPluginsError(f"a Ray worker loaded the embedder '{identity}', not '{spec.embedder_id}' as the "
                                  "indexing process did; install the same model on every worker node")
        steps = app.transformations()
        if step_names(steps) != spec.steps:
            raise RagPluginsError(f"a Ray worker built the steps {step_names(steps)}, not {spec.steps} as the "
                                  "indexing process did; install the same plugins on every worker node")
        return steps

    def run(self, task: Task) -> Result:
        from ragplugins.indexing import classify
        from ragplugins.readers import read_files

        result = Result()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                if self.failure is not None:
                    return Result(failure=self.failure, warnings=self.startup_warnings)
                inputs: dict[str, Any] = {"nodes": task.nodes or []}
                documents = task.documents
                if task.files is not None:
                    read = read_files([(Path(p), d, root) for p, d, root in task.files], self.spec.max_file_mb)
                    documents, result.skipped = read.documents, read.skipped
                if documents is not None and not task.classify:
                    inputs = {"documents": documents}
                elif documents is not None:
                    todo = []
                    for doc in documents:
                        change = classify(doc, task.indexed, task.reindex)
                        result.changes.append((doc.id_, change))
                        if change != "unchanged":
                            todo.append(doc)
                    inputs = {"documents": todo}
                if any(inputs.values()):
                    pipeline = IngestionPipeline(transformations=self.steps[task.start:task.stop], disable_cache=True)
                    result.nodes = list(pipeline.run(**inputs))
            except Exception as exc:  # noqa: BLE001 - every failure is raised by this process, by name
                result.failure = Failure.of(exc)
        result.warnings = [(str(w.message), w.category) for w in caught]
        return result


# -- this process ----------------------------------------------------------------------------------------
def index_on_ray(app: RagPlugins, *, documents: Sequence[Document] | None = None,
                 files: list[tuple[Path, str, str]] | None = None, workers: int | None = None,
                 show_progress: bool = False, delete_missing: bool = False, reindex: bool = False,
                 prune: bool = True) -> tuple[VectorStoreIndex, IndexReport]:
    """Index ``documents`` (build_index) or the listed ``files`` (index_paths) on Ray workers."""
    ray = require_ray()
    host_embedder = _host_embedder(app)
    with app._writing():
        return RayIndexRun(app, ray, host_embedder, workers, reindex).run(
            documents=documents, files=files, delete_missing=delete_missing, prune=prune)


def _host_embedder(app: RagPlugins) -> Any:
    """The host's embedder object when the host gave one (shipped to the workers), None when the config names
    it (each worker loads it). One that cannot be shipped is said in one line, never swapped for another."""
    from ragplugins.models import ARGUMENT, SETTINGS

    given = app.models is None or app.models.embed_source in (ARGUMENT, SETTINGS)
    embed = app._embed_model if given else None
    if embed is None:
        return None
    problem = _shipping_problem(embed)
    if problem:
        raise RagPluginsError(f"the embedder {type(embed).__name__} given to ragplugins cannot be sent to Ray workers "
                              f"({problem}); name it in the config's embed_model so each worker loads it, or index "
                              "with executor='serial'")
    return embed


def _shippable_llm(app: RagPlugins) -> Any:
    if app.llm is None:
        return None
    problem = _shipping_problem(app.llm)
    if problem:
        warnings.warn(f"ragplugins: the LLM {type(app.llm).__name__} cannot be sent to Ray workers ({problem}); "
                      "their index-time plugin hooks see no LLM (ctx.llm is None)", stacklevel=4)
        return None
    return app.llm


class _DroppedAttributes(logging.Handler):
    """LlamaIndex components pickle by dropping the attributes that do not pickle (with a warning on the root
    logger): a copy without them is not the host's model, so it is refused rather than shipped."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.dropped: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith("Removing unpickleable"):
            self.dropped.append(message.rsplit(" ", 1)[-1])


def _shipping_problem(model: Any) -> str | None:
    """Why ``model`` cannot be sent to a worker as it is (None when it can)."""
    from ray import cloudpickle

    root = logging.getLogger()
    handler = _DroppedAttributes()
    root.addHandler(handler)
    try:
        cloudpickle.dumps(model)
    except Exception as exc:  # noqa: BLE001 - whatever stops pickling stops shipping
        return f"{type(exc).__name__}: {str(exc)[:120]}"
    finally:
        root.removeHandler(handler)
    if handler.dropped:
        return f"its attribute(s) {', '.join(handler.dropped)} cannot be pickled"
    return None


def connect(ray: Any, workers: int | None) -> int:
    """Join the Ray cluster at $RAY_ADDRESS, the one this process already joined, or start a local one
    (``ray.init(num_cpus=workers)``); returns the number of workers to start."""
    if not ray.is_initialized():
        address = os.environ.get("RAY_ADDRESS")
        try:
            if address:
                ray.init(address=address, logging_level=logging.WARNING)
            else:
                ray.init(num_cpus=workers or os.cpu_count() or 1, include_dashboard=False,
                         logging_level=logging.WARNING)
        except Exception as exc:  # noqa: BLE001 - a cluster that cannot be reached is the user's to fix
            where = f"the Ray cluster at RAY_ADDRESS='{address}'" if address else "a local Ray"
            raise RagPluginsError(f"cannot start {where} ({type(exc).__name__}: {str(exc).splitlines()[0][:200]}); "
                                  "check the address, or unset RAY_ADDRESS for a local one") from None
    cpus = int(ray.cluster_resources().get("CPU", 0))
    if workers is not None and workers > cpus:
        # Each worker takes one CPU: the ones beyond the cluster's would wait for a CPU forever.
        raise RagPluginsError(f"workers = {workers}, but the Ray cluster has {cpus} CPUs; ask for at most {cpus} "
                              "workers, or add nodes to the cluster")
    return workers or max(1, cpus)


class RayIndexRun:
    """One index run on Ray, inside the writer's lock."""

    def __init__(self, app: RagPlugins, ray: Any, host_embedder: Any, workers: int | None, reindex: bool):
        self.app, self.ray, self.host_embedder, self.workers, self.reindex = app, ray, host_embedder, workers, reindex
        self.actors: list[Any] = []
        self.written = False
        self.written_docs: set[str] = set()
        self.updated: set[str] = set()
        self.buffer: list[BaseNode] = []
        self.startup_s = 0.0

    # -- the run ------------------------------------------------------------
    def run(self, documents: Sequence[Document] | None, files: list[tuple[Path, str, str]] | None,
            delete_missing: bool, prune: bool) -> tuple[VectorStoreIndex, IndexReport]:
        from ragplugins.indexing import IndexReport, classify, stable_ids

        app = self.app
        self.index = index = app.index()
        self.ctx = app.context(index)
        self.existing = existing = self.ctx.list_documents()
        self.indexed = {d: info.doc_hash for d, info in existing.items()}
        self.report = report = IndexReport()
        self.steps = app.transformations(index)
        sources: dict[str, list[str]] | None = None
        todo: list[Document] | None = None
        if documents is not None:
            documents = list(documents)
            stable_ids(documents)
            given = {d.id_ for d in documents}
            # In memory already: hashed here, so only new and changed documents travel (none: no worker starts).
            todo = []
            for doc in documents:
                change = classify(doc, self.indexed, self.reindex)
                getattr(report, change).append(doc.id_)
                if change == "updated":
                    self.updated.add(doc.id_)
                if change != "unchanged":
                    todo.append(doc)
        else:
            sources = {}
            for _, doc_id, root in files or []:
                sources.setdefault(root, []).append(doc_id)
            given = {d for ids in sources.values() for d in ids}
        manifest_update = app._removals(existing, given, delete_missing, sources, prune, report)
        try:
            if files or todo:
                self._start()
                self._transform_and_write(todo, files)
            if files and not report.added and not report.updated and not report.unchanged:
                raise InputError("no file could be read: " + "; ".join(skipped_lines(report.skipped)))
        except Exception:
            if self.written:  # what was written stays (whole documents); bring what derives from it in line
                try:
                    app._finish(index, {"op": "index", "written": {}, "deleted": [], "manifest": {}}, nodes=[])
                except Exception as exc:  # noqa: BLE001 - the journal stays; the first error is the one to see
                    warnings.warn(f"ragplugins: after the error below, the index in '{app.persist_dir}' could not be "
                                  f"brought in line ({exc}); run `ragplugins check --repair`", stacklevel=4)
            raise
        finally:
            self._stop()
        # Updated documents that now make no chunk lose their old ones with the removals, in the last commit.
        removed = [d for d in report.updated if d not in self.written_docs] + report.deleted
        app._warn_about_stale_documents(existing, report, writes=bool(self.written or removed))
        app._record_index_plugins(report, manifest_update, writes=bool(self.written or removed))
        if self.written or removed:
            journal = app._journal()
            if journal is not None:
                journal.begin("index", {}, report.deleted, manifest_update)
            if removed:
                self.ctx.store.write_batch([], removed, existing)
            app._finish(index, {"op": "index", "written": {}, "deleted": list(report.deleted),
                                "manifest": manifest_update}, nodes=[])
        elif manifest_update:
            app._manifest(**manifest_update)
        return index, report

    def _transform_and_write(self, documents: list[Document] | None,
                             files: list[tuple[Path, str, str]] | None) -> None:
        first, end = corpus_span(self.steps)
        whole = len(self.steps)
        head = self._document_tasks(documents, files, stop=first)
        if first == whole:
            for result in self._stream(head):
                self._take(result)
            self._flush()
            return
        plugins = sorted({getattr(s, "plugin", "") for s in self.steps[first:end]
                          if getattr(s, "scope", "chunk") != "chunk"})
        warnings.warn(f"ragplugins: {', '.join(plugins)} declare(s) no scope='chunk' for an index-time "
                      "transformation, so on Ray it runs in this process over every chunk of the run at once; "
                      "a plugin whose step can run on any batch of whole documents says "
                      "Contribution(..., scope='chunk')", stacklevel=5)
        nodes: list[BaseNode] = []
        for result in self._stream(head):
            nodes.extend(self._take(result, keep=False))
        if nodes:
            nodes = list(IngestionPipeline(transformations=self.steps[first:end], disable_cache=True).run(nodes=nodes))
        for result in self._stream(Task(end, whole, nodes=batch) for batch in _node_batches(nodes)):
            self._take(result)
        self._flush()

    # -- tasks --------------------------------------------------------------
    def _document_tasks(self, documents: list[Document] | None, files: list[tuple[Path, str, str]] | None,
                        stop: int) -> Iterator[Task]:
        def task(ids: Iterable[str], **given: Any) -> Task:
            return Task(0, stop, indexed={d: self.indexed[d] for d in ids if d in self.indexed},
                        reindex=self.reindex, classify=files is not None, **given)

        if files is not None:
            for i in range(0, len(files), TASK_FILES):
                part = files[i:i + TASK_FILES]
                yield task((d for _, d, _ in part), files=[(str(p), d, root) for p, d, root in part])
            return
        batch: list[Document] = []
        size = 0
        for doc in documents or []:
            batch.append(doc)
            size += len(doc.text)
            if size >= TASK_CHARS:
                yield task((d.id_ for d in batch), documents=batch)
                batch, size = [], 0
        if batch:
            yield task((d.id_ for d in batch), documents=batch)

    def _start(self) -> None:
        from ragplugins.embeddings import embedder_identity

        count = connect(self.ray, self.workers)
        app = self.app
        pm = app.registry.pm
        plugins = [(pm.get_name(r.plugin) or r.name, r.plugin, r.distribution, r.entry_point)
                   for r in app.registry.loaded().values()]
        spec = WorkerSpec(config=app.config, plugins=plugins, embed_model=self.host_embedder,
                          llm=_shippable_llm(app), embedder_id=embedder_identity(app.embed_model),
                          steps=step_names(self.steps), max_file_mb=app.config.core.max_file_mb)
        actor = self.ray.remote(num_cpus=1, max_restarts=0)(IndexWorker)
        spec_ref = self.ray.put(spec)
        started = time.perf_counter()
        self.actors = [actor.remote(spec_ref) for _ in range(count)]
        try:
            self.ray.get([a.__ray_ready__.remote() for a in self.actors])
        except Exception as exc:  # noqa: BLE001 - e.g. a plugin that cannot be imported on the worker node
            raise RagPluginsError(f"the Ray workers could not start ({type(exc).__name__}: "
                                  f"{str(exc).strip().splitlines()[-1][:200]})") from None
        self.startup_s = time.perf_counter() - started
        logger.info("ragplugins: %d Ray workers ready in %.1f s", count, self.startup_s)

    def _stop(self) -> None:
        for actor in self.actors:
            try:
                self.ray.kill(actor)
            except Exception:  # noqa: BLE001 - already gone
                pass
        self.actors = []

    def _stream(self, tasks: Iterable[Task]) -> Iterator[Result]:
        """Results in the order of ``tasks``, at most IN_FLIGHT tasks per worker submitted ahead."""
        pending: deque = deque()
        limit = IN_FLIGHT * len(self.actors)
        for i, task in enumerate(tasks):
            pending.append(self.actors[i % len(self.actors)].run.remote(task))
            if len(pending) >= limit:
                yield self._get(pending.popleft())
        while pending:
            yield self._get(pending.popleft())

    def _get(self, ref: Any) -> Result:
        from ray.exceptions import RayActorError, RayTaskError

        try:
            result: Result = self.ray.get(ref)
        except RayActorError as exc:
            raise RagPluginsError(f"a Ray worker died while indexing ({type(exc).__name__}: "
                                  f"{str(exc).strip().splitlines()[-1][:200]}); the documents written before stay, "
                                  "index again to finish") from None
        except RayTaskError as exc:  # not one of ours: IndexWorker.run returns its failures
            raise RagPluginsError(f"a Ray task failed while indexing: {str(exc).strip().splitlines()[-1][:300]}") \
                from None
        for message, category in result.warnings:
            warnings.warn(message, category, stacklevel=2)
        if result.failure is not None:
            raise result.failure.error()
        return result

    # -- writing ------------------------------------------------------------
    def _take(self, result: Result, keep: bool = True) -> list[BaseNode]:
        """Account for a worker's result; ``keep``: write its chunks (else they go on to the next step)."""
        for doc_id, change in result.changes:
            getattr(self.report, change).append(doc_id)
            if change == "updated":
                self.updated.add(doc_id)
        self.report.skipped.extend(result.skipped)
        if not keep:
            return result.nodes
        if result.nodes:
            per_document: dict[str | None, int] = {}
            for node in result.nodes:
                per_document[node.ref_doc_id] = per_document.get(node.ref_doc_id, 0) + 1
            trace.dispatcher.event(trace.RagPluginsEvent(plugin="core", action="split", data={
                "chunks": len(result.nodes), "per_document": list(per_document.values())}))
            trace.dispatcher.event(trace.RagPluginsEvent(plugin="core", action="embedded",
                                                         data={"chunks": len(result.nodes)}))
        self.buffer.extend(result.nodes)
        if len(self.buffer) >= WRITE_CHUNKS:
            self._flush()
        return []

    def _flush(self) -> None:
        """One commit of whole documents (a result never splits a document)."""
        if not self.buffer:
            return
        nodes, self.buffer = self.buffer, []
        docs = list(dict.fromkeys(n.ref_doc_id for n in nodes if n.ref_doc_id))
        if not self.written:
            journal = self.app._journal()
            if journal is not None:
                # Nothing listed: whoever completes it brings every plugin's state in line with the whole index.
                journal.begin("index", {}, [])
            self.app._assembled.clear()
            self.written = True
        self.ctx.store.write_batch(nodes, [d for d in docs if d in self.updated], self.existing)
        self.written_docs.update(docs)
        self.report.chunks_written += len(nodes)


def _node_batches(nodes: list[BaseNode]) -> Iterator[list[BaseNode]]:
    """``nodes`` in batches of whole documents (in the order documents first appear) of about TASK_CHARS
    characters, so that every commit holds a document's chunks together."""
    by_document: dict[str | None, list[BaseNode]] = {}
    for node in nodes:
        by_document.setdefault(node.ref_doc_id, []).append(node)
    batch: list[BaseNode] = []
    size = 0
    for chunks in by_document.values():
        batch.extend(chunks)
        size += sum(len(n.get_content()) for n in chunks)
        if size >= TASK_CHARS:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch
