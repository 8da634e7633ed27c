"""HTML pages as Markdown text: the words a reader sees, with every hyperlink kept as ``[text](href)``.

Conversion is markdownify's (on a BeautifulSoup tree), not hand-written tag stripping. Before it,
the page's navigation chrome is removed, so a chunk holds the page's own words rather than the
"Prev / Up / Home / Next" bars that DocBook and Sphinx put on every page: ``<nav>``, ``<header>``,
``<footer>``, anything with ``role="navigation"``, and the chrome classes of the two generators
most documentation comes from (DocBook's ``navheader``/``navfooter``, Sphinx's ``related``,
``sphinxsidebar``, ``footer`` and the ``headerlink`` pilcrow after each heading). Link titles
(tooltips repeating a target's heading) are dropped so they do not crowd the text a chunk is
embedded with.

The page is parsed by lxml's HTML parser, which closes the end tags HTML lets a page leave out
(``</li>``, ``</p>``, ``</dd>``) as a browser does. Python's ``html.parser`` nests such elements
instead: every list item of SQLite's documentation inside the previous one, its list items run
together, and a page of 2,800 of them deeper than Python's recursion limit.
"""

from __future__ import annotations

import warnings

from bs4 import BeautifulSoup, Comment, Declaration, Doctype, ProcessingInstruction, XMLParsedAsHTMLWarning
from markdownify import MarkdownConverter

HTML_SUFFIXES = {".html", ".htm"}
CHROME = ("nav, header, footer, script, style, head, [role=navigation], "
          "div.navheader, div.navfooter, div.related, div.sphinxsidebar, div.footer, "
          # The pilcrow permalink after every heading (Sphinx and MkDocs: headerlink; Apache httpd: permalink).
          "a.headerlink, a.permalink")
# Not words of the page: a drawing's labels (an SQL syntax diagram's inline SVG became one word per line,
# whole chunks of them) and a form's controls (a search box's options).
NOT_TEXT = "svg, form"


def html_to_markdown(html: str) -> str:
    """Markdown text of an HTML page: headings as ``#``, links as ``[text](href)``, code fenced,
    navigation chrome removed. Text is kept literal (no ``\\_`` escapes), so identifiers such as
    ``pg_dump`` stay searchable."""
    with warnings.catch_warnings():
        # XHTML pages (DocBook's) start with an XML declaration; they are HTML to a reader all the same.
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        soup = BeautifulSoup(html, "lxml")
    for node in soup.find_all(string=lambda s: isinstance(s, (Comment, Declaration, Doctype, ProcessingInstruction))):
        node.extract()
    for element in soup.select(f"{CHROME}, {NOT_TEXT}"):
        element.decompose()
    for link in soup.find_all("a"):
        link.attrs.pop("title", None)
    _links_outside_code(soup)
    converter = MarkdownConverter(heading_style="ATX", escape_underscores=False, escape_asterisks=False,
                                  escape_misc=False, bullets="-")
    text = converter.convert_soup(soup)
    # markdownify leaves runs of blank lines where block elements were removed.
    lines, blank = [], 0
    for line in text.splitlines():
        blank = blank + 1 if not line.strip() else 0
        if blank <= 1:
            lines.append(line.rstrip())
    return "\n".join(lines).strip() + "\n"


def _links_outside_code(soup: BeautifulSoup) -> None:
    """``<code><a href=X>name</a></code>`` as ``<a href=X><code>name</code></a>``: Markdown keeps no link
    inside a code span, and manuals write their cross-references this way (Apache's every directive)."""
    for code in soup.find_all("code"):
        if code.find_parent("pre") is not None:
            continue
        links = code.find_all("a", href=True)
        if len(links) == 1 and links[0].get_text() == code.get_text():
            href = str(links[0]["href"])
            links[0].unwrap()
            code.wrap(soup.new_tag("a", href=href))
