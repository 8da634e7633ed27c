"""Keeping an embedded index whole: manifest, foreign directories, pruning, schema migration,
`ragplugins check [--repair]`, damaged stores and unreadable input, each with a one-line message."""

from __future__ import annotations

import glob
import json
import os
import sys
import warnings
from pathlib import Path

import lancedb
import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
from crash_worker import HashEmbedding  # noqa: E402

from ragplugins import InputError, StoreError  # noqa: E402
from ragplugins.app import load  # noqa: E402
from ragplugins.check import check_index  # noqa: E402
from ragplugins.testing import write_tiny_corpus  # noqa: E402


class OtherHashEmbedding(HashEmbedding):
    @classmethod
    def class_name(cls) -> str:
        return "tests.OtherHashEmbedding"

    def _vector(self, text: str) -> list[float]:
        return super()._vector(text[::-1])


def _rp(persist_dir, enable=("crossref", "overview"), embed_model=None):
    # The heading split gives the tiny corpus's documents several chunks each, which the chunk checks need.
    return load({"persist_dir": str(persist_dir), "enable": list(enable), "splitter": "auto"},
                embed_model=embed_model or HashEmbedding())


@pytest.fixture
def indexed(tmp_path):
    corpus = write_tiny_corpus(tmp_path / "corpus")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _rp(tmp_path / "idx").index_paths([corpus])
    return tmp_path / "idx", corpus


def _table(persist_dir):
    return lancedb.connect(str(persist_dir / "lancedb")).open_table("chunks")


def _problems(report):
    return [f.problem for f in report.findings]


# -- the manifest ------------------------------------------------------------
def test_missing_manifest_is_refused_then_rebuilt_only_for_the_embedder_that_made_the_vectors(indexed):
    idx, corpus = indexed
    before = json.loads((idx / "manifest.json").read_text())
    (idx / "manifest.json").unlink()
    with pytest.raises(StoreError, match="lost its manifest.json.*check --repair"):
        _rp(idx).index_paths([corpus])
    assert not (idx / "manifest.json").exists()  # not rewritten with whatever embedder came along
    # another embedder: reported, not recorded
    wrong = check_index(_rp(idx, embed_model=OtherHashEmbedding()), repair=True)
    assert not wrong.ok and any("does not reproduce the stored vectors" in p for p in _problems(wrong))
    assert not (idx / "manifest.json").exists()
    fixed = check_index(_rp(idx), repair=True)
    assert fixed.ok, _problems(fixed)
    after = json.loads((idx / "manifest.json").read_text())
    assert after["embedder"] == before["embedder"] and after["index_id"] == before["index_id"]  # from the sidecar
    assert check_index(_rp(idx)).findings == []


def test_query_over_rows_without_a_manifest_says_so_not_no_index(indexed, tmp_path, monkeypatch):
    idx, _ = indexed
    (idx / "manifest.json").unlink()
    monkeypatch.setattr("ragplugins.app.load_embed_model", lambda *a, **k: HashEmbedding())
    cfg = tmp_path / "ragplugins.toml"
    cfg.write_text(f'[ragplugins]\npersist_dir = "{idx}"\n')
    from ragplugins.cli import get_cli

    result = CliRunner().invoke(get_cli(), ["--config", str(cfg), "query", "fees"])
    assert result.exit_code == 2 and "has lost its manifest.json" in result.output and "no index" not in result.output


def test_invalid_manifest_is_one_line_naming_the_file(indexed, tmp_path, monkeypatch):
    idx, corpus = indexed
    (idx / "manifest.json").write_text("{not json")
    monkeypatch.setattr("ragplugins.app.load_embed_model", lambda *a, **k: HashEmbedding())
    cfg = tmp_path / "ragplugins.toml"
    cfg.write_text(f'[ragplugins]\npersist_dir = "{idx}"\n')
    from ragplugins.cli import get_cli

    result = CliRunner().invoke(get_cli(), ["--config", str(cfg), "query", "fees"])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "manifest.json' cannot be read" in result.output
    assert "check --repair" in result.output and "Traceback" not in result.output


