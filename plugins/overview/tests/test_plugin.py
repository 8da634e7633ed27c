"""The plugin through ragplugins: real LlamaIndex components, embedded LanceDB, the bundled embedder."""

import json
import shutil
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from click.testing import CliRunner
from llama_index.core.base.base_retriever import BaseRetriever

import ragplugins_overview.plugin as plugin
from ragplugins import api
from ragplugins.api import GoldRow, StoreAdapter
from ragplugins.testing import FakeLLM, PluginConformance, make_rag, write_tiny_corpus
from ragplugins_overview.cli import overview_group
from ragplugins_overview.sidecar import Location

ESPRESSO = "How do I descale the espresso machine boiler?"
FEE = "What is the annual fee?"


class TestConformance(PluginConformance):
    plugin = plugin
    config = {"mode": "adaptive", "top_documents": 3}


class _Sidecar:
    """The overviews file the LanceDB adapter keeps under persist_dir, read without opening the index."""

    def __init__(self, persist_dir):
        self.path = persist_dir / "sidecars" / "overview" / "overviews.chunks.json"

    def read(self):
        adapter = StoreAdapter(SimpleNamespace(vector_store=None), index_uid="unchecked")
        adapter.read_state = lambda plugin, name: self.path.read_text(encoding="utf-8") if self.path.exists() else None
        return Location(SimpleNamespace(state=adapter.state, index_id=adapter.index_id)).read()


def _sidecar(persist_dir):
    return _Sidecar(persist_dir)


def _sources(persist_dir):
    """doc id -> how its overview was written."""
    overviews = _sidecar(persist_dir).read()
    return dict(zip(overviews.doc_ids, overviews.sources))


@pytest.fixture(scope="module")
def indexed(tmp_path_factory, bundled_embed_model):
    root = tmp_path_factory.mktemp("overview")
    corpus = write_tiny_corpus(root / "corpus")
    # The gate before issue 14 (act on every decisive pick, gap >= 1), so these tests see the action on a
    # four-document corpus; the default gate is tested on the same index below.
    rag = make_rag([plugin], {"overview": OLD_GATE}, embed_model=bundled_embed_model, persist_dir=root / "index")
    rag.index_paths([corpus])
    off = make_rag([plugin], {"enable": []}, embed_model=bundled_embed_model, persist_dir=root / "index")
    return rag, off, root


OLD_GATE = {"require_runner_up": False, "min_gap": 1.0}


def test_the_default_gate_leaves_a_document_the_first_stage_already_ranks_first(indexed, bundled_embed_model):
    _, off, root = indexed
    rag = make_rag([plugin], {"overview": {}}, embed_model=bundled_embed_model, persist_dir=root / "index")
    on_result, off_result = rag.search(ESPRESSO), off.search(ESPRESSO)
    select = on_result.trace.get("overview", "select")
    # Four documents: the gap noise exceeds on 1% of queries is ln(100) / sqrt(2 ln 4) = 2.77 robust SDs.
    assert not select["applied"] and "2.77" in select["reason"]
    assert off_result.first_stage[0].node.ref_doc_id == "espresso_manual.md"
    assert [(n.node.node_id, n.score) for n in on_result.first_stage] == \
        [(n.node.node_id, n.score) for n in off_result.first_stage]


def test_one_normalised_overview_per_document_is_stored_beside_the_index(indexed):
    rag, _, root = indexed
    overviews = _sidecar(root / "index").read()
    assert overviews.doc_ids == ["espresso_manual.md", "exhibit_a.md", "master_agreement.md",
                                 "termination_policy.md"]
    assert overviews.embedder == rag.context().embedder_id and overviews.index_id == rag.context().index_id
    assert np.allclose(np.linalg.norm(overviews.vectors, axis=1), 1.0, atol=1e-5)
    text = dict(zip(overviews.doc_ids, overviews.texts))["espresso_manual.md"]
    assert text.startswith("Espresso Machine Manual.") and "GK-4471".lower() in text.lower()
    docs = rag.context().list_documents()
    assert overviews.hashes == [docs[d].doc_hash for d in overviews.doc_ids]


def test_a_document_that_stands_out_is_boosted(indexed):
    rag, off, _ = indexed
    on_result, off_result = rag.search(ESPRESSO), off.search(ESPRESSO)
    select = on_result.trace.get("overview", "select")
    assert select["applied"] and select["documents"][0]["doc_id"] == "espresso_manual.md"
    assert on_result.first_stage[0].node.ref_doc_id == "espresso_manual.md"
    step = on_result.trace.get("overview", "add")
    off_ids = [n.node.node_id for n in off_result.first_stage]
    assert step["applied"] and step["before"] == off_ids
    # Nothing dropped; anything added comes from the selected document (the search inside it, with its filters).
    on_ids = [n.node.node_id for n in on_result.first_stage]
    assert set(off_ids) <= set(on_ids) and set(on_ids) - set(off_ids) == set(step["added"])
    assert all(n.node.ref_doc_id == "espresso_manual.md" for n in on_result.first_stage
               if n.node.node_id in step["added"])


