"""One schema for what a plugin decided (trace.record_decision), read by the query command and the
demo; ``changed`` comes from the lists, never from the plugin's claim."""

import pytest
from llama_index.core.schema import NodeWithScore, TextNode

from ragplugins import api, trace


def _nodes(*ids):
    return [NodeWithScore(node=TextNode(id_=i, text=i), score=1.0) for i in ids]


def test_changed_is_derived_from_the_lists():
    with trace.scope("q") as tr:
        api.record_decision("p", "grow", before=_nodes("a"), after=_nodes("a", "b"), reason="added b",
                            numbers={"added": 1})
        api.record_decision("p", "keep", before=_nodes("a"), after=_nodes("a"), reason="nothing to add")
    assert [(d.action, d.changed) for d in tr.decisions] == [("grow", True), ("keep", False)]
    assert tr.to_dict()["decisions"][0] == {"plugin": "p", "action": "grow", "changed": True, "reason": "added b",
                                           "numbers": {"added": 1}, "query": ""}
    # The free-form details keep the lists, for --trace and the plugin's eval instrument.
    assert tr.get("p", "grow")["after"] == ["a", "b"]


def test_a_claim_that_disagrees_with_the_lists_is_refused():
    with trace.scope("q"):
        with pytest.raises(ValueError, match="says changed=False, but the list it returned is different"):
            api.record_decision("p", "grow", changed=False, before=_nodes("a"), after=_nodes("b"), reason="x")
        with pytest.raises(ValueError, match="needs a reason"):
            api.record_decision("p", "grow", before=_nodes("a"), after=_nodes("a"), reason=" ")
        with pytest.raises(TypeError, match="numbers must be"):
            api.record_decision("p", "grow", changed=True, reason="x", numbers={"ids": ["a"]})
        with pytest.raises(TypeError, match="give before= and after="):
            api.record_decision("p", "grow", reason="x")


def test_a_later_decision_on_the_same_query_replaces_the_earlier_one():
    with trace.scope("q") as tr:
        api.record_decision("v", "verdict", changed=False, reason="not verified yet")
        api.record_decision("v", "verdict", changed=True, reason="ungrounded")
        api.record_decision("o", "select", before=[], after=[], reason="no margin", query="other question")
        api.record_decision("o", "select", before=[], after=[], reason="no margin", query="q")
    assert [(d.plugin, d.reason, d.query) for d in tr.decisions] == [
        ("v", "ungrounded", ""), ("o", "no margin", "other question"), ("o", "no margin", "q")]
    lines = trace.decision_lines(tr.to_dict())
    assert lines[0] == ("v verdict: acted (ungrounded)", True)
    assert lines[1] == ("o select (on 'other question'): no change (no margin)", False)


def test_the_query_command_prints_the_decisions(tmp_path, tiny_corpus):
    from click.testing import CliRunner

    from ragplugins.cli import cli

    cfg = tmp_path / "ragplugins.toml"
    cfg.write_text(f'[ragplugins]\npersist_dir = "{tmp_path / "idx"}"\nenable = ["crossref"]\n')
    assert CliRunner().invoke(cli, ["-c", str(cfg), "index", str(tiny_corpus)]).exit_code == 0
    result = CliRunner().invoke(cli, ["-c", str(cfg), "query", "What is the annual fee?", "--json"])
    data = result.output[result.output.index("{"):]
    import json

    decisions = json.loads(data)["trace"]["decisions"]
    assert [d["plugin"] for d in decisions] == ["crossref"]
    assert set(decisions[0]) == {"plugin", "action", "changed", "reason", "numbers", "query"}
    text = CliRunner().invoke(cli, ["-c", str(cfg), "query", "What is the annual fee?"]).output
    assert "what each plugin decided:\n  crossref hop: " in text


def test_the_trace_names_chunks_by_document_and_position_for_people_and_keeps_their_ids(tmp_path, tiny_corpus,
                                                                                       bundled_embed_model):
    import json
    import re

    from llama_index.core.postprocessor.types import BaseNodePostprocessor

    from ragplugins import Contribution, PluginInfo, hookimpl
    from ragplugins.api import CHUNK_INDEX_KEY
    from ragplugins.testing import make_rag

    class DropTop(BaseNodePostprocessor):
        @classmethod
        def class_name(cls) -> str:
            return "tests.DropTop"

        def _postprocess_nodes(self, nodes, query_bundle=None):
            out = nodes[1:]
            api.record_decision("droptop", "drop", before=nodes, after=out, reason="dropped the top chunk",
                                removed=[nodes[0].node.node_id])
            return out

    class Plugin:
        @hookimpl
        def ragplugins_plugin_info(self):
            return PluginInfo(name="droptop", version="0")

        @hookimpl
        def ragplugins_node_postprocessors(self, config, ctx):
            return [Contribution(DropTop(), stage="rerank")]

    rag = make_rag([Plugin()], embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
    rag.index_paths([tiny_corpus])
    result = rag.search("What is the annual fee?")

    def label(n):
        return f"{n.node.ref_doc_id}#{n.node.metadata[CHUNK_INDEX_KEY]}"

    data = result.trace.to_dict()
    # The JSON form keeps the ids (machines join on them) and names each one.
    assert data["first_stage"] == [n.node.node_id for n in result.first_stage]
    assert {data["chunks"][n.node.node_id] for n in result.first_stage} == {label(n) for n in result.first_stage}
    shown = trace.labelled(data)
    assert shown["first_stage"] == [label(n) for n in result.first_stage]
    assert shown["final"] == [label(n) for n in result.final]
    assert shown["plugins"]["droptop"]["drop"]["removed"] == [label(result.first_stage[0])]
    assert all(re.fullmatch(r"[\w.-]+\.md#\d+", name) for name in shown["first_stage"])
    uuid = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
    assert "chunks" not in shown and not uuid.search(json.dumps(shown))
