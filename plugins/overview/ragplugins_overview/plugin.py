"""Hook implementations of the overview plugin."""

from __future__ import annotations

from collections import Counter
from functools import partial
from typing import Any

from ragplugins import api
from ragplugins_overview import __version__
from ragplugins_overview.build import require_llm, stale_overviews, update_overviews
from ragplugins_overview.config import OverviewConfig
from ragplugins_overview.retriever import OverviewRetriever
from ragplugins_overview.sidecar import SidecarError, location_for


@api.hookimpl
def ragplugins_plugin_info():
    return api.PluginInfo(
        name="overview", version=__version__, config_model=OverviewConfig,
        description="One overview per document, scored against each query to boost (or restrict) the first "
                    "stage towards the documents that match.")


@api.hookimpl
def ragplugins_transformations(config: OverviewConfig, ctx: api.RagContext):
    # Contributes no transformation; asked for before a batch is written, it is the place to refuse
    # an 'llm' overview without an LLM before anything reaches the index.
    require_llm(config, ctx)
    return []


@api.hookimpl
def ragplugins_after_index(config: OverviewConfig, ctx: api.RagContext, nodes, deleted_doc_ids):
    # Deleted documents need no list of their own: the sidecar is compared with the index as it is now.
    update_overviews(config, ctx, nodes)


@api.hookimpl
def ragplugins_index_summary(config: OverviewConfig, ctx: api.RagContext):
    # Said after every write, as crossref's line is: a new user's eval printed nothing for overview and could not
    # tell a plugin that wrote its overviews from one that did nothing.
    location = location_for(ctx)
    try:
        overviews = location.read()
    except SidecarError as exc:
        return f"overview: its overviews at {location.label} cannot be read ({exc}); `ragplugins prepare` rewrites them"
    documents = len(ctx.list_documents())
    if overviews is None or not len(overviews):
        return f"overview: no overviews for {documents} indexed documents; `ragplugins prepare` writes them"
    written = Counter(overviews.sources)
    line = (f"overview: {len(overviews)} overviews of {documents} indexed documents ("
            + ", ".join(f"{n} {source}" for source, n in written.most_common()) + ")")
    if documents < 2:
        line += "; with one document there is nothing for them to choose between, and no query is steered"
    return line


@api.hookimpl
def ragplugins_check_index(config: OverviewConfig, ctx: api.RagContext):
    return stale_overviews(config, ctx)


@api.hookimpl
def ragplugins_retriever_wrappers(config: OverviewConfig, ctx: api.RagContext):
    return [api.Contribution(partial(OverviewRetriever, ctx=ctx, config=config), stage="first_stage")]


def _first_relevant(ids: list[str], relevant: dict[str, bool]) -> int | None:
    return next((i + 1 for i, node_id in enumerate(ids) if relevant.get(node_id)), None)


@api.hookimpl
def ragplugins_eval_instrument(config: OverviewConfig, trace, row, first_stage, final, is_relevant):
    select = trace.get("overview", "select")
    if select is None:
        return {}
    out: dict[str, Any] = {"applied": bool(select.get("applied")), "scoring_ms": select.get("scoring_ms"),
                           "documents_selected": len(select.get("documents", [])),
                           "best_z": (select.get("best") or {}).get("z")}
    selected = {d["doc_id"] for d in select.get("documents", [])}
    sources = set(getattr(row, "expected_sources", None) or [])
    out["answer_document_selected"] = bool(sources & selected) if sources and selected else None
    steps = [s for s in (trace.get("overview", a) for a in ("restrict", "add", "boost")) if s]
    step = next((s for s in steps if s.get("applied")), steps[0] if steps else {})
    before, after = step.get("before"), step.get("after")
    relevant = {n.node.node_id: is_relevant(n.node.get_content()) for n in first_stage}
    out["first_relevant_moved"] = None
    if step.get("applied") and before and after and set(before) <= set(relevant):
        was, now = _first_relevant(before, relevant), _first_relevant(after, relevant)
        if was is not None and now is not None:
            out["first_relevant_moved"] = was - now  # positive: moved up
    if config.mode in ("restrict", "adaptive"):
        out["chunks_added"] = len(step.get("added", []))
        out["search_ms"] = step.get("search_ms")
    if config.mode == "restrict":
        out["restrict_applied"] = bool(step.get("applied"))
    return out


@api.hookimpl
def ragplugins_register_commands(cli):
    from ragplugins_overview.cli import overview_group

    cli.add_command(overview_group)
