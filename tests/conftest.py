import sys
import types
from pathlib import Path

import pytest

from ragplugins import PluginInfo, hookimpl

sys.path.insert(0, str(Path(__file__).parent))  # the tests' helper modules (s3_server, workers)


def make_plugin_module(name: str, **hooks) -> types.ModuleType:
    """A plugin module built in memory: ``hooks`` maps hook name -> function."""
    module = types.ModuleType(f"test_plugin_{name}")
    info = hooks.pop("_info", None) or PluginInfo(name=name, version="9.9")

    @hookimpl
    def ragplugins_plugin_info():
        return info

    module.ragplugins_plugin_info = ragplugins_plugin_info
    for hook, fn in hooks.items():
        setattr(module, hook, hookimpl(fn))
    return module


@pytest.fixture
def plugin_module():
    return make_plugin_module


@pytest.fixture
def long_corpus(tmp_path):
    """The tiny corpus with a section longer than MiniLM reads: its chunks have windows to embed."""
    from ragplugins.testing import write_tiny_corpus

    corpus = write_tiny_corpus(tmp_path / "long_corpus")
    with (corpus / "master_agreement.md").open("a") as f:
        f.write("\n\n" + " ".join(f"Clause {i} sets the fee of service tier {i} and its notice period."
                                   for i in range(150)))
    return corpus



@pytest.fixture(scope="session")
def s3_endpoint():
    """A local S3-compatible server (moto's server mode) on 127.0.0.1, one per test session."""
    from s3_server import local_s3_server

    with local_s3_server() as endpoint:
        yield endpoint
