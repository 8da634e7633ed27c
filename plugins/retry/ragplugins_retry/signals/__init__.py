"""Weak-evidence signals: each measures one query's first-stage candidates and says whether to retry
(``base``: the contract and the value every signal returns)."""

from ragplugins_retry.signals.base import Measurement, RetrySignal
from ragplugins_retry.signals.corpus_coverage import CorpusCoverageSignal
from ragplugins_retry.signals.dense_contrast import DenseContrastSignal
from ragplugins_retry.signals.query_coverage import QueryCoverageSignal
from ragplugins_retry.signals.rerank_probability import RerankProbabilitySignal

__all__ = ["CorpusCoverageSignal", "DenseContrastSignal", "Measurement", "QueryCoverageSignal",
           "RerankProbabilitySignal", "RetrySignal"]
