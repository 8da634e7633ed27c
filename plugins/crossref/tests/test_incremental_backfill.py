"""The after-index backfill re-resolves only the documents a write can affect (corpus_state), and what it
stores equals resolving the whole collection: after every write of a sequence (late targets, a renamed
document, a name made ambiguous, a deleted target, a removed file), in serial and in the Ray executor's
way (workers extract per batch, the after-index step gets an empty batch), and with the state missing or
made by other settings."""

from __future__ import annotations

import json

import pytest

import ragplugins_crossref.backfill as backfill_module
import ragplugins_crossref.transform as transform_module
from ragplugins.api import StoreAdapter
from ragplugins.testing import make_rag
from ragplugins_crossref import collection, plugin
from ragplugins_crossref.corpus_state import NAME, PLUGIN, StateLocation
from ragplugins_crossref.resolve import DOC_KEY, REFS_KEY

EXTRA = {
    "07_closing_checklist.md": (
        "# Closing Checklist\n\nBefore closing, confirm the Quality Plan is signed, the Employee Handbook is "
        "handed out and Exhibit A of the Master Agreement is attached. See also RFC 9000; fees follow Schedule 9.\n"
        "Exhibit D of the Employee Handbook lists the holidays.\n"),
    "08_handbook.md": "# Employee Handbook\n\nStaff follow the Canteen Notice and the Information Security Addendum.\n",
    "09_rfc9000_notes.md": "# RFC 9000 Notes\n\nNotes on QUIC transport, as the Closing Checklist asks.\n",
    "10_exhibit_a.md": "# Exhibit A - Transition Services\n\nThe seller provides transition services for six months.\n",
    # Whose Exhibit D this is, only the checklist's claim says (it changes when the handbook is renamed).
    "13_holiday_note.md": "# Holiday Note\n\nThe dates are in Exhibit D.\n",
    "12_fee_table.md": "# Pricing Annex\n\n- Schedule 9: Fee Table\n\nHourly rates are 120 EUR.\n",
}
FILES: dict[str, str] = {}


@pytest.fixture(autouse=True)
def files(deal_files):
    FILES.update({**deal_files, **EXTRA})


def _write(root, names, overrides=None):
    root.mkdir(parents=True, exist_ok=True)
    for name in names:
        (root / name).write_text((overrides or {}).get(name, FILES[name]), encoding="utf-8")


def _steps(root, rag):
    """The writes of the sequence, each a callable; the check runs after each."""
    def add(*names, overrides=None):
        return lambda: (_write(root, names, overrides), rag.index_paths([root]))

    def remove(name):
        return lambda: ((root / name).unlink(), rag.index_paths([root]))

    return [
        # References to documents that arrive later: the Exhibit B, the addendum, the checklist's targets.
        add("01_master_agreement.md", "04_quality_plan.md", "05_liability_memo.md", "06_canteen_notice.md",
            "07_closing_checklist.md"),
        add("02_exhibit_b_pricing.md", "03_information_security_addendum.md", "08_handbook.md", "13_holiday_note.md"),
        # Targets only what the checklist's references looked up can tell (an identifier, a label's
        # definition): no name of theirs is written in it.
        add("09_rfc9000_notes.md"),
        add("10_exhibit_a.md", "12_fee_table.md"),
        # A changed document's names: the handbook is renamed, so "Employee Handbook" no longer names it.
        add("08_handbook.md", overrides={"08_handbook.md": "# Staff Rules\n\nStaff follow the Canteen Notice.\n"}),
        # A second document called "Quality Plan": the checklist's mention becomes ambiguous.
        lambda: (_write(root, []), (root / "11_quality_plan_v2.md").write_text(
            "# Quality Plan\n\nThe revised plan lowers the defect threshold.\n", encoding="utf-8"),
            rag.index_paths([root])),
        # A deleted target, then a removed file.
        lambda: rag.delete_documents(["02_exhibit_b_pricing.md"]),
        remove("10_exhibit_a.md"),
        # Every document written again, its content unchanged (after enabling a plugin, say).
        lambda: rag.index_paths([root], reindex=True),
    ]


def _stored(rag):
    ctx = rag.context(rag.index())
    return {n.node_id: (n.metadata.get(REFS_KEY), n.metadata.get(DOC_KEY)) for n in ctx.all_nodes()}


