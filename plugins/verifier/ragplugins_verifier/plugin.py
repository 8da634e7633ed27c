"""Hook implementations of the verifier plugin."""

from __future__ import annotations

import functools

from ragplugins import api
from ragplugins_verifier import __version__
from ragplugins_verifier.backends import add_hooks, available, backend_problem, build_verifier
from ragplugins_verifier.config import VerifierConfig
from ragplugins_verifier.engine import VerifyingQueryEngine


@api.hookimpl
def ragplugins_addhooks(pluginmanager):
    add_hooks(pluginmanager)


@api.hookimpl
def ragplugins_plugin_info():
    return api.PluginInfo(
        name="verifier", version=__version__, config_model=VerifierConfig,
        description="Check each answer sentence against its evidence; annotate, flag or abstain.")


@api.hookimpl
def ragplugins_check_config(config: VerifierConfig, pluginmanager):
    problem = backend_problem(config, available(pluginmanager))
    return [problem] if problem else []


@api.hookimpl
def ragplugins_node_postprocessors(config: VerifierConfig, ctx: api.RagContext):
    from ragplugins_verifier.notice import NotYetVerified

    return [api.Contribution(NotYetVerified(), stage="finalize", order=1000)]


@api.hookimpl
def ragplugins_query_engine_wrappers(config: VerifierConfig, ctx: api.RagContext):
    verifier = build_verifier(config, ctx)
    wrap = functools.partial(VerifyingQueryEngine, verifier=verifier, mode=config.mode, refusal=config.refusal)
    return [api.Contribution(wrap, stage="verify")]


@api.hookimpl
def ragplugins_register_commands(cli):
    from ragplugins_verifier.cli import verify_cmd

    cli.add_command(verify_cmd)


@api.hookimpl
def ragplugins_eval_instrument(trace):
    verdict = trace.get("verifier", "verdict") if trace is not None else None
    if not verdict or verdict.get("status") not in ("grounded", "ungrounded", "unverifiable"):
        return {"verified": False, "grounded": None, "score": None, "unsupported": None}
    return {"verified": True, "grounded": bool(verdict["grounded"]), "score": verdict["score"],
            "unsupported": len(verdict["unsupported"])}
