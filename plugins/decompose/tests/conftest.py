import pytest

import ragplugins_decompose.plugin as plugin
from ragplugins.testing import index_tiny_corpus, make_rag


@pytest.fixture(scope="module")
def indexed(tmp_path_factory, bundled_embed_model):
    """One indexed tiny corpus per module; arms differ only in config, never in the index."""
    root = tmp_path_factory.mktemp("decompose")
    index_tiny_corpus(root, [plugin], embed_model=bundled_embed_model)
    return root / "idx"


@pytest.fixture(scope="module")
def rag_with(indexed, bundled_embed_model):
    """rag_with(config, llm=None): the shared index with the decompose plugin configured by ``config``."""

    def build(config: dict | None = None, llm=None, plugins=(plugin,)):
        cfg = {"enable": ["decompose"], "decompose": dict(config or {})}
        return make_rag(list(plugins), cfg, embed_model=bundled_embed_model, llm=llm, persist_dir=indexed)

    return build
