"""Hook specifications: the whole contract between ragplugins and a plugin.

Every hook is called with keyword arguments; an implementation may accept any
subset of them. ``config`` is always the calling plugin's own validated config
model instance and ``ctx`` the :class:`ragplugins.context.RagContext`.

Hooks that contribute components return a list of
:class:`ragplugins.contributions.Contribution`; the core sorts them by
(stage, order, plugin name), so registration order never decides behaviour.
"""

from __future__ import annotations

import pluggy

PROJECT = "ragplugins"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec(historic=True)
def ragplugins_addhooks(pluginmanager):
    """Add a plugin's own hook specifications (so third parties can extend that plugin)."""


@hookspec
def ragplugins_plugin_info():
    """Describe the plugin: a PluginInfo with name, version, config model and metadata keys."""


@hookspec
def ragplugins_check_config(config, pluginmanager, core):
    """Problems with this plugin's config that its model cannot see, such as a name that other
    plugins' hooks resolve: a list of messages naming the key and the value ([] when fine). ``core``
    is the core settings (``top_k`` ...) the plugin will run under; a setting that works but cannot
    do what it is for is a ``warnings.warn``, not a problem. Run by ``ragplugins.load`` (so
    ``ragplugins config check`` too), before any index or model is opened."""


@hookspec
def ragplugins_transformations(config, ctx):
    """Contribute index-time TransformComponents (stages: pre_split, post_split). Each Contribution says
    where it may run (``scope``): "chunk" when it works on any batch of whole documents, so indexing on
    Ray (ragplugins.executors) runs it in the workers; "corpus" (the default) when it must see every
    document of the run at once, so it runs once, in the indexing process."""


@hookspec
def ragplugins_after_index(config, ctx, nodes, deleted_doc_ids):
    """React after a batch was written to the store (sidecars, late reference resolution). Runs once per
    write, in the indexing process; after a run on Ray, which writes many batches, ``nodes`` is empty and,
    as on ``check --repair``, the plugin brings its state in line with the index as it is."""


@hookspec
def ragplugins_index_summary(config, ctx):
    """One line on what this plugin made of the index as it now is, said by ``ragplugins index`` after a write
    ("crossref: 13 references in 33 documents, none resolved to another indexed document"): a string, or None
    when there is nothing to say. Read from what the plugin stored, not worked out again."""


@hookspec
def ragplugins_check_index(config, ctx):
    """Problems with what this plugin keeps for the index (a sidecar, metadata it writes): a list of
    messages ([] when in line with the rows). Run by ``ragplugins check``; ``--repair`` then calls
    ``ragplugins_after_index`` with an empty batch, which must bring the plugin's state in line."""


@hookspec
def ragplugins_retriever_wrappers(config, ctx):
    """Contribute callables BaseRetriever -> BaseRetriever (stages: first_stage, sufficiency)."""


@hookspec
def ragplugins_node_postprocessors(config, ctx):
    """Contribute BaseNodePostprocessors (stages: rerank, expand, finalize)."""


@hookspec
def ragplugins_query_engine_wrappers(config, ctx):
    """Contribute callables BaseQueryEngine -> BaseQueryEngine (stage: verify)."""


@hookspec
def ragplugins_eval_instrument(config, trace, row, first_stage, final, is_relevant):
    """Return this plugin's per-query measurements for ``ragplugins eval`` (a dict of numbers/bools/None)."""


@hookspec
def ragplugins_register_commands(cli):
    """Add click subcommands to the ``ragplugins`` command group."""


@hookspec
def ragplugins_store_adapters():
    """Offer StoreAdapter subclasses (ragplugins.stores) for vector stores the core does not know: a list
    of classes, each with a ``handles(vector_store) -> bool`` classmethod. Asked of every registered
    plugin (enabled or not) when an index is opened; the first class that handles the store serves it,
    the plugins' before the built-in ones. See docs/stores.md."""
