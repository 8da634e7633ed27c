"""Building the configured scorer's model once per process (the hooks run for every pipeline built)."""

from __future__ import annotations

import functools
import importlib
from pathlib import Path
from typing import Any

from llama_index.core.postprocessor.types import BaseNodePostprocessor


def _looks_like_path(model: str) -> bool:
    return model.startswith((".", "/", "~")) or "\\" in model or Path(model).expanduser().exists()


@functools.lru_cache(maxsize=4)
def cross_encoder(model: str, device: str | None) -> BaseNodePostprocessor:
    """LlamaIndex's SentenceTransformerRerank over ``model`` (a local directory or a cached name)."""
    from llama_index.core.postprocessor import SentenceTransformerRerank

    where = f"[ragplugins.decompose] model = {model!r}"
    if _looks_like_path(model) and not Path(model).expanduser().is_dir():
        raise ValueError(f"{where}: no such directory; give a cross-encoder saved with save_pretrained "
                         f"(config.json, weights and tokenizer) or a model name already in the Hugging Face cache")
    try:
        # Remote code stays off: the model name comes from a config file.
        return SentenceTransformerRerank(model=str(Path(model).expanduser()) if _looks_like_path(model) else model,
                                         top_n=1, device=device, trust_remote_code=False)
    except ImportError as exc:
        raise ImportError(f"{where}: scorer 'cross-encoder' needs sentence-transformers and torch "
                          f"(pip install sentence-transformers)") from exc
    except Exception as exc:  # noqa: BLE001 - name the key and what to do instead of a hub traceback
        raise ValueError(f"{where}: cannot load this cross-encoder ({type(exc).__name__}: {exc}); give a local "
                         f"directory saved with save_pretrained, or a model name already in the Hugging Face "
                         f"cache (nothing is downloaded without network access)") from exc


@functools.lru_cache(maxsize=8)
def postprocessor_from_path(path: str) -> BaseNodePostprocessor:
    """The postprocessor built by the zero-argument factory at ``package.module:factory``."""
    where = f"[ragplugins.decompose] postprocessor = {path!r}"
    module_name, attr = path.split(":")
    try:
        factory = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"{where}: cannot import it ({type(exc).__name__}: {exc}); check the module and "
                         f"attribute names") from exc
    made: Any = factory() if callable(factory) and not isinstance(factory, BaseNodePostprocessor) else factory
    if not isinstance(made, BaseNodePostprocessor):
        raise ValueError(f"{where}: it gave a {type(made).__name__}, not a LlamaIndex BaseNodePostprocessor")
    return made
