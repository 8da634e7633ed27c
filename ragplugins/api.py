"""The plugin API: the one module a ragplugins plugin imports from (its tests may also use
``ragplugins.testing``). Everything else in ``ragplugins`` is the core's own and may change.

Declaring a plugin
    ``hookimpl`` (mark hook implementations), ``hookspec`` and ``PROJECT`` (for a plugin's own hooks,
    added in ``ragplugins_addhooks``), ``PluginInfo``, ``MetadataKey``, ``NoConfig``,
    ``Contribution`` and ``STAGES`` (where a contribution may go), ``check_prompt_template`` (a
    config validator for prompt strings), ``QUERY_TIME`` (``Field(..., json_schema_extra=QUERY_TIME)`` marks a
    config field the index never depends on, so ``ragplugins eval`` shares an index across such settings).

What every hook receives
    ``RagContext`` (``ctx``: models, index, documents, searches under the host's filters, caches),
    ``DocumentInfo`` (``ctx.list_documents()``), ``Trace`` (``ragplugins_eval_instrument``'s
    ``trace``), ``not_prepared`` (the reason to give when the index lacks what the plugin's
    index-time step writes).

Nodes at query time
    ``annotate``/``annotation`` and ``tag``/``tags`` (per-query notes on a copy of a node, hidden
    from embed and LLM text), ``hide_metadata`` (keep metadata keys out of embed and LLM text),
    ``cosine``, ``query_cosine``, ``dense_cosine``, ``document_name``, ``document_label``,
    ``rrf_score`` and ``RRF_K`` (the core's reciprocal-rank fusion constant), ``passage_members`` (the
    chunks a first-stage result joins: neighbouring chunks that both rank come back as one passage, the
    core's ``merge_adjacent``; a chunk a plugin adds that is already one of them is already in the list).
    ``CHUNK_INDEX_KEY`` (a chunk's position in its document, from 0) and ``DOC_HASH_KEY`` (its
    document's content hash) are the metadata keys the core writes on every chunk it indexes;
    ``anchor_names`` reads the anchors of an HTML page (its ids) that begin in a chunk; ``UNDERLINE`` matches a
    line of one repeated mark, the rule under (or over) a reStructuredText, AsciiDoc or setext title;
    ``ANNOTATION_KEY`` is where ragplugins keeps its notes (``node.metadata`` and
    ``response.metadata``).

Recording what a plugin did
    ``record_decision`` (the one schema ``ragplugins query``, the demo and eval read: plugin,
    action, changed, reason, numbers), ``record`` (free-form details for ``--trace`` and the
    plugin's own eval instrument), ``timed``, ``Decision``.

Running components on their own
    ``query_scope`` (a query's trace and inputs around a component run outside ragplugins' own
    retriever or engine, with the host's filters).

Extending a plugin by name
    ``named_extensions`` (signals, strategies, decomposers, backends: one provider per name),
    ``Extension``, ``DuplicateExtensionError``.

Loading the app
    ``load`` (Python), ``load_app`` (a plugin's click command: the same config, models and plugins
    as every ``ragplugins`` command), ``RagPlugins``.

Gold sets
    ``load_gold``, ``GoldRow``, ``hit`` (a command that measures on the user's questions, as
    ``ragplugins eval`` does).

Stores
    ``StoreAdapter`` (subclass it, and return the class from ``ragplugins_store_adapters``, to support
    another vector store: docs/stores.md), ``StateError`` (plugin state that cannot be read or written;
    a plugin keeps its state with ``ctx.state(plugin)``), ``ChunkRow`` (a stored chunk without its vector:
    what ``ctx.cached_for_query`` builds over).

Errors
    ``RagPluginsError`` (raise a subclass for a problem the user can act on: the CLI prints it as
    one line), ``ConfigError``, ``PluginError``, ``InputError``, ``StoreError``,
    ``MissingDependencyError``.

Names are imported when first used, so importing this module costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragplugins.lazy import lazy_exports

_EXPORTS = {
    # declaring a plugin
    "hookimpl": "ragplugins.hookspecs", "hookspec": "ragplugins.hookspecs", "PROJECT": "ragplugins.hookspecs",
    "PluginInfo": "ragplugins.contributions", "MetadataKey": "ragplugins.contributions",
    "NoConfig": "ragplugins.contributions", "Contribution": "ragplugins.contributions",
    "STAGES": "ragplugins.contributions", "QUERY_TIME": "ragplugins.contributions",
    "changed_settings": "ragplugins.contributions", "short_value": "ragplugins.contributions",
    "check_prompt_template": "ragplugins.config",
    # what hooks receive
    "RagContext": "ragplugins.context", "DocumentInfo": "ragplugins.context", "not_prepared": "ragplugins.context",
    "CHUNK_INDEX_KEY": "ragplugins.context", "DOC_HASH_KEY": "ragplugins.context", "Trace": "ragplugins.trace",
    "anchor_names": "ragplugins.anchors", "UNDERLINE": "ragplugins.markup_lines",
    "in_code_fences": "ragplugins.markup_lines",
    # nodes
    "annotate": "ragplugins.nodes", "annotation": "ragplugins.nodes", "tag": "ragplugins.nodes",
    "tags": "ragplugins.nodes", "hide_metadata": "ragplugins.nodes", "cosine": "ragplugins.nodes",
    "query_cosine": "ragplugins.nodes", "dense_cosine": "ragplugins.nodes", "document_name": "ragplugins.nodes",
    "document_label": "ragplugins.nodes", "ANNOTATION_KEY": "ragplugins.nodes",
    "passage_members": "ragplugins.passages", "RRF_K": "ragplugins.search",
    # recording
    "record_decision": "ragplugins.trace", "record": "ragplugins.trace", "timed": "ragplugins.trace",
    "Decision": "ragplugins.trace",
    # extensions
    "named_extensions": "ragplugins.extensions", "Extension": "ragplugins.extensions",
    "DuplicateExtensionError": "ragplugins.extensions",
    # loading
    "load": "ragplugins.app", "RagPlugins": "ragplugins.app", "load_app": "ragplugins.cli",
    # gold sets (a plugin command that measures on the user's questions, as ``ragplugins eval`` does)
    "load_gold": "ragplugins.eval", "GoldRow": "ragplugins.eval", "hit": "ragplugins.eval",
    # stores (plugin state beside the index: ``ctx.state(plugin)``; adapters for third-party stores)
    "StoreAdapter": "ragplugins.stores", "StateError": "ragplugins.stores", "ChunkRow": "ragplugins.stores",
    # errors
    "RagPluginsError": "ragplugins.errors", "ConfigError": "ragplugins.errors", "PluginError": "ragplugins.errors",
    "InputError": "ragplugins.errors", "StoreError": "ragplugins.errors",
    "MissingDependencyError": "ragplugins.errors", "SettingNote": "ragplugins.errors",
}

__all__ = sorted([*_EXPORTS, "query_scope", "rrf_score"])

if TYPE_CHECKING:
    from ragplugins.anchors import anchor_names
    from ragplugins.app import RagPlugins, load
    from ragplugins.cli import load_app
    from ragplugins.config import check_prompt_template
    from ragplugins.context import CHUNK_INDEX_KEY, DOC_HASH_KEY, DocumentInfo, RagContext, not_prepared
    from ragplugins.contributions import (
        QUERY_TIME,
        STAGES,
        Contribution,
        MetadataKey,
        NoConfig,
        PluginInfo,
        changed_settings,
        short_value,
    )
    from ragplugins.errors import (
        ConfigError,
        InputError,
        MissingDependencyError,
        PluginError,
        RagPluginsError,
        StoreError,
    )
    from ragplugins.eval import GoldRow, hit, load_gold
    from ragplugins.extensions import DuplicateExtensionError, Extension, named_extensions
    from ragplugins.hookspecs import PROJECT, hookimpl, hookspec
    from ragplugins.markup_lines import UNDERLINE, in_code_fences
    from ragplugins.nodes import (
        ANNOTATION_KEY,
        annotate,
        annotation,
        cosine,
        dense_cosine,
        document_label,
        document_name,
        hide_metadata,
        query_cosine,
        tag,
        tags,
    )
    from ragplugins.passages import passage_members
    from ragplugins.search import RRF_K
    from ragplugins.stores import ChunkRow, StateError, StoreAdapter
    from ragplugins.trace import Decision, Trace, record, record_decision, timed


def rrf_score(rank: int) -> float:
    """The reciprocal-rank-fusion share of a result at ``rank`` (1 = first), with the core's constant:
    ``1 / (RRF_K + rank)``; sum it over the lists a result appears in."""
    from ragplugins.search import RRF_K
    from ragplugins.stores import StateError, StoreAdapter

    return 1.0 / (RRF_K + rank)


def query_scope(query: str = "", *, filters: Any, top_k: int | None = None, filters_given: bool = True):
    """Run plugin components on their own as one query: opens (or joins) the query's trace and its
    inputs, with ``filters`` the host's retriever applies (say None when it applies none: there is no
    default, since a plugin searches the index with them) and the first stage's ``top_k``; yields the
    Trace. ``filters_given=False``: the host's filters are not known,
    so no plugin searches the index. ragplugins' retriever, engine and ``rp.search`` do this
    themselves."""
    from contextlib import contextmanager

    from ragplugins import query_inputs, trace

    @contextmanager
    def scope():
        given = filters if filters_given else query_inputs.NOT_GIVEN
        with query_inputs.scope(top_k=top_k, filters=given) as (inputs, opened), trace.scope(query) as tr:
            if opened and not filters_given:
                inputs.unknown("the host's filters were not given to query_scope(filters=...)")
            yield tr

    return scope()


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
