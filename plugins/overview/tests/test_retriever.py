"""The wrapper driven by a fake context (no models, no store): boost, adaptive, restrict, degradation."""

from __future__ import annotations

import asyncio
import warnings
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeRelationship, NodeWithScore, QueryBundle, RelatedNodeInfo, TextNode
from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters

from ragplugins import api
from ragplugins.api import StoreAdapter, query_scope
from ragplugins.testing import current_filters
from ragplugins_overview import OverviewConfig, OverviewRetriever
from ragplugins_overview.sidecar import Overviews, location_for


class Owner:
    """Stands for a vector store (the base adapter's in-memory plugin state lives as long as it)."""


class FakeContext:
    embedder_id = "fake-embedder:3"

    def __init__(self, queries: dict[str, list[float]], restricted: Any = None):
        self.queries = queries
        self.restricted = restricted
        self.vector_store = Owner()
        self.store = StoreAdapter(SimpleNamespace(vector_store=self.vector_store), index_uid=f"fake:{id(self)}")
        self.index_id = self.store.index_id
        self.config = SimpleNamespace(core=SimpleNamespace(top_k=10, table="chunks"))
        self.top_k = 10
        self.searches: list[dict] = []

    def state(self, plugin: str):
        return self.store.state(plugin)

    def embed_query(self, text: str) -> list[float]:
        return list(self.queries[text])

    def allowed_documents(self, candidates=()):
        return None   # the fake index holds no chunks a filter could exclude

    def search_within_documents(self, query, doc_ids, k):
        # As RagContext does: the query's filters come from its inputs, never from the plugin.
        filters = current_filters()
        self.searches.append({"query": query, "doc_ids": list(doc_ids), "k": k, "filters": filters})
        return self.restricted

    def store_overviews(self, vectors: dict[str, list[float]], embedder: str | None = None,
                        index_id: str | None = None) -> None:
        ids = sorted(vectors)
        matrix = np.array([vectors[d] for d in ids], dtype=np.float32)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the "kept in memory only" notice
            location_for(self).write(Overviews(
                ids, ["h"] * len(ids), [f"overview of {d}" for d in ids], ["extractive"] * len(ids), matrix,
                embedder or self.embedder_id, index_id or self.index_id))


def chunk(node_id: str, doc_id: str, embedding: list[float] | None = None, score: float = 1.0) -> NodeWithScore:
    node = TextNode(id_=node_id, text=f"text of {node_id}", embedding=embedding,
                    relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=doc_id)})
    return NodeWithScore(node=node, score=score)


class ListRetriever(BaseRetriever):
    """Returns the same candidates for every query, and remembers the queries."""

    def __init__(self, results: list[NodeWithScore]):
        super().__init__()
        self.results = results
        self.queries: list[str] = []

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        self.queries.append(query_bundle.query_str)
        return list(self.results)


# Three topics; "fees" points at doc a only, "vague" is equally close to every document.
DOCS = {"a": [1, 0, 0], "b": [0, 1, 0], "c": [0, 0, 1], "d": [0, 0.1, 1], "e": [0.1, 0, 1], "f": [0, 1, 0.1]}
QUERIES = {"fees": [1, 0.05, 0.05], "vague": [1, 1, 1], "other": [0, 0, 1]}
CANDIDATES = [("n1", "b"), ("n2", "c"), ("n3", "a"), ("n4", "d"), ("n5", "a")]


def _setup(restricted=(), **config):
    ctx = FakeContext(QUERIES, None if restricted is None else list(restricted))
    ctx.store_overviews(DOCS)
    inner = ListRetriever([chunk(n, d, embedding=DOCS[d]) for n, d in CANDIDATES])
    # These tests exercise what each mode does once it acts; the gate that decides whether it acts on the
    # first stage's candidates (require_runner_up, on by default) has its own tests below.
    config.setdefault("require_runner_up", False)
    return ctx, OverviewRetriever(inner, ctx, OverviewConfig(**config))


def _run(retriever, query, filters=None):
    with query_scope(query, filters=filters) as tr:
        out = retriever.retrieve(query)
    return out, tr


def _ids(results):
    return [n.node.node_id for n in results]


