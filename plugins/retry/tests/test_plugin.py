import json
import subprocess
import sys
import warnings
from typing import ClassVar

import pytest
from click.testing import CliRunner
from retry_testkit import ScriptedRetriever, node, rag_with

import ragplugins_retry.plugin as plugin
from ragplugins import api
from ragplugins.api import ConfigError
from ragplugins.testing import FakeLLM, PluginConformance
from ragplugins_retry import Measurement, RetrySignal


class TestConformance(PluginConformance):
    plugin = plugin
    config = {"signal": "query_coverage", "threshold": 0.3, "strategy": "keywords"}


QUESTION = "What is the annual fee of the agreement?"


def test_end_to_end_fires_reformulates_and_keeps_the_set_the_trace_names(tiny_rag, bundled_embed_model):
    off, _ = tiny_rag
    # Threshold 1.0: fires unless the best top chunk holds every question term.
    rag = rag_with(tiny_rag, bundled_embed_model, {"signal": "query_coverage", "threshold": 1.0,
                                                   "vocabulary_reduce_otherwise": True})
    result = rag.search("Which espresso pump pressure do the fees mention?")
    decision = result.trace.get("retry", "decision")
    assert decision["fired"] and decision["attempted"]
    assert decision["reformulated"] == "espresso pump pressure fees mention"
    assert decision["score_before"] < 1.0 and decision["score_after"] is not None
    ids = [n.node.node_id for n in result.first_stage]
    if decision["kept"] == "retry":
        expected = [n.node.node_id for n in off.search(decision["reformulated"]).first_stage]
        assert decision["score_after"] > decision["score_before"]
    else:
        expected = [n.node.node_id for n in off.search("Which espresso pump pressure do the fees mention?")
                    .first_stage]
    assert ids == expected


def test_the_default_config_records_a_decision_on_every_query(tiny_rag, bundled_embed_model):
    rag = rag_with(tiny_rag, bundled_embed_model, {})
    decision = rag.search(QUESTION).trace.get("retry", "decision")
    assert decision["signal"] == "corpus_coverage" and decision["threshold"] == 1.0
    assert decision["score_before"] is not None and "fired" in decision


def test_no_dense_signal_on_a_tiny_candidate_set_means_no_retry(tiny_rag, bundled_embed_model):
    # Five candidates: ranks 6+ (the contrast's background) do not exist.
    rag = rag_with(tiny_rag, bundled_embed_model, {"signal": "dense_contrast", "threshold": 1.0})
    off, _ = tiny_rag
    result = rag.search(QUESTION, top_k=5)
    decision = result.trace.get("retry", "decision")
    # The reason names the cause: too few candidates, not missing cosines.
    assert decision["fired"] is False and "only 5 candidates" in decision["reason"]
    assert "the contrast needs 6" in decision["reason"] and "top_k of at least 6" in decision["reason"]
    assert "BM25" not in decision["reason"]
    assert [n.node.node_id for n in result.first_stage] == [n.node.node_id for n in
                                                           off.search(QUESTION, top_k=5).first_stage]


def test_a_signal_needing_more_candidates_than_top_k_is_said_when_the_config_is_loaded(tiny_rag, bundled_embed_model):
    with pytest.warns(UserWarning, match=r"confirm_signal = 'dense_contrast' needs at least 6 candidates and "
                                         r"top_k = 3, so a retry set is kept only where signal = 'corpus_coverage' "
                                         r"alone is strictly higher: set top_k to at least 6"):
        rag_with(tiny_rag, bundled_embed_model, {}, core={"top_k": 3})
    with pytest.warns(UserWarning, match=r"signal = 'dense_contrast' needs at least 6 candidates and top_k = 5, "
                                         r"so no query will be judged weak or retried"):
        rag_with(tiny_rag, bundled_embed_model, {"signal": "dense_contrast"}, core={"top_k": 5})
    for section, top_k in [({}, 6), ({"confirm_signal": None}, 3)]:
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            rag_with(tiny_rag, bundled_embed_model, section, core={"top_k": top_k}).retriever()
        assert not [w for w in said if "ragplugins retry" in str(w.message)], (section, top_k)


