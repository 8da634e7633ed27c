"""Through ragplugins: LanceDB round trip, late resolution, vectors untouched, and the query-time hop."""

from __future__ import annotations

import json

import pytest
from llama_index.core import Document
from llama_index.core.ingestion import IngestionPipeline
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle
from llama_index.core.vector_stores.types import FilterOperator, MetadataFilter, MetadataFilters

import ragplugins_crossref.plugin as plugin
from ragplugins import api
from ragplugins.api import ConfigError, query_scope
from ragplugins.testing import PluginConformance, make_rag
from ragplugins_crossref import CrossrefExtractor
from ragplugins_crossref.hop import CrossrefHop
from ragplugins_crossref.resolve import DOC_KEY, REFS_KEY, load_refs

PRICE_Q = "How much does the buyer pay per unit under the Master Agreement?"


class TestConformance(PluginConformance):
    plugin = plugin
    config = {"max_hops": 1, "chunks_per_hop": 2}


@pytest.fixture(scope="module")
def rag(deal_room, tmp_path_factory, bundled_embed_model):
    # top_k = 1: the referrer is the only candidate, so the hop must add (a budget-neutral hop has no
    # candidate below the referrer to replace), and gate 0: the referring chunk ("Section 1 Prices ...
    # Prices are fixed") matches a price question better than its bare reference sentence does.
    # The trigger and the placements are tested on explicit lists in test_hop_trigger.py.
    rp = make_rag([plugin], {"top_k": 1, "fusion_depth": 1, "crossref": {"placement": "append", "gate": 0.0}},
                  embed_model=bundled_embed_model, persist_dir=tmp_path_factory.mktemp("idx") / "on")
    rp.index_paths([deal_room])
    return rp


def stored(rp):
    return {n.node_id: n for n in rp.context().all_nodes()}


def refs_of(rp, doc_id):
    return [r for n in stored(rp).values() if n.ref_doc_id == doc_id for r in load_refs(n.metadata.get(REFS_KEY))]


def test_references_survive_lancedb_and_stay_out_of_embed_and_llm_text(rag):
    nodes = stored(rag)
    assert all(isinstance(n.metadata.get(REFS_KEY), str) for n in nodes.values())  # "[]" when none
    master = {(r["ref"], r["target"]) for r in refs_of(rag, "01_master_agreement.md")}
    assert ("exhibit b", "02_exhibit_b_pricing.md") in master
    assert ("information security addendum", "03_information_security_addendum.md") in master
    assert ("schedule 2", "05_liability_memo.md") in master   # restated there ("... of the Master Agreement")
    plan = [r for r in refs_of(rag, "04_quality_plan.md") if r["kind"] == "section"]
    section_chunk = nodes[plan[0]["chunk"]]
    assert plan[0]["target"] == "01_master_agreement.md" and "4.3 Inspection" in section_chunk.text
    first = [n for n in nodes.values() if n.ref_doc_id == "01_master_agreement.md" and DOC_KEY in n.metadata
             and n.metadata[DOC_KEY]]
    assert json.loads(first[0].metadata[DOC_KEY])["titles"] == ["Master Agreement"]
    for node in nodes.values():
        for mode in (MetadataMode.EMBED, MetadataMode.LLM):
            assert "crossref" not in node.get_content(metadata_mode=mode)


def test_vectors_and_text_bit_identical_with_plugin_off(rag, deal_room, tmp_path, bundled_embed_model):
    off = make_rag(
        [plugin],
        {"enable": [], "top_k": 1, "fusion_depth": 1},
        embed_model=bundled_embed_model,
        persist_dir=tmp_path / "off",
    )
    off.index_paths([deal_room])
    on_nodes, off_nodes = stored(rag), stored(off)
    assert on_nodes.keys() == off_nodes.keys()
    for nid, node in on_nodes.items():
        assert node.embedding == off_nodes[nid].embedding
        assert node.text == off_nodes[nid].text


