"""persist_dir on object storage: the same index, plugin state and query lists as on local disk, on a
local S3-compatible server (moto's server mode, started here on 127.0.0.1), with secrets kept out of
everything written or shown, one writer at a time across processes, and one-line errors."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

boto3 = pytest.importorskip("boto3")
moto_server = pytest.importorskip("moto.server")

from s3_server import KEY_ID, free_port, new_bucket, s3_environment  # noqa: E402

from ragplugins.app import load  # noqa: E402
from ragplugins.errors import IndexBusyError, StoreError  # noqa: E402
from ragplugins.home import ObjectStoreHome, home_for  # noqa: E402
from ragplugins.testing import TINY_CORPUS, check_store_adapter, command_group, write_tiny_corpus  # noqa: E402

TESTS = Path(__file__).parent
ROOT = TESTS.parent
# Distinctive, so finding it anywhere (an object, a log line, a message) is unambiguous.
SECRET = "rp-Secret-" + uuid.uuid4().hex
PLUGINS = ["crossref", "overview", "retry"]
QUERIES = ["What is the annual fee?", "How do I descale the espresso machine?", "termination notice period"]


@pytest.fixture
def s3(s3_endpoint, monkeypatch):
    """The environment a host sets for object storage, and a fresh bucket; yields a boto3 client."""
    s3_environment(monkeypatch, s3_endpoint, SECRET)
    return new_bucket(s3_endpoint, SECRET)


def _objects(client, prefix: str = "") -> dict[str, bytes]:
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=client.bucket, Prefix=prefix)
    keys = [o["Key"] for page in pages for o in page.get("Contents", ())]
    return {k: client.get_object(Bucket=client.bucket, Key=k)["Body"].read() for k in keys}


@pytest.fixture(params=["local", "s3"])
def persist_dir(request, tmp_path) -> str:
    """The same tests on local disk and on the S3 server."""
    if request.param == "local":
        return str(tmp_path / "idx")
    client = request.getfixturevalue("s3")
    return f"s3://{client.bucket}/team/idx"


def _lists(rp) -> list[list[str]]:
    return [[n.node.node_id for n in rp.search(q).final] for q in QUERIES]


def _open(persist_dir: str, embed_model, **extra):
    return load({"persist_dir": persist_dir, "enable": PLUGINS, **extra}, embed_model=embed_model)


# -- the same plugin behaviour on both ---------------------------------------------------------

def test_plugins_index_query_and_restart(persist_dir, tmp_path, bundled_embed_model):
    """crossref, overview and retry on: index, query, open again as a new app: the same lists, the same
    manifest and plugin state, read back from where the first app wrote them."""
    corpus = write_tiny_corpus(tmp_path / "corpus")
    first = _open(persist_dir, bundled_embed_model)
    _, report = first.index_paths([corpus])
    assert sorted(report.added) == sorted(TINY_CORPUS)
    lists = _lists(first)
    assert all(lists)
    overviews = first.context().state("overview").read("overviews")
    assert overviews is not None and overviews.records
    resolved = [n for n in first.context().all_nodes() if n.metadata.get("crossref_refs")]
    assert resolved

    again = _open(persist_dir, bundled_embed_model)
    assert _lists(again) == lists
    assert again._manifest() == first._manifest()
    assert again._manifest()["index_plugins"] == ["crossref", "overview"]  # retry works at query time only
    stored = again.context(again.index()).state("overview").read("overviews")
    assert stored is not None and stored.records == overviews.records
    assert [n.node_id for n in again.context().all_nodes() if n.metadata.get("crossref_refs")] == \
        [n.node_id for n in resolved]
    # Unchanged files are skipped on a second run: the second app sees the first one's content hashes.
    _, report = again.index_paths([corpus])
    assert sorted(report.unchanged) == sorted(TINY_CORPUS) and not report.added


def test_an_index_on_s3_answers_as_the_same_index_on_disk(s3, tmp_path, bundled_embed_model):
    corpus = write_tiny_corpus(tmp_path / "corpus")
    local = _open(str(tmp_path / "idx"), bundled_embed_model)
    remote = _open(f"s3://{s3.bucket}/idx", bundled_embed_model)
    local.index_paths([corpus])
    remote.index_paths([corpus])
    assert _lists(remote) == _lists(local)
    assert remote.context().state("overview").read("overviews").records == \
        local.context().state("overview").read("overviews").records
    # Everything of the index is in the bucket, under the prefix, laid out as on disk.
    keys = set(_objects(s3))
    assert {"idx/manifest.json", "idx/sidecars/overview/overviews.chunks.json"} <= keys
    assert any(k.startswith("idx/lancedb/chunks.lance/") for k in keys)
    assert all(k.startswith("idx/") for k in keys)
    assert "idx/journal.json" not in keys and "idx/write.lock" not in keys  # cleared after the write
    on_disk = {p.relative_to(tmp_path / "idx").as_posix() for p in (tmp_path / "idx").rglob("*.json")}
    assert {k[len("idx/"):] for k in keys if k.endswith(".json") and not k.startswith("idx/lancedb/")} == \
        {name for name in on_disk if not name.startswith("lancedb/")}


SECOND_PROCESS = textwrap.dedent("""
    import json, sys, warnings
    warnings.simplefilter("ignore")
    from ragplugins.app import load
    rp = load({"persist_dir": sys.argv[1], "enable": ["crossref", "overview", "retry"]})
    index = rp.index()
    state = rp.context(index).state("overview").read("overviews")
    print(json.dumps({"manifest": rp._manifest(), "overviews": state.records if state else None,
                      "lists": [[n.node.node_id for n in rp.search(q).final] for q in json.loads(sys.argv[2])]}))
