"""Crash injection: the writer is killed (os._exit, no cleanup) at each phase of `index` and `delete`.

For every phase the test proves two things on the real embedded LanceDB store, with crossref,
overview and retry enabled:

- right after the crash, every document's rows are exactly its old version or its new one
  (what any query reads), never a mix and never missing;
- the next run (the same command again) leaves exactly the reference index: the one an
  uninterrupted run builds from the same starting point (ids, rows, vectors, crossref references,
  overviews, manifest), and no journal.
"""

from __future__ import annotations

import base64
import json
import multiprocessing
import os
import shutil
import sys
import time
from pathlib import Path

import lancedb
import numpy as np
import pytest

# Crash injection: each test runs writer processes and kills them; together they take minutes.
pytestmark = pytest.mark.slow

# The children import the worker by module name, and so does the forkserver, which preloads it once
# (it is started with the environment's PYTHONPATH, not this process's sys.path).
sys.path.insert(0, str(Path(__file__).parent))
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).parent), os.environ.get("PYTHONPATH")]))
import crash_worker  # noqa: E402

from ragplugins.testing import TINY_CORPUS  # noqa: E402
from ragplugins.writes import CRASH_EXIT_CODE, JOURNAL, WriterLock  # noqa: E402

INDEX_PHASES = ["read", "split", "transform", "embed", "journal", "store_write", "store_written", "after_write",
                "after_index:crossref", "after_index:overview", "manifest", "journal_clear"]
# (a delete changes no manifest key, so it has no manifest phase)
DELETE_PHASES = ["journal", "store_write", "store_written", "after_write", "after_index:crossref",
                 "after_index:overview", "journal_clear"]
VOLATILE = {"creation_date", "last_modified_date", "last_accessed_date", "file_size"}

V2_CHANGES = {
    # changed: a reference to the new appendix, the fee changed
    "master_agreement.md": TINY_CORPUS["master_agreement.md"].replace("120,000", "150,000")
    + "\n## Section 3 Support\n\nSupport hours are listed in the Support Appendix.\n",
    # added
    "support_appendix.md": "# Support Appendix\n\nSupport runs 9 to 5 on working days, as agreed in Section 3 of "
                           "the Master Services Agreement.\n",
}
REMOVED = "espresso_manual.md"


def _ctx():
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["crash_worker"])
    return ctx


def _run(*args, expect_crash: bool = False, **kwargs) -> dict | None:
    ctx = _ctx()
    queue = ctx.Queue()
    proc = ctx.Process(target=crash_worker.child, args=(queue, *args), kwargs=kwargs)
    proc.start()
    proc.join(120)
    if expect_crash:
        assert proc.exitcode == CRASH_EXIT_CODE, f"the writer did not stop at {kwargs.get('crash_at')}"
        return None
    result = queue.get(timeout=10)
    assert proc.exitcode == 0
    return result


def _write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def snapshot(persist_dir: Path) -> dict:
    """Everything a reader can see of the index, without opening it through ragplugins."""
    table = lancedb.connect(str(persist_dir / "lancedb")).open_table("chunks")
    rows = {}
    for row in table.to_arrow().to_pylist():
        meta = {k: v for k, v in row["metadata"].items() if k not in VOLATILE and k != "_node_content"}
        node = json.loads(row["metadata"]["_node_content"])
        node["metadata"] = {k: v for k, v in node["metadata"].items() if k not in VOLATILE}
        assert row["id"] not in rows, f"duplicate chunk id {row['id']}"
        rows[row["id"]] = {"doc": row["doc_id"], "text": row["text"], "meta": meta, "node_meta": node["metadata"],
                           "vector": np.round(np.asarray(row["vector"]), 5).tolist()}
    stored = json.loads((persist_dir / "sidecars" / "overview" / "overviews.chunks.json").read_text())
    overviews = {f"{k}s": [r[k] for r in stored["records"]] for k in ("doc_id", "hash", "text", "source")}
    overviews["meta"] = stored["meta"]
    overviews["vectors"] = [np.round(np.frombuffer(base64.b64decode(r["vector"]), dtype="<f4"), 5).tolist()
                            for r in stored["records"]]
    manifest = json.loads((persist_dir / "manifest.json").read_text())
    return {"rows": rows, "overviews": overviews, "manifest": manifest,
            "journal": (persist_dir / JOURNAL).exists()}


def by_document(rows: dict) -> dict[str, dict]:
    docs: dict[str, dict] = {}
    for node_id, row in rows.items():
        docs.setdefault(row["doc"], {})[node_id] = row["text"]
    return docs


@pytest.fixture(scope="module")
def states(tmp_path_factory):
    """v1 indexed; the corpus edited to v2; the reference: v1's index after an uninterrupted v2 run
    (and after an uninterrupted delete)."""
    root = tmp_path_factory.mktemp("crash")
    corpus = _write(root / "corpus", TINY_CORPUS)
    v1 = root / "v1"
    assert _run(str(v1), "index", [str(corpus)])["ok"]
    # the edits that make v2
    (corpus / REMOVED).unlink()
    _write(corpus, V2_CHANGES)
    reference = root / "reference"
    shutil.copytree(v1, reference)
    result = _run(str(reference), "index", [str(corpus)])
    assert result["ok"] and result["deleted"] == [REMOVED] and result["added"] == ["support_appendix.md"]
    deleted = root / "deleted"
    shutil.copytree(v1, deleted)
    assert _run(str(deleted), "delete", ["exhibit_a.md"])["deleted"] == ["exhibit_a.md"]
    return {"root": root, "corpus": corpus, "v1": v1, "v1_snap": snapshot(v1), "reference": snapshot(reference),
            "deleted": snapshot(deleted)}


