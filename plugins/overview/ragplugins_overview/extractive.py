"""The LLM-free overview: title, headings, lead sentences and the document's distinctive terms."""

from __future__ import annotations

import re
from collections.abc import Iterable

from llama_index.core.bridge.pydantic import Field
from llama_index.core.schema import BaseComponent

from ragplugins.api import UNDERLINE, in_code_fences
from ragplugins_overview.documents import DocumentText, TermStatistics, terms

_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
# Link targets and URLs are addresses, not content; emphasis markers are noise in prose.
_LINK_TARGET = re.compile(r"\]\([^)]*\)|<?https?://\S+")
# A marker opens or closes emphasis only at a word's edge: the underscores of TCL_MEM_DEBUG, file_path and
# Tcl_DStringInit are part of the name.
_EMPHASIS = re.compile(r"`{1,3}|(?<!\w)[*_]{1,3}(?=\S)|(?<=\S)[*_]{1,3}(?!\w)")


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + "..."


def _is_plain_heading(line: str) -> bool:
    """A PDF-style heading: a short line set in capitals ('ARTICLE I - DEFINITIONS', '1. FINANCIAL REVIEW')."""
    letters = [c for c in line if c.isalpha()]
    if len(letters) < 3 or len(line) > 80 or line.rstrip().endswith((".", ",", ";", ":")):
        return False
    return sum(c.isupper() for c in letters) >= 0.8 * len(letters)


def document_terms(text: str) -> frozenset[str]:
    """The stems a document contributes to the corpus statistics (its document frequencies)."""
    return frozenset(stem for stem, _ in terms(_LINK_TARGET.sub(" ", text)))


def _structure(text: str) -> tuple[list[str], list[str]]:
    """(headings, body lines) of ``text``; code blocks, tables and rules are neither."""
    headings, body = [], []
    lines = _LINK_TARGET.sub("]", text).splitlines()
    for i, (raw, in_code) in enumerate(zip(lines, in_code_fences(lines))):
        line = raw.strip()
        if in_code or not line or line.startswith(("|", "<", "---", "===", "***", "![")) or UNDERLINE.fullmatch(line):
            continue
        md = _MD_HEADING.match(raw)
        if md:
            headings.append(_EMPHASIS.sub("", md.group(1)).strip())
        elif _underlined(lines, i):
            headings.append(_EMPHASIS.sub("", line).strip())
        elif _is_plain_heading(line):
            headings.append(line)
        else:
            body.append(_EMPHASIS.sub("", line.lstrip("-*> ")).strip())
    return headings, body


def _underlined(lines: list[str], i: int) -> bool:
    """Whether line ``i`` is a title a rule underlines (reStructuredText's and setext's titles, "git-add(1)" over
    "==========" in git's manual pages, "Secure HTTP" between two in lighttpd's, were read as body text and left
    the overview titled "NAME" or with the rule itself): after a blank line, at least as long as the title (two
    characters short at most); or between two equal rules as long as it (reStructuredText's overline). A code
    line between an AsciiDoc listing's "----" delimiters is neither: it is not after a blank line, and the
    delimiters are shorter than it, or it has no words ("}")."""
    line = lines[i].strip()
    below = lines[i + 1].strip() if i + 1 < len(lines) else ""
    above = lines[i - 1].strip() if i > 0 else ""
    if not UNDERLINE.fullmatch(below) or sum(c.isalpha() for c in line) < 2:
        return False
    if above == below:
        return len(below) >= len(line)
    return not above and len(below) >= len(line) - 2


class ExtractiveOverviewWriter(BaseComponent):
    """Writes a deterministic overview of about 120 tokens from the document itself.

    The corpus statistics decide which terms set the document apart, so two documents
    of the same kind still get different overviews.
    """

    key_terms: int = Field(10, ge=0, description="Distinctive terms to list.")
    max_headings: int = Field(8, ge=0, description="Headings to list, in document order.")
    lead_sentences: int = Field(2, ge=0, description="Sentences taken from the start of the body.")
    # MiniLM reads 256 word pieces; ~700 characters stays well inside that.
    max_chars: int = Field(700, ge=100, description="Upper bound on the overview length.")

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins_overview.ExtractiveOverviewWriter"

    def statistics(self, texts: Iterable[str]) -> TermStatistics:
        """The corpus statistics :meth:`write` needs, from the text of every document."""
        return TermStatistics.of(_LINK_TARGET.sub(" ", t) for t in texts)

    def title(self, doc: DocumentText, headings: list[str] | None = None) -> str:
        """The document's title: its ``title`` metadata, first heading, short first line or file name."""
        if headings is None:
            headings = _structure(doc.text)[0]
        explicit = doc.metadata.get("title")
        if isinstance(explicit, str) and explicit.strip():
            return _clip(explicit, 120)
        if headings:
            return _clip(headings[0], 120)
        first = next((ln.strip() for ln in doc.text.splitlines() if ln.strip()), "")
        return _clip(first, 120) if 0 < len(first) <= 120 else doc.file_label or doc.doc_id

    def write(self, doc: DocumentText, corpus: TermStatistics) -> str:
        headings, body = _structure(doc.text)
        title = self.title(doc, headings)
        parts = [title.rstrip(".") + "."]
        label = doc.file_label
        if label and label.lower() not in title.lower():
            parts.append(f"File: {label}.")
        seen = {title.lower()}
        shown: list[str] = []
        for heading in headings:
            if heading.lower() not in seen and len(shown) < self.max_headings:
                seen.add(heading.lower())
                shown.append(_clip(heading, 60))
        if shown:
            parts.append(_clip("Sections: " + "; ".join(shown), 260) + ".")
        if self.lead_sentences:
            sentences = _SENTENCE_END.split(" ".join(body))
            lead = " ".join(s for s in sentences[: self.lead_sentences] if s)
            if lead:
                parts.append(_clip(lead, 300))
        if self.key_terms:
            already = {stem for stem, _ in terms(" ".join(parts))}
            words = corpus.distinctive(_LINK_TARGET.sub(" ", doc.text), self.key_terms,
                                       exclude=dict.fromkeys(already))
            if words:
                parts.append("Key terms: " + ", ".join(words) + ".")
        return _clip(" ".join(parts), self.max_chars)
