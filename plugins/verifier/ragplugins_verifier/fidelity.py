"""The offline default: embedding support plus exact fidelity checks.

For each answer sentence:

1. **Facts** (numbers with units, dates, codes, named entities) must appear in the
   evidence. A number must appear with a compatible unit ("18 months" is not
   "18 weeks").
2. **Attachment**: a number or date must be attached to the same subject in the
   evidence. Each claimed value is compared with the other values of the same kind
   in the evidence: when another value sits clearly closer to the words the sentence
   uses for its subject ("below Grade 7 ... 23 days" against a claimed 28 days), the
   value was swapped. Closeness is measured on words the two evidence contexts do not
   share, weighted by rarity (IDF over the evidence units) and by distance.
3. **Polarity**: a clause and the evidence unit it matches best must agree on
   negation ("not covered" against "covered").
4. **Novelty**: a clause whose content words are mostly absent from the evidence
   and the question adds something the evidence does not say (an extra step).
5. **Support**: the cosine between the sentence and its best evidence unit under the
   bundled embedder (all-MiniLM-L6-v2); the sentence's score. The unit is also the
   reported supporting span.

A sentence that fails a check scores 0 with the reasons listed; the answer's score is
the minimum over its sentences (one unsupported sentence makes it ungrounded).
"""

from __future__ import annotations

import bisect
import functools
import math
import re
import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from llama_index.core.bridge.pydantic import Field, PrivateAttr, SerializeAsAny

from ragplugins_verifier.base import Evidence, Verifier
from ragplugins_verifier.facts import ANSWER_PARTICLES, Fact, extract
from ragplugins_verifier.text import STOPWORDS_ALL, Unit, evidence_units, is_content, split_sentences, stem, words
from ragplugins_verifier.verdict import SentenceVerdict, Verdict

NEGATIONS = {"not", "no", "never", "none", "nothing", "nobody", "neither", "nor", "cannot", "without", "n't"}
# Quantifier idioms that contain a negation word but do not negate ("no more than 3 blocks").
_NOT_NEGATION = re.compile(r"\b(?:no|not)\s+(?:more|less|later|earlier|fewer|greater|longer than|only)\b"
                           r"|\bnot\s+only\b", re.I)
_CLAUSE_SPLIT = re.compile(r"\s*(?:[;:](?=\s)|,(?=\s)\s*(?:and|but|while|whereas|then|or)?|"
                           r"\s(?:and|but|while|whereas|then)\s)\s*", re.I)
# Negation scopes over its own clause: "no opinion on tax matters (see separate tax opinion)".
_POLARITY_SPLIT = re.compile(r"\s*(?:[;,](?=\s)|[()]|\s(?:and|but|while|whereas)\s)\s*", re.I)
_EVIDENCE_CLAUSES = re.compile(r"\s*(?:[;,:](?=\s)|[()]|\s(?:and|but|while|whereas|or|otherwise)\s)\s*", re.I)
# Punctuation or a conjunction between a value and a word puts them in different items:
# "8 sales, 7 operations", "5 days for an immediate family member and 2 days for an extended one".
_BREAK = re.compile(r"[;:()|\[\]]|,(?!\d)")
_CONJUNCTIONS = {"and", "or", "but", "while", "wherea"}


def _decay(distance: float) -> float:
    """How much a word describes a value ``distance`` tokens away: nearer words count more."""
    return 1.0 / (1.0 + distance / 8.0)


@dataclass
class _Occurrence:
    fact: Fact
    unit: int
    position: int


@dataclass
class _Unit:
    unit: Unit
    tokens: list[tuple[int, int, str]]       # (start, end, stem) of every word, unit text only
    stems: set[str]
    heading: set[str]
    clauses: list[tuple[set[str], bool]]     # (content stems, negated) per clause, for polarity
    facts: list[Fact] = field(default_factory=list)
    breaks: list[int] = field(default_factory=list)  # item boundaries before each token


