"""The offline default: embedding support plus exact fidelity checks.

For each answer sentence (a "Yes."/"No." answering a yes/no question also claims the
question's statement, denied for "No"):

1. **Facts** (numbers with units, dates, codes, named entities) must appear in the
   evidence. A number must match after unit conversion (pint; :mod:`.quantities`), within
   the stated tolerance when the sentence hedges it ("about 94 °C"); a bound on it ("at most") must point the
   way the evidence's bound does.
2. **Attachment**: a number or date must be attached to the same subject in the
   evidence. Each claimed value is compared with the other values of the same kind
   in the evidence: when another value sits clearly closer to the words the sentence
   uses for its subject ("below Grade 7 ... 23 days" against a claimed 28 days), the
   value was swapped. Closeness is measured on words the two evidence contexts do not
   share, weighted by rarity (IDF over the evidence units) and by distance. A name is
   swapped when the passage saying the rest of the sentence names a confusable other one
   (FIFO/LIFO).
3. **Roles**: exchanging two words that would put the sentence in the evidence's order
   means the roles were swapped ("the primary applies WAL received from the standby"); so
   do the two sides of a relation word trading places ("copies dest to src").
4. **Polarity**: a clause and the evidence it matches best must agree on negation (en, de,
   fr, es; a verb may carry it, and it bears on the words after it), on opposites, prefixes,
   bounds and quantifiers, and "only" must not narrow it (:mod:`.polarity`).
5. **Novelty**: a clause whose content words are mostly absent from the evidence
   and the question adds something the evidence does not say (an extra step); a list
   member the evidence does not name replaces one it does.
6. **Evidence is data**: units that address the checker or assistant are not evidence
   (:mod:`.directives`); echoing them, or answering with a bare verdict word, fails.
7. **Support**: the cosine between the sentence and its best evidence unit under the
   bundled embedder (all-MiniLM-L6-v2); the sentence's score. A sentence the exact checks
   rejected is not embedded, nor is an English sentence most of whose words one unit holds (its score is
   then that share: the embedder is for paraphrases). The reported span is the
   stretch of that unit holding the words the sentence shares with it.

A sentence in a language other than English, German, French or Spanish is not
verified and therefore not supported. A sentence that fails a check scores 0 with the
reasons listed; the answer's score is the minimum over its sentences (one unsupported
sentence makes it ungrounded).
"""

from __future__ import annotations

import bisect
import difflib
import functools
import itertools
import math
import re
import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from typing import Any, ClassVar, cast

import numpy as np
from llama_index.core.bridge.pydantic import Field, PrivateAttr, SerializeAsAny

from ragplugins_verifier import polarity, quantities
from ragplugins_verifier.base import Evidence, Verifier
from ragplugins_verifier.directives import VERDICT_WORDS, is_directive
from ragplugins_verifier.facts import ANSWER_PARTICLES, ORDINALS, Fact, _name_shaped, extract
from ragplugins_verifier.text import STOPWORDS_ALL, Unit, evidence_units, is_content, split_sentences, stem, words
from ragplugins_verifier.verdict import SentenceVerdict, Verdict

NEGATIONS = polarity.NEGATIONS["en"]
# Questions a "Yes." or "No." answers: they open with an auxiliary verb.
_YES_NO_QUESTION = re.compile(
    # An opening phrase may come first: "With the default exit code, does Valgrind return ...?"
    r"^\W*(?:[^,?]{1,80},\s*)?(?P<aux>is|are|was|were|am|do|does|did|can|could|will|would|should|shall|has|have|had|must|may|might|"
    r"isn't|aren't|doesn't|don't|can't|"
    r"ist|sind|war|kann|können|muss|darf|wird|werden|hat|haben|gibt|entfernt|"
    r"est-ce|peut|peuvent|faut-il|"
    r"es|son|está|están|puede|pueden|hay|tiene|debe)\b", re.I)
_PARTICLE = re.compile(r"^\W*(?P<word>[^\W\d_]+)\b[\s,.:;!-]*", re.I)
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
    clauses: list[tuple[set[str], bool, set[str]]]  # (content stems, negative, negation scope) per clause
    facts: list[Fact] = field(default_factory=list)
    breaks: list[int] = field(default_factory=list)  # item boundaries before each token
    surface: set[str] = field(default_factory=set)   # lowercased words as written, for opposites
    directive: bool = False                           # text addressing the checker or assistant: not evidence


class _EvidenceIndex:
    """The evidence cut into units, with IDF, facts and a normalised text for exact look-ups."""

    def __init__(self, evidence: list[Evidence], question: str):
        parsed = [(ev, _parse(ev.node_id, ev.text)) for ev in evidence]
        self.units: list[_Unit] = [u for _, units in parsed for u in units if not u.directive]
        self.directives: list[_Unit] = [u for _, units in parsed for u in units if u.directive]
        n = max(len(self.units), 1)
        df = Counter(s for u in self.units for s in u.stems)
        # Scaled to (0, 1]: a word found in a single unit weighs 1 however much evidence there is.
        self.idf = {s: math.log(1 + n / c) / math.log(1 + n) for s, c in df.items()}
        self.evidence_vocabulary = set(df)
        self.vocabulary = set(df) | {stem(w) for _, _, w in words(question)}
        self.question = _normalise(question)
        self.text = " ".join(_normalise(_without_directives(ev.text, units)) for ev, units in parsed)
        self.occurrences = [_Occurrence(f, i, _token_at(u.tokens, f.start))
                            for i, u in enumerate(self.units) for f in u.facts]


def _without_directives(text: str, units: tuple[_Unit, ...]) -> str:
    for u in units:
        if u.directive:
            text = text[:u.unit.start] + " " * (u.unit.end - u.unit.start) + text[u.unit.end:]
    return text


