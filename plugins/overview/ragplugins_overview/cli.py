"""``ragplugins overview show|rebuild``."""

from __future__ import annotations

import click


def _overview_app(ctx: click.Context):
    from ragplugins.api import load_app

    rp = load_app(ctx)
    if "overview" not in rp.config.enabled:
        raise click.UsageError("the overview plugin is not enabled: add \"overview\" to enable = [...] in "
                               f"[ragplugins] ({rp.config.source})")
    return rp


@click.group("overview")
def overview_group() -> None:
    """Document overviews (the overview plugin)."""


@overview_group.command("show")
@click.argument("doc_ids", nargs=-1)
@click.pass_context
def show_cmd(ctx: click.Context, doc_ids: tuple[str, ...]) -> None:
    """Print the stored overview of each document (or of DOC_IDS)."""
    from ragplugins_overview.sidecar import SidecarError, location_for

    rp = _overview_app(ctx)
    location = location_for(rp.context(rp.index()))
    try:
        overviews = location.read()
    except SidecarError as exc:
        raise click.ClickException(f"the sidecar {location.label} is not usable: {exc}; run "
                                   "`ragplugins overview rebuild`") from exc
    if overviews is None:
        raise click.ClickException(f"no overviews at {location.label}; run `ragplugins index PATH` with the "
                                   "plugin enabled, or `ragplugins overview rebuild`")
    entries = overviews.entries()
    missing = [d for d in doc_ids if d not in entries]
    if missing:
        raise click.ClickException(f"no overview for {', '.join(missing)}; known documents: "
                                   f"{', '.join(sorted(entries)) or 'none'}")
    for doc_id in doc_ids or sorted(entries):
        _, text, source, _ = entries[doc_id]
        click.echo(f"{doc_id} ({source})\n  {text}\n")


@overview_group.command("rebuild")
@click.pass_context
def rebuild_cmd(ctx: click.Context) -> None:
    """Write every overview again from the indexed chunks (after changing how overviews are written)."""
    from ragplugins_overview.build import rebuild

    report = rebuild(_overview_app(ctx))
    click.echo(f"{len(report.written)} overviews written to {report.location}")
