"""Discovery, the env allowlist, broken and duplicate plugins, stage ordering, error policy."""

import importlib.metadata as md
import sys
import types
import warnings

import pytest
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import TransformComponent

import ragplugins
from ragplugins import Contribution, MetadataKey, PluginError, PluginInfo
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
        return lambda config, ctx: [Contribution(Tagger(label=label), stage=s, order=o) for label, s, o in items]

    a = plugin_module(
        "aaa", ragplugins_node_postprocessors=contribs(("a-final", "finalize", 0), ("a-rerank", "rerank", 5))
    )
    b = plugin_module(
        "bbb", ragplugins_node_postprocessors=contribs(("b-expand", "expand", 0), ("b-rerank", "rerank", 1))
    )
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
        reg.contributions("ragplugins_node_postprocessors", reg.loaded().values(), config=None, ctx=None)


def _raising(config, ctx):
    raise RuntimeError("boom")


def test_hook_that_raises_is_named_or_skipped(plugin_module, tmp_path, bundled_embed_model):
    bad = plugin_module("exploder", ragplugins_node_postprocessors=_raising)
    rag = make_rag([bad], embed_model=bundled_embed_model, persist_dir=tmp_path / "a")
    with pytest.raises(
        PluginError, match="plugin 'exploder' failed in ragplugins_node_postprocessors: RuntimeError: boom"
    ):
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


class Breaking(TransformComponent):
    @classmethod
    def class_name(cls):
        return "tests.Breaking"

    def __call__(self, nodes, **kwargs):
        raise RuntimeError("boom in transform")


