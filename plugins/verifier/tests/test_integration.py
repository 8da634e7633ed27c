"""The verifier inside ragplugins and LlamaIndex: engine wrapper, evaluator, backend hook, CLI, config."""

import json

import pytest
from click.testing import CliRunner
from llama_index.core.evaluation import EvaluationResult
from llama_index.core.schema import NodeWithScore, TextNode

import ragplugins_verifier.plugin as plugin
from ragplugins import api
from ragplugins.api import ConfigError, PluginError, query_scope
from ragplugins.testing import FakeLLM, PluginConformance, make_rag
from ragplugins_verifier import FidelityVerifier, VerifierEvaluator, VerifyingQueryEngine
from ragplugins_verifier.base import Verifier
from ragplugins_verifier.verdict import SentenceVerdict


class TestConformance(PluginConformance):
    plugin = plugin
    config = {"mode": "abstain"}


@pytest.fixture(scope="module")
def corpus_index(tmp_path_factory, bundled_embed_model):
    """One indexed tiny corpus shared by the engine tests (the verifier adds nothing at index time)."""
    from ragplugins.testing import index_tiny_corpus

    root = tmp_path_factory.mktemp("verifier-int")
    index_tiny_corpus(root, [plugin], embed_model=bundled_embed_model)
    return root / "idx"


def engine(corpus_index, bundled_embed_model, answer, **config):
    llm = FakeLLM(responder=lambda prompt: answer, prompts=[]) if answer is not None else None
    rag = make_rag([plugin], {"verifier": config}, embed_model=bundled_embed_model, llm=llm,
                   persist_dir=corpus_index)
    return rag.query_engine()


def test_annotate_puts_the_verdict_next_to_the_trace(corpus_index, bundled_embed_model):
    qe = engine(corpus_index, bundled_embed_model, "The annual fee is 120,000 EUR, payable quarterly.")
    response = qe.query("What is the annual fee?")
    meta = response.metadata["ragplugins"]
    v = meta["verification"]
    assert v["status"] == "grounded" and v["grounded"] and v["backend"] == "fidelity"
    assert v["sentences"][0]["node_id"] in {n.node.node_id for n in response.source_nodes}
    # The core's trace survives beside it, and the decision is in the trace too.
    assert meta["query"] == "What is the annual fee?" and meta["first_stage"]
    assert meta["plugins"]["verifier"]["verdict"]["grounded"] is True
    assert response.response == "The annual fee is 120,000 EUR, payable quarterly."


def test_abstain_replaces_an_ungrounded_answer_with_a_refusal(corpus_index, bundled_embed_model):
    wrong = "The annual fee is 150,000 EUR, payable quarterly."
    response = engine(corpus_index, bundled_embed_model, wrong, mode="abstain").query("What is the annual fee?")
    v = response.metadata["ragplugins"]["verification"]
    assert not v["grounded"] and v["original_answer"] == wrong
    assert response.response.startswith("I could not verify this answer") and f'"{wrong}"' in response.response


def test_flag_keeps_the_answer_and_appends_a_warning(corpus_index, bundled_embed_model):
    wrong = "Late payments accrue interest at 6 percent per year."
    response = engine(corpus_index, bundled_embed_model, wrong, mode="flag").query(
        "What interest do late payments accrue?"
    )
    assert response.response.startswith(wrong) and "[Unverified:" in response.response


def test_grounded_answers_are_left_alone_in_abstain_mode(corpus_index, bundled_embed_model):
    answer = "Either party may terminate with 90 days written notice."
    response = engine(corpus_index, bundled_embed_model, answer, mode="abstain").query(
        "How can the agreement be terminated?"
    )
    assert response.response == answer


def test_without_an_llm_there_is_no_answer_and_verification_is_skipped(corpus_index, bundled_embed_model):
    response = engine(corpus_index, bundled_embed_model, None).query("What is the annual fee?")
    assert response.metadata["ragplugins"]["verification"]["status"] == "skipped"


async def test_async_query_is_verified(corpus_index, bundled_embed_model):
    qe = engine(corpus_index, bundled_embed_model, "The pump pressure should read 12 bar.")
    response = await qe.aquery("What should the pump pressure read?")
    assert response.metadata["ragplugins"]["verification"]["grounded"] is False


def test_wrapper_works_on_any_llamaindex_engine(bundled_embed_model):
    from llama_index.core.base.response.schema import Response
    from llama_index.core.query_engine import CustomQueryEngine

    class Fixed(CustomQueryEngine):
        def custom_query(self, query_str):
            node = NodeWithScore(node=TextNode(id_="n1", text="The pump pressure should read 9 bar."), score=1.0)
            return Response("The pump pressure should read 9 bar.", source_nodes=[node])

    wrapped = VerifyingQueryEngine(Fixed(), FidelityVerifier(embed_model=bundled_embed_model))
    with query_scope("q", filters=None) as tr:
        response = wrapped.query("What should the pump pressure read?")
    assert response.metadata["ragplugins"]["verification"]["grounded"] is True
    assert tr.get("verifier", "verdict")["grounded"] is True


