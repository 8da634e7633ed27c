import math
from types import SimpleNamespace

import pytest
from retry_testkit import node

from ragplugins.api import ChunkRow, annotate
from ragplugins_retry import DenseContrastSignal, QueryCoverageSignal, RerankProbabilitySignal


def _ctx(query_vec):
    return SimpleNamespace(embed_query=lambda text: list(query_vec))


def _unit(cos):
    """A 2-d unit vector whose cosine with (1, 0) is ``cos``."""
    return [cos, math.sqrt(1 - cos * cos)]


def test_contrast_is_top_against_the_mean_of_ranks_six_and_below():
    cosines = [0.9, 0.5, 0.45, 0.4, 0.35, 0.3, 0.2, 0.1]
    nodes = [node(f"n{i}", embedding=_unit(c)) for i, c in enumerate(reversed(cosines))]  # order must not matter
    m = DenseContrastSignal().measure("q", nodes, _ctx([1.0, 0.0]), retrieved_for="q")
    background = (0.3 + 0.2 + 0.1) / 3
    assert m.value == pytest.approx((0.9 - background) / (1 - background), abs=1e-9)
    assert m.details["cosines"] == 8 and m.details["from_vectors"] == 8


def test_contrast_measures_unnormalised_vectors_as_cosines():
    nodes = [node(f"n{i}", embedding=[5 * c for c in _unit(c)]) for i, c in
             enumerate([0.9, 0.5, 0.45, 0.4, 0.35, 0.3])]
    m = DenseContrastSignal().measure("q", nodes, _ctx([3.0, 0.0]), retrieved_for="q")
    assert m.value == pytest.approx((0.9 - 0.3) / 0.7)


def test_contrast_uses_core_annotations_only_for_the_query_they_were_measured_with():
    nodes = [annotate(node(f"n{i}"), dense_cosine=c) for i, c in enumerate([0.8, 0.6, 0.5, 0.4, 0.3, 0.2])]
    same = DenseContrastSignal().measure("q", nodes, _ctx([1.0, 0.0]), retrieved_for="q")
    assert same.value == pytest.approx((0.8 - 0.2) / 0.8)
    other = DenseContrastSignal().measure("q", nodes, _ctx([1.0, 0.0]), retrieved_for="q rewritten")
    assert other.value is None and "dense cosine" in other.reason


def test_contrast_needs_six_cosines_and_says_so():
    nodes = [node(f"n{i}", embedding=_unit(0.5)) for i in range(5)] + [node("bm25-only")]
    m = DenseContrastSignal().measure("q", nodes, _ctx([1.0, 0.0]), retrieved_for="q")
    assert m.value is None
    assert "only 5 of 6 candidates" in m.reason and "BM25" in m.reason


def test_rerank_probability_is_the_best_calibrated_probability():
    nodes = [annotate(node("a"), rerank_probability=0.2), annotate(node("b"), rerank_probability=0.7),
             annotate(node("c"), rerank_probability=3.5), node("d")]
    m = RerankProbabilitySignal().measure("q", nodes, None, retrieved_for="q")
    assert m.value == 0.7 and m.details["scored"] == 2
    none = RerankProbabilitySignal().measure("q", [node("a", score=0.9)], None, retrieved_for="q")
    assert none.value is None and "no calibrated reranker" in none.reason


def test_query_coverage_weights_rare_question_terms():
    top = node("top", "The annual fee is payable quarterly.")
    rest = [node(f"r{i}", "The fee schedule is attached.") for i in range(5)]
    m = QueryCoverageSignal().measure("What is the annual fee?", [top, *rest], None, retrieved_for="x")
    # 'fee' is in all 6 candidates, 'annual' only in one: the top candidate holds both.
    assert m.value == pytest.approx(1.0)
    weak = QueryCoverageSignal().measure("What is the annual fee?", rest + [top], None, retrieved_for="x")
    w_fee, w_annual = math.log(7 / 6.5), math.log(7 / 1.5)
    assert weak.value == pytest.approx(w_fee / (w_fee + w_annual))
    assert weak.details["missing_in_top"] == ["annual"]


def test_query_coverage_needs_content_words():
    m = QueryCoverageSignal().measure("What is it?", [node("a", "text")], None, retrieved_for="x")
    assert m.value is None and "no content words" in m.reason