def test_adaptive_brings_in_the_best_chunks_of_the_document_that_stands_out_and_drops_no_candidate():
    restricted = [chunk("n6", "a", DOCS["a"]), chunk("n5", "a", DOCS["a"]), chunk("n3", "a", DOCS["a"])]
    ctx, retriever = _setup(restricted=restricted)
    filters = MetadataFilters(filters=[MetadataFilter(key="year", value=2024)])
    out, tr = _run(retriever, "fees", filters=filters)
    assert ctx.searches == [{"query": "fees", "doc_ids": ["a"], "k": 5, "filters": filters}]
    # "a" takes the first place and keeps its other place (rank 5), filled in the order of the RRF of the
    # candidates and the search inside "a" (n3 and n5 are in both; n6, rank 1 inside, follows them); the other
    # documents' candidates keep their order; no candidate is dropped.
    assert _ids(out) == ["n3", "n1", "n2", "n4", "n5", "n6"]
    assert api.tags(out[5])["overview"] == {"added_by": "adaptive", "restricted_rank": 1}
    step = tr.get("overview", "add")
    assert step["applied"] and step["added"] == ["n6"] and step["before"] == ["n1", "n2", "n3", "n4", "n5"]
    assert step["reason"] == "merged 1 of the selected documents' best chunks into the candidates"
    # Nothing new inside "a": its chunks move, and the reason says that much ("merged" misled FRRouting's user).
    _, retriever = _setup(restricted=[chunk("n5", "a", DOCS["a"]), chunk("n3", "a", DOCS["a"])])
    out, tr = _run(retriever, "fees")
    step = tr.get("overview", "add")
    assert _ids(out)[0] == "n3" and not step["added"], _ids(out)
    assert step["reason"] == "moved the selected documents' chunks among the candidates (none added)"


def test_adaptive_keeps_the_first_stage_order_of_the_chosen_documents_candidates():
    # The dense search inside "a" ranks n5 above n3; the first stage (both legs) ranked n3 above n5, and
    # the overviews chose the document, not the chunk: n3 keeps its lead (sqlite_f15 lost its answer chunk,
    # rank 3 -> 11, when the search inside reordered its page).
    restricted = [chunk("n6", "a", DOCS["a"]), chunk("n5", "a", DOCS["a"]), chunk("n7", "a", DOCS["a"]),
                  chunk("n8", "a", DOCS["a"]), chunk("n3", "a", DOCS["a"])]
    _, retriever = _setup(restricted=restricted)
    out, _ = _run(retriever, "fees")
    order = _ids(out)
    assert order.index("n3") < order.index("n5") and order[:5] == ["n3", "n1", "n2", "n4", "n5"]
    assert [n.score for n in out] == sorted((n.score for n in out), reverse=True)


def test_adaptive_settles_the_lead_and_moves_no_other_documents_chunk_but_the_first_one_place():
    # sqlite_p16 (dev): the overviews picked the runner-up's page; the merge put eight of its chunks first and
    # pushed the answer, another page's rank-4 chunk, to rank 11. Inside the window the picked document takes
    # the first place and keeps the places it held; n4 (another document's) stays 4th.
    candidates = [("m1", "b"), ("m2", "a"), ("m3", "c"), ("m4", "d"), ("m5", "a"), ("m6", "a"), ("m7", "e"),
                  ("m8", "a"), ("m9", "f"), ("m10", "c"), ("m11", "a"), ("m12", "a")]
    restricted = [chunk(n, "a", DOCS["a"]) for n in ("m12", "m11", "m8", "m6", "m5", "m2", "x1")]
    ctx = FakeContext(QUERIES, restricted)
    ctx.store_overviews(DOCS)
    inner = ListRetriever([chunk(n, d, embedding=DOCS[d]) for n, d in candidates])
    out, _ = _run(OverviewRetriever(inner, ctx, OverviewConfig(require_runner_up=False, window=10)), "fees")
    order = _ids(out)
    assert [order.index(n) for n in ("m1", "m3", "m4", "m7", "m9", "m10")] == [1, 2, 3, 6, 8, 9]
    assert {order[i] for i in (0, 4, 5, 7)} <= {"m2", "m5", "m6", "m8", "m11", "m12", "x1"}
    assert sorted(order) == sorted([n for n, _ in candidates] + ["x1"])          # nothing dropped