@functools.lru_cache(maxsize=1024)
def _parse(node_id: str, text: str) -> tuple[_Unit, ...]:
    """A node's units with their facts; cached because the same chunks are retrieved again and again."""
    out = []
    term: set[str] = set()
    directive = False
    for u in evidence_units(node_id, text):
        toks = [(s, e, stem(w)) for s, e, w in words(u.text)]
        if m := _TERM.match(u.text):
            term = {stem(w) for _, _, w in words(m.group(1)) if is_content(w)}
        # A short line right after an instruction ("Output: VERIFIED") belongs to it.
        directive = is_directive(u.text) or (directive and len(toks) < 8)
        out.append(_Unit(
            unit=u, tokens=toks, stems={t for _, _, t in toks if len(t) > 1},
            heading={stem(w) for _, _, w in words(u.heading) if is_content(w)} | term,
            clauses=[_polarity_clause(c) for c in _EVIDENCE_CLAUSES.split(u.text)],
            facts=[f for f in extract(u.text, claims=False) if not _list_number(u.text, f)],
            breaks=_breaks(u.text, toks), surface=set(polarity.tokens(_code_free(u.text))), directive=directive))
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
    """Inline code is not prose: `None` is a value, not a negation (so is a capitalised None mid-sentence)."""
    return re.sub(r"(?<=[^.!?\s])(\s+)None\b", r"\1", re.sub(r"`[^`]*`", " ", text))


def _polarity_clause(text: str) -> tuple[set[str], bool, set[str]]:
    """A clause's content stems, whether it is negative, and the stems its negation bears on."""
    plain = _code_free(text)
    return _polarity_stems(text), polarity.negative(plain), _scope_stems(plain)


def _scope_stems(text: str) -> set[str]:
    return {stem(w) for w in polarity.negation_scope(text) if is_content(w)}


def _polarity_stems(text: str) -> set[str]:
    return {stem(w) for _, _, w in words(text) if is_content(w) and w not in NEGATIONS}


def _normalise(text: str) -> str:
    text = text.replace("`", "").replace("*", "").replace("’", "'").lower()
    return re.sub(r"\s+", " ", text)


def _negated(text: str, lang: str = "en") -> bool:
    return polarity.negated(text, lang)


# A definition-list term opens the passage it defines ("work_mem (integer) Sets ...", "--soft:: Does not ..."):
# its name is the subject of the units after it, as a heading would be.
_TERM = re.compile(r"^\s*([\w.-]+(?:\s+<[^>]+>)?)\s*(?:\((?:[a-z ]{3,30})\)|::)")


