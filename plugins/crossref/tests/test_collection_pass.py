"""The whole-collection pass (every document resolved again: a Ray build's after-index step, the state
missing, ``ragplugins check``) streams from the store a document at a time: it gives what resolving the
collection in memory gave (patches, stored metadata, state records, counts, the check's message), whatever
order the store yields the rows in, and never holds the collection's text."""

from __future__ import annotations

import random
import tracemalloc
from collections import defaultdict
from types import SimpleNamespace

import pytest
from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode

import ragplugins_crossref.backfill as backfill_module
from ragplugins import api
from ragplugins.api import ChunkRow, DocumentInfo
from ragplugins.testing import make_rag
from ragplugins_crossref import collection, plugin
from ragplugins_crossref.corpus_state import DocRecord, StateLocation, capitalised_words
from ragplugins_crossref.resolve import (
    DOC_KEY,
    REFS_KEY,
    Annotation,
    Reads,
    Registry,
    _owner_docs,
    cap_refs,
    dump_refs,
    resolve_ref,
)
from ragplugins_crossref.scan import RawRef, build_profile
from ragplugins_crossref.transform import chunk_texts, group_by_document

# Whose Exhibit C this is only the memo's claim says; the closing note relies on it. Section 5 is the
# agreement's by qualifier; the long file is several chunks.
EXTRA = {
    "07_acquisition_agreement.md": (
        "# Acquisition Agreement\n\nThe buyer acquires all shares of Helios Components B.V.\n\n"
        "## Section 5 Earnout\n\nThe earnout is paid in two instalments.\n"),
    "08_earnout_memo.md": (
        "# Earnout Memo\n\nExhibit C - Earnout Terms of the Acquisition Agreement sets the earnout at 4 million "
        "EUR. See Section 5 of the Acquisition Agreement and the Quality Plan.\n"),
    "09_closing_note.md": "# Closing Note\n\nThe earnout follows Exhibit C - Earnout Terms. Exhibit B applies.\n",
    "10_long_report.md": "# Supplier Audit Findings\n\n" + "".join(
        f"## Section {i} Finding {i}\n\nLot {i} was inspected under Section 4.3 of the Master Agreement and "
        f"priced per Exhibit B - Pricing; the Information Security Addendum was followed. "
        + "The auditors walked the line and counted parts. " * 12 + "\n\n" for i in range(1, 9)),
}


def _old_annotate(documents, metadata, families, *, aliases, max_refs, watch):
    """``resolve.annotate`` as it was before its steps became ``resolve.Resolution`` (the oracle)."""
    profiles = {d: build_profile(d, chunks, metadata.get(d, {}), families) for d, chunks in documents.items()}
    registry = Registry(dict(profiles), aliases=aliases or {})
    reads = registry.watch() if watch else Reads()
    noted: dict[str, set[str]] = {d: set() for d in documents} if watch else {}
    scanned: dict[str, list[tuple[str, list[RawRef]]]] = {}
    for d, texts in documents.items():
        reads.into = noted.get(d)
        scanned[d] = [(cid, registry.scan(text, families)) for cid, text in texts]
    for d, raw_chunks in scanned.items():
        reads.into = noted.get(d)
        claims: dict[tuple[str, str, str], None] = {}
        for _, raws in raw_chunks:
            for ref in raws:
                if ref.kind == "label" and ref.qualifier is not None:
                    for owner in sorted(_owner_docs(ref.qualifier, d, registry, families) - {d}):
                        claims[(ref.key, ref.caption, owner)] = None
        profiles[d].claims = [list(claim) for claim in claims]
    reads.into = None
    registry.refresh_claims()
    refs = {}
    for d, raw_chunks in scanned.items():
        reads.into = noted.get(d)
        for cid, raws in raw_chunks:
            refs[cid] = cap_refs([rec for ref in raws for rec in resolve_ref(ref, d, registry, families)], max_refs)
    reads.into = None
    return Annotation(profiles=profiles, refs=refs, first_chunk={}, reads=noted)


