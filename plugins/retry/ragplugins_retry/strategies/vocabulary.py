from __future__ import annotations

import re
from collections import Counter
from collections.abc import Container, Sequence
from typing import ClassVar

import numpy as np
from llama_index.core.schema import NodeWithScore

from ragplugins import api
from ragplugins_retry import text, vocabulary
from ragplugins_retry.strategies.base import Reformulation, RetryStrategy
from ragplugins_retry.strategies.keywords import KeywordsStrategy

# The candidates the query_coverage signal judges the question's terms on (its "best of the top 3").
TOP = 3
# "sub-items", "built-in", "check-local": lower-case letters joined by hyphens, as prose writes a compound.
_PROSE_COMPOUND = re.compile(r"[a-z]+(?:-[a-z]+)+")


class VocabularyStrategy(RetryStrategy):
    """Append the corpus's own spelling of question words the top candidates lack; else reduce as ``keywords``.

    A weak first stage often means the question and the answer spell the same
    thing differently: "cache" where the docs write ``lru_cache``,
    "approximate nearest neighbour" where they write "ANN", or the reverse.
    Candidates are corpus tokens linked to a question word by form alone: an
    identifier that has the word as a part, an acronym of consecutive question
    words, the corpus's spelled-out form (defined next to the acronym) of a
    question acronym. Only words missing from the top candidates are respelt,
    and only where the corpus prefers the other spelling (writes it in more
    chunks than the question's). Form alone is ambiguous, so a candidate must
    also lead somewhere: its best chunk must hold a larger idf-weighted share
    of the *rest* of the question than the best top candidate does; the
    candidates are ranked by that share. Never added: a token in half the
    chunks or more (BM25's idf is not positive there), stopwords, bare numbers,
    respellings of words already asked. At most one addition per question
    word and ``terms`` in all; the question itself is kept verbatim (every
    entity, number, constraint). When nothing is found the retry is the
    ``keywords`` reduction, so the strategy differs from the default only
    where it finds a mismatch. Deterministic, LLM-free; the vocabulary is read
    once per index state (``RagContext.cached``).
    """

    name: ClassVar[str] = "vocabulary"
    terms: int = 3
    # Without a mismatch: the `keywords` reduction (True) or no retry (False, the plugin's default).
    reduce_otherwise: bool = False

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins_retry.VocabularyStrategy"

    def reformulate(self, query: str, nodes: list[NodeWithScore], ctx: api.RagContext) -> Reformulation:
        if ctx is None or getattr(ctx, "index", None) is None:
            added: list[dict] = []
            why = "no index to read a vocabulary from"
        else:
            try:
                vocab = vocabulary.vocabulary_for_query(ctx)
                why = vocabulary.FILTERS_UNKNOWN
            except Exception as exc:  # noqa: BLE001 - a store that cannot list its text: reduction only
                vocab, why = None, f"the vocabulary could not be read ({type(exc).__name__}: {exc})"
            # A file name the question types names a document, not the corpus's vocabulary: "usr_21.txt
            # says ..." was respelt "usr_toc.txt" (a new user's Vim help files).
            files = ctx.documents_by_file_name()   # cached per index version; read for membership only
            added, why = (self.expansions(query, vocab, nodes, files=files) if vocab is not None else ([], why))
        if added:
            # One change per retry: the question stays exactly as asked (every entity, number and
            # constraint), only the corpus's spellings are appended. The mismatch is lexical, so the
            # dense leg keeps embedding the question (``embed``): the embedder already puts "ANN" near
            # "approximate nearest neighbour", and the appended tokens only blur the question's vector.
            return Reformulation(" ".join([query, *(a["term"] for a in added)]), "", {"added": added},
                                 embed=query)
        if not self.reduce_otherwise:
            return Reformulation(None, f"no vocabulary mismatch found ({why}); nothing says a retry would help")
        # No mismatch found: the verbosity hypothesis instead, i.e. the `keywords` reduction.
        reduced = KeywordsStrategy().reformulate(query, nodes, ctx)
        reduced.details["no_expansion"] = why
        if reduced.query is None:
            reduced.reason += f"; no expansion: {why}"
        return reduced

    def expansions(self, query: str, vocab: vocabulary.Vocabulary, nodes: Sequence[NodeWithScore] = (),
                   files: Container[str] = frozenset()) -> tuple[list[dict], str]:
        """The added terms (best first) with why each was chosen, or [] and the reason none was. ``files``:
        the indexed documents' file names (lower case), which a question names rather than spells."""
        if vocab.n_chunks == 0:
            return [], "the index is empty"
        asked = set(text.content_stems(query))
        asked_words = {w.lower() for w in text.words(query)}
        # Only the question words the top candidates lack are respelt: those the first stage matched need
        # no help, and expanding them would pull the retry towards what it already found.
        top = [text.stem_set(n.node.get_content()) for n in nodes[:TOP]]
        seen = frozenset().union(*top)
        candidates: dict[str, dict] = {}
        for term, via, link in _linked(query, vocab, files, seen):
            if not link - seen or term in asked_words or _says_nothing_new(term, asked):
                continue
            if " " not in term and not vocab.informative(term):
                continue
            # A mismatch only where the corpus prefers the other spelling: it writes the candidate in more
            # chunks than the question's own words ("mean" is a common corpus word, "mean-pools" respells
            # nothing; "approximate nearest neighbour" is rare where "ANN" is common).
            if len(vocab.postings.all_of(term.split())) <= len(vocab.stem_postings.all_of(link)):
                continue
            candidates.setdefault(term, {"via": via, "link": link})
        if not candidates:
            return [], "no corpus token is linked by form to a question word the top candidates lack"
        idf = {s: vocab.idf(vocab.stem_postings.count(s)) for s in asked if s in vocab.stem_postings}
        ranked = []
        for term, c in candidates.items():
            others = {s: w for s, w in idf.items() if s not in c["link"]}
            # Nothing else asked: nothing to rank by. Other words asked but none in the corpus: no evidence.
            score = (_co_occurrence(vocab.postings.all_of(term.split()), others, vocab) if others
                     else float(asked <= c["link"]))
            # It must lead somewhere the first stage did not: a chunk that holds more of the rest of the
            # question than the best top candidate does. Otherwise it only adds a word.
            if score > max((_share(stems, others) for stems in top), default=0.0):
                ranked.append((-score, -_term_idf(term, vocab), term, c))
        if not ranked:
            return [], ("no linked corpus token shares a chunk with more of the rest of the question than the "
                        "top candidates")
        added: list[dict] = []
        used: set[str] = set()
        for neg_score, _, term, c in sorted(ranked):
            if c["link"] & used:
                continue  # one spelling per question word: more would pull the query towards that word
            used |= c["link"]
            added.append({"term": vocab.surface.get(term, term), "via": c["via"],
                          "co_occurrence": round(-neg_score, 4)})
            if len(added) == self.terms:
                break
        return added, ""


