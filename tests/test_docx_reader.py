"""Word documents: headings by their styles, links, bookmarks, tables and lists, read as a web page is read;
what is not a Word document is skipped by name, and the rest of the folder is indexed."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import docx
import pytest
from docx.opc.constants import RELATIONSHIP_TYPE
from docx.oxml import OxmlElement
from docx.oxml.ns import qn

from ragplugins.anchors import PAGE_ANCHORS_KEY
from ragplugins.readers import read_documents


def _png() -> bytes:
    """A 1x1 white PNG."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0\xff\xff\xff")) \
        + chunk(b"IEND", b"")


def add_link(paragraph, text: str, target: str) -> None:
    """A hyperlink run: to another file (an external relationship, as Word writes it) or, for "#name", to a
    bookmark of this document (w:anchor)."""
    link = OxmlElement("w:hyperlink")
    if target.startswith("#"):
        link.set(qn("w:anchor"), target[1:])
    else:
        rel = paragraph.part.relate_to(target, RELATIONSHIP_TYPE.HYPERLINK, is_external=True)
        link.set(qn("r:id"), rel)
    run = OxmlElement("w:r")
    words = OxmlElement("w:t")
    words.text = text
    run.append(words)
    link.append(run)
    paragraph._p.append(link)


def add_bookmark(paragraph, name: str) -> None:
    start, end = OxmlElement("w:bookmarkStart"), OxmlElement("w:bookmarkEnd")
    start.set(qn("w:id"), "7")
    start.set(qn("w:name"), name)
    end.set(qn("w:id"), "7")
    paragraph._p.insert(0, start)
    paragraph._p.append(end)


def handbook(path: Path, tmp_path: Path) -> Path:
    document = docx.Document()
    document.add_heading("Staff Handbook", 0)   # Word's Title style
    document.add_heading("Section 8: Working Time", 1)
    document.add_paragraph("Core hours run from ten to four.")
    heading = document.add_heading("8.3 Overtime", 2)
    add_bookmark(heading, "overtime")
    document.add_paragraph("Overtime needs a manager's approval in advance.")
    document.add_paragraph("Claim it within one month", style="List Bullet")
    picture = tmp_path / "logo.png"
    picture.write_bytes(_png())
    document.add_picture(str(picture))
    described = document.add_picture(str(picture))
    described._inline.docPr.set("descr", "Organisation chart of the payroll team")
    table = document.add_table(rows=2, cols=2)
    for row, (grade, rate) in zip(table.rows, [("Grade", "Rate"), ("B2", "1.5 times pay")]):
        row.cells[0].text, row.cells[1].text = grade, rate
    see = document.add_paragraph("Leave is in ")
    add_link(see, "the leave policy", "leave.docx")
    see.add_run("; approval rules are in ")
    add_link(see, "Section 8.3", "#overtime")
    see.add_run(".")
    document.save(str(path))
    return path


def test_a_word_documents_headings_links_bookmarks_and_tables_are_read(tmp_path):
    folder = tmp_path / "hr"
    folder.mkdir()
    handbook(folder / "handbook.docx", tmp_path)
    [document] = read_documents([folder]).documents
    text = document.text
    lines = text.splitlines()
    # Headings by their styles (the splitter and crossref's "Section 8.3" see them), the title first.
    assert [line for line in lines if line.startswith("#")] == [
        "# Staff Handbook", "# Section 8: Working Time", "## 8.3 Overtime"]
    assert "Overtime needs a manager's approval in advance." in lines
    assert any(line.lstrip("*- ").startswith("Claim it within one month") and line != "Claim it within one month"
               for line in lines)                                      # a list item, marked as one
    assert "B2" in text and "1.5 times pay" in text
    # Links as Markdown links: to another file, and to this document's bookmark.
    assert "[the leave policy](leave.docx)" in text and "[Section 8.3](#overtime)" in text
    # The bookmark is an anchor at the heading it marks.
    offset, words = json.loads(document.metadata[PAGE_ANCHORS_KEY])["overtime"]
    assert text[offset:].startswith(words) and words.startswith("8.3 Overtime")
    # A picture is its alt text, if it has one; never its bytes written into the text as a data URI.
    assert "Organisation chart of the payroll team" in lines
    assert "base64" not in text and "data:image" not in text


def test_what_is_not_a_word_document_is_skipped_by_name_and_the_rest_is_read(tmp_path):
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "old.docx").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(600))   # a .doc, renamed
    (folder / "empty.docx").write_bytes(b"PK\x05\x06" + bytes(18))                         # a zip of nothing
    handbook(folder / "handbook.docx", tmp_path)
    with pytest.warns(UserWarning) as caught:
        report = read_documents([folder])
    said = " ".join(str(w.message) for w in caught)
    assert "old.docx" in said and "empty.docx" in said
    assert "not a Word .docx document" in said and "save it as .docx without a password" in said
    assert [d.id_ for d in report.documents] == ["handbook.docx"]