def _in_memory(ctx, extractor):
    """The whole-collection pass as it was: every stored chunk a TextNode, one annotation, then the patches
    (stored value compared with the wanted one), the state records and the number of documents."""
    nodes = [TextNode(id_=r.id, text=r.text, metadata=r.metadata,
                      relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=r.doc_id)} if r.doc_id else {})
             for r in ctx.store.iter_chunk_rows(None)]
    docs, metadata = group_by_document(nodes)
    ann = _old_annotate(chunk_texts(docs), metadata, extractor.families, aliases=extractor.aliases,
                        max_refs=extractor.max_refs_per_chunk, watch=True)
    patches = {}
    for doc_id, chunks in docs.items():
        for i, node in enumerate(chunks):
            want = {REFS_KEY: dump_refs(ann.refs.get(node.node_id, []))}
            if i == 0:
                want[DOC_KEY] = ann.profiles[doc_id].to_json()
            diff = {k: v for k, v in want.items() if node.metadata.get(k) != v}
            if diff:
                patches[node.node_id] = diff
    texts = chunk_texts(docs)
    records = {d: DocRecord(str(chunks[0].metadata.get(api.DOC_HASH_KEY) or ""),
                            tuple(sorted(n.node_id for n in chunks)), ann.profiles[d], frozenset(ann.reads[d]),
                            capitalised_words(t for _, t in texts[d])) for d, chunks in docs.items()}
    return patches, records, len(docs), ann


def _stored(ctx):
    return {r.id: (r.metadata.get(REFS_KEY), r.metadata.get(DOC_KEY)) for r in ctx.store.iter_chunk_rows(None)}


@pytest.fixture
def out_of_line(tmp_path, bundled_embed_model, deal_files, monkeypatch):
    """An index whose stored references are out of line with resolving it now: a target deleted by a write
    that stopped before the after-index step, one chunk's references and one profile spoilt."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name, text in {**deal_files, **EXTRA}.items():
        (corpus / name).write_text(text, encoding="utf-8")
    rag = make_rag([plugin], {"crossref": {}}, embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
    rag.index_paths([corpus])
    with monkeypatch.context() as m:
        m.setattr(plugin, "backfill", lambda *args: 0)
        rag.delete_documents(["02_exhibit_b_pricing.md"])
    ctx = rag.context(rag.index())
    first = {info.node_ids[0]: d for d, info in ctx.list_documents().items()}
    canteen = next(c for c, d in first.items() if d == "06_canteen_notice.md")
    memo = next(c for c, d in first.items() if d == "08_earnout_memo.md")
    ctx.update_metadata({canteen: {REFS_KEY: '[{"kind":"document","ref":"x","target":"gone.md"}]'},
                         memo: {DOC_KEY: '{"file_name":"08_earnout_memo.md"}'}})
    extractor = plugin.extractor(rag.config.for_plugin("crossref"), ctx)
    yield rag, ctx, extractor
    backfill_module._OUT_OF_LINE.discard(ctx.index_id)


def _streamed(ctx, extractor, rows=None, most=None):
    written: list[dict] = []
    listed = {d: info.node_ids for d, info in ctx.list_documents().items()}
    store = ctx.store if rows is None else SimpleNamespace(iter_chunk_rows=lambda keys: rows(ctx.store, keys))
    result = collection.resolve_stored(store, listed, extractor, watch=True, write=written.append, most=most)
    return written, result


def test_the_streamed_pass_gives_what_resolving_in_memory_gave(out_of_line, monkeypatch):
    rag, ctx, extractor = out_of_line
    patches, records, documents, ann = _in_memory(ctx, extractor)
    targets = {(x["ref"], x["target"], x["how"]) for refs in ann.refs.values() for x in refs}
    # The corpus exercises what resolving depends on: a claim, a restated label, a section by qualifier, a
    # reference whose target was deleted going back to null, a spoilt profile, a long document.
    assert ("exhibit c", "07_acquisition_agreement.md", "owner") in targets
    assert ("section 5", "07_acquisition_agreement.md", "qualifier") in targets
    assert ("exhibit b", None, None) in targets and not any(t == "02_exhibit_b_pricing.md" for _, t, _ in targets)
    assert any('"target":"02_exhibit_b_pricing.md"' in refs for refs, _ in _stored(ctx).values())
    assert any(DOC_KEY in p for p in patches.values())
    assert len(ctx.list_documents()["10_long_report.md"].node_ids) >= 3
    assert ["exhibit c", "earnout terms", "07_acquisition_agreement.md"] in records["08_earnout_memo.md"].profile.claims

    written, result = _streamed(ctx, extractor)
    assert {k: v for group in written for k, v in group.items()} == patches
    assert result.records == records
    assert (result.patched, result.documents, result.resolved) == (len(patches), documents, documents)
    assert backfill_module.stale_references(ctx, extractor) == [
        f"crossref: {len(patches)} chunks of {documents} documents hold references out of line with the index; "
        "'ragplugins check --repair' resolves them again"]

    # check --repair: the after-index step resolves every document (streamed), patches, and keeps the records.
    updates: list[dict] = []
    events: list[dict] = []
    update = type(ctx.store).update_metadata

    def recording_update(self, group):
        updates.append(dict(group))
        return update(self, group)

    monkeypatch.setattr(type(ctx.store), "update_metadata", recording_update)
    monkeypatch.setattr(api, "record", lambda p, action, **data: events.append(data) if action == "backfill" else None)
    before = _stored(ctx)
    rag.prepare()
    assert {k: v for group in updates for k, v in group.items()} == patches
    after = _stored(ctx)
    for cid, patch in patches.items():
        refs, doc = before[cid]
        before[cid] = (patch.get(REFS_KEY, refs), patch.get(DOC_KEY, doc))
    assert after == before
    kept = StateLocation(ctx).read(extractor.made_with)
    assert kept is not None and {d: (r.doc_hash, r.node_ids, r.profile, r.reads, r.capitals) for d, r in kept.items()} \
        == {d: (r.doc_hash, r.node_ids, r.profile, r.reads, r.capitals) for d, r in records.items()}
    assert events == [{"updated": len(patches), "documents": documents, "resolved": documents, "from_state": False,
                       "deleted": []}]
    assert backfill_module.stale_references(ctx, extractor) == []


def _interleaved(store, keys):
    """The rows with documents interleaved and each one's chunks in reverse order."""
    by_doc = defaultdict(list)
    for row in store.iter_chunk_rows(keys):
        by_doc[row.doc_id].append(row)
    queues = [list(reversed(rows)) for rows in by_doc.values()]
    while any(queues):
        for q in queues:
            if q:
                yield q.pop(0)