@pytest.mark.parametrize("restricted", [None, []])
def test_adaptive_without_chunks_from_inside_still_boosts_the_document(restricted):
    _, retriever = _setup(restricted=restricted)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out, tr = _run(retriever, "fees")
    assert bool(caught) == (restricted is None) and not tr.get("overview", "add")["applied"]
    assert _ids(out) == ["n3", "n5", "n1", "n2", "n4"]
    select = tr.get("overview", "select")
    assert select["applied"] and [d["doc_id"] for d in select["documents"]] == ["a"]
    assert select["documents"][0]["score"] > 0.99 and select["documents"][0]["z"] >= 3.5
    boost = tr.get("overview", "boost")
    assert boost["before"] == ["n1", "n2", "n3", "n4", "n5"] and boost["after"] == _ids(out)
    assert api.tags(out[0])["overview"]["doc_rank"] == 1 and "overview" not in api.tags(out[2])
    assert [n.score for n in out] == [1.0] * 5  # the first stage's scores, in the boosted order


@pytest.mark.parametrize("mode", ["adaptive", "boost"])
def test_a_steered_list_keeps_the_first_stages_scores_in_its_own_order(mode):
    # The merges rank by reciprocal rank (about 0.03); a host's cutoff should meet the first stage's scale.
    ctx = FakeContext(QUERIES, [chunk("n6", "a", DOCS["a"]), chunk("n5", "a", DOCS["a"]), chunk("n3", "a", DOCS["a"])])
    ctx.store_overviews(DOCS)
    scores = [2.0, 1.8, 1.6, 1.4, 1.2]
    inner = ListRetriever([chunk(n, d, embedding=DOCS[d], score=s) for (n, d), s in zip(CANDIDATES, scores)])
    out, _ = _run(OverviewRetriever(inner, ctx, OverviewConfig(require_runner_up=False, mode=mode)), "fees")
    assert _ids(out)[0] == "n3"  # steered: the chosen document leads
    assert [n.score for n in out] == (scores + [1.2])[: len(out)]


def test_adaptive_leaves_the_candidates_alone_without_a_clear_margin():
    _, retriever = _setup()
    out, tr = _run(retriever, "vague")
    assert _ids(out) == ["n1", "n2", "n3", "n4", "n5"] and [n.score for n in out] == [1.0] * 5
    select = tr.get("overview", "select")
    assert not select["applied"] and select["reason"].startswith("no clear margin")
    assert tr.get("overview", "boost") is None


def test_adaptive_lets_the_overviews_decide_between_a_runner_up_and_the_first_candidate():
    # "other" matches c best, but not by a clear margin; the first stage put b first and c second.
    restricted = [chunk("n2", "c", DOCS["c"]), chunk("n7", "c", DOCS["c"])]
    ctx, retriever = _setup(restricted=restricted, runner_up_depth=2)
    out, tr = _run(retriever, "other")
    select = tr.get("overview", "select")
    assert select["applied"] and [d["doc_id"] for d in select["documents"]] == ["c"]
    assert "holds first-stage rank 2" in select["reason"] and ctx.searches[0]["doc_ids"] == ["c"]
    assert _ids(out) == ["n2", "n1", "n3", "n4", "n5", "n7"]          # c's chunk leads; nothing dropped
    # Off by default (runner_up_depth = 1); nothing to decide when c already holds the first place.
    _, retriever = _setup(restricted=restricted)
    out, tr = _run(retriever, "other")
    assert _ids(out) == ["n1", "n2", "n3", "n4", "n5"] and not tr.get("overview", "select")["applied"]
    ctx = FakeContext(QUERIES, restricted)
    ctx.store_overviews(DOCS)
    first = OverviewRetriever(ListRetriever([chunk("n2", "c", DOCS["c"]), chunk("n1", "b", DOCS["b"])]), ctx,
                              OverviewConfig(runner_up_depth=2))
    out, tr = _run(first, "other")
    assert _ids(out) == ["n2", "n1"] and not tr.get("overview", "select")["applied"] and ctx.searches == []


def test_boost_always_fuses_the_top_documents():
    _, retriever = _setup(mode="boost", top_documents=2)
    out, tr = _run(retriever, "vague")
    chosen = [d["doc_id"] for d in tr.get("overview", "select")["documents"]]
    assert len(chosen) == 2
    boosted = [n for n in out if n.node.ref_doc_id in chosen]
    assert out[: len(boosted)] == boosted and sorted(_ids(out)) == ["n1", "n2", "n3", "n4", "n5"]


def test_each_query_through_the_wrapper_is_scored_again():
    _, retriever = _setup()
    with query_scope("fees", filters=None) as tr:
        retriever.retrieve("fees")
        retriever.retrieve("other")  # e.g. a retry's reformulation passing through the first stage again
    assert tr.get("overview", "select")["query"] == "other"


