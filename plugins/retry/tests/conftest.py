import sys
from pathlib import Path

import pytest

import ragplugins_retry.plugin as plugin
from ragplugins.testing import make_rag, write_tiny_corpus

# The tests import their doubles from retry_testkit.py (pytest runs with --import-mode=importlib).
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="module")
def tiny_rag(tmp_path_factory, bundled_embed_model):
    """One indexed tiny corpus shared by the module; arms differ only in config, not in the index."""
    root = tmp_path_factory.mktemp("retry")
    corpus = write_tiny_corpus(root / "corpus")
    # Heading split: the tiny corpus then has more chunks than the contrast signal's background needs.
    rag = make_rag([plugin], {"enable": [], "splitter": "auto"}, embed_model=bundled_embed_model,
                   persist_dir=root / "idx")
    rag.index_paths([corpus])
    return rag, root
