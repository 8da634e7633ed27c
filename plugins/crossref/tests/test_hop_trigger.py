"""The hop's trigger, target choice and placement, on explicit candidate lists over the deal room
(so the first stage cannot hide a wrong decision)."""

from __future__ import annotations

import pytest
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle

import ragplugins_crossref.plugin as plugin
from ragplugins import api
from ragplugins.api import query_scope
from ragplugins.testing import make_rag
from ragplugins_crossref.hop import CrossrefHop, cited_clause, mention_spans, reference_contexts

NOTE, PRICING, LIABILITY, CANTEEN = ("07_board_note.md", "02_exhibit_b_pricing.md", "05_liability_memo.md",
                                     "06_canteen_notice.md")
MASTER = "01_master_agreement.md"
# One chunk, four references, one per sentence; the liability memo is the third in text order.
BOARD_NOTE = ("# Board Note\n\nThe board approved the purchase on 3 March. Unit prices follow Exhibit B - Pricing. "
              "Security duties follow the Information Security Addendum. The cap on damages is analysed in the "
              "Liability Memo. The Quality Plan sets the inspection routine.\n")
# Names the referring document, paraphrases one of its sentences, never names the target.
LIABILITY_Q = "The board note says the cap on damages was analysed separately. What is the cap per contract year?"
PRICE_Q = "The board note says unit prices follow an exhibit. How much does one servo motor cost?"
CANTEEN_Q = "When does the staff canteen close on Fridays?"
# A pointer in a short sentence that says only where to look; the sentence before it says what for.
OPS, ANNEX = "08_operations_note.md", "09_logistics_annex.md"
OPS_NOTE = ("# Operations Note\n\nSpare parts for the HX-220 servo are shipped from the Rotterdam warehouse "
            "within five working days of an order, and urgent orders can go by express courier. "
            "See the Logistics Annex.\n")
ANNEX_TEXT = ("# Logistics Annex\n\nExpress shipping of a spare parts parcel costs 45 EUR and is booked "
              "through the carrier portal before noon.\n")
SHIPPING_Q = ("The operations note says spare parts for the servo can be sent by express courier. What does "
              "express shipping cost and how is it booked?")


@pytest.fixture(scope="module")
def deal(deal_files, corpus_writer, tmp_path_factory, bundled_embed_model):
    root = tmp_path_factory.mktemp("trigger")
    rp = make_rag([plugin], {"crossref": {}}, embed_model=bundled_embed_model, persist_dir=root / "idx")
    rp.index_paths([corpus_writer(root / "corpus", {**deal_files, NOTE: BOARD_NOTE, OPS: OPS_NOTE,
                                                    ANNEX: ANNEX_TEXT})])
    ctx = rp.context()
    chunks: dict[str, list] = {}
    for node in ctx.all_nodes():
        chunks.setdefault(node.ref_doc_id, []).append(node)
    # the lists below are exact
    assert all(len(chunks[d]) == 1 for d in (NOTE, PRICING, LIABILITY, CANTEEN, OPS, ANNEX))
    return ctx, {d: c[0] for d, c in chunks.items()}


def run(deal, query, docs, **params):
    ctx, chunks = deal
    candidates = [NodeWithScore(node=chunks[d], score=1.0) for d in docs]
    with query_scope(query, filters=None) as tr:
        out = CrossrefHop(ctx=ctx, **params).postprocess_nodes(list(candidates), query_bundle=QueryBundle(query))
    return candidates, out, tr.get("crossref", "hop")


def docs_of(nodes):
    return [n.node.ref_doc_id for n in nodes]


def test_target_is_chosen_by_the_reference_sentence_not_text_order(deal):
    candidates, out, decision = run(deal, LIABILITY_Q, [NOTE, CANTEEN], placement="replace_tail")
    # Exhibit B comes first in the text; the liability sentence is the one the question paraphrases.
    assert [c["target"] for c in decision["considered"]][:1] == [LIABILITY] and len(decision["considered"]) == 4
    assert decision["considered"][0]["sentence"] == "The cap on damages is analysed in the Liability Memo"
    assert decision["chosen"] == [LIABILITY] and decision["fired"] is True
    # Budget-neutral: the hopped chunk follows its referrer and the lowest-ranked candidate makes room.
    assert docs_of(out) == [NOTE, LIABILITY]
    assert out[0] is candidates[0] and decision["removed"] == [candidates[1].node.node_id]
    tag = api.tags(out[1])["crossref"]
    assert tag["via_crossref"] and tag["from_doc"] == NOTE and tag["target"] == LIABILITY
    # after_referrer drops nothing: the hopped chunk goes right after its referrer.
    _, out, decision = run(deal, LIABILITY_Q, [NOTE, CANTEEN], placement="after_referrer")
    assert docs_of(out) == [NOTE, LIABILITY, CANTEEN] and decision["removed"] == []


