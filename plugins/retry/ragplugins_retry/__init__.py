"""ragplugins retry plugin: detect weak evidence, reformulate once, keep the better result set."""

__version__ = "0.1.0"

from ragplugins_retry.corpus_coverage import CorpusCoverageSignal  # noqa: E402
from ragplugins_retry.dense_contrast import DenseContrastSignal  # noqa: E402
from ragplugins_retry.keywords import KeywordsStrategy  # noqa: E402
from ragplugins_retry.llm import LLMStrategy  # noqa: E402
from ragplugins_retry.prf import PseudoRelevanceFeedbackStrategy  # noqa: E402
from ragplugins_retry.query_coverage import QueryCoverageSignal  # noqa: E402
from ragplugins_retry.rerank_probability import RerankProbabilitySignal  # noqa: E402
from ragplugins_retry.retriever import RetryRetriever  # noqa: E402
from ragplugins_retry.signal import Measurement, RetrySignal  # noqa: E402
from ragplugins_retry.strategy import Reformulation, RetryStrategy  # noqa: E402
from ragplugins_retry.vocabulary_strategy import VocabularyStrategy  # noqa: E402

__all__ = ["CorpusCoverageSignal", "DenseContrastSignal", "KeywordsStrategy", "LLMStrategy", "Measurement",
           "PseudoRelevanceFeedbackStrategy", "QueryCoverageSignal", "Reformulation", "RerankProbabilitySignal",
           "RetryRetriever", "RetrySignal", "RetryStrategy", "VocabularyStrategy"]