def test_a_transformation_enabled_later_without_an_after_index_step_asks_for_reindex(plugin_module, tiny_corpus,
                                                                                     tmp_path, bundled_embed_model):
    # prepare runs after-index steps over stored chunks; a plugin with only a transformation needs the chunks again.
    rag = make_rag([], embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
    rag.index_paths([tiny_corpus])
    hook = lambda config, ctx: [Contribution(Stamp(), stage="post_split")]  # noqa: E731
    rag = make_rag([plugin_module("stamper", ragplugins_transformations=hook)], embed_model=bundled_embed_model,
                   persist_dir=tmp_path / "idx")
    with pytest.warns(UserWarning, match=r"stamper now run\(s\) at index time, but 4 unchanged documents.*"
                                         r"re-index them with `ragplugins index PATH --reindex`"):
        rag.index_paths([tiny_corpus])
    # prepare cannot run it over stored chunks: it says so, and the next index run still asks for the re-index.
    with pytest.warns(UserWarning, match=r"stamper change\(s\) chunks only as they are split.*--reindex"):
        rag.prepare()
    assert rag.preparable_plugins() == []
    with pytest.warns(UserWarning, match=r"stamper now run\(s\) at index time, but 4 unchanged documents"):
        rag.index_paths([tiny_corpus])


def test_transformation_that_raises_is_named_or_stepped_around(plugin_module, tiny_corpus, tmp_path,
                                                                bundled_embed_model):
    hook = lambda config, ctx: [Contribution(Breaking(), stage="pre_split")]  # noqa: E731
    rag = make_rag([plugin_module("brittle", ragplugins_transformations=hook)], embed_model=bundled_embed_model,
                   persist_dir=tmp_path / "idx")
    with pytest.raises(PluginError, match="plugin 'brittle' failed in Breaking: RuntimeError: boom in transform"):
        rag.index_paths([tiny_corpus])
    assert rag.context(rag.index()).list_documents() == {}  # nothing half-written
    rag = make_rag([plugin_module("brittle", ragplugins_transformations=hook)], {"on_plugin_error": "warn"},
                   embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
    with pytest.warns(UserWarning, match=r"plugin 'brittle' failed in Breaking.*indexed without its step: once "
                                         r"it is fixed, re-index them with `ragplugins index PATH --reindex`"):
        rag.index_paths([tiny_corpus])
    assert len(rag.context(rag.index()).list_documents()) == 4


class ReturnsNone(BaseNodePostprocessor):
    @classmethod
    def class_name(cls):
        return "tests.ReturnsNone"

    def _postprocess_nodes(self, nodes, query_bundle=None):
        return None


def test_components_of_the_wrong_kind_or_results_are_named(plugin_module, tiny_corpus, tmp_path, bundled_embed_model):
    wrong = plugin_module("wrongkind", ragplugins_node_postprocessors=lambda: [Contribution("text", stage="expand")])
    reg = PluginRegistry()
    reg.register(wrong)
    with pytest.raises(PluginError, match="plugin 'wrongkind'.*its component is str, expected a LlamaIndex "
                                          "BaseNodePostprocessor"):
        reg.contributions("ragplugins_node_postprocessors", reg.loaded().values(), config=None, ctx=None)
    hook = lambda config, ctx: [Contribution(ReturnsNone(), stage="expand")]  # noqa: E731
    rag = make_rag([plugin_module("nothing", ragplugins_node_postprocessors=hook)], embed_model=bundled_embed_model,
                   persist_dir=tmp_path / "idx")
    rag.index_paths([tiny_corpus])
    with pytest.raises(PluginError, match="plugin 'nothing' failed in ReturnsNone: TypeError: returned NoneType, "
                                          "expected a list of NodeWithScore"):
        rag.search("annual fee")
    not_a_retriever = lambda config, ctx: [Contribution(lambda inner: "nope", stage="first_stage")]  # noqa: E731
    rag = make_rag([plugin_module("badwrap", ragplugins_retriever_wrappers=not_a_retriever)],
                   {"on_plugin_error": "warn"}, embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
    with pytest.warns(UserWarning, match="plugin 'badwrap' failed in its BaseRetriever wrapper: TypeError: returned "
                                         "str"):
        assert rag.search("annual fee").first_stage


def test_config_defaults_outside_their_bounds_are_refused_at_registration(plugin_module):
    from pydantic import BaseModel, ConfigDict, Field

    class Settings(BaseModel):
        model_config = ConfigDict(extra="forbid")
        weight: float = Field(1.5, ge=0, le=1)

    module = plugin_module("badweight", _info=PluginInfo(name="badweight", version="1", config_model=Settings))
    with pytest.warns(UserWarning, match="(?s)badweight.*config model Settings.*defaults are not valid.*weight"):
        assert not PluginRegistry().register(module).loaded


def test_plugin_author_mistakes_get_a_pointed_message(plugin_module, monkeypatch):
    typo = plugin_module("typo", ragplugins_node_postprocesors=lambda: [])
    reg = PluginRegistry()
    reg.register(typo)
    with pytest.warns(UserWarning, match="'ragplugins_node_postprocesors', which no hookspec defines .did you mean "
                                         "'ragplugins_node_postprocessors'"):
        reg.check_pending()
    forgot = plugin_module("forgot")
    forgot.ragplugins_node_postprocessors = lambda: []  # no @hookimpl
    with pytest.warns(UserWarning, match="'forgot' defines ragplugins_node_postprocessors without "
                                         "@ragplugins.hookimpl"):
        assert PluginRegistry().register(forgot).loaded
    _module(monkeypatch, "good_plugin", "NAME='good'\n" + GOOD)
    _fake_entry_points(monkeypatch, {"good": "good_plugin"})
    with pytest.warns(UserWarning, match=f"{ENV_VAR} names 'goood', but no plugin of that name is installed "
                                         r"\(did you mean 'good'\?\)"):
        reg = PluginRegistry.discover(env={ENV_VAR: "goood"})
    assert [r.error for r in reg.all_records()] == [f"left out by {ENV_VAR}"]


class Stamp(TransformComponent):
    @classmethod
    def class_name(cls):
        return "tests.Stamp"

    def __call__(self, nodes, **kwargs):
        for node in nodes:
            node.metadata["stamp"] = "x"
        return nodes


def test_the_conformance_kit_catches_undeclared_metadata_and_failing_instruments(plugin_module, tmp_path,
                                                                                  bundled_embed_model):
    from ragplugins import MetadataKey
    from ragplugins.testing import PluginConformance

    stamp = lambda config, ctx: [Contribution(Stamp(), stage="post_split")]  # noqa: E731

    def check(module, where):
        kit = type("Kit", (PluginConformance,), {"plugin": module})()
        kit.test_index_and_search_on_tiny_corpus(tmp_path / where, bundled_embed_model)

    declared = PluginInfo(name="stamper", version="1", metadata_keys={"stamp": MetadataKey()})
    check(plugin_module("stamper", _info=declared, ragplugins_transformations=stamp), "ok")
    with pytest.raises(AssertionError, match=r"not declared in PluginInfo.metadata_keys: \['stamp'\]"):
        check(plugin_module("stamper", ragplugins_transformations=stamp), "undeclared")
    with pytest.raises(PluginError, match="plugin 'gauge' failed in ragplugins_eval_instrument: RuntimeError: boom"):
        check(plugin_module("gauge", ragplugins_eval_instrument=lambda: _raising(None, None)), "instrument")


def test_an_entry_point_named_otherwise_than_its_plugin_is_refused_with_both_names(plugin_module):
    reg = PluginRegistry()
    record = reg.register(plugin_module("recent"), name="recency", entry_point="ragplugins_recency.plugin")
    assert not record.loaded and "recent" not in reg.records
    assert "its entry point is named 'recency' but its PluginInfo says name='recent'; make them the same" \
        in record.error
    # Registered by hand (no entry point), the name given is only pluggy's.
    assert PluginRegistry().register(plugin_module("recent"), name="anything").loaded


def test_a_hook_argument_the_hookspec_lacks_names_what_the_hook_takes(plugin_module):
    record = PluginRegistry().register(plugin_module("typo", ragplugins_transformations=lambda conf, ctx: []))
    assert not record.loaded
    assert "{'conf'}" in record.error and "ragplugins_transformations takes (config, ctx)" in record.error


def test_metadata_a_plugin_writes_without_declaring_it_is_named_at_index_time(plugin_module, tiny_corpus, tmp_path,
                                                                              bundled_embed_model):
    # Undeclared keys go into the embedded text; only the conformance kit said so before.
    stamp = lambda config, ctx: [Contribution(Stamp(), stage="post_split")]  # noqa: E731
    rag = make_rag([plugin_module("stamper", ragplugins_transformations=stamp)], embed_model=bundled_embed_model,
                   persist_dir=tmp_path / "a")
    with pytest.warns(UserWarning, match=r"plugin 'stamper' wrote metadata keys it does not declare \(stamp\)"):
        rag.index_paths([tiny_corpus])
    declared = PluginInfo(name="stamper", version="1", metadata_keys={"stamp": MetadataKey()})
    rag = make_rag([plugin_module("stamper", _info=declared, ragplugins_transformations=stamp)],
                   embed_model=bundled_embed_model, persist_dir=tmp_path / "b")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        rag.index_paths([tiny_corpus])
    assert not [w for w in seen if "does not declare" in str(w.message)]
