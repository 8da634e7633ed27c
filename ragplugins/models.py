"""Which LLM and embedder an app gets: explicit arguments, then the config, then what the host set
on LlamaIndex's ``Settings``, then the bundled default. Nothing silently replaces a host's models."""

from __future__ import annotations

import importlib
import logging
import sys
from dataclasses import dataclass
from typing import Any

from ragplugins.errors import RagPluginsError

logger = logging.getLogger("ragplugins")

ARGUMENT, CONFIG, SETTINGS, BUNDLED = ("argument", "config", "LlamaIndex Settings", "bundled default")


@dataclass
class ModelChoice:
    """The chosen models and where each came from (``embed_model`` None: load it when first needed)."""

    embed_model: Any
    embed_source: str
    llm: Any
    llm_source: str

    def describe(self, embed_name: str) -> str:
        embed = type(self.embed_model).__name__ if self.embed_model is not None else embed_name
        llm = type(self.llm).__name__ if self.llm is not None else "none (ranked sources, no answers)"
        return f"embedder {embed} ({self.embed_source}); LLM {llm} ({self.llm_source})"


def host_settings() -> tuple[Any, Any]:
    """(llm, embed_model) the host app set on ``llama_index.core.Settings``, None for each it did not.

    LlamaIndex has no public "is it set" question: reading ``Settings.llm`` when it is unset resolves
    and keeps its default (OpenAI: an import error here, an API client elsewhere). So each is read on
    two throwaway copies of ``Settings``: a value the app set is the same object both times; an unset
    one is a fresh default each time, or fails to build. The real ``Settings`` is never changed. If
    the app never imported llama_index.core it set nothing, and importing it here would cost a second."""
    if "llama_index.core" not in sys.modules:
        return None, None
    return _set_on_settings("llm"), _set_on_settings("embed_model")


def _set_on_settings(name: str) -> Any:
    import copy

    from llama_index.core import Settings

    try:
        first, second = getattr(copy.copy(Settings), name), getattr(copy.copy(Settings), name)
    except Exception:  # noqa: BLE001 - unset, and LlamaIndex's default cannot be built here
        return None
    return first if first is second else None


def import_llm(path: str) -> Any:
    """The LLM built by the zero-argument callable at ``path`` ('package.module:callable')."""
    module, _, attr = path.partition(":")
    try:
        factory = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError, ValueError) as exc:
        raise RagPluginsError(f"[ragplugins] llm = '{path}': cannot import it ({exc}); "
                              "give 'package.module:callable'") from exc
    from llama_index.core.llms import LLM

    try:
        llm = factory()
    except Exception as exc:  # noqa: BLE001 - the config names code; its failure is a config problem
        raise RagPluginsError(f"[ragplugins] llm = '{path}': calling it failed ({type(exc).__name__}: {exc}); give "
                              "a zero-argument callable that returns a LlamaIndex LLM") from None
    if not isinstance(llm, LLM):
        raise RagPluginsError(f"[ragplugins] llm = '{path}' returned {type(llm).__name__}, not a LlamaIndex LLM; "
                              "give a zero-argument callable that returns one")
    return llm


def choose_models(core: Any, *, embed_model: Any = None, llm: Any = None) -> ModelChoice:
    """Apply the order (argument, config, Settings, bundled) to the embedder and the LLM separately."""
    host_llm, host_embed = host_settings()
    if embed_model is not None:
        embed, embed_source = embed_model, ARGUMENT
    elif "embed_model" in core.model_fields_set:
        embed, embed_source = None, f"{CONFIG}: embed_model = '{core.embed_model}'"
    elif host_embed is not None:
        embed, embed_source = host_embed, SETTINGS
    else:
        embed, embed_source = None, BUNDLED
    if llm is not None:
        chosen_llm, llm_source = llm, ARGUMENT
    elif core.llm:
        chosen_llm, llm_source = import_llm(core.llm), f"{CONFIG}: llm = '{core.llm}'"
    elif host_llm is not None:
        chosen_llm, llm_source = host_llm, SETTINGS
    else:
        chosen_llm, llm_source = None, BUNDLED
    choice = ModelChoice(embed, embed_source, chosen_llm, llm_source)
    logger.info(choice.describe(core.embed_model))
    return choice
