"""What every printed page repeats, and the pages of a text printed as pages.

A printed manual's pages carry furniture that reads as text: a running header ("Chapter 1: Introduction and
preliminaries 7"), a page number, a footer ("Acme Handbook - Page 3 of 40"). Joined into one text, each lands in the
middle of the sentence that runs over the page break, and a header naming "Chapter 9" reads as a reference to it. So
each page's first and last lines are dropped while they are furniture (``page_furniture``): the page's own label
("7", "iv"), a line of words ending with it, or a line that stands at the same end of two of the four pages around
it (two-sided books alternate their headers), but for one number at most.

PDFs come as pages. A plain text comes as pages when it was formatted for a printer: an IETF RFC ends each page with
a form feed ("Fielding, et al.  Standards Track  [Page 12]", a form feed, "RFC 2616  HTTP/1.1  June 1999"), and
nroff's output, a manual kept as ``.txt``, has pages of a fixed number of lines with the header at the same place on
each (``text_pages``). ``without_page_furniture`` reads such a text without its furniture and each page's margins,
so a sentence that ran over a page break is one sentence again.
"""

from __future__ import annotations

import re
from collections import Counter

PAGE_NUMBER = re.compile(r"\W{0,3}(?:page[ \t]*)?[0-9]{1,4}(?:[ \t]*(?:of|/)[ \t]*[0-9]{1,4})?\W{0,3}", re.I)
NEIGHBOURS = (1, 2)   # a two-sided book alternates its headers: the page two away carries the same one
FURNITURE_LINES = 2   # at most this many lines at each end of a page (a title line and a page number)
MIN_PAGES = 3         # a running header needs pages to run over
# A front matter's page label ("Debian Reference xiv"): a number too.
ROMAN_LABEL = re.compile(r"[ivxlcdm]{1,8}")


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


# A word a printed line's end cut in two ("For ex-\nample, the"), the rest of its token and the space after it; in a
# text printed by groff the hyphen is Unicode's (U+2010) and the next line indented ("ca\u2010\n       pacity").
LINE_END_HYPHEN = re.compile(r"([^\W\d_]+)[-\u2010]\n([^\W\d_]+)(\S*)[ \t]?")
INDENTED_LINE_END_HYPHEN = re.compile(r"([^\W\d_]+)[-\u2010]\n[ \t]*([^\W\d_]+)(\S*)[ \t]?")
_HYPHENATED_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")


def hyphen_vocabulary(text: str) -> Counter[str]:
    """How often ``text`` writes each word and hyphenated word, casefolded: what :func:`join_line_end_hyphens`
    decides by, counted once for a document read in parts."""
    return Counter(w.casefold() for w in _HYPHENATED_WORD.findall(text))


def join_line_end_hyphens(text: str, cut: re.Pattern[str] = LINE_END_HYPHEN,
                          vocabulary: Counter[str] | None = None, groff: bool = False) -> str:
    """``text`` with each word a line's end hyphenated written whole ("example,\nthe"), where the document (``text``,
    or the one ``vocabulary`` counts when ``text`` is a part or its markup) writes it whole elsewhere and never with
    that hyphen: "top-\nlevel" stays when "top-level" is the document's word. Searching for "example" found no "ex-
    ample" (1,650 such words in 33 manuals' PDFs). ``groff``: the text is groff's, which hyphenates any long word at
    a line's end, so a word is joined unless the document writes it with the hyphen and never whole ("dis-\ncarded"
    on a page that says "discarded" nowhere else)."""
    words = hyphen_vocabulary(text) if vocabulary is None else vocabulary

    def whole(m: re.Match) -> str:
        first, second = m.group(1), m.group(2)
        if (groff or words[(first + second).casefold()]) and not words[f"{first}-{second}".casefold()]:
            return f"{first}{second}{m.group(3)}\n"
        return m.group(0)

    return cut.sub(whole, text)


# A printed page holds 50 to 70 lines (an RFC 58, nroff's 66); a line recurring at such a period is a page's.
PAGE_LINES = (40, 100)
# What most pages show: the recurring line (a chapter's first page may lack it), a page's length between form feeds,
# the page's number at an end.
MOST_PAGES = 0.5
# A page's bottom margin and the next page's top one: the lines blank on this share of pages.
MARGIN_SHARE = 0.9
SENTENCE_END = (".", "!", "?", ":", ";")
# A running header or footer spreads its parts over the line ("man-db      v2.11.2      2023-01-08", "Samar,
# Schemers      Page 1"); a line of prose or a changelog's "[ Holger Wansing ]" that happens to recur 59 lines
# apart three times does not.
SPREAD = re.compile(r"\S {3,}\S")


