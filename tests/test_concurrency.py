"""Concurrency on one index, with crossref, overview and retry on (docs/architecture.md, "Concurrency").

- One writer and several reader processes at once: each reader sees every document at one revision
  in each result (never chunks of two), never an error, never an older revision after a newer one;
  and a reader loaded before the writes sees the last revision everywhere (rows, the BM25 leg, the
  retry vocabulary, the overviews) without a restart.
- Two writer processes at once: with a long lock timeout both land; with a short one the loser gets
  one clear line naming the persist_dir. Either way every document the winner wrote is there, and the
  manifest, the plugin state and the table agree.
- Within one process: threads and asyncio tasks querying one loaded app get the lists and the
  plugin decisions of sequential queries, and no query's trace or filter reaches another.

The in-process tests run on local disk and on a local S3 server; the multi-process ones on local disk.
Writers and readers are real processes; the embedder is the hashing
one of the crash tests (the store, not the embedder, is under test).
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import sys
import threading
import time
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.vector_stores.types import FilterOperator, MetadataFilter, MetadataFilters

sys.path.insert(0, str(Path(__file__).parent))
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).parent), os.environ.get("PYTHONPATH")]))
import concurrency_worker as worker  # noqa: E402

from ragplugins.writes import JOURNAL  # noqa: E402

READERS = 3
FIRST, LAST = 2, 3  # the writer writes revisions 2 and 3 over revision 1


@pytest.fixture(scope="module", params=["local", "s3"])
def new_home(request, tmp_path_factory) -> Callable[[], str]:
    """Makes the persist_dir of a new, empty index: on local disk, and in a bucket of the local S3
    server (the in-process tests run on both)."""
    if request.param == "local":
        yield lambda: str(tmp_path_factory.mktemp("home") / "index")
        return
    from s3_server import new_bucket, s3_environment

    endpoint = request.getfixturevalue("s3_endpoint")
    with pytest.MonkeyPatch.context() as monkeypatch:
        s3_environment(monkeypatch, endpoint, "concurrency-secret")
        client = new_bucket(endpoint, "concurrency-secret")
        counter = iter(range(10**6))
        yield lambda: f"s3://{client.bucket}/index{next(counter)}"


@pytest.fixture
def index_home(new_home) -> str:
    """The persist_dir of a new, empty index (one per test)."""
    return new_home()


@pytest.fixture
def process_home(tmp_path) -> str:
    """The persist_dir the multi-process tests share: local disk (their children are forked from a
    server started once, without the test's environment; the same across processes on S3 is
    tests/test_object_storage.py's second-process and two-writer tests)."""
    return str(tmp_path / "index")


def _ctx():
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["concurrency_worker"])
    return ctx


def _run_all(ctx, jobs: dict[str, tuple]) -> dict[str, dict]:
    """Run each job (tag -> (function name, *args)) in a process of its own; their results by tag."""
    queue = ctx.Queue()
    procs = [ctx.Process(target=worker.child, args=(queue, tag, *job)) for tag, job in jobs.items()]
    for p in procs:
        p.start()
    results = dict(queue.get(timeout=600) for _ in procs)
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    return results


def _index(home: str, corpus: Path) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rp = worker.open_app(home)
        return rp, rp.index_paths([str(corpus)])[1]


# -- one writer, several readers --------------------------------------------------------------
@pytest.mark.slow  # processes of their own
def test_readers_see_each_document_old_or_new_and_refresh_while_a_writer_writes(process_home, tmp_path):
    corpus = tmp_path / "corpus"
    worker.write_revision(corpus, 1)
    _index(process_home, corpus)
    ctx = _ctx()
    barrier, done = ctx.Barrier(READERS + 1), ctx.Event()
    jobs = {"writer": ("writer", process_home, str(corpus), FIRST, LAST, barrier, done)}
    jobs.update({f"reader{i}": ("reader", process_home, LAST, barrier, done) for i in range(READERS)})
    results = _run_all(ctx, jobs)

    written = results.pop("writer")
    assert written["ok"], written.get("error")
    assert [r["updated"] for r in written["reports"]] == [len(worker.DOCUMENTS)] * (LAST - FIRST + 1)
    expected = sorted([*worker.DOCUMENTS, f"extra_{LAST}.md"])
    for tag, got in results.items():
        assert got["ok"], f"{tag}: {got.get('error')}"
        assert got["problems"] == [], f"{tag}: {got['problems'][:5]}"
        assert got["warnings"] == [], f"{tag}: {got['warnings'][:5]}"
        assert got["queries_during"] > 0
        print(f"{tag}: {got['queries_during']} queries during the writes")
        # Loaded before the writes, it sees the last revision everywhere, without a restart:
        assert got["indexed"] == expected
        assert set(got["final_documents"]) <= set(expected) and f"extra_{LAST}.md" in got["final_documents"]
        assert got["sparse_revisions"] == [LAST] and f"extra_{LAST}.md" in got["sparse_documents"]
        assert got["overview_problem"] is None and got["overviews"] == got["hashes"]
        assert got["vocabulary_before"] == ["rev1"] and got["vocabulary_after"] == [f"rev{LAST}"]