class _EvidenceIndex:
    """The evidence cut into units, with IDF, facts and a normalised text for exact look-ups."""

    def __init__(self, evidence: list[Evidence], question: str):
        self.units: list[_Unit] = [u for ev in evidence for u in _parse(ev.node_id, ev.text)]
        n = max(len(self.units), 1)
        df = Counter(s for u in self.units for s in u.stems)
        # Scaled to (0, 1]: a word found in a single unit weighs 1 however much evidence there is.
        self.idf = {s: math.log(1 + n / c) / math.log(1 + n) for s, c in df.items()}
        self.vocabulary = set(df) | {stem(w) for _, _, w in words(question)}
        self.question = _normalise(question)
        self.text = " ".join(_normalise(ev.text) for ev in evidence)
        self.occurrences = [_Occurrence(f, i, _token_at(u.tokens, f.start))
                            for i, u in enumerate(self.units) for f in u.facts]


@functools.lru_cache(maxsize=1024)
def _parse(node_id: str, text: str) -> tuple[_Unit, ...]:
    """A node's units with their facts; cached because the same chunks are retrieved again and again."""
    out = []
    for u in evidence_units(node_id, text):
        toks = [(s, e, stem(w)) for s, e, w in words(u.text)]
        out.append(_Unit(
            unit=u, tokens=toks, stems={t for _, _, t in toks if len(t) > 1},
            heading={stem(w) for _, _, w in words(u.heading) if is_content(w)},
            clauses=[(_polarity_stems(c), _negated(c)) for c in _EVIDENCE_CLAUSES.split(_code_free(u.text))],
            facts=[f for f in extract(u.text, claims=False) if not _list_number(u.text, f)],
            breaks=_breaks(u.text, toks)))
    return tuple(out)


def _list_number(text: str, fact: Fact) -> bool:
    """'5.' or '1.2' numbering a list item or section is not a fact."""
    line_start = text.rfind("\n", 0, fact.start) + 1
    return (fact.kind == "number" and not text[line_start:fact.start].strip()
            and re.match(r"\d+(?:\.\d+)+\.?\s|\d+[.)]\s", text[fact.start:]) is not None
            and (fact.unit is None))


def _breaks(text: str, tokens: list[tuple[int, int, str]]) -> list[int]:
    """Cumulative count of item boundaries (punctuation, conjunctions) before each token."""
    marks = [m.start() for m in _BREAK.finditer(text)]
    out, conjunctions = [], 0
    for s, _, st in tokens:
        out.append(bisect.bisect_left(marks, s) + conjunctions)
        conjunctions += st in _CONJUNCTIONS
    return out


def _code_free(text: str) -> str:
    """Inline code is not prose: `None` is a value, not a negation."""
    return re.sub(r"`[^`]*`", " ", text)


def _polarity_stems(text: str) -> set[str]:
    return {stem(w) for _, _, w in words(text) if is_content(w) and w not in NEGATIONS}


def _normalise(text: str) -> str:
    text = text.replace("`", "").replace("*", "").replace("’", "'").lower()
    return re.sub(r"\s+", " ", text)


def _negated(text: str) -> bool:
    text = _NOT_NEGATION.sub(" ", text)
    tokens = {w for _, _, w in words(text)}
    return bool(tokens & NEGATIONS) or re.search(r"n['’]t\b", text) is not None


def _token_at(tokens: list[tuple[int, int, str]], char: int) -> int:
    for i, (s, e, _) in enumerate(tokens):
        if e > char:
            return i
    return len(tokens)