def test_no_hop_when_the_pointed_at_evidence_is_already_a_candidate(deal):
    # gate 0: only the coverage check can stop it. The earlier design went on to another referenced
    # document here (the addendum, the memo or the plan), spending budget on a document nobody asked for.
    candidates, out, decision = run(deal, PRICE_Q, [NOTE, PRICING, CANTEEN], gate=0.0)
    assert out == candidates and decision["fired"] is False and decision["chosen"] == []
    assert decision["considered"][0]["target"] == PRICING and decision["considered"][0]["outcome"] == "covered"
    # The pricing exhibit makes no pointer the question may follow, and the note's others are not weighed.
    assert all("outcome" not in c for c in decision["considered"][1:])


def test_from_a_covered_pointer_s_page_the_hop_goes_on_to_the_page_it_points_at(deal):
    # The question's pointer (the note's, to the liability memo) leads to a page already listed; the memo
    # points on to the agreement, which answers (libcurl's c11: the CONNECTTIMEOUT page, listed, says "See also
    # the CURLOPT_TIMEOUT(3) option").
    query = ("Where the cap on damages is analysed, a schedule of the parties' contract is cited. Between which "
             "companies was that contract made?")
    candidates, out, decision = run(deal, query, [NOTE, LIABILITY, CANTEEN])
    tried = [(c["from_doc"], c["target"], c["outcome"]) for c in decision["considered"] if c.get("outcome")]
    assert tried == [(NOTE, LIABILITY, "covered"), (LIABILITY, MASTER, "followed")]
    # (the note's other pointers, to the pricing exhibit, the plan and the addendum, are not weighed)
    assert docs_of(out) == [NOTE, LIABILITY, CANTEEN, MASTER] and decision["chosen"] == [MASTER]
    assert out[:3] == candidates   # a list shorter than the window: nothing moves
    assert "the best pointer, 'Liability Memo'" in decision["reason"] and "the next pointer" in decision["reason"]


def test_no_hop_when_the_candidates_answer_better_than_any_reference_sentence(deal):
    _, chunks = deal
    # The only chunk the window could trade is the canteen notice's second chunk, which answers the
    # question better than any of the board note's references reads like it.
    candidates = [NodeWithScore(node=chunks[CANTEEN], score=1.0), NodeWithScore(node=chunks[NOTE], score=1.0),
                  _second_chunk(deal, CANTEEN)]
    out, decision = run_nodes(deal, CANTEEN_Q, candidates, window=3)
    pointer = decision["considered"][0]
    assert decision["fired"] is False and pointer["outcome"] == "under the gate" and out == candidates
    assert pointer["context"] < pointer["displaces"]
    out, decision = run_nodes(deal, CANTEEN_Q, candidates, window=3, gate=0.0)
    assert decision["fired"] is True   # the gate, not a missing reference, is what held it back
    # A list shorter than the window trades nothing: the pointer is weighed against the weakest chunk
    # the list already holds, and the chunk goes at the end.
    _, out, decision = run(deal, LIABILITY_Q, [NOTE, CANTEEN, PRICING])
    pointer = decision["considered"][0]
    assert pointer["target"] == LIABILITY and decision["fired"] is True
    assert docs_of(out) == [NOTE, CANTEEN, PRICING, LIABILITY]
    assert pointer["context"] >= pointer["displaces"]
    # The trace says why a swap traded nothing (a new user read "swap" with nothing removed as a contradiction).
    assert decision["removed"] == [] and decision["placement"].startswith("swap: the list is shorter than its window")


