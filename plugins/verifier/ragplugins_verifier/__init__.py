"""ragplugins verifier: check an answer, sentence by sentence, against its evidence."""

__version__ = "0.1.0"

from ragplugins_verifier.backends import available, build_verifier  # noqa: E402
from ragplugins_verifier.base import Evidence, Verifier, VerifierError  # noqa: E402
from ragplugins_verifier.config import VerifierConfig  # noqa: E402
from ragplugins_verifier.engine import VerifyingQueryEngine  # noqa: E402
from ragplugins_verifier.evaluator import VerifierEvaluationResult, VerifierEvaluator  # noqa: E402
from ragplugins_verifier.fidelity import FidelityVerifier  # noqa: E402
from ragplugins_verifier.llm import LLMVerifier  # noqa: E402
from ragplugins_verifier.nli import NLIVerifier, VerifierModelUnavailable  # noqa: E402
from ragplugins_verifier.verdict import SentenceVerdict, Verdict  # noqa: E402

__all__ = [
    "Evidence",
    "FidelityVerifier",
    "LLMVerifier",
    "NLIVerifier",
    "SentenceVerdict",
    "Verdict",
    "Verifier",
    "VerifierConfig",
    "VerifierError",
    "VerifierEvaluationResult",
    "VerifierEvaluator",
    "VerifierModelUnavailable",
    "VerifyingQueryEngine",
    "available",
    "build_verifier",
]