def test_another_programs_directory_is_refused_and_left_alone(tmp_path):
    corpus = write_tiny_corpus(tmp_path / "corpus")
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "manifest.json").write_text('{"name": "webpack-assets"}')
    with pytest.raises(StoreError, match="not a ragplugins manifest"):
        _rp(theirs).index_paths([corpus])
    assert (theirs / "manifest.json").read_text() == '{"name": "webpack-assets"}'
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "todo.txt").write_text("buy milk")
    with pytest.raises(StoreError, match="holds files that are not a ragplugins index.*todo.txt"):
        _rp(notes).index_paths([corpus])


def test_documents_inside_persist_dir_are_refused(tmp_path):
    idx = tmp_path / "idx"
    docs = write_tiny_corpus(idx / "docs")
    with pytest.raises(InputError, match="lies inside persist_dir"):
        _rp(idx).index_paths([docs])


def test_manifest_is_replaced_atomically(indexed, monkeypatch):
    """A failure while writing the manifest leaves the old one whole (written to a temporary file, renamed)."""
    idx, corpus = indexed
    before = (idx / "manifest.json").read_text()
    rp = _rp(idx)
    rp.index()

    def broken_fsync(fd):
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError):
        rp._manifest(index_plugins=["x"])
    assert (idx / "manifest.json").read_text() == before
    assert not [p for p in idx.iterdir() if p.name.endswith(".tmp")]


# -- keeping in sync (issue 17) ------------------------------------------------
def test_removed_files_are_pruned_unless_no_prune(indexed, tmp_path, monkeypatch):
    idx, corpus = indexed
    monkeypatch.setattr("ragplugins.app.load_embed_model", lambda *a, **k: HashEmbedding())
    cfg = tmp_path / "ragplugins.toml"
    cfg.write_text(f'[ragplugins]\npersist_dir = "{idx}"\nenable = ["crossref", "overview"]\n')
    from ragplugins.cli import get_cli

    (corpus / "espresso_manual.md").unlink()
    kept = CliRunner().invoke(get_cli(), ["--config", str(cfg), "index", str(corpus), "--no-prune"])
    assert "removed 0" in kept.output and "kept espresso_manual.md: its file is gone (--no-prune)" in kept.output
    assert "espresso_manual.md" in {r["doc_id"] for r in _table(idx).to_arrow().to_pylist()}
    pruned = CliRunner().invoke(get_cli(), ["--config", str(cfg), "index", str(corpus)])
    assert "removed 1" in pruned.output and "removed espresso_manual.md: its file is gone" in pruned.output
    assert "espresso_manual.md" not in {r["doc_id"] for r in _table(idx).to_arrow().to_pylist()}
    assert check_index(_rp(idx)).findings == []  # overviews and references follow


def test_enabling_a_plugin_then_reindex_migrates_the_table_once(tmp_path):
    corpus = write_tiny_corpus(tmp_path / "corpus")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _rp(tmp_path / "idx", enable=()).index_paths([corpus])
    rows = _table(tmp_path / "idx").count_rows()
    for attempt in range(2):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _rp(tmp_path / "idx", enable=("crossref",)).index_paths([corpus], reindex=attempt == 0)
        assert not [w for w in caught if "cannot be filtered on" in str(w.message)], attempt
    table = _table(tmp_path / "idx")
    assert table.count_rows() == rows
    resolved = table.search().where("metadata.crossref_refs LIKE '%exhibit_a.md%'").limit(None).to_arrow()
    assert resolved.num_rows >= 1  # the plugin's key is a column now, and filterable


# -- check and repair ------------------------------------------------------------
def test_check_finds_and_repairs_duplicates_and_plugin_state(indexed):
    idx, _ = indexed
    assert check_index(_rp(idx)).findings == []
    table = _table(idx)
    rows = table.count_rows()
    table.add(table.to_arrow().slice(0, 2))  # what two unlocked writers used to leave
    (idx / "sidecars" / "overview" / "overviews.chunks.json").unlink()
    found = check_index(_rp(idx))
    problems = " | ".join(_problems(found))
    assert "2 chunk ids are stored more than once" in problems
    assert "plugin 'overview'" in problems and not found.ok
    repaired = check_index(_rp(idx), repair=True)
    assert repaired.ok, _problems(repaired)
    assert _table(idx).count_rows() == rows
    assert check_index(_rp(idx)).findings == []