def test_a_question_that_names_a_document_follows_only_references_that_document_makes(deal):
    ctx, _ = deal
    hop = CrossrefHop(ctx=ctx)
    assert hop.named_documents(LIABILITY_Q) == {NOTE}                        # typed in lower case
    assert hop.named_documents("What does the Liability Memo say?") == {LIABILITY}
    assert hop.named_documents("the board approved a note") == set()          # the words, not the name
    assert CrossrefHop(ctx=ctx, aliases={NOTE: ["BN"]}).named_documents("What does BN say?") == {NOTE}
    # A file name typed whole, too short a name to be read as a title (Vim's "usr_12.txt says ..."), at a
    # sentence's end too; a name that is no indexed file's names nothing.
    assert hop.named_documents("What cap does 07_board_note.md set?") == {NOTE}
    assert hop.named_documents("The cap is set in 07_BOARD_NOTE.md.") == {NOTE}
    assert hop.named_documents("The cap is set in 08_board_note.md.") == set()
    # The memo's own reference (to the Master Agreement, about the same liability cap) is not the
    # pointer a question about the board note means.
    _, _, decision = run(deal, LIABILITY_Q, [LIABILITY, NOTE], gate=0.0)
    assert decision["named"] == [NOTE] and decision["considered"]
    assert {c["from_doc"] for c in decision["considered"]} == {NOTE}
    unnamed = LIABILITY_Q.replace("The board note says", "Someone said")
    _, _, decision = run(deal, unnamed, [LIABILITY, NOTE], gate=0.0)
    assert decision["named"] == [] and {c["from_doc"] for c in decision["considered"]} == {LIABILITY, NOTE}
    # Named, but none of the top candidates comes from it: no pointer, no hop.
    candidates, out, decision = run(deal, LIABILITY_Q, [LIABILITY, CANTEEN], gate=0.0)
    assert out == candidates and decision["fired"] is False and "names" in decision["reason"]


def test_equally_matching_pointers_are_told_apart_by_their_targets(deal):
    ctx, chunks = deal
    best = {PRICING: 0.2, LIABILITY: 0.6, CANTEEN: 0.9}

    def search(pointer):
        pointer["best"] = best[pointer["target"]]

    ranked = [{"target": PRICING, "cited": False, "shown": False, "context": 0.7, "choice": 0.7},   # one sentence,
              {"target": LIABILITY, "cited": False, "shown": False, "context": 0.7, "choice": 0.7},   # two targets
              {"target": CANTEEN, "cited": False, "shown": False, "context": 0.5, "choice": 0.5}]
    shown = [NodeWithScore(node=chunks[NOTE], score=1.0)]
    order = CrossrefHop(ctx=ctx)._break_ties([dict(p) for p in ranked], 0.6, search, shown)
    assert [p["target"] for p in order] == [LIABILITY, PRICING, CANTEEN]
    # Under the gate nothing is searched: the order stays.
    order = CrossrefHop(ctx=ctx)._break_ties([dict(p) for p in ranked], 0.8, search, shown)
    assert [p["target"] for p in order] == [PRICING, LIABILITY, CANTEEN] and "best" not in order[0]
    # The window already holds the memo: the hop brings what the candidates lack, the pricing exhibit,
    # though the memo's best chunk matches the question better.
    shown.append(NodeWithScore(node=chunks[LIABILITY], score=1.0))
    order = CrossrefHop(ctx=ctx)._break_ties([dict(p) for p in ranked], 0.6, search, shown)
    assert [p["target"] for p in order] == [PRICING, LIABILITY, CANTEEN]


def test_replace_tail_never_gives_up_the_referrer_or_anything_above_it(deal):
    candidates, out, decision = run(deal, LIABILITY_Q, [CANTEEN, NOTE], placement="replace_tail")
    assert out == candidates and decision["fired"] is False
    assert decision["considered"][0]["outcome"] == "followed, no room below the referrer"
    _, out, decision = run(deal, LIABILITY_Q, [CANTEEN, NOTE], placement="after_referrer")
    assert docs_of(out) == [CANTEEN, NOTE, LIABILITY] and decision["removed"] == []
    _, out, _ = run(deal, LIABILITY_Q, [NOTE, CANTEEN], placement="append")
    assert docs_of(out) == [NOTE, CANTEEN, LIABILITY]


def test_reference_sentences_join_soft_wrapped_lines_and_keep_list_items_apart():
    text = ("3. TERM\n"
            "This NDA shall remain in effect for three (3) years from the date first written above, or until\n"
            "superseded by the confidentiality provisions in the Document: Acquisition Agreement\n"
            "Article V.\n"
            "- Financial information (as contained in Document: Due Diligence Report)\n"
            "- Technical information. See the Acquisition Agreement for the IP licence.\n")
    assert reference_contexts(text, "Acquisition Agreement") == [
        "This NDA shall remain in effect for three (3) years from the date first written above, or until "
        "superseded by the confidentiality provisions in the Document: Acquisition Agreement Article V.",
        "See the Acquisition Agreement for the IP licence."]
    assert reference_contexts(text, "Due Diligence Report") == [
        "- Financial information (as contained in Document: Due Diligence Report)"]
    assert reference_contexts(text, "Closing Checklist") == ["Closing Checklist"]   # not in the text
    assert reference_contexts(text, " ") == []


