"""The ``nli`` backend: any Hugging Face sequence-classification model as the checker.

Each answer sentence is the hypothesis and each evidence window the premise. Evidence
longer than the model's window is cut into overlapping windows (never truncated) and a
sentence takes its best window; the answer takes its weakest sentence. The supported
class is found from the model's label map (``entailment``, ``supported``, ``consistent``
...), binary checkers use their positive class and single-logit models a sigmoid.

The model loads lazily on first use. A model that cannot load raises
:class:`VerifierModelUnavailable` naming it and what to do: there is no silent
fallback to another backend. Custom modelling code runs only with
``trust_remote_code=True``.
"""

from __future__ import annotations

import bisect
import os
import threading
from pathlib import Path
from typing import Any, ClassVar

from llama_index.core.bridge.pydantic import Field, PrivateAttr

from ragplugins_verifier.base import Evidence, Verifier, VerifierError
from ragplugins_verifier.text import is_checkable, split_sentences
from ragplugins_verifier.verdict import SentenceVerdict, Verdict

SUPPORTED_LABELS = ("entailment", "entailed", "entails", "supported", "support", "consistent", "faithful",
                    "grounded", "true", "yes")
_BINARY_DEFAULT = ("label_1", "1")


def _looks_like_path(model: str) -> bool:
    """A local path rather than a Hub name ("org/name"): absolute, relative with ./ or ~, Windows-style,
    more than one slash, or under a folder that exists here."""
    if model.startswith((".", "/", "~")) or os.sep != "/" and os.sep in model or model.count("/") > 1:
        return True
    return "/" in model and Path(model).parent.is_dir()


class VerifierModelUnavailable(VerifierError):
    """The configured NLI model cannot be loaded."""


