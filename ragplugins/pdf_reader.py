"""PDF files as text: LlamaIndex's PDFReader (pypdf), page by page, without what a printed page repeats.

A printed manual's pages carry furniture that pypdf reads as text: a running header ("Chapter 1: Introduction
and preliminaries 7"), a page number, a footer ("Acme Handbook - Page 3 of 40"). Joined into one text, each lands
in the middle of the sentence that runs over the page break, and a header naming "Chapter 9" reads as a reference
to it. So each page's first and last lines are dropped while they are furniture (``page_furniture``): the page's
own label (pypdf's ``page_labels``: "7", "iv"), a line of words ending with it, or a line that stands at the same
end of two of the four pages around it (two-sided books alternate their headers), but for one number at most. Pages are
joined as PDFReader joins them, so a PDF without furniture, dot leaders, ligatures, control characters or words
hyphenated at a line's end reads exactly as before. A contents list or an index stays: its lines name the sections
a question may use (dropping them lost answers on a new user's R manuals, bench/sections/core.md), with each dot
leader cut to three dots. A PDF that pypdf reads with its words run together (``GLUED_SHARE``,
``RUN_TOGETHER_SHARE``) or broken by spaces (``SPLIT_SHARE``) is read by pdfium.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections import Counter
from pathlib import Path

PAGE_NUMBER = re.compile(r"\W{0,3}(?:page[ \t]*)?[0-9]{1,4}(?:[ \t]*(?:of|/)[ \t]*[0-9]{1,4})?\W{0,3}", re.I)
NEIGHBOURS = (1, 2)   # a two-sided book alternates its headers: the page two away carries the same one
FURNITURE_LINES = 2   # at most this many lines at each end of a page (a title line and a page number)
MIN_PAGES = 3         # a running header needs pages to run over
# A front matter's page label ("Debian Reference xiv"): a number too.
ROMAN_LABEL = re.compile(r"[ivxlcdm]{1,8}")


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


# A word a printed line's end cut in two ("For ex-\nample, the"), the rest of its token and the space after it.
LINE_END_HYPHEN = re.compile(r"([^\W\d_]+)-\n([^\W\d_]+)(\S*)[ \t]?")
_HYPHENATED_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")


def join_line_end_hyphens(text: str) -> str:
    """``text`` with each word a line's end hyphenated written whole ("example,\nthe"), where the document writes
    it whole elsewhere and never with that hyphen: "top-\nlevel" stays when "top-level" is the document's word.
    Searching for "example" found no "ex- ample" (1,650 such words in 33 manuals' PDFs)."""
    words = Counter(w.casefold() for w in _HYPHENATED_WORD.findall(text))

    def whole(m: re.Match) -> str:
        first, second = m.group(1), m.group(2)
        if words[(first + second).casefold()] and not words[f"{first}-{second}".casefold()]:
            return f"{first}{second}{m.group(3)}\n"
        return m.group(0)

    return LINE_END_HYPHEN.sub(whole, text)


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


def _shape(line: str) -> str:
    """A line with its numbers masked: "Chapter 1: Introduction 7" and "Chapter 1: Introduction 8" are one shape."""
    return re.sub(r"[0-9]+", "#", " ".join(line.split())).casefold()


def page_furniture(pages: list[str], labels: list[str]) -> list[str]:
    """Each page's text without its furniture lines at either end."""
    lines = [text.split("\n") for text in pages]
    labels = [(labels[i] if i < len(labels) else "").strip().casefold() for i in range(len(pages))]
    ends = {(i, end): [_look(line, labels[i]) for line in _end_lines(page, end)]
            for i, page in enumerate(lines) for end in (0, -1)}
    out = []
    for i, page in enumerate(lines):
        label = labels[i]
        nearby = [j for d in NEIGHBOURS for j in (i - d, i + d) if 0 <= j < len(pages)] \
            if len(pages) >= MIN_PAGES else []
        kept = list(page)
        for end in (0, -1):
            near = [(i - j, ends[(j, end)]) for j in nearby]   # the same end of the pages nearby, how far
            for _ in range(FURNITURE_LINES):
                at = next((k for k in (range(len(kept)) if end == 0 else range(len(kept) - 1, -1, -1))
                           if kept[k].strip()), None)
                if at is None or not _is_furniture(kept[at], label, near):
                    break
                del kept[at]
        out.append("\n".join(kept))
    return out


Look = tuple[str, tuple[str, ...], str]   # a line's shape, its numbers, its page's label


def _look(line: str, label: str) -> Look:
    return _shape(line), tuple(re.findall(r"[0-9]+", line)), label


def _repeated(line: Look, lines: list[Look], apart: int) -> bool:
    """Whether one of ``lines`` is ``line`` but for one number at most, the pages' own numbers aside: a running
    header or footer changes its page number from page to page ("Chapter 1: Introduction 7", "... 9") and may
    change a year ("Copyright 1995 ... -7", "Copyright 1996 ... -9"); a compilation's issue titles ("Issue 5, June
    1996" and "Issue 6, June 1997" two pages on) and a manual's numbered headings ("22.6 Version 4.5.0") are no
    furniture. A printed page number that is not the page's label advances as the pages do (``apart``: how many
    pages after the other this one is): "Function and Concept Index 100" two pages before "... 102". A line whose one
    number is otherwise all it holds besides its words differs by it: "Chapter 14" two pages after "Chapter 13" is a
    heading (the Debian FAQ's short chapters)."""
    shape, numbers, label = line
    allowed = 1 if len(numbers) > 1 else 0

    def differ(a: str, b: str, theirs: str) -> bool:
        return a != b and a != label and b != theirs and int(a) - int(b) != apart

    return any(other == shape and sum(differ(a, b, theirs) for a, b in zip(numbers, others)) <= allowed
               for other, others, theirs in lines)


def _end_lines(page: list[str], end: int) -> list[str]:
    body = [line for line in page if line.strip()]
    return body[:FURNITURE_LINES] if end == 0 else body[::-1][:FURNITURE_LINES]


def _is_furniture(line: str, label: str, near: list[tuple[int, list[Look]]]) -> bool:
    """The page's own number ("7", "Page 7 of 40", "iv"), a line of words that ends with it, or a line with words
    in it that the same end of two pages nearby repeats but for one number (one page, when it starts with the
    page's number).
    Not a code listing's numbered line ("123 }%" on page 3), nor a line of code that one page nearby happens to
    start with too."""
    look = _look(line, label)
    shape, numbers, _ = look
    if not shape:
        return False
    if shape == label or (PAGE_NUMBER.fullmatch(line.strip()) and numbers[:1] == (label,)):
        return True
    if sum(c.isalpha() for c in shape) < 3:
        return False
    words = line.casefold().split()
    numbered = any(c.isdigit() for c in label) or bool(ROMAN_LABEL.fullmatch(label))
    if numbered and words[-1] == label:
        # A running header ending with the page's number, "Chapter 9: Grouping, loops 44"; not at its start:
        # "1 Obtaining R" on page 1 is the chapter's heading, "2 Strictly, ..." a footnote.
        return True
    repeats = sum(_repeated(look, lines, apart) for apart, lines in near)
    # The first even page of a two-sided book has one page nearby with its header ("2 Staff Handbook", "4 Staff
    # Handbook"): once is enough for a line that carries the page's number.
    return repeats >= 2 or (repeats == 1 and numbered and words[0] == label)
