import numpy as np
import pytest

from ragplugins_overview.scoring import DocumentRanking, OverviewScorer


def _ranking(scores, median=0.0, spread=0.1):
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    return DocumentRanking(order, [scores[i] for i in order], median, spread, len(scores), True)


def test_one_document_far_above_the_rest_is_decisive():
    chosen, gap = _ranking([0.9, 0.2, 0.15, 0.1]).decisive(min_z=3.5, min_gap=1.0, limit=5)
    assert [p for p, _, _ in chosen] == [0]
    assert gap == pytest.approx(7.0)


def test_the_cut_is_at_the_largest_gap_so_two_close_leaders_are_kept_together():
    chosen, _ = _ranking([0.80, 0.78, 0.2, 0.1]).decisive(min_z=3.5, min_gap=1.0, limit=5)
    assert sorted(p for p, _, _ in chosen) == [0, 1]


def test_leaders_without_a_clear_margin_are_not_decisive():
    # All high, evenly spaced: the largest gap is 0.5 robust SDs.
    chosen, gap = _ranking([0.80, 0.75, 0.70, 0.65, 0.60, 0.55]).decisive(min_z=3.5, min_gap=1.0, limit=5)
    assert chosen == [] and gap == pytest.approx(0.5)


def test_a_clear_gap_below_the_outlier_level_is_not_decisive():
    chosen, gap = _ranking([0.30, 0.1, 0.05]).decisive(min_z=3.5, min_gap=1.0, limit=5)
    assert chosen == [] and gap == pytest.approx(2.0)


def test_no_spread_means_nothing_can_be_told_apart():
    assert _ranking([0.5, 0.5, 0.5], median=0.5, spread=0.0).decisive(3.5, 1.0, 5) == ([], 0.0)


def _unit(rows):
    rows = np.asarray(rows, dtype=np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_exact_scores_order_and_robust_statistics():
    vectors = _unit([[1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 1], [-1, 0, 0]])
    ranking = OverviewScorer(vectors).rank(np.array([2.0, 0, 0]), 3)
    assert ranking.positions == [0, 2, 1]
    assert ranking.scores[0] == pytest.approx(1.0) and ranking.scores[1] == pytest.approx(2 ** -0.5, abs=1e-6)
    all_scores = vectors @ np.array([1, 0, 0], dtype=np.float32)
    assert ranking.median == pytest.approx(float(np.median(all_scores)))
    assert ranking.spread == pytest.approx(1.4826 * float(np.median(np.abs(all_scores - np.median(all_scores)))))
    assert ranking.exact


def test_a_query_of_another_dimension_is_refused():
    with pytest.raises(ValueError, match="3 dimensions"):
        OverviewScorer(_unit([[1, 0, 0, 0]])).rank(np.ones(3), 1)


def test_hash_preselection_finds_the_same_best_documents_as_the_exact_scan():
    rng = np.random.default_rng(0)
    centres = _unit(rng.standard_normal((60, 64)))
    vectors = _unit(centres[rng.integers(0, 60, 6000)] + 0.8 * _unit(rng.standard_normal((6000, 64))))
    approx, exact = OverviewScorer(vectors, exact_limit=1000), OverviewScorer(vectors, exact_limit=10_000)
    assert not approx.exact and exact.exact
    for i in range(20):
        query = vectors[i * 300] + 0.3 * _unit(rng.standard_normal((1, 64)))[0]
        a, e = approx.rank(query, 5), exact.rank(query, 5)
        assert a.positions[:3] == e.positions[:3]
        assert a.scores[0] == pytest.approx(e.scores[0], abs=1e-6)
        assert abs(a.median - e.median) < 0.1 * e.spread
        assert a.spread == pytest.approx(e.spread, rel=0.15)
