"""Word documents (.docx) as text: mammoth turns a document into plain semantic HTML (a paragraph styled
"Heading 2" is an ``<h2>``; lists, tables, links, bookmarks, footnotes and endnotes as HTML has them), which the
HTML reader then reads as it reads a web page. So a Word handbook's headings start sections for the splitter and
for crossref ("see Section 8.3" finds the file whose heading is "8.3 Overtime"), its links to other files are
references, and its bookmarks are anchors a link's ``#fragment`` lands on, as on a web page.

LlamaIndex's own DocxReader (docx2txt) returns the bare paragraph text: a heading is a line like any other.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mammoth
from mammoth import html as mammoth_html

from ragplugins.html_reader import HtmlPage, read_html

# Added to mammoth's own map (Word's and LibreOffice's heading, list, note and hyperlink styles): a document's
# Title paragraph is its first heading, and code is code (Word's, LibreOffice's and pandoc's styles for it), kept
# apart from the prose as a web page's <pre> and <code> are. A paragraph in a style no map names is read as a plain
# paragraph.
STYLE_MAP = """
p[style-name='Title'] => h1:fresh
p[style-name='Subtitle'] => p:fresh
p[style-name='HTML Preformatted'] => pre:separator('\\n')
p[style-name='Preformatted Text'] => pre:separator('\\n')
p[style-name='Source Code'] => pre:separator('\\n')
r[style-name='HTML Code'] => code
r[style-name='Source Text'] => code
r[style-name='Verbatim Char'] => code
"""


def _picture_words(image: Any) -> list[Any]:
    """A picture is the words its author gave it (its alt text, as a web page's ``<img alt>`` is read), not the
    picture: mammoth's default writes each one into the HTML as a base64 data URI, megabytes of letters the index
    would store and match as words."""
    return [mammoth_html.text(image.alt_text)] if image.alt_text else []


def read_docx(path: Path) -> HtmlPage:
    """The document's text as Markdown, with its bookmarks' offsets. Raises zipfile.BadZipFile (or KeyError,
    for a zip without Word's parts) when the file is not a Word document: an old binary .doc renamed, or one
    saved with a password, which Word encrypts into another container."""
    with path.open("rb") as fileobj:
        result = mammoth.convert_to_html(fileobj, style_map=STYLE_MAP, convert_image=_picture_words)
    return read_html(f"<html><body>{result.value}</body></html>")
