"""ragplugins decompose plugin: a rerank stage that scores candidates against the question's sub-queries."""

__version__ = "0.1.0"

from ragplugins_decompose.decomposer import Decomposer, Decomposition, NoDecomposer  # noqa: E402
from ragplugins_decompose.embedding import EmbeddingScorer  # noqa: E402
from ragplugins_decompose.hybrid import HybridScorer  # noqa: E402
from ragplugins_decompose.llm import LLMDecomposer  # noqa: E402
from ragplugins_decompose.postprocessor import DecomposeRerank  # noqa: E402
from ragplugins_decompose.postprocessor_scorer import PostprocessorScorer  # noqa: E402
from ragplugins_decompose.rules import RuleDecomposer  # noqa: E402
from ragplugins_decompose.scorer import Scorer  # noqa: E402

__all__ = ["DecomposeRerank", "Decomposer", "Decomposition", "EmbeddingScorer", "HybridScorer", "LLMDecomposer",
           "NoDecomposer", "PostprocessorScorer", "RuleDecomposer", "Scorer"]