def test_check_finds_a_document_with_missing_chunks(indexed):
    idx, corpus = indexed
    table = _table(idx)
    doc = "master_agreement.md"
    ids = [r["id"] for r in table.to_arrow().to_pylist() if r["doc_id"] == doc]
    assert len(ids) >= 2  # one that lost its only chunk would simply be gone, not incomplete
    table.delete(f"id = '{ids[0]}'")
    report = check_index(_rp(idx), repair=True)
    assert any("missing or mixed chunks (master_agreement.md)" in f.problem and f.repaired for f in report.findings)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, again = _rp(idx).index_paths([corpus])
    assert again.added == [doc]
    assert check_index(_rp(idx)).findings == []


def test_cli_check_prints_one_line_per_finding(indexed, tmp_path, monkeypatch):
    idx, _ = indexed
    monkeypatch.setattr("ragplugins.app.load_embed_model", lambda *a, **k: HashEmbedding())
    cfg = tmp_path / "ragplugins.toml"
    cfg.write_text(f'[ragplugins]\npersist_dir = "{idx}"\nenable = ["crossref", "overview"]\n')
    from ragplugins.cli import get_cli

    ok = CliRunner().invoke(get_cli(), ["--config", str(cfg), "check"])
    assert ok.exit_code == 0 and ok.output.startswith(f"ok: {idx}: 4 documents")
    (idx / "sidecars" / "overview" / "overviews.chunks.json").unlink()
    bad = CliRunner().invoke(get_cli(), ["--config", str(cfg), "check"])
    assert bad.exit_code == 1 and "problem: plugin 'overview'" in bad.output and "check --repair" in bad.output
    fixed = CliRunner().invoke(get_cli(), ["--config", str(cfg), "check", "--repair"])
    assert fixed.exit_code == 0 and "repaired: plugin 'overview'" in fixed.output