def _token_at(tokens: list[tuple[int, int, str]], char: int) -> int:
    for i, (_, e, _) in enumerate(tokens):
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
    lexical_support: float = Field(0.6, gt=0, le=1, description="Share of a sentence's content words (3 or more, "
                                                                "weighted by rarity) that one evidence unit must "
                                                                "hold for the sentence to be supported without "
                                                                "the embedder; its score is then that share.")
    foreign_support: float = Field(0.6, gt=0, le=1, description="Share of the threshold a German, French or "
                                                                "Spanish sentence must reach (the bundled embedder "
                                                                "is English and scores across languages lower).")
    cache_size: int = Field(4096, ge=0, description="Evidence-unit embeddings kept between calls.")

    _cache: OrderedDict = PrivateAttr(default_factory=OrderedDict)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins_verifier.FidelityVerifier"

    # -- the verdict ---------------------------------------------------
    def _verify(self, question: str, answer: str, evidence: list[Evidence]) -> Verdict:
        index = _EvidenceIndex(evidence, question)
        results: list[SentenceVerdict] = []
        checked: list[tuple[int, _Claim]] = []
        spans = split_sentences(answer)
        for n, span in enumerate(spans):
            # "Yes." alone answers with the question's statement; "No. <explanation>" lets the explanation speak.
            bare = n == 0 and len(spans) > 1 and not words(_PARTICLE.sub("", span.text, count=1))
            claims = _claims(span.text, question if n == 0 and not bare else "", index)
            result = SentenceVerdict(text=span.text, start=span.start, end=span.end, score=0.0, supported=False)
            results.append(result)
            if claims and claims[0].unreadable:
                result.reasons.append(claims[0].unreadable)
                continue
            live = [c for c in claims if c.checkable]
            if not live:
                result.score, result.supported, result.checked = None, True, False
                continue
            for claim in live:
                if claim.explained:
                    result.reasons += self._affirmed_reasons(claim, index)
                    continue
                result.reasons += self._fact_reasons(claim, index) + self._echo_reasons(claim, index)
                if claim.lang == "en":
                    result.reasons += self._polarity_reasons(claim, index) + self._role_reasons(claim, index)
                    if not claim.from_question:
                        result.reasons += self._novelty_reasons(claim, index)
                    elif not claim.denies:
                        # "Yes." claims the question's statement: its words must come from the evidence.
                        result.reasons += self._novelty_reasons(claim, index, index.evidence_vocabulary)
                checked.append((len(results) - 1, claim))
        self._support(index, checked, results)
        return self.conclude(results)

    # -- support from the embedder -------------------------------------
    def _support(self, index: _EvidenceIndex, checked: list[tuple[int, _Claim]],
                 results: list[SentenceVerdict]) -> None:
        if not checked or not index.units:
            for i, _ in checked:
                results[i].supported = False
            return
        # A sentence the exact checks already rejected needs no embedding: its span is the best lexical match.
        for i, claim in checked:
            if results[i].reasons and results[i].node_id is None:
                unit = index.units[claim.candidates(index, 1)[0]]
                start, end = claim.supporting_words(unit)
                results[i].node_id, results[i].span = (
                    unit.unit.node_id,
                    (unit.unit.start + start, unit.unit.start + end),
                )
                results[i].evidence = unit.unit.text[start:end]
        checked = [(i, claim) for i, claim in checked if not results[i].reasons]
        # Most of a sentence's words, weighted by rarity, in one evidence unit: supported without the embedder,
        # which is for paraphrases (on the dev sets no such sentence scored under the threshold).
        for i, claim in checked:
            coverage, unit = claim.lexical_support(index)
            if claim.lang == "en" and len(claim.stems()) >= 3 and coverage >= self.lexical_support:
                start, end = claim.supporting_words(unit)
                res = results[i]
                res.node_id, res.span = unit.unit.node_id, (unit.unit.start + start, unit.unit.start + end)
                res.evidence = unit.unit.text[start:end]
                res.supported, res.score = True, round(coverage, 4)
        checked = [(i, claim) for i, claim in checked if not results[i].supported]
        if not checked:
            return
        picks = [claim.candidates(index, self.candidates) for _, claim in checked]
        unit_ids = sorted({u for ids in picks for u in ids})
        vectors = self._embed([claim.text for _, claim in checked], [index.units[u].unit.text for u in unit_ids])
        sent_vecs, unit_vecs = vectors[:len(checked)], dict(zip(unit_ids, vectors[len(checked):]))
        best_by_result: dict[int, float] = {}
        for (i, claim), svec, ids in zip(checked, sent_vecs, picks):
            best, best_unit = -1.0, None
            for u in ids:
                sim = float(np.dot(svec, unit_vecs[u]))
                if sim > best:
                    best, best_unit = sim, u
            res = results[i]
            if best_unit is not None and (i not in best_by_result or best < best_by_result[i]):
                source = index.units[best_unit].unit
                start, end = claim.supporting_words(index.units[best_unit])
                res.node_id, res.span = source.node_id, (source.start + start, source.start + end)
                res.evidence = source.text[start:end]
                if claim.lang != "en":
                    res.reasons += _foreign_polarity(claim, index.units[best_unit])
            support = max(0.0, min(1.0, best))
            best_by_result[i] = min(support, best_by_result.get(i, 1.0))
        foreign = {i for i, claim in checked if claim.lang != "en"}
        for i, support in best_by_result.items():
            res = results[i]
            # The bundled embedder is English: across languages it scores related text lower.
            threshold = self.threshold * self.foreign_support if i in foreign else self.threshold
            if not res.reasons and support < threshold:
                res.reasons.append(f"weak support: best evidence similarity {support:.2f} < {threshold:.2f}")
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
    def _fact_reasons(self, claim: _Claim, index: _EvidenceIndex) -> list[str]:
        reasons = []
        values: dict[Fact, list[str]] = {}
        for fact in claim.facts:
            if claim.denies:
                break  # "No." to "Is it ten minutes?": the evidence need not contain ten minutes
            if fact.kind == "code":
                # The setting the question asks about need not be repeated by a passage that names no other one.
                asked = _contains(index.question, fact.value) and not any(o.fact.kind == "code"
                                                                         for o in index.occurrences)
                if not _contains(index.text, fact.value) and not asked:
                    reasons.append(f"{fact.describe()} does not appear in the evidence")
            elif fact.kind == "entity":
                if claim.lang != "en" and not _name_shaped(fact.text):
                    continue  # German capitalises every noun; French and Spanish names are checked as written
                if not _entity_found(fact.value, index):
                    reasons.append(f"{fact.describe()} does not appear in the evidence")
                elif claim.lang == "en" and (why := _entity_attachment(claim, fact, index)):
                    reasons.append(why)
            else:
                values[fact] = self._value_reasons(claim, fact, index)
        for fact, value_reasons in values.items():
            # "1000 milliseconds, that is 1 second": a value restating another value of the sentence that the
            # evidence holds is as good as that value.
            if value_reasons and any(not values[other] and _matches(fact, other)
                                     for other in values if other is not fact):
                continue
            reasons.extend(value_reasons)
        return reasons

    def _value_reasons(self, claim: _Claim, fact: Fact, index: _EvidenceIndex) -> list[str]:
        found = [o for o in index.occurrences if o.fact.kind == fact.kind and _matches(fact, o.fact)]
        same = [o for o in index.occurrences if o.fact.kind == fact.kind and _same_value(fact, o.fact)]
        if found and all(o.fact.unit is None for o in found) and fact.unit and \
                any(o.fact.unit and o.fact.unit != fact.unit and quantities.convertible(fact.unit, o.fact.unit)
                    for o in same):
            # "2 minutes" against "2 seconds ... 1 is interpreted as 2": the bare 2 is that same value in seconds.
            found = []
        if not found:
            if same:
                units = sorted({o.fact.text for o in same})
                return [f"{fact.describe()} appears in the evidence only with another unit ({', '.join(units)})"]
            return [f"{fact.describe()} does not appear in the evidence"]
        # "at most 50,000" where the evidence says "50,000 or more": the bound points the other way.
        claimed_bound = polarity.bound(claim.text, fact.start, fact.end)
        if claimed_bound:
            bounds = [polarity.bound(index.units[o.unit].unit.text, o.fact.start, o.fact.end) for o in found]
            if all(b and b != claimed_bound for b in bounds):
                return [f"{fact.describe()} is claimed as a{'n upper' if claimed_bound == 'upper' else ' lower'} "
                        f"bound where the evidence gives it as a{'n upper' if bounds[0] == 'upper' else ' lower'} "
                        f"one: \"{_clip(index.units[found[0].unit].unit.text)}\""]
        context = claim.context(fact, index)
        words_here = {st for st, _ in context}
        # "from 0 to 32767": the other end of a range the sentence states is its own value, not a rival.
        partner = claim.range_partner(fact)
        rivals = [o for o in index.occurrences if o.fact.kind == fact.kind and _rival(fact, o.fact, words_here)
                  and not _matches(fact, o.fact) and not (partner and _matches(partner, o.fact))]
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

    def _polarity_reasons(self, claim: _Claim, index: _EvidenceIndex) -> list[str]:
        reasons = []
        evidence = [(stems, neg, u, scope) for u in index.units for stems, neg, scope in u.clauses if stems]
        clauses = claim.polarity_clauses()
        # A clause too short to place ("and below are tracked") is read with the whole sentence, last.
        whole = len(clauses) > 1 and not claim.from_question
        flipped = False
        for n, clause in enumerate(clauses + ([claim.text[claim.offset:]] if whole else [])):
            is_body = n == len(clauses)
            if is_body and flipped:
                break
            stems = _polarity_stems(clause)
            if len(stems) < 2 or not evidence:
                continue
            negated = _negated(_code_free(clause)) != claim.denies
            surface = set(polarity.tokens(clause))
            # Opposites and restrictions: against the units that say the most of the rest of the clause.
            units = _best_units(stems - _lexicon_stems(surface), index)
            if units:
                said_by_peers = set().union(*(u.surface for u in units))
                flips = polarity.opposites(surface, said_by_peers)
                if is_body:
                    # The whole sentence is only read for opposites its clauses were too short to place.
                    flips = [f for f in flips if not any(f[0] in polarity.tokens(c) and _placeable(c, index)
                                                         for c in clauses)]
                    negated = any(_negated(_code_free(c)) for c in clauses
                                  if flips and flips[0][0] in polarity.tokens(c)) != claim.denies
                if flips:
                    flipped = True
                    # "not below" says "above": a negation in the evidence clause holding the opposite word undoes it.
                    said, instead = flips[0]
                    compensated = len(flips) == 1 and any(negated != _negated(_code_free(c)) for u in units
                                                          for c in _EVIDENCE_CLAUSES.split(u.unit.text)
                                                          if instead in polarity.tokens(c))
                    if not compensated:
                        reasons.append(f"says the opposite of the evidence: '{said}' where the evidence says "
                                       f"'{instead}': \"{_clip(units[0].unit.text)}\"")
                    continue
                if is_body:
                    continue
                narrowed = [polarity.restriction(surface, u.surface) for u in units]
                if all(narrowed) and not any(_negated(_code_free(u.unit.text)) for u in units):
                    reasons.append(f"narrows the evidence with '{narrowed[0]}': \"{_clip(units[0].unit.text)}\"")
                    continue
                widened = [polarity.widening(surface, u.surface) for u in units]
                if all(widened) and not any(_negated(_code_free(u.unit.text)) for u in units):
                    reasons.append(f"widens the evidence with '{widened[0]}' where it restricts or makes an exception: "
                                   f"\"{_clip(units[0].unit.text)}\"")
                    continue
            if is_body:
                continue
            scored = sorted(((sum(index.idf.get(s, 0.0) for s in stems & es), i)
                             for i, (es, _, _, _) in enumerate(evidence)), reverse=True)
            top = scored[0][0]
            total = sum(index.idf.get(s, 0.0) for s in stems)
            # Only compare with evidence that says the same thing.
            if top <= 0 or top < 0.5 * total:
                continue
            peers = [evidence[i] for score, i in scored if score >= 0.8 * top]
            negative = polarity.negative(_code_free(clause)) != claim.denies
            # A negation bears on the words after it: "more concurrency as readers do not block writers" does not
            # deny "more concurrency". Negations disagree only where the negated side's scope is what the other
            # side talks about.
            scope = stems if claim.denies else _scope_stems(_code_free(clause))
            if all(neg != negative and ((es & scope) if negative else (stems & escope))
                   for es, neg, _, escope in peers):
                unit = peers[0][2].unit.text
                reasons.append(f"negation differs from the evidence: \"{_clip(clause)}\" vs \"{_clip(unit)}\"")
        return reasons

    def _affirmed_reasons(self, claim: _Claim, index: _EvidenceIndex) -> list[str]:
        """A "No, <explanation>" is wrong when the evidence says what the question asks: its statement has all
        its values, agrees in polarity, adds nothing and is about the same thing as a passage."""
        positive = _Claim(claim.text, index, lang=claim.lang, from_question=True)
        if not positive.checkable or positive.lang != "en":
            return []
        if self._fact_reasons(positive, index) or self._polarity_reasons(positive, index) or \
                self._novelty_reasons(positive, index, index.evidence_vocabulary):
            return []
        if not _best_units({st for _, st in positive.content}, index):
            return []
        return [f"the evidence says what the question asks (\"{_clip(claim.text)}\"); the answer denies it"]

    def _role_reasons(self, claim: _Claim, index: _EvidenceIndex) -> list[str]:
        """Who does what to whom: exchanging two words of the sentence would make it say, in order, what the
        evidence says ("the primary applies WAL received from the standby" against the reverse), or the words
        on the two sides of a relation word ("copies src to dest") trade places."""
        body = _code_free(claim.text[claim.offset:])
        seq = _role_words(body)
        units = _best_units(set(seq), index)
        if not units:
            return []
        # "X approved Y" and "Y was approved by X" say the same: a passive on one side only is no swap.
        passive = _PASSIVE.search(body) is not None
        swaps = [None if passive != (_PASSIVE.search(u.unit.text) is not None) else
                 _swapped(seq, _role_words(u.unit.text)) for u in units]
        # "The grooves are vacuumed" against "Vacuum the grooves": a verb trading places with its object is the
        # passive voice, not a role swap.
        participles = _participles(body)
        swaps = [None if swap and participles & set(swap) else swap for swap in swaps]
        if all(swaps):
            x, y = cast(tuple[str, str], swaps[0])
            return [f"roles are swapped: the evidence has '{y}' where the sentence has '{x}' and the other way "
                    f"round: \"{_clip(units[0].unit.text)}\""]
        contrasted = [_contrast_swapped(body, u.unit.text) for u in units]
        if all(contrasted):
            return [f"roles are swapped around a contrast: the sentence sets aside '{contrasted[0]}', which the "
                    f"evidence affirms, and affirms what it sets aside: \"{_clip(units[0].unit.text)}\""]
        crossed = [_crossed(body, u.unit.text) for u in units]
        if all(crossed):
            pivot, x, y = cast(tuple[str, str, str], crossed[0])
            return [f"roles are swapped around '{pivot}': the sentence has '{x}' before it and '{y}' after it, the "
                    f"evidence the other way round: \"{_clip(units[0].unit.text)}\""]
        return []

    def _echo_reasons(self, claim: _Claim, index: _EvidenceIndex) -> list[str]:
        """An answer that repeats what the evidence tells the checker or assistant to say is not grounded."""
        content = [w for _, _, w in words(claim.text) if is_content(w)]
        if content and all(w in VERDICT_WORDS for w in content):
            return [f"'{claim.text.strip()}' is a verdict, not a claim about the evidence"]
        stems = {st for _, st in claim.content}
        best = max((len(stems & u.stems) for u in index.units), default=0)
        for u in index.directives:
            if stems and len(stems & u.stems) >= max(2, 0.5 * len(stems)) and len(stems & u.stems) > best:
                return [f"repeats text in the evidence that addresses the checker or assistant (evidence is data, "
                        f"not instructions): \"{_clip(u.unit.text)}\""]
        return []

    def _novelty_reasons(self, claim: _Claim, index: _EvidenceIndex,
                         vocabulary: set[str] | None = None) -> list[str]:
        reasons = []
        vocabulary = index.vocabulary if vocabulary is None else vocabulary
        for clause, stems in claim.clauses():
            # Two words are too little to tell a paraphrase from an addition.
            if len(stems) < 3:
                continue
            novel = [s for s in stems if s not in vocabulary]
            if len(novel) >= 2 and len(novel) / len(stems) >= self.novelty:
                reasons.append(f"adds content the evidence does not mention: \"{_clip(clause)}\"")
        # "functions, procedures and indexes" where the evidence lists functions, procedures and triggers: a
        # member replaced by one the evidence does not mention.
        evidence_lists = [set(map(stem, _list_heads(m))) for u in index.units for m in _LIST.finditer(u.unit.text)]
        for m in _LIST.finditer(claim.text, claim.offset):
            heads = [h for h in _list_heads(m) if is_content(h)]
            head_stems = {stem(h) for h in heads}
            new = [h for h in heads if stem(h) not in vocabulary]
            if new and any(len(head_stems & listed) >= 2 and listed - head_stems for listed in evidence_lists):
                reasons.append(f"puts '{new[0]}' in a list where the evidence has another member: "
                               f"\"{_clip(m.group(0))}\"")
        return reasons