class FidelityVerifier(Verifier):
    """Offline verifier: bundled-embedder support plus exact number/unit/date/code/entity checks."""

    backend: ClassVar[str] = "fidelity"

    embed_model: SerializeAsAny[Any] = Field(description="The embedder used for support (ctx.embed_model).")
    threshold: float = Field(0.35, ge=0, le=1, description="Minimum cosine support of every sentence.")
    candidates: int = Field(2, ge=1, description="Evidence units embedded per sentence (best lexical matches).")
    attachment_margin: float = Field(
        0.3, gt=0, description="How much more strongly (IDF-weighted nearby words) another value must be "
                               "attached to the sentence's subject before the claimed value counts as swapped.")
    novelty: float = Field(0.5, gt=0, le=1, description="Share of a clause's content words absent from the evidence "
                                                        "above which the clause is unsupported (clauses of 3+ "
                                                        "content words, 2+ of them new).")
    cache_size: int = Field(4096, ge=0, description="Evidence-unit embeddings kept between calls.")

    _cache: OrderedDict = PrivateAttr(default_factory=OrderedDict)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins_verifier.FidelityVerifier"

    # -- the verdict ---------------------------------------------------
    def _verify(self, question: str, answer: str, evidence: list[Evidence]) -> Verdict:
        index = _EvidenceIndex(evidence, question)
        sentences = split_sentences(answer)
        results: list[SentenceVerdict] = []
        checked = []
        for span in sentences:
            claim = _Claim(span.text, index)
            if not claim.checkable:
                results.append(SentenceVerdict(text=span.text, start=span.start, end=span.end, score=None,
                                               supported=True, checked=False))
                continue
            reasons = self._fact_reasons(claim, index) + self._polarity_reasons(claim, index) + \
                self._novelty_reasons(claim, index)
            results.append(SentenceVerdict(text=span.text, start=span.start, end=span.end, score=0.0,
                                           supported=False, reasons=reasons))
            checked.append((len(results) - 1, claim))
        self._support(index, checked, results)
        return self.conclude(results)

    # -- support from the embedder -------------------------------------
    def _support(self, index: _EvidenceIndex, checked: list[tuple[int, "_Claim"]],
                 results: list[SentenceVerdict]) -> None:
        if not checked or not index.units:
            return
        picks = {i: claim.candidates(index, self.candidates) for i, claim in checked}
        unit_ids = sorted({u for ids in picks.values() for u in ids})
        vectors = self._embed([claim.text for _, claim in checked], [index.units[u].unit.text for u in unit_ids])
        sent_vecs, unit_vecs = vectors[:len(checked)], dict(zip(unit_ids, vectors[len(checked):]))
        for (i, _), svec in zip(checked, sent_vecs):
            best, best_unit = -1.0, None
            for u in picks[i]:
                sim = float(np.dot(svec, unit_vecs[u]))
                if sim > best:
                    best, best_unit = sim, u
            res = results[i]
            if best_unit is not None:
                unit = index.units[best_unit].unit
                res.node_id, res.span, res.evidence = unit.node_id, (unit.start, unit.end), unit.text
            support = max(0.0, min(1.0, best))
            if not res.reasons and support < self.threshold:
                res.reasons.append(f"weak support: best evidence similarity {support:.2f} < {self.threshold:.2f}")
            res.supported = not res.reasons
            res.score = support if res.supported else 0.0

    def _embed(self, sentences: list[str], units: list[str]) -> list[np.ndarray]:
        with self._lock:
            missing = [t for t in dict.fromkeys(units) if t not in self._cache]
        fresh = self.embed_model.get_text_embedding_batch(sentences + missing)
        vecs = [_unit_vector(v) for v in fresh]
        with self._lock:
            for text, vec in zip(missing, vecs[len(sentences):]):
                self._cache[text] = vec
                self._cache.move_to_end(text)
            out = vecs[:len(sentences)] + [self._cache[t] for t in units]
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return out

    # -- exact checks ----------------------------------------------------
    def _fact_reasons(self, claim: "_Claim", index: _EvidenceIndex) -> list[str]:
        reasons = []
        for fact in claim.facts:
            if fact.kind == "code":
                if not _contains(index.text, fact.value):
                    reasons.append(f"{fact.describe()} does not appear in the evidence")
            elif fact.kind == "entity":
                if not _entity_found(fact.value, index):
                    reasons.append(f"{fact.describe()} does not appear in the evidence")
            else:
                reasons.extend(self._value_reasons(claim, fact, index))
        return reasons

    def _value_reasons(self, claim: "_Claim", fact: Fact, index: _EvidenceIndex) -> list[str]:
        same = [o for o in index.occurrences if o.fact.kind == fact.kind and _same_value(fact, o.fact)]
        found = [o for o in same if _compatible_units(fact, o.fact)]
        if not found:
            if same:
                units = sorted({o.fact.text for o in same})
                return [f"{fact.describe()} appears in the evidence only with another unit ({', '.join(units)})"]
            return [f"{fact.describe()} does not appear in the evidence"]
        context = claim.context(fact, index)
        words_here = {st for st, _ in context}
        rivals = [o for o in index.occurrences if o.fact.kind == fact.kind and _rival(fact, o.fact, words_here)]
        if not rivals:
            return []
        best_found = max(found, key=lambda o: _attachment(context, index, o))
        for rival in rivals:
            lead = _lead(context, index, rival, best_found)
            if lead >= self.attachment_margin:
                return [f"{fact.describe()} is attached to another subject in the evidence: the sentence's "
                        f"wording fits '{rival.fact.text}' in \"{_clip(index.units[rival.unit].unit.text)}\" "
                        f"(lead {lead:.2f})"]
        return []

    def _polarity_reasons(self, claim: "_Claim", index: _EvidenceIndex) -> list[str]:
        reasons = []
        clauses = [(c, stems) for c, stems in ((c, _polarity_stems(c)) for c in claim.polarity_clauses())]
        evidence = [(stems, neg, u) for u in index.units for stems, neg in u.clauses if stems]
        for clause, stems in clauses:
            if len(stems) < 2 or not evidence:
                continue
            scored = sorted(((sum(index.idf.get(s, 0.0) for s in stems & es), i)
                             for i, (es, _, _) in enumerate(evidence)), reverse=True)
            top = scored[0][0]
            total = sum(index.idf.get(s, 0.0) for s in stems)
            # Only compare with evidence that says the same thing.
            if top <= 0 or top < 0.5 * total:
                continue
            negated = _negated(clause)
            peers = [evidence[i] for score, i in scored if score >= 0.8 * top]
            if all(neg != negated for _, neg, _ in peers):
                unit = peers[0][2].unit.text
                reasons.append(f"negation differs from the evidence: \"{_clip(clause)}\" vs \"{_clip(unit)}\"")
        return reasons

    def _novelty_reasons(self, claim: "_Claim", index: _EvidenceIndex) -> list[str]:
        reasons = []
        for clause, stems in claim.clauses():
            # Two words are too little to tell a paraphrase from an addition.
            if len(stems) < 3:
                continue
            novel = [s for s in stems if s not in index.vocabulary]
            if len(novel) >= 2 and len(novel) / len(stems) >= self.novelty:
                reasons.append(f"adds content the evidence does not mention: \"{_clip(clause)}\"")
        return reasons


