"""Scorers: how well each candidate answers each sub-query (``base``: the contract)."""

from ragplugins_decompose.scorers.base import Scorer
from ragplugins_decompose.scorers.embedding import EmbeddingScorer
from ragplugins_decompose.scorers.hybrid import HybridScorer
from ragplugins_decompose.scorers.postprocessor import PostprocessorScorer

__all__ = ["EmbeddingScorer", "HybridScorer", "PostprocessorScorer", "Scorer"]