def _out_of_line(rag):
    """What resolving the whole collection would patch (the backfill before it kept state)."""
    ctx = rag.context(rag.index())
    patches: dict = {}
    listed = {d: info.node_ids for d, info in ctx.list_documents().items()}
    collection.resolve_stored(ctx.store, listed, plugin.extractor(rag.config.for_plugin("crossref"), ctx),
                              watch=False, write=patches.update)
    return patches


@pytest.fixture
def resolved_docs(monkeypatch):
    """The documents each backfill read and resolved again, the calls that read every chunk, and the
    reads of whole nodes (vectors too) from the store, which resolving never needs."""
    seen: dict[str, list] = {"resolved": [], "all_nodes": 0, "node_reads": 0, "node_reads_per_step": []}
    run, whole_read, iter_nodes = backfill_module.run_annotation, backfill_module.resolve_stored, \
        StoreAdapter.iter_nodes

    def counting_run(docs, *args, **kwargs):
        seen["resolved"].append(set(docs))
        return run(docs, *args, **kwargs)

    def counting_all(*args, **kwargs):
        seen["all_nodes"] += 1
        result = whole_read(*args, **kwargs)
        seen["resolved"].append(set(result.records))
        return result

    def counting_nodes(self):
        seen["node_reads"] += 1
        return iter_nodes(self)

    monkeypatch.setattr(backfill_module, "run_annotation", counting_run)
    monkeypatch.setattr(backfill_module, "resolve_stored", counting_all)
    monkeypatch.setattr(StoreAdapter, "iter_nodes", counting_nodes)
    return seen


def _run_sequence(tmp_path, embed_model, seen, arm="serial"):
    rag = make_rag([plugin], {"crossref": {}}, embed_model=embed_model, persist_dir=tmp_path / arm / "idx")
    steps = _steps(tmp_path / arm / "corpus", rag)
    history = []
    for step in steps:
        seen["resolved"].clear()
        seen["all_nodes"] = seen["node_reads"] = 0
        step()
        resolved, reads = [set(s) for s in seen["resolved"]], seen["all_nodes"]
        seen["node_reads_per_step"].append(seen["node_reads"])
        assert _out_of_line(rag) == {}, f"step {len(history)}: stored references differ from a whole-corpus pass"
        history.append((_stored(rag), resolved, reads))
    return rag, history


def _targets(stored):
    return {(x["ref"], x["target"], x["how"]) for refs, _ in stored.values() for x in json.loads(refs or "[]")}


def test_every_write_stores_what_resolving_the_whole_collection_gives(tmp_path, bundled_embed_model, resolved_docs):
    rag, history = _run_sequence(tmp_path, bundled_embed_model, resolved_docs)
    targets = [_targets(stored) for stored, _, _ in history]
    # The late targets resolved; the renamed, the ambiguous and the deleted ones went back to null.
    assert ("exhibit b", None, None) in targets[0]
    assert ("exhibit b", "02_exhibit_b_pricing.md", "definition") in targets[1]
    assert ("rfc9000", None, None) in targets[1] and ("rfc9000", "09_rfc9000_notes.md", "identifier") in targets[2]
    assert ("schedule 9", None, None) in targets[2]
    assert ("schedule 9", "12_fee_table.md", "definition") in targets[3]
    assert ("employee handbook", "08_handbook.md", "name") in targets[3]
    # A claim of a document resolved again, followed to the one that relies on it.
    assert ("exhibit d", "08_handbook.md", "owner") in targets[1] and ("exhibit d", None, None) in targets[4]
    assert not any(ref == "employee handbook" for ref, _, _ in targets[4])
    assert ("quality plan", "04_quality_plan.md", "name") in targets[4]
    assert ("quality plan", None, "ambiguous") in targets[5]
    assert not any(t == "02_exhibit_b_pricing.md" for _, t, _ in targets[6])
    assert ("exhibit b", "02_exhibit_b_pricing.md", "definition") in targets[7]   # the file was still there
    assert not any(t == "10_exhibit_a.md" for _, t, _ in targets[7])
    # Equal to one fresh build of the final folder (same chunk ids, references and profiles).
    fresh = make_rag([plugin], {"crossref": {}}, embed_model=bundled_embed_model, persist_dir=tmp_path / "fresh")
    fresh.index_paths([tmp_path / "serial" / "corpus"])
    assert _stored(fresh) == history[-1][0]
    # Incremental: after the first build no write read every chunk back (the check above does, once),
    # and a document no write can affect was not resolved again.
    assert [reads for _, _, reads in history] == [0] * len(history)
    resolved = [set().union(*r) for _, r, _ in history]
    assert resolved[0] == set()   # the first build: what the extractor resolved is kept as it is
    assert "01_master_agreement.md" in resolved[1]   # its Exhibit B arrived
    assert resolved[2] == {"07_closing_checklist.md"}   # RFC 9000 arrived
    # The handbook's old name, then the claim it loses; the handbook itself was extracted.
    assert resolved[4] == {"07_closing_checklist.md", "13_holiday_note.md"}
    assert "06_canteen_notice.md" not in set().union(*resolved[1:])