def _assert_old_or_new(crashed: dict, old: dict, new: dict) -> None:
    now, before, after = by_document(crashed["rows"]), by_document(old["rows"]), by_document(new["rows"])
    for doc in set(now) | set(before) | set(after):
        assert now.get(doc) in (before.get(doc), after.get(doc)), f"'{doc}' is neither its old nor its new version"


def _assert_same(got: dict, want: dict) -> None:
    assert got["rows"].keys() == want["rows"].keys()
    for node_id, row in want["rows"].items():
        assert got["rows"][node_id] == row, f"row {node_id} differs"
    assert got["overviews"] == want["overviews"]
    assert got["manifest"] == want["manifest"]
    assert not got["journal"]


def test_reference_is_a_real_change(states):
    """Guards the suite itself: v2 differs from v1 in rows, crossref references and overviews."""
    old, new = states["v1_snap"], states["reference"]
    assert by_document(old["rows"]).keys() != by_document(new["rows"]).keys()
    refs = lambda s: sorted(r["meta"].get("crossref_refs") or "" for r in s["rows"].values())  # noqa: E731
    assert refs(old) != refs(new)
    assert old["overviews"]["doc_ids"] != new["overviews"]["doc_ids"]
    assert any("support_appendix.md" in json.dumps(r["meta"]) for r in new["rows"].values()
               if r["doc"] == "master_agreement.md")


@pytest.mark.parametrize("phase", INDEX_PHASES)
def test_index_killed_at_each_phase_recovers_exactly(states, phase):
    work = states["root"] / f"index-{phase.replace(':', '-')}"
    shutil.copytree(states["v1"], work)
    _run(str(work), "index", [str(states["corpus"])], crash_at=phase, expect_crash=True)
    crashed = snapshot_rows(work)
    _assert_old_or_new(crashed, states["v1_snap"], states["reference"])
    _query_between(work, crashed, states)
    result = _run(str(work), "index", [str(states["corpus"])])
    assert result["ok"], result
    _assert_same(snapshot(work), states["reference"])


@pytest.mark.parametrize("phase", DELETE_PHASES)
def test_delete_killed_at_each_phase_recovers_exactly(states, phase):
    work = states["root"] / f"delete-{phase.replace(':', '-')}"
    shutil.copytree(states["v1"], work)
    _run(str(work), "delete", ["exhibit_a.md"], crash_at=phase, expect_crash=True)
    crashed = snapshot_rows(work)
    _assert_old_or_new(crashed, states["v1_snap"], states["deleted"])
    _query_between(work, crashed, states)
    # The next run is a query here: opening the index completes the stopped write.
    assert _run(str(work), "search", ["payment schedule"])["ok"]
    _assert_same(snapshot(work), states["deleted"])


def _query_between(work: Path, crashed: dict, states: dict) -> None:
    """A query before anything completes the stopped write (the lock is held so the reader does not
    complete it): every chunk it returns is one of the rows found above, which are old or new per document."""
    with WriterLock(work, timeout=1):
        result = _run(str(work), "search", ["annual fee payment schedule termination"])
    assert result["ok"], result
    assert result["final"] and set(result["final"]) <= set(crashed["rows"])


def snapshot_rows(persist_dir: Path) -> dict:
    """The rows only (the derived files may be stale right after a crash; that is what the journal is for)."""
    table = lancedb.connect(str(persist_dir / "lancedb")).open_table("chunks")
    rows = {}
    for row in table.to_arrow().to_pylist():
        assert row["id"] not in rows, f"duplicate chunk id {row['id']}"
        rows[row["id"]] = {"doc": row["doc_id"], "text": row["text"]}
    return {"rows": rows}


def test_second_writer_waits_or_fails_with_one_line(states):
    work = states["root"] / "busy"
    shutil.copytree(states["v1"], work)
    lock = WriterLock(work, timeout=1)
    with lock:
        result = _run(str(work), "index", [str(states["corpus"])], lock_timeout=0.5)
    assert not result["ok"] and result["type"] == "IndexBusyError"
    assert "another ragplugins process is writing the index in" in result["error"]
    assert "\n" not in result["error"]


def test_two_writers_at_once_leave_no_duplicates(states):
    """Two processes index the same edits into the same index at the same moment: one waits for the
    other, both succeed, and the index is the reference (no duplicate chunk ids)."""
    work = states["root"] / "race"
    shutil.copytree(states["v1"], work)
    ctx = _ctx()
    queue = ctx.Queue()
    procs = [ctx.Process(target=crash_worker.child, args=(queue, str(work), "index", [str(states["corpus"])]))
             for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    results = [queue.get(timeout=10) for _ in procs]
    assert all(r["ok"] for r in results), results
    # exactly one of them found the work to do; the other found it done
    assert sorted(len(r["updated"]) + len(r["added"]) for r in results)[0] == 0
    _assert_same(snapshot(work), states["reference"])


def test_a_writer_waits_for_the_lock_then_writes(states):
    work = states["root"] / "wait"
    shutil.copytree(states["v1"], work)
    ctx = _ctx()
    queue = ctx.Queue()
    lock = WriterLock(work, timeout=1)
    with lock:
        proc = ctx.Process(target=crash_worker.child, args=(queue, str(work), "index", [str(states["corpus"])]),
                           kwargs={"lock_timeout": 60})
        proc.start()
        time.sleep(2)
        assert proc.is_alive()  # waiting
    proc.join(120)
    assert queue.get(timeout=10)["ok"]
    _assert_same(snapshot(work), states["reference"])
