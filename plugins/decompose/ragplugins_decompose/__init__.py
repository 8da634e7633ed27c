"""ragplugins decompose plugin: a rerank stage that scores candidates against the question's sub-queries."""

__version__ = "0.1.0"

from ragplugins_decompose.decomposers import (  # noqa: E402
    Decomposer,
    Decomposition,
    LLMDecomposer,
    NoDecomposer,
    RuleDecomposer,
)
from ragplugins_decompose.postprocessor import DecomposeRerank  # noqa: E402
from ragplugins_decompose.scorers import EmbeddingScorer, HybridScorer, PostprocessorScorer, Scorer  # noqa: E402

__all__ = ["DecomposeRerank", "Decomposer", "Decomposition", "EmbeddingScorer", "HybridScorer", "LLMDecomposer",
           "NoDecomposer", "PostprocessorScorer", "RuleDecomposer", "Scorer"]