def test_a_short_line_of_text_read_from_html_goes_on_into_a_line_that_does_not_start_a_sentence():
    # As the reader writes a Sphinx page: the HTML's source wraps stay, and their width counted the markup.
    text = ("If you make these files discoverable with [`locale_dirs`](../configuration.html#confval-locale_dirs) "
            "for your [`language`](../configuration.html#confval-language), Sphinx\n"
            "will pick them up automatically.\n"
            "\n"
            "- Set [`language`](../configuration.html#confval-language) to `es` (also possible via\n"
            "  [`-D`](../../man/sphinx-build.html#cmdoption-sphinx-build-D)).\n"
            "- Run your desired build.\n")
    assert reference_contexts(text, "[`-D`](../../man/sphinx-build.html#cmdoption-sphinx-build-D)") == [
        "- Set [`language`](../configuration.html#confval-language) to `es` (also possible via "
        "[`-D`](../../man/sphinx-build.html#cmdoption-sphinx-build-D))."]


def test_list_items_read_with_their_lead_in_and_lead_ins_with_their_items():
    text = ("ARTICLE IV - CONDITIONS\n"
            "4.1 Buyer's obligation to close is subject to:\n"
            "(a) Receipt of approval as documented in Document: Approval Letter\n"
            "(b) Completion of review per Document: Review Report\n"
            "III. FUNDS\n"
            "Per Document: Adjustments Memo:\n"
            "[ ] Cash payment: $10\n"
            "[ ] Escrow deposit: $2\n"
            "TOTALS\n")
    assert reference_contexts(text, "Review Report") == [
        "4.1 Buyer's obligation to close is subject to: (b) Completion of review per Document: Review Report"]
    assert reference_contexts(text, "Adjustments Memo") == [
        "Per Document: Adjustments Memo: [ ] Cash payment: $10 [ ] Escrow deposit: $2"]   # heading ends the items
    sentence = reference_contexts(text, "Review Report")[0]
    assert cited_clause(sentence, "Section 4.1(b) makes closing subject to a review")
    assert not cited_clause(sentence, "Section 4.1(a) makes closing subject to approval")
    assert not cited_clause("(b) Completion of review per Document: Review Report", "Section 4.1(b)")


def test_a_sentence_naming_two_documents_gives_each_its_own_clause():
    text = ("Per the Document: Closing Checklist, you may now proceed with the closing scheduled for March 1, "
            "subject to satisfaction of other conditions in the Document: Acquisition Agreement.\n")
    checklist, agreement = mention_spans(text, "Closing Checklist"), mention_spans(text, "Acquisition Agreement")
    assert reference_contexts(text, "Closing Checklist", others=agreement) == [
        "Per the Document: Closing Checklist, you may now proceed with the closing scheduled for March 1"]
    assert reference_contexts(text, "Acquisition Agreement", others=checklist) == [
        "subject to satisfaction of other conditions in the Document: Acquisition Agreement."]
    assert reference_contexts(text, "Closing Checklist") == [" ".join(text.split())]   # no others: whole sentence


def _second_chunk(deal, doc):
    """Another chunk of ``doc`` (same document, another node id): lists where a document repeats."""
    _, chunks = deal
    return NodeWithScore(node=chunks[doc].model_copy(update={"id_": f"{doc}#2"}), score=1.0)


def run_nodes(deal, query, candidates, **params):
    ctx, _ = deal
    with query_scope(query, filters=None) as tr:
        out = CrossrefHop(ctx=ctx, **params).postprocess_nodes(list(candidates), query_bundle=QueryBundle(query))
    return out, tr.get("crossref", "hop")