def test_the_ray_executors_empty_batch_gives_the_same(tmp_path, bundled_embed_model, resolved_docs, monkeypatch):
    """Workers extract per batch in their own process, without the index (no records reach this one), and
    the after-index step is called with no nodes: the documents written are told by their content hash,
    or, re-indexed unchanged, by the mark of a profile resolved without the index."""
    _, serial = _run_sequence(tmp_path, bundled_embed_model, resolved_docs)
    monkeypatch.setattr(transform_module.CrossrefExtractor, "_index_id", lambda self: None)
    monkeypatch.setattr(transform_module, "stored_profiles", lambda ctx, exclude=frozenset(): {})
    monkeypatch.setattr(plugin, "backfill", lambda ctx, extractor, nodes, deleted: backfill_module.backfill(
        ctx, extractor, [], deleted))
    _, empty_batch = _run_sequence(tmp_path, bundled_embed_model, resolved_docs, arm="ray-like")
    assert [stored for stored, _, _ in empty_batch] == [stored for stored, _, _ in serial]
    # Every chunk is read back only when every document was rewritten (the last step).
    assert [reads for _, _, reads in empty_batch[1:]] == [0] * (len(empty_batch) - 2) + [1]
    # ... as text and metadata: no write read a stored node (with its vector) to resolve.
    assert resolved_docs["node_reads_per_step"] == [0] * (2 * len(empty_batch))