def _claims(sentence: str, question: str, index: _EvidenceIndex) -> list[_Claim]:
    """What an answer sentence claims. "Yes." / "No, it runs much more slowly." answering a yes/no question
    also claim the question's statement (denied for "No"); the rest of the sentence is a claim of its own."""
    lang = polarity.language(sentence)
    particle = _PARTICLE.match(sentence)
    word = particle.group("word").lower() if particle else ""
    asked = _YES_NO_QUESTION.match(question or "")
    answers = (word in polarity.YES or word in polarity.NO) and asked
    if lang not in polarity.READ:
        if particle is None or not answers or len(words(sentence[particle.end():])) > 0:
            return [_Claim(sentence, index, lang="en", unreadable=_unreadable(lang))]
    claims = []
    if answers and asked:
        # "Is sorted() stable?" -> "sorted() stable": the auxiliary is not a claim of its own.
        statement = (question[:asked.start("aux")] + question[asked.end("aux"):]).strip().rstrip("?").strip()
        denies = word in polarity.NO
        # "No, only one thread runs at a time": the explanation is the claim; the question's statement must
        # only not be what the evidence says. ("No, it does not ..." restates the denial: both are checked.)
        rest = _Claim(sentence, index, lang=lang)
        explained = denies and rest.checkable and not _negated(_code_free(rest.text[rest.offset:]), lang)
        claims.append(_Claim(statement, index, lang=polarity.language(statement) if lang == "en" else lang,
                             from_question=True, denies=denies, explained=explained))
    claims.append(_Claim(sentence, index, lang=lang))
    return claims


