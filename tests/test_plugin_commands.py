"""Plugin commands load the app through one public function (ragplugins.api.load_app): the config
the user named, read as every core command reads it (paths relative to the file, the config's
``llm`` imported), from any working directory."""

import json

from click.testing import CliRunner

from ragplugins.cli import cli, load_app

LLM_FACTORY = '''
from ragplugins.testing import FakeLLM


def make():
    return FakeLLM(responder=lambda prompt: "An overview written by the configured LLM.")
'''


def _project(tmp_path, config: str):
    """A project folder with its config, and another folder to run the command from."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "ragplugins.toml").write_text(config)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    return project, elsewhere


def test_overview_rebuild_uses_the_llm_the_config_names(tmp_path, monkeypatch):
    from ragplugins.testing import write_tiny_corpus

    (tmp_path / "llm_factory_for_test.py").write_text(LLM_FACTORY)
    monkeypatch.syspath_prepend(str(tmp_path))
    project, elsewhere = _project(tmp_path, '[ragplugins]\nenable = ["overview"]\npersist_dir = "idx"\n'
                                            'llm = "llm_factory_for_test:make"\n'
                                            '[ragplugins.overview]\noverview = "llm"\n')
    corpus = write_tiny_corpus(project / "corpus")
    monkeypatch.chdir(elsewhere)
    config = str(project / "ragplugins.toml")
    built = CliRunner().invoke(cli, ["-c", config, "index", str(corpus)])
    assert built.exit_code == 0, built.output
    rebuilt = CliRunner().invoke(cli, ["-c", config, "overview", "rebuild"])
    assert rebuilt.exit_code == 0, rebuilt.output
    assert f"{len(list(corpus.iterdir()))} overviews written" in rebuilt.output
    shown = CliRunner().invoke(cli, ["-c", config, "overview", "show"])
    assert "An overview written by the configured LLM." in shown.output
    assert not (elsewhere / "idx").exists() and not (elsewhere / ".ragplugins").exists()


def test_overview_rebuild_without_an_llm_is_one_line_not_a_traceback(tmp_path, monkeypatch):
    project, elsewhere = _project(tmp_path, '[ragplugins]\nenable = ["overview"]\npersist_dir = "idx"\n'
                                            '[ragplugins.overview]\noverview = "llm"\n')
    monkeypatch.chdir(elsewhere)
    result = CliRunner().invoke(cli, ["-c", str(project / "ragplugins.toml"), "overview", "rebuild"])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "overview = 'llm' needs the host's LLM" in result.output and "Traceback" not in result.output


def test_retry_calibrate_reads_the_index_beside_its_config(tmp_path, monkeypatch):
    from ragplugins.testing import write_tiny_corpus

    project, elsewhere = _project(tmp_path, '[ragplugins]\nenable = ["retry"]\npersist_dir = "idx"\n')
    corpus = write_tiny_corpus(project / "corpus")
    gold = project / "gold.jsonl"
    gold.write_text(json.dumps({"query": "What is the annual fee?", "expected": ["120,000 EUR"]}) + "\n")
    monkeypatch.chdir(elsewhere)
    config = str(project / "ragplugins.toml")
    built = CliRunner().invoke(cli, ["-c", config, "index", str(corpus)])
    assert built.exit_code == 0, built.output
    result = CliRunner().invoke(cli, ["-c", config, "retry", "calibrate", "--gold", str(gold), "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output[result.output.index("{"):])["rows"]
    assert [r["query"] for r in rows] == ["What is the annual fee?"]
    assert not (elsewhere / "idx").exists(), "calibrate opened a stray index in the working directory"


def test_load_app_leaves_out_the_plugins_asked_and_keeps_the_config_paths(tmp_path, monkeypatch):
    import click

    project, elsewhere = _project(tmp_path, '[ragplugins]\nenable = ["retry", "crossref"]\npersist_dir = "idx"\n')
    monkeypatch.chdir(elsewhere)
    seen = {}

    @click.command("probe")
    @click.pass_context
    def probe(ctx):
        rp = load_app(ctx, without=["retry"])
        seen["enabled"], seen["persist_dir"] = rp.config.enabled, rp.persist_dir

    group = click.Group(commands={"probe": probe})
    group.callback = click.pass_context(
        lambda ctx: ctx.ensure_object(dict).update(config=str(project / "ragplugins.toml"))
    )
    result = CliRunner().invoke(group, ["probe"])
    assert result.exit_code == 0, result.output
    assert seen["enabled"] == ["crossref"]
    assert seen["persist_dir"].resolve() == (project / "idx").resolve()