def test_config_check_says_when_top_k_is_too_small_for_the_signal(tmp_path):
    # A new user's lighttpd pages: `config check` said ok at top_k = 3 and only each query's trace said why retry
    # never acted.
    config = tmp_path / "ragplugins.toml"
    config.write_text(f'[ragplugins]\nenable = ["retry"]\ntop_k = 3\npersist_dir = "{tmp_path / "idx"}"\n')
    def check():  # the installed command, as a user runs it: its warnings are printed by `main`
        return subprocess.run([sys.executable, "-m", "ragplugins", "-c", str(config), "config", "check"],
                              capture_output=True, text=True, timeout=300)

    checked = check()
    assert checked.returncode == 0 and checked.stdout.startswith("ok: "), checked.stderr
    assert ("warning: ragplugins retry: confirm_signal = 'dense_contrast' needs at least 6 candidates and top_k = 3"
            in checked.stderr), checked.stderr
    # Retry still acts, so `read` (and `query`, loaded the same way) does not say it again on every run.
    (tmp_path / "page.md").write_text("# Page\n\nText.\n")
    read = subprocess.run([sys.executable, "-m", "ragplugins", "-c", str(config), "read", str(tmp_path / "page.md")],
                          capture_output=True, text=True, timeout=300)
    assert read.returncode == 0 and "Text." in read.stdout and "needs at least" not in read.stderr, read.stderr
    config.write_text(f'[ragplugins]\nenable = ["retry"]\ntop_k = 6\npersist_dir = "{tmp_path / "idx"}"\n')
    checked = check()
    assert checked.returncode == 0 and "needs at least" not in checked.stderr, checked.stderr


def test_bm25_only_candidates_without_vectors_give_no_signal(tiny_rag, bundled_embed_model):
    rag = rag_with(tiny_rag, bundled_embed_model, {"signal": "dense_contrast", "threshold": 1.0})
    base = ScriptedRetriever({QUESTION: [node(f"bm25-{i}", f"fee text {i}") for i in range(8)]})
    result = rag.search(QUESTION, base=base)
    decision = result.trace.get("retry", "decision")
    assert decision["fired"] is False and "only 0 of 8 candidates carry a dense cosine" in decision["reason"]
    assert base.calls == [QUESTION]


def test_the_query_engine_carries_the_decision(tiny_rag, bundled_embed_model):
    llm = FakeLLM(responder=lambda p: '{"query": "espresso pump pressure in bar"}'
                  if "Rewrite it once" in p else "9 bar", prompts=[])
    rag = rag_with(tiny_rag, bundled_embed_model, {"signal": "query_coverage", "strategy": "llm", "threshold": 1.0},
                   llm=llm)
    response = rag.query_engine().query("Which espresso pump pressure do the fees mention?")
    decision = response.metadata["ragplugins"]["plugins"]["retry"]["decision"]
    assert decision["fired"] and decision["strategy"] == "llm"
    assert decision["reformulated"] == "espresso pump pressure in bar"
    assert str(response) == "9 bar"


def test_a_misspelt_signal_or_strategy_is_a_config_error_when_loaded(tiny_rag, bundled_embed_model):
    for section, message in [
        (
            {"signal": "dense_contarst"},
            r"signal = 'dense_contarst': no such signal; available: corpus_coverage, dense_contrast",
        ),
        ({"strategy": "rm3"}, r"strategy = 'rm3': no such strategy; available: keywords, llm, prf, vocabulary"),
        (
            {"confirm_signal": "contrast"},
            r"confirm_signal = 'contrast': no such signal; available: corpus_coverage, dense_contrast",
        ),
    ]:
        with pytest.raises(api.ConfigError, match=message):
            rag_with(tiny_rag, bundled_embed_model, section)


def test_a_fired_retry_compares_both_sets_on_both_signals(tiny_rag, bundled_embed_model):
    fires = {"signal": "query_coverage", "threshold": 1.0, "vocabulary_reduce_otherwise": True}
    # Each chunk its own place: the top 3 then cover less of the question than the index's best chunk, which
    # fires at threshold 1.0 (passages of two chunks cover at least as much).
    rag = rag_with(tiny_rag, bundled_embed_model, fires, core={"merge_adjacent": 1})
    decision = rag.search(QUESTION).trace.get("retry", "decision")
    assert decision["fired"] and decision["attempted"]
    assert set(decision["compared"]) == {"query_coverage", "dense_contrast"}
    assert all(v is not None for pair in decision["compared"].values() for v in pair)
    single = rag_with(tiny_rag, bundled_embed_model, {**fires, "confirm_signal": None}, core={"merge_adjacent": 1})
    assert set(single.search(QUESTION).trace.get("retry", "decision")["compared"]) == {"query_coverage"}


def test_bad_config_values_name_the_key(tiny_rag, bundled_embed_model):
    with pytest.raises(ConfigError, match=r"llm_prompt.*placeholder \{query\}"):
        rag_with(tiny_rag, bundled_embed_model, {"llm_prompt": "Rewrite the question."})
    with pytest.raises(ConfigError, match=r"threshold = 1.5"):
        rag_with(tiny_rag, bundled_embed_model, {"threshold": 1.5})


class LengthSignal(RetrySignal):
    """A third-party signal: longer top chunks = stronger evidence."""

    name: ClassVar[str] = "top_length"
    default_threshold: ClassVar[float] = 0.99

    @classmethod
    def class_name(cls) -> str:
        return "tests.LengthSignal"

    def measure(self, query, nodes, ctx, retrieved_for):
        return Measurement(min(1.0, len(nodes[0].node.get_content()) / 10_000), "")


