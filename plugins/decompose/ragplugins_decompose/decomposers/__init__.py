"""Decomposers: each splits a question into sub-queries, or leaves it whole (``base``: the contract, what it
returns, and the checks every decomposition passes)."""

from ragplugins_decompose.decomposers.base import Decomposer, Decomposition, NoDecomposer
from ragplugins_decompose.decomposers.llm import LLMDecomposer
from ragplugins_decompose.decomposers.rules import RuleDecomposer

__all__ = ["Decomposer", "Decomposition", "LLMDecomposer", "NoDecomposer", "RuleDecomposer"]