class NLIVerifier(Verifier):
    """Sentence-level entailment with a local or Hub sequence-classification model."""

    backend: ClassVar[str] = "nli"

    model: str = Field(description="Hugging Face model name or local directory.")
    threshold: float = Field(0.5, ge=0, le=1, description="Minimum entailment probability of every sentence.")
    trust_remote_code: bool = Field(False, description="Run modelling code shipped with the model (explicit opt-in).")
    device: str = Field("cpu", description="torch device.")
    max_length: int | None = Field(None, ge=16, description="Tokens per (premise, hypothesis) pair; "
                                                            "default: the model's own limit.")
    stride: int = Field(64, ge=0, description="Tokens shared by consecutive evidence windows.")
    batch_size: int = Field(16, ge=1, description="Pairs per forward pass.")
    entailment_label: str | None = Field(None, description="The supported class's label, when the label map "
                                                           "does not make it clear.")

    _model: Any = PrivateAttr(default=None)
    _tokenizer: Any = PrivateAttr(default=None)
    _supported: int | None = PrivateAttr(default=None)
    _window: int = PrivateAttr(default=512)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins_verifier.NLIVerifier"

    # -- loading ---------------------------------------------------------
    def load(self) -> None:
        """Load the model and tokenizer once (thread-safe); raise a clear error if they cannot load."""
        with self._lock:
            if self._model is not None:
                return
            try:
                import torch  # noqa: F401
                from transformers import AutoModelForSequenceClassification, AutoTokenizer
            except ImportError as exc:
                raise VerifierModelUnavailable(
                    f"the nli backend needs transformers and torch ({exc}); install them "
                    "(pip install transformers torch) or use backend = 'fidelity'") from exc
            if _looks_like_path(self.model) and not Path(self.model).expanduser().is_dir():
                raise VerifierModelUnavailable(
                    f"nli model '{self.model}' is not a directory: give a local directory holding config.json, "
                    "the weights and tokenizer.json (the README says how to place MiniCheck or a DeBERTa-v3 MNLI "
                    "checkpoint there), or use backend = 'fidelity'. No other verifier was used instead.")
            try:
                model = AutoModelForSequenceClassification.from_pretrained(
                    self.model, trust_remote_code=self.trust_remote_code)
                tokenizer = AutoTokenizer.from_pretrained(self.model, trust_remote_code=self.trust_remote_code)
            except Exception as exc:  # noqa: BLE001 - every load failure gets the same advice
                hint = ("; it ships its own modelling code: set nli.trust_remote_code = true only if you trust it"
                        if "trust_remote_code" in str(exc) else "")
                detail = " ".join(str(exc).split())[:300]
                raise VerifierModelUnavailable(
                    f"cannot load the NLI model '{self.model}': {type(exc).__name__}: {detail}{hint}. "
                    "Set [ragplugins.verifier.nli] model to a local directory holding config.json, the weights and "
                    "the tokenizer (downloading from the Hugging Face Hub needs network access), or use "
                    "backend = 'fidelity', which needs no download. No other verifier was used instead.") from exc
            if not getattr(tokenizer, "is_fast", False):
                raise VerifierModelUnavailable(
                    f"the NLI model '{self.model}' has no fast tokenizer (tokenizer.json), which windowing over "
                    "long evidence needs; save one with tokenizer.save_pretrained() from a fast tokenizer")
            model.to(self.device)
            model.eval()
            self._supported = self._supported_index(model.config)
            self._window = self._model_window(tokenizer, model.config)
            self._tokenizer, self._model = tokenizer, model

    def _supported_index(self, config: Any) -> int | None:
        """Which output is 'supported'; None for single-logit models (sigmoid)."""
        if config.num_labels == 1:
            return None
        labels = {int(i): str(name).lower() for i, name in config.id2label.items()}
        if self.entailment_label is not None:
            for i, name in labels.items():
                if name == self.entailment_label.lower():
                    return i
            raise VerifierModelUnavailable(
                f"nli.entailment_label '{self.entailment_label}' is not a label of '{self.model}' "
                f"(labels: {sorted(labels.values())})")
        for wanted in SUPPORTED_LABELS:
            for i, name in labels.items():
                if name == wanted:
                    return i
        if config.num_labels == 2:
            # Binary checkers (MiniCheck: "0"/"1") put the positive class last.
            return 1
        raise VerifierModelUnavailable(
            f"cannot tell which label of '{self.model}' means 'supported' (labels: {sorted(labels.values())}); "
            "set [ragplugins.verifier.nli] entailment_label")

    def _model_window(self, tokenizer: Any, config: Any) -> int:
        limits = [self.max_length] if self.max_length else []
        if getattr(tokenizer, "model_max_length", None) and tokenizer.model_max_length < 100_000:
            limits.append(int(tokenizer.model_max_length))
        if getattr(config, "max_position_embeddings", None):
            limits.append(int(config.max_position_embeddings))
        return min(limits) if limits else 512

    # -- windows -----------------------------------------------------------
    def windows(self, text: str, hypothesis: str) -> list[tuple[int, int]]:
        """Character spans of ``text`` that fit beside ``hypothesis`` in one model input, overlapping by about
        ``stride`` tokens and covering all of ``text``. Windows start and end between words: a piece cut from
        inside a word ("##tion") tokenizes into more tokens on its own, and the window would no longer fit."""
        self.load()
        tok = self._tokenizer
        enc = tok(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
        offsets, word_of = enc["offset_mapping"], enc.word_ids()
        if not offsets:
            return [(0, len(text))]
        n = len(offsets)
        word_starts = [i for i in range(n) if i == 0 or word_of[i] is None or word_of[i] != word_of[i - 1]]
        budget = self._budget(hypothesis)
        overlap = min(self.stride, budget // 2)
        spans, start = [], 0
        while True:
            end = min(start + budget, n)
            if end < n:
                # Back to the last word start inside the window; a single word longer than the window is cut.
                last = word_starts[bisect.bisect_right(word_starts, end) - 1]
                end = last if last > start else end
            while end - start > 1 and self._tokens(text[offsets[start][0]:offsets[end - 1][1]]) > budget:
                end -= 1  # pieces that still tokenize differently once cut out of their text
            spans.append((offsets[start][0], offsets[end - 1][1]))
            if end == n:
                return spans
            at = bisect.bisect_left(word_starts, max(end - overlap, start + 1))
            start = word_starts[at] if at < len(word_starts) and word_starts[at] < end else end

    def _tokens(self, text: str) -> int:
        return len(self._tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])

    def _budget(self, hypothesis: str) -> int:
        hyp = self._tokens(hypothesis)
        special = self._tokenizer.num_special_tokens_to_add(pair=True)
        budget = self._window - hyp - special
        if budget < 8:
            raise VerifierError(
                f"an answer sentence of {hyp} tokens leaves no room for evidence in the "
                f"{self._window}-token window of '{self.model}'; split the answer into shorter sentences"
            )
        return budget

    # -- scoring -----------------------------------------------------------
    def score_pairs(self, pairs: list[tuple[str, str]]) -> list[float]:
        """P(supported) for (premise, hypothesis) pairs; a pair that does not fit raises (no truncation)."""
        import torch

        self.load()
        out: list[float] = []
        for i in range(0, len(pairs), self.batch_size):
            batch = pairs[i:i + self.batch_size]
            enc = self._tokenizer([p for p, _ in batch], [h for _, h in batch], padding=True,
                                  truncation=False, return_tensors="pt")
            if enc["input_ids"].shape[1] > self._window:
                raise VerifierError(f"an evidence window does not fit the {self._window}-token input of "
                                    f"'{self.model}'; lower nli.max_length")
            with torch.no_grad():
                logits = self._model(**{k: v.to(self.device) for k, v in enc.items()}).logits.float()
            if self._supported is None:
                probs = torch.sigmoid(logits[:, 0])
            else:
                probs = torch.softmax(logits, dim=-1)[:, self._supported]
            out.extend(float(p) for p in probs)
        return out

    def _verify(self, question: str, answer: str, evidence: list[Evidence]) -> Verdict:
        self.load()
        sentences = split_sentences(answer)
        jobs: list[tuple[int, Evidence, tuple[int, int]]] = []
        results: list[SentenceVerdict] = []
        for i, span in enumerate(sentences):
            checked = is_checkable(span.text)
            results.append(SentenceVerdict(text=span.text, start=span.start, end=span.end,
                                           score=0.0 if checked else None, supported=not checked, checked=checked))
            if checked:
                jobs.extend((i, ev, w) for ev in evidence if ev.text.strip() for w in self.windows(ev.text, span.text))
        scores = self.score_pairs([(ev.text[s:e], sentences[i].text) for i, ev, (s, e) in jobs])
        for (i, ev, (s, e)), score in zip(jobs, scores):
            res = results[i]
            if res.node_id is None or score > (res.score or 0.0):
                res.score, res.node_id, res.span, res.evidence = score, ev.node_id, (s, e), ev.text[s:e]
        for res in results:
            if res.checked:
                res.supported = (res.score or 0.0) >= self.threshold
                if not res.supported:
                    res.reasons.append(f"entailment {res.score:.2f} < {self.threshold:.2f} in every evidence window")
        return self.conclude(results)
