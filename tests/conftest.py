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



@pytest.fixture(scope="session")
def s3_endpoint():
    """A local S3-compatible server (moto's server mode) on 127.0.0.1, one per test session."""
    from s3_server import local_s3_server

    with local_s3_server() as endpoint:
        yield endpoint
