"""PDF pages without what every printed page repeats: running headers and footers, page numbers."""

from __future__ import annotations

import re
from pathlib import Path

from pypdf import PdfReader

from ragplugins.pdf_reader import (
    DOT_LEADER,
    pdf_reader_class,
    pdfium_reads_better,
    printable,
    split_share,
)
from ragplugins.printed_pages import join_line_end_hyphens, page_furniture
from ragplugins.readers import read_documents


def make_pdf(pages: list[list[str]], labels_from: int | None = None) -> bytes:
    """A PDF whose pages show these lines (Helvetica, top to bottom); with ``labels_from``, pages are
    labelled from that number, as a book numbers its body after roman front matter."""
    objects: list[bytes] = []
    kids = []
    for lines in pages:
        ops = ["BT", "/F1 11 Tf", "14 TL", "72 760 Td"]
        for line in lines:
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            ops += [f"({escaped}) Tj", "T*"]
        ops.append("ET")
        stream = "\n".join(ops).encode("latin-1")
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
        content = len(objects) + 2          # objects 1, 2 are the catalog and the page tree
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
                       b"/Resources << /Font << /F1 %%FONT%% >> >> >>" % content)
        kids.append(len(objects) + 2)
    font = len(objects) + 3
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    labels = b" /PageLabels << /Nums [0 << /S /D /St %d >>] >>" % labels_from if labels_from else b""
    head = [b"<< /Type /Catalog /Pages 2 0 R%s >>" % labels,
            b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(b"%d 0 R" % k for k in kids), len(kids))]
    return pdf_file([o.replace(b"%FONT%", b"%d 0 R" % font) for o in head + objects])


def pdf_file(objects: list[bytes]) -> bytes:
    """A PDF file of these objects, numbered from 1 (the first the catalog), with its cross-reference table."""
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, obj in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, obj)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def make_spaced_by_kerning_pdf(lines: list[str]) -> bytes:
    """A one-page PDF whose words are set as DBLaTeX sets them: each word apart from the next by a TJ kern, no space
    glyph between them, and the font's space wider than the kern (pypdf then reads the words run together; pdfium
    places the spaces from the glyphs)."""
    return make_kerned_pdf([line.replace(" ", "|") for line in lines], kern=250, space_width=1200)


def make_kerned_pdf(lines: list[str], kern: int, space_width: int) -> bytes:
    """A one-page PDF of a Type0 font of 2-byte codes (Identity-H) with a ToUnicode map: each "|" of a line a TJ kern
    of ``kern`` thousandths of an em, each space a space glyph ``space_width`` wide."""
    def shown(piece: str) -> str:
        return "<" + "".join(f"{ord(c):04x}" for c in piece) + ">"
    ops = ["BT", "/F1 10 Tf", "12 TL", "72 760 Td"]
    ops += [op for line in lines for op in ("[" + f" -{kern} ".join(shown(p) for p in line.split("|")) + "] TJ", "T*")]
    content = "\n".join([*ops, "ET"]).encode()
    cmap = (b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CIDSystemInfo << /Registry (Adobe) "
            b"/Ordering (UCS) /Supplement 0 >> def /CMapName /Adobe-Identity-UCS def /CMapType 2 def "
            b"1 begincodespacerange <0000> <FFFF> endcodespacerange 1 beginbfrange <0020> <007E> <0020> endbfrange "
            b"endcmap CMapName currentdict /CMap defineresource pop end end")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
        b"<< /Type /Font /Subtype /Type0 /BaseFont /Serif /Encoding /Identity-H /DescendantFonts [6 0 R] "
        b"/ToUnicode 7 0 R >>",
        b"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /Serif /CIDSystemInfo << /Registry (Adobe) "
        b"/Ordering (Identity) /Supplement 0 >> /FontDescriptor 8 0 R /DW 500 /W [32 [%d]] /CIDToGIDMap /Identity >>"
        % space_width,
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(cmap), cmap),
        b"<< /Type /FontDescriptor /FontName /Serif /Flags 32 /FontBBox [0 -200 1000 900] /ItalicAngle 0 "
        b"/Ascent 900 /Descent -200 /CapHeight 700 /StemV 80 >>",
    ]
    return pdf_file(objects)


CHAPTER = [
    ["1", "1 Leave", "Every employee may take twenty days of paid leave in a calendar", "year, booked"],
    ["Chapter 1: Leave 2", "through the staff portal at least two weeks ahead. Unused days", "carry over once."],
    ["Chapter 1: Leave 3", "Requests are answered within three working days by the", "employee's manager."],
    ["Chapter 1: Leave 4", "Sick leave is recorded separately and needs a note after three", "days."],
]


def test_running_headers_and_page_numbers_leave_the_text(tmp_path: Path):
    (tmp_path / "handbook.pdf").write_bytes(make_pdf(CHAPTER))
    text = read_documents([tmp_path]).documents[0].text
    assert "Chapter 1: Leave" not in text
    # The sentence over the page break reads on; the chapter's own heading stays.
    assert re.search(r"year, booked\s+through the staff portal", text)
    assert text.startswith("1 Leave\n")