@pytest.mark.parametrize("spoil", ["missing", "other settings", "unreadable"])
def test_a_missing_or_foreign_state_falls_back_to_every_document(tmp_path, bundled_embed_model, resolved_docs, spoil):
    rag = make_rag([plugin], {"crossref": {}}, embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
    corpus = tmp_path / "corpus"
    _write(corpus, ["01_master_agreement.md", "04_quality_plan.md", "06_canteen_notice.md"])
    rag.index_paths([corpus])
    ctx = rag.context(rag.index())
    state = ctx.state(PLUGIN)
    stored = state.read(NAME)
    assert stored is not None and len(stored.records) == 3
    if spoil == "missing":
        state.write(NAME, [], {})
    elif spoil == "other settings":
        state.write(NAME, stored.records, {**stored.meta, "made_with": "another version"})
    else:
        state.write(NAME, [{"doc_id": "01_master_agreement.md"}], stored.meta)
    # Stored references out of line that only a full pass finds: the state no longer vouches for them.
    node = next(n for n in ctx.all_nodes() if n.ref_doc_id == "06_canteen_notice.md")
    ctx.update_metadata({node.node_id: {REFS_KEY: '[{"kind":"document","ref":"x","target":"gone.md"}]'}})
    resolved_docs["resolved"].clear()
    _write(corpus, ["02_exhibit_b_pricing.md"])
    rag.index_paths([corpus])
    assert set().union(*resolved_docs["resolved"]) >= {"01_master_agreement.md", "06_canteen_notice.md"}
    assert _out_of_line(rag) == {}
    assert len(StateLocation(ctx).read(plugin.extractor(rag.config.for_plugin("crossref"), ctx).made_with)) == 4


def test_capitalised_words_are_the_words_a_name_can_be_written_with():
    from ragplugins_crossref.corpus_state import capitalised_words
    from ragplugins_crossref.names import TOKEN

    texts = ["Über die Straße 9000 RFC9000 éclair École_x a-B c1 _Foo ÄÖ ß Σίγμα σίγμα 3rd x9Y",
             "Exhibit A—Pricing; the Closing Checklist(2) of the Master Agreement"]
    assert capitalised_words(texts) == {t.lower() for text in texts for t in TOKEN.findall(text)
                                        if t[0].isupper() or t[0].isdigit()}
    assert {"über", "école", "σίγμα", "9000", "master"} <= capitalised_words(texts)
    assert not {"die", "éclair", "c1", "the", "of"} & capitalised_words(texts)


def test_patches_are_written_in_groups_of_whole_documents():
    """A large backfill is several metadata updates (each group's rows are read into memory whole), and
    no document is split between two: a reader sees its references all before or all after."""
    docs = {d: [f"{d}-{i}" for i in range(n)] for d, n in [("a", 3), ("b", 2), ("c", 4)]}
    patches = {c: {REFS_KEY: "[]"} for chunks in docs.values() for c in chunks if c != "b-0"}

    def grouped(most):
        written: list[dict] = []
        groups = collection.PatchGroups(written.append, most)
        for chunks in docs.values():
            groups.add({c: patches[c] for c in chunks if c in patches})
        groups.flush()
        assert groups.written == sum(len(g) for g in written)
        return written

    assert [sorted(g) for g in grouped(4)] == [["a-0", "a-1", "a-2", "b-1"], ["c-0", "c-1", "c-2", "c-3"]]
    assert grouped(2) == [{k: patches[k] for k in ("a-0", "a-1", "a-2")}, {"b-1": patches["b-1"]},
                          {k: patches[k] for k in ("c-0", "c-1", "c-2", "c-3")}]
    patches.clear()
    assert grouped(4) == []


def test_a_declared_alias_is_found_in_any_case_also_when_its_document_arrives_later(tmp_path, bundled_embed_model):
    # HAProxy's manuals are all titled "HAProxy" and call each other "the management guide": a user declares
    # the alias, and prose writes it in lower case. The citing page was resolved before the guide arrived.
    rag = make_rag([plugin], {"crossref": {"aliases": {"management.md": ["management guide"]}}},
                   embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "lua.md").write_text("# Lua Scripting\n\nSee the management guide for the stats socket.\n",
                                 encoding="utf-8")
    rag.index_paths([root])
    (root / "management.md").write_text("# Runtime API\n\nThe stats socket takes commands.\n", encoding="utf-8")
    rag.index_paths([root])
    assert _out_of_line(rag) == {}
    assert ("management guide", "management.md", "name") in _targets(_stored(rag))


def test_a_manual_page_name_a_later_page_s_link_gives_reaches_pages_indexed_before(tmp_path, bundled_embed_model):
    # NTPsec's pages name each other ntpd(8) and ntp.conf(5); only its index's links say which pages those are.
    # Indexed after the pages that mention the names, the index resolves them; its link changed, they follow it.
    rag = make_rag([plugin], {"crossref": {}}, embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "rollover.md").write_text("# Rollover\n\nntpd(8) reads its configuration at start.\n", encoding="utf-8")
    (root / "ntpd.md").write_text("# ntpd - Network Time Protocol (NTP) Daemon\n\nThe daemon.\n", encoding="utf-8")
    (root / "ntpd-old.md").write_text("# ntpd, the old daemon\n\nGone.\n", encoding="utf-8")
    rag.index_paths([root])
    assert not {t for t in _targets(_stored(rag)) if t[0] == "ntpd(8)" and t[1]}
    (root / "index.md").write_text("# NTPsec\n\n- [`ntpd(8)` - the daemon](ntpd-old.md)\n", encoding="utf-8")
    rag.index_paths([root])
    assert _out_of_line(rag) == {}
    assert ("ntpd(8)", "ntpd-old.md", "identifier") in _targets(_stored(rag))
    (root / "index.md").write_text("# NTPsec\n\n- [`ntpd(8)` - the daemon](ntpd.md)\n", encoding="utf-8")
    rag.index_paths([root])
    assert _out_of_line(rag) == {}
    assert ("ntpd(8)", "ntpd.md", "identifier") in _targets(_stored(rag))