def _unreadable(lang: str) -> str:
    what = "another script" if lang == "other-script" else f"a language the fidelity backend does not read ({lang})"
    return (f"written in {what}: fidelity checks English, German, French and Spanish answers; use the nli backend "
            "with a multilingual checker or the llm backend for others (not verified, so not grounded)")


class _Claim:
    """One answer sentence (or the statement of the question it answers) with its facts and content words."""

    def __init__(self, text: str, index: _EvidenceIndex, lang: str = "en", from_question: bool = False,
                 denies: bool = False, unreadable: str | None = None, explained: bool = False):
        self.text = text
        self.lang, self.from_question, self.denies, self.unreadable = lang, from_question, denies, unreadable
        self.explained = explained
        particles = ANSWER_PARTICLES | polarity.YES | polarity.NO
        body = re.sub(r"^\W*(?:" + "|".join(sorted(particles, key=len, reverse=True)) + r")\b[\s,.:;!-]*", "",
                      text, flags=re.I)
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
                        if not covered[s] and is_content(text[s:e].lower())
                        and text[s:e].lower() not in polarity.ALL_NEGATIONS]
        verdict_only = bool(self.content) and all(text[s:e].lower() in VERDICT_WORDS
                                                  for s, e, _ in (self.tokens[i] for i, _ in self.content))
        self.checkable = bool(self.facts) or len(self.content) >= 2 or verdict_only

    def supporting_words(self, unit: _Unit) -> tuple[int, int]:
        """The stretch of ``unit`` (offsets in its text) from the first to the last word the claim shares with it."""
        wanted = {st for _, st in self.content} | {stem(w) for f in self.facts for _, _, w in words(f.text)}
        hits = [(s, e) for s, e, t in unit.tokens if t in wanted]
        if not hits:
            return 0, len(unit.unit.text)
        return hits[0][0], hits[-1][1]

    def range_partner(self, fact: Fact) -> Fact | None:
        """The other end of a range the fact belongs to ("from 2 to 64", "between 0 and 5", "20-30")."""
        numbers = [f for f in self.facts if f.kind == fact.kind]
        for a, b in zip(numbers, numbers[1:]):
            if fact in (a, b) and _RANGE_JOIN.fullmatch(self.text[a.end:b.start]) and \
                    (self.text[a.end:b.start].strip() in ("-", "–", "to", "through")
                     or _RANGE_OPEN.search(self.text[:a.start])):
                return b if fact is a else a
        return None

    def stems(self) -> set[str]:
        """The content words and the words of the facts, stemmed: what a supporting unit should say."""
        return {st for _, st in self.content} | {stem(w) for f in self.facts for _, _, w in words(f.text)}

    def lexical_support(self, index: _EvidenceIndex) -> tuple[float, _Unit]:
        """The share of the claim's words (IDF-weighted; a word the evidence lacks weighs 1) that the unit
        saying most of them holds, with that unit."""
        stems = self.stems()
        unit = index.units[self.candidates(index, 1)[0]]
        total = sum(index.idf.get(s, 1.0) for s in stems)
        held = sum(index.idf.get(s, 1.0) for s in stems & (unit.stems | unit.heading))
        return (held / total if total else 0.0), unit

    def candidates(self, index: _EvidenceIndex, k: int) -> list[int]:
        stems = self.stems()
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
        if self.denies:
            return [self.text[self.offset:]]  # a "No" denies the question as a whole
        return [p for p in _POLARITY_SPLIT.split(self.text[self.offset:]) if p and p.strip()]


