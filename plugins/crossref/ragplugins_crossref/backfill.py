"""After a batch is stored: bring the stored chunks' references up to date.

A reference written before its target was indexed ("see the Closing Checklist"
when the checklist arrives in a later batch) resolves now; a reference to a
deleted document goes back to ``null``. Only metadata changes (through
``ctx.update_metadata``): no text is rewritten and nothing is re-embedded.

Only the documents a write can affect are read and resolved again: those it wrote, and those
whose references depend on what it changed (corpus_state). Their result is what resolving the
whole collection gives. When no record vouches for any document, and for ``stale_references``
(``ragplugins check``), every chunk is resolved again, streamed from the store (collection).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.schema import BaseNode

from ragplugins import api
from ragplugins_crossref.collection import Patches, PatchGroups, resolve_stored
from ragplugins_crossref.corpus_state import Change, DocRecord, StateLocation, changes, take_extracted
from ragplugins_crossref.resolve import DOC_KEY, Annotation
from ragplugins_crossref.scan import Profile
from ragplugins_crossref.transform import (
    CrossrefExtractor,
    chunk_metadata,
    doc_records,
    group_by_document,
    is_partial,
    run_annotation,
)

# Indexes ``stale_references`` found out of line in this process: the next after-index step (check
# --repair's) resolves every document, whatever the state says.
_OUT_OF_LINE: set[str] = set()


def backfill(ctx: api.RagContext, extractor: CrossrefExtractor, nodes: Sequence[BaseNode], deleted: list[str]) -> int:
    """Re-resolve the documents this write can affect and patch the chunks whose stored references changed."""
    location = StateLocation(ctx)
    made_with = extractor.made_with
    extracted = take_extracted(location.index_id, made_with)
    full = location.index_id in _OUT_OF_LINE
    state = None if full else location.read(made_with)
    indexed = ctx.list_documents()
    batch, _ = group_by_document(nodes)

    # The record that describes each document as stored: the state's while its content is unchanged, or
    # the one this process's extractor made for the chunks just written; the others are read and resolved.
    records: dict[str, DocRecord] = {}
    bases: list[dict[str, Profile]] = [{d: r.profile for d, r in (state or {}).items()}]
    base_of: dict[str, int] = {}
    for d, r in (state or {}).items():
        info = indexed.get(d)
        if info is not None and d not in batch and info.doc_hash and r.doc_hash == info.doc_hash \
                and set(r.node_ids) == set(info.node_ids) and not is_partial(info.metadata.get(DOC_KEY)):
            records[d], base_of[d] = r, 0
    if not full:
        for e in extracted:
            bases.append(e.base)
            for d, r in e.records.items():
                info = indexed.get(d)
                if d in batch and info is not None and r.doc_hash == (info.doc_hash or "") \
                        and set(r.node_ids) == set(info.node_ids):
                    records[d], base_of[d] = r, len(bases) - 1

    if indexed and not records:
        # Every document is resolved again: streamed from the store, a document at a time (collection).
        whole = resolve_stored(ctx.store, _chunk_ids(indexed), extractor, watch=True, write=ctx.update_metadata,
                               only=set(indexed))
        location.write(whole.records, made_with, extractor.settings)
        _OUT_OF_LINE.discard(location.index_id)
        api.record("crossref", "backfill", updated=whole.patched, documents=len(indexed), resolved=whole.resolved,
                   from_state=state is not None, deleted=list(deleted))
        return whole.patched

    profiles = {d: r.profile for d, r in records.items()}
    chunks: dict[str, list[BaseNode]] = {d: batch[d] for d in batch if d in indexed}
    todo = set(indexed) - set(records)
    ann: Annotation | None = None
    resolved: dict[str, list[BaseNode]] = {}
    tried: set[str] = set()
    checked: dict[int, Change] = {}
    new: dict[int, Change] = {}
    while True:
        if todo:
            tried |= todo
            _read(ctx, indexed, chunks, todo)
            docs, metadata = group_by_document([n for d in todo | set(resolved) for n in chunks.get(d, ())])
            for d in todo | set(resolved):
                profiles.pop(d, None)
            ann = run_annotation(docs, metadata, extractor.families, profiles, extractor.aliases,
                                 extractor.max_refs_per_chunk, watch=True)
            profiles.update(ann.profiles)
            resolved = docs
        # A record made against other profiles than the final ones holds while none of what it read changed
        # (checked again only against what the documents resolved since changed: their claims).
        changed: dict[int, Change] = {}
        todo = set()
        for d, r in records.items():
            if d in tried:
                continue
            i = base_of[d]
            if i not in changed:
                changed[i] = changes(bases[i], profiles, extractor.aliases)
                new[i] = changed[i].since(checked.get(i))
                checked[i] = changed[i]
            if r.depends_on(new[i]):
                todo.add(d)
        if not todo:
            break

    patches = _patches_for(resolved, ann) if ann is not None else {}
    groups = PatchGroups(ctx.update_metadata)
    for doc_chunks in resolved.values():
        groups.add({n.node_id: patches[n.node_id] for n in doc_chunks if n.node_id in patches})
    groups.flush()
    kept = {d: r for d, r in records.items() if d not in tried}   # those tried and holding no text are dropped
    if ann is not None:
        kept.update(doc_records(resolved, ann))
    location.write(kept, made_with, extractor.settings)
    _OUT_OF_LINE.discard(location.index_id)
    api.record("crossref", "backfill", updated=len(patches), documents=len(indexed), resolved=len(resolved),
               from_state=state is not None, deleted=list(deleted))
    return len(patches)


def _read(ctx: api.RagContext, indexed: dict[str, Any], chunks: dict[str, list[BaseNode]], doc_ids: set[str]) -> None:
    """Add the stored chunks of ``doc_ids`` not in ``chunks`` yet."""
    missing = [d for d in doc_ids if d not in chunks]
    if not missing:
        return
    for node in ctx.store.get_nodes([n for d in missing for n in indexed[d].node_ids]):
        chunks.setdefault(node.ref_doc_id or node.node_id, []).append(node)
    for d in missing:
        chunks.setdefault(d, [])


def _chunk_ids(indexed: dict[str, Any]) -> dict[str, list[str]]:
    return {d: info.node_ids for d, info in indexed.items()}


def _patches_for(docs: dict[str, list[BaseNode]], ann: Annotation) -> Patches:
    """The metadata each chunk of ``docs`` should hold after ``ann``, where it differs from what it holds."""
    patches: Patches = {}
    for doc_id, doc_chunks in docs.items():
        for i, node in enumerate(doc_chunks):
            want = chunk_metadata(ann.refs.get(node.node_id, []), ann.profiles[doc_id] if i == 0 else None)
            diff = {k: v for k, v in want.items() if node.metadata.get(k) != v}
            if diff:
                patches[node.node_id] = diff
    return patches


def stale_references(ctx: api.RagContext, extractor: CrossrefExtractor) -> list[str]:
    """``ragplugins check``: chunks whose stored references differ from resolving the index as it is now
    (a write stopped before this step, or documents deleted by another program)."""
    whole = resolve_stored(ctx.store, _chunk_ids(ctx.list_documents()), extractor, watch=False, write=None)
    if not whole.patched:
        return []
    _OUT_OF_LINE.add(ctx.index_id)
    if whole.never_annotated:
        # Stored before crossref was enabled, not spoilt: preparing the index is the remedy users look for.
        some = "" if whole.never_annotated == whole.documents else \
            f"{whole.never_annotated} of {whole.documents} documents were stored before crossref was enabled; "
        return [f"crossref: {some}{api.not_prepared('crossref')}"]
    stored = StateLocation(ctx).settings()
    changed = setting_changes(stored, extractor.settings) if stored is not None else []
    if changed:
        return [f"crossref: {whole.patched} chunks of {whole.documents} documents hold references made with other "
                f"settings than the config's ({'; '.join(changed)}); 'ragplugins check --repair' resolves them "
                "again with the config's"]
    return [f"crossref: {whole.patched} chunks of {whole.documents} documents hold references out of line with "
            "the index; 'ragplugins check --repair' resolves them again"]


def setting_changes(stored: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """How the settings the references were made with (``stored``) differ from the config's (``now``), by
    config key: "crossref.max_refs_per_chunk: 16 in the index, 4 in the config"."""
    out = []
    for key, (was, wanted) in api.changed_settings(stored, now).items():
        if key == "families":
            # A family is known by its name; its kind and pattern are too long to print.
            by_name = [dict(f.split(":", 1) for f in fams or []) for fams in (was, wanted)]
            names = ", ".join(api.changed_settings(*by_name))
            out.append(f"crossref.families: {names} differ between the index and the config")
        else:
            out.append(f"crossref.{key}: {api.short_value(was)} in the index, {api.short_value(wanted)} in the config")
    return out
