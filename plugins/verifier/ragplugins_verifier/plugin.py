"""Hook implementations of the verifier plugin."""

from __future__ import annotations

import functools

import ragplugins
from ragplugins_verifier import __version__
from ragplugins_verifier.backends import add_hooks, available, backend_problem, build_verifier
from ragplugins_verifier.config import VerifierConfig
from ragplugins_verifier.engine import VerifyingQueryEngine


@ragplugins.hookimpl
def ragplugins_addhooks(pluginmanager):
    add_hooks(pluginmanager)


@ragplugins.hookimpl
def ragplugins_plugin_info():
    return ragplugins.PluginInfo(
        name="verifier", version=__version__, config_model=VerifierConfig,
        description="Check each answer sentence against its evidence; annotate, flag or abstain.")


@ragplugins.hookimpl
def ragplugins_check_config(config: VerifierConfig, pluginmanager):
    problem = backend_problem(config, available(pluginmanager))
    return [problem] if problem else []


@ragplugins.hookimpl
def ragplugins_node_postprocessors(config: VerifierConfig, ctx):
    from ragplugins_verifier.notice import NotYetVerified

    return [ragplugins.Contribution(NotYetVerified(), stage="finalize", order=1000)]


@ragplugins.hookimpl
def ragplugins_query_engine_wrappers(config: VerifierConfig, ctx):
    verifier = build_verifier(config, ctx)
    wrap = functools.partial(VerifyingQueryEngine, verifier=verifier, mode=config.mode, refusal=config.refusal)
    return [ragplugins.Contribution(wrap, stage="verify")]


@ragplugins.hookimpl
def ragplugins_register_commands(cli):
    from ragplugins_verifier.cli import verify_cmd

    cli.add_command(verify_cmd)


@ragplugins.hookimpl
def ragplugins_eval_instrument(trace):
    verdict = trace.get("verifier", "verdict") if trace is not None else None
    if not verdict or verdict.get("status") not in ("grounded", "ungrounded", "unverifiable"):
        return {"verified": False, "grounded": None, "score": None, "unsupported": None}
    return {"verified": True, "grounded": bool(verdict["grounded"]), "score": verdict["score"],
            "unsupported": len(verdict["unsupported"])}
