"""A place a document names in itself ("see Section 8.3", a link to one of its anchors): stored with the
reference, and brought to the end of a list that has room, under the same gate as a pointer elsewhere. And a
section another document names, when the window holds its document but not it."""

from __future__ import annotations

import pytest
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.core.vector_stores.types import FilterOperator, MetadataFilter, MetadataFilters

import ragplugins_crossref.plugin as plugin
from ragplugins import api
from ragplugins.api import query_scope
from ragplugins.testing import make_rag
from ragplugins_crossref.hop import CrossrefHop, contents_entry
from ragplugins_crossref.resolve import REFS_KEY, load_refs

HANDBOOK = "handbook.md"
# One file, one section per chunk (splitter = "sections", small chunks): a single-file handbook.
SECTIONS = {
    "leave": ("## 7.2 Annual leave\n\nEvery employee has 25 days of annual leave a year. Leave is booked in the "
              "staff portal. Overtime worked on a public holiday is compensated as set out in Section 8.3."),
    "hours": ("## 8.1 Working hours\n\nCore hours run from ten to four. Flexible time is recorded in the time "
              "sheet every Friday."),
    "remote": ("## 8.2 Remote work\n\nRemote work needs a signed agreement with the team lead. Equipment is "
               "provided by the IT desk, see [the equipment rules](#91-equipment)."),
    "overtime": ("## 8.3 Overtime\n\nEach extra hour is paid at one and a half times the hourly rate, or taken "
                 "as time off within three months. A manager approves it in advance."),
    "equipment": ("## 9.1 Equipment\n\nLaptops are replaced every four years. A broken screen is reported to "
                  "the IT desk within one day. Printers are shared per floor and toner is ordered by the office "
                  "manager."),
    "canteen": ("## 10.1 Canteen\n\nThe canteen closes at half past two on Fridays. Vegetarian dishes are served "
                "every day. Coffee is free, and the kitchen on each floor has a fridge for lunches brought from "
                "home."),
}
# Names the place, as a reader who saw the pointer asks ("... as set out in Section 8.3").
QUESTION = "Overtime on a public holiday is compensated as set out in Section 8.3: how is it paid?"


def sectioned(root, embed_model, files):
    """(context, {section name: its chunk}) of ``files`` indexed one section per chunk; a file's own chunk is named
    by the file."""
    (root / "docs").mkdir()
    for name, text in files.items():
        (root / "docs" / name).write_text(text)
    rp = make_rag([plugin], {"crossref": {}, "splitter": "sections", "chunk_size": 64, "chunk_overlap": 0},
                  embed_model=embed_model, persist_dir=root / "idx")
    rp.index_paths([root / "docs"])
    ctx = rp.context()
    chunks = {name: next(n for n in ctx.all_nodes() if text.split("\n\n")[1][:40] in n.get_content())
              for name, text in SECTIONS.items()}
    chunks |= {name: n for n in ctx.all_nodes() for name in files if n.ref_doc_id == name != HANDBOOK}
    assert len({c.node_id for c in chunks.values()}) == len(chunks)   # the lists below are exact
    return ctx, chunks


HANDBOOK_TEXT = "# Staff Handbook\n\n" + "\n\n".join(SECTIONS.values()) + "\n"


@pytest.fixture(scope="module")
def handbook(tmp_path_factory, bundled_embed_model):
    return sectioned(tmp_path_factory.mktemp("within"), bundled_embed_model, {HANDBOOK: HANDBOOK_TEXT})


def run(handbook, names, query=QUESTION, **params):
    ctx, chunks = handbook
    candidates = [NodeWithScore(node=chunks[n], score=1.0) for n in names]
    with query_scope(query, filters=None) as tr:
        out = CrossrefHop(ctx=ctx, **params).postprocess_nodes(list(candidates), query_bundle=QueryBundle(query))
    return candidates, out, tr.get("crossref", "hop")