def test_damaged_store_is_one_line_naming_it_not_a_plugin(indexed):
    idx, corpus = indexed
    for f in glob.glob(str(idx / "lancedb" / "chunks.lance" / "data" / "*")):
        with open(f, "r+b") as data:
            data.truncate(100)
    with pytest.raises(StoreError, match="cannot be read .*check --repair"):
        _rp(idx).index_paths([corpus])
    rp = _rp(idx, enable=("crossref", "overview", "retry"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(StoreError) as err:
            rp.search("what is the annual fee?")
    message = str(err.value)
    assert "chunks" in message and str(idx / "lancedb") in message and "check --repair" in message
    assert "plugin '" not in message and "\n" not in message
    # every version holds the truncated file but the first (the empty table): repair goes back to it,
    # and the next index run adds every document back
    repaired = check_index(_rp(idx), repair=True)
    assert any(f.repaired and "rolled back to version 1" in f.repaired for f in repaired.findings)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, again = _rp(idx).index_paths([corpus])
    assert len(again.added) == 4
    assert check_index(_rp(idx)).findings == []


# -- resuming a stopped run ---------------------------------------------------
def test_a_run_stopped_while_embedding_is_resumed_without_embedding_again(tmp_path, monkeypatch, long_corpus,
                                                                          bundled_embed_model):
    """Ctrl-C ten minutes into an index run: the index is as it was, and the next run embeds only the
    texts the stopped one had not; the index it writes is the one a single run writes."""
    from ragplugins.resume import UNFINISHED

    corpus = long_corpus  # chunks with windows past what MiniLM reads: those are kept and reused too
    embed_class = type(bundled_embed_model)
    real = embed_class._get_text_embeddings
    embedded: list[str] = []
    stop_after: list[int] = [8]

    def embed(self, texts):
        if stop_after and len(embedded) >= stop_after[0]:
            raise KeyboardInterrupt
        embedded.extend(texts)
        return real(self, texts)

    monkeypatch.setattr(embed_class, "_get_text_embeddings", embed)
    monkeypatch.setattr(bundled_embed_model, "embed_batch_size", 4)

    def app(name):
        return _rp(tmp_path / name, enable=(), embed_model=bundled_embed_model)

    with pytest.raises(KeyboardInterrupt):
        app("idx").index_paths([corpus])
    first = len(embedded)
    assert first >= 8 and (tmp_path / "idx" / UNFINISHED).is_file()
    assert app("idx").context(app("idx").index()).list_documents() == {}

    stop_after.clear()
    embedded.clear()
    from ragplugins.progress import IndexProgress

    with IndexProgress() as progress:
        _, report = app("idx").index_paths([corpus])
    assert report.vectors_reused == first == progress.reused and len(report.added) == 4
    total = first + len(embedded)
    assert not (tmp_path / "idx" / UNFINISHED).exists()

    embedded.clear()
    _, once = app("once").index_paths([corpus])
    assert len(embedded) == total and once.vectors_reused == 0
    resumed, single = (app(name).context(app(name).index()).all_nodes() for name in ("idx", "once"))
    assert {n.node_id: n.embedding for n in resumed} == {n.node_id: n.embedding for n in single}
    assert {n.node_id: n.metadata.get("ragplugins_windows") for n in resumed} == \
        {n.node_id: n.metadata.get("ragplugins_windows") for n in single}


def test_a_text_met_twice_in_one_run_is_not_called_resumed(tmp_path):
    from llama_index.core.embeddings import MockEmbedding

    from ragplugins.resume import ResumableEmbedding

    first = ResumableEmbedding(MockEmbedding(embed_dim=4), tmp_path / "kept.sqlite")
    first.get_text_embedding_batch(["a page's footer", "a clause"])
    first.get_text_embedding_batch(["a page's footer", "another clause"])  # the same footer, later in the run
    assert first.reused == 0
    first.close()
    second = ResumableEmbedding(MockEmbedding(embed_dim=4), tmp_path / "kept.sqlite")
    second.get_text_embedding_batch(["a clause", "new text"])
    assert second.reused == 1


# -- input -------------------------------------------------------------------
def test_vanishing_unreadable_and_dangling_files_are_skipped_by_name(tmp_path, monkeypatch):
    from ragplugins import readers

    corpus = write_tiny_corpus(tmp_path / "corpus")
    (corpus / "gone.md").symlink_to(tmp_path / "nowhere.md")
    real_read = readers._read_bytes

    def flaky(path, *args):
        if path.name == "exhibit_a.md":
            raise FileNotFoundError(path)
        if path.name == "termination_policy.md":
            raise PermissionError(path)
        return real_read(path, *args)

    monkeypatch.setattr(readers, "_read_bytes", flaky)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        read = readers.read_documents([corpus])
    skipped = dict((Path(p).name, why) for p, why in read.skipped)
    assert skipped["exhibit_a.md"] == "it was removed while being read"
    assert skipped["termination_policy.md"].startswith("permission denied")
    assert "symbolic link" in skipped["gone.md"] and "does not exist" in skipped["gone.md"]
    assert sorted(d.id_ for d in read.documents) == ["espresso_manual.md", "master_agreement.md"]


def test_encrypted_and_corrupt_pdfs_are_named(tmp_path):
    import io

    from pypdf import PdfWriter

    from ragplugins.readers import read_documents

    folder = write_tiny_corpus(tmp_path / "corpus")
    writer = PdfWriter()
    writer.add_blank_page(100, 100)
    writer.encrypt("secret")
    buf = io.BytesIO()
    writer.write(buf)
    (folder / "locked.pdf").write_bytes(buf.getvalue())
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        skipped = dict((Path(p).name, why) for p, why in read_documents([folder]).skipped)
    assert skipped["locked.pdf"].startswith("encrypted PDF")
    assert skipped["broken.pdf"].startswith("not a valid PDF")
    assert "RetryError" not in " ".join(skipped.values())


# -- config check ------------------------------------------------------------------
@pytest.mark.parametrize("line, message", [
    ('table = "my table"', "table = 'my table': use 1-128 letters"),
    ('embed_model = "./models/nowhere"', "embed_model = './models/nowhere': no such file or directory"),
    ('llm = "os:system"', "llm = 'os:system': calling it failed (TypeError"),
    ('llm = "builtins:dict"', "llm = 'builtins:dict' returned dict, not a LlamaIndex LLM"),
])
def test_config_check_catches_what_used_to_fail_later(tmp_path, monkeypatch, line, message):
    from ragplugins.cli import get_cli

    monkeypatch.chdir(tmp_path)
    cfg = tmp_path / "ragplugins.toml"
    cfg.write_text(f"[ragplugins]\n{line}\n")
    result = CliRunner().invoke(get_cli(), ["--config", str(cfg), "config", "check"])
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output


def test_config_check_catches_an_unwritable_or_foreign_persist_dir(tmp_path, monkeypatch):
    from ragplugins.cli import get_cli

    cfg = tmp_path / "ragplugins.toml"
    cfg.write_text(f'[ragplugins]\npersist_dir = "{tmp_path / "ro" / "idx"}"\n')
    (tmp_path / "ro").mkdir()
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if str(p).endswith("ro") else real_access(p, mode))
    result = CliRunner().invoke(get_cli(), ["--config", str(cfg), "config", "check"])
    assert result.exit_code == 2 and f"'{tmp_path / 'ro'}' is not a writable directory" in result.output
    monkeypatch.setattr(os, "access", real_access)
    (tmp_path / "ro" / "idx").mkdir()
    (tmp_path / "ro" / "idx" / "manifest.json").write_text('{"name": "other"}')
    result = CliRunner().invoke(get_cli(), ["--config", str(cfg), "config", "check"])
    assert result.exit_code == 2 and "not a ragplugins manifest" in result.output


def test_utf16_without_a_byte_order_mark_is_read_as_text(tmp_path):
    from ragplugins.readers import read_documents

    text = "Überweisungen sind bis zum 1. März fällig. Late payments accrue interest.\n" * 20
    (tmp_path / "le.txt").write_bytes(text.encode("utf-16-le"))
    (tmp_path / "be.txt").write_bytes(text.encode("utf-16-be"))
    (tmp_path / "blob.txt").write_bytes(bytes(range(256)) * 10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        read = read_documents([tmp_path])
    assert {d.id_: d.text for d in read.documents} == {"le.txt": text, "be.txt": text}
    assert [Path(p).name for p, _ in read.skipped] == ["blob.txt"]


def test_a_two_megabyte_paragraph_is_split_without_tripping_nltks_regex_timeout(monkeypatch):
    import nltk.redos

    words = ("the annual fee is payable quarterly as set out in exhibit a and late payments accrue "
             "interest").split()
    text = " ".join(f"{w}." if i % 23 == 22 else w for i, w in enumerate(words * 20000))  # ~2 MB, one paragraph
    # nltk's guard is 5 s of wall clock for a regex over the whole text: a 16-20 MB file tripped it. Here a
    # 2 MB text against a 0.4 s guard (its sentence regex takes ~1.5 s over 2 MB, ~0.08 s over a block).
    monkeypatch.setattr(nltk.redos, "DEFAULT_TIMEOUT", 0.4)
    splitter = _rp("unused", enable=()).splitter()
    chunks = splitter.split_text(text)
    assert len(chunks) > 200
    assert " ".join(chunks).count("exhibit") >= 20000  # nothing dropped (overlap may repeat some)


@pytest.mark.slow
def test_an_offline_hub_name_is_one_line_at_config_check_and_at_load(tmp_path, monkeypatch):
    from ragplugins.cli import get_cli
    from ragplugins.embeddings import load_embed_model
    from ragplugins.errors import RagPluginsError

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    cfg = tmp_path / "ragplugins.toml"
    cfg.write_text('[ragplugins]\nembed_model = "nobody-here/no-such-model"\n')
    result = CliRunner().invoke(get_cli(), ["--config", str(cfg), "config", "check"])
    assert result.exit_code == 2 and "'nobody-here/no-such-model': not in the local Hugging Face cache" in result.output
    with pytest.raises(RagPluginsError, match="embed_model = 'nobody-here/no-such-model' cannot be loaded") as err:
        load_embed_model("nobody-here/no-such-model")
    assert "\n" not in str(err.value)


def test_a_persist_dir_that_cannot_be_written_is_one_line(indexed, monkeypatch):
    import filelock

    idx, corpus = indexed

    def denied(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(filelock.FileLock, "acquire", denied)
    with pytest.raises(StoreError, match=r"cannot write the index in '.*idx' \(Permission denied\)"):
        _rp(idx).index_paths([corpus])


def test_documents_of_an_index_older_than_pruning_are_named_not_removed(tmp_path, monkeypatch):
    from ragplugins.cli import get_cli
    from ragplugins.readers import read_documents

    corpus = write_tiny_corpus(tmp_path / "corpus")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # build_index records no folder, as every index built before this version
        _rp(tmp_path / "idx", enable=()).build_index(read_documents([corpus]).documents)
    (corpus / "espresso_manual.md").unlink()
    monkeypatch.setattr("ragplugins.app.load_embed_model", lambda *a, **k: HashEmbedding())
    cfg = tmp_path / "ragplugins.toml"
    cfg.write_text(f'[ragplugins]\npersist_dir = "{tmp_path / "idx"}"\n')
    out = CliRunner().invoke(get_cli(), ["--config", str(cfg), "index", str(corpus)]).output
    assert "removed 0" in out and "1 indexed documents are from no folder indexed" in out
    assert "e.g. espresso_manual.md" in out and "ragplugins delete ID" in out


def test_a_stopped_write_that_cannot_be_completed_on_open_warns_and_queries_go_on(indexed, plugin_module):
    from ragplugins.testing import make_rag
    from ragplugins.writes import Journal

    idx, _ = indexed

    def broken_after_index(nodes, deleted_doc_ids):
        raise RuntimeError("sidecar server down")

    broken = plugin_module("broken", ragplugins_after_index=broken_after_index)
    Journal(idx).begin("index", {}, [], {})
    rp = make_rag([broken], embed_model=HashEmbedding(), persist_dir=idx)
    with pytest.warns(UserWarning, match="left unfinished, and it cannot be completed now.*plugin 'broken' failed"):
        hits = rp.search("annual fee").final
    assert hits and Journal(idx).pending() is not None  # kept for the next attempt
    fixed = make_rag([], embed_model=HashEmbedding(), persist_dir=idx)
    with pytest.warns(UserWarning, match="completed the index that a stopped process left unfinished"):
        report = check_index(fixed, repair=True)
    assert any("left unfinished" in f.problem and f.repaired == "completed" for f in report.findings)
    assert Journal(idx).pending() is None


def test_check_finds_and_repairs_crossref_references_out_of_line_with_the_rows(indexed):
    """A stopped write or another program can leave stored references that resolving the index as it is
    now would not give; check names the plugin and --repair resolves them again."""
    idx, _ = indexed
    rp = _rp(idx)
    ctx = rp.context(rp.index())
    chunk = next(n for n in ctx.all_nodes() if n.metadata.get("crossref_refs"))
    ctx.update_metadata({chunk.node_id: {"crossref_refs": '[{"kind": "title", "ref": "x", "target": "gone.md"}]'}})
    found = check_index(_rp(idx))
    assert any("plugin 'crossref'" in f.problem and "out of line" in f.problem for f in found.findings)
    check_index(_rp(idx), repair=True)
    assert check_index(_rp(idx)).findings == []


# -- compact -------------------------------------------------------------------
def _lance_bytes(persist_dir) -> int:
    return sum(f.stat().st_size for f in (persist_dir / "lancedb").rglob("*") if f.is_file())


def test_compact_drops_old_versions_files_and_keeps_every_answer(indexed, tmp_path, monkeypatch):
    idx, corpus = indexed
    rp = _rp(idx)
    for n in range(3):  # three edits of one document: three more writes (and metadata patches)
        path = corpus / "master_agreement.md"
        path.write_text(path.read_text() + f"\nAmendment {n}: the fee is reviewed every year.\n")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rp.index_paths([corpus])
    questions = ["annual fee", "descale the boiler", "Exhibit A termination", "Amendment 2"]
    want = {q: [(n.node.node_id, round(n.score, 6)) for n in rp.search(q).final] for q in questions}
    versions, size = len(_table(idx).list_versions()), _lance_bytes(idx)
    kept = rp.compact(keep_days=7)  # every version is younger than a week: files merged, none deleted
    assert kept[0] == versions and kept[1] >= versions
    before, after = rp.compact(keep_days=0)
    assert before > after == 1 and _lance_bytes(idx) < size
    again = _rp(idx)
    assert {q: [(n.node.node_id, round(n.score, 6)) for n in again.search(q).final] for q in questions} == want
    assert check_index(again).findings == []
    monkeypatch.setattr("ragplugins.app.load_embed_model", lambda *a, **k: HashEmbedding())
    cfg = tmp_path / "ragplugins.toml"
    cfg.write_text(f'[ragplugins]\npersist_dir = "{idx}"\nenable = ["crossref", "overview"]\nsplitter = "auto"\n')
    from ragplugins.cli import get_cli

    out = CliRunner().invoke(get_cli(), ["--config", str(cfg), "compact", "--keep-days", "0"])
    assert out.exit_code == 0 and out.output.strip() == "compacted: 1 table versions -> 1", out.output
    bad = CliRunner().invoke(get_cli(), ["--config", str(cfg), "compact", "--keep-days", "-1"])
    assert bad.exit_code == 2 and "--keep-days" in bad.output
