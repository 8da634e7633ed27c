"""Hook implementations of the crossref plugin."""

from __future__ import annotations

import ragplugins
from ragplugins.nodes import tags
from ragplugins_crossref import __version__, hookspecs
from ragplugins_crossref.backfill import backfill, stale_references
from ragplugins_crossref.config import CrossrefConfig
from ragplugins_crossref.families import BUILTIN_FAMILIES, ReferenceFamily
from ragplugins_crossref.hop import CrossrefHop
from ragplugins_crossref.resolve import DOC_KEY, REFS_KEY
from ragplugins_crossref.transform import CrossrefExtractor


@ragplugins.hookimpl
def ragplugins_addhooks(pluginmanager):
    pluginmanager.add_hookspecs(hookspecs)


@ragplugins.hookimpl
def ragplugins_plugin_info():
    return ragplugins.PluginInfo(
        name="crossref", version=__version__, config_model=CrossrefConfig,
        description="References between documents, resolved at index time and followed at query time.",
        metadata_keys={
            REFS_KEY: ragplugins.MetadataKey(str, description="JSON list of the chunk's references "
                                                               "{kind, ref, text, target, how[, chunk]}"),
            DOC_KEY: ragplugins.MetadataKey(str, description="JSON profile of the document (names, labels, "
                                                              "sections, claims), on its first chunk"),
        })


def families(config: CrossrefConfig, pluginmanager=None) -> list[ReferenceFamily]:
    """The built-in table, then families from other plugins' hook, then the config's."""
    out = list(BUILTIN_FAMILIES)
    if pluginmanager is not None and hasattr(pluginmanager.hook, "ragplugins_crossref_families"):
        for result in pluginmanager.hook.ragplugins_crossref_families():
            out.extend(result or [])
    out.extend(spec.build() for spec in config.families)
    return out


def extractor(config: CrossrefConfig, ctx) -> CrossrefExtractor:
    return CrossrefExtractor(families=families(config, getattr(ctx, "pluginmanager", None)), ctx=ctx,
                             max_refs_per_chunk=config.max_refs_per_chunk,
                             aliases=config.aliases)


@ragplugins.hookimpl
def ragplugins_transformations(config: CrossrefConfig, ctx):
    if not config.extract:
        return []
    return [ragplugins.Contribution(extractor(config, ctx), stage="post_split")]


@ragplugins.hookimpl
def ragplugins_after_index(config: CrossrefConfig, ctx, nodes, deleted_doc_ids):
    if config.extract:
        backfill(ctx, extractor(config, ctx), {n.ref_doc_id for n in nodes}, list(deleted_doc_ids))


@ragplugins.hookimpl
def ragplugins_check_index(config: CrossrefConfig, ctx):
    return stale_references(ctx, extractor(config, ctx)) if config.extract else []


@ragplugins.hookimpl
def ragplugins_node_postprocessors(config: CrossrefConfig, ctx):
    if not config.hop or config.max_hops < 1:
        return []
    hop = CrossrefHop(ctx=ctx, max_hops=config.max_hops, chunks_per_hop=config.chunks_per_hop,
                      trigger_depth=config.trigger_depth, gate=config.gate, placement=config.placement,
                      window=config.window,
                      aliases=config.aliases)
    return [ragplugins.Contribution(hop, stage="expand")]


@ragplugins.hookimpl
def ragplugins_eval_instrument(config: CrossrefConfig, trace, row, first_stage, final, is_relevant):
    decision = trace.get("crossref", "hop") if trace is not None else None
    if not config.hop or decision is None:
        return {}
    added = [n for n in final if "crossref" in tags(n)]
    fired = bool(added)
    sources = set(getattr(row, "expected_sources", None) or [])
    reached = {tags(n)["crossref"]["target"] for n in added}
    return {
        "fired": fired,
        "targets_considered": len(decision.get("considered", [])),
        "chunks_added": len(added),
        # Of the queries where the hop fired: did it reach a document holding the answer?
        "hit_expected_source": bool(reached & sources) if fired and sources else None,
        "hopped_relevant_share": sum(1 for n in added if is_relevant(n.node.get_content())) / len(added)
        if fired else None,
    }