def test_without_a_clear_margin_the_first_stage_is_exactly_the_plugin_off_one(indexed):
    rag, off, _ = indexed
    on_result, off_result = rag.search(FEE), off.search(FEE)
    assert not on_result.trace.get("overview", "select")["applied"]
    assert [(n.node.node_id, n.score) for n in on_result.first_stage] == \
        [(n.node.node_id, n.score) for n in off_result.first_stage]


def test_eval_instrumentation_reports_the_decision(indexed):
    rag, _, _ = indexed
    result = rag.search(ESPRESSO)
    row = GoldRow(id="q", query=ESPRESSO, expected=("citric acid",), expected_sources=("espresso_manual.md",))
    values = plugin.ragplugins_eval_instrument(
        config=rag.config.for_plugin("overview"), trace=result.trace, row=row, first_stage=result.first_stage,
        final=result.final, is_relevant=lambda text: "citric acid" in text)
    assert values["applied"] is True and values["documents_selected"] == 1
    assert values["answer_document_selected"] is True and values["first_relevant_moved"] >= 0
    assert values["best_z"] >= 3.5 and values["scoring_ms"] >= 0


@pytest.fixture
def own_index(tmp_path, bundled_embed_model):
    corpus = write_tiny_corpus(tmp_path / "corpus")
    persist = tmp_path / "index"

    def make(config=None, **kwargs):
        return make_rag([plugin], {"overview": config or {}}, embed_model=bundled_embed_model,
                        persist_dir=persist, **kwargs)
    return make, corpus, persist


def test_check_names_the_writer_setting_the_overviews_were_written_with_and_repair_rewrites_them(own_index):
    from ragplugins_overview.config import OverviewConfig

    make, corpus, persist = own_index
    make().index_paths([corpus])
    built_with, now = OverviewConfig().key_terms, OverviewConfig().key_terms + 2
    rag = make({"key_terms": now})
    ctx, config = rag.context(rag.index()), rag.config.for_plugin("overview")
    found = plugin.ragplugins_check_index(config=config, ctx=ctx)  # what `ragplugins check` reports
    assert len(found) == 1 and f"overview.key_terms: {built_with} in the index, {now} in the config" in found[0]
    assert "'ragplugins check --repair'" in found[0]
    rag.prepare()  # the after-index step `check --repair` runs
    assert plugin.ragplugins_check_index(config=config, ctx=ctx) == []


def test_only_changed_documents_get_a_new_overview_and_deleted_ones_lose_theirs(own_index):
    make, corpus, persist = own_index
    rag = make()
    rag.index_paths([corpus])
    before = _sidecar(persist).read().entries()
    (corpus / "exhibit_a.md").write_text("# Exhibit A - Payment Schedule\n\nPayments are due monthly by wire "
                                         "transfer to the account in Annex 2.\n", encoding="utf-8")
    rag.index_paths([corpus])
    after = _sidecar(persist).read().entries()
    assert after["exhibit_a.md"][0] != before["exhibit_a.md"][0] and "wire" in after["exhibit_a.md"][1]
    for doc in ("espresso_manual.md", "master_agreement.md", "termination_policy.md"):
        assert after[doc][:3] == before[doc][:3] and np.array_equal(after[doc][3], before[doc][3])
    rag.delete_documents(["termination_policy.md"])
    assert sorted(_sidecar(persist).read().doc_ids) == ["espresso_manual.md", "exhibit_a.md", "master_agreement.md"]


def test_llm_overviews_call_the_hosts_llm_once_per_new_or_changed_document(own_index):
    make, corpus, persist = own_index
    llm = FakeLLM(prompts=[], responder=lambda p: "<think>hm</think> OVERVIEW: A document about "
                                                  + p.split('titled "')[1].split('"')[0] + ".")
    rag = make({"overview": "llm"}, llm=llm)
    rag.index_paths([corpus])
    assert len(llm.prompts) == 4 and any("Descale the boiler every 200 cycles" in p for p in llm.prompts)
    overviews = _sidecar(persist).read()
    assert set(overviews.sources) == {"llm"}
    assert dict(zip(overviews.doc_ids, overviews.texts))["espresso_manual.md"] == \
        "A document about Espresso Machine Manual."
    (corpus / "espresso_manual.md").write_text("# Espresso Machine Manual\n\nDescale monthly.\n", encoding="utf-8")
    rag.index_paths([corpus])
    assert len(llm.prompts) == 5 and "Descale monthly." in llm.prompts[-1]