def test_a_pdf_without_furniture_reads_as_llamaindex_reads_it(tmp_path: Path):
    pages = [["Acquisition Agreement", "1. The Buyer pays the Price at Closing."],
             ["Article V - Confidentiality", "5.1 Each party keeps the other's information secret."]]
    path = tmp_path / "agreement.pdf"
    path.write_bytes(make_pdf(pages))
    whole = pdf_reader_class()(return_full_document=True).load_data(path)[0].text
    assert read_documents([tmp_path]).documents[0].text == whole


def test_what_counts_as_furniture():
    pages = [
        # Front matter: roman page labels; a contents list stays (its lines name the sections).
        "i\nTable of Contents\n1 Leave . . . . . . . . . . . 1\n1.1 Sick leave ............ 4",
        "1 Leave\nDays off are booked in the portal.\n}",
        # A two-sided book: even pages carry the book's name and number first, odd pages the chapter's.
        "2 Staff Handbook\n}\nText of page two.\nPage 2 of 7",
        "Chapter 1: Leave 3\nText of page three.\nPage 3 of 7",
        "4 Staff Handbook\nText of page four.\nPage 4 of 7",
        # A code listing's numbered lines: "5" is the page's number, "15 }%" a line of the listing; a line of
        # code one page nearby starts with too is no header.
        "Chapter 1: Leave 5\n14 \\else\n15 }%",
        "6 Staff Handbook\n16 \\else\nText of page six.",
    ]
    labels = ["i", "1", "2", "3", "4", "5", "6"]
    out = page_furniture(pages, labels)
    assert out[0] == "Table of Contents\n1 Leave . . . . . . . . . . . 1\n1.1 Sick leave ............ 4"
    assert out[1] == "1 Leave\nDays off are booked in the portal.\n}"   # its heading starts with the label: kept
    assert out[2] == "}\nText of page two."             # a lone brace two pages share is no header
    assert out[3] == "Text of page three."
    assert out[4] == "Text of page four."
    assert out[5] == "14 \\else\n15 }%"
    assert out[6] == "16 \\else\nText of page six."


def test_a_short_document_keeps_a_first_line_its_pages_share():
    # Two pages are no run of headers: each says what it is about.
    pages = ["Northwind Robotics - Leave Policy\nAnnual leave.", "Northwind Robotics - Leave Policy\nSick leave."]
    assert page_furniture(pages, ["1", "2"]) == pages


def test_a_compilation_s_issue_titles_are_no_running_header():
    # LaTeX News, issues 1-36 in one PDF: each issue's title line stands at the top of its first page, two pages
    # after the last one's; its issue number and year both change, a running header's page number alone.
    pages = ["LaTeX News\nIssue 5, June 1996\nWelcome.", "Fonts are next.\nPage 2",
             "LaTeX News\nIssue 6, June 1997\nHello.", "Slides are gone.\nPage 4",
             "LaTeX News\nIssue 7, June 1998\nHi.", "Bugs are fixed.\nPage 6"]
    out = page_furniture(pages, ["1", "2", "3", "4", "5", "6"])
    assert out[2] == "Issue 6, June 1997\nHello."   # the title repeats as it is: furniture; the issue stays
    assert out[1] == "Fonts are next." and out[3] == "Slides are gone."


def test_a_pdf_pypdf_reads_without_spaces_between_words_is_read_by_pdfium(tmp_path: Path):
    lines = ["These files and directories can be spread out over several devices",
             "Here are a few basic methods to gain the root shell prompt"]
    path = tmp_path / "reference.pdf"
    path.write_bytes(make_spaced_by_kerning_pdf(lines))
    assert "Thesefilesanddirectories" in PdfReader(path).pages[0].extract_text()   # what pypdf alone reads
    text = read_documents([tmp_path]).documents[0].text
    assert text.split("\n") == lines


def _read_kerned(path: Path, lines: list[str], kern: int, space_width: int) -> tuple[str, list[str]]:
    """A one-page PDF of ``lines`` ("|" a kerned gap, see make_kerned_pdf) written at ``path``, the only file of its
    folder: pypdf's text of it, and the lines the reader reads."""
    path.write_bytes(make_kerned_pdf(lines, kern=kern, space_width=space_width))
    return PdfReader(path).pages[0].extract_text(), read_documents([path.parent]).documents[0].text.split("\n")


def test_a_pdf_pypdf_reads_with_spaces_inside_words_is_read_by_pdfium(tmp_path: Path):
    """groff's PDFs (bash's manual page) kern letters apart by less than the font's space: pypdf reads "e xecutes"
    and "in voked", pdfium the words whole. A pair like "in to" that the text also writes as one word is no split."""
    lines = ["Bash is a command language interpreter that e|xecutes commands read from the standard",
             "input. The shell is in|voked by a user, and it e|xecutes what it reads; log in to a host.",
             "When bash is invoked as an interactive shell it executes commands into a session, to the end."]
    pypdf, read = _read_kerned(tmp_path / "bash.pdf", lines, kern=120, space_width=250)
    assert "e xecutes" in pypdf   # what pypdf alone reads
    clean = [line.replace("|", "") for line in lines]
    assert read == clean
    assert split_share(clean) == 0 and split_share(["It e xecutes it, and e xecutes it; it executes."]) > 0


