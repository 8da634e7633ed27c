"""Core hooks go through pluggy's hook caller: hook wrappers, tryfirst/trylast and pluggy's tracing
apply to them as in pytest and datasette, while a failing plugin is still reported by name and
on_plugin_error still applies."""

import pytest
from llama_index.core.postprocessor.types import BaseNodePostprocessor

from ragplugins import Contribution, PluginError, PluginInfo, hookimpl
from ragplugins.testing import make_rag


class Named(BaseNodePostprocessor):
    label: str = ""

    @classmethod
    def class_name(cls) -> str:
        return "tests.Named"

    def _postprocess_nodes(self, nodes, query_bundle=None):
        return nodes


def contributor(name, tryfirst=False, fail=False):
    class Plugin:
        @hookimpl
        def ragplugins_plugin_info(self):
            return PluginInfo(name=name, version="0")

        @hookimpl(tryfirst=tryfirst)
        def ragplugins_node_postprocessors(self, config, ctx):
            if fail:
                raise RuntimeError("boom")
            return [Contribution(Named(label=name), stage="rerank")]

    plugin = Plugin()
    plugin.__name__ = name  # the name pluggy registers it under
    return plugin


class Observer:
    """A third party that wraps another plugin's hook, as pytest plugins wrap pytest's."""

    def __init__(self):
        self.seen = []

    @hookimpl
    def ragplugins_plugin_info(self):
        return PluginInfo(name="observer", version="0")

    @hookimpl(wrapper=True)
    def ragplugins_node_postprocessors(self, config, ctx):
        results = yield
        self.seen.append([c.component.label for result in results for c in result])
        return results


def labels(rp):
    return [pp.inner.label for pp in rp.postprocessors(rp.index())]


def test_a_hookwrapper_sees_each_plugins_results(tmp_path, bundled_embed_model):
    observer = Observer()
    rp = make_rag([contributor("alpha"), contributor("beta"), observer], embed_model=bundled_embed_model,
                  persist_dir=tmp_path / "idx")
    assert labels(rp) == ["alpha", "beta"]
    assert sorted(observer.seen) == [["alpha"], ["beta"]]


def test_tryfirst_puts_a_plugin_first_among_equals(tmp_path, bundled_embed_model):
    rp = make_rag([contributor("alpha"), contributor("beta", tryfirst=True)], embed_model=bundled_embed_model,
                  persist_dir=tmp_path / "idx")
    assert labels(rp) == ["beta", "alpha"]


def test_pluggy_tracing_records_the_core_hook_calls(tmp_path, bundled_embed_model):
    rp = make_rag([contributor("alpha")], embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
    lines = []
    pm = rp.registry.pm
    pm.trace.root.setwriter(lines.append)
    undo = pm.enable_tracing()
    try:
        labels(rp)
    finally:
        undo()
    assert any("ragplugins_node_postprocessors" in line for line in lines), lines


def test_a_failing_plugin_is_named_and_the_error_policy_applies(tmp_path, bundled_embed_model):
    plugins = [contributor("alpha"), contributor("broken", fail=True)]
    rp = make_rag(plugins, embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
    with pytest.raises(PluginError, match="plugin 'broken' failed in ragplugins_node_postprocessors: RuntimeError"):
        labels(rp)
    rp = make_rag([contributor("alpha"), contributor("broken", fail=True)], {"on_plugin_error": "warn"},
                  embed_model=bundled_embed_model, persist_dir=tmp_path / "idx2")
    with pytest.warns(UserWarning, match="plugin 'broken' failed"):
        assert labels(rp) == ["alpha"]