def test_a_documents_own_sections_and_anchors_are_stored_as_places(handbook):
    _, chunks = handbook
    leave = {r["ref"]: r for r in load_refs(chunks["leave"].metadata[REFS_KEY])}
    assert leave["section 8.3"]["how"] == "internal" and leave["section 8.3"]["target"] is None
    assert leave["section 8.3"]["chunk"] == chunks["overtime"].node_id
    link = next(r for r in load_refs(chunks["remote"].metadata[REFS_KEY]) if r["kind"] == "link")
    assert link["how"] == "internal" and link["chunk"] == chunks["equipment"].node_id


def test_a_short_list_gets_the_place_its_top_chunk_points_at(handbook):
    _, chunks = handbook
    candidates, out, decision = run(handbook, ["leave", "canteen"])
    assert out[:2] == candidates and [n.node.node_id for n in out[2:]] == [chunks["overtime"].node_id]
    tag = api.tags(out[2])["crossref"]
    assert tag["via_crossref"] and tag["from_doc"] == HANDBOOK and tag["target"] == HANDBOOK
    assert decision["fired"] is True and decision["added"] == [chunks["overtime"].node_id]


def test_a_listed_place_a_weak_pointer_and_a_full_window_add_nothing(handbook):
    _, chunks = handbook
    # Listed already: nothing to bring.
    candidates, out, decision = run(handbook, ["leave", "overtime"])
    assert out == candidates and decision["fired"] is False
    # A named place still needs its pointer's sentence to match the question gate x as well as the weakest candidate.
    candidates, out, decision = run(handbook, ["leave"], gate=5.0)
    assert out == candidates and [p["outcome"] for p in decision["considered"]] == ["under the gate"]
    # Followed: a link to one of the page's headings, from the second candidate, named by its words.
    _, out, decision = run(handbook, ["canteen", "remote"], query="When do the equipment rules replace a laptop?")
    assert out[-1].node.node_id == chunks["equipment"].node_id and decision["fired"] is True
    # A place the question does not name is not brought, however well its pointer's sentence matches.
    candidates, out, decision = run(handbook, ["leave", "canteen"], query="How is overtime on a public holiday paid?")
    assert out == candidates and [p["outcome"] for p in decision["considered"]] == [
        "the question does not name this place"]
    # A full window (window 2 here) is the swap's: it trades only chunks of third documents, and says the places
    # it did not weigh are there.
    candidates, out, decision = run(handbook, ["leave", "canteen"], window=2)
    assert out == candidates and decision["fired"] is False
    assert decision["reason"] == ("no resolved references to other documents in the top candidates; their "
                                  "references to places of their own document (1) are weighed only in a list "
                                  "shorter than the window (2)")


def test_the_place_is_brought_only_if_the_hosts_filter_lets_the_query_see_it(handbook):
    ctx, chunks = handbook
    candidates = [NodeWithScore(node=chunks[n], score=1.0) for n in ("leave", "canteen")]
    # The filter lets the query see the two candidates' chunks and not the place.
    seen = [chunks[n].metadata[api.CHUNK_INDEX_KEY] for n in ("leave", "canteen")]
    only = MetadataFilters(filters=[MetadataFilter(key=api.CHUNK_INDEX_KEY, value=seen, operator=FilterOperator.IN)])
    with query_scope(QUESTION, filters=only) as tr:
        out = CrossrefHop(ctx=ctx).postprocess_nodes(list(candidates), query_bundle=QueryBundle(QUESTION))
    assert out == candidates and [p["outcome"] for p in tr.get("crossref", "hop")["considered"]] == [
        "not visible to this query"]


# -- a section another document names -------------------------------------------------------------------------

NOTES = "payroll.md"
# Names the handbook's overtime section by a link; the question retells the note.
NOTE = ("# Payroll notes\n\nWork on a public holiday is compensated as the handbook's "
        "[overtime rules](handbook.md#83-overtime) set out.")
PAYROLL_Q = "Work on a public holiday is compensated as the overtime rules set out: how is an extra hour paid?"


@pytest.fixture(scope="module")
def payroll(tmp_path_factory, bundled_embed_model):
    return sectioned(tmp_path_factory.mktemp("named"), bundled_embed_model, {HANDBOOK: HANDBOOK_TEXT, NOTES: NOTE})