_RANGE_JOIN = re.compile(r"\s*(?:-|–|to|and|through)\s*", re.I)
_RANGE_OPEN = re.compile(r"\b(?:from|between)\s*$", re.I)

# Words that frame a whole statement rather than fill a role in it ("X returns Y" = "Return Y of X",
# "HTTP uses port 80 by default" = "The default port for HTTP is 80").
_FRAME_WORDS = {"default", "defaults", "return", "returns", "value", "values", "set", "sets"}
_PASSIVE = re.compile(r"\b(?:is|are|was|were|be|been|being|get|gets|got)\s+(?:\w+ly\s+)?\w+(?:ed|en|wn|ld|lt|nt)\s+by\b"
                      r"|\b\w+ed\s+by\b", re.I)

_PARTICIPLE = re.compile(r"\b(?:is|are|was|were|be|been|being)\s+(?:\w+ly\s+)?(\w+(?:ed|en|wn|ld|lt|nt))\b", re.I)


def _participles(text: str) -> set[str]:
    """Stems of the verbs a passive puts after their object ("the grooves are vacuumed" -> "vacuum")."""
    return {stem(m.group(1)) for m in _PARTICIPLE.finditer(text)}


_ITEM = r"[A-Za-z][\w-]*(?:[ \t]+[A-Za-z][\w-]*){0,2}"
# A coordinated list of short items: "functions, procedures(,) and triggers".
_LIST = re.compile(rf"({_ITEM})((?:[ \t]*,[ \t]*{_ITEM})+),?[ \t]+(?:and|or)[ \t]+([A-Za-z][\w-]*)")


def _list_heads(m: re.Match) -> list[str]:
    """The last word of each item of a matched list (its head noun in English)."""
    items = [m.group(1)] + m.group(2).split(",") + [m.group(3)]
    return [i.split()[-1].lower() for i in items if i.split()]


def _best_units(stems: set[str], index: _EvidenceIndex) -> list[_Unit]:
    """The units that say most of ``stems`` (IDF-weighted): the best and those within 80% of it, provided
    the best covers at least half of the clause."""
    total = sum(index.idf.get(s, 0.0) for s in stems)
    if len(stems) < 2 or total <= 0:
        return []
    scored = sorted(((sum(index.idf.get(s, 0.0) for s in stems & u.stems)
                      + 0.5 * sum(index.idf.get(s, 0.0) for s in (stems & u.heading) - u.stems), i)
                     for i, u in enumerate(index.units)), reverse=True)
    top = scored[0][0] if scored else 0.0
    if top <= 0 or top < 0.5 * total:
        return []
    return [index.units[i] for score, i in scored if score >= 0.8 * top]


def _placeable(clause: str, index: _EvidenceIndex) -> bool:
    """Whether a clause says enough to find the evidence it is about."""
    return bool(_best_units(_polarity_stems(clause) - _lexicon_stems(set(polarity.tokens(clause))), index))


def _lexicon_stems(surface: set[str]) -> set[str]:
    return {stem(w) for w in surface if w in polarity.OPPOSITES or w in polarity.RESTRICTIVE}