def test_after_a_swap_the_scores_fall_as_the_list_does(deal):
    # A new user's Valgrind manual: the chunk a swap traded kept its fused score below the window, above the scores
    # of the chunks it now follows (0.94, 1.16, 1.57), so a host cutting by score would cut the wrong ones.
    _, chunks = deal
    node = {d: NodeWithScore(node=chunks[d], score=s) for d, s in
            ((NOTE, 5.0), (CANTEEN, 4.0), (PRICING, 2.0), (LIABILITY, 1.0))}
    canteen2 = _second_chunk(deal, CANTEEN)
    canteen2.score = 3.0
    candidates = [node[NOTE], node[CANTEEN], canteen2, node[PRICING], node[LIABILITY]]
    out, decision = run_nodes(deal, LIABILITY_Q, candidates, gate=0.0, window=3)
    assert docs_of(out) == [NOTE, CANTEEN, LIABILITY, PRICING, CANTEEN] and decision["fired"] is True
    assert [n.score for n in out] == [5.0, 4.0, 4.0, 2.0, 2.0]
    assert canteen2.score == 3.0   # the first stage's own list is left as it was

def test_swap_takes_the_place_of_a_repeated_chunk_of_a_third_document_and_nothing_else_moves(deal):
    _, chunks = deal
    node = {d: NodeWithScore(node=chunks[d], score=1.0) for d in (NOTE, CANTEEN, PRICING, LIABILITY)}
    canteen2 = _second_chunk(deal, CANTEEN)
    candidates = [node[NOTE], node[CANTEEN], canteen2, node[PRICING]]
    out, decision = run_nodes(deal, LIABILITY_Q, candidates, gate=0.0, window=3)
    assert decision["fired"] is True and decision["placement"] == "swap"
    # The hopped chunk took the repeated canteen chunk's rank; every other rank in the window is unchanged.
    # The traded chunk goes to the first place below the window, not out of the list (a wrong hop traded a
    # BIND question's answer out of the whole list), and the list keeps its length: its last candidate leaves.
    assert docs_of(out) == [NOTE, CANTEEN, LIABILITY, CANTEEN]
    assert out[0] is node[NOTE] and out[1] is node[CANTEEN] and out[3] is canteen2
    assert decision["removed"] == [node[PRICING].node.node_id]
    # A candidate ranked below the window is brought into it; the chunk it replaces takes its old rank.
    below = [node[NOTE], node[CANTEEN], canteen2, node[PRICING], node[LIABILITY]]
    out, decision = run_nodes(deal, LIABILITY_Q, below, gate=0.0, window=3)
    assert [n.node.node_id for n in out] == [n.node.node_id for n in
                                             (node[NOTE], node[CANTEEN], node[LIABILITY], node[PRICING], canteen2)]
    assert decision["removed"] == [] and decision["fired"] is True
    # A repeated chunk the core's first stage placed by its keywords alone (BM25 ranked it, the dense leg did
    # not) is not traded: its cosine is not what placed it (python_q06's answer was traded so).
    by_keywords = api.annotate(canteen2, sparse_rank=2, dense_rank=None)
    out, decision = run_nodes(deal, LIABILITY_Q, [node[NOTE], node[CANTEEN], by_keywords, node[PRICING]],
                              gate=0.0, window=3)
    assert decision["fired"] is False and out[2] is by_keywords
    assert decision["considered"][0]["outcome"] == "no chunk to spare in the window"


def test_swap_never_trades_a_chunk_of_the_referring_or_the_pointed_at_document(deal):
    _, chunks = deal
    node = {d: NodeWithScore(node=chunks[d], score=1.0) for d in (NOTE, CANTEEN, PRICING)}
    # The only repeated chunk in the window is the referring document's: nothing can be spared, no hop.
    candidates = [node[NOTE], node[CANTEEN], _second_chunk(deal, NOTE), node[PRICING]]
    out, decision = run_nodes(deal, LIABILITY_Q, candidates, gate=0.0, window=3)
    assert out == candidates and decision["fired"] is False
    assert decision["considered"][0]["outcome"] == "no chunk to spare in the window"
    # The memo's own chunk below the window would be brought in, but the only repeated chunk in the window
    # is another of the memo's: the hop never trades one of the pointed-at document's chunks for another.
    memo2, memo3 = _second_chunk(deal, LIABILITY), _second_chunk(deal, LIABILITY)
    memo3.node.id_ = f"{LIABILITY}#3"
    candidates = [node[NOTE], memo2, memo3, node[PRICING], NodeWithScore(node=chunks[LIABILITY], score=1.0)]
    out, decision = run_nodes(deal, LIABILITY_Q, candidates, gate=0.0, window=3)
    assert [n.node.node_id for n in out] == [n.node.node_id for n in candidates] and decision["fired"] is False
    assert decision["considered"][0]["outcome"] == "no chunk to spare in the window"


