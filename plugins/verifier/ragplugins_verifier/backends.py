"""Verifier backends: the built-ins and the hook through which other plugins add theirs.

A third-party plugin adds a backend by implementing::

    @ragplugins.hookimpl(optionalhook=True)
    def ragplugins_verifier_backends():
        return {"mychecker": lambda config, ctx: MyVerifier(threshold=config.options.get("threshold", 0.5))}

and users select it with ``backend = "mychecker"`` (its settings go under
``[ragplugins.verifier.options]``). ``optionalhook`` keeps the plugin loadable when
the verifier is not installed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

from ragplugins import api
from ragplugins.api import hookspec
from ragplugins_verifier.base import Verifier, VerifierError
from ragplugins_verifier.config import VerifierConfig

Factory = Callable[[VerifierConfig, Any], Verifier]


class VerifierHookSpecs:
    """The verifier's own hook (added through ``ragplugins_addhooks``)."""

    @hookspec
    def ragplugins_verifier_backends(self) -> dict[str, Factory]:  # type: ignore[empty-body]  # a spec: no body
        """Return {backend name: factory(config: VerifierConfig, ctx: RagContext) -> Verifier}."""


def _fidelity(config: VerifierConfig, ctx: api.RagContext) -> Verifier:
    from ragplugins_verifier.fidelity import FidelityVerifier

    s = config.fidelity
    return FidelityVerifier(embed_model=ctx.embed_model, threshold=s.threshold, candidates=s.candidates,
                            attachment_margin=s.attachment_margin, novelty=s.novelty,
                            lexical_support=s.lexical_support, foreign_support=s.foreign_support)


def _nli(config: VerifierConfig, ctx: api.RagContext) -> Verifier:
    from ragplugins_verifier.nli import NLIVerifier

    return NLIVerifier(**config.nli.model_dump())


def _llm(config: VerifierConfig, ctx: api.RagContext) -> Verifier:
    from llama_index.core.prompts import PromptTemplate

    from ragplugins_verifier.llm import LLMVerifier

    if getattr(ctx, "llm", None) is None:
        raise VerifierError("backend = 'llm' needs the host's LLM: pass it with ragplugins.load(..., llm=your_llm), "
                            "or use backend = 'fidelity' (no LLM needed)")
    kwargs = {"prompt": PromptTemplate(config.llm.prompt)} if config.llm.prompt else {}
    return LLMVerifier(llm=ctx.llm, **kwargs)


def _fidelity_nli(config: VerifierConfig, ctx: api.RagContext) -> Verifier:
    from ragplugins_verifier.combined import CombinedVerifier

    return CombinedVerifier(first=_fidelity(config, ctx), second=_nli(config, ctx))


BUILTIN: dict[str, Factory] = {"fidelity": _fidelity, "nli": _nli, "llm": _llm, "fidelity+nli": _fidelity_nli}


def available(pluginmanager: pluggy.PluginManager | None = None) -> dict[str, tuple[Factory, str]]:
    """{backend name: (factory, where it comes from)}: the built-ins plus every plugin's."""
    try:
        found = api.named_extensions(pluginmanager, "ragplugins_verifier_backends", what="verifier backend",
                                     builtins=BUILTIN)
    except api.DuplicateExtensionError as exc:
        raise VerifierError(str(exc)) from None
    return {name: (ext.value, ext.origin) for name, ext in found.items()}


def backend_problem(config: VerifierConfig, factories: dict[str, tuple[Factory, str]]) -> str | None:
    """Why ``config.backend`` is not among ``factories`` (:func:`available`); None when it is."""
    if config.backend in factories:
        return None
    return (f"[ragplugins.verifier] backend = '{config.backend}' is not a known backend; "
            f"available: {', '.join(sorted(factories))}")


def build_verifier(config: VerifierConfig | None, ctx: api.RagContext) -> Verifier:
    """The verifier ``config.backend`` names, built from its settings and the context's models."""
    config = config or VerifierConfig()
    factories = available(getattr(ctx, "pluginmanager", None))
    if problem := backend_problem(config, factories):
        raise VerifierError(problem)
    verifier = factories[config.backend][0](config, ctx)
    if not isinstance(verifier, Verifier):
        raise VerifierError(f"verifier backend '{config.backend}' returned {type(verifier).__name__}, "
                            "not a ragplugins_verifier.Verifier")
    return verifier


def add_hooks(pluginmanager: pluggy.PluginManager) -> None:
    """Publish the backend hook so other plugins can implement it."""
    pluginmanager.add_hookspecs(VerifierHookSpecs)
