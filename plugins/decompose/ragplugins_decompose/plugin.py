"""Hook implementations of the decompose plugin."""

from __future__ import annotations

import warnings

from ragplugins import api
from ragplugins_decompose import __version__, hookspecs, loading
from ragplugins_decompose.config import DecomposeConfig
from ragplugins_decompose.decomposers import Decomposer, LLMDecomposer, NoDecomposer, RuleDecomposer
from ragplugins_decompose.postprocessor import PLUGIN, DecomposeRerank
from ragplugins_decompose.scorers import EmbeddingScorer, HybridScorer, PostprocessorScorer, Scorer


@api.hookimpl
def ragplugins_addhooks(pluginmanager):
    pluginmanager.add_hookspecs(hookspecs)


@api.hookimpl
def ragplugins_plugin_info():
    return api.PluginInfo(
        name=PLUGIN, version=__version__, config_model=DecomposeConfig,
        description="Rerank stage: score candidates against the question and its sub-queries.")


@api.hookimpl
def ragplugins_decompose_decomposers(config: DecomposeConfig):
    llm = LLMDecomposer() if config.llm_prompt is None else LLMDecomposer(prompt=_template(config.llm_prompt))
    return [RuleDecomposer(), llm, NoDecomposer()]


def _template(prompt: str):
    from llama_index.core.prompts import PromptTemplate

    return PromptTemplate(prompt)


def decomposers(config: DecomposeConfig, pm=None) -> dict[str, Decomposer]:
    """Every registered decomposer, by name (fresh objects: prompts are per postprocessor)."""
    found = api.named_extensions(pm, "ragplugins_decompose_decomposers", what="decomposer", kind=Decomposer,
                                 builtins=() if pm else ragplugins_decompose_decomposers(config), config=config)
    return {name: ext.value for name, ext in found.items()}


def decomposer(config: DecomposeConfig, pm=None) -> Decomposer:
    available = decomposers(config, pm)
    if config.decomposer not in available:
        raise ValueError(f"[ragplugins.decompose] decomposer = {config.decomposer!r}: no such decomposer; "
                         f"available: {', '.join(sorted(available))} (other plugins add more through "
                         f"ragplugins_decompose_decomposers)")
    return available[config.decomposer]


@api.hookimpl
def ragplugins_check_config(config: DecomposeConfig, pluginmanager):
    try:
        decomposer(config, pluginmanager)
    except ValueError as exc:
        return [str(exc)]
    return []


def scorer(config: DecomposeConfig) -> Scorer:
    if config.scorer == "cross-encoder":
        return PostprocessorScorer(postprocessor=loading.cross_encoder(config.model, config.device))
    if config.scorer == "postprocessor":
        return PostprocessorScorer(postprocessor=loading.postprocessor_from_path(config.postprocessor))
    if config.scorer == "embedding":
        return EmbeddingScorer()
    return HybridScorer(rrf_k=config.rrf_k)


@api.hookimpl
def ragplugins_node_postprocessors(config: DecomposeConfig, ctx: api.RagContext):
    chosen, scoring = decomposer(config, getattr(ctx, "pluginmanager", None)), scorer(config)
    if chosen.name == "llm" and ctx.llm is None:
        warnings.warn("ragplugins decompose: decomposer = 'llm' but no LLM was given to ragplugins.load(llm=...); "
                      "no question will be split (each query's trace says so)", stacklevel=2)
    unsplit = scoring.independent_of_first_stage if config.rerank_unsplit is None else config.rerank_unsplit
    component = DecomposeRerank(
        ctx=ctx, decomposer=chosen, scorer=scoring, aggregate=config.aggregate, fusion=config.fusion,
        rrf_k=config.rrf_k, rerank_unsplit=unsplit, max_sub_queries=config.max_sub_queries, top_n=config.top_n)
    return [api.Contribution(component, stage="rerank")]


@api.hookimpl
def ragplugins_eval_instrument(config: DecomposeConfig, trace, row, first_stage, final, is_relevant):
    split = trace.get(PLUGIN, "split") if trace is not None else None
    rerank = (trace.get(PLUGIN, "rerank") if trace is not None else None) or {}
    subs = (split or {}).get("sub_queries") or []
    texts = {n.node.node_id: n.node.get_content() for n in final}
    best = rerank.get("best") or {}
    first10 = {n.node.node_id for n in first_stage[:10]}
    return {
        "split": bool(subs),
        "sub_queries": len(subs) if subs else None,
        "reranked": bool(rerank.get("reranked")),
        # How many of the final top 10 were not in the first stage's top 10.
        "entered_top10": sum(n.node.node_id not in first10 for n in final[:10]),
        # Share of sub-queries whose best candidate holds expected evidence.
        "sub_best_relevant": (sum(is_relevant(texts.get(i, "")) for i in best.values()) / len(best)
                              if best else None),
        "rerank_ms": rerank.get("ms"),
    }
