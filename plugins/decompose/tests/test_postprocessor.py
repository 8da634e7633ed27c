"""The rerank stage: sub-query scoring, aggregates, coverage, the trace, and never a failed query."""

import asyncio
from types import SimpleNamespace

import pytest
from llama_index.core.schema import NodeWithScore, TextNode

from ragplugins import api
from ragplugins.api import query_scope, tags
from ragplugins.testing import FakeLLM
from ragplugins_decompose import Decomposer, DecomposeRerank, Decomposition, EmbeddingScorer, RuleDecomposer, plugin

TWO_ASKS = "What is the annual fee, and how often must the boiler be descaled?"

# A first stage that found plenty about fees and put the one chunk about descaling last.
FEE_CHUNKS = [
    "The annual fee is 120,000 EUR, payable quarterly as set out in Exhibit A.",
    "Fees are invoiced each quarter; the annual fee covers support and hosting.",
    "Late payment of the annual fee accrues interest at 4 percent per year.",
    "The fee schedule lists the annual fee and the one-off onboarding fee.",
    "Fee increases are capped at 3 percent per year after the first term.",
    "The annual fee excludes travel costs, which are billed at cost.",
    "Refunds of the annual fee are not available after the first month.",
]
DESCALE = "Descale the boiler every 200 cycles with citric acid."


@pytest.fixture(scope="module")
def ctx(bundled_embed_model):
    return SimpleNamespace(embed_model=bundled_embed_model, embed_query=bundled_embed_model.get_query_embedding,
                           llm=None)


def first_stage(bundled_embed_model):
    texts = FEE_CHUNKS + [DESCALE]
    return [NodeWithScore(node=TextNode(text=t, id_=f"c{i}", embedding=bundled_embed_model.get_text_embedding(t)),
                          score=1.0 / (60 + i + 1)) for i, t in enumerate(texts)]


def stage(ctx, **fields):
    defaults = {"decomposer": RuleDecomposer(), "scorer": EmbeddingScorer(), "aggregate": "coverage"}
    return DecomposeRerank(ctx=ctx, **{**defaults, **fields})


def ids(nodes):
    return [n.node.node_id for n in nodes]


def test_coverage_brings_every_part_of_the_question_to_the_top(ctx, bundled_embed_model):
    nodes = first_stage(bundled_embed_model)
    with query_scope(TWO_ASKS, filters=None) as tr:
        out = stage(ctx).postprocess_nodes(nodes, query_str=TWO_ASKS)
    split, rerank = tr.get("decompose", "split"), tr.get("decompose", "rerank")
    assert split["sub_queries"] == ["What is the annual fee", "how often must the boiler be descaled"]
    assert rerank["queries"] == [TWO_ASKS, *split["sub_queries"]]
    assert rerank["best"]["how often must the boiler be descaled"] == "c7"
    # Each sub-query's best evidence is within the first 1 + 2 places; the fee chunk keeps the top.
    assert "c7" in ids(out)[:3] and ids(out)[0] == "c0"
    assert sorted(ids(out)) == sorted(ids(nodes))                       # a reorder, nothing lost
    assert tags(out[ids(out).index("c7")])["decompose"] == {
        "first_rank": 8, "rank": ids(out).index("c7") + 1, "best_for": ["how often must the boiler be descaled"]}
    # The trace holds every candidate's score against every query and the aggregate used.
    assert rerank["aggregate"] == "coverage" and len(rerank["candidates"]) == 8
    assert all(len(c["scores"]) == 3 for c in rerank["candidates"])
    matrix = EmbeddingScorer().score(rerank["queries"], nodes, ctx)
    for c in rerank["candidates"]:
        i = int(c["id"][1:])
        assert c["scores"] == pytest.approx([row[i] for row in matrix], abs=1e-4)
        assert c["aggregate"] == pytest.approx(sum(row[i] for row in matrix) / 3, abs=1e-4)
    assert [n.score for n in out] == pytest.approx([c["aggregate"] for c in rerank["candidates"]], abs=1e-4)