def test_the_index_summary_counts_the_stored_references_and_says_when_none_leads_elsewhere(rag, tmp_path,
                                                                                            bundled_embed_model,
                                                                                            corpus_writer):
    stored_refs = [r for n in stored(rag).values() for r in load_refs(n.metadata.get(REFS_KEY))]
    elsewhere = sum(1 for r in stored_refs if r["target"] and r.get("how") != "internal")
    assert elsewhere > 0
    (line,) = rag.index_summaries()
    assert line.startswith(f"crossref: {len(stored_refs)} references in 6 documents, {elsewhere} resolved to "
                           "another indexed document"), line
    assert "aliases" not in line
    # A folder whose pages name each other by names no family reads (lighttpd's "enable mod_setenv"): said at once.
    alone = corpus_writer(tmp_path / "c", {"compress.md": "# Compress\n\nFirst enable the SetEnv module, see "
                                                          "Exhibit Z."})
    rp = make_rag([plugin], {"crossref": {}}, embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
    rp.index_paths([alone])
    (line,) = rp.index_summaries()
    assert line.startswith("crossref: 1 references in 1 documents, 0 resolved to another indexed document, 0 to a "
                           "place of their own; no pointer to another document for the hop to follow"), line


def test_late_arrival_resolves_earlier_chunks_without_reembedding(tmp_path, bundled_embed_model, deal_files,
                                                                  corpus_writer):
    first = corpus_writer(tmp_path / "a", {k: deal_files[k] for k in ("01_master_agreement.md",)})
    later = corpus_writer(tmp_path / "b", {k: deal_files[k] for k in ("02_exhibit_b_pricing.md",)})
    rp = make_rag([plugin], {"crossref": {}}, embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
    rp.index_paths([first])
    assert ("exhibit b", None) in {(r["ref"], r["target"]) for r in refs_of(rp, "01_master_agreement.md")}
    before = {nid: n.embedding for nid, n in stored(rp).items()}
    rp.index_paths([later])
    after = stored(rp)
    assert ("exhibit b", "02_exhibit_b_pricing.md") in {(r["ref"], r["target"]) for r in
                                                        refs_of(rp, "01_master_agreement.md")}
    assert all(after[nid].embedding == vec for nid, vec in before.items())
    rp.delete_documents(["02_exhibit_b_pricing.md"])
    assert ("exhibit b", None) in {(r["ref"], r["target"]) for r in refs_of(rp, "01_master_agreement.md")}


def test_works_in_a_plain_ingestion_pipeline(deal_files):
    docs = [Document(text=t, id_=name, metadata={"file_name": name}) for name, t in deal_files.items()]
    pipeline = IngestionPipeline(transformations=[SentenceSplitter(chunk_size=256, chunk_overlap=0),
                                                  CrossrefExtractor()])
    nodes = pipeline.run(documents=docs)
    master = [r for n in nodes if n.ref_doc_id == "01_master_agreement.md" for r in load_refs(n.metadata[REFS_KEY])]
    assert ("exhibit b", "02_exhibit_b_pricing.md") in {(r["ref"], r["target"]) for r in master}
    assert all(REFS_KEY in n.excluded_embed_metadata_keys and REFS_KEY in n.excluded_llm_metadata_keys
               for n in nodes)


def test_hop_follows_the_reference_the_query_needs(rag):
    result = rag.search(PRICE_Q)
    first_docs = [n.node.ref_doc_id for n in result.first_stage]
    assert "02_exhibit_b_pricing.md" not in first_docs and "01_master_agreement.md" in first_docs
    hopped = [n for n in result.final if "crossref" in api.tags(n)]
    assert hopped and {n.node.ref_doc_id for n in hopped} == {"02_exhibit_b_pricing.md"}
    tag = api.tags(hopped[0])["crossref"]
    assert tag["via_crossref"] and tag["ref"].startswith("Exhibit B") and tag["from_doc"] == "01_master_agreement.md"
    assert "84.50 EUR" in hopped[0].node.get_content()
    assert hopped[0].node.metadata[REFS_KEY] is not None   # stored metadata travels with the hopped chunk
    # On the fused scale the hopped chunk takes the score of the chunk above it (a host postprocessor that
    # sorts or cuts by score keeps it where the hop put it); its cosine is in its tag.
    scores = [n.score for n in result.final]
    assert scores == sorted(scores, reverse=True)
    assert hopped[0].score == result.final[result.final.index(hopped[0]) - 1].score != tag["cosine"]
    # The first stage is left alone and the decision is in the trace.
    assert [n.node.node_id for n in result.first_stage] == result.trace.first_stage
    assert result.final[: len(result.first_stage)] == result.first_stage
    decision = result.trace.get("crossref", "hop")
    assert decision["chosen"] == ["02_exhibit_b_pricing.md"]
    considered = {c["target"]: c["context"] for c in decision["considered"]}
    # Query-aware: the sentence pointing at the pricing exhibit matched the question best.
    assert considered["02_exhibit_b_pricing.md"] == max(considered.values())
    assert decision["considered"][0]["sentence"].startswith("Unit prices are set out in Exhibit B")


def test_a_hopped_chunk_keeps_its_cosine_among_cosine_scores(rag):
    # A dense first stage (or a host's cosine retriever): the hopped chunk's own cosine is on that scale.
    by_cosine = [NodeWithScore(node=n.node, score=api.dense_cosine(n)) for n in rag.search(PRICE_Q).first_stage]
    hop = CrossrefHop(ctx=rag.context(), gate=0.0, placement="append")
    with query_scope(PRICE_Q, filters=None):
        out = hop.postprocess_nodes(by_cosine, query_bundle=QueryBundle(PRICE_Q))
    hopped = [n for n in out if "crossref" in api.tags(n)]
    assert hopped and all(n.score == pytest.approx(api.tags(n)["crossref"]["cosine"], abs=1e-4) for n in hopped)


def test_hop_respects_the_callers_filters(rag):
    no_exhibit = MetadataFilters(filters=[MetadataFilter(key="file_name", value="02_exhibit_b_pricing.md",
                                                         operator=FilterOperator.NE)])
    result = rag.search(PRICE_Q, filters=no_exhibit)
    assert all(n.node.ref_doc_id != "02_exhibit_b_pricing.md" for n in result.final)


def test_gate_is_relative_to_the_best_candidate(rag):
    first = rag.search(PRICE_Q).first_stage
    for gate, expect_hop in ((1.9, False), (0.0, True)):
        hop = CrossrefHop(ctx=rag.context(), gate=gate, placement="append")
        with query_scope(PRICE_Q, filters=None) as tr:
            out = hop.postprocess_nodes(list(first), query_bundle=QueryBundle(PRICE_Q))
        decision = tr.get("crossref", "hop")
        assert decision["considered"]                     # references were there either way
        assert decision["considered"][0]["context"] < gate * max(api.dense_cosine(n) or 0 for n in first) \
            or expect_hop
        assert bool(decision["chosen"]) is expect_hop
        assert (len(out) > len(first)) is expect_hop
        best = max(api.dense_cosine(n) or 0 for n in first)
        assert decision["threshold"] == pytest.approx(gate * best, abs=1e-3)


def test_never_hops_from_a_hopped_chunk_and_places_after_referrer(rag):
    ctx = rag.context()
    first = rag.search(PRICE_Q).final
    hop = CrossrefHop(ctx=ctx, max_hops=3, trigger_depth=10, placement="after_referrer", gate=0.0)
    hopped_only = [n for n in first if "crossref" in api.tags(n)]
    with query_scope(PRICE_Q, filters=None):
        out = hop.postprocess_nodes(hopped_only, query_bundle=QueryBundle(PRICE_Q))
    assert out == hopped_only   # hopped chunks never trigger another hop
    master = [n for n in rag.search(PRICE_Q).first_stage if n.node.ref_doc_id == "01_master_agreement.md"][:1]
    with query_scope(PRICE_Q, filters=None):
        canteen = next(n for n in stored(rag).values() if n.ref_doc_id == "06_canteen_notice.md")
        out = hop.postprocess_nodes(master + [NodeWithScore(node=canteen, score=0.0)],
                                    query_bundle=QueryBundle(PRICE_Q))
    assert out[0] is master[0] and "crossref" in api.tags(out[1])   # right after its referrer
    assert out[-1].node.ref_doc_id == "06_canteen_notice.md"


def test_hop_and_extraction_switch_off_separately(deal_room, tmp_path, bundled_embed_model):
    rp = make_rag(
        [plugin],
        {"top_k": 1, "fusion_depth": 1, "crossref": {"hop": False}},
        embed_model=bundled_embed_model,
        persist_dir=tmp_path / "idx",
    )
    rp.index_paths([deal_room])
    assert refs_of(rp, "01_master_agreement.md")
    assert rp.search(PRICE_Q).final == rp.search(PRICE_Q).first_stage
    rp2 = make_rag([plugin], {"crossref": {"extract": False}}, embed_model=bundled_embed_model,
                   persist_dir=tmp_path / "idx2")
    def extracts(app):  # plugin transformations come wrapped in the core's guard
        return any(isinstance(getattr(t, "inner", t), CrossrefExtractor) for t in app.transformations())
    assert extracts(rp) and not extracts(rp2)
    assert any(type(p.inner).__name__ == "CrossrefHop" for p in rp2.postprocessors())


def test_instrumentation_reports_the_hop(rag):
    result = rag.search(PRICE_Q)

    row = api.GoldRow(id="p1", query=PRICE_Q, expected=("84.50 EUR",), expected_sources=("02_exhibit_b_pricing.md",))
    values = plugin.ragplugins_eval_instrument(plugin.CrossrefConfig(), result.trace, row, result.first_stage,
                                               result.final, lambda text: "84.50 EUR" in text)
    assert values["fired"] is True and values["hit_expected_source"] is True
    elsewhere = api.GoldRow(id="p2", query=PRICE_Q, expected=("84.50 EUR",), expected_sources=("05_liability_memo.md",))
    assert plugin.ragplugins_eval_instrument(plugin.CrossrefConfig(), result.trace, elsewhere, result.first_stage,
                                             result.final, lambda text: False)["hit_expected_source"] is False
    assert values["hopped_relevant_share"] > 0 and values["chunks_added"] >= 1
    # "Exhibit B - Pricing" names a place in the exhibit: its heading's chunk, which the hop brought.
    pointer = next(p for p in result.trace.get("crossref", "hop")["considered"] if p.get("outcome") == "followed")
    assert pointer["section_chunk"] in {n.node.node_id for n in result.final}
    assert values["named_place_in_list"] is True
    # A hop that followed no reference naming a place says nothing about one.
    for p in result.trace.get("crossref", "hop")["considered"]:
        p["section_chunk"], p["declared_chunks"] = None, []
    values = plugin.ragplugins_eval_instrument(plugin.CrossrefConfig(), result.trace, row, result.first_stage,
                                               result.final, lambda text: "84.50 EUR" in text)
    assert values["named_place_in_list"] is None and values["fired"] is True


def test_bad_config_names_the_key(tmp_path):
    with pytest.raises(ConfigError, match="max_hopz"):
        make_rag([plugin], {"crossref": {"max_hopz": 2}})
    with pytest.raises(ConfigError, match="pattern"):
        make_rag([plugin], {"crossref": {"families": [{"name": "t", "kind": "identifier", "pattern": "(?P<id>["}]}})
    with pytest.raises(ConfigError, match="'t'.*named group.*id"):
        make_rag([plugin], {"crossref": {"families": [{"name": "t", "kind": "identifier", "pattern": r"T-\d+"}]}})


def test_families_from_another_plugin(tmp_path, bundled_embed_model, corpus_writer):
    from ragplugins_crossref import family

    class TicketFamilies:
        @api.hookimpl
        def ragplugins_plugin_info(self):
            return api.PluginInfo(name="tickets", version="0")

        @api.hookimpl(optionalhook=True)
        def ragplugins_crossref_families(self):
            return [family("ticket", "identifier", r"\b(?P<id>OPS-\d{1,6})\b")]

    corpus = corpus_writer(tmp_path / "c", {"ops-4711.md": "# OPS-4711 Outage Report\nDisk full.",
                                           "review.md": "# Weekly Review\nSee OPS-4711 for the outage."})
    rp = make_rag([plugin, TicketFamilies()], {"enable": ["crossref", "tickets"]},
                  embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
    rp.index_paths([corpus])
    assert ("ops4711", "ops-4711.md") in {(r["ref"], r["target"]) for r in refs_of(rp, "review.md")}


def test_a_link_s_fragment_names_the_chunk_where_that_anchor_of_the_markdown_page_begins(tmp_path, bundled_embed_model):
    # Docker's command pages write "### <a name="tmpfs"></a> Mount tmpfs (--tmpfs)": the heading's words make
    # another slug, so only the anchor says where "run.md#tmpfs" lands (a new user's Docker pages: 16 of 16 such
    # links had no place).
    sections = "".join(f'### <a name="{name}"></a> Mount {name} volumes (--{name})\n\n'
                       f"{' '.join([f'The {name} option mounts a volume into the container.'] * 14)}\n\n"
                       for name in ("bind", "tmpfs", "volume", "device"))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "run.md").write_text(f"# docker run\n\n{sections}", encoding="utf-8")
    (docs / "cp.md").write_text("# docker cp\n\nFiles cannot be copied into a [tmpfs](run.md#tmpfs) mount.\n",
                                encoding="utf-8")
    rp = make_rag([plugin], {"chunk_size": 128, "chunk_overlap": 16}, embed_model=bundled_embed_model,
                  persist_dir=tmp_path / "idx")
    rp.index_paths([docs])
    nodes = stored(rp)
    holder = [n for n in nodes.values() if n.ref_doc_id == "run.md" and "tmpfs" in api.anchor_names(n.metadata)]
    assert len(holder) == 1 and "### Mount tmpfs volumes (--tmpfs)" in holder[0].text
    assert not any("<a name" in n.text for n in nodes.values())
    [link] = [r for r in refs_of(rp, "cp.md") if r["target"] == "run.md"]
    assert link["chunk"] == holder[0].node_id


def test_a_link_s_fragment_lands_on_the_anchor_as_written_where_two_differ_only_in_case(tmp_path, bundled_embed_model):
    # Sphinx's API pages anchor the function requests.request and the class requests.Request apart only by case: a
    # new user's requests manual sent all 11 links to the class onto the function's chunk.
    filler = " ".join(["The call sends the prepared message and returns what the server answered."] * 12)
    entries = "".join(f'<dl><dt id="{name}">{name}({args})</dt><dd><p>{what} {filler}</p></dd></dl>\n'
                      for name, args, what in (("requests.request", "method, url", "Sends a request."),
                                               ("requests.get", "url", "Sends a GET request."),
                                               ("requests.Request", "method, url", "A user-created request object.")))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "api.html").write_text(f"<html><body><h1>API</h1>{entries}</body></html>", encoding="utf-8")
    (docs / "advanced.html").write_text('<html><body><h1>Advanced</h1><p>Build a <a href="api.html#requests.Request">'
                                        'Request</a> object first.</p></body></html>', encoding="utf-8")
    rp = make_rag([plugin], {"chunk_size": 128, "chunk_overlap": 16}, embed_model=bundled_embed_model,
                  persist_dir=tmp_path / "idx")
    rp.index_paths([docs])
    nodes = stored(rp)
    [holder] = [n for n in nodes.values() if "requests.Request" in api.anchor_names(n.metadata)]
    [function] = [n for n in nodes.values() if "requests.request" in api.anchor_names(n.metadata)]
    assert holder.node_id != function.node_id
    [link] = [r for r in refs_of(rp, "advanced.html") if r["target"] == "api.html"]
    assert link["chunk"] == holder.node_id


def test_a_link_s_fragment_names_the_chunk_where_that_anchor_of_the_html_page_begins(tmp_path, bundled_embed_model):
    # nginx marks each directive with <a name="..."> before its "Syntax:" table: no heading, no defined term
    # says where "#gzip_proxied" is; the page's anchor does (the core's reader carries it to its chunk).
    names = [f"gzip_{word}" for word in ("buffers", "comp_level", "disable", "http_version", "min_length",
                                         "proxied", "types", "vary")]
    entries = "".join(
        f'<a name="{name}"></a><div class="directive"><table><tr><th>Syntax:</th><td><code><strong>{name}'
        f"</strong> value</code>;</td></tr></table></div><p>{' '.join(['The response buffers are tuned here.'] * 12)}"
        f"</p>\n" for name in names)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "gzip.html").write_text(f"<html><head><title>Module gzip</title></head><body><h1>Module gzip</h1>"
                                    f"{entries}</body></html>", encoding="utf-8")
    (docs / "proxy.html").write_text('<html><body><h1>Proxy</h1><p>Responses to proxied requests are compressed '
                                     'as <a href="gzip.html#gzip_proxied">gzip_proxied</a> says.</p></body></html>',
                                     encoding="utf-8")
    rp = make_rag([plugin], {"chunk_size": 128, "chunk_overlap": 16}, embed_model=bundled_embed_model,
                  persist_dir=tmp_path / "idx")
    rp.index_paths([docs])
    nodes = stored(rp)
    gzip_chunks = [n for n in nodes.values() if n.ref_doc_id == "gzip.html"]
    assert len(gzip_chunks) >= 5
    # Each chunk names the anchors that begin in it, kept out of the embedded and LLM text.
    holder = [n for n in gzip_chunks if "gzip_proxied" in api.anchor_names(n.metadata)]
    assert len(holder) == 1 and "Syntax: | `gzip_proxied value`" in holder[0].text
    assert sum(len(api.anchor_names(n.metadata)) for n in gzip_chunks) == len(names)
    assert "gzip_proxied" not in holder[0].get_content(metadata_mode=MetadataMode.EMBED).split("Syntax:")[0]
    [link] = [r for r in refs_of(rp, "proxy.html") if r["target"] == "gzip.html"]
    assert link["chunk"] == holder[0].node_id
    # The place the link names already listed, the link is covered: the page's other chunks are not what it
    # points at (a new user's Flask: the TESTING entry listed, the hop brought the page's changelog).
    referrer = next(n for n in nodes.values() if n.ref_doc_id == "proxy.html")
    candidates = [NodeWithScore(node=referrer, score=1.0), NodeWithScore(node=holder[0], score=0.9)]
    query = "How are responses to proxied requests compressed?"
    with query_scope(query, filters=None) as trace:
        out = CrossrefHop(ctx=rp.context(), gate=0.0).postprocess_nodes(list(candidates), QueryBundle(query))
    pointer = next(p for p in trace.get("crossref", "hop")["considered"] if p["target"] == "gzip.html")
    assert pointer["outcome"] == "covered" and out == candidates