def _swapped(claim: list[str], unit: list[str]) -> tuple[str, str] | None:
    """Two words whose exchange makes the sentence follow the unit's order (the words both share, at least
    four): a gain of two in their longest common subsequence, or of one when the sentence then follows it
    completely.
    The two must stand apart, with a shared word between them: "wastes less time" vs "time wasted" is no swap."""
    shared = set(claim) & set(unit)
    # "the child and the child's process id": a word repeated before any other shared word holds one place.
    c = _runs([t for t in claim if t in shared])
    u = _runs([t for t in unit if t in shared])
    if len(shared) < 4:
        return None
    base = _lcs(c, u)
    if base == len(u):
        return None
    first_c = {t: i for i, t in reversed(list(enumerate(c)))}
    first_u = {t: i for i, t in reversed(list(enumerate(u)))}
    # A word the sentence uses more often than the evidence ("error exit code ... exit status") is doing
    # something else there too: not a role to exchange.
    single = {t for t in shared if claim.count(t) <= unit.count(t)}
    for x, y in itertools.combinations(sorted(shared & single, key=first_c.__getitem__), 2):
        if (first_u[x] < first_u[y]) or not _apart(c, x, y):
            continue
        exchanged = [y if t == x else x if t == y else t for t in c]
        after = _lcs(exchanged, u)
        if after - base >= 2 or (after - base >= 1 and after == min(len(c), len(u))):
            return x, y
    return None


# An identifier is one role, not its parts: "eventEmitter.on()" and "eventEmitter.emit()" differ as wholes.
_IDENTIFIER = re.compile(
    r"[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)+(?:\(\))?|[A-Za-z_][\w-]*\(\)|(?<!\w)--?[a-z][\w-]*(?:=\S+)?"
)
# Relation words whose two sides are two different roles: "copies src to dest", "backed by a unified cache".
_PIVOTS = {"to", "from", "into", "onto", "by", "than", "via", "toward", "towards"}


def _role_tokens(text: str) -> list[tuple[str, bool]]:
    """(stem or whole identifier, a role word?) for every word, identifiers kept whole. Negations, opposites
    and framing words are checked elsewhere or fill no role."""
    def plain(part: str) -> list[tuple[str, bool]]:
        return [(stem(w), (is_content(w) or w.isdigit()) and w not in polarity.ALL_NEGATIONS
                 and w not in polarity.OPPOSITES and w not in _FRAME_WORDS) for _, _, w in words(part)]
    out, last = [], 0
    for m in _IDENTIFIER.finditer(text):
        out += plain(text[last:m.start()])
        out.append((m.group(0).lower().rstrip("()").split("=")[0], True))
        last = m.end()
    return out + plain(text[last:])


def _role_words(text: str) -> list[str]:
    return [t for t, role in _role_tokens(text) if role]


def _crossed(claim: str, unit: str, window: int = 4) -> tuple[str, str, str] | None:
    """A relation word whose nearest sides trade places between sentence and evidence: (pivot, x, y) when the
    sentence has x before the pivot and y after it and the evidence's best-matching use of the same pivot has
    y before and x after. Words near the pivot weigh more; a word on both sides of either pivot, or the
    word right before both pivots ("backed by"), says nothing about roles."""
    def sides(tokens, i):
        before = [t for t, c in itertools.takewhile(lambda tc: tc[0] != _CLAUSE_END,
                                                    reversed(tokens[max(0, i - 3 * window):i])) if c][:window]
        after = [t for t, c in itertools.takewhile(lambda tc: tc[0] != _CLAUSE_END,
                                                   tokens[i + 1:i + 1 + 3 * window]) if c][:window]
        return before, after

    def clause_tokens(text, splitter):
        # The two sides of a relation word are in its clause: "from 0 to 32767, and assigning to it ..."
        return [t for part in splitter.split(text) if part for t in _role_tokens(part) + [(_CLAUSE_END, False)]]
    claim_tokens, unit_tokens = clause_tokens(claim, _INDEPENDENT), clause_tokens(unit, _INDEPENDENT)
    for i, (pivot, _) in enumerate(claim_tokens):
        if pivot not in _PIVOTS:
            continue
        cb, ca = sides(claim_tokens, i)
        best = None
        for j, (p, _) in enumerate(unit_tokens):
            if p != pivot:
                continue
            ub, ua = sides(unit_tokens, j)
            noise = (set(cb) & set(ca)) | (set(ub) & set(ua)) | ({cb[0]} & {ub[0]} if cb and ub else set())
            weight = {t: 1 / (1 + d) for side in (cb, ca) for d, t in enumerate(side)}
            straight = sum(weight[t] for t in (set(cb) & set(ub)) | (set(ca) & set(ua)) if t not in noise)
            cross_b = [t for t in cb if t in ua and t not in noise]
            cross_a = [t for t in ca if t in ub and t not in noise]
            cross = sum(weight[t] for t in cross_b + cross_a)
            if best is None or max(cross, straight) > max(best[0], best[1]):
                best = (cross, straight, cross_b, cross_a)
        if best and best[2] and best[3] and best[0] > best[1]:
            return pivot, best[2][0], best[3][0]
    return None


# "X rather than Y", "X, not Y", "X instead of Y": X affirmed, Y set aside (up to the end of the clause).
_CONTRAST = re.compile(r"\b(?:rather\s+than|instead\s+of|and\s+not|but\s+not)\b|,\s*not\b(?!\s+(?:only|just)\b)",
                       re.I)


def _contrast(text: str) -> tuple[set[str], set[str]] | None:
    """(affirmed, set-aside) content stems of a sentence built on a contrast, else None."""
    m = _CONTRAST.search(text)
    if m is None:
        return None
    end = re.search(r"[;.,:](?:\s|$)", text[m.end():])
    aside = text[m.end():m.end() + end.start() if end else len(text)]
    return _polarity_stems(text[:m.start()]), _polarity_stems(aside)