def test_async_retrieval_steers_the_same_way():
    _, retriever = _setup()

    async def run():
        with query_scope("fees", filters=None):
            return await retriever.aretrieve("fees")

    assert _ids(asyncio.run(run())) == ["n3", "n5", "n1", "n2", "n4"]


def test_restrict_merges_restricted_results_and_keeps_the_callers_filters():
    restricted = [chunk("n5", "a", DOCS["a"]), chunk("n6", "a", DOCS["a"]), chunk("n3", "a", DOCS["a"])]
    ctx, retriever = _setup(restricted=restricted, mode="restrict")
    filters = MetadataFilters(filters=[MetadataFilter(key="year", value=2024)])
    out, tr = _run(retriever, "fees", filters=filters)
    assert ctx.searches == [{"query": "fees", "doc_ids": ["a"], "k": 5, "filters": filters}]
    # Chunks in both lists lead; the restricted search's new chunk competes with the unrestricted ones
    # (rank 2 in its list: after the unrestricted ranks 1 and 2, before rank 4).
    assert _ids(out) == ["n5", "n3", "n1", "n2", "n6"]
    assert api.tags(out[_ids(out).index("n6")])["overview"]["added_by"] == "restrict"
    step = tr.get("overview", "restrict")
    assert step["applied"] and step["added"] == ["n6"] and step["dropped"] == ["n4"]


@pytest.mark.parametrize("restricted, reason", [
    (None, "the search inside the selected documents failed"),
    ([], "nothing matched inside the selected documents"),
])
def test_restrict_keeps_the_unrestricted_candidates_when_the_restricted_search_gives_nothing(restricted, reason):
    _, retriever = _setup(restricted=restricted, mode="restrict")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out, tr = _run(retriever, "fees")
    assert _ids(out) == ["n1", "n2", "n3", "n4", "n5"]
    step = tr.get("overview", "restrict")
    assert not step["applied"] and step["reason"].startswith(reason)
    assert bool(caught) == (restricted is None)


def test_restrict_is_skipped_when_a_chunk_outside_the_documents_matches_better():
    restricted = [chunk("n3", "a", [1, 0.3, 0.3])]  # weaker than the outside chunk below
    ctx = FakeContext(QUERIES, restricted)
    ctx.store_overviews(DOCS)
    inner = ListRetriever([chunk("x", "b", QUERIES["fees"]), chunk("n3", "a", [1, 0.3, 0.3]), chunk("y", "c"),
                           chunk("z", "c")])
    out, tr = _run(OverviewRetriever(inner, ctx, OverviewConfig(mode="restrict")), "fees")
    assert _ids(out) == ["x", "n3", "y", "z"]
    step = tr.get("overview", "restrict")
    assert not step["applied"] and step["outside_best"] > step["inside_best"]


def test_overviews_of_another_embedder_are_refused_with_one_warning():
    ctx = FakeContext(QUERIES)
    ctx.store_overviews(DOCS, embedder="other-embedder:3")
    retriever = OverviewRetriever(ListRetriever([chunk(n, d) for n, d in CANDIDATES]), ctx)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first, tr = _run(retriever, "fees")
        second, _ = _run(retriever, "other")
    assert _ids(first) == _ids(second) == ["n1", "n2", "n3", "n4", "n5"]
    assert len(caught) == 1 and "other-embedder:3" in str(caught[0].message)
    assert "no usable overviews" in tr.get("overview", "select")["reason"]


def test_overviews_of_another_index_are_refused():
    ctx = FakeContext(QUERIES)
    ctx.store_overviews(DOCS, index_id="lancedb:/elsewhere:chunks")
    with pytest.warns(UserWarning, match="belongs to another index"):
        out, _ = _run(OverviewRetriever(ListRetriever([chunk("n1", "a")]), ctx), "fees")
    assert _ids(out) == ["n1"]


def test_a_missing_sidecar_degrades_to_the_candidates():
    ctx = FakeContext(QUERIES)
    with pytest.warns(UserWarning, match="does not exist") as said:
        out, tr = _run(OverviewRetriever(ListRetriever([chunk("n1", "a")]), ctx), "fees")
    assert _ids(out) == ["n1"] and not tr.get("overview", "select")["applied"]
    # The warning and the query's decision give one remedy for one state.
    warning = next(str(w.message) for w in said if "does not exist" in str(w.message))
    assert "`ragplugins prepare`" in warning and "overview rebuild" not in warning, warning
    assert "`ragplugins prepare`" in tr.get("overview", "select")["reason"]