def test_a_failing_llm_falls_back_to_the_extractive_overview_for_that_document_until_the_next_write(own_index):
    make, corpus, persist = own_index

    def responder(prompt):
        if "Espresso" in prompt:
            raise RuntimeError("model overloaded")
        return "A legal document."
    rag = make({"overview": "llm", "llm_prompt": "Describe {title}: {text}"}, llm=FakeLLM(prompts=[],
                                                                                           responder=responder))
    with pytest.warns(UserWarning, match="espresso_manual.md.*model overloaded"):
        rag.index_paths([corpus])
    assert _sources(persist)["espresso_manual.md"] == "extractive (llm failed)"
    assert _sources(persist)["exhibit_a.md"] == "llm"
    llm = FakeLLM(prompts=[], responder=lambda p: "A coffee machine manual.")
    (corpus / "new.md").write_text("# Coffee grinder\n\nBurr grinder settings for espresso.\n", encoding="utf-8")
    make({"overview": "llm", "llm_prompt": "Describe {title}: {text}"}, llm=llm).index_paths([corpus])
    assert _sources(persist)["espresso_manual.md"] == "llm" and len(llm.prompts) == 2  # the failed one, the new one


def test_the_index_summary_counts_the_overviews_and_how_each_was_written(own_index):
    make, corpus, persist = own_index
    rag = make()
    (line,) = rag.index_summaries()
    assert line == "overview: no overviews for 0 indexed documents; `ragplugins prepare` writes them"
    rag.index_paths([corpus])
    documents = len(rag.context(rag.index()).list_documents())
    assert documents > 1
    (line,) = rag.index_summaries()
    assert line == f"overview: {documents} overviews of {documents} indexed documents ({documents} extractive)"
    llm = FakeLLM(prompts=[], responder=lambda p: "A legal document.")
    (corpus / "new.md").write_text("# Coffee grinder\n\nBurr grinder settings for espresso.\n", encoding="utf-8")
    make({"overview": "llm"}, llm=llm).index_paths([corpus])
    (line,) = make({"overview": "llm"}, llm=llm).index_summaries()
    assert line == f"overview: {documents + 1} overviews of {documents + 1} indexed documents ({documents + 1} llm)"
    # One document: nothing for the overviews to choose between, said at once.
    single = make_rag([plugin], {"overview": {}}, embed_model=rag.embed_model, persist_dir=persist.parent / "one")
    single.index_paths([corpus / "new.md"])
    (line,) = single.index_summaries()
    assert line.endswith("(1 extractive); with one document there is nothing for them to choose between, and no "
                         "query is steered"), line


def test_changed_writer_settings_warn_once_then_rewrite_every_overview_at_the_next_write(own_index):
    make, corpus, persist = own_index
    make().index_paths([corpus])
    before = _sidecar(persist).read()
    assert before.writer["key_terms"] == 10 and any("Key terms:" in t for t in before.texts)
    rag = make({"key_terms": 0})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = rag.search(ESPRESSO)
        rag.search(FEE)
    messages = [str(w.message) for w in caught if "ragplugins overview" in str(w.message)]
    assert len(messages) == 1 and "key_terms = 10 -> 0" in messages[0] and "overview rebuild" in messages[0]
    assert first.trace.get("overview", "select") is not None  # still scored: the overviews are this index's
    (corpus / "exhibit_a.md").write_text("# Exhibit A - Payment Schedule\n\nPayments are due monthly.\n",
                                         encoding="utf-8")
    rag.index_paths([corpus])
    after = _sidecar(persist).read()
    unchanged_with_terms = [d for d, t in zip(before.doc_ids, before.texts)
                            if "Key terms:" in t and d != "exhibit_a.md"]
    texts = dict(zip(after.doc_ids, after.texts))
    assert after.writer["key_terms"] == 0 and len(after) == 4 and unchanged_with_terms
    assert not any("Key terms:" in texts[d] for d in unchanged_with_terms)  # rewritten though unchanged
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rag.search(ESPRESSO)


def test_llm_mode_without_an_llm_is_refused_before_anything_is_written(own_index):
    make, corpus, persist = own_index
    rag = make({"overview": "llm"})
    with pytest.raises(api.PluginError, match=r"overview = 'llm' needs the host's LLM.*extractive"):
        rag.index_paths([corpus])
    assert rag.context(rag.index()).list_documents() == {}