def test_swap_appends_when_the_list_is_shorter_than_the_window(deal):
    _, chunks = deal
    candidates = [NodeWithScore(node=chunks[d], score=1.0) for d in (NOTE, CANTEEN)]
    out, decision = run_nodes(deal, LIABILITY_Q, candidates, gate=0.0, window=3)
    assert docs_of(out) == [NOTE, CANTEEN, LIABILITY] and decision["removed"] == []   # nothing moves
    # At the window's length there is no room: with no repeated chunk to spare, nothing changes.
    candidates = [NodeWithScore(node=chunks[d], score=1.0) for d in (NOTE, CANTEEN, PRICING)]
    out, decision = run_nodes(deal, LIABILITY_Q, candidates, gate=0.0, window=3)
    assert out == candidates and decision["fired"] is False


def test_a_pointer_in_a_short_sentence_is_read_with_its_passage(deal):
    _, chunks = deal
    node = {d: NodeWithScore(node=chunks[d], score=1.0) for d in (OPS, CANTEEN, PRICING)}
    candidates = [node[OPS], node[CANTEEN], _second_chunk(deal, CANTEEN), node[PRICING]]
    _, decision = run_nodes(deal, SHIPPING_Q, candidates, window=3, reading="passage")
    pointer = next(p for p in decision["considered"] if p["target"] == ANNEX)
    assert pointer["sentence"] == "See the Logistics Annex."
    assert "Rotterdam warehouse" in pointer["passage"] and "See the Logistics Annex." in pointer["passage"]
    # "See the Logistics Annex." says where to look; the sentence before it says what for.
    assert pointer["passage_match"] > pointer["sentence_match"] and pointer["context"] == pointer["passage_match"]
    # A gate between the two readings: the passage clears it, the sentence alone does not.
    gate = (pointer["passage_match"] + pointer["sentence_match"]) / 2 / pointer["displaces"]
    out, decision = run_nodes(deal, SHIPPING_Q, candidates, window=3, gate=gate, reading="passage")
    assert decision["fired"] is True and ANNEX in docs_of(out)[:3]
    # The default reads the sentence alone (a link's passage inside an on-topic chunk matches the question
    # whatever the link points at: BIND's manual).
    out, decision = run_nodes(deal, SHIPPING_Q, candidates, window=3, gate=gate)
    assert decision["fired"] is False and out == candidates
    assert next(p for p in decision["considered"] if p["target"] == ANNEX)["outcome"] == "under the gate"


def test_with_the_sentence_reading_no_passage_is_embedded(deal, monkeypatch):
    # A passage decides nothing with the default reading: embedding every pointer's passages was half the hop's time.
    ctx, chunks = deal
    candidates = [NodeWithScore(node=chunks[d], score=1.0) for d in (OPS, CANTEEN, PRICING)]
    embedded: list[str] = []
    real = ctx.embed_texts
    monkeypatch.setattr(ctx, "embed_texts", lambda texts: embedded.extend(texts) or real(texts))
    _, decision = run_nodes(deal, SHIPPING_Q, candidates, window=3)
    pointer = next(p for p in decision["considered"] if p["target"] == ANNEX)
    assert pointer["sentence"] in embedded and "Rotterdam warehouse" in pointer["passage"]
    assert pointer["passage"] not in embedded and pointer["passage_match"] is None
    embedded.clear()
    _, decision = run_nodes(deal, SHIPPING_Q, candidates, window=3, reading="passage")
    assert next(p for p in decision["considered"] if p["target"] == ANNEX)["passage"] in embedded


def test_swap_refuses_a_chunk_that_looks_more_like_the_answer_than_the_pointer_looks_like_the_question(deal):
    ctx, chunks = deal
    node = {d: NodeWithScore(node=chunks[d], score=1.0) for d in (NOTE, CANTEEN, PRICING)}
    # A repeated chunk of a third document that states the answer (a copy quoting the memo): its own
    # vector is the one the index would give it.
    text = ("The board note's cap on damages, analysed separately: the cap per contract year is 2.5 million "
            "EUR, excluding gross negligence.")
    quoting = NodeWithScore(node=chunks[CANTEEN].model_copy(update={"id_": "quote", "text": text,
                                                                    "embedding": None}), score=1.0)
    candidates = [node[NOTE], node[CANTEEN], quoting, node[PRICING]]
    out, decision = run_nodes(deal, LIABILITY_Q, candidates, window=3)
    pointer = decision["considered"][0]
    assert pointer["target"] == LIABILITY
    embedded = quoting.node.get_content(metadata_mode=MetadataMode.EMBED)   # as the index would embed it
    cosine = api.cosine(ctx.embed_query(LIABILITY_Q), ctx.embed_texts([embedded])[embedded])
    assert cosine > pointer["context"]   # the chunk looks more like an answer than the pointer like the question
    assert out == candidates and decision["fired"] is False and decision["removed"] == []
    assert pointer["outcome"] == "under the gate" and pointer["displaces"] == pytest.approx(cosine, abs=1e-3)
    # The same place held by a repeat that says nothing of the question is traded.
    plain = [node[NOTE], node[CANTEEN], _second_chunk(deal, CANTEEN), node[PRICING]]
    out, decision = run_nodes(deal, LIABILITY_Q, plain, window=3)
    assert decision["fired"] is True and docs_of(out) == [NOTE, CANTEEN, LIABILITY, CANTEEN]


