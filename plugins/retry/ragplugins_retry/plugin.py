"""Hook implementations of the retry plugin."""

from __future__ import annotations

import warnings
from typing import Any

from ragplugins import api
from ragplugins_retry import __version__, hookspecs
from ragplugins_retry.config import RetryConfig
from ragplugins_retry.retriever import PLUGIN, RetryRetriever
from ragplugins_retry.signals import (
    CorpusCoverageSignal,
    DenseContrastSignal,
    QueryCoverageSignal,
    RerankProbabilitySignal,
    RetrySignal,
)
from ragplugins_retry.strategies import (
    KeywordsStrategy,
    LLMStrategy,
    PseudoRelevanceFeedbackStrategy,
    RetryStrategy,
    VocabularyStrategy,
)


@api.hookimpl
def ragplugins_addhooks(pluginmanager):
    pluginmanager.add_hookspecs(hookspecs)


@api.hookimpl
def ragplugins_plugin_info():
    return api.PluginInfo(
        name=PLUGIN, version=__version__, config_model=RetryConfig,
        description="Detect weak evidence after the first stage, reformulate once, keep the better set.")


@api.hookimpl
def ragplugins_retry_signals(config: RetryConfig):
    return [CorpusCoverageSignal(), QueryCoverageSignal(), DenseContrastSignal(), RerankProbabilitySignal()]


@api.hookimpl
def ragplugins_retry_strategies(config: RetryConfig):
    llm = LLMStrategy() if config.llm_prompt is None else LLMStrategy(prompt=_template(config.llm_prompt))
    return [KeywordsStrategy(), llm,
            PseudoRelevanceFeedbackStrategy(feedback_docs=config.prf_feedback_docs, terms=config.prf_terms),
            VocabularyStrategy(terms=config.vocabulary_terms, reduce_otherwise=config.vocabulary_reduce_otherwise)]


def _template(prompt: str):
    from llama_index.core.prompts import PromptTemplate

    return PromptTemplate(prompt)


def signals(config: RetryConfig, pm: Any = None) -> dict[str, RetrySignal]:
    """Every signal registered with the plugin manager ``pm`` (``ctx.pluginmanager``), by name; the
    built-ins only without one (a hand-built context)."""
    found = api.named_extensions(pm, "ragplugins_retry_signals", what="retry signal", kind=RetrySignal,
                                 builtins=() if pm else ragplugins_retry_signals(config), config=config)
    return {name: ext.value for name, ext in found.items()}


def strategies(config: RetryConfig, pm: Any = None) -> dict[str, RetryStrategy]:
    """Every reformulation strategy registered with ``pm``, by name."""
    found = api.named_extensions(pm, "ragplugins_retry_strategies", what="retry strategy", kind=RetryStrategy,
                                 builtins=() if pm else ragplugins_retry_strategies(config), config=config)
    return {name: ext.value for name, ext in found.items()}


def _pick(kind: str, name: str, available: dict[str, Any], key: str | None = None) -> Any:
    if name not in available:
        raise ValueError(f"[ragplugins.retry] {key or kind} = {name!r}: no such {kind}; available: "
                         f"{', '.join(sorted(available))} (other plugins add more through "
                         f"ragplugins_retry_{kind}s)")
    return available[name]


def resolve(config: RetryConfig, pm: Any = None) -> tuple[RetrySignal, RetryStrategy, float]:
    """The signal, strategy and threshold the config names (fresh objects: prompts are per retriever)."""
    signal = _pick("signal", config.signal, signals(config, pm))
    strategy = _pick("strategy", config.strategy, strategies(config, pm))
    return signal, strategy, signal.default_threshold if config.threshold is None else config.threshold


def resolve_confirm(config: RetryConfig, pm: Any = None) -> RetrySignal | None:
    """The confirming signal the config names; None when unset or the same as the main signal."""
    if not config.confirm_signal or config.confirm_signal == config.signal:
        return None
    return _pick("signal", config.confirm_signal, signals(config, pm), key="confirm_signal")


@api.hookimpl
def ragplugins_check_config(config: RetryConfig, pluginmanager, core):
    try:
        signal, _, _ = resolve(config, pluginmanager)
        confirm = resolve_confirm(config, pluginmanager)
    except ValueError as exc:
        return [str(exc)]
    _warn_too_few_candidates(signal, confirm, core.top_k)
    return []


@api.hookimpl
def ragplugins_retriever_wrappers(config: RetryConfig, ctx: api.RagContext):
    # A misspelt name fails when the pipeline is built, not on first use.
    resolve(config, ctx.pluginmanager)

    def wrap(inner):
        signal, strategy, threshold = resolve(config, ctx.pluginmanager)
        return RetryRetriever(inner, ctx, signal=signal, strategy=strategy, threshold=threshold,
                              confirm=resolve_confirm(config, ctx.pluginmanager))

    return [api.Contribution(wrap, stage="sufficiency")]


def _warn_too_few_candidates(signal: RetrySignal, confirm: RetrySignal | None, top_k: int) -> None:
    """Said once, when the config is loaded (so by ``ragplugins config check``): a signal that needs more candidates
    than ``top_k`` gives no value on any query (a new user's lighttpd pages at top_k = 3: the confirming signal was
    never computed, and only each query's trace said so). A confirming signal left out is a ``SettingNote``: retry
    still acts, so ``query`` does not repeat it."""
    if signal.min_candidates > top_k:
        warnings.warn(f"ragplugins retry: signal = '{signal.name}' needs at least {signal.min_candidates} candidates "
                      f"and top_k = {top_k}, so no query will be judged weak or retried: set top_k to at least "
                      f"{signal.min_candidates}, or another signal", stacklevel=3)
    elif confirm is not None and confirm.min_candidates > top_k:
        warnings.warn(f"ragplugins retry: confirm_signal = '{confirm.name}' needs at least {confirm.min_candidates} "
                      f"candidates and top_k = {top_k}, so a retry set is kept only where signal = '{signal.name}' "
                      f"alone is strictly higher: set top_k to at least {confirm.min_candidates}, or another "
                      f"confirm_signal", api.SettingNote, stacklevel=3)


@api.hookimpl
def ragplugins_eval_instrument(config: RetryConfig, trace, row, first_stage, final, is_relevant):
    # "judged_weak", not the trace's "fired": read in eval's table beside other plugins' "fired" (which acted),
    # "fired" on a rank-1 answer with no retry tried misled new users; "attempted" is the retry itself.
    decision = trace.get(PLUGIN, "decision") if trace is not None else None
    if not decision:
        return {"judged_weak": False, "no_signal": None, "attempted": None, "kept_retry": None, "retry_ms": 0.0}
    fired = bool(decision.get("fired"))
    return {
        "judged_weak": fired,
        "no_signal": decision.get("score_before") is None,
        "attempted": bool(decision.get("attempted")) if fired else None,
        "kept_retry": decision.get("kept") == "retry" if fired else None,
        "score_before": decision.get("score_before"),
        "score_after": decision.get("score_after"),
        "retry_ms": float(decision.get("retry_ms") or 0.0),
    }


@api.hookimpl
def ragplugins_register_commands(cli):
    from ragplugins_retry.calibrate import retry_group

    cli.add_command(retry_group)