def test_a_later_chunk_of_the_pointed_at_document_makes_way_for_the_section_named(payroll):
    # BIND's manual: the window held the referrer and the DNSSEC guide's other chunks, not the section linked.
    _, chunks = payroll
    candidates, out, decision = run(payroll, [NOTES, "hours", "remote", "canteen"], PAYROLL_Q, window=4, gate=0.0)
    pointer = decision["considered"][0]
    assert pointer["target"] == HANDBOOK and pointer["section_chunk"] == chunks["overtime"].node_id
    assert decision["fired"] is True and pointer["outcome"] == "followed"
    # The handbook keeps its best-ranked chunk where it was; a later one leaves the window for the named section.
    ids = [n.node.node_id for n in out]
    assert out[:2] == candidates[:2] and chunks["overtime"].node_id in ids[:4] and len(out) == len(candidates)
    assert api.tags(out[ids.index(chunks["overtime"].node_id)])["crossref"]["target"] == HANDBOOK


def test_the_pointed_at_document_s_only_chunk_and_a_listed_section_are_not_traded(payroll):
    # One chunk of the handbook in a full window: its best-ranked, which stays.
    candidates, out, decision = run(payroll, [NOTES, "hours"], PAYROLL_Q, window=2, gate=0.0)
    assert out == candidates and decision["considered"][0]["outcome"] == "no chunk to spare in the window"
    # The named section listed already: nothing to bring.
    candidates, out, decision = run(payroll, [NOTES, "overtime", "hours", "canteen"], PAYROLL_Q, window=4, gate=0.0)
    assert out == candidates and decision["fired"] is False


GUIDE = {
    "contents.md": "# Staff Guide\n\n- [1. Annual leave](leave.md)\n- [2. Overtime pay](overtime.md)\n"
                   "  - [2.1. Overtime on holidays](overtime.md#holidays)\n- [3. The canteen](canteen.md)\n",
    "leave.md": "# Annual leave\n\nEvery employee has 25 days of annual leave a year. Hours worked beyond the "
                "contract are paid as the [overtime rules](overtime.md) set out.",
    "overtime.md": "# Overtime pay\n\nEach extra hour is paid at one and a half times the hourly rate, or taken as "
                   "time off within three months.\n\n## Overtime on holidays {#holidays}\n\nDouble rate.",
    "canteen.md": "# The canteen\n\nThe canteen closes at half past two on Fridays. Coffee is free.",
}


@pytest.fixture(scope="module")
def guide(tmp_path_factory, bundled_embed_model):
    root = tmp_path_factory.mktemp("guide")
    (root / "docs").mkdir()
    for name, text in GUIDE.items():
        (root / "docs" / name).write_text(text)
    rp = make_rag([plugin], {"crossref": {}}, embed_model=bundled_embed_model, persist_dir=root / "idx")
    rp.index_paths([root / "docs"])
    ctx = rp.context()
    return ctx, {n.ref_doc_id: n for n in ctx.all_nodes()}


def test_a_contents_list_s_entries_are_no_pointers(guide):
    # Linux-PAM's and SCons' contents pages (new users' walkthroughs): at k = 3 the hop followed an entry, whose
    # words are a section's title, and appended a chunk that answered nothing. A sentence of the text that links to
    # the same page is a pointer.
    ctx, docs = guide
    question = "How is overtime paid?"
    for first, brought in (("contents.md", []), ("leave.md", [docs["overtime.md"].node_id])):
        candidates = [NodeWithScore(node=docs[first], score=1.0), NodeWithScore(node=docs["canteen.md"], score=0.5)]
        with query_scope(question, filters=None) as tr:
            out = CrossrefHop(ctx=ctx).postprocess_nodes(list(candidates), query_bundle=QueryBundle(question))
        assert [n.node.node_id for n in out[2:]] == brought, tr.get("crossref", "hop")
    refs = load_refs(docs["contents.md"].metadata[REFS_KEY])
    assert {r["target"] for r in refs} >= {"overtime.md", "leave.md"}   # still stored: only the hop reads past them
    # An entry whose link the splitter cut at a chunk's start (PostgreSQL's chapter contents) is one too.
    assert contents_entry("Partitioning and Constraint Exclusion](ddl-partitioning.html#DDL-PARTITIONING)")
    assert not contents_entry("Exclusion](ddl-partitioning.html) explains when a partition is skipped.")