""")


@pytest.mark.slow
def test_a_second_process_reads_what_the_first_wrote(s3, tmp_path, bundled_embed_model):
    """Another process (as on another machine: nothing shared but the bucket and the environment)."""
    corpus = write_tiny_corpus(tmp_path / "corpus")
    uri = f"s3://{s3.bucket}/shared"
    first = _open(uri, bundled_embed_model)
    first.index_paths([corpus])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = subprocess.run([sys.executable, "-c", SECOND_PROCESS, uri, json.dumps(QUERIES)], cwd=elsewhere,
                         capture_output=True, text=True, timeout=300, env=os.environ.copy())
    assert out.returncode == 0, out.stderr[-2000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["manifest"] == first._manifest()
    assert seen["overviews"] == first.context().state("overview").read("overviews").records
    assert seen["lists"] == _lists(first)
    assert SECRET not in out.stdout + out.stderr


def test_cli_index_and_query_with_an_s3_persist_dir(s3, tmp_path, s3_endpoint, monkeypatch):
    from click.testing import CliRunner

    monkeypatch.delenv("AWS_ENDPOINT_URL")  # the config names the endpoint instead
    corpus = write_tiny_corpus(tmp_path / "corpus")
    config = tmp_path / "ragplugins.toml"
    config.write_text(textwrap.dedent(f"""
        [ragplugins]
        persist_dir = "s3://{s3.bucket}/cli"
        enable = ["crossref", "overview", "retry"]

        [ragplugins.storage]
        endpoint = "{s3_endpoint}"
        region = "us-east-1"
    """), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    indexed = runner.invoke(command_group(), ["--config", str(config), "index", str(corpus)])
    assert indexed.exit_code == 0, indexed.output
    assert "cli/manifest.json" in _objects(s3)
    asked = runner.invoke(command_group(), ["--config", str(config), "query", "What is the annual fee?", "--json"])
    assert asked.exit_code == 0, asked.output
    sources = json.loads(asked.stdout)["sources"]
    assert sources and any("master_agreement" in json.dumps(s) for s in sources)
    assert SECRET not in indexed.output + asked.output


def test_store_adapter_conformance_on_s3(s3, tmp_path, bundled_embed_model):
    from ragplugins.stores.lancedb import LanceDBAdapter

    uri = f"s3://{s3.bucket}/kit"
    corpus = write_tiny_corpus(tmp_path / "corpus")

    def open_rag():
        return load({"persist_dir": uri, "enable": []}, embed_model=bundled_embed_model)

    def reopen(rag, index):
        rag2 = open_rag()
        return rag2, rag2.index()

    check_store_adapter(open_rag, corpus, adapter_class=LanceDBAdapter, reopen=reopen)
    assert any(k.startswith("kit/sidecars/conformance/") for k in _objects(s3))


# -- secrets ---------------------------------------------------------------------------------------

def test_secrets_are_never_written_logged_or_shown(s3, tmp_path, bundled_embed_model, caplog, monkeypatch):
    caplog.set_level(logging.DEBUG)
    corpus = write_tiny_corpus(tmp_path / "corpus")
    rp = _open(f"s3://{s3.bucket}/idx", bundled_embed_model)
    rp.index_paths([corpus])
    rp.search(QUERIES[0])
    blobs = _objects(s3)
    assert blobs and not [k for k, body in blobs.items() if SECRET.encode() in body]
    assert SECRET not in caplog.text
    assert SECRET not in repr(rp.config) + repr(rp.home) + repr(rp.index().vector_store) + str(rp.home)
    assert SECRET not in repr(rp.context().store.__dict__)
    # A failing open: the message names the location, never the key.
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{free_port()}")
    with pytest.raises(StoreError) as failed:
        _open(f"s3://{s3.bucket}/idx", bundled_embed_model).index()
    assert SECRET not in str(failed.value) and SECRET not in repr(failed.value.__cause__)


def test_a_secret_pasted_into_the_config_is_refused_without_being_echoed(tmp_path):
    from ragplugins.config import parse_config
    from ragplugins.errors import ConfigError

    config = tmp_path / "ragplugins.toml"
    config.write_text(f'[ragplugins]\npersist_dir = "s3://b-1/x"\n[ragplugins.storage]\n'
                      f'secret_access_key_env = "{SECRET}/+x"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as bad:
        parse_config(config)
    assert "secret_access_key_env" in str(bad.value) and "NAME of an environment variable" in str(bad.value)
    assert SECRET not in str(bad.value)


def test_an_s3_persist_dir_is_not_made_relative_and_other_schemes_are_refused(tmp_path):
    from ragplugins.config import parse_config
    from ragplugins.errors import ConfigError

    config = tmp_path / "ragplugins.toml"
    config.write_text('[ragplugins]\npersist_dir = "s3://bucket-a/team/idx"\n[ragplugins.storage]\n'
                      'endpoint = "http://127.0.0.1:9000"\nlock_lease = 30\n', encoding="utf-8")
    parsed = parse_config(config)
    assert parsed.core.persist_dir == "s3://bucket-a/team/idx"
    assert parsed.core.storage.endpoint == "http://127.0.0.1:9000" and parsed.core.storage.lock_lease == 30
    home = home_for(parsed.core.persist_dir, parsed.core.storage)
    assert isinstance(home, ObjectStoreHome) and (home.bucket, home.prefix) == ("bucket-a", "team/idx")
    assert home.allow_http and home.lancedb_uri == "s3://bucket-a/team/idx/lancedb"
    config.write_text('[ragplugins]\npersist_dir = "gs://bucket-a/idx"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"persist_dir = 'gs://bucket-a/idx'.*only local folders and s3://"):
        parse_config(config)
    config.write_text('[ragplugins]\n[ragplugins.storage]\nendpont = "x"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"storage.endpont: unknown key \(did you mean 'endpoint'\?\)"):
        parse_config(config)


# -- bad input: one line, nothing lost ------------------------------------------------------------

def _one_line(exc: BaseException) -> str:
    text = str(exc)
    assert "\n" not in text, text
    return text


def test_bad_locations_fail_with_one_line_and_leave_the_index_as_it_was(s3, tmp_path, bundled_embed_model,
                                                                         monkeypatch):
    corpus = write_tiny_corpus(tmp_path / "corpus")
    uri = f"s3://{s3.bucket}/idx"
    rp = _open(uri, bundled_embed_model)
    rp.index_paths([corpus])
    lists = _lists(rp)
    before = _objects(s3)

    # An unreachable endpoint.
    dead = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setenv("AWS_ENDPOINT_URL", dead)
    with pytest.raises(StoreError) as err:
        _open(uri, bundled_embed_model).index_paths([corpus])
    line = _one_line(err.value)
    assert uri in line and dead in line and "endpoint" in line
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3.meta.endpoint_url)

    # A bucket that does not exist.
    with pytest.raises(StoreError) as err:
        _open("s3://no-such-bucket-rp/idx", bundled_embed_model).index_paths([corpus])
    line = _one_line(err.value)
    assert "no-such-bucket-rp" in line and "does not exist" in line

    # No credentials anywhere (no variables, no profile files, no instance metadata).
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    with pytest.raises(StoreError) as err:
        _open(uri, bundled_embed_model).search("annual fee")
    line = _one_line(err.value)
    assert uri in line and "AWS_ACCESS_KEY_ID" in line and "AWS_SECRET_ACCESS_KEY" in line

    # Credentials under names the config gives.
    monkeypatch.setenv("TEAM_S3_KEY", KEY_ID)
    monkeypatch.setenv("TEAM_S3_SECRET", SECRET)
    storage = {"access_key_id_env": "TEAM_S3_KEY", "secret_access_key_env": "TEAM_S3_SECRET"}
    again = _open(uri, bundled_embed_model, storage=storage)
    assert _lists(again) == lists
    assert _objects(s3) == before  # nothing was written by the failed attempts


# -- one writer at a time across processes ----------------------------------------------------------

def test_a_second_writer_gets_a_clear_conflict_and_a_stopped_writers_lease_lapses(s3):
    home = home_for(f"s3://{s3.bucket}/locked")
    holder = home.writer_lock(timeout=1)
    with holder:
        assert holder.is_free()  # free for its holder
        other = home_for(f"s3://{s3.bucket}/locked").writer_lock(timeout=1)
        assert not other.is_free()
        started = time.monotonic()
        with pytest.raises(IndexBusyError) as busy:
            with other:
                pass
        assert time.monotonic() - started >= 1
        line = _one_line(busy.value)
        assert f"another process is writing the index at s3://{s3.bucket}/locked" in line
        assert "retry when it finishes" in line
    assert "locked/write.lock" not in _objects(s3)  # released
    # A writer that stopped without releasing (no renewals): its lock lapses after its lease.
    s3.put_object(Bucket=s3.bucket, Key="locked/write.lock", IfNoneMatch="*",
                  Body=json.dumps({"owner": "gone", "host": "elsewhere", "pid": 1, "lease_seconds": 1}))
    waiting = home.writer_lock(timeout=10)
    assert not waiting.is_free()
    time.sleep(2.2)  # Last-Modified has one-second resolution
    with waiting:
        held = json.loads(_objects(s3)["locked/write.lock"])
        assert held["owner"] != "gone" and held["pid"] == os.getpid()


def test_the_lease_is_renewed_while_a_long_write_runs(s3):
    from ragplugins.config import StorageSettings

    home = home_for(f"s3://{s3.bucket}/long", StorageSettings(lock_lease=1.5))
    with home.writer_lock(timeout=1):
        time.sleep(4)  # well past one lease: kept alive by renewals
        other = home_for(f"s3://{s3.bucket}/long", StorageSettings(lock_lease=1.5)).writer_lock(timeout=0.5)
        assert not other.is_free()
        with pytest.raises(IndexBusyError):
            with other:
                pass


WRITER = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, sys.argv[3])
    import crash_worker
    print(json.dumps(crash_worker.run(sys.argv[1], "index", [sys.argv[2]], lock_timeout=240)))
""")


