import types

import pytest

from ragplugins import PluginInfo, hookimpl


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
