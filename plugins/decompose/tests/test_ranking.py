"""Rank arithmetic: aggregates, reciprocal-rank fusion with the first stage, coverage placement."""

import math

import pytest

from ragplugins_decompose import ranking


def test_ranks_are_one_based_and_ties_keep_the_incoming_order():
    assert ranking.ranks([0.2, 0.9, 0.2, float("nan"), 0.5]) == [3, 1, 4, 5, 2]


def test_rrf_fuses_first_stage_rank_and_scorer_rank():
    scores = [0.1, 0.3, 0.2]  # scorer ranks 3, 1, 2; first-stage ranks 1, 2, 3
    fused = ranking.fuse(scores, "rrf", 60)
    assert fused == pytest.approx([1 / 61 + 1 / 63, 1 / 62 + 1 / 61, 1 / 63 + 1 / 62])
    # Candidate 1 wins (2nd + 1st), candidate 0 (1st + 3rd) ties candidate 2 (3rd + 2nd): the
    # first-stage order breaks the tie.
    assert ranking.order_by(fused) == [1, 0, 2]


def test_scores_fusion_is_the_scorer_order_alone():
    assert ranking.order_by(ranking.fuse([0.1, 0.3, 0.2], "scores", 60)) == [1, 2, 0]


def test_rrf_never_lets_the_scorer_alone_sink_the_first_stage_top():
    # The first-stage top is the scorer's worst of 20; it still beats mid-list candidates.
    scores = [0.0] + [1.0 - i / 100 for i in range(1, 20)]
    order = ranking.order_by(ranking.fuse(scores, "rrf", 60))
    assert order.index(0) < 19


def test_mean_and_max_aggregate_over_the_queries():
    matrix = [[0.5, 0.1, 0.3],   # the question
              [0.0, 0.9, 0.3]]   # a sub-query
    assert ranking.aggregate(matrix, "mean") == pytest.approx([0.25, 0.5, 0.3])
    assert ranking.aggregate(matrix, "max") == pytest.approx([0.5, 0.9, 0.3])
    assert ranking.aggregate([[0.2, -math.inf]], "mean")[1] == -math.inf


def test_coverage_moves_each_sub_query_best_right_after_the_overall_best():
    # Six candidates; the question and sub-query 1 favour 0..2, sub-query 2 is only answered by 5.
    question = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]
    sub1 = [0.9, 0.85, 0.8, 0.3, 0.2, 0.1]
    sub2 = [0.1, 0.1, 0.1, 0.2, 0.3, 0.95]
    matrix = [question, sub1, sub2]
    mean = ranking.rank(matrix, "mean", "scores", 60)
    covered = ranking.rank(matrix, "coverage", "scores", 60)
    assert covered.best == {1: 0, 2: 5}
    assert mean.order.index(5) > 2                      # the mean leaves sub-query 2's evidence low
    assert covered.order[:2] == [0, 5]                  # coverage puts it right after the overall best
    assert covered.order[2:] == [c for c in mean.order if c not in (0, 5)]  # the rest follows the mean


def test_coverage_without_sub_queries_is_the_mean_order():
    matrix = [[0.1, 0.7, 0.4]]
    assert ranking.rank(matrix, "coverage", "rrf", 60).order == ranking.rank(matrix, "mean", "rrf", 60).order
    assert ranking.rank(matrix, "coverage", "rrf", 60).best == {}