def _stems(words: list[str]) -> list[str]:
    return text._stemmer().stemWords([w.lower() for w in words])


def _linked(query: str, vocab: vocabulary.Vocabulary, files: Container[str] = frozenset(),
            seen: frozenset[str] = frozenset()):
    """(lower-case term, how it is linked, stems of the question words it stands for); none for a word that
    is an indexed document's file name. ``seen``: the top candidates' stems; an identifier they hold as the
    question writes it is not respelt by its parts (lighttpd's "mod_scgi", in the top candidates, had
    "mod_extforward" added for its part "mod")."""
    words = [w for w in text.words(query) if w.lower() not in files]
    for word in words:
        if not text.is_content(word):
            continue
        # A word of prose joined by hyphens is one word, not an identifier: its parts are no words of their own
        # ("sub" of "sub-items" had "etree.SubElement" added, and a new user's Python-Markdown question lost its
        # answer from the top 3).
        parts = [] if _PROSE_COMPOUND.fullmatch(word) else vocabulary.parts(word)
        held = len(parts) > 1 and text.stem_set(word) <= seen
        for part, stem in [] if held else zip(parts, _stems(parts)):
            if len(part) < 2 or part.isdigit() or not text.is_content(part):
                continue
            for token in sorted(vocab.by_part.get(stem, ())):
                yield token, f"identifier with the part {part!r}", frozenset({stem})
        if vocabulary.is_acronym(word):
            for phrase, _ in vocab.expansions.get(word.lower(), Counter()).most_common(1):
                yield phrase, f"the corpus's expansion of {word!r}", frozenset(_stems([word]))
    flat = [p for w in words for p in re.split(r"[_.\-]+", w) if p.isalpha()]
    for seq in (flat, [p for p in flat if text.is_content(p)]):
        for start in range(len(seq)):
            for n in range(2, vocabulary.MAX_ACRONYM + 1):
                phrase = seq[start:start + n]
                if len(phrase) < n:
                    break
                key = vocabulary.initials(phrase)
                # Two letters match many word pairs by chance: only with the corpus's own definition.
                defined = " ".join(p.lower() for p in phrase) in vocab.expansions.get(key, {})
                if not (text.is_content(phrase[0]) and text.is_content(phrase[-1])):
                    continue  # "mechanism in this" is not a name that has an acronym
                if not defined and not all(text.is_content(p) for p in phrase):
                    # Initials across stopwords match by chance ("happens to the pieces" -> HTTP): such a
                    # phrase is a name only where the corpus itself defines it next to the acronym.
                    continue
                if key in vocab.acronyms and (len(key) > 2 or defined):
                    yield key, f"acronym of {' '.join(phrase)!r}", frozenset(_stems(phrase)) - {""}


def _says_nothing_new(term: str, asked: set[str]) -> bool:
    # Compared part by part: "lru_cache" respells nothing in a question that says "lru cache".
    mine = set(_stems([p for w in text.words(term) for p in vocabulary.parts(w) if text.is_content(p)]))
    return not mine or mine <= asked or all(w.isdigit() for w in text.words(term))


def _term_idf(term: str, vocab: vocabulary.Vocabulary) -> float:
    return vocab.idf(len(vocab.postings.all_of(term.split())))


def _share(stems: frozenset[str], others: dict[str, float]) -> float:
    total = sum(others.values())
    return sum(w for s, w in others.items() if s in stems) / total if total > 0 else 0.0


def _co_occurrence(chunks: np.ndarray, others: dict[str, float], vocab: vocabulary.Vocabulary) -> float:
    """The best chunk containing the term: the idf-weighted share of the other question terms it has."""
    total = sum(others.values())
    if total <= 0 or not len(chunks):
        return 0.0
    held = np.zeros(len(chunks))
    for s, w in others.items():   # summed term by term, in the question's order, for every chunk at once
        held += w * np.isin(chunks, vocab.stem_postings.chunks(s), assume_unique=True)
    return float(held.max()) / total