def test_a_query_embedding_of_another_size_is_never_scored():
    ctx = FakeContext({"fees": [1.0, 0.0]})
    ctx.store_overviews(DOCS)
    with pytest.warns(UserWarning, match="2 dimensions"):
        out, _ = _run(OverviewRetriever(ListRetriever([chunk("n1", "a")]), ctx), "fees")
    assert _ids(out) == ["n1"]


# -- the gate (issue 14): act only where the first stage leaves the choice of document open --------

def _gated(candidates, restricted=(), query="fees", **config):
    ctx = FakeContext(QUERIES, list(restricted))
    ctx.store_overviews(DOCS)
    inner = ListRetriever([chunk(n, d, DOCS[d], *score) for n, d, *score in candidates])
    out, tr = _run(OverviewRetriever(inner, ctx, OverviewConfig(**config)), query)
    return ctx, out, tr


def test_the_default_gate_does_not_overrule_the_first_stage():
    # "fees" picks a decisively, but the first stage ranks a third: acting would overrule it, not settle a tie.
    ctx, out, tr = _gated(CANDIDATES, restricted=[chunk("n6", "a", DOCS["a"])])
    select = tr.get("overview", "select")
    assert not select["applied"] and "do not hold the first stage's runner-up" in select["reason"]
    assert _ids(out) == ["n1", "n2", "n3", "n4", "n5"] and ctx.searches == []
    # The behaviour before issue 14, still available: the same pick is acted on.
    ctx, out, tr = _gated(CANDIDATES, restricted=[chunk("n6", "a", DOCS["a"])], require_runner_up=False)
    assert tr.get("overview", "select")["applied"] and ctx.searches[0]["doc_ids"] == ["a"]


def test_the_default_gate_leaves_a_document_the_first_stage_already_ranks_first():
    candidates = [("n3", "a"), ("n1", "b"), ("n5", "a"), ("n2", "c")]
    ctx, out, tr = _gated(candidates, restricted=[chunk("n6", "a", DOCS["a"]), chunk("n7", "a", DOCS["a"])])
    select = tr.get("overview", "select")
    assert not select["applied"] and "already ranks a picked document first" in select["reason"]
    assert _ids(out) == ["n3", "n1", "n5", "n2"] and ctx.searches == []


def test_the_default_gate_settles_a_contest_between_the_first_two_documents():
    candidates = [("n1", "b"), ("n3", "a"), ("n2", "c"), ("n5", "a")]
    ctx, out, tr = _gated(candidates, restricted=[chunk("n3", "a", DOCS["a"]), chunk("n6", "a", DOCS["a"])])
    select = tr.get("overview", "select")
    assert select["applied"] and "holds the first stage's runner-up" in select["reason"]
    assert ctx.searches[0]["doc_ids"] == ["a"]
    assert _ids(out)[0] == "n3" and set(_ids(out)) == {"n1", "n2", "n3", "n5", "n6"}


def test_the_default_gate_leaves_a_question_that_retells_the_picked_document_to_ask_about_another(monkeypatch):
    # The contest above, asked in two sentences: the first retells document a (it matches a's overview), the
    # one that asks wants c (python_p02: "The time module covers time access ... How can I check whether a
    # year has 366 days?", answered by calendar).
    retold, asks = "Fees are due in March.", "What does the other page say?"
    monkeypatch.setitem(QUERIES, f"{retold} {asks}", QUERIES["fees"])
    monkeypatch.setitem(QUERIES, asks, QUERIES["other"])
    contest = [("n1", "b"), ("n3", "a"), ("n2", "c"), ("n5", "a")]
    ctx, out, tr = _gated(contest, restricted=[chunk("n6", "a", DOCS["a"])], query=f"{retold} {asks}")
    select = tr.get("overview", "select")
    assert not select["applied"] and "asking sentence wants another document (c)" in select["reason"]
    assert _ids(out) == ["n1", "n3", "n2", "n5"] and ctx.searches == []
    # Its asking sentence wanting the picked document too, the contest is settled as before.
    monkeypatch.setitem(QUERIES, asks, QUERIES["fees"])
    ctx, out, tr = _gated(contest, restricted=[chunk("n6", "a", DOCS["a"])], query=f"{retold} {asks}")
    assert tr.get("overview", "select")["applied"] and ctx.searches[0]["doc_ids"] == ["a"]


