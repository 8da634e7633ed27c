import ragplugins_length_filter.plugin as plugin
from llama_index.core.schema import NodeWithScore, TextNode
from ragplugins_length_filter import LengthFilterPostprocessor

from ragplugins.api import query_scope
from ragplugins.testing import PluginConformance, make_rag


class TestConformance(PluginConformance):
    plugin = plugin
    config = {"min_chars": 10}


def _nodes(*texts):
    return [NodeWithScore(node=TextNode(text=t, id_=f"n{i}"), score=1.0) for i, t in enumerate(texts)]


def test_drops_short_chunks_and_records_them():
    pp = LengthFilterPostprocessor(min_chars=5)
    with query_scope("q", filters=None) as tr:
        out = pp.postprocess_nodes(_nodes("tiny", "long enough text", "ok"))
    assert [n.node.node_id for n in out] == ["n1"]
    assert tr.get("length_filter", "filter")["dropped"] == ["n0", "n2"]


def test_keeps_at_least_the_floor():
    out = LengthFilterPostprocessor(min_chars=100, keep_at_least=2).postprocess_nodes(_nodes("a", "b", "c"))
    assert [n.node.node_id for n in out] == ["n0", "n1"]


def test_end_to_end_through_ragplugins(tiny_corpus, tmp_path, bundled_embed_model):
    rag = make_rag([plugin], {"length_filter": {"min_chars": 10_000, "keep_at_least": 1}},
                   embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
    rag.index_paths([tiny_corpus])
    result = rag.search("annual fee")
    assert len(result.first_stage) > 1 and len(result.final) == 1
    assert result.trace.get("length_filter", "filter")["kept"] == 1
