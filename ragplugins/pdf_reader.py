"""PDF files as text: LlamaIndex's PDFReader (pypdf), page by page, without what a printed page repeats.

Each page's furniture (a running header, a page number, a footer: ``ragplugins.printed_pages``) is dropped, its
labels pypdf's ``page_labels`` ("7", "iv"). Pages are joined as PDFReader joins them, so a PDF without furniture,
dot leaders, ligatures, control characters or words hyphenated at a line's end reads exactly as before. A contents
list or an index stays: its lines name the sections a question may use (dropping them lost answers on a new user's
R manuals, bench/sections/core.md), with each dot leader cut to three dots. A PDF that pypdf reads with its words
run together (``GLUED_SHARE``, ``RUN_TOGETHER_SHARE``) or broken by spaces (``SPLIT_SHARE``) is read by pdfium.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections import Counter
from pathlib import Path

from ragplugins.printed_pages import join_line_end_hyphens, page_furniture


def pdf_reader_class():
    # llama-index-readers-file 0.7 calls logging.basicConfig() at import (in its slides module),
    # which makes every library's INFO lines appear in the host app's output; undo just that.
    root = logging.getLogger()
    before, level = list(root.handlers), root.level
    from llama_index.readers.file import PDFReader

    for handler in root.handlers[len(before):]:
        root.removeHandler(handler)
    root.setLevel(level)
    return PDFReader


# pypdf reads some PDFs without the spaces between their words ("Thesefilesanddirectoriescanbespreadout...":
# DBLaTeX's, which space words by moving the pen, not with a space glyph): a tenth of the words of Debian's
# Reference and Policy PDFs were 20 letters or longer, against at most 1 % in 33 other PDFs read well. Such a
# PDF is read by pdfium, which places the spaces from the glyphs' positions, when its words are the fewer glued.
GLUED_WORD = re.compile(r"[^\W\d_]{20,}")
WORD = re.compile(r"[^\W\d_]+")
GLUED_SHARE = 0.03
# pdfium's mark for a word hyphenated at a line's end ("distri\ufffebution"), the line break already gone.
PDFIUM_LINE_HYPHEN = "\ufffe"
# A contents entry's dot leader ("9.10 List of ps command styles . . . . . . . 144": a quarter of a handbook's
# chunks were contents pages, most of their tokens dots): three dots still say it is a contents entry.
DOT_LEADER = re.compile(r"(?:\.[ \t]?){4,}(?=[ \t]*\S)")


# pypdf also reads some PDFs with spaces inside their words ("interpreter that e xecutes commands", "when the
# shell is in voked": groff's, which kerns letters apart by less than its font's space): 2 % of the words of bash's
# manual page as PDF, against at most 0.3 % in twenty other PDFs. pdfium, placing spaces from the glyphs'
# positions, reads it whole.
SPLIT_SHARE = 0.01
_NEXT_WORD = re.compile(r"(?<![^\W\d_])([^\W\d_]{1,12}) (?=([^\W\d_]{1,12})(?![^\W\d_]))")
# A piece is part of a split word when at least this share of its occurrences join the piece before into a word.
SPLIT_PIECE = 0.8


def read_pdf(path: Path) -> str:
    pages = pdf_reader_class()(return_full_document=False).load_data(path)
    texts = [d.text for d in pages]
    # pdfium reads a PDF in a tenth of pypdf's time or less (hyperref's manual: 4 s against 53 s), so it is asked
    # every time, to compare.
    spaced = _pdfium_pages(path)
    if spaced is not None and len(spaced) == len(texts) and pdfium_reads_better(texts, spaced):
        texts = spaced
    texts = page_furniture(texts, [str(d.metadata.get("page_label", "")) for d in pages])
    return join_line_end_hyphens(printable("\n".join(DOT_LEADER.sub(". . . ", text) for text in texts)))


# A typeset ligature is one character ("ﬁle": neither BM25 nor MiniLM's vocabulary knows it; 270 in bzip2's
# manual), and a glyph its font maps to no character reads as a control character (gnuplot's and Asymptote's
# LaTeX bullets: "\x88 All evaluation").
LIGATURES = re.compile("[\ufb00-\ufb06]")
CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with its ligatures spelt out ("ﬁ" -> "fi") and each control character a space."""
    text = LIGATURES.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)
    return CONTROLS.sub(" ", text)