def _contrast_swapped(claim: str, unit: str) -> str | None:
    """The words a sentence sets aside though the evidence affirms them, when the evidence sets aside what the
    sentence affirms: "the ID of the subshell rather than of the invoking shell" against "the ID of the invoking
    shell, not the subshell"."""
    said, told = _contrast(claim), _contrast(unit)
    if not said or not told:
        return None
    (claim_yes, claim_no), (unit_yes, unit_no) = said, told
    moved_out = (claim_no - unit_no) & (unit_yes - claim_yes)
    moved_in = (unit_no - claim_no) & claim_yes
    return sorted(moved_out)[0] if moved_out and moved_in and not claim_no & unit_no else None


_CLAUSE_END = "\x00"
# Where one clause that could stand alone ends and another begins ("X, backed by Y" is one).
_INDEPENDENT = re.compile(r"\s*(?:;|:(?=\s)|,\s*(?:and|but|while|whereas|then|or|so)\b)\s*", re.I)


def _runs(seq: list[str]) -> list[str]:
    return [t for i, t in enumerate(seq) if i == 0 or seq[i - 1] != t]


def _apart(seq: list[str], x: str, y: str) -> bool:
    spots = [i for i, t in enumerate(seq) if t in (x, y)]
    return any(seq[i] != seq[j] and j - i >= 2 for i in spots for j in spots if j > i)


def _lcs(a: list[str], b: list[str]) -> int:
    row = [0] * (len(b) + 1)
    for x in a:
        prev = 0
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], prev + 1 if x == y else max(row[j], row[j - 1])
    return row[-1]


def _foreign_polarity(claim: _Claim, unit: _Unit) -> list[str]:
    """A German, French or Spanish sentence against the English unit the embedder matched: negation must agree."""
    negated = _negated(claim.text[claim.offset:], claim.lang) != claim.denies
    if negated != polarity.negative(_code_free(unit.unit.text)):  # "no están activadas" = "disabled"
        return [f"negation differs from the evidence ({claim.lang}): \"{_clip(claim.text)}\" vs "
                f"\"{_clip(unit.unit.text)}\""]
    return []


def _entity_attachment(claim: _Claim, fact: Fact, index: _EvidenceIndex) -> str | None:
    """A name found in the evidence, but the passage that says the rest of the sentence names another one:
    "In a FIFO queue the most recently added entry ..." where that is said of the LIFO queue."""
    own = {stem(w) for _, _, w in words(fact.text)}
    rest = {st for _, st in claim.content} - own
    units = _best_units(rest, index)
    if not units or any(own <= (u.stems | u.heading) for u in units):
        return None
    best = units[0]
    score = sum(index.idf.get(s, 0.0) for s in rest & best.stems)
    holders = [u for u in index.units if own <= (u.stems | u.heading)]
    if not holders:
        return None
    held = max(sum(index.idf.get(s, 0.0) for s in rest & u.stems) for u in holders)
    claimed = {f.value for f in claim.facts if f.kind == "entity"}
    # Only a confusable name counts as the rival (FIFO/LIFO, HTTP/HTTPS): other names in that passage are
    # usually its own subject's parts.
    others = [f for f in best.facts if f.kind == "entity" and f.value not in claimed and f.value != fact.value
              and difflib.SequenceMatcher(None, f.value, fact.value).ratio() >= 0.6]
    # About one distinctive word more (IDF scaled to at most 1) in the rival's passage.
    if others and score - held >= 0.75:
        return (f"{fact.describe()} is attached to another subject: the evidence says the rest of the sentence "
                f"about '{others[0].text}': \"{_clip(best.unit.text)}\"")
    return None


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


def _matches(claimed: Fact, found: Fact) -> bool:
    """The claimed value is the evidence's: equal, equal after unit conversion, or within the tolerance of an
    approximate claim ("about 94 °C" for 93.5 °C)."""
    if claimed.kind != "number" or found.kind != "number":
        return claimed.kind == found.kind and _same_value(claimed, found) and _compatible_units(claimed, found)
    step = quantities.last_digit_step(claimed.text, claimed.value)
    if claimed.unit and found.unit and claimed.unit != found.unit and \
            quantities.convertible(claimed.unit, found.unit):
        values = quantities.in_unit(claimed.value, claimed.unit, found.unit)
        steps = [abs(v - w) for v, w in zip(quantities.in_unit(claimed.value + step, claimed.unit, found.unit), values)]
        return any(quantities.close_enough(v, found.value, st, claimed.approximate) for v, st in zip(values, steps))
    if not _compatible_units(claimed, found):
        return False
    return quantities.close_enough(claimed.value, found.value, step, claimed.approximate)


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
    # "five years" is not "5. RETURN OF MATERIALS"; a bare "5" may be. Nor are "two operators" "2 years".
    if a.unit and b.unit_word or a.unit_word and b.unit:
        return False
    return True


def _rival(claimed: Fact, other: Fact, context: set[str]) -> bool:
    """Another value of the same kind and dimension: what a swap would have taken.
    "7 in sales" has no unit of its own; "8 sales" is its rival because it counts sales."""
    if _same_value(claimed, other):
        return False
    if claimed.kind == "date":
        return True
    if other.text.lower() == "one" or other.text.lower() in ORDINALS:
        return False  # "in any one table": evidence-side words support values, they do not compete
    if claimed.unit:
        return other.unit == claimed.unit or quantities.convertible(claimed.unit, other.unit)
    if claimed.unit_word is None and other.unit is None and other.unit_word is None:
        return True  # two bare values ("always 80", "The default is 4.0"): their subjects decide
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
