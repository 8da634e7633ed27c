"""Word-level helpers shared by the lexical signal and the deterministic strategies.

Stopwords are LlamaIndex's bundled NLTK English list (it ships with
llama-index-core, no download); stems come from PyStemmer's English Snowball
stemmer, the one the core's BM25 leg uses, so "terms" mean the same here and
in the sparse leg.
"""

from __future__ import annotations

import functools
import re

# Identifiers keep their inner dots, dashes and underscores ("Qwen3-Embedding-4B", "top_k", "v1.2").
_WORD = re.compile(r"[^\W_](?:[\w.\-]*[^\W_])?|_\w+", re.UNICODE)


@functools.cache
def stopwords() -> frozenset[str]:
    from llama_index.core.utils import globals_helper

    return frozenset(globals_helper.stopwords)


@functools.cache
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


def words(text: str) -> list[str]:
    """Surface words in text order (case kept)."""
    return _WORD.findall(text)


def is_content(word: str) -> bool:
    return word.lower() not in stopwords()


def stems(text: str) -> list[str]:
    """Stems of every word, in text order."""
    return _stemmer().stemWords([w.lower() for w in words(text)])


# Candidates recur across queries; their stem sets are the bulk of the signal's cost.
@functools.lru_cache(maxsize=4096)
def stem_set(text: str) -> frozenset[str]:
    unique = list({w.lower() for w in words(text)})
    return frozenset(_stemmer().stemWords(unique))


def content_stems(text: str) -> list[str]:
    """Stems of the non-stopword words, duplicates removed, first occurrence order."""
    kept = [w.lower() for w in words(text) if is_content(w)]
    return list(dict.fromkeys(_stemmer().stemWords(kept)))