# -- two writers ------------------------------------------------------------------------------
def _two_corpora(tmp_path: Path) -> tuple[Path, Path]:
    first, second = tmp_path / "first", tmp_path / "second"
    worker.write_revision(first, 1)
    second.mkdir()
    for name in ("one", "two", "three"):
        (second / f"second_{name}.md").write_text(
            f"# Second {name.title()}\n\nThe second writer's {name} document rev1, citing the Alpha Handbook.\n",
            encoding="utf-8")
    return first, second


def _assert_consistent(home: str, corpora: list[Path]) -> dict[str, str]:
    """The table holds every document of ``corpora`` once, and the manifest, the overviews and the
    crossref profiles agree with it; no write is left unfinished."""
    rp = worker.open_app(home)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        index = rp.index()
    assert not [w for w in caught if "ragplugins" in str(w.message)]  # e.g. "completed the index that..."
    ctx = rp.context(index)
    documents = ctx.list_documents()
    names = sorted(Path(d).name for d in documents)
    assert names == sorted(p.name for c in corpora for p in c.iterdir())
    node_ids = [n.node_id for n in ctx.all_nodes()]
    assert len(node_ids) == len(set(node_ids)) == sum(len(info.node_ids) for info in documents.values())
    manifest = json.loads((Path(home) / "manifest.json").read_text())
    assert sorted(d for ids in manifest["sources"].values() for d in ids) == sorted(documents)
    assert not (Path(home) / JOURNAL).exists()
    from ragplugins_crossref.transform import DOC_KEY
    from ragplugins_overview import sidecar

    overviews, problem = sidecar.usable(ctx)
    assert problem is None
    assert dict(zip(overviews.doc_ids, overviews.hashes)) == {d: i.doc_hash for d, i in documents.items()}
    assert all(info.metadata.get(DOC_KEY) for info in documents.values())
    result = rp.search("second writer's two document")
    assert "second_two.md" in [Path(n.node.ref_doc_id).name for n in result.final]
    return {d: i.doc_hash for d, i in documents.items()}


def _seeded_index(home: str, tmp_path: Path) -> tuple[Path, Path, Path]:
    """Two writers' corpora, and the index at ``home`` already holding one seed document (in seed/sub)."""
    first, second = _two_corpora(tmp_path)
    seed = tmp_path / "seed"
    (seed / "sub").mkdir(parents=True)
    (seed / "sub" / "seed.md").write_text("# Seed\n\nThe seed document rev1.\n", encoding="utf-8")
    _index(home, seed)
    return first, second, seed


@pytest.mark.slow  # processes of their own
def test_two_writers_with_a_long_lock_timeout_both_land(process_home, tmp_path):
    first, second, seed = _seeded_index(process_home, tmp_path)
    ctx = _ctx()
    barrier = ctx.Barrier(2)
    results = _run_all(ctx, {
        "first": ("racing_writer", process_home, str(first), 300.0, barrier),
        "second": ("racing_writer", process_home, str(second), 300.0, barrier),
    })
    assert all(r["ok"] for r in results.values()), results
    _assert_consistent(process_home, [first, second, seed / "sub"])


@pytest.mark.slow  # processes of their own
def test_two_writers_with_a_short_lock_timeout_the_loser_gets_a_clear_error(process_home, tmp_path):
    first, second, seed = _seeded_index(process_home, tmp_path)
    ctx = _ctx()
    barrier, holding, release = ctx.Barrier(2), ctx.Event(), ctx.Event()
    results = _run_all(ctx, {
        "winner": ("holding_writer", process_home, str(second), barrier, holding, release),
        "loser": ("waiting_loser", process_home, str(first), 0.5, barrier, holding, release),
    })
    assert results["winner"]["ok"], results["winner"]
    loser = results["loser"]
    assert not loser["ok"] and loser["type"] == "IndexBusyError", loser
    assert f"another ragplugins process is writing the index in '{process_home}'" in loser["error"]
    assert "\n" not in loser["error"]
    # Nothing lost: every document the winner wrote, and the seed; nothing of the loser's.
    _assert_consistent(process_home, [second, seed / "sub"])