def glued_share(texts: list[str]) -> float:
    """The share of the words of ``texts`` that are 20 letters or longer: words run together."""
    words = sum(len(WORD.findall(text)) for text in texts)
    return sum(len(GLUED_WORD.findall(text)) for text in texts) / words if words else 0.0


def split_share(texts: list[str]) -> float:
    """The share of the words of ``texts`` that are a word broken by a space: a piece that, nearly wherever it
    stands (``SPLIT_PIECE``), follows one it makes a word of the text with ("e xecutes" where "executes" is written
    whole too). "in to" is no such pair: "to" stands alone far more often than after "in"."""
    text = "\n".join(texts)
    counts = Counter(word.casefold() for word in WORD.findall(text))
    joining: Counter[str] = Counter()
    for m in _NEXT_WORD.finditer(text):
        first, second = m.group(1).casefold(), m.group(2).casefold()
        if counts[first + second]:
            joining[second] += 1
    split = sum(n for piece, n in joining.items() if n >= SPLIT_PIECE * counts[piece])
    words = sum(counts.values())
    return split / words if words else 0.0


# How pypdf misreads a PDF's spacing, and the share of words from which a PDF is read by pdfium instead.
SPACING_DAMAGE = ((glued_share, GLUED_SHARE), (split_share, SPLIT_SHARE))

# LaTeX's PDFs leave no space glyph where a word in another font follows: pypdf reads "is inltpara-doc.pdf" and
# "thegraphics package" (0.6-1.7 % of the words of LaTeX News 19-36, of the LaTeX team's hook manuals and of 5 of 45
# other LaTeX package manuals on this machine), too few and too short for GLUED_SHARE; pdfium places the space.
# The words pdfium reads as two are counted (``_run_together``); a PDF is read by pdfium when that share is
# RUN_TOGETHER_SHARE or more and pdfium runs words of pypdf's together half as often or less. Read well, a PDF scores
# 0.4 % or less (the glyph names of a font's table, "theae", and "athttps" in a reference list).
RUN_TOGETHER_SHARE = 0.005


def _vocabulary(texts: list[str]) -> Counter[str]:
    return Counter(w.casefold() for w in WORD.findall(join_line_end_hyphens("\n".join(texts))))


def _run_together(words: Counter[str], theirs: Counter[str]) -> float:
    """The share of a reading's ``words`` that another reading of the same pages (``theirs``) never writes but reads
    as two of its words ("inltpara" where the other reading has "in" and "ltpara")."""
    run = sum(n for w, n in words.items() if len(w) >= 4 and w not in theirs
              and any(w[:i] in theirs and w[i:] in theirs for i in range(2, len(w) - 1)))
    total = sum(words.values())
    return run / total if total else 0.0


def pdfium_reads_better(pypdf: list[str], pdfium: list[str]) -> bool:
    """Whether pdfium's reading of a PDF's pages is the one to index: where pypdf's spacing is damaged
    (``SPACING_DAMAGE``), pdfium has half the damage pypdf has, or less, and none of the other kind; else where
    pypdf runs words together that pdfium reads apart (``RUN_TOGETHER_SHARE``)."""
    damage = {measure: measure(pypdf) for measure, _ in SPACING_DAMAGE}
    if any(damage[measure] >= limit for measure, limit in SPACING_DAMAGE):
        return all(measure(pdfium) < (damage[measure] / 2 if damage[measure] >= limit else limit)
                   for measure, limit in SPACING_DAMAGE)
    ours, theirs = _vocabulary(pypdf), _vocabulary(pdfium)
    run_together = _run_together(ours, theirs)
    return run_together >= RUN_TOGETHER_SHARE and _run_together(theirs, ours) <= run_together / 2 \
        and all(measure(pdfium) < limit for measure, limit in SPACING_DAMAGE)


def _pdfium_pages(path: Path) -> list[str] | None:
    """Each page's text as pdfium reads it (None when pdfium cannot read the file: pypdf's text stands)."""
    import pypdfium2

    try:
        document = pypdfium2.PdfDocument(path)
    except pypdfium2.PdfiumError:
        return None
    try:
        return [document[i].get_textpage().get_text_range().replace("\r\n", "\n").replace(PDFIUM_LINE_HYPHEN, "")
                for i in range(len(document))]
    except pypdfium2.PdfiumError:
        return None
    finally:
        document.close()