def test_evaluator_is_a_llamaindex_evaluator(bundled_embed_model):
    evaluator = VerifierEvaluator(FidelityVerifier(embed_model=bundled_embed_model))
    ok = evaluator.evaluate(query="fee?", response="The yearly charge is 120,000 EUR.",
                            contexts=["The annual fee is 120,000 EUR, payable quarterly."])
    bad = evaluator.evaluate(query="fee?", response="The annual fee is 125,000 EUR.",
                             contexts=["The annual fee is 120,000 EUR, payable quarterly."])
    assert isinstance(ok, EvaluationResult) and ok.passing and ok.score > 0 and not ok.invalid_result
    assert not bad.passing and bad.score == 0.0 and "125,000 EUR" in bad.feedback
    empty = evaluator.evaluate(query="fee?", response="The annual fee is 120,000 EUR.", contexts=[])
    assert empty.invalid_result and not empty.passing


def test_evaluate_response_keeps_node_ids(bundled_embed_model):
    from llama_index.core.base.response.schema import Response

    evaluator = VerifierEvaluator(FidelityVerifier(embed_model=bundled_embed_model))
    node = NodeWithScore(node=TextNode(id_="fee-node", text="The annual fee is 120,000 EUR."), score=1.0)
    result = evaluator.evaluate_response(query="fee?", response=Response("The annual fee is 120,000 EUR.",
                                                                          source_nodes=[node]))
    assert result.passing and result.contexts == ["The annual fee is 120,000 EUR."]


class AlwaysGrounded(Verifier):
    threshold: float = 0.5

    @classmethod
    def class_name(cls) -> str:
        return "tests.AlwaysGrounded"

    def _verify(self, question, answer, evidence):
        return self.conclude([SentenceVerdict(text=answer, start=0, end=len(answer), score=1.0, supported=True)])


class ThirdParty:
    """A plugin that only adds a backend; optionalhook keeps it loadable before the verifier."""

    @api.hookimpl
    def ragplugins_plugin_info(self):
        return api.PluginInfo(name="always_backend", version="0.0.1")

    @api.hookimpl(optionalhook=True)
    def ragplugins_verifier_backends(self):
        return {"always": lambda config, ctx: AlwaysGrounded(threshold=config.options.get("threshold", 0.5))}


def test_third_party_backends_come_through_the_hook(corpus_index, bundled_embed_model):
    rag = make_rag([ThirdParty(), plugin], {"enable": ["verifier"], "verifier": {"backend": "always"}},
                   embed_model=bundled_embed_model, llm=FakeLLM(replies=["Anything at all."], prompts=[]),
                   persist_dir=corpus_index)
    response = rag.query_engine().query("What is the annual fee?")
    assert response.metadata["ragplugins"]["verification"]["backend"] == "custom"
    assert response.metadata["ragplugins"]["verification"]["grounded"] is True


def test_unknown_backend_lists_the_available_ones(corpus_index, bundled_embed_model):
    with pytest.raises(
        ConfigError, match="'nope' is not a known backend; available: .*fidelity, fidelity\\+nli, llm, nli"
    ):
        make_rag([plugin], {"verifier": {"backend": "nope"}}, embed_model=bundled_embed_model,
                 persist_dir=corpus_index)


def test_llm_backend_without_an_llm_is_a_clear_error(corpus_index, bundled_embed_model):
    rag = make_rag([plugin], {"verifier": {"backend": "llm"}}, embed_model=bundled_embed_model,
                   persist_dir=corpus_index)
    with pytest.raises(PluginError, match="needs the host's LLM"):
        rag.query_engine()


@pytest.mark.parametrize("section, message", [
    ({"backend": "nli"}, "needs \\[ragplugins.verifier.nli\\] model"),
    ({"mdoe": "flag"}, "unknown key.*did you mean 'mode'"),
    ({"mode": "block"}, "mode = 'block'"),
    ({"nli": {"treshold": 0.7}}, "nli.treshold"),
])
def test_bad_config_names_the_key(section, message):
    with pytest.raises(ConfigError, match=message):
        make_rag([plugin], {"verifier": section})


def test_eval_instrument_reads_the_verdict_from_the_trace():
    tr = api.Trace(query="q")
    assert plugin.ragplugins_eval_instrument(tr)["verified"] is False
    tr.record("verifier", "verdict", status="ungrounded", grounded=False, score=0.0, unsupported=["a", "b"])
    assert plugin.ragplugins_eval_instrument(tr) == {"verified": True, "grounded": False, "score": 0.0,
                                                     "unsupported": 2}


