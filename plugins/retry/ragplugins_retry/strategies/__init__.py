"""Reformulation strategies: each turns a query with weak evidence into one new query
(``base``: the contract and the reformulation every strategy returns)."""

from ragplugins_retry.strategies.base import Reformulation, RetryStrategy
from ragplugins_retry.strategies.keywords import KeywordsStrategy
from ragplugins_retry.strategies.llm import LLMStrategy
from ragplugins_retry.strategies.prf import PseudoRelevanceFeedbackStrategy
from ragplugins_retry.strategies.vocabulary import VocabularyStrategy

__all__ = ["KeywordsStrategy", "LLMStrategy", "PseudoRelevanceFeedbackStrategy", "Reformulation", "RetryStrategy",
           "VocabularyStrategy"]