def test_one_query_reads_one_version_while_another_process_writes(index_home, tmp_path):
    """Deterministic: a write lands between two reads of one query (the writer here is a second app on
    the same persist_dir, with its own connection, as another process would be). The query's later
    reads still see the version its first read found; the next query sees the new one."""
    from ragplugins import search as core_search
    from ragplugins.api import query_scope

    corpus = tmp_path / "corpus"
    worker.write_revision(corpus, 1)
    _index(index_home, corpus)
    reader = worker.open_app(index_home)
    ctx = reader.context(reader.index())
    query = worker.QUERIES[0]

    def revisions_seen() -> set[int]:
        hits = core_search.dense_search(ctx.store, query, ctx.embed_query(query), 8)
        rows = [n.get_content() for n in ctx.all_nodes()]
        return {int(m) for text in [*(h.node.get_content() for h in hits), *rows] for m in worker.MARKER.findall(text)}

    with query_scope(query, filters=None):
        before = revisions_seen()
        worker.write_revision(corpus, 2)
        _index(index_home, corpus)
        during = revisions_seen()
        assert ctx.cached("test.documents", lambda c: sorted(c.list_documents())) == sorted(
            [*worker.DOCUMENTS, "extra_1.md"])
    after = revisions_seen()
    assert (before, during, after) == ({1}, {1}, {2})
    assert ctx.cached("test.documents", lambda c: sorted(c.list_documents())) == sorted(
        [*worker.DOCUMENTS, "extra_2.md"])
    # A process reads its own writes, also inside a query that read before them.
    with query_scope(query, filters=None):
        assert revisions_seen() == {2}
        worker.write_revision(corpus, 3)
        reader.index_paths([str(corpus)])
        assert revisions_seen() == {3}


# -- one process: threads and asyncio tasks --------------------------------------------------
def excluding(doc_id: str) -> MetadataFilters:
    return MetadataFilters(filters=[MetadataFilter(key="doc_id", value=doc_id, operator=FilterOperator.NE)])


# Every query without a filter, and with a filter that excludes one document or another: a filter
# that reached another query would change its list.
CASES = [(q, f) for q in worker.QUERIES for f in (None, "alpha.md", "beta.md")]


@pytest.fixture(scope="module")
def served(new_home, tmp_path_factory) -> Any:
    corpus = tmp_path_factory.mktemp("served") / "corpus"
    worker.write_revision(corpus, 1)
    home = new_home()
    _index(home, corpus)
    rp = worker.open_app(home)
    rp.index()
    rp.served_from = home  # the persist_dir, for _fresh
    return rp


def _fresh(served: Any) -> Any:
    """Another app on the same index, loaded and not yet queried: every lazily built value is built
    by the concurrent queries themselves."""
    rp = worker.open_app(served.served_from)
    rp.index()
    return rp


def _untimed(value: Any) -> Any:
    """``value`` without the durations a trace records (``timings_ms``, a plugin's ``scoring_ms``)."""
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if not k.endswith("_ms")}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


def _outcome(trace: Any, nodes: list[Any]) -> dict[str, Any]:
    """What must not depend on what else runs: the lists, and everything the trace says but timings."""
    got = _untimed(trace.to_dict() if hasattr(trace, "to_dict") else dict(trace))
    return {"nodes": [n.node.node_id for n in nodes], "documents": [n.node.ref_doc_id for n in nodes], **got}


def _search(rp: Any, case: tuple[str, str | None]) -> dict[str, Any]:
    query, excluded = case
    result = rp.search(query, filters=None if excluded is None else excluding(excluded))
    return _outcome(result.trace, result.final)


