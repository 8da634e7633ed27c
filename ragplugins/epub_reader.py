"""E-books (.epub) as text: one document per book, its chapters in reading order (the package's spine), each
read by the HTML reader as a web page is, so headings start sections and links stay ``[text](href)``. A link
from one chapter to another of the same book points into this document: it is written as the ``#fragment``
it lands on, not as a chapter file's name that no index holds.

An EPUB is a zip of XHTML files listed by a package file (``content.opf``) that ``META-INF/container.xml``
names. ebooklib, which LlamaIndex's EpubReader uses, refuses a book whose manifest lists a file the zip
lacks (Debian's debmake-doc strips its logo) or whose files sit one folder down in the zip (Debian Edu's
manual); readers such as calibre open both. So the few steps are taken here with zipfile and lxml, and
whatever chapters are present are read.
"""

from __future__ import annotations

import posixpath
import zipfile
from pathlib import Path
from urllib.parse import unquote, urlsplit

from bs4 import BeautifulSoup
from lxml import etree

from ragplugins.html_reader import HtmlPage, parse_html, read_html

CONTAINER = "META-INF/container.xml"
ENCRYPTION = "META-INF/encryption.xml"
CHAPTER_TYPES = {"application/xhtml+xml", "text/html"}
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, recover=True)


class EpubError(ValueError):
    """The file is not an EPUB that can be read (says why)."""


def read_epub(path: Path) -> HtmlPage:
    """The book's text as Markdown, chapters in reading order, with its anchors' offsets. Raises
    zipfile.BadZipFile when the file is no zip, EpubError when no package file or no chapter is found, or
    when its chapters are encrypted (DRM)."""
    with zipfile.ZipFile(path) as book:
        names = set(book.namelist())
        top, package = _package_path(book, names)
        chapters = _spine(etree.fromstring(book.read(package), _PARSER), posixpath.dirname(package), names)
        if _encrypted(book, names, top) & set(chapters):
            raise EpubError("its chapters are encrypted (DRM); only a DRM-free copy can be read")
        if not chapters:
            raise EpubError(f"its package file {package} lists no chapter the zip holds")
        parts: list[str] = []
        anchors: dict[str, int] = {}
        offset = 0
        in_book = set(chapters)
        for chapter in chapters:
            page = read_html(_within_book(parse_html(book.read(chapter)), chapter, in_book, names))
            if not page.text.strip():
                continue   # a cover picture, a title page of images
            if parts:
                offset += 2   # the blank line between chapters
            for name, at in page.anchors.items():
                anchors.setdefault(name, offset + at)
            parts.append(page.text)
            offset += len(page.text)
    return HtmlPage("\n\n".join(parts), anchors)


def _package_path(book: zipfile.ZipFile, names: set[str]) -> tuple[str, str]:
    """(the folder the book's files are in, "" at the top of the zip; where its package file is): as
    container.xml says, that file at the top of the zip or (a book zipped with its folder) one folder down;
    else the zip's one ``.opf`` file."""
    containers = sorted((n for n in names if n == CONTAINER or n.endswith("/" + CONTAINER)), key=len)
    for container in containers[:1]:
        top = container[: -len(CONTAINER)]
        root = etree.fromstring(book.read(container), _PARSER)
        for rootfile in root.iter("{*}rootfile") if root is not None else ():
            full = top + (rootfile.get("full-path") or "")
            if full in names:
                return top, full
    opf = [n for n in names if n.lower().endswith(".opf")]
    if len(opf) == 1:
        return "", opf[0]
    raise EpubError("no package file (content.opf) found: it is not an EPUB book" if not opf else
                    f"{len(opf)} package files and no META-INF/container.xml saying which is the book")


def _spine(package: etree._Element | None, folder: str, names: set[str]) -> list[str]:
    """The zip paths of the book's chapters in reading order (the spine's), those the zip holds."""
    if package is None:
        return []
    manifest = {item.get("id"): item for item in package.iter("{*}item")}
    chapters: list[str] = []
    for ref in package.iter("{*}itemref"):
        item = manifest.get(ref.get("idref"))
        if item is None or item.get("media-type") not in CHAPTER_TYPES:
            continue
        where = posixpath.normpath(posixpath.join(folder, unquote(item.get("href") or "")))
        if where in names and where not in chapters:
            chapters.append(where)
    return chapters


def _encrypted(book: zipfile.ZipFile, names: set[str], top: str) -> set[str]:
    """The zip paths META-INF/encryption.xml lists (fonts a publisher obfuscates are listed too)."""
    listing = top + ENCRYPTION
    if listing not in names:
        return set()
    root = etree.fromstring(book.read(listing), _PARSER)
    uris = [ref.get("URI") or "" for ref in root.iter("{*}CipherReference")] if root is not None else []
    return {posixpath.normpath(top + unquote(uri)) for uri in uris}


def _within_book(soup: BeautifulSoup, chapter: str, chapters: set[str], names: set[str]) -> BeautifulSoup:
    """The chapter's tree with each link to a chapter of the same book written as the ``#fragment`` it lands
    on (a link to a whole chapter as its words alone), and without the pictures the zip lacks (a package that
    strips a logo leaves "![(missing alt)](xslt/debian-openlogo.png)")."""
    folder = posixpath.dirname(chapter)

    def in_zip(path: str) -> str:
        return posixpath.normpath(posixpath.join(folder, unquote(path)))

    for link in soup.find_all("a", href=True):
        href = urlsplit(str(link["href"]))
        if href.scheme or href.netloc or not href.path:
            continue   # another site, or already a fragment of this chapter
        if in_zip(href.path) not in chapters:
            continue
        if href.fragment:
            link["href"] = "#" + href.fragment
        else:
            link.unwrap()
    for picture in soup.find_all("img", src=True):
        src = urlsplit(str(picture["src"]))
        if not (src.scheme or src.netloc) and in_zip(src.path) not in names:
            picture.decompose()
    return soup
