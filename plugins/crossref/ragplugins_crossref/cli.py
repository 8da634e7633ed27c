"""``ragplugins crossref refs``: the references the plugin stored, as it resolved them (three new users read them out
of the index's table by hand to check what the hop would follow)."""

from __future__ import annotations

import json

import click

from ragplugins import api
from ragplugins_crossref.resolve import REFS_KEY, load_refs


@click.group("crossref")
def crossref_group() -> None:
    """References between documents (the crossref plugin)."""


@crossref_group.command("refs")
@click.argument("documents", nargs=-1)
@click.option("--unresolved", is_flag=True, help="Only the references resolved to no document.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per reference.")
@click.pass_context
def refs_cmd(ctx: click.Context, documents: tuple[str, ...], unresolved: bool, as_json: bool) -> None:
    """Print the references stored in every document (or in DOCUMENTS, ids as `query` shows them): the chunk each
    stands in, its words, and the document (and the place in it) it was resolved to, or "unresolved"."""
    rp = api.load_app(ctx)
    if "crossref" not in rp.config.enabled:
        raise click.UsageError("the crossref plugin is not enabled: add \"crossref\" to enable = [...] in "
                               f"[ragplugins] ({rp.config.source}) and index again")
    rows = list(rp.context(rp.index()).store.iter_chunk_rows([REFS_KEY, api.CHUNK_INDEX_KEY]))
    known = {row.doc_id for row in rows}
    missing = [d for d in documents if d not in known]
    if missing:
        raise click.ClickException(f"not in the index: {', '.join(missing)} ({len(known)} documents are; "
                                   "`ragplugins query QUESTION` shows their ids)")
    names = {row.id: _place(row.doc_id, row.metadata.get(api.CHUNK_INDEX_KEY)) for row in rows}
    wanted = sorted((r for r in rows if not documents or r.doc_id in documents),
                    key=lambda r: (str(r.doc_id), r.metadata.get(api.CHUNK_INDEX_KEY) or 0))
    shown = 0
    for row in wanted:
        for ref in load_refs(row.metadata.get(REFS_KEY)):
            if unresolved and ref.get("target"):
                continue
            place = names.get(str(ref.get("chunk") or ""), "")
            shown += 1
            if as_json:
                click.echo(json.dumps({"in": names[row.id], "words": ref.get("text"), "kind": ref.get("kind"),
                                       "target": ref.get("target"), "place": place or None, "how": ref.get("how")},
                                      ensure_ascii=False))
                continue
            target = place or ref.get("target") or "unresolved"
            click.echo(f"{names[row.id]}: {ref.get('text')!r} -> {target}"
                       + (f" ({ref['how']})" if ref.get("how") else ""))
    if not shown and not as_json:
        click.echo("no references stored" + (" in " + ", ".join(documents) if documents else "")
                   + ("" if rows and any(row.metadata.get(REFS_KEY) for row in rows) else
                      ": index the folder with crossref enabled"))


def _place(doc_id: object, position: object) -> str:
    return f"{doc_id}#{position}" if isinstance(position, int) else str(doc_id)