def test_swap_weighs_a_chunk_by_its_best_sentence_unless_the_question_names_the_referrer(deal):
    ctx, chunks = deal
    node = {d: NodeWithScore(node=chunks[d], score=1.0) for d in (NOTE, CANTEEN, PRICING)}
    # A repeat of a third document that answers in one sentence among many on other matters: the whole
    # chunk's cosine is diluted below the pointer sentence's, its answering sentence is not (nodejs_q15:
    # a DNS answer chunk traded for a pointer to the cluster module).
    answer = "The cap on damages was analysed separately: the cap per contract year is 2.5 million EUR."
    filler = ("The staff canteen serves soup, salads and a hot dish of the day from a menu that changes weekly. "
              "Vegetarian and vegan options are marked on the board beside the till, and allergens are listed "
              "for every dish. Trays go back to the rack by the door; cutlery and plates are washed in the "
              "kitchen. ")
    text = f"{filler * 3}{answer}\n"
    diluted = NodeWithScore(node=chunks[CANTEEN].model_copy(update={"id_": "diluted", "text": text,
                                                                    "embedding": None}), score=1.0)
    candidates = [node[NOTE], node[CANTEEN], diluted, node[PRICING]]
    unnamed = "The cap on damages was analysed separately. What is the cap per contract year?"
    out, decision = run_nodes(deal, unnamed, candidates, window=3)
    pointer = decision["considered"][0]
    assert decision["named"] == [] and pointer["target"] == LIABILITY
    embedded = diluted.node.get_content(metadata_mode=MetadataMode.EMBED)
    query = ctx.embed_query(unnamed)
    whole = api.cosine(query, ctx.embed_texts([embedded])[embedded])
    said = api.cosine(query, ctx.embed_texts([answer])[answer])
    assert whole < pointer["context"] < said   # by its cosine the chunk would be traded
    assert pointer["displaces"] == pytest.approx(said, abs=1e-3)
    assert out == candidates and decision["fired"] is False and pointer["outcome"] == "under the gate"
    # A question that names the referring document retells the pointer it means: the chunk counts by its
    # cosine, and is traded.
    out, decision = run_nodes(deal, LIABILITY_Q, candidates, window=3)
    pointer = decision["considered"][0]
    assert decision["named"] == [NOTE] and pointer["displaces"] < pointer["context"]
    assert decision["fired"] is True and docs_of(out)[:3] == [NOTE, CANTEEN, LIABILITY]


def test_swap_never_trades_a_chunk_of_a_document_the_question_names(deal):
    _, chunks = deal
    node = {d: NodeWithScore(node=chunks[d], score=1.0) for d in (NOTE, CANTEEN, PRICING)}
    candidates = [node[NOTE], node[CANTEEN], _second_chunk(deal, CANTEEN), node[PRICING]]
    out, decision = run_nodes(deal, LIABILITY_Q, candidates, window=3, gate=0.0)
    assert decision["fired"] is True                 # the canteen's repeat is spared for the memo
    named = LIABILITY_Q.replace("The board note says", "The board note and the canteen notice say")
    out, decision = run_nodes(deal, named, candidates, window=3, gate=0.0)
    assert CANTEEN in decision["named"] and NOTE in decision["named"]
    assert out == candidates and decision["fired"] is False
    assert decision["considered"][0]["outcome"] == "no chunk to spare in the window"