def test_the_pointer_whose_link_words_the_question_uses_is_weighed_first(tmp_path, bundled_embed_model):
    # Docker's authorization page: "Refer to the [`dockerd` documentation](...) for more information." says
    # nothing of what is there, and its other link's sentence matched the question better; a question that asks
    # about "the dockerd documentation" means that link (a new user's eb14, k = 3: the answer was missed).
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "authz.md").write_text(
        "# Authorization plugins\n\nPlugins are reloaded without restarting the daemon, as the [Docker Plugin API]"
        "(plugin_api.md) explains for loading plugins.\n\nRefer to the [`dockerd` documentation](dockerd.md) for "
        "more information.\n", encoding="utf-8")
    (docs / "plugin_api.md").write_text("# Docker Plugin API\n\nPlugins are processes that run on the host.\n",
                                        encoding="utf-8")
    (docs / "dockerd.md").write_text("# dockerd\n\nA SIGHUP reloads the daemon's configuration.\n",
                                     encoding="utf-8")
    rp = make_rag([plugin], {}, embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
    rp.index_paths([docs])
    referrer = next(n for n in stored(rp).values() if n.ref_doc_id == "authz.md")
    query = "Which part of the dockerd documentation says how plugins are reloaded without restarting the daemon?"
    with query_scope(query, filters=None) as trace:
        CrossrefHop(ctx=rp.context(), gate=0.0).postprocess_nodes([NodeWithScore(node=referrer, score=1.0)],
                                                                    QueryBundle(query))
    considered = trace.get("crossref", "hop")["considered"]
    by_target = {p["target"]: p for p in considered}
    assert by_target["plugin_api.md"]["sentence_match"] > by_target["dockerd.md"]["sentence_match"]
    assert [p["target"] for p in considered][:2] == ["dockerd.md", "plugin_api.md"]
    assert by_target["dockerd.md"]["shown"] and not by_target["plugin_api.md"]["shown"]


def test_the_refs_command_prints_what_was_stored(rag, tmp_path, monkeypatch):
    # Three new users read the stored references out of the index's table by hand to check what the hop follows.
    from click.testing import CliRunner

    from ragplugins_crossref.cli import crossref_group

    config = tmp_path / "ragplugins.toml"
    config.write_text(f'[ragplugins]\nenable = ["crossref"]\npersist_dir = "{rag.config.core.persist_dir}"\n',
                      encoding="utf-8")
    monkeypatch.setenv("RAGPLUGINS_PLUGINS", "crossref")
    runner = CliRunner()
    shown = runner.invoke(crossref_group, ["refs", "04_quality_plan.md", "--json"], obj={"config": str(config)})
    assert shown.exit_code == 0, shown.output
    printed = [json.loads(line) for line in shown.stdout.splitlines()]
    assert [(r["words"], r["target"]) for r in printed] == \
        [(r["text"], r["target"]) for r in refs_of(rag, "04_quality_plan.md")] and printed
    nodes = stored(rag)
    section = next(r for r in refs_of(rag, "04_quality_plan.md") if r["kind"] == "section")
    place = nodes[section["chunk"]]
    assert any(r["place"] == f"01_master_agreement.md#{place.metadata[api.CHUNK_INDEX_KEY]}" for r in printed)
    lines = runner.invoke(crossref_group, ["refs", "04_quality_plan.md"], obj={"config": str(config)}).stdout
    assert f"'{section['text']}' -> 01_master_agreement.md#" in lines
    unresolved = runner.invoke(crossref_group, ["refs", "--unresolved", "--json"], obj={"config": str(config)}).stdout
    assert all(json.loads(line)["target"] is None for line in unresolved.splitlines())
    missing = runner.invoke(crossref_group, ["refs", "nope.md"], obj={"config": str(config)})
    assert missing.exit_code != 0 and "not in the index: nope.md" in missing.output