class _Claim:
    """One answer sentence with its facts and content words."""

    def __init__(self, text: str, index: _EvidenceIndex):
        self.text = text
        body = re.sub(r"^\W*(?:" + "|".join(ANSWER_PARTICLES) + r")\b[\s,.:;!-]*", "", text, flags=re.I)
        self.offset = len(text) - len(body)
        self.facts = extract(text)
        # Values are checked on their own; names and codes stay in the context (they are subjects).
        covered = [False] * (len(text) + 1)
        for f in self.facts:
            if f.kind in ("number", "date"):
                for i in range(f.start, f.end):
                    covered[i] = True
        self.tokens = [(s, e, stem(w)) for s, e, w in words(text) if s >= self.offset]
        self.content = [(i, st) for i, (s, e, st) in enumerate(self.tokens)
                        if not covered[s] and is_content(text[s:e].lower()) and text[s:e].lower() not in NEGATIONS]
        self.checkable = bool(self.facts) or len(self.content) >= 2

    def candidates(self, index: _EvidenceIndex, k: int) -> list[int]:
        stems = {st for _, st in self.content} | {stem(w) for f in self.facts for _, _, w in words(f.text)}
        scored = sorted(((sum(index.idf.get(s, 0.0) for s in stems & u.stems)
                          + 0.5 * sum(index.idf.get(s, 0.0) for s in stems & u.heading), -i)
                         for i, u in enumerate(index.units)), reverse=True)
        return [-i for _, i in scored[:k]]

    def context(self, fact: Fact, index: _EvidenceIndex) -> list[tuple[str, float]]:
        """The words describing ``fact``: its clause's content words, weighted by rarity and distance."""
        lo, hi = self.clause_bounds(fact.start)
        pos = _token_at(self.tokens, fact.start)
        return [(st, index.idf.get(st, 0.0) * _decay(abs(i - pos))) for i, st in self.content
                if lo <= self.tokens[i][0] < hi]

    def clause_bounds(self, char: int) -> tuple[int, int]:
        lo, hi = self.offset, len(self.text)
        for m in _CLAUSE_SPLIT.finditer(self.text, self.offset):
            if m.end() <= char:
                lo = m.end()
            elif m.start() >= char and m.end() > m.start():
                hi = m.start()
                break
        return lo, hi

    def clauses(self) -> list[tuple[str, list[str]]]:
        out = []
        for part in _CLAUSE_SPLIT.split(self.text[self.offset:]):
            if not part:
                continue
            facts = extract(part)
            covered = {i for f in facts for i in range(f.start, f.end)}
            stems = [stem(w) for s, _, w in words(part)
                     if s not in covered and is_content(w) and w not in STOPWORDS_ALL and w not in ANSWER_PARTICLES]
            out.append((part, stems))
        return out

    def polarity_clauses(self) -> list[str]:
        return [p for p in _POLARITY_SPLIT.split(_code_free(self.text[self.offset:])) if p and p.strip()]


