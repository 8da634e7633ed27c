"""Hook implementations of the crossref plugin."""

from __future__ import annotations

from ragplugins import api
from ragplugins_crossref import __version__, hookspecs
from ragplugins_crossref.backfill import backfill, stale_references
from ragplugins_crossref.config import CrossrefConfig
from ragplugins_crossref.families import BUILTIN_FAMILIES, ReferenceFamily
from ragplugins_crossref.hop import PLUGIN, CrossrefHop
from ragplugins_crossref.resolve import DOC_KEY, REFS_KEY, reference_counts
from ragplugins_crossref.transform import CrossrefExtractor


@api.hookimpl
def ragplugins_addhooks(pluginmanager):
    pluginmanager.add_hookspecs(hookspecs)


@api.hookimpl
def ragplugins_plugin_info():
    return api.PluginInfo(
        name="crossref", version=__version__, config_model=CrossrefConfig,
        description="References between documents, resolved at index time and followed at query time.",
        metadata_keys={
            REFS_KEY: api.MetadataKey(str, description="JSON list of the chunk's references "
                                                               "{kind, ref, text, target, how[, chunk]}"),
            DOC_KEY: api.MetadataKey(str, description="JSON profile of the document (names, labels, "
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


@api.hookimpl
def ragplugins_transformations(config: CrossrefConfig, ctx: api.RagContext):
    if not config.extract:
        return []
    # Parallel-safe: references to documents outside the batch resolve in ragplugins_after_index (backfill).
    return [api.Contribution(extractor(config, ctx), stage="post_split", scope="chunk")]


@api.hookimpl
def ragplugins_after_index(config: CrossrefConfig, ctx: api.RagContext, nodes, deleted_doc_ids):
    if config.extract:
        backfill(ctx, extractor(config, ctx), nodes, list(deleted_doc_ids))


@api.hookimpl
def ragplugins_index_summary(config: CrossrefConfig, ctx: api.RagContext):
    if not config.extract:
        return None
    # Said after every write: a folder whose documents name each other in a way no family reads (a new user's
    # lighttpd pages: "mod_setenv") gave the hop nothing to follow, and only each query's decision said so.
    found = reference_counts(ctx.store.iter_chunk_rows([REFS_KEY]))
    if not found.total:
        return f"{PLUGIN}: no references found in {found.documents} documents"
    line = (f"{PLUGIN}: {found.total} references in {found.documents} documents, {found.elsewhere} resolved to "
            f"another indexed document, {found.within} to a place of their own")
    if not found.elsewhere:
        line += ("; no pointer to another document for the hop to follow: name the documents these references use "
                 "as `aliases`, or add a family (plugins/crossref/README.md)")
    return line


@api.hookimpl
def ragplugins_register_commands(cli):
    from ragplugins_crossref.cli import crossref_group

    cli.add_command(crossref_group)


@api.hookimpl
def ragplugins_check_index(config: CrossrefConfig, ctx: api.RagContext):
    return stale_references(ctx, extractor(config, ctx)) if config.extract else []


@api.hookimpl
def ragplugins_node_postprocessors(config: CrossrefConfig, ctx: api.RagContext):
    if not config.hop or config.max_hops < 1:
        return []
    hop = CrossrefHop(ctx=ctx, max_hops=config.max_hops, chunks_per_hop=config.chunks_per_hop,
                      trigger_depth=config.trigger_depth, gate=config.gate, placement=config.placement,
                      window=config.window, reading=config.reading,
                      aliases=config.aliases)
    return [api.Contribution(hop, stage="expand")]


@api.hookimpl
def ragplugins_eval_instrument(config: CrossrefConfig, trace, row, first_stage, final, is_relevant):
    decision = trace.get("crossref", "hop") if trace is not None else None
    if not config.hop or decision is None:
        return {}
    added = [n for n in final if "crossref" in api.tags(n)]
    fired = bool(added)
    reached = {api.tags(n)["crossref"]["target"] for n in added}
    # The section, entry or heading a followed reference names ("#the-stack-and-the-heap", a Sphinx role).
    named = {chunk for p in decision.get("considered", []) if p.get("outcome") == "followed"
             for chunk in [p.get("section_chunk"), *(p.get("declared_chunks") or [])] if chunk}
    listed = {member for n in final for member in api.passage_members(n)}
    return {
        "fired": fired,
        "targets_considered": len(decision.get("considered", [])),
        "chunks_added": len(added),
        # Of the queries where the hop fired: did it reach a document holding the answer?
        # A row names a page by its file ("sso.html") where the index's id holds its folder ("guide/sso.html").
        "hit_expected_source": any(map(row.is_source, reached)) if fired and row.expected_sources else None,
        "hopped_relevant_share": sum(1 for n in added if is_relevant(n.node.get_content())) / len(added)
        if fired else None,
        # Of those where a followed reference named a place in its document: is that place in the final list?
        "named_place_in_list": bool(named & listed) if fired and named else None,
    }
