"""Discovery, the env allowlist, broken and duplicate plugins, stage ordering, error policy."""

import importlib.metadata as md
import sys
import types
import warnings

import pytest
from llama_index.core.postprocessor.types import BaseNodePostprocessor

import ragplugins
from ragplugins import Contribution, PluginError, PluginInfo, hookimpl
from ragplugins.plugins import ENV_VAR, PluginRegistry
from ragplugins.testing import make_rag


class Tagger(BaseNodePostprocessor):
    label: str

    @classmethod
    def class_name(cls):
        return "tests.Tagger"

    def _postprocess_nodes(self, nodes, query_bundle=None):
        return nodes


def _fake_entry_points(monkeypatch, specs: dict[str, str]):
    eps = [md.EntryPoint(name=n, value=v, group="ragplugins") for n, v in specs.items()]
    real = md.entry_points

    def fake(**kw):
        return md.EntryPoints(eps) if kw.get("group") == "ragplugins" else real(**kw)

    monkeypatch.setattr(md, "entry_points", fake)


def _module(monkeypatch, name, body):
    module = types.ModuleType(name)
    exec(body, module.__dict__)
    monkeypatch.setitem(sys.modules, name, module)
    return module


GOOD = """
import ragplugins
@ragplugins.hookimpl
def ragplugins_plugin_info():
    return ragplugins.PluginInfo(name=NAME, version="1.0")
"""


def test_broken_plugin_is_reported_by_name_and_others_load(monkeypatch):
    _module(monkeypatch, "good_plugin", "NAME='good'\n" + GOOD)
    _fake_entry_points(monkeypatch, {"good": "good_plugin", "broken": "missing_module_xyz"})
    with pytest.warns(UserWarning, match="broken"):
        reg = PluginRegistry.discover(env={})
    assert "good" in reg.loaded()
    broken = [r for r in reg.all_records() if r.name == "broken"][0]
    assert not broken.loaded and "missing_module_xyz" in broken.error


def test_env_allowlist_blocks_before_import(monkeypatch):
    imported = []
    monkeypatch.setitem(sys.modules, "noisy_plugin", None)  # would raise ImportError if imported
    _module(monkeypatch, "good_plugin", "NAME='good'\n" + GOOD)
    _fake_entry_points(monkeypatch, {"good": "good_plugin", "noisy": "noisy_plugin"})
    reg = PluginRegistry.discover(env={ENV_VAR: "good"})
    assert list(reg.loaded()) == ["good"]
    noisy = [r for r in reg.all_records() if r.name == "noisy"][0]
    assert noisy.blocked and reg.pm.is_blocked("noisy")
    reg_none = PluginRegistry.discover(env={ENV_VAR: ""})
    assert reg_none.loaded() == {}


def test_real_entry_points_include_builtins_and_template():
    reg = PluginRegistry.discover(env={})
    names = set(reg.loaded())
    assert {"crossref", "overview", "retry", "verifier", "length_filter"} <= names


def test_two_plugins_with_the_same_name(plugin_module):
    reg = PluginRegistry()
    assert reg.register(plugin_module("twin"), name="ep_one", distribution="ragplugins-twin").loaded
    with pytest.warns(UserWarning, match="two plugins are named 'twin' .ragplugins-twin and ragplugins-twin-fork"):
        second = reg.register(plugin_module("twin"), name="ep_two", distribution="ragplugins-twin-fork")
    assert not second.loaded and "twin" in reg.loaded()


def test_plugin_without_info_is_rejected(plugin_module):
    module = types.ModuleType("no_info")
    with pytest.warns(UserWarning, match="does not implement ragplugins_plugin_info"):
        record = PluginRegistry().register(module)
    assert not record.loaded


def test_stage_and_order_decide_not_registration(plugin_module):
    def contribs(*items):
        return lambda config, ctx: [Contribution(Tagger(label=l), stage=s, order=o) for l, s, o in items]

    a = plugin_module("aaa", ragplugins_node_postprocessors=contribs(("a-final", "finalize", 0), ("a-rerank", "rerank", 5)))
    b = plugin_module("bbb", ragplugins_node_postprocessors=contribs(("b-expand", "expand", 0), ("b-rerank", "rerank", 1)))
    labels = []
    for order in ([a, b], [b, a]):
        reg = PluginRegistry()
        for p in order:
            reg.register(p)
        got = reg.contributions("ragplugins_node_postprocessors", reg.loaded().values(), config=None, ctx=None)
        labels.append([c.component.label for c in got])
    assert labels[0] == labels[1] == ["b-rerank", "a-rerank", "b-expand", "a-final"]


def test_unknown_stage_names_the_plugin(plugin_module):
    bad = plugin_module("bad", ragplugins_node_postprocessors=lambda: [Contribution(Tagger(label="x"), stage="later")])
    reg = PluginRegistry()
    reg.register(bad)
    with pytest.raises(PluginError, match="plugin 'bad'.*unknown stage 'later'"):
        reg.contributions("ragplugins_node_postprocessors", reg.loaded().values())


def _raising(config, ctx):
    raise RuntimeError("boom")


def test_hook_that_raises_is_named_or_skipped(plugin_module, tmp_path, bundled_embed_model):
    bad = plugin_module("exploder", ragplugins_node_postprocessors=_raising)
    rag = make_rag([bad], embed_model=bundled_embed_model, persist_dir=tmp_path / "a")
    with pytest.raises(PluginError, match="plugin 'exploder' failed in ragplugins_node_postprocessors: RuntimeError: boom"):
        rag.postprocessors()
    rag = make_rag([plugin_module("exploder", ragplugins_node_postprocessors=_raising)],
                   {"on_plugin_error": "warn"}, embed_model=bundled_embed_model, persist_dir=tmp_path / "b")
    with pytest.warns(UserWarning, match="exploder"):
        assert rag.postprocessors() == []


class Exploding(BaseNodePostprocessor):
    @classmethod
    def class_name(cls):
        return "tests.Exploding"

    def _postprocess_nodes(self, nodes, query_bundle=None):
        raise ValueError("component broke")


def test_component_that_raises_at_query_time(plugin_module, tiny_corpus, tmp_path, bundled_embed_model):
    hook = lambda config, ctx: [Contribution(Exploding(), stage="expand")]  # noqa: E731
    rag = make_rag([plugin_module("fragile", ragplugins_node_postprocessors=hook)],
                   embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
    rag.index_paths([tiny_corpus])
    with pytest.raises(PluginError, match="plugin 'fragile' failed in Exploding: ValueError: component broke"):
        rag.search("annual fee")
    rag = make_rag([plugin_module("fragile", ragplugins_node_postprocessors=hook)], {"on_plugin_error": "warn"},
                   embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
    with pytest.warns(UserWarning, match="fragile"):
        result = rag.search("annual fee")
    assert [n.node.node_id for n in result.final] == [n.node.node_id for n in result.first_stage]


def test_addhooks_lets_a_plugin_publish_its_own_hooks(plugin_module):
    spec_module = types.ModuleType("ext_specs")

    @ragplugins.hookspecs.hookspec
    def ragplugins_ext_things():
        """A plugin-defined hook."""

    spec_module.ragplugins_ext_things = ragplugins_ext_things
    host = plugin_module("host", ragplugins_addhooks=lambda pluginmanager: pluginmanager.add_hookspecs(spec_module))
    guest = plugin_module("guest", ragplugins_ext_things=lambda: "guest-thing")
    reg = PluginRegistry()
    reg.register(host)
    reg.register(guest)
    assert reg.pm.hook.ragplugins_ext_things() == ["guest-thing"]