@pytest.mark.slow
def test_two_writer_processes_at_once_both_land(s3, tmp_path):
    """Two processes index different folders into one s3 index at the same moment: one waits for the
    other's lock, both succeed, and the index holds every document once."""
    uri = f"s3://{s3.bucket}/race"
    folders = []
    for side, names in (("a", ["master_agreement.md", "espresso_manual.md"]),
                        ("b", [n for n in TINY_CORPUS if n not in ("master_agreement.md", "espresso_manual.md")])):
        folder = tmp_path / side
        folder.mkdir()
        for name in names:
            (folder / name).write_text(TINY_CORPUS[name], encoding="utf-8")
        folders.append(folder)
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, uri, str(folder), str(TESTS)], cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy())
             for folder in folders]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err[-2000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert all(r["ok"] for r in results), results
    assert sorted(d for r in results for d in r["added"]) == sorted(TINY_CORPUS)
    sys.path.insert(0, str(TESTS))
    try:
        import crash_worker
    finally:
        sys.path.remove(str(TESTS))
    rp = load(crash_worker.config(uri), embed_model=crash_worker.HashEmbedding())
    docs = rp.context(rp.index()).store.list_documents()
    assert sorted(docs) == sorted(TINY_CORPUS)
    ids = [n.node_id for n in rp.context().all_nodes()]
    assert len(ids) == len(set(ids))
    assert sorted(rp._manifest()["sources"]) == sorted(str(f) for f in folders)
    assert "race/journal.json" not in _objects(s3) and "race/write.lock" not in _objects(s3)


def test_check_verifies_an_index_on_s3(s3, tmp_path, bundled_embed_model):
    from ragplugins.check import check_index

    rp = _open(f"s3://{s3.bucket}/checked", bundled_embed_model)
    rp.index_paths([write_tiny_corpus(tmp_path / "corpus")])
    report = check_index(_open(f"s3://{s3.bucket}/checked", bundled_embed_model))
    assert report.ok and not report.findings, [f.problem for f in report.findings]
    assert report.documents == len(TINY_CORPUS) and report.persist_dir == f"s3://{s3.bucket}/checked"
    # The manifest lost: found, and rebuilt from the stored vectors with the index id the plugin state records.
    index_id = rp._manifest()["index_id"]
    s3.delete_object(Bucket=s3.bucket, Key="checked/manifest.json")
    repaired = check_index(_open(f"s3://{s3.bucket}/checked", bundled_embed_model), repair=True)
    assert any("manifest.json is missing" in f.problem and f.repaired for f in repaired.findings)
    assert json.loads(_objects(s3)["checked/manifest.json"])["index_id"] == index_id


def test_a_writer_that_lost_its_lease_writes_nothing(s3):
    """A holder whose lock another writer took over (it stalled past its lease) stops before any row."""
    from ragplugins.config import StorageSettings

    home = home_for(f"s3://{s3.bucket}/stalled", StorageSettings(lock_lease=1.5))
    lock = home.writer_lock(timeout=1)
    with lock:
        lock.confirm()  # still ours
        # Another writer's takeover, as after a stall: the lock object is replaced behind the holder's back.
        s3.put_object(Bucket=s3.bucket, Key="stalled/write.lock", Body=b'{"owner": "other", "lease_seconds": 60}')
        time.sleep(1.5)  # the next renewal (every 0.5 s) finds the ETag changed
        with pytest.raises(IndexBusyError, match=r"lost the writer lock of the index at s3://.*nothing was written"):
            lock.confirm()
    # Its release leaves the other writer's lock alone.
    assert json.loads(_objects(s3)["stalled/write.lock"])["owner"] == "other"
