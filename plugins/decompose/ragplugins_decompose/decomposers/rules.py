"""An LLM-free decomposer for questions that coordinate several asks.

It splits only on explicit grammatical signals and leaves everything else
alone, so "terms and conditions" or "between X and Y" never split:

- several question sentences ("What is X? When does Y?");
- coordinated questions: "..., and <wh-word> ..." or "... and <wh-word> ..."
  ("what is X and when does Y"), "..., and <auxiliary> <subject> ..." ("..., and
  did the customer agree"), "...; <wh-word or auxiliary> ...", and a comma list
  of such questions ending in one of those ("X, how much Y, and who Z");
- a comma list of three or more items ending in "and"/"or" after a question
  head ("What are the fees, the term and the termination rights?"): one
  sub-query per item, each with the head;
- "<preposition> both X and Y" ("regarding both the cap and the expiry date").

Sentences that are not questions (a premise such as "The finance team revised
the price.") are not split and do not become sub-queries: the original
question, which is always scored too, keeps them.
"""

from __future__ import annotations

import re
from typing import ClassVar

from ragplugins import api
from ragplugins_decompose.decomposers.base import Decomposer, Decomposition

WH = ("what", "when", "where", "who", "whom", "whose", "which", "why", "how")
# Relative pronouns open a clause about the preceding noun ("the fee, which is due"), not a new question.
_RELATIVE = ("which", "who", "whom", "whose")
AUX = ("is", "are", "was", "were", "do", "does", "did", "can", "could", "will", "would", "should", "shall",
       "may", "might", "must", "has", "have", "had")
PREPOSITIONS = ("of", "for", "about", "on", "in", "to", "with", "between", "from", "by", "regarding",
                "concerning", "at", "under", "during", "after", "before", "within", "into", "per")
DETERMINERS = ("the", "a", "an", "its", "their", "his", "her", "our", "your", "my", "this", "that", "these",
               "those", "each", "every", "any", "all")
_FUNCTION = set(WH + AUX + PREPOSITIONS + DETERMINERS) | {
    "i", "you", "it", "they", "we", "he", "she", "them", "me", "us", "and", "or", "not", "no", "be", "been",
    "there", "much", "many", "long", "off", "up", "out", "so", "if", "then", "than", "as", "one", "also"}

_WORD = re.compile(r"[\w][\w'’\-./]*")
_SENTENCE = re.compile(r"(?<=[.?!])\s+(?=[\"'(\[]?[A-Z0-9])")
_WH = "|".join(WH)
_AUX = "|".join(AUX)
_AND_WH = re.compile(rf",?\s+and\s+(?=(?:{_WH})\b)", re.IGNORECASE)
# An auxiliary after "and" opens a new question only with a comma before it and a subject after it:
# "..., and did the customer agree" splits, "... leaves and does not pay" does not.
_AND_AUX = re.compile(rf",\s+and\s+(?=(?:{_AUX})\s+(?!not\b)[\w])", re.IGNORECASE)
_SEMICOLON = re.compile(rf";\s+(?=(?:{_WH}|{_AUX})\b)", re.IGNORECASE)
_COMMA_WH = re.compile(rf",\s+(?=(?:{'|'.join(w for w in WH if w not in _RELATIVE)})\b)", re.IGNORECASE)
_LIST_SEP = re.compile(r",\s+")
_FINAL_CONJ = re.compile(r"\s+(?:and|or)\s+", re.IGNORECASE)
_OXFORD = re.compile(r"(?:and|or)\s+(.+)$", re.IGNORECASE | re.DOTALL)
_BOTH = re.compile(rf"^(?P<head>.*\b(?:{'|'.join(PREPOSITIONS)}))\s+both\s+(?P<x>.+?)\s+and\s+(?P<y>.+)$",
                   re.IGNORECASE | re.DOTALL)


def words(text: str) -> list[str]:
    return _WORD.findall(text)


def _lower_words(text: str) -> list[str]:
    return [w.casefold() for w in words(text)]


def has_content(text: str) -> bool:
    """At least one word that carries meaning (not a question word, auxiliary, pronoun, ...)."""
    return any(w not in _FUNCTION for w in _lower_words(text))


def _opens_question(text: str) -> bool:
    first = _lower_words(text)[:1]
    return bool(first) and first[0] in WH + AUX


def _asks(text: str) -> bool:
    return any(w in WH or w in AUX for w in _lower_words(text))


_LEADING_CONJ = re.compile(r"^(?:and|or|but|also)\s+", re.IGNORECASE)


