"""The corpus-wide term statistics of the extractive overview, kept up to date by the batch.

Which terms set a document apart depends on every document of the corpus (their document
frequencies). Reading every chunk back for them on each write makes adding 40 documents to 4,000
cost half a full build, so the set of stems of each document is kept in the plugin state
``overview/terms`` with the document's content hash: a write scans only the documents it
(re)wrote, drops the removed ones, and sums the rest. The result is the statistics a scan of the
whole corpus gives (same documents, same stems); when the state is missing, unreadable, of another
index or of another version, every document is scanned again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ragplugins import api
from ragplugins.api import StateError
from ragplugins_overview.documents import DocumentText, TermStatistics
from ragplugins_overview.extractive import document_terms

PLUGIN = "overview"
NAME = "terms"
# Raised when what counts as a document's stems changes (tokens, stemmer, stop words, link removal).
TERMS_VERSION = 1


@dataclass
class CorpusTerms:
    """doc id -> (content hash, stems of the document), for the documents of one index."""

    stems: dict[str, tuple[str, frozenset[str]]] = field(default_factory=dict)

    def statistics(self) -> TermStatistics:
        df: Counter = Counter()
        for _, doc_stems in self.stems.values():
            df.update(doc_stems)
        return TermStatistics(len(self.stems), df)

    def stale(self, indexed: Mapping[str, Any]) -> set[str]:
        """Indexed documents whose stems are not known for their current content (no hash: never known)."""
        return {d for d, info in indexed.items()
                if not info.doc_hash or d not in self.stems or self.stems[d][0] != info.doc_hash}

    def update(self, indexed: Mapping[str, Any], documents: Iterable[DocumentText]) -> None:
        """Forget the stems of documents no longer indexed or changed since, then take those of ``documents``
        (their text as stored now)."""
        stale = self.stale(indexed)
        self.stems = {d: entry for d, entry in self.stems.items() if d in indexed and d not in stale}
        for doc in documents:
            if doc.doc_id in indexed:
                self.stems[doc.doc_id] = (str(indexed[doc.doc_id].doc_hash or ""), document_terms(doc.text))


class TermsLocation:
    """The stems of an index's documents, kept as the plugin state ``overview/terms``."""

    def __init__(self, ctx: api.RagContext):
        self.state = ctx.state(PLUGIN)
        self.index_id = ctx.index_id

    def read(self) -> CorpusTerms | None:
        """The stored stems, or None when there are none usable (then every document is scanned again)."""
        try:
            stored = self.state.read(NAME)
        except StateError:
            return None
        if stored is None or stored.index_id != self.index_id or stored.meta.get("version") != TERMS_VERSION:
            return None
        try:
            return CorpusTerms({str(r["doc_id"]): (str(r["hash"]), frozenset(str(r["stems"]).split()))
                                for r in stored.records})
        except (KeyError, TypeError, AttributeError):
            return None

    def write(self, corpus: CorpusTerms) -> None:
        # Stems hold no whitespace (they are word tokens), so one space-joined string per document: compact JSON.
        records = [{"doc_id": d, "hash": h, "stems": " ".join(sorted(s))} for d, (h, s) in sorted(corpus.stems.items())]
        self.state.write(NAME, records, {"version": TERMS_VERSION, "documents": len(records)})

