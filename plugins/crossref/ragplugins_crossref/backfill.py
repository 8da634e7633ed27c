"""After a batch is stored: bring every stored chunk's references up to date.

A reference written before its target was indexed ("see the Closing Checklist"
when the checklist arrives in a later batch) resolves now; a reference to a
deleted document goes back to ``null``. Only metadata changes (through
``ctx.update_metadata``): no text is rewritten and nothing is re-embedded.
"""

from __future__ import annotations

from typing import Any

from ragplugins import api
from ragplugins_crossref.resolve import DOC_KEY, REFS_KEY, dump_refs
from ragplugins_crossref.transform import CrossrefExtractor, group_by_document, run_annotation


def backfill(ctx: Any, extractor: CrossrefExtractor, batch_doc_ids: set[str], deleted: list[str]) -> int:
    """Re-resolve the whole collection and patch the chunks whose stored references changed."""
    documents = ctx.list_documents()
    if not deleted and set(documents) <= batch_doc_ids:
        # The batch was the whole collection: the extractor already saw every document.
        api.record("crossref", "backfill", updated=0, documents=len(documents), skipped="whole collection")
        return 0
    patches, docs = _patches(ctx, extractor)
    if patches:
        ctx.update_metadata(patches)
    api.record("crossref", "backfill", updated=len(patches), documents=len(docs), deleted=list(deleted))
    return len(patches)


def _patches(ctx: Any, extractor: CrossrefExtractor) -> tuple[dict[str, dict[str, str]], dict]:
    """The metadata each stored chunk should hold after resolving the whole collection, where it differs."""
    docs, metadata = group_by_document(ctx.all_nodes())
    ann = run_annotation(docs, metadata, extractor.families, {}, extractor.aliases, extractor.max_refs_per_chunk)
    patches: dict[str, dict[str, str]] = {}
    for doc_id, chunks in docs.items():
        for i, node in enumerate(chunks):
            want = {REFS_KEY: dump_refs(ann.refs.get(node.node_id, []))}
            if i == 0:
                want[DOC_KEY] = ann.profiles[doc_id].to_json()
            diff = {k: v for k, v in want.items() if node.metadata.get(k) != v}
            if diff:
                patches[node.node_id] = diff
    return patches, docs


def stale_references(ctx: Any, extractor: CrossrefExtractor) -> list[str]:
    """``ragplugins check``: chunks whose stored references differ from resolving the index as it is now
    (a write stopped before this step, or documents deleted by another program)."""
    patches, docs = _patches(ctx, extractor)
    if not patches:
        return []
    return [f"crossref: {len(patches)} chunks of {len(docs)} documents hold references out of line with the "
            "index; 'ragplugins check --repair' resolves them again"]
