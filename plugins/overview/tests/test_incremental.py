"""The corpus statistics are kept by document and updated by the batch (corpus_terms): the same overviews
and query lists as scanning every chunk again, without reading the rest of the corpus back."""

import shutil

import numpy as np
import pytest

import ragplugins_overview.plugin as plugin
from ragplugins.api import RagContext
from ragplugins.testing import make_rag
from ragplugins_overview import build
from ragplugins_overview.corpus_terms import TermsLocation
from ragplugins_overview.documents import documents_from_nodes, documents_from_rows
from ragplugins_overview.extractive import ExtractiveOverviewWriter
from ragplugins_overview.sidecar import Location

TOPICS = {
    "boiler.md": "Espresso boiler descaling with citric acid; the boiler heats water for the espresso group.",
    "lease.md": "The lease of the warehouse runs five years; the tenant pays rent monthly to the landlord.",
    "payroll.md": "Payroll runs monthly; salaries, pension contributions and tax withholding are computed.",
    "orchard.md": "The orchard grows apples and pears; pruning happens in winter, harvest in autumn.",
    "glacier.md": "Glacier retreat in the Alps: ice thickness, meltwater and moraine surveys since 1900.",
    "compiler.md": "The compiler parses tokens into a syntax tree, then emits bytecode for the interpreter.",
    "vaccine.md": "The vaccine trial enrolled volunteers; antibodies were measured after the second dose.",
    "harbour.md": "The harbour handles container ships; cranes unload cargo onto trucks and trains.",
}
QUERIES = ["How is the espresso boiler descaled?", "When is rent paid for the warehouse?",
           "What does the compiler emit?", "How are cargo containers unloaded?"]


def _write(root, name, extra=""):
    title = name.removesuffix(".md").title()
    body = TOPICS[name]
    root.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(f"# {title}\n\n{body}\n\n## Details\n\n{body} {extra}\n", encoding="utf-8")


def _state(rag):
    ctx = rag.context(rag.index())
    overviews = Location(ctx).read()
    return ctx, overviews, TermsLocation(ctx).read()


def _lists(rag):
    return [[(n.node.node_id, round(n.score, 5)) for n in rag.search(q).final] for q in QUERIES]


def _store_adapter_class(root, embed_model) -> type:
    """The class of the store adapter an index of make_rag gets (the embedded LanceDB's)."""
    rag = make_rag([plugin], {"overview": {}}, embed_model=embed_model, persist_dir=root / "index")
    return type(rag.context(rag.index()).store)


@pytest.fixture(scope="module")
def built(tmp_path_factory, bundled_embed_model):
    """A: four batches (adds, a change, a removed file, a deleted document); A_full: the same batches with
    the kept statistics ignored (every chunk scanned, as before); B: the final corpus in one go."""
    root = tmp_path_factory.mktemp("incremental")
    reads: dict[str, int] = {}
    adapter = _store_adapter_class(tmp_path_factory.mktemp("probe"), bundled_embed_model)
    original, original_rows = RagContext.all_nodes, adapter.iter_chunk_rows

    def counting(self):  # a read of the whole index: every chunk as a node, or every chunk's row
        reads[self.index_id] = reads.get(self.index_id, 0) + 1
        return original(self)

    def counting_rows(self, metadata_keys=()):
        reads[self.index_id] = reads.get(self.index_id, 0) + 1
        return original_rows(self, metadata_keys)

    rags = {}
    for arm in ("A", "A_full"):
        corpus = root / arm / "corpus"
        rag = rags[arm] = make_rag([plugin], {"overview": {}}, embed_model=bundled_embed_model,
                                   persist_dir=root / arm / "index")
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(RagContext, "all_nodes", counting)
            mp.setattr(adapter, "iter_chunk_rows", counting_rows)
            if arm == "A_full":
                mp.setattr(TermsLocation, "read", lambda self: None)
            for name in ("boiler.md", "lease.md", "payroll.md", "orchard.md"):
                _write(corpus, name)
            rag.index_paths([corpus])
            for name in ("glacier.md", "compiler.md"):
                _write(corpus, name)
            _write(corpus, "lease.md", "The deposit is three months of rent, returned at the end of the lease.")
            rag.index_paths([corpus])
            (corpus / "payroll.md").unlink()
            _write(corpus, "vaccine.md")
            rag.index_paths([corpus])
            rag.delete_documents(["orchard.md"])
            (corpus / "orchard.md").unlink()
            _write(corpus, "harbour.md")
            reads.pop(rag.context(rag.index()).index_id, None)
            rag.index_paths([corpus])
            reads[arm] = reads.pop(rag.context(rag.index()).index_id, 0)
    final = root / "B" / "corpus"
    shutil.copytree(root / "A" / "corpus", final)
    rags["B"] = make_rag([plugin], {"overview": {}}, embed_model=bundled_embed_model, persist_dir=root / "B" / "index")
    rags["B"].index_paths([final])
    return rags, reads


def test_kept_statistics_equal_a_scan_of_the_whole_index(built):
    rags, _ = built
    ctx_a, _, terms_a = _state(rags["A"])
    ctx_b, _, terms_b = _state(rags["B"])
    assert terms_a is not None and terms_b is not None
    assert sorted(terms_a.stems) == ["boiler.md", "compiler.md", "glacier.md", "harbour.md", "lease.md", "vaccine.md"]
    assert {d: s for d, (_, s) in terms_a.stems.items()} == {d: s for d, (_, s) in terms_b.stems.items()}
    scanned = ExtractiveOverviewWriter().statistics(d.text for d in documents_from_nodes(ctx_a.all_nodes()).values())
    kept = terms_a.statistics()
    assert kept.n_documents == scanned.n_documents == 6
    assert kept.document_frequency == scanned.document_frequency
    assert kept.document_frequency["deposit"] == 1 and "pension" not in kept.document_frequency


