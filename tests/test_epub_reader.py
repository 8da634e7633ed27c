"""E-books: one document per book, chapters in reading order, links between chapters as the places they land
on; books with a missing file or zipped inside a folder still read; DRM and non-books are skipped by name."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from ragplugins.anchors import PAGE_ANCHORS_KEY
from ragplugins.readers import read_documents

CONTAINER = ('<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
             '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
             '</rootfiles></container>')

CHAPTERS = {
    "text/ch1.xhtml": ('<html xmlns="http://www.w3.org/1999/xhtml"><head><title>Getting started</title></head><body>'
                       '<h1>1. Getting started</h1><p>Install the tools first. Keys are covered in '
                       '<a href="ch2.xhtml#signing">Signing your uploads</a>; the <a href="ch2.xhtml">next '
                       'chapter</a> says more. See <a href="https://www.debian.org/">Debian</a>.</p></body></html>'),
    "text/ch2.xhtml": ('<html xmlns="http://www.w3.org/1999/xhtml"><head><title>Uploads</title></head><body>'
                       '<h1>2. Uploads</h1><p>Uploads go to the queue.</p>'
                       '<h2 id="signing">2.1. Signing your uploads</h2><p>Every upload is signed with an '
                       'OpenPGP key.</p></body></html>'),
    "nav.xhtml": ('<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><body>'
                  '<nav epub:type="toc"><ol><li><a href="text/ch1.xhtml">1. Getting started</a></li>'
                  '<li><a href="text/ch2.xhtml">2. Uploads</a></li></ol></nav></body></html>'),
}


def package(spine: list[str], extra_manifest: str = "") -> str:
    items = "".join(f'<item id="{Path(n).stem}" href="{n}" media-type="application/xhtml+xml"/>' for n in CHAPTERS)
    refs = "".join(f'<itemref idref="{idref}"/>' for idref in spine)
    return ('<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
            '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Packaging Guide</dc:title></metadata>'
            f'<manifest>{items}{extra_manifest}</manifest><spine>{refs}</spine></package>')


def make_epub(path: Path, spine=("nav", "ch1", "ch2"), top: str = "", extra_manifest: str = "",
              encrypted: str = "") -> Path:
    with zipfile.ZipFile(path, "w") as book:
        book.writestr("mimetype", "application/epub+zip")
        book.writestr(top + "META-INF/container.xml", CONTAINER)
        book.writestr(top + "OEBPS/content.opf", package(list(spine), extra_manifest))
        # Stored in another order than the spine's, as zips often are.
        for name in sorted(CHAPTERS, reverse=True):
            book.writestr(top + "OEBPS/" + name, CHAPTERS[name])
        if encrypted:
            book.writestr(top + "META-INF/encryption.xml",
                          '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
                          'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData><enc:CipherData>'
                          f'<enc:CipherReference URI="{encrypted}"/></enc:CipherData></enc:EncryptedData>'
                          '</encryption>')
    return path


def test_a_book_is_one_document_its_chapters_in_reading_order_and_its_links_inside_it(tmp_path):
    folder = tmp_path / "books"
    folder.mkdir()
    make_epub(folder / "guide.epub", spine=("nav", "ch2", "ch1"))   # the spine, not the zip, says the order
    [book] = read_documents([folder]).documents
    text = book.text
    assert book.id_ == "guide.epub"
    assert text.index("# 2. Uploads") < text.index("# 1. Getting started")
    assert "[Signing your uploads](#signing)" in text     # a link into another chapter: the place it lands on
    assert "next chapter" in text and "ch2.xhtml" not in text     # a link to a whole chapter: its words
    assert "[Debian](https://www.debian.org/)" in text            # another site's link stays
    assert text.count("1. Getting started") == 1                  # the contents list (EPUB 3's nav) is left out
    offset, words = json.loads(book.metadata[PAGE_ANCHORS_KEY])["signing"]
    assert text[offset:].startswith(words) and words.startswith("2.1. Signing your uploads")


def test_a_book_missing_a_listed_file_or_zipped_inside_a_folder_still_reads(tmp_path):
    # Debian's debmake-doc lists a logo its package strips; Debian Edu's manual is zipped with its folder.
    folder = tmp_path / "books"
    folder.mkdir()
    make_epub(folder / "stripped.epub", spine=("ch1", "logo", "ch2"),
              extra_manifest='<item id="logo" href="images/logo.png" media-type="image/png"/>'
                             '<item id="gone" href="text/gone.xhtml" media-type="application/xhtml+xml"/>')
    make_epub(folder / "nested.epub", top="epub/")
    docs = {d.id_: d.text for d in read_documents([folder]).documents}
    assert set(docs) == {"stripped.epub", "nested.epub"}
    for text in docs.values():
        assert "Every upload is signed with an OpenPGP key." in text and "Install the tools first." in text


def test_drm_books_and_files_that_are_no_books_are_skipped_by_name(tmp_path):
    folder = tmp_path / "books"
    folder.mkdir()
    make_epub(folder / "bought.epub", encrypted="OEBPS/text/ch2.xhtml")
    make_epub(folder / "fonts.epub", encrypted="OEBPS/fonts/serif.otf")    # only an obfuscated font: readable
    (folder / "notes.epub").write_text("not a zip at all")
    with zipfile.ZipFile(folder / "bare.epub", "w") as bare:
        bare.writestr("readme.txt", "no package file")
    with pytest.warns(UserWarning) as caught:
        report = read_documents([folder])
    said = {line.split("'")[1].rsplit("/", 1)[-1]: line for w in caught for line in str(w.message).splitlines()
            if "skipped" in line}
    assert "encrypted (DRM)" in said["bought.epub"]
    assert "not a readable '.epub' file" in said["notes.epub"]
    assert "no package file (content.opf) found" in said["bare.epub"]
    assert [d.id_ for d in report.documents] == ["fonts.epub"]



def test_a_picture_the_zip_lacks_is_not_read(tmp_path):
    # debmake-doc's package strips its logo: its cover read "![(missing alt)](xslt/debian-openlogo.png)".
    path = make_epub(tmp_path / "guide.epub", spine=("cover", "ch1"),
                     extra_manifest='<item id="cover" href="cover.xhtml" media-type="application/xhtml+xml"/>')
    with zipfile.ZipFile(path, "a") as book:
        book.writestr("OEBPS/cover.xhtml", '<html xmlns="http://www.w3.org/1999/xhtml"><body><p><img '
                      'src="images/logo.png" alt="(missing alt)"/><img src="images/ok.png" alt="the logo"/></p>'
                      '</body></html>')
        book.writestr("OEBPS/images/ok.png", b"\x89PNG")
    [book] = read_documents([path]).documents
    assert "(missing alt)" not in book.text and "logo.png" not in book.text, book.text
    assert book.text.startswith("![the logo](images/ok.png)\n"), book.text