def without_page_furniture(text: str) -> str:
    """``text`` without its pages' furniture and margins, and with the words its lines' ends hyphenated whole, when it
    was formatted as printed pages, else as it is: a text whose pages have no furniture reads as before."""
    pages = text_pages(text)
    if pages is None:
        return text
    kept = page_furniture(pages, page_labels(pages))
    if kept == pages:
        return text
    return join_line_end_hyphens(_joined(kept), INDENTED_LINE_END_HYPHEN)


def text_pages(text: str) -> list[str] | None:
    """The pages of a plain text formatted for a printer: split at its form feeds where most parts are a page long,
    or every so many lines where a line with words in it recurs at that period on most pages; None for any other
    text."""
    if text.count("\f") >= MIN_PAGES - 1:
        # A form feed also parts a GNU NEWS file's releases or a source file's sections, of any length.
        pages = text.split("\f")
        sized = sum(PAGE_LINES[0] <= page.count("\n") + 1 <= PAGE_LINES[1] for page in pages)
        return pages if sized >= MOST_PAGES * len(pages) else None
    lines = text.split("\n")
    found = _page_length(lines)
    if found is None:
        return None
    length, first = found
    start = (first + _margin(lines, length, first)) % length
    cuts = [0, *range(start or length, len(lines), length), len(lines)]
    return ["\n".join(lines[a:b]) for a, b in zip(cuts, cuts[1:]) if a < b]


def _page_length(lines: list[str]) -> tuple[int, int] | None:
    """(the page's length in lines, a line of the recurring furniture) of a text printed as pages of equal length."""
    where: dict[str, list[int]] = {}
    for i, line in enumerate(lines):
        if not SPREAD.search(line.strip()):   # the quick test first: most lines are prose
            continue
        shape = _shape(line)
        if sum(c.isalpha() for c in shape) >= 3:
            where.setdefault(shape, []).append(i)
    best: tuple[int, int, int] | None = None
    for at in where.values():
        if len(at) < MIN_PAGES:
            continue
        gaps = [b - a for a, b in zip(at, at[1:])]
        length = min(gaps)
        if not PAGE_LINES[0] <= length <= PAGE_LINES[1] or any(gap % length for gap in gaps):
            continue
        if len(at) < MOST_PAGES * len(lines) / length:
            continue
        if best is None or len(at) > best[0]:
            best = (len(at), length, at[0])
    return None if best is None else best[1:]


def _margin(lines: list[str], length: int, first: int) -> int:
    """Where a page ends, counted from the recurring line: the middle of the longest run of lines blank on nearly
    every page (a page's bottom margin and the next one's top), or the recurring line itself."""
    blank = []
    for offset in range(length):
        places = range((first + offset) % length, len(lines), length)
        blank.append(sum(not lines[i].strip() for i in places) >= MARGIN_SHARE * len(places))
    best, best_at, run = 0, 0, 0
    for offset in range(2 * length):   # twice round: a margin may run over the recurring line's place
        run = run + 1 if blank[offset % length] else 0
        if run > best and run <= length:
            best, best_at = run, offset - run + 1
    if best == 0:
        return 0
    return (best_at + best // 2) % length


def page_labels(pages: list[str]) -> list[str]:
    """Each page's own number where most pages carry it at an end (counted from 1, or from a few pages before or
    after the first: a cover, a contents list), else ''."""
    numbers = []
    for page in pages:
        lines = page.split("\n")
        ends = _end_lines(lines, 0) + _end_lines(lines, -1)
        numbers.append({n for line in ends for n in re.findall(r"[0-9]+", line)})
    best = max(range(-3, 4), key=lambda offset: sum(str(i + 1 + offset) in found for i, found in enumerate(numbers)))
    if sum(str(i + 1 + best) in found for i, found in enumerate(numbers)) < MOST_PAGES * len(pages):
        return [""] * len(pages)
    return [str(i + 1 + best) for i in range(len(pages))]


def _joined(pages: list[str]) -> str:
    """The pages as one text without their margins: a sentence running over a break goes on in the next line."""
    out: list[str] = []
    for page in pages:
        lines = page.split("\n")
        while lines and not lines[0].strip():
            lines.pop(0)
        while lines and not lines[-1].strip():
            lines.pop()
        if not lines:
            continue
        if out and out[-1].rstrip().endswith(SENTENCE_END):
            out.append("")
        out.extend(lines)
    return "\n".join(out)
