"""Indexing on Ray (ragplugins.executors.ray) gives the index a single process gives: same chunk ids and
metadata, same resolved references, same overviews, same query lists; a plugin that declares nothing runs
in the indexing process; a failure in a worker is named and leaves the index whole.

One local Ray cluster (``ray.init(num_cpus=2)``) serves the module: starting Ray takes 10-20 s here."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import crash_worker
import numpy as np
import pytest
from click.testing import CliRunner
from crash_worker import HashEmbedding
from llama_index.core import Document
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.schema import TransformComponent

from ragplugins import PluginInfo, api, hookimpl, load
from ragplugins.errors import MissingDependencyError, PluginError, RagPluginsError
from ragplugins.executors import ray as ray_executor
from ragplugins.plugins import PluginRegistry
from ragplugins.testing import TINY_CORPUS, make_rag
from ragplugins.writes import JOURNAL

ray = pytest.importorskip("ray")

PLUGINS = ("crossref", "overview", "retry")
QUERIES = ["What does the Master Agreement say about late payment?", "gasket part code GK-4471",
           "pricing in Exhibit B", "termination notice period", "who approves the budget"]
# A small corpus whose documents cite each other by title and label, so references cross task batches.
DEAL = {
    "01_master_agreement.md": "# Master Agreement\n\nThis Master Agreement governs the supply. Prices are set out "
                              "in Exhibit B (Pricing). Late payment follows Section 4 of the Payment Terms.\n\n"
                              "## Termination\n\nEither party may terminate with ninety days notice.",
    "02_exhibit_b_pricing.md": "# Exhibit B - Pricing\n\nUnit prices under the Master Agreement are fixed for "
                               "twelve months. Discounts follow the Volume Schedule.",
    "03_payment_terms.md": "# Payment Terms\n\n## Section 4\n\nLate payment bears interest of one percent per "
                           "month. See the Master Agreement for termination.",
    "04_volume_schedule.md": "# Volume Schedule\n\nVolumes above ten thousand units get a five percent discount, "
                             "as agreed in Exhibit B.",
    "05_board_memo.md": "# Board Memo\n\nThe board approves the budget each quarter. The Payment Terms were "
                        "reviewed and the Volume Schedule kept.",
}



class RunRank(TransformComponent):
    """A corpus-wide step: numbers every chunk of the run by its text's rank among all of them, and notes
    the process it ran in. Run on batches, the ranks would differ."""

    @classmethod
    def class_name(cls) -> str:
        return "tests.RunRank"

    def __call__(self, nodes, **kwargs):
        order = sorted(range(len(nodes)), key=lambda i: (nodes[i].get_content(), nodes[i].node_id))
        for rank, i in enumerate(order):
            nodes[i].metadata["run_rank"] = f"{rank}/{len(nodes)}"
            nodes[i].metadata["ran_in"] = os.getpid()
            api.hide_metadata(nodes[i], ["run_rank", "ran_in"])
        return nodes


class RankPlugin:
    """A third-party plugin that declares no scope for its transformation."""

    @hookimpl
    def ragplugins_plugin_info(self):
        return PluginInfo(name="rank", version="1.0", metadata_keys={
            "run_rank": api.MetadataKey(str), "ran_in": api.MetadataKey(int)})

    @hookimpl
    def ragplugins_transformations(self, config, ctx):
        return [api.Contribution(RunRank(), stage="post_split")]


class Tripwire(TransformComponent):
    """Per chunk: fails (or kills its process, as a crashed worker) on a chunk that holds ``word``."""

    word: str
    kill: bool = False

    @classmethod
    def class_name(cls) -> str:
        return "tests.Tripwire"

    def __call__(self, nodes, **kwargs):
        if any(self.word in n.get_content() for n in nodes):
            if self.kill:
                os._exit(3)
            raise ValueError(f"cannot handle '{self.word}'")
        return nodes


def tripwire_plugin(word: str, kill: bool = False):
    class TripwirePlugin:
        @hookimpl
        def ragplugins_plugin_info(self):
            return PluginInfo(name="tripwire", version="1.0")

        @hookimpl
        def ragplugins_transformations(self, config, ctx):
            return [api.Contribution(Tripwire(word=word, kill=kill), stage="post_split", scope="chunk")]

    return TripwirePlugin()


class Unshippable(HashEmbedding):
    _lock: object = PrivateAttr(default=None)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        import threading

        self._lock = threading.Lock()


@pytest.fixture(scope="module")
def local_ray():
    from ray import cloudpickle

    # The workers get this module's embedder and plugins by value: they cannot import a test module.
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    cloudpickle.register_pickle_by_value(crash_worker)
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR")
    yield ray
    cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    cloudpickle.unregister_pickle_by_value(crash_worker)
    if started:
        ray.shutdown()


@pytest.fixture
def small_tasks(monkeypatch):
    """Two files per task and a commit every few chunks, so a run has several batches and commits."""
    monkeypatch.setattr(ray_executor, "TASK_FILES", 2)
    monkeypatch.setattr(ray_executor, "TASK_CHARS", 400)
    monkeypatch.setattr(ray_executor, "WRITE_CHUNKS", 3)


def write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def app(persist: Path | str, plugins=(), enable=PLUGINS):
    """The installed plugins and ``plugins``, ``enable``d, over the index in ``persist``."""
    registry = PluginRegistry.discover()
    for plugin in plugins:
        registry.register(plugin)
    registry.check_pending()
    return load({"enable": list(enable), "chunk_size": 64, "chunk_overlap": 8, "persist_dir": str(persist)},
                embed_model=HashEmbedding(), registry=registry)


def snapshot(rp) -> dict:
    """Everything the index is: chunks (id, document, text, metadata, vector), overviews, query lists."""
    from ragplugins_overview.sidecar import location_for

    ctx = rp.context(rp.index())
    chunks = {n.node_id: (n.ref_doc_id, n.get_content(), json.dumps(n.metadata, sort_keys=True, default=str),
                          np.round(np.asarray(n.embedding), 6).tolist()) for n in ctx.all_nodes()}
    overviews = None
    if "overview" in rp.config.enabled:
        stored = location_for(ctx).read()
        overviews = {d: (h, t, s, np.round(v, 5).tolist()) for d, (h, t, s, v) in stored.entries().items()}
    queries = {q: [(r.node.node_id, round(r.score or 0.0, 6)) for r in rp.retriever().retrieve(q)] for q in QUERIES}
    return {"chunks": chunks, "overviews": overviews, "queries": queries}


def references(snap: dict) -> dict[str, list]:
    return {nid: json.loads(meta).get("crossref_refs") for nid, (_, _, meta, _) in snap["chunks"].items()}


@pytest.mark.slow
def test_same_index_as_one_process_first_build_and_update(local_ray, small_tasks, tmp_path):
    corpus = write(tmp_path / "corpus", {**DEAL, **TINY_CORPUS})
    serial, parallel = app(tmp_path / "serial"), app(tmp_path / "ray")
    _, want = serial.index_paths([corpus])
    _, got = parallel.index_paths([corpus], executor="ray", workers=2)
    assert (got.added, got.chunks_written) == (want.added, want.chunks_written)
    one, many = snapshot(serial), snapshot(parallel)
    assert many == one
    # References resolved across task batches (two files per task): the Board Memo (5th file) cites the
    # Payment Terms (3rd) and the Volume Schedule (4th).
    resolved = {r["target"] for refs in references(many).values() for r in json.loads(refs or "[]") if r["target"]}
    assert {"03_payment_terms.md", "04_volume_schedule.md", "02_exhibit_b_pricing.md"} <= resolved
    assert len(many["overviews"]) == len(DEAL) + len(TINY_CORPUS)

    # An update: one file changed, one removed, one added (citing an existing document).
    (corpus / "02_exhibit_b_pricing.md").write_text(DEAL["02_exhibit_b_pricing.md"] + " Prices rise in June.")
    (corpus / "04_volume_schedule.md").unlink()
    (corpus / "06_audit.md").write_text("# Audit Note\n\nThe audit checked Exhibit B and the Payment Terms.")
    _, want = serial.index_paths([corpus])
    _, got = parallel.index_paths([corpus], executor="ray", workers=2)
    assert (got.added, got.updated, got.deleted, sorted(got.unchanged)) == \
        (want.added, want.updated, want.deleted, sorted(want.unchanged))
    assert (want.added, want.updated, want.deleted) == (["06_audit.md"], ["02_exhibit_b_pricing.md"],
                                                        ["04_volume_schedule.md"])
    assert snapshot(parallel) == snapshot(serial)
    assert not (tmp_path / "ray" / JOURNAL).exists()


@pytest.mark.slow
def test_build_index_documents_on_one_worker(local_ray, small_tasks, tmp_path, monkeypatch):
    docs = lambda: [Document(text=t, id_=n, metadata={"file_name": n}) for n, t in DEAL.items()]  # noqa: E731
    serial, parallel = app(tmp_path / "serial"), app(tmp_path / "ray")
    serial.build_index(docs())
    parallel.build_index(docs(), executor="ray", workers=1)
    assert snapshot(parallel) == snapshot(serial)
    # Documents in memory are hashed here: when none is new or changed, no worker starts.
    def no_workers(run):
        raise AssertionError("workers started for unchanged documents")

    with monkeypatch.context() as patch:
        patch.setattr(ray_executor.RayIndexRun, "_start", no_workers)
        parallel.build_index(docs(), executor="ray", workers=1)
    more = [*docs(), Document(text="# Audit Note\n\nThe audit checked Exhibit B.", id_="06_audit.md")]
    serial.build_index(more)
    parallel.build_index(more, executor="ray", workers=1)
    assert snapshot(parallel) == snapshot(serial)


@pytest.mark.slow
def test_undeclared_plugin_runs_here_over_the_whole_run(local_ray, small_tasks, tmp_path):
    corpus = write(tmp_path / "corpus", DEAL)
    serial = app(tmp_path / "serial", [RankPlugin()], enable=(*PLUGINS, "rank"))
    parallel = app(tmp_path / "ray", [RankPlugin()], enable=(*PLUGINS, "rank"))
    serial.index_paths([corpus])
    with pytest.warns(UserWarning, match=r"rank declare\(s\) no scope='chunk'"):
        parallel.index_paths([corpus], executor="ray", workers=2)
    one, many = snapshot(serial), snapshot(parallel)
    assert many == one
    ran_in = {json.loads(meta)["ran_in"] for _, _, meta, _ in many["chunks"].values()}
    assert ran_in == {os.getpid()}
    ranks = sorted(int(json.loads(meta)["run_rank"].split("/")[0]) for _, _, meta, _ in many["chunks"].values())
    assert ranks == list(range(len(many["chunks"])))  # one run over every chunk, not one per batch


def versions(rp, before: dict) -> dict[str, str]:
    """'old' or 'new' per document, asserting that its chunks are all of one version (never a mix)."""
    out = {}
    for doc_id in before:
        chunks = [n for n in rp.context(rp.index()).all_nodes() if n.ref_doc_id == doc_id]
        hashes = {n.metadata[api.DOC_HASH_KEY] for n in chunks}
        amended = {"Amended in March" in n.get_content() for n in chunks}
        assert len(hashes) == 1, doc_id
        version = "old" if hashes == {before[doc_id].doc_hash} else "new"
        assert (True in amended) == (version == "new"), doc_id
        out[doc_id] = version
    return out


@pytest.mark.slow
@pytest.mark.parametrize("kill", [False, True], ids=["plugin-raises", "worker-dies"])
def test_a_failure_in_a_worker_is_named_and_leaves_the_index_whole(local_ray, small_tasks, tmp_path, kill):
    old = dict(DEAL)
    corpus = write(tmp_path / "corpus", old)
    persist = tmp_path / "idx"
    app(persist).index_paths([corpus])
    before = app(persist).context(app(persist).index()).list_documents()
    # Every file changes; the last one trips the plugin (in a later batch than the first commits).
    new = {name: text + " Amended in March." for name, text in old.items()}
    new["05_board_memo.md"] += " TRIPWIRE"
    write(corpus, new)
    rp = app(persist, [tripwire_plugin("TRIPWIRE", kill=kill)], enable=(*PLUGINS, "tripwire"))
    if kill:
        with pytest.raises(RagPluginsError, match="a Ray worker died while indexing"):
            rp.index_paths([corpus], executor="ray", workers=2)
    else:
        with pytest.raises(PluginError, match="plugin 'tripwire' failed in Tripwire: ValueError: cannot handle"):
            rp.index_paths([corpus], executor="ray", workers=2)
    from ragplugins.check import check_index

    assert not (persist / JOURNAL).exists()
    after = app(persist)
    assert set(after.context(after.index()).list_documents()) == set(before)
    # The batches committed before the failure stay (whole documents); the failing one was never written.
    expected = {"01_master_agreement.md": "new", "02_exhibit_b_pricing.md": "new", "03_payment_terms.md": "new",
                "04_volume_schedule.md": "new", "05_board_memo.md": "old"}
    got = versions(after, before)
    if kill and got != expected:
        # A worker that dies can take with it the reply of the task it finished just before (its result not yet
        # sent, seen once on a loaded machine): then those documents were never written either, and what was
        # written is still a run of whole batches from the start.
        order = list(expected)
        written = [d for d in order if got[d] == "new"]
        assert written == order[:len(written)] and got["05_board_memo.md"] == "old", got
    else:
        assert got == expected
    report = check_index(after)  # references and overviews in line with the rows
    assert report.ok, [f.problem for f in report.findings]
    # Indexing again (without the tripwire) finishes the job: the same index as one serial run.
    again = app(persist)
    again.index_paths([corpus], executor="ray", workers=2)
    fresh = app(tmp_path / "fresh")
    fresh.index_paths([corpus])
    assert snapshot(again) == snapshot(fresh)


@pytest.mark.slow
def test_more_workers_than_the_cluster_has_cpus_is_said(local_ray, tmp_path):
    rp = app(tmp_path / "idx")
    with pytest.raises(RagPluginsError, match="workers = 3, but the Ray cluster has 2 CPUs"):
        rp.build_index([Document(text="one", id_="a")], executor="ray", workers=3)
    assert rp.context(rp.index()).list_documents() == {}
    assert not (tmp_path / "idx" / JOURNAL).exists()


@pytest.mark.slow
def test_cli_index_executor_ray(local_ray, tmp_path):
    from ragplugins.cli import cli

    corpus = write(tmp_path / "corpus", DEAL)
    config = tmp_path / "ragplugins.toml"
    config.write_text(f'[ragplugins]\npersist_dir = "{tmp_path / "idx"}"\nenable = ["crossref"]\n'
                      'embed_model = "bundled-onnx"\nchunk_size = 64\n')
    result = CliRunner().invoke(cli, ["--config", str(config), "index", str(corpus), "--executor", "ray",
                                      "--workers", "2"])
    assert result.exit_code == 0, result.output
    assert "added 5, updated 0, unchanged 0" in result.output
    # The workers loaded the embedder the config names (the run checks their identity against this one).
    manifest = json.loads((tmp_path / "idx" / "manifest.json").read_text())
    assert manifest["embedder"] == "HuggingFaceEmbedding:sentence-transformers/all-MiniLM-L6-v2"


def test_without_ray_installed_one_line_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "ray", None)
    rp = app(tmp_path / "idx")
    with pytest.raises(MissingDependencyError, match=r"pip install 'ragplugins\[ray\]'"):
        rp.index_paths([write(tmp_path / "corpus", DEAL)], executor="ray")
    assert not (tmp_path / "idx" / "manifest.json").exists()


def test_an_embedder_that_cannot_travel_is_said_not_replaced(tmp_path):
    rp = make_rag([], {"enable": []}, embed_model=Unshippable(), persist_dir=tmp_path / "idx")
    with pytest.raises(RagPluginsError, match="the embedder Unshippable given to ragplugins cannot be sent to Ray "
                                              "workers .*name it in the config's embed_model"):
        rp.build_index([Document(text="one", id_="a")], executor="ray")


def test_bad_executor_arguments_are_one_line_errors(tmp_path):
    from ragplugins.errors import InputError

    rp = make_rag([], {"enable": []}, embed_model=HashEmbedding(), persist_dir=tmp_path / "idx")
    with pytest.raises(InputError, match="executor 'dask' is not one of: serial, ray"):
        rp.build_index([], executor="dask")
    with pytest.raises(InputError, match="workers = 2 needs executor='ray'"):
        rp.build_index([], workers=2)
    with pytest.raises(InputError, match="workers = 0: give a whole number"):
        rp.build_index([], executor="ray", workers=0)


def test_a_scope_other_than_chunk_or_corpus_is_the_plugins_error(tmp_path):
    class Sloppy:
        @hookimpl
        def ragplugins_plugin_info(self):
            return PluginInfo(name="sloppy", version="1.0")

        @hookimpl
        def ragplugins_transformations(self, config, ctx):
            return [api.Contribution(Tripwire(word="x"), stage="post_split", scope="parallel")]

    rp = make_rag([Sloppy()], embed_model=HashEmbedding(), persist_dir=tmp_path / "idx")
    with pytest.raises(PluginError, match="plugin 'sloppy' failed in ragplugins_transformations: ValueError: "
                                          "unknown scope 'parallel'; allowed: chunk, corpus"):
        rp.transformations()


@pytest.mark.slow
def test_a_run_on_ray_into_object_storage_is_the_serial_index(local_ray, small_tasks, tmp_path, s3_endpoint,
                                                               monkeypatch):
    """persist_dir in a bucket of the local S3 server: the workers only read, split and embed; the one
    writer puts the index there, and an app opened afterwards on the bucket sees the serial index."""
    from s3_server import new_bucket, s3_environment

    s3_environment(monkeypatch, s3_endpoint, "ray-secret")
    bucket = new_bucket(s3_endpoint, "ray-secret").bucket
    corpus = write(tmp_path / "corpus", {**DEAL, **TINY_CORPUS})
    serial, parallel = app(tmp_path / "serial"), app(f"s3://{bucket}/team/index")
    serial.index_paths([corpus])
    parallel.index_paths([corpus], executor="ray", workers=2)
    want = snapshot(serial)
    assert snapshot(parallel) == want
    assert snapshot(app(f"s3://{bucket}/team/index")) == want