@pytest.fixture
def cli():
    from ragplugins.testing import command_group

    return command_group()


def test_cli_scores_a_labelled_file(cli, tmp_path):
    rows = [
        {"id": "a", "question": "Fee?", "answer": "The annual fee is 120,000 EUR.", "label": True,
         "evidence": ["The annual fee is 120,000 EUR, payable quarterly."]},
        {"id": "b", "question": "Fee?", "answer": "The annual fee is 150,000 EUR.", "label": "ungrounded",
         "evidence": [{"id": "n", "text": "The annual fee is 120,000 EUR, payable quarterly."}]},
        {"id": "c", "question": "Pressure?", "answer": "The pump reads 9 bar.", "label": False,
         "evidence": ["The pump pressure should read 9 bar."]},
    ]
    path = tmp_path / "rows.jsonl"
    path.write_text("// a comment line\n" + "\n".join(json.dumps(r) for r in rows) + "\n")
    result = CliRunner().invoke(cli, ["-c", str(_config(tmp_path)), "verify", str(path), "--show", "all"])
    assert result.exit_code == 0, result.output
    assert "accuracy 0.667  TPR 1.000  TNR 0.500" in result.output
    assert "label ungrounded                   1                     1" in result.output
    data = json.loads(CliRunner().invoke(cli, ["-c", str(_config(tmp_path)), "verify", str(path), "--json"]).stdout)
    assert data["metrics"]["confusion"] == {"tp": 1, "fn": 0, "tn": 1, "fp": 1}
    assert [r["grounded"] for r in data["rows"]] == [True, False, True]


def test_cli_resolves_evidence_files_and_reports_bad_rows(cli, tmp_path):
    (tmp_path / "doc.md").write_text("# Manual\n\n## Pump\n\nThe pump pressure should read 9 bar.\n\n## Other\n\nNo.\n")
    good = tmp_path / "rows.jsonl"
    good.write_text(json.dumps({"answer": "The pump should read 9 bar.", "label": True,
                                "evidence": [{"path": "doc.md", "section": "Pump"}]}) + "\n")
    result = CliRunner().invoke(cli, ["-c", str(_config(tmp_path)), "verify", str(good)])
    assert "accuracy 1.000" in result.output, result.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"answer": "x"}\n')
    result = CliRunner().invoke(cli, ["-c", str(_config(tmp_path)), "verify", str(bad)])
    assert result.exit_code == 2 and f"{bad}:1: missing key 'evidence'" in result.output


def _config(tmp_path):
    path = tmp_path / "ragplugins.toml"
    path.write_text(f'[ragplugins]\nenable = ["verifier"]\npersist_dir = "{tmp_path / "idx"}"\n')
    return path


# -- issue 18: records that read as what they mean, streams, evaluator score, CLI threads and errors


def test_the_record_says_ungrounded_not_verified(corpus_index, bundled_embed_model):
    qe = engine(corpus_index, bundled_embed_model, "The annual fee is 150,000 EUR, payable quarterly.")
    v = qe.query("What is the annual fee?").metadata["ragplugins"]["verification"]
    assert v["status"] == "ungrounded" and v["grounded"] is False
    qe = engine(corpus_index, bundled_embed_model, "The annual fee is 120,000 EUR, payable quarterly.")
    assert qe.query("What is the annual fee?").metadata["ragplugins"]["verification"]["status"] == "grounded"


def test_an_unverifiable_answer_is_recorded_as_such():
    from llama_index.core.base.response.schema import Response
    from llama_index.core.query_engine import CustomQueryEngine

    class NoSources(CustomQueryEngine):
        def custom_query(self, query_str):
            return Response("The pump pressure should read 9 bar.", source_nodes=[])

    with query_scope("q", filters=None) as tr:
        response = VerifyingQueryEngine(NoSources(), AlwaysGrounded()).query("q")
    v = response.metadata["ragplugins"]["verification"]
    assert v["status"] == "unverifiable" and v["grounded"] is False and "no evidence" in v["error"]
    assert plugin.ragplugins_eval_instrument(tr)["grounded"] is False


def test_a_search_without_an_llm_says_nothing_was_verified(corpus_index, bundled_embed_model):
    rag = make_rag([plugin], {"verifier": {}}, embed_model=bundled_embed_model, persist_dir=corpus_index)
    result = rag.search("What is the annual fee?")
    verdict = result.trace.plugins["verifier"]["verdict"]
    assert verdict["status"] == "skipped" and "no LLM wrote an answer" in verdict["reason"]
    # With an answer the verdict replaces the note.
    qe = engine(corpus_index, bundled_embed_model, "The annual fee is 120,000 EUR, payable quarterly.")
    meta = qe.query("What is the annual fee?").metadata["ragplugins"]
    assert meta["plugins"]["verifier"]["verdict"]["status"] == "grounded"


