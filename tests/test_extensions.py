"""One rule for plugins that publish named extensions (retry signals and strategies, decompose
decomposers, verifier backends): a name has one provider, and a second one is an error naming both."""

import pluggy
import pytest

from ragplugins import api
from ragplugins.hookspecs import PROJECT


class Spec:
    @pluggy.HookspecMarker(PROJECT)
    def ragplugins_widgets(self, config):
        """Return widgets (objects with a name) or a {name: widget} dict."""


class Widget:
    def __init__(self, name):
        self.name = name


def provider(name, result):
    class Plugin:
        @api.hookimpl
        def ragplugins_widgets(self, config):
            return result
    plugin = Plugin()
    return plugin, name


def _pm(*plugins):
    pm = pluggy.PluginManager(PROJECT)
    pm.add_hookspecs(Spec)
    for plugin, name in plugins:
        pm.register(plugin, name=name)
    return pm


def test_extensions_by_name_with_their_origin():
    pm = _pm(provider("one", [Widget("a")]), provider("two", {"b": Widget("b")}))
    found = api.named_extensions(pm, "ragplugins_widgets", what="widget", kind=Widget,
                                 builtins=[Widget("base")], config=None)
    assert {n: e.origin for n, e in found.items()} == {"base": "built-in", "a": "one", "b": "two"}
    assert api.named_extensions(None, "ragplugins_widgets", what="widget", builtins={"x": 1}).keys() == {"x"}


def test_a_name_taken_twice_names_both_providers():
    pm = _pm(provider("one", [Widget("a")]), provider("two", [Widget("a")]))
    with pytest.raises(api.DuplicateExtensionError,
                       match="two widgets are named 'a': one from plugin 'one', one from plugin 'two'"):
        api.named_extensions(pm, "ragplugins_widgets", what="widget", config=None)
    with pytest.raises(ValueError, match="one from the built-ins, one from plugin 'one'"):
        api.named_extensions(_pm(provider("one", [Widget("a")])), "ragplugins_widgets", what="widget",
                             builtins=[Widget("a")], config=None)


def test_a_wrong_value_is_a_type_error_naming_the_provider():
    with pytest.raises(TypeError, match="widget 'a' from one is a str"):
        api.named_extensions(_pm(provider("one", {"a": "text"})), "ragplugins_widgets", what="widget",
                             kind=Widget, config=None)
    with pytest.raises(TypeError, match="of 'one' returned int without a name"):
        api.named_extensions(_pm(provider("one", [3])), "ragplugins_widgets", what="widget", config=None)


def _publisher(hook, value):
    class Publisher:
        @api.hookimpl
        def ragplugins_plugin_info(self):
            return api.PluginInfo(name="publisher", version="0")

    def impl(self, **kwargs):
        return value
    impl.__name__ = hook
    setattr(Publisher, hook, api.hookimpl(optionalhook=True)(impl))
    publisher = Publisher()
    publisher.__name__ = "publisher"  # registered as an entry point of that name would be
    return publisher


def test_the_three_plugins_share_the_duplicate_rule(tmp_path, bundled_embed_model):
    import ragplugins_decompose.plugin as decompose
    import ragplugins_retry.plugin as retry
    import ragplugins_verifier.plugin as verifier
    from ragplugins.testing import make_rag
    from ragplugins_decompose.decomposers.rules import RuleDecomposer
    from ragplugins_retry import QueryCoverageSignal

    cases = [
        (retry, "ragplugins_retry_signals", [QueryCoverageSignal()], "two retry signals are named 'query_coverage'"),
        (decompose, "ragplugins_decompose_decomposers", [RuleDecomposer()], "two decomposers are named 'rules'"),
        (verifier, "ragplugins_verifier_backends", {"fidelity": lambda config, ctx: None},
         "two verifier backends are named 'fidelity'"),
    ]
    for plugin, hook, value, message in cases:
        with pytest.raises(api.RagPluginsError, match=message + ".*one from .*'publisher'"):
            make_rag([plugin, _publisher(hook, value)], {"enable": [plugin.ragplugins_plugin_info().name]},
                     embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