def test_bad_config_values_are_named():
    with pytest.raises(api.ConfigError, match=r"llm_prompt.*\{text\}"):
        make_rag([plugin], {"overview": {"llm_prompt": "Summarise the document."}})
    with pytest.raises(api.ConfigError, match=r"unknown variables \['titel'\]"):
        make_rag([plugin], {"overview": {"llm_prompt": "{titel}: {text}"}})
    with pytest.raises(api.ConfigError, match="mode"):
        make_rag([plugin], {"overview": {"mode": "filter"}})


def _same_as_off(rag, off, query):
    on_ids = [n.node.node_id for n in rag.search(query).first_stage]
    return on_ids == [n.node.node_id for n in off.search(query).first_stage]


def test_an_unreadable_sidecar_gives_one_warning_and_plain_retrieval(own_index, bundled_embed_model):
    make, corpus, persist = own_index
    rag = make()
    rag.index_paths([corpus])
    _sidecar(persist).path.write_bytes(b"not JSON")
    off = make_rag([plugin], {"enable": []}, embed_model=bundled_embed_model, persist_dir=persist)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert _same_as_off(rag, off, ESPRESSO) and _same_as_off(rag, off, FEE)
    messages = [str(w.message) for w in caught if "overview" in str(w.message)]
    assert len(messages) == 1 and "cannot be read" in messages[0]
    rag.index_paths([corpus])  # nothing changed in the corpus, so no write: the sidecar stays broken
    (corpus / "new.md").write_text("# Coffee grinder\n\nBurr grinder settings for espresso.\n", encoding="utf-8")
    with pytest.warns(UserWarning, match="replacing the sidecar"):
        rag.index_paths([corpus])
    assert len(_sidecar(persist).read()) == 5


def test_another_indexs_sidecar_is_refused(own_index, indexed, bundled_embed_model):
    make, corpus, persist = own_index
    rag = make()
    rag.index_paths([corpus])
    shutil.copy(_sidecar(indexed[2] / "index").path, _sidecar(persist).path)
    off = make_rag([plugin], {"enable": []}, embed_model=bundled_embed_model, persist_dir=persist)
    with pytest.warns(UserWarning, match="belongs to another index"):
        assert _same_as_off(rag, off, ESPRESSO)


class _Reformulate(BaseRetriever):
    """A stand-in for the retry plugin: asks the first stage a second, reformulated question."""

    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def _retrieve(self, query_bundle):
        self.inner.retrieve(query_bundle)
        return self.inner.retrieve("espresso boiler descaling with citric acid")


class _RetryPlugin:
    @api.hookimpl
    def ragplugins_plugin_info(self):
        return api.PluginInfo(name="fake_retry", version="0")

    @api.hookimpl
    def ragplugins_retriever_wrappers(self):
        return [api.Contribution(_Reformulate, stage="sufficiency")]


def test_a_reformulated_query_is_scored_against_the_overviews_too(indexed, bundled_embed_model):
    _, _, root = indexed
    rag = make_rag([plugin, _RetryPlugin()], {"overview": OLD_GATE}, embed_model=bundled_embed_model,
                   persist_dir=root / "index")
    result = rag.search(FEE)
    select = result.trace.get("overview", "select")
    assert select["query"] == "espresso boiler descaling with citric acid" and select["applied"]


def test_cli_shows_and_rebuilds_overviews(indexed, monkeypatch, tmp_path):
    _, _, root = indexed
    config = tmp_path / "ragplugins.toml"
    config.write_text(f'[ragplugins]\nenable = ["overview"]\npersist_dir = "{root / "index"}"\n', encoding="utf-8")
    monkeypatch.setenv("RAGPLUGINS_PLUGINS", "overview")
    runner = CliRunner()
    shown = runner.invoke(overview_group, ["show", "exhibit_a.md"], obj={"config": str(config)})
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.startswith("exhibit_a.md (extractive)\n  Exhibit A - Payment Schedule.")
    missing = runner.invoke(overview_group, ["show", "nope.md"], obj={"config": str(config)})
    assert missing.exit_code != 0 and "no overview for nope.md" in missing.output
    rebuilt = runner.invoke(overview_group, ["rebuild"], obj={"config": str(config)})
    assert rebuilt.exit_code == 0 and rebuilt.stdout.startswith("4 overviews written"), rebuilt.output
    assert json.loads(json.dumps(_sidecar(root / "index").read().doc_ids)) == [
        "espresso_manual.md", "exhibit_a.md", "master_agreement.md", "termination_policy.md"]