def test_swap_never_trades_a_chunk_of_another_document_the_candidates_point_at(deal):
    _, chunks = deal
    node = {d: NodeWithScore(node=chunks[d], score=1.0) for d in (NOTE, CANTEEN, PRICING)}
    # The board note points at the liability memo (the question's pointer) and at Exhibit B. Exhibit B's repeat
    # is retrieved and pointed at: trading it would trade one pointer's target for another's (git_d16 lost a
    # pack-format answer so). The canteen notice's repeat, pointed at by nobody, is traded.
    candidates = [node[NOTE], node[PRICING], _second_chunk(deal, PRICING), node[CANTEEN]]
    out, decision = run_nodes(deal, LIABILITY_Q, candidates, window=3, gate=0.0)
    assert PRICING in {c["target"] for c in decision["considered"]}
    assert decision["considered"][0]["target"] == LIABILITY
    assert out == candidates and decision["fired"] is False
    assert decision["considered"][0]["outcome"] == "no chunk to spare in the window"
    candidates = [node[NOTE], node[CANTEEN], _second_chunk(deal, CANTEEN), node[PRICING]]
    out, decision = run_nodes(deal, LIABILITY_Q, candidates, window=3, gate=0.0)
    assert decision["fired"] is True and docs_of(out)[:3] == [NOTE, CANTEEN, LIABILITY]

# A note long enough for two small chunks: its reference to the pricing exhibit is in the second.
LONG_NOTE = "10_purchase_note.md"
LONG_NOTE_TEXT = ("# Purchase Note\n\nThe purchasing team met the supplier in Rotterdam in March and walked through "
                  "the assembly line, the warehouse and the test bench for the new servo drives, and agreed on a "
                  "schedule for the first deliveries of the year.\n\nUnit prices for the servo motors follow "
                  "Exhibit B - Pricing, which the supplier confirmed at the meeting.\n")


def as_passage(chunks) -> NodeWithScore:
    """Neighbouring chunks as the core's first stage returns them: one node, the first chunk's, with their text."""
    node = chunks[0].model_copy()
    node.set_content(" ".join(c.get_content() for c in chunks))
    return api.annotate(NodeWithScore(node=node, score=1.0), passage=[c.node_id for c in chunks])


def test_a_passage_counts_the_references_of_every_chunk_it_joins_and_covers_them(deal_files, corpus_writer,
                                                                                 tmp_path_factory,
                                                                                 bundled_embed_model):
    root = tmp_path_factory.mktemp("passage")
    rp = make_rag([plugin], {"chunk_size": 48, "chunk_overlap": 0, "crossref": {}}, embed_model=bundled_embed_model,
                  persist_dir=root / "idx")
    rp.index_paths([corpus_writer(root / "corpus", {**deal_files, LONG_NOTE: LONG_NOTE_TEXT})])
    ctx = rp.context()
    note = sorted((n for n in ctx.all_nodes() if n.ref_doc_id == LONG_NOTE),
                  key=lambda n: n.metadata[api.CHUNK_INDEX_KEY])
    assert len(note) == 2 and "Exhibit B" in note[1].get_content() and "Exhibit B" not in note[0].get_content()
    # The core joined the note's two chunks, the first having earned the place.
    passage = [as_passage(note)]
    assert api.passage_members(passage[0]) == [note[0].node_id, note[1].node_id]
    with query_scope(PRICE_Q, filters=None) as tr:
        out = CrossrefHop(ctx=ctx, gate=0.0, placement="append").postprocess_nodes(
            list(passage), query_bundle=QueryBundle(PRICE_Q))
    assert tr.get("crossref", "hop")["chosen"] == [PRICING]
    assert out[0] is passage[0] and len(out) > 1 and set(docs_of(out[1:])) == {PRICING}
    # A chunk already inside a passage is in the list: the hop does not add it again.
    pricing = sorted((n for n in ctx.all_nodes() if n.ref_doc_id == PRICING),
                     key=lambda n: n.metadata[api.CHUNK_INDEX_KEY])
    joined = [as_passage(pricing)]
    with query_scope(PRICE_Q, filters=None) as tr:
        out = CrossrefHop(ctx=ctx, gate=0.0, placement="append").postprocess_nodes(
            list(passage) + joined, query_bundle=QueryBundle(PRICE_Q))
    assert len(pricing) == 2  # the exhibit's two chunks, as one passage
    # (gate 0: from the covered exhibit the hop may go on to the agreement it points at, never back to the exhibit)
    assert out[:2] == list(passage) + joined and PRICING not in docs_of(out[2:])
    assert [c.get("outcome") for c in tr.get("crossref", "hop")["considered"] if c["target"] == PRICING] == ["covered"]