def test_rows_in_any_order_give_the_same_result(out_of_line):
    _, ctx, extractor = out_of_line
    in_order, expected = _streamed(ctx, extractor)
    rows = list(_interleaved(ctx.store, None))
    assert [r.doc_id for r in rows[:3]] != [rows[0].doc_id] * 3   # interleaved indeed
    shuffled = random.Random(7)

    def shuffled_rows(store, keys):
        rows = list(store.iter_chunk_rows(keys))
        shuffled.shuffle(rows)
        return iter(rows)

    for order in (_interleaved, shuffled_rows):
        written, result = _streamed(ctx, extractor, rows=order, most=4)
        assert {k: v for g in written for k, v in g.items()} == {k: v for g in in_order for k, v in g.items()}
        assert result.records == expected.records and result.patched == expected.patched
        # Each group holds whole documents: no document's patches are split between two updates.
        doc_of = {cid: d for d, info in ctx.list_documents().items() for cid in info.node_ids}
        groups_of = defaultdict(set)
        for i, group in enumerate(written):
            for cid in group:
                groups_of[doc_of[cid]].add(i)
        assert all(len(g) == 1 for g in groups_of.values())


def test_the_pass_builds_no_node_for_the_collection(out_of_line, monkeypatch):
    """Resolving every stored chunk reads rows; it never makes a TextNode of each (nor reads nodes)."""
    rag, ctx, extractor = out_of_line
    made = []
    init = TextNode.__init__

    def counting_init(self, *args, **kwargs):
        made.append(1)
        init(self, *args, **kwargs)

    monkeypatch.setattr(TextNode, "__init__", counting_init)
    TextNode(text="counted")
    assert made == [1]
    made.clear()
    assert backfill_module.stale_references(ctx, extractor)
    assert made == []
    monkeypatch.setattr(type(ctx.store), "update_metadata", lambda self, group: len(group))
    backfill_module.backfill(ctx, extractor, [], [])   # the check above marked the index: every document again
    assert made == []