def test_a_small_batch_reads_no_other_chunk_back_and_writes_what_a_full_scan_writes(built):
    rags, reads = built
    assert reads == {"A": 0, "A_full": 1}
    _, ov_a, _ = _state(rags["A"])
    _, ov_full, _ = _state(rags["A_full"])
    assert ov_a.doc_ids == ov_full.doc_ids and ov_a.hashes == ov_full.hashes and ov_a.texts == ov_full.texts
    np.testing.assert_allclose(ov_a.vectors, ov_full.vectors, atol=1e-6)
    assert _lists(rags["A"]) == _lists(rags["A_full"])


def test_rebuilt_from_the_kept_statistics_the_overviews_equal_a_one_go_build(built):
    rags, _ = built
    build.rebuild(rags["A"])
    _, ov_a, _ = _state(rags["A"])
    _, ov_b, _ = _state(rags["B"])
    assert ov_a.doc_ids == ov_b.doc_ids and ov_a.texts == ov_b.texts
    assert [[i for i, _ in q] for q in _lists(rags["A"])] == [[i for i, _ in q] for q in _lists(rags["B"])]


def test_the_empty_batch_call_reads_only_the_documents_without_an_overview(tmp_path, bundled_embed_model,
                                                                          monkeypatch):
    # As after a run on Ray (or `check --repair`): documents written without the plugin get their overviews
    # from one call with no batch; the statistics cover them without reading the others back.
    corpus = tmp_path / "corpus"
    for name in ("boiler.md", "lease.md", "payroll.md", "orchard.md", "glacier.md"):
        _write(corpus, name)
    on = make_rag([plugin], {"overview": {}}, embed_model=bundled_embed_model, persist_dir=tmp_path / "index")
    on.index_paths([corpus])
    _write(corpus, "compiler.md")
    off = make_rag([plugin], {"enable": []}, embed_model=bundled_embed_model, persist_dir=tmp_path / "index")
    off.index_paths([corpus])
    calls = []
    monkeypatch.setattr(RagContext, "all_nodes", lambda self: calls.append(1) or [])
    on = make_rag([plugin], {"overview": {}}, embed_model=bundled_embed_model, persist_dir=tmp_path / "index")
    on.prepare()
    monkeypatch.undo()
    ctx, overviews, terms = _state(on)
    assert calls == [] and "compiler.md" in overviews.doc_ids and "compiler.md" in terms.stems
    scanned = ExtractiveOverviewWriter().statistics(d.text for d in documents_from_nodes(ctx.all_nodes()).values())
    assert terms.statistics().document_frequency == scanned.document_frequency
    assert build.stale_overviews(on.config.for_plugin("overview"), ctx) == []


def test_kept_statistics_of_another_version_are_rebuilt_by_reading_every_chunk(tmp_path, bundled_embed_model):
    corpus = tmp_path / "corpus"
    for name in ("boiler.md", "lease.md", "payroll.md"):
        _write(corpus, name)
    rag = make_rag([plugin], {"overview": {}}, embed_model=bundled_embed_model, persist_dir=tmp_path / "index")
    rag.index_paths([corpus])
    ctx, _, terms = _state(rag)
    stored = ctx.state("overview").read("terms")
    # Another version's record, wrong about a document: not trusted, every chunk is read again.
    records = [dict(r, stems="bogus") for r in stored.records]
    ctx.state("overview").write("terms", records, dict(stored.meta, version=0))
    _write(corpus, "orchard.md")
    reads = []
    adapter = type(rag.context(rag.index()).store)
    original, original_rows = RagContext.all_nodes, adapter.iter_chunk_rows
    with pytest.MonkeyPatch.context() as mp:  # a whole-index read: every node, or every chunk's row
        mp.setattr(RagContext, "all_nodes", lambda self: reads.append(1) or original(self))
        mp.setattr(adapter, "iter_chunk_rows",
                   lambda self, keys=(): reads.append(1) or original_rows(self, keys))
        rag.index_paths([corpus])
    ctx, _, terms = _state(rag)
    scanned = ExtractiveOverviewWriter().statistics(d.text for d in documents_from_nodes(ctx.all_nodes()).values())
    assert reads == [1] and "bogus" not in terms.statistics().document_frequency
    assert terms.statistics().document_frequency == scanned.document_frequency and terms.statistics().n_documents == 4


def test_documents_read_from_rows_equal_those_read_from_nodes(built):
    """A whole-index read (a first build on Ray, a full rescan) takes each chunk's text and position only;
    the documents it rebuilds are those the nodes give: same text, same metadata the writers read."""
    rags, _ = built
    ctx = rags["B"].context(rags["B"].index())
    indexed = ctx.list_documents()
    from_nodes = documents_from_nodes(ctx.all_nodes())
    from_rows = documents_from_rows(ctx.store.iter_chunk_rows([build.CHUNK_INDEX_KEY]),
                                    {d: info.metadata for d, info in indexed.items()})
    assert sorted(from_rows) == sorted(from_nodes) and len(from_rows) == 6
    for doc_id, doc in from_nodes.items():
        assert from_rows[doc_id].text == doc.text
        assert (from_rows[doc_id].doc_hash, from_rows[doc_id].file_label) == (doc.doc_hash, doc.file_label)
    some = next(iter(indexed))
    assert documents_from_rows(ctx.store.iter_chunk_rows([build.CHUNK_INDEX_KEY]),
                               {some: indexed[some].metadata}).keys() == {some}