def _attachment(context: list[tuple[str, float]], index: _EvidenceIndex, occ: _Occurrence) -> float:
    unit = index.units[occ.unit]
    return sum(weight * _closeness(unit, st, occ) for st, weight in context)


def _closeness(unit: _Unit, st: str, occ: _Occurrence) -> float:
    if st == occ.fact.unit_word:
        return 1.0  # the value's own noun: "8 sales"
    pos, breaks = occ.position, unit.breaks
    at = breaks[pos] if pos < len(breaks) else (breaks[-1] if breaks else 0)
    near = max((_decay(abs(i - pos)) * 0.5 ** abs(breaks[i] - at)
                for i, (_, _, t) in enumerate(unit.tokens) if t == st), default=0.0)
    # The heading names the subject of everything under it ("1. MegaCorp Inc." over "Contract Value: ...").
    return max(near, 0.5 if st in unit.heading else 0.0)


def _lead(context: list[tuple[str, float]], index: _EvidenceIndex, rival: _Occurrence, found: _Occurrence) -> float:
    """How much more the sentence's subject words point at ``rival`` than at ``found``."""
    ru, fu = index.units[rival.unit], index.units[found.unit]
    return sum(weight * (_closeness(ru, st, rival) - _closeness(fu, st, found)) for st, weight in context)


def _same_value(a: Fact, b: Fact) -> bool:
    if a.kind == "date":
        (ya, ma, da), (yb, mb, db) = a.value, b.value
        return ma == mb and (da is None or db is None or da == db) and (ya is None or yb is None or ya == yb)
    return math.isclose(a.value, b.value, rel_tol=1e-9, abs_tol=1e-12)


def _compatible_units(a: Fact, b: Fact) -> bool:
    if a.kind != "number":
        return True
    if a.unit and b.unit:
        return a.unit == b.unit or {a.unit, b.unit} <= {"degree", "°c", "°f"} and "degree" in {a.unit, b.unit}
    # "five years" is not "5. RETURN OF MATERIALS"; a bare "5" may be.
    if a.unit and b.unit_word:
        return False
    return True


def _rival(claimed: Fact, other: Fact, context: set[str]) -> bool:
    """Another value of the same kind and dimension: what a swap would have taken.
    "7 in sales" has no unit of its own; "8 sales" is its rival because it counts sales."""
    if _same_value(claimed, other):
        return False
    if claimed.kind == "date":
        return True
    if claimed.unit:
        return other.unit == claimed.unit
    return other.unit is None and other.unit_word is not None and \
        (other.unit_word == claimed.unit_word or other.unit_word in context)


def _contains(text: str, value: str) -> bool:
    return re.search(r"(?<![\w/-])" + re.escape(value) + r"(?![\w/]|-\w)", text) is not None


def _entity_found(name: str, index: _EvidenceIndex) -> bool:
    parts = [re.escape(p) for p in re.split(r"[\s&-]+", name) if p]
    pattern = r"\b" + r"[\s&,.'-]+(?:(?:of|the|and|&)[\s&,.'-]+)?".join(parts) + r"(?:'s)?\b"
    if re.search(pattern, index.text) or re.search(pattern, index.question):
        return True
    return _acronym_found(name, index.text)


def _acronym_found(name: str, text: str) -> bool:
    """'FTC' is found as 'Federal Trade Commission'."""
    letters = name.replace(".", "")
    if not (2 <= len(letters) <= 6 and letters.isalpha() and " " not in name):
        return False
    pattern = r"\b" + r"\w*[\s-]+(?:(?:of|and|the|for|&)[\s-]+)?".join(letters) + r"\w*"
    return re.search(pattern, text) is not None


def _unit_vector(vec: Any) -> np.ndarray:
    arr = np.asarray(vec, dtype=np.float32)
    norm = float(np.linalg.norm(arr))
    return arr / norm if norm else arr


def _clip(text: str, n: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"