def test_mean_and_max_leave_the_lone_evidence_lower_than_coverage(ctx, bundled_embed_model):
    nodes = first_stage(bundled_embed_model)
    positions = {how: ids(stage(ctx, aggregate=how).postprocess_nodes(nodes, query_str=TWO_ASKS)).index("c7")
                 for how in ("mean", "max", "coverage")}
    assert positions["coverage"] <= 2
    assert positions["coverage"] <= min(positions["mean"], positions["max"])


def test_an_unsplit_question_keeps_the_first_stage_order_with_the_embedding_scorer(ctx, bundled_embed_model):
    nodes = first_stage(bundled_embed_model)[::-1]
    with query_scope("What is the annual fee?", filters=None) as tr:
        out = stage(ctx).postprocess_nodes(nodes, query_str="What is the annual fee?")
    assert out == nodes
    rerank = tr.get("decompose", "rerank")
    assert rerank["reranked"] is False and "does not split" in rerank["reason"]
    assert tr.get("decompose", "split")["sub_queries"] == []
    # rerank_unsplit: the question alone is scored and fused with the first-stage order.
    with query_scope("q", filters=None) as tr:
        forced = stage(ctx, rerank_unsplit=True).postprocess_nodes(nodes, query_str="What is the annual fee?")
    assert tr.get("decompose", "rerank")["reranked"]
    cosines = EmbeddingScorer().score(["What is the annual fee?"], nodes, ctx)[0]
    cosine_rank = {i: r for r, i in enumerate(sorted(range(8), key=lambda i: -cosines[i]), start=1)}
    fused = sorted(range(8), key=lambda i: (-(1 / (61 + i) + 1 / (60 + cosine_rank[i])), i))
    assert ids(forced) == [nodes[i].node.node_id for i in fused] != ids(nodes)


def test_scores_fusion_is_a_plain_reranker_and_rrf_stays_near_the_first_stage(ctx, bundled_embed_model):
    nodes = first_stage(bundled_embed_model)[::-1]  # the worst match first
    scored = stage(ctx, rerank_unsplit=True, fusion="scores").postprocess_nodes(nodes, query_str="annual fee")
    assert [n.score for n in scored] == sorted((n.score for n in scored), reverse=True)
    fused = stage(ctx, rerank_unsplit=True).postprocess_nodes(nodes, query_str="annual fee")
    assert ids(scored).index("c7") == 7 and ids(fused).index("c7") < 7


def test_top_n_cuts_the_list(ctx, bundled_embed_model):
    out = stage(ctx, top_n=3).postprocess_nodes(first_stage(bundled_embed_model), query_str=TWO_ASKS)
    assert len(out) == 3


def test_needs_the_question(ctx, bundled_embed_model):
    with pytest.raises(ValueError, match="needs the question"):
        stage(ctx).postprocess_nodes(first_stage(bundled_embed_model))


class Exploding(Decomposer):
    name = "exploding"

    @classmethod
    def class_name(cls):
        return "tests.Exploding"

    def decompose(self, query, ctx):
        raise RuntimeError("decomposer bug")


class Fixed(Decomposer):
    name = "fixed"

    @classmethod
    def class_name(cls):
        return "tests.Fixed"

    def decompose(self, query, ctx):
        return Decomposition(["annual fee", "annual fee", "descale the boiler", query])


class ExtraDecomposers:
    """A third-party plugin that registers decomposers through the decompose plugin's own hook."""

    @api.hookimpl
    def ragplugins_plugin_info(self):
        return api.PluginInfo(name="extra_decomposers", version="0.0.1")

    @api.hookimpl(optionalhook=True)
    def ragplugins_decompose_decomposers(self, config):
        return [Exploding(), Fixed()]


def test_third_party_decomposers_are_found_by_name_and_cleaned(rag_with):
    rag = rag_with({"decomposer": "fixed"}, plugins=(plugin, ExtraDecomposers()))
    result = rag.search("What is the annual fee?")
    # Duplicates and the question itself are dropped before scoring.
    assert result.trace.get("decompose", "split")["sub_queries"] == ["annual fee", "descale the boiler"]
    assert result.trace.get("decompose", "rerank")["reranked"]


def test_a_failing_decomposer_never_fails_the_query(rag_with):
    rag = rag_with({"decomposer": "exploding"}, plugins=(plugin, ExtraDecomposers()))
    result = rag.search("What is the annual fee?")
    assert result.final == result.first_stage
    assert "RuntimeError: decomposer bug" in result.trace.get("decompose", "split")["reason"]