def test_query_coverage_compares_both_sets_with_pooled_term_weights():
    # Alone, the retry set looks better: 'fee' is rare in it, so its top candidate covers a rare term.
    # Pooled with the original (where 'fee' is everywhere), 'fee' weighs little and 'annual' much:
    # the original's top candidate holds both terms, the retry's only 'fee'.
    original = [node("o0", "The annual fee is payable quarterly.")] + [node(f"o{i}", "The fee schedule.")
                                                                        for i in range(1, 6)]
    retry = [node("n0", "A fee applies.")] + [node(f"n{i}", "Unrelated text.") for i in range(1, 6)]
    signal, q = QueryCoverageSignal(top_n=1), "What is the annual fee?"
    alone = signal.measure(q, retry, None, retrieved_for="annual fee")
    before = signal.measure(q, original, None, retrieved_for=q)
    ref, after = signal.compare(q, original, before, retry, "annual fee", None)
    assert alone.value > after.value
    assert ref.value == pytest.approx(1.0) and after.value < 0.5


def test_dense_contrast_compares_the_retry_set_against_the_users_question():
    ctx = SimpleNamespace(embed_query=lambda text: [1.0, 0.0] if text == "q" else [0.0, 1.0])
    original = [node(f"o{i}", embedding=_unit(c)) for i, c in enumerate([0.9, 0.5, 0.45, 0.4, 0.35, 0.3])]
    retry = [node(f"n{i}", embedding=_unit(c)) for i, c in enumerate([0.6, 0.5, 0.45, 0.4, 0.35, 0.3])]
    signal = DenseContrastSignal()
    before = signal.measure("q", original, ctx, retrieved_for="q")
    ref, after = signal.compare("q", original, before, retry, "q rewritten", ctx)
    assert ref is before and after.value == pytest.approx((0.6 - 0.3) / 0.7)


# -- corpus_coverage: the weak-evidence threshold derived from the index and the question (issue 14) --

CHUNKS = ["the annual fee is due in march", "the fee schedule", "espresso pump pressure is nine bar",
          "the annual report", "pump maintenance notes", "nothing relevant here"]


class _Index:
    """Stands for an index whose text the signal reads once (RagContext.cached)."""

    def __init__(self, chunks):
        from llama_index.core.schema import TextNode

        self.index, self.vector_store = object(), object()
        self._nodes, self.reads = [TextNode(text=c) for c in chunks], 0
        self.store = self  # the store adapter's part the signal reads: iter_texts

    def iter_texts(self):
        return (n.get_content() for n in self.all_nodes())

    def all_nodes(self):
        self.reads += 1
        return self._nodes

    def cached(self, key, build):
        if not hasattr(self, "_cache"):
            self._cache = build(self)
        return self._cache

    def cached_for_query(self, key, build):
        # As RagContext does with no filter on the query: the statistics of every chunk.
        return self.cached(key, lambda ctx: build(ChunkRow(n.node_id, n.ref_doc_id, n.get_content(), n.metadata)
                                                  for n in ctx.all_nodes()))


def test_corpus_coverage_is_one_when_the_top_holds_the_most_complete_chunk_of_the_corpus():
    from ragplugins_retry import CorpusCoverageSignal

    ctx, signal = _Index(CHUNKS), CorpusCoverageSignal()
    top = [node("a", CHUNKS[1]), node("b", CHUNKS[0])]
    m = signal.measure("What is the annual fee?", top, ctx, retrieved_for="q")
    assert m.value == 1.0 and m.details["ceiling"] == m.details["top"] == 1.0
    # The same candidates below rank 3: the corpus holds a chunk with more of the question than the top.
    weak = [node("x", CHUNKS[5]), node("y", CHUNKS[4]), node("z", CHUNKS[3]), node("b", CHUNKS[0])]
    m = signal.measure("What is the annual fee?", weak, ctx, retrieved_for="q")
    assert 0 < m.value < 1 and m.details["missing_in_top"] == ["fee"]
    # A question word the index never contains cannot be found by any retry, so it does not count.
    m = signal.measure("What is the annual fee in zorkmids?", top, ctx, retrieved_for="q")
    assert m.value == 1.0 and "zorkmid" not in m.details["terms"]
    assert signal.measure("What is it?", top, ctx, retrieved_for="q").value is None
    assert signal.measure("annual fee", top, None, retrieved_for="q").value is None
    assert ctx.reads == 1  # the postings are read once per index state


def test_the_default_gate_fires_only_below_the_corpus_ceiling():
    import ragplugins_retry.plugin as plugin
    from ragplugins_retry import CorpusCoverageSignal
    from ragplugins_retry.config import RetryConfig

    signal, _, threshold = plugin.resolve(RetryConfig())
    # The old default was query_coverage < 0.2, a constant fitted on the public questions.
    assert isinstance(signal, CorpusCoverageSignal) and threshold == 1.0
    ctx = _Index(CHUNKS)
    strong = signal.measure("What is the annual fee?", [node("b", CHUNKS[0])], ctx, retrieved_for="q")
    weak = signal.measure("What is the annual fee?", [node("z", CHUNKS[3])], ctx, retrieved_for="q")
    assert not strong.value < threshold and weak.value < threshold