class ThirdParty:
    """A plugin that only adds a signal to the retry plugin, through its published hook."""

    @api.hookimpl
    def ragplugins_plugin_info(self):
        return api.PluginInfo(name="lengthsignal", version="0.0.1")

    @api.hookimpl(optionalhook=True)
    def ragplugins_retry_signals(self, config):
        return [LengthSignal()]


def test_other_plugins_add_signals_through_the_hook(tiny_rag, bundled_embed_model):
    rag = rag_with(tiny_rag, bundled_embed_model, {"signal": "top_length"}, extra=[ThirdParty()])
    decision = rag.search(QUESTION).trace.get("retry", "decision")
    assert decision["signal"] == "top_length" and decision["threshold"] == 0.99 and decision["fired"] is True


class Shadowing(ThirdParty):
    @api.hookimpl(optionalhook=True)
    def ragplugins_retry_signals(self, config):
        return [type("Fake", (LengthSignal,), {"name": "query_coverage"})()]


def test_a_signal_name_taken_twice_is_an_error_not_a_silent_override(tiny_rag, bundled_embed_model):
    with pytest.raises(ConfigError, match=r"two retry signals are named 'query_coverage': one from plugin "
                                          r"'retry', one from plugin 'lengthsignal'"):
        rag_with(tiny_rag, bundled_embed_model, {}, extra=[Shadowing()])


def test_eval_instrumentation_reports_the_decision(tiny_rag, bundled_embed_model):
    rag = rag_with(tiny_rag, bundled_embed_model, {"signal": "query_coverage", "threshold": 1.0,
                                                   "vocabulary_reduce_otherwise": True})
    result = rag.search("Which espresso pump pressure do the fees mention?")
    values = plugin.ragplugins_eval_instrument(config=None, trace=result.trace, row=None,
                                               first_stage=result.first_stage, final=result.final,
                                               is_relevant=lambda t: False)
    decision = result.trace.get("retry", "decision")
    assert values["judged_weak"] is True and values["attempted"] is True
    assert values["kept_retry"] == (decision["kept"] == "retry")
    assert values["score_before"] == decision["score_before"] and values["retry_ms"] > 0
    quiet = plugin.ragplugins_eval_instrument(config=None, trace=api.Trace(), row=None,
                                              first_stage=[], final=[], is_relevant=lambda t: False)
    assert quiet["judged_weak"] is False and quiet["kept_retry"] is None


def _cli():
    from ragplugins.testing import command_group

    return command_group()


def test_calibrate_prints_the_threshold_table_of_the_users_corpus(tmp_path, tiny_rag):
    _, root = tiny_rag
    gold = tmp_path / "gold.jsonl"
    gold.write_text("\n".join(json.dumps(r) for r in [
        {"query": "What is the annual fee?", "expected": ["120,000 EUR"]},
        {"query": "How often is the boiler descaled?", "expected": ["every 200 cycles"]},
        {"query": "Which notice period applies to termination?", "expected": ["90 days written notice"]},
    ]))
    config = tmp_path / "ragplugins.toml"
    config.write_text(f'[ragplugins]\nenable = ["retry"]\npersist_dir = "{tmp_path / "idx"}"\n'
                      f'[ragplugins.retry]\nthreshold = 0.25\n')
    cli = _cli()
    empty = CliRunner().invoke(cli, ["-c", str(config), "retry", "calibrate", "--gold", str(gold)])
    assert empty.exit_code != 0 and "is empty; pass --corpus PATH" in empty.output
    run = CliRunner().invoke(cli, ["-c", str(config), "retry", "calibrate", "--gold", str(gold),
                                   "--corpus", str(root / "corpus"), "--miss-at", "1", "--json"])
    assert run.exit_code == 0, run.output
    data = json.loads(run.output[run.output.index("{"):])
    rows = data["rows"]
    assert [r["id"] for r in rows] == ["gold:1", "gold:2", "gold:3"]
    coverage = [r["values"]["query_coverage"] for r in rows]
    table = {line["threshold"]: line for line in data["tables"]["query_coverage"]}
    for t, line in table.items():
        assert line["fires"] == sum(v < t for v in coverage)
        assert line["misses_caught"] == sum(v < t and r["miss"] for v, r in zip(coverage, rows))
    text = CliRunner().invoke(cli, ["-c", str(config), "retry", "calibrate", "--gold", str(gold),
                                    "--signal", "query_coverage"])
    assert text.exit_code == 0, text.output
    assert "3 questions" in text.output and "signal query_coverage" in text.output
    assert "0.25" in text.output and "<- current" in text.output
    assert "dense_contrast" not in text.output
    bad = CliRunner().invoke(cli, ["-c", str(config), "retry", "calibrate", "--gold", str(gold),
                                   "--signal", "cosine"])
    assert bad.exit_code != 0 and "no signal named 'cosine'" in bad.output