def test_a_pdf_pypdf_reads_with_a_few_words_run_together_is_read_by_pdfium(tmp_path: Path):
    """LaTeX leaves no space glyph before a word set in another font: pypdf reads "is inltpara-doc.pdf", too few
    and too short words to count as glued (20 letters); pdfium reads the words apart. A PDF read well stays
    pypdf's."""
    prose = ["The code for the new paragraph hooks is|ltpara-doc.pdf and the older",
             "interface is described in the file|lthooks-doc.pdf for every package writer.",
             "Both manuals come with the base distribution of the system and are updated",
             "with each release of the kernel, as the news letters of the team explain."]
    pypdf, read = _read_kerned(tmp_path / "ltnews33.pdf", prose, kern=250, space_width=1200)
    assert "isltpara-doc.pdf" in pypdf   # what pypdf alone reads
    spaced = [line.replace("|", " ") for line in prose]
    assert read == spaced
    assert not pdfium_reads_better(spaced, spaced)


def test_a_glued_pdf_pdfium_cannot_read_keeps_pypdf_s_text(tmp_path: Path, monkeypatch):
    import pypdfium2

    class Unreadable:   # opens, and fails on its first page
        def __init__(self, path):
            pass

        def __len__(self):
            return 1

        def __getitem__(self, index):
            raise pypdfium2.PdfiumError("Failed to load page")

        def close(self):
            pass

    monkeypatch.setattr(pypdfium2, "PdfDocument", Unreadable)
    (tmp_path / "reference.pdf").write_bytes(make_spaced_by_kerning_pdf(["These files and directories can be spread"]))
    [doc] = read_documents([tmp_path]).documents   # read, not skipped
    assert doc.text.startswith("Thesefilesanddirectories")

def test_a_contents_entry_s_dot_leader_is_three_dots():
    # A handbook's contents pages were a quarter of its chunks, most of their tokens leader dots.
    assert DOT_LEADER.sub(". . . ", "1.1.3 The root account . . . . . . . . . 2") == "1.1.3 The root account . . . 2"
    assert DOT_LEADER.sub(". . . ", "1.1 Sick leave ............ 4") == "1.1 Sick leave . . . 4"
    assert DOT_LEADER.sub(". . . ", "and so on...") == "and so on..."   # an ellipsis is no leader


def test_a_running_header_ending_with_a_roman_page_label_is_furniture():
    # The Debian Reference's front matter: "Debian Reference i" ... "Debian Reference xxvii" on every page.
    pages = [f"Debian Reference {label}\nText of page {label}." for label in ("i", "ii", "iii", "iv")]
    out = page_furniture(pages, ["i", "ii", "iii", "iv"])
    assert out == [f"Text of page {label}." for label in ("i", "ii", "iii", "iv")]


def test_a_word_a_line_end_hyphenated_is_written_whole_where_the_document_writes_it_so():
    text = ("For ex-\nample, the shell reads a top-\nlevel file.\nAn example is a top-level file, a trans-\n"
            "formation none.")
    assert join_line_end_hyphens(text) == ("For example,\nthe shell reads a top-\nlevel file.\n"
                                           "An example is a top-level file, a trans-\nformation none.")


def test_ligatures_are_spelt_out_and_a_glyph_read_as_a_control_character_is_a_space():
    assert printable("the \ufb01le is \ufb02at, \ufb00ective") == "the file is flat, ffective"
    assert printable("arithmetic.\n\x88 All evaluation\tof x\u00b2") == "arithmetic.\n  All evaluation\tof x\u00b2"


def test_a_short_chapter_s_heading_is_no_running_header_and_a_printed_page_number_advances_with_the_pages():
    # The Debian FAQ's chapters of two pages: "Chapter 13", "Chapter 14", "Chapter 15" two pages apart, each page
    # labelled by its place in the file (59, 61, 63). nettle's index pages print their own numbers (100, 101, ...).
    faq = [f"Chapter {n}\nText of chapter {n}." if n else "Rest of a chapter." for n in (13, 0, 14, 0, 15, 0)]
    out = page_furniture(faq, ["57", "58", "59", "60", "61", "62"])
    assert [page.split("\n")[0] for page in out[::2]] == ["Chapter 13", "Chapter 14", "Chapter 15"]
    entries = ["aes_encrypt, 12", "base64_encode, 40", "cbc_decrypt, 19", "des_set_key, 27", "eax_digest, 33"]
    index = [f"Function and Concept Index {100 + i}\n{entry}" for i, entry in enumerate(entries)]
    assert page_furniture(index, ["106", "107", "108", "109", "110"]) == entries