def _check_against(sequential: list[dict], got: list[dict]) -> None:
    for (query, excluded), want, have in zip(CASES * (len(got) // len(CASES)), sequential * (len(got) // len(CASES)),
                                             got):
        assert have["query"] == query
        assert excluded not in have["documents"]
        assert have == want, f"{query!r} (excluding {excluded}) differs from its sequential run"


def test_threads_querying_one_app_get_the_sequential_lists_and_traces(served):
    sequential = [_search(served, case) for case in CASES]
    assert any(d["changed"] for s in sequential for d in s["decisions"]), "no plugin acted: nothing to compare"
    assert any("alpha.md" in s["documents"] for s in sequential)
    assert sequential == [_search(served, case) for case in CASES]  # deterministic to begin with
    fresh, cases = _fresh(served), CASES * 4
    start = threading.Barrier(8)

    def run(i: int) -> dict[str, Any]:
        if i < 8:  # the first eight queries start together, on caches nothing has built yet
            start.wait(timeout=60)
        return _search(fresh, cases[i])

    with ThreadPoolExecutor(max_workers=8) as pool:
        got = list(pool.map(run, range(len(cases))))
    _check_against(sequential, got)


def test_asyncio_tasks_querying_one_app_get_the_sequential_lists_and_traces(served):
    """LlamaIndex's async path (``aretrieve`` on rp.retriever, ``aquery`` on rp.query_engine), many
    tasks at once on an app nothing has queried yet, against the same calls made one by one."""
    from ragplugins import trace

    def components(app: Any) -> tuple[dict, dict]:
        index = app.index()
        given = {f: None if f is None else excluding(f) for _, f in CASES}
        return ({f: app.retriever(index, filters=given[f]) for f in given},
                {f: app.query_engine(index, filters=given[f]) for f in given})

    (retrievers, engines), (fresh_retrievers, fresh_engines) = components(served), components(_fresh(served))

    def retrieve(case):
        nodes = retrievers[case[1]].retrieve(case[0])
        return _outcome(trace.last(), nodes)

    def query(case):
        response = engines[case[1]].query(case[0])
        return _outcome(response.metadata["ragplugins"], response.source_nodes)

    async def aretrieve(case):
        nodes = await fresh_retrievers[case[1]].aretrieve(case[0])
        return _outcome(trace.last(), nodes)

    async def aquery(case):
        response = await fresh_engines[case[1]].aquery(case[0])
        return _outcome(response.metadata["ragplugins"], response.source_nodes)

    async def all_at_once(fn, rounds):
        return await asyncio.gather(*(fn(case) for case in CASES * rounds))

    for sync, concurrent in ((retrieve, aretrieve), (query, aquery)):
        sequential = [sync(case) for case in CASES]
        _check_against(sequential, asyncio.run(all_at_once(concurrent, 3)))
        assert sequential == [asyncio.run(concurrent(case)) for case in CASES]  # and one at a time


# -- the lazily built values, under threads ---------------------------------------------------
class _Store:
    """Stands for a vector store: the cache keys by identity and forgets it with the store."""


def test_one_thread_builds_an_index_derived_value_while_the_others_wait():
    from types import SimpleNamespace

    from ragplugins.index_cache import IndexCache

    cache, store = IndexCache(), _Store()
    adapter = SimpleNamespace(vector_store=store, version=lambda: 7)
    calls: list[int] = []
    second = threading.Event()

    def build() -> object:
        calls.append(1)
        if len(calls) > 1:
            second.set()
        else:  # the first build waits for a second one to start (it never should)
            second.wait(timeout=1)
        return object()

    start = threading.Barrier(8)

    def get(_: int) -> object:
        start.wait(timeout=30)
        return cache.get(adapter, "test.value", build)

    with ThreadPoolExecutor(max_workers=8) as pool:
        values = list(pool.map(get, range(8)))
    assert len(calls) == 1 and len({id(v) for v in values}) == 1


def test_threads_opening_one_app_get_one_index(served, monkeypatch):
    """The first rp.index() from 8 threads at once: one opens the store, the others get that index."""
    from ragplugins.store import RagLanceDBVectorStore

    rp = worker.open_app(served.served_from)
    opened: list[int] = []
    init = RagLanceDBVectorStore.__init__

    def counting(self, *args, **kwargs):
        opened.append(1)
        time.sleep(0.2)  # a slow open, so the other threads arrive while it runs
        init(self, *args, **kwargs)

    monkeypatch.setattr(RagLanceDBVectorStore, "__init__", counting)
    start = threading.Barrier(8)

    def open_index(_: int) -> Any:
        start.wait(timeout=30)
        return rp.index()

    with ThreadPoolExecutor(max_workers=8) as pool:
        indexes = list(pool.map(open_index, range(8)))
    assert len(opened) == 1 and len({id(i) for i in indexes}) == 1


def test_the_context_embeds_texts_safely_under_threads(monkeypatch):
    """embed_texts starts its cache over when it is full, while other threads read it."""
    from ragplugins import context as context_module
    from ragplugins.config import parse_config

    monkeypatch.setattr(context_module, "TEXT_CACHE_LIMIT", 3)
    embedder = worker.HashEmbedding()
    ctx = context_module.RagContext(config=parse_config({}), embed_model=embedder)
    texts = [f"text number {i}" for i in range(12)]
    want = {t: embedder.get_text_embedding(t) for t in texts}

    def embed(i: int) -> bool:
        batch = [texts[(i + j) % len(texts)] for j in range(3)]
        return ctx.embed_texts(batch) == {t: want[t] for t in batch}

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert all(pool.map(embed, range(4000)))


def test_a_plugin_engine_failure_is_told_apart_from_the_engine_below_across_asyncio_tasks(served, plugin_module):
    """Two tasks on one thread through a plugin's query-engine wrapper (policy 'warn'): in one the
    plugin fails (its answer falls back to the engine below, with a warning), in the other the engine
    below fails (its error is raised, not blamed on the plugin). Neither sees the other's outcome."""
    from llama_index.core.base.base_query_engine import BaseQueryEngine
    from llama_index.core.postprocessor.types import BaseNodePostprocessor

    from ragplugins import Contribution
    from ragplugins.testing import make_rag

    class Fussy(BaseQueryEngine):
        """A plugin's wrapper that asks the engine below, lets other tasks run, then fails on some questions."""

        def __init__(self, below: Any):
            super().__init__(callback_manager=None)
            self.below = below

        def _get_prompt_modules(self) -> dict:
            return {}

        def _query(self, query_bundle: Any) -> Any:
            raise NotImplementedError

        async def _aquery(self, query_bundle: Any) -> Any:
            response = await self.below.aquery(query_bundle)
            await asyncio.sleep(0)  # the other task runs here
            if "plugin" in query_bundle.query_str:
                raise RuntimeError("the plugin's own bug")
            return response

    class EngineFails(BaseNodePostprocessor):
        @classmethod
        def class_name(cls) -> str:
            return "tests.EngineFails"

        def _postprocess_nodes(self, nodes: list, query_bundle: Any = None) -> list:
            if query_bundle is not None and "engine" in query_bundle.query_str:
                raise ValueError("the host's own postprocessor failed")
            return nodes

    fussy = plugin_module("fussy", ragplugins_query_engine_wrappers=lambda: [
        Contribution(lambda below: Fussy(below), stage="verify")])
    rp = make_rag([fussy], {"on_plugin_error": "warn"}, embed_model=worker.HashEmbedding(),
                  persist_dir=served.served_from)
    engine = rp.query_engine(rp.index(), filters=None, node_postprocessors=[EngineFails()])

    async def both() -> list[Any]:
        return await asyncio.gather(engine.aquery("what does the plugin say about boiler pressure?"),
                                    engine.aquery("what does the engine say about invoices?"),
                                    return_exceptions=True)

    with pytest.warns(UserWarning, match="plugin 'fussy'"):
        plugin_failed, engine_failed = asyncio.run(both())
    assert isinstance(engine_failed, ValueError) and "host's own postprocessor" in str(engine_failed)
    assert not isinstance(plugin_failed, BaseException), plugin_failed
    assert plugin_failed.source_nodes  # the answer of the engine below


def test_a_writer_thread_and_reader_threads_in_one_process(index_home, tmp_path):
    """The same guarantees inside one process: one app, a thread writing revisions 2 and 3 while
    four threads query it; no error, no document at two revisions in one result, the last revision
    seen once the writer is done."""
    corpus = tmp_path / "corpus"
    worker.write_revision(corpus, 1)
    rp, _ = _index(index_home, corpus)
    done = threading.Event()
    ready = threading.Barrier(5)

    def write() -> None:
        try:
            ready.wait(timeout=60)
            for rev in (2, 3):
                worker.write_revision(corpus, rev)
                rp.index_paths([str(corpus)])
        finally:
            done.set()

    def read(i: int) -> tuple[int, list[str]]:
        ready.wait(timeout=60)
        problems, n = [], 0
        while not done.is_set():
            problems += worker.check_result(rp.search(worker.QUERIES[(i + n) % len(worker.QUERIES)]))
            n += 1
        return n, problems

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with ThreadPoolExecutor(max_workers=5) as pool:
            writing = pool.submit(write)
            readers = list(pool.map(read, range(4)))
            writing.result()
    assert all(n > 0 and problems == [] for n, problems in readers), readers
    last = rp.search(worker.QUERIES[0])
    assert worker.check_result(last) == [] and set().union(*worker.revisions(last.final).values()) == {3}