def test_llm_decomposer_end_to_end_and_junk_means_no_split(rag_with):
    llm = FakeLLM(responder=lambda p: '{"sub_queries": ["What is the annual fee?", "How long does it run?"]}',
                  prompts=[])
    result = rag_with({"decomposer": "llm"}, llm=llm).search("What is the annual fee and how long does it run?")
    assert result.trace.get("decompose", "split")["sub_queries"] == ["What is the annual fee?",
                                                                    "How long does it run?"]
    junk = FakeLLM(responder=lambda p: "As an AI model I think the fee is high.", prompts=[])
    result = rag_with({"decomposer": "llm"}, llm=junk).search("What is the annual fee and how long does it run?")
    split = result.trace.get("decompose", "split")
    assert split["sub_queries"] == [] and split["details"]["reply"].startswith("As an AI")
    assert result.final == result.first_stage
    same = FakeLLM(responder=lambda p: '["What is the annual fee?"]', prompts=[])
    result = rag_with({"decomposer": "llm"}, llm=same).search("What is the annual fee?")
    assert result.trace.get("decompose", "split")["sub_queries"] == []


def test_the_llm_prompt_is_configurable_and_exposed_as_a_llamaindex_prompt(rag_with):
    llm = FakeLLM(replies=["[]"], prompts=[])
    rag = rag_with({"decomposer": "llm", "llm_prompt": "Split this, JSON list please: {query}"}, llm=llm)
    pp = rag.postprocessors()[0].inner
    assert set(pp.get_prompts()) == {"decompose_prompt"}
    rag.search("What is the annual fee?")
    assert llm.prompts[-1] == "Split this, JSON list please: What is the annual fee?"
    from llama_index.core.prompts import PromptTemplate

    pp.update_prompts({"decompose_prompt": PromptTemplate("Other: {query}")})
    pp.postprocess_nodes([], query_str="q")
    assert llm.prompts[-1] == "Other: q"


def test_async_queries_split_rerank_and_trace_like_sync(rag_with):
    rag = rag_with({})
    sync = rag.search(TWO_ASKS)
    response = asyncio.run(rag.query_engine().aquery(TWO_ASKS))
    plugins = response.metadata["ragplugins"]["plugins"]["decompose"]
    assert plugins["split"]["sub_queries"] == sync.trace.get("decompose", "split")["sub_queries"]
    assert plugins["rerank"]["reranked"]
    assert [n.node.node_id for n in response.source_nodes] == [n.node.node_id for n in sync.final]


def test_eval_instrument_reports_the_split_and_its_evidence(rag_with):
    result = rag_with({}).search(TWO_ASKS)
    row = SimpleNamespace(id="q", query=TWO_ASKS, expected=("120,000 EUR",))
    relevant = lambda text: "120,000 eur" in text.lower()  # noqa: E731
    out = plugin.ragplugins_eval_instrument(config=None, trace=result.trace, row=row, first_stage=result.first_stage,
                                            final=result.final, is_relevant=relevant)
    best = result.trace.get("decompose", "rerank")["best"]
    texts = {n.node.node_id: n.node.get_content() for n in result.final}
    assert out["split"] is True and out["sub_queries"] == 2 and out["reranked"] is True
    assert out["sub_best_relevant"] == sum(relevant(texts[i]) for i in best.values()) / 2
    assert out["entered_top10"] == sum(n.node.node_id not in {m.node.node_id for m in result.first_stage[:10]}
                                       for n in result.final[:10])
    unsplit = rag_with({}).search("What is the annual fee?")
    out = plugin.ragplugins_eval_instrument(config=None, trace=unsplit.trace, row=row,
                                            first_stage=unsplit.first_stage, final=unsplit.final,
                                            is_relevant=relevant)
    assert out["split"] is False and out["sub_queries"] is None and out["sub_best_relevant"] is None


def test_a_stage_built_without_the_apps_context_says_what_the_embedding_scorer_needs(bundled_embed_model):
    nodes = first_stage(bundled_embed_model)
    with pytest.raises(ValueError, match="'embedding' scorer compares with the index's own embedder: .*ctx="):
        stage(None).postprocess_nodes(nodes, query_str=TWO_ASKS)