class _GeneratedStore:
    """A collection generated row by row, as a store scanning its table yields it: its text exists only
    while the row is being used. Document i names document i+1 ("see Supplier Contract 0002")."""

    def __init__(self, documents: int, chunks: int, chars: int):
        self.documents, self.chunks, self.chars = documents, chunks, chars

    def doc_id(self, i: int) -> str:
        return f"contracts/{i:04d}.md"

    def iter_chunk_rows(self, metadata_keys=()):
        for i in range(self.documents):
            for c in range(self.chunks):
                head = f"# Supplier Contract {i:04d}\n\n" if c == 0 else ""
                text = f"{head}Part {c}: see Supplier Contract {(i + 1) % self.documents:04d}. " + \
                    "the auditors counted the parts again. " * (self.chars // 38)
                meta = {api.CHUNK_INDEX_KEY: c, REFS_KEY: "[]", api.DOC_HASH_KEY: f"h{i}"}
                yield ChunkRow(f"{i:04d}-{c}", self.doc_id(i), text,
                               meta if metadata_keys is None else {k: meta[k] for k in metadata_keys if k in meta})

    def list_documents(self):
        return {self.doc_id(i): DocumentInfo(self.doc_id(i), {}, [f"{i:04d}-{c}" for c in range(self.chunks)])
                for i in range(self.documents)}


def test_memory_does_not_grow_with_the_collections_text(out_of_line):
    """``ragplugins check`` over 4 MB of generated text holds a small part of it at once (one document's
    rows, the profiles, the references found): resolving it in memory held all of it (a peak of 5.8 MB
    for 4 MB of text in 100 documents, against 1.0 MB streamed)."""
    _, _, extractor = out_of_line
    store = _GeneratedStore(documents=50, chunks=4, chars=20000)
    ctx = SimpleNamespace(store=store, list_documents=store.list_documents, index_id="generated",
                          state=lambda plugin: SimpleNamespace(read=lambda name: None))  # no records kept
    text_bytes = sum(len(r.text) for r in store.iter_chunk_rows(()))
    assert text_bytes > 4_000_000
    tracemalloc.start()
    try:
        found = backfill_module.stale_references(ctx, extractor)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        backfill_module._OUT_OF_LINE.discard("generated")
    assert found == ["crossref: 200 chunks of 50 documents hold references out of line with the index; "
                     "'ragplugins check --repair' resolves them again"]
    # Streamed, the peak is about a quarter of the text (998 kB for 4.0 MB); held whole, it was 1.45 times the text.
    # Half the text leaves the streamed peak room (at a quarter, a cache filled by an earlier test failed it).
    assert peak < text_bytes / 2, f"peak {peak:,} bytes for {text_bytes:,} bytes of text"


def test_a_document_is_given_once_all_its_listed_rows_came():
    listed = {"a": ["a1", "a2"], "b": ["b1"]}
    rows = [ChunkRow(i, d, "x", {}) for i, d in [("a1", "a"), ("u1", None), ("b1", "b"), ("a2", "a"), ("a3", "a"),
                                                ("c1", "c")]]
    got = [(d, [r.id for r in rs]) for d, rs in collection.whole_documents(rows, listed)]
    # The unlisted ones (a chunk without a document is its own) at the end; a row of a document given
    # already (written since it was listed) is not a second document.
    assert got == [("b", ["b1"]), ("a", ["a1", "a2"]), ("u1", ["u1"]), ("c", ["c1"])]
    assert [d for d, _ in collection.whole_documents(rows, listed, only={"a", "c"})] == ["a", "c"]


def test_check_names_the_setting_the_references_were_made_with_and_repair_applies_the_config(
        tmp_path, bundled_embed_model, deal_room):
    from ragplugins_crossref.config import CrossrefConfig

    make_rag([plugin], {"crossref": {}}, embed_model=bundled_embed_model,
             persist_dir=tmp_path / "idx").index_paths([deal_room])
    rag = make_rag([plugin], {"crossref": {"max_refs_per_chunk": 1}}, embed_model=bundled_embed_model,
                   persist_dir=tmp_path / "idx")
    ctx, config = rag.context(rag.index()), rag.config.for_plugin("crossref")
    found = plugin.ragplugins_check_index(config=config, ctx=ctx)  # what `ragplugins check` reports
    built_with = CrossrefConfig().max_refs_per_chunk
    assert len(found) == 1 and f"crossref.max_refs_per_chunk: {built_with} in the index, 1 in the config" in found[0]
    assert "'ragplugins check --repair'" in found[0]
    rag.prepare()  # the after-index step `check --repair` runs
    assert plugin.ragplugins_check_index(config=config, ctx=ctx) == []