def test_a_stream_stays_a_stream_and_replays_the_checked_text(bundled_embed_model):
    from llama_index.core.base.response.schema import StreamingResponse
    from llama_index.core.query_engine import CustomQueryEngine

    node = NodeWithScore(node=TextNode(id_="n1", text="The pump pressure should read 9 bar."), score=1.0)

    class Streaming(CustomQueryEngine):
        answer: str

        def custom_query(self, query_str):
            return StreamingResponse(response_gen=iter(self.answer.split(" ")[:1] + [" " + w for w in
                                                                                    self.answer.split(" ")[1:]]),
                                     source_nodes=[node])

    verifier = FidelityVerifier(embed_model=bundled_embed_model)
    good = VerifyingQueryEngine(Streaming(answer="The pump pressure should read 9 bar."), verifier)
    response = good.query("What should the pump read?")
    assert isinstance(response, StreamingResponse)
    assert "".join(response.response_gen) == "The pump pressure should read 9 bar."
    assert response.metadata["ragplugins"]["verification"]["status"] == "grounded"
    assert "read to the end" in response.metadata["ragplugins"]["verification"]["stream"]
    bad = VerifyingQueryEngine(Streaming(answer="The pump pressure should read 12 bar."), verifier, mode="abstain")
    response = bad.query("What should the pump read?")
    assert "".join(response.response_gen).startswith("I could not verify this answer")


def test_evaluator_score_is_one_or_zero_and_support_is_kept(bundled_embed_model):
    evaluator = VerifierEvaluator(FidelityVerifier(embed_model=bundled_embed_model))
    ok = evaluator.evaluate(query="fee?", response="The yearly charge is 120,000 EUR.",
                            contexts=["The annual fee is 120,000 EUR, payable quarterly."])
    bad = evaluator.evaluate(query="fee?", response="The annual fee is 125,000 EUR.",
                             contexts=["The annual fee is 120,000 EUR, payable quarterly."])
    assert ok.score == 1.0 and 0.35 <= ok.support < 1.0
    assert bad.score == 0.0 and not bad.passing


def test_cli_uses_one_torch_thread_unless_told(cli, tmp_path):
    import torch

    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({"answer": "The pump reads 9 bar.", "evidence": ["The pump should read 9 bar."]}) + "\n")
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        assert CliRunner().invoke(cli, ["-c", str(_config(tmp_path)), "verify", str(path)]).exit_code == 0
        assert torch.get_num_threads() == 1
        assert CliRunner().invoke(cli, ["-c", str(_config(tmp_path)), "verify", str(path), "--threads", "2"]
                                  ).exit_code == 0
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("args, message", [
    (["--backend", "nli"], "backend = 'nli' needs [ragplugins.verifier.nli] model"),
    (["--backend", "fidelity+nli"], "backend = 'fidelity+nli' needs [ragplugins.verifier.nli] model"),
    (["--backend", "nli", "--nli-model", "./no/such/checker"], "nli model './no/such/checker' is not a directory"),
])
def test_cli_nli_problems_are_one_line(args, message, tmp_path):
    from ragplugins.testing import command_group

    group = command_group()
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({"answer": "The pump reads 9 bar.", "evidence": ["The pump should read 9 bar."]}) + "\n")
    result = CliRunner().invoke(group, ["-c", str(_config(tmp_path)), "verify", str(path), *args])
    assert result.exit_code == 2, result.output
    # (the core's embedder may print a progress bar while it loads: not the verifier's output)
    lines = [line for line in result.output.splitlines() if line.strip() and "Loading weights" not in line]
    assert len(lines) == 1 and message in lines[0], result.output


@pytest.mark.parametrize("policy", ["warn", "raise"])
def test_the_verifier_llm_failing_obeys_on_plugin_error(corpus_index, bundled_embed_model, policy):
    """The answer comes from the LLM; only the verification call fails (a rate limit, say)."""
    answer = "The annual fee is 120,000 EUR, payable quarterly."

    def respond(prompt):
        if "<evidence" in prompt:
            raise RuntimeError("429 too many requests")
        return answer

    rag = make_rag([plugin], {"on_plugin_error": policy, "verifier": {"backend": "llm"}},
                   embed_model=bundled_embed_model, llm=FakeLLM(responder=respond, prompts=[]),
                   persist_dir=corpus_index)
    if policy == "raise":
        with pytest.raises(PluginError, match="plugin 'verifier' failed.*429 too many requests"):
            rag.query_engine().query("What is the annual fee?")
        return
    with pytest.warns(UserWarning, match="plugin 'verifier' failed.*429.*continuing without it"):
        response = rag.query_engine().query("What is the annual fee?")
    assert response.response == answer and response.source_nodes
    assert "verification" not in response.metadata["ragplugins"]