def _tidy(text: str) -> str:
    return _LEADING_CONJ.sub("", text.strip().strip(" ,;:")).rstrip("?.!").strip()


def _question_sentences(query: str) -> list[str]:
    """The sentences that ask something: ending in '?', opening with a question word, or the last one."""
    sentences = [s for s in _SENTENCE.split(" ".join(query.split())) if s.strip()]
    return [s for i, s in enumerate(sentences)
            if s.rstrip().endswith("?") or _opens_question(s) or i == len(sentences) - 1]


def _split_coordinated(sentence: str) -> list[str]:
    """Split a sentence at coordinated questions; [sentence] when it holds one."""
    parts = [sentence]
    for pattern in (_SEMICOLON, _AND_WH, _AND_AUX):
        parts = [p for part in parts for p in pattern.split(part)]
    if len(parts) > 1:
        # Inside a coordination, "X, how much Y" lists one more question, if the piece before it is one.
        listed = []
        for part in parts:
            pieces = _COMMA_WH.split(part)
            current = pieces[0]
            for piece in pieces[1:]:
                if _opens_question(current):
                    listed.append(current)
                    current = piece
                else:
                    current = f"{current}, {piece}"
            listed.append(current)
        parts = listed
    parts = [_tidy(p) for p in parts]
    return parts if len(parts) > 1 and all(has_content(p) for p in parts) else [sentence]


def _is_item(text: str) -> bool:
    lowered = _lower_words(text)
    return bool(lowered) and not any(w in WH or w in AUX or w in PREPOSITIONS for w in lowered)


def _join(head: str, item: str) -> str:
    head_words, item_words = head.split(), item.split()
    if head_words and item_words and head_words[-1].casefold() in DETERMINERS \
            and item_words[0].casefold() in DETERMINERS:
        head_words = head_words[:-1]
    return " ".join(head_words + item_words)


def _split_list(clause: str) -> list[str]:
    """'<head> A, B and C' -> ['<head> A', '<head> B', '<head> C'] for three or more items; else []."""
    segments = _LIST_SEP.split(_tidy(clause))
    if len(segments) < 2:
        return []
    last = segments[-1]
    oxford = _OXFORD.match(last)
    if oxford:
        tail = [oxford.group(1)]
    else:
        tail = _FINAL_CONJ.split(last, maxsplit=1)
        if len(tail) != 2:
            return []
    middle: list[str] = []
    index = len(segments) - 2
    while index > 0 and _is_item(segments[index]):
        middle.insert(0, segments[index])
        index -= 1
    head_segment = segments[index]
    if not _asks(head_segment):
        return []
    seg_words = head_segment.split()
    cut = max((i for i, w in enumerate(seg_words) if w.casefold().strip(",:;") in _FUNCTION - {"and", "or"}),
              default=None)
    if cut is None or cut == len(seg_words) - 1:
        return []
    head = ", ".join(segments[:index] + [" ".join(seg_words[:cut + 1])])
    items = [" ".join(seg_words[cut + 1:])] + middle + tail
    if len(items) < 3 or not all(has_content(i) and not _opens_question(i) for i in items):
        return []
    return [_join(head, _tidy(item)) for item in items]


def _split_both(clause: str) -> list[str]:
    """'<head> <preposition> both X and Y' -> ['<head> <preposition> X', '<head> <preposition> Y']."""
    match = _BOTH.match(_tidy(clause))
    if not match:
        return []
    head = match.group("head")
    items = [_tidy(match.group("x")), _tidy(match.group("y"))]
    return [f"{head} {i}" for i in items] if all(has_content(i) for i in items) else []


class RuleDecomposer(Decomposer):
    """Splits coordinated questions and enumerations without an LLM; leaves other questions alone."""

    name: ClassVar[str] = "rules"

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins_decompose.RuleDecomposer"

    def decompose(self, query: str, ctx: api.RagContext | None = None) -> Decomposition:
        parts: list[str] = []
        rules: list[str] = []
        questions = _question_sentences(query)
        if len(questions) > 1:
            rules.append("several questions")
        for sentence in questions:
            clauses = _split_coordinated(sentence)
            if len(clauses) > 1:
                rules.append("coordinated questions")
            for clause in clauses:
                items = _split_list(clause)
                if items:
                    rules.append("list")
                else:
                    items = _split_both(clause)
                    if items:
                        rules.append("both X and Y")
                parts.extend(items or [_tidy(clause)])
        if len(parts) < 2:
            return Decomposition([], "no coordinated questions, list or 'both X and Y'")
        return Decomposition(parts, "", {"rules": sorted(set(rules))})
