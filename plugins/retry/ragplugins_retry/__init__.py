"""ragplugins retry plugin: detect weak evidence, reformulate once, keep the better result set."""

__version__ = "0.1.0"

from ragplugins_retry.retriever import RetryRetriever  # noqa: E402
from ragplugins_retry.signals import (  # noqa: E402
    CorpusCoverageSignal,
    DenseContrastSignal,
    Measurement,
    QueryCoverageSignal,
    RerankProbabilitySignal,
    RetrySignal,
)
from ragplugins_retry.strategies import (  # noqa: E402
    KeywordsStrategy,
    LLMStrategy,
    PseudoRelevanceFeedbackStrategy,
    Reformulation,
    RetryStrategy,
    VocabularyStrategy,
)

__all__ = ["CorpusCoverageSignal", "DenseContrastSignal", "KeywordsStrategy", "LLMStrategy", "Measurement",
           "PseudoRelevanceFeedbackStrategy", "QueryCoverageSignal", "Reformulation", "RerankProbabilitySignal",
           "RetryRetriever", "RetrySignal", "RetryStrategy", "VocabularyStrategy"]