def test_the_asking_sentence_is_the_last_question_of_several_sentences():
    from ragplugins_overview.gate import asking_sentence

    assert asking_sentence("How do I use os.path.join in 3.11?") is None
    assert asking_sentence("The time module covers conversions. How do I test a leap year?") == \
        "How do I test a leap year?"
    assert asking_sentence("Which flag? I need it for the build. Thanks.") == "Which flag?"
    assert asking_sentence("It fails. Tell me why.") == "Tell me why."


def test_the_default_gate_leaves_a_first_place_that_stands_out_of_the_first_stage_s_scores():
    # The contest of the test above, but the first stage's first place leads its runner-up by far more than
    # the steps between the candidates below it: its first place is not in doubt (nodejs_h02, git_g08).
    clear = [("n1", "b", 1.0), ("n3", "a", 0.6), ("n2", "c", 0.55), ("n5", "a", 0.5)]
    ctx, out, tr = _gated(clear, restricted=[chunk("n3", "a", DOCS["a"]), chunk("n6", "a", DOCS["a"])])
    select = tr.get("overview", "select")
    assert not select["applied"] and "first place stands out" in select["reason"]
    assert _ids(out) == ["n1", "n3", "n2", "n5"] and ctx.searches == []
    # A lead no larger than a typical step below it is a contest: settled as before.
    close = [("n1", "b", 1.0), ("n3", "a", 0.98), ("n2", "c", 0.7), ("n5", "a", 0.4)]
    ctx, out, tr = _gated(close, restricted=[chunk("n3", "a", DOCS["a"]), chunk("n6", "a", DOCS["a"])])
    assert tr.get("overview", "select")["applied"] and _ids(out)[0] == "n3"


def test_the_gap_threshold_is_derived_from_the_number_of_documents():
    from ragplugins_overview.gate import noise_gap

    # ln(100) / sqrt(2 ln n): fewer documents need a wider gap; below 3 nothing can be told from noise.
    assert noise_gap(10) == pytest.approx(2.146, abs=1e-3) and noise_gap(268) == pytest.approx(1.377, abs=1e-3)
    assert noise_gap(10) > noise_gap(100) > noise_gap(10_000) and noise_gap(2) == float("inf")
    # The 6 overviews of the fixture need 2.43 robust SDs; the old fixed 1.0 is what a caller may still set.
    ctx, _, tr = _gated([("n1", "b"), ("n3", "a")])
    assert "2.43" in tr.get("overview", "select")["reason"]


def test_a_chunk_the_search_inside_finds_within_a_first_stage_passage_is_not_added_again():
    # The core returned n5 joined with its neighbour n9 as one passage; the search inside "a" finds n9.
    ctx = FakeContext(QUERIES, [chunk("n9", "a", DOCS["a"]), chunk("n6", "a", DOCS["a"])])
    ctx.store_overviews(DOCS)
    candidates = [chunk(n, d, embedding=DOCS[d]) for n, d in CANDIDATES]
    candidates[4] = api.annotate(candidates[4], passage=["n5", "n9"])
    retriever = OverviewRetriever(ListRetriever(candidates), ctx, OverviewConfig(require_runner_up=False))
    out, tr = _run(retriever, "fees")
    assert _ids(out).count("n5") == 1 and "n9" not in _ids(out) and "n6" in _ids(out)
    assert tr.get("overview", "add")["added"] == ["n6"]


def test_the_default_gate_leaves_a_list_too_short_to_tell_whether_its_first_place_is_in_doubt():
    # The contest the gate settles with four candidates, asked at top_k = 3: three scores give no typical step
    # below the runner-up, and acting without one lowered new users' answers at k = 3 (maint-guide's q15).
    close = [("n1", "b", 1.0), ("n3", "a", 0.98), ("n2", "c", 0.7), ("n5", "a", 0.4)]
    ctx, out, tr = _gated(close[:3], restricted=[chunk("n3", "a", DOCS["a"]), chunk("n6", "a", DOCS["a"])])
    select = tr.get("overview", "select")
    assert not select["applied"] and "too few to tell whether its first place is in doubt" in select["reason"]
    assert _ids(out) == ["n1", "n3", "n2"] and ctx.searches == []
    ctx, out, tr = _gated(close, restricted=[chunk("n3", "a", DOCS["a"]), chunk("n6", "a", DOCS["a"])])
    assert tr.get("overview", "select")["applied"] and _ids(out)[0] == "n3"
