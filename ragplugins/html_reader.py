"""HTML pages as Markdown text: the words a reader sees, with every hyperlink kept as ``[text](href)``.

Conversion is markdownify's (on a BeautifulSoup tree), not hand-written tag stripping. Before it,
the page's navigation chrome is removed, so a chunk holds the page's own words rather than the
"Prev / Up / Home / Next" bars that DocBook and Sphinx put on every page: ``<nav>``, ``<header>``,
``<footer>``, anything with ``role="navigation"``, and the chrome classes of the two generators
most documentation comes from (DocBook's ``navheader``/``navfooter``, Sphinx's ``related``,
``sphinxsidebar``, ``footer`` and the ``headerlink`` pilcrow after each heading) and the contents of other
pages Sphinx writes into a page (its toctrees and indexes: titles and entry names, no answer). Other
generators' chrome is found by what it is (``_drop_site_chrome``): blocks whose class or id says navigation,
unless they hold the page itself; a page's own table of contents; links that only move the reader, and rows of
navigation buttons ("[ << ] [ < ] [ Up ] [ > ]", "top | back | next | contents", in a block of their own or not);
buttons, and controls a script answers (a "Menu" that opens a sidebar); the same page in other languages; a
site's name as a heading above the page's own title (``_drop_site_heading``). Link titles (tooltips repeating a
target's heading) are dropped so they do not crowd the text a chunk is embedded with. A page that only sends the
reader to another (``<meta http-equiv="refresh">``) says where (``HtmlPage.redirect``): the reader skips it.

The page is parsed by lxml's HTML parser, which closes the end tags HTML lets a page leave out
(``</li>``, ``</p>``, ``</dd>``) as a browser does. Python's ``html.parser`` nests such elements
instead: every list item of SQLite's documentation inside the previous one, its list items run
together, and a page of 2,800 of them deeper than Python's recursion limit.
"""

from __future__ import annotations

import copy
import re
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import takewhile
from urllib.parse import quote

from bs4 import (
    BeautifulSoup,
    Comment,
    Declaration,
    Doctype,
    NavigableString,
    PageElement,
    ProcessingInstruction,
    Tag,
    XMLParsedAsHTMLWarning,
)
from markdownify import MarkdownConverter

from ragplugins.markup_lines import FENCE, in_code_fences
from ragplugins.printed_pages import INDENTED_LINE_END_HYPHEN, hyphen_vocabulary, join_line_end_hyphens

HTML_SUFFIXES = {".html", ".htm"}
# What a site puts around every page; with it a dialog a script opens (MkDocs' "Search" and "Keyboard Shortcuts"
# boxes, at the foot of every page).
# A header inside the page's main part, an article or a section is theirs: gi-docgen puts each class page's title in
# one ("<section id="main"><header><h3>Class</h3><h1>DropTarget</h1>": a new user's GTK 4 pages had no titles).
CHROME = ("nav, header:not(:is(main, article, section, [role=main]) header), footer, script, style, head, "
          "[role=navigation], [role=dialog], [role=alertdialog], "
          "div.navheader, div.navfooter, div.related, div.sphinxsidebar, div.footer, "
          # The pilcrow permalink after every heading (Sphinx and MkDocs: headerlink; Apache httpd: permalink).
          "a.headerlink, a.permalink, "
          # Doxygen's title area: the project's name, version and tagline above every page (a new user's libssh
          # manual: "libssh 0.10.6 The SSH library" opened all 188 pages), and the bar of links to the parts of the
          # page above its title ("Macros | Functions"), which its stylesheet hides when the page is printed.
          "div#titlearea, div.header > div.summary")
# What a page's stylesheet hides: Doxygen's tooltip for every name in a code fragment (its declaration, its brief and
# where it is defined, shown while the pointer is over the name: 11 % of a new user's libssh manual read as text, and
# a header listing made of them first for one of the user's questions), and the ".nosp@m." it puts into an e-mail
# address against harvesters ("curve.nosp@m.2551.nosp@m.9-sha256@...").
# mdBook hides an example's "boring" lines (``#![allow(unused)]``, ``fn main() {``) until the reader asks for them.
# gi-docgen folds away, until the reader opens them, the members a class inherits: each ancestor's page's summaries
# again (43 % of a new user's GTK 4 class pages' text, and in the top 3 above the answer for 3 of 24 questions).
HIDDEN = ("div.ttc, span.obfuscator, span.boring, "
          "div.toggle-wrapper:is(.ancestor-methods, .ancestor-properties, .ancestor-signals)")
# A site's contents as its generator writes them into a page: the titles of other pages, each a link, which match
# any question about those pages better than the pages' own passages and answer none (Sphinx's toctree: a new
# user's SQLAlchemy FAQ index, a list of the FAQ's questions, was in the top 3 for 6 of 24 questions). Sphinx wraps
# a toctree in a div, except on the root document of some themes, where its list stands below its caption; its
# general and module indexes are tables of every entry's name, each a link to the entry, under a row of letters.
# Texinfo's makeinfo writes each node's menu as a list of its subnodes (a new user's flex FAQ: the list of every
# question), the Top node's table of contents under its heading (or a page of its own, "Table of Contents" as its h1:
# a new user's zsh manual, 16 chunks), and each index as such a table ("Jump to:"): on that user's flex manual, 73 of
# 303 chunks, in the top 10 for up to 7 of 24 questions. LaTeX2HTML ends a section's page with its "Subsections", links
# to its subsections' pages (81 of a new user's gnuplot manual's pages; five of them nothing else).
SITE_CONTENTS = ("div.toctree-wrapper, ul:has(> li.toctree-l1), table.indextable, div.genindex-jumpbox, "
                 "div.modindex-jumpbox, "
                 "ul.section-toc, ul.mini-toc, .contents-heading, .contents-heading + div.contents, "
                 ".shortcontents-heading, .shortcontents-heading + div.shortcontents, table[class^='index-'], "
                 "table[class$='-entries-printindex'], table:has(a[class^='summary-letter']), "
                 "a#CHILD_LINKS, ul.ChildLinks")
# Class or id words (split at "-" and "_") of blocks that hold a site's navigation, not a page's words.
CHROME_NAMES = frozenset({"nav", "navbar", "navigation", "menu", "mainmenu", "submenu", "searchmenu", "menubar",
                          "sidebar", "breadcrumb", "breadcrumbs", "footer", "banner"})
# ... and a word that starts or ends with "nav" (Publican's DocBook bars: ``ul.docnav``; ``topnav``, ``subnav``).
NAV_AFFIX = "nav"
# ... unless the name says the block is a box's title ("sidebar-title": docutils' ``.. sidebar::`` heading), which
# stays or goes with its box.
TITLE_NAMES = frozenset({"title", "subtitle", "caption", "heading"})
BLOCKS = ["div", "nav", "ul", "ol", "p", "table", "aside", "section", "td"]
HEADINGS = ["h1", "h2", "h3", "h4", "h5", "h6"]
_BREAKS_A_LINK = re.compile(r"[\s()<>]")
_SAFE_IN_LINKS = "/#:?=&%;,+@!$'*~[]"
# The page a ``javascript:`` link's script is given, quoted, and a bare name given right before it: the folder the
# page is in ("erlhref('../../../../doc/../','kernel','file.html#open-2')": Erlang/OTP's application).
_SCRIPT_PAGE = re.compile(r"""(?:['"](?P<folder>[\w-]+)['"][ \t]*,[ \t]*)?['"](?P<page>[^'"\s()]+?\.x?html?"""
                          r"""(?:#[^'"\s()]*)?)['"](?!.*\.x?html?\b)""")
MAIN_PART = "main, article, [role=main]"
# A link that only moves the reader through the site: "<-previous", "Next »", "Up", "Top", "Table of Contents".
MOVES = r"prev|previous|next|back|up|top|home|back to top|contents|table of contents"
NAVIGATION_LINK = re.compile(rf"\W*(?:{MOVES})\W*", re.I)
CONTENTS_LABEL = re.compile(
    r"\W*(?:(?:table of )?contents|on this page|in this (?:article|section|chapter)|topics)?\W*", re.I)
ARROWS = re.compile(r"<-|->|[«»←→↑‹›]")
# A button of a navigation bar: a symbol ("<<", ">", "?"), a word that moves the reader, or such a word with what
# it moves by ("Next Chapter", "Previous section"). texi2html writes every node's bar as a table of them,
# "[ << ] [ < ] [ Up ] [ > ] [ >> ] [Top] [Contents] [Index] [ ? ]", the zsh FAQ as a list of three; an index
# may say which ("function index").
NAVIGATION_BUTTON = re.compile(rf"\W*(?:(?:{MOVES}|(?:[a-z]+\s+)?index|about)"
                               r"(?:\s+(?:chapter|section|page|topic|node))?)?\W*", re.I)
NAVIGATION_WORDS = frozenset({"prev", "previous", "next", "up", "top", "home", "contents", "toc", "index", "nav"})
# HTML's link types for moving through a set of pages (texinfo writes each node's "Next: X, Previous: Y, Up: Z"
# bar with them, the links named after the nodes they lead to).
NAVIGATION_RELS = frozenset({"next", "prev", "previous", "up", "contents", "index", "start", "first", "last"})
# What is left of such a bar once its links are gone: labels and punctuation ("Next: , Previous: , Up: [][]").
NAVIGATION_LABELS = re.compile(r"(?:\W|_|\b(?:next|previous|prev|up|top|contents|index)\b)*", re.I)
# The label just before a link in such a bar. texinfo repeats the bar below a long node without ``rel`` (the GNU
# Octave manual: 122 of 211 pages kept it).
MOVE_LABEL = re.compile(r"\b(?:next|previous|prev|up):\s*$", re.I)
# A link whose text is only this mark, to an anchor of the page, is the anchor's permalink (texinfo writes one
# after every indexed definition, ``a.copiable-anchor``: 3.5 % of the Octave manual's read text).
PERMALINK_MARKS = frozenset({"¶", "§", "#", "◆"})   # ◆: Doxygen's, before every member's name
# A site's name, tagline or breadcrumb trail is a few words; a notice above a page's title is sentences long.
BANNER_WORDS = 30
# A column of a layout table that is a site's menu: this many links at least, and this share of its words theirs.
LINK_COLUMN_LINKS = 10
LINK_COLUMN_SHARE = 0.8
# Where an HTML <title> joins the page's name and the site's ("mod_deflate - Apache HTTP Server Version 2.4").
TITLE_PARTS = re.compile(r"\s+[-–—|·:]\s+")
# The blocks above a page's title that can be the site's banner.
BANNER_BLOCKS = ["p", "div", "span", "ol", "ul"]
# What stands between two links of a breadcrumb trail.
TRAIL_MARK = re.compile(r"\s*[>»›→/]\s*")
# ... and after its last link: the page's own name, a few words.
TRAIL_END = re.compile(r"\s*[>»›→/]\s*(?:\w+\s*){0,8}")
# A page moved elsewhere says so in a sentence ("The node you are looking for is at Brace Expansion.", texinfo's
# stub for every old node name: 43 of zsh's 60 pages); a page with words of its own is read whatever it refreshes to.
REDIRECT_WORDS = 30
# A sentence's worth of words outside links: a box of the page's prose, not a list of links.
PROSE_WORDS = 8
# A control's label ("Menu", "Copy", "Show all").
CONTROL_WORDS = 3
# The most rows or columns one cell is read to span (a page's typo, rowspan="99999", copies no cell that often).
MAX_SPAN = 1000
# A link's words that are a web address the page prints.
_PRINTED_ADDRESS = re.compile(r"(?:https?|ftp)://\S+\Z|www\.\S+\Z")
_WORD = re.compile(r"\w+")
# Not words of the page: a drawing's labels (an SQL syntax diagram's inline SVG became one word per line,
# whole chunks of them) and a form's controls (a search box's options); what a page says only where scripts do not
# run ("JavaScript is disabled on your browser.", over every page of a new user's Javadoc).
NOT_TEXT = "svg, form, noscript"
# A sidebar holding a search field is the site's, whatever prose it says beside it (haproxy-dconv's "Keyboard
# navigation: When enabled, you can use left and right arrow keys ..." opened every manual); a sidebar of prose alone
# may be the page's (_a_box_of_prose). Not the page, nor a block holding its main part or its title: mdBook writes
# ``<html class="sidebar-visible">`` around its search form, and every page of a new user's Rust Reference went whole.
SEARCH_SIDEBAR = "[id*=sidebar]:has(form, input), [class*=sidebar]:has(form, input)"
# A book's index as a definition list: terms that are all links to where they are used (LaTeX2HTML's, 749 terms in
# a new user's gnuplot manual); a glossary's terms have their definitions' words, and a table of contents (DocBook's
# ``dl.toc``, kept) numbers its entries.
INDEX_TERMS = 20
INDEX_UNLINKED_SHARE = 0.05
SECTION_NUMBER = re.compile(r"\s*(?:[0-9]+(?:\.[0-9]+)*\.?|[A-Z](?:\.[0-9]+)*\.)\s")   # "2.1", "A.1.", not "A "
# What made the page, said at its foot ("This document was generated on February 5, 2023 using texi2any.": every
# page of a new user's zsh manual, the whole text of its index pages once their entries went).
GENERATOR_NOTE = re.compile(r"\s*(?:this document was generated\b[^.]{0,120}\busing\b[^.]{0,80}"
                            # Doxygen's, its name a picture: "Generated by [doxygen] 1.9.4", "Generated on Tue Jan 3
                            # 2023 for libfoo by [doxygen] 1.8.17".
                            r"|generated(?:\s+on\s+[^.]{0,80}?)?(?:\s+for\s+[^.]{0,80}?)?\s+by\s+"
                            r"(?:[a-z][\w-]{0,30}\s+)?v?\d[\w.]{0,20})\.?\s*", re.I)
_GENERATED = re.compile(r"\bgenerated\b", re.I)
# A footnote's mark and its way back: DocBook's (the mark, a repeated mark, the way back), Sphinx's and docutils',
# Python-Markdown's and pandoc's.
FOOTNOTE_MARKS = ("a.footnote, a.footnoteref, div.footnote a.para, a[role=doc-noteref], a.footnote-reference, "
                  "a.footnote-ref, a.footnote-backref, a.footnote-back, a.fn-backref")


def html_to_markdown(html: str) -> str:
    """Markdown text of an HTML page: headings as ``#``, links as ``[text](href)``, code fenced,
    navigation chrome removed. Text is kept literal (no ``\\_`` escapes), so identifiers such as
    ``pg_dump`` stay searchable."""
    return read_html(html).text


@dataclass(frozen=True)
class HtmlPage:
    """A page's Markdown text (:func:`html_to_markdown`) and where in it each of the page's anchors begins:
    ``{anchor: offset}`` for every ``id`` and ``<a name>`` whose words survive into the text. A link's
    ``#fragment`` names one of them; the words that follow an anchor are often not its name (nginx's
    ``<a name="gzip_proxied">`` stands before a "Syntax:" table, PostgreSQL's ``id="GUC-WORK-MEM"`` on a
    ``<dt>`` reading "work_mem (integer)")."""

    text: str
    anchors: dict[str, int] = field(default_factory=dict)
    # Where a page that only sends the reader on leads (its <meta http-equiv="refresh">), else "".
    redirect: str = ""
    # The page is the site's search form, whose results a script draws (Sphinx's search.html): no document.
    search_form: bool = False


# The HTTP header a CGI program writes before its page, saved with it (man2html's pages: "Content-type: text/html;
# charset=UTF-8" above the markup, read as the page's first words).
_CGI_HEADER = re.compile(r"\A\s*content-type:[^\n]*\n(?:[\w-]+:[^\n]*\n)*[ \t\r]*\n", re.I)
_CGI_HEADER_BYTES = re.compile(_CGI_HEADER.pattern.encode(), re.I)


def parse_html(markup: str | bytes) -> BeautifulSoup:
    """A page's tree, parsed as :func:`read_html` parses it."""
    markup = _CGI_HEADER_BYTES.sub(b"", markup, count=1) if isinstance(markup, bytes) else \
        _CGI_HEADER.sub("", markup, count=1)
    with warnings.catch_warnings():
        # XHTML pages (DocBook's) start with an XML declaration; they are HTML to a reader all the same.
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        return BeautifulSoup(markup, "lxml")


def read_html(html: str | BeautifulSoup) -> HtmlPage:
    """The page as :class:`HtmlPage`: its text, its anchors' offsets in that text, and where it sends the
    reader if that is all it does. A tree (:func:`parse_html`) is read as it stands, and changed."""
    soup = html if isinstance(html, BeautifulSoup) else parse_html(html)
    _definition_items_closed(soup)
    # A term's classifier ("codetags : list of strings") is set apart by docutils' stylesheet alone where Sphinx
    # writes it: read without it, a new user's Pygments options ran into their types ("codetagslist of strings").
    for classifier in soup.select("span.classifier"):
        if classifier.find_previous_sibling(class_="classifier-delimiter") is None:
            classifier.insert_before(" : ")
    # A signature's parameters are in italics only by Sphinx's stylesheet's choice: as Markdown emphasis its "*args"
    # and "**kwargs" ran into the marks ("delay(**args*, ***kwargs*)": a new user's Celery reference, Python's
    # every signature with a star), and an attribute's default read "default_retry_delay *= 180*".
    for emphasis in soup.select("dt.sig em, em.sig-param"):
        emphasis.unwrap()
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    search_form = soup.find(id="search-results") is not None and soup.find("input", attrs={"name": "q"}) is not None
    refresh = soup.find("meta", attrs={"http-equiv": re.compile("^refresh$", re.I)})
    refresh_content = str(refresh.get("content", "")) if refresh is not None else ""
    for node in soup.find_all(string=lambda s: isinstance(s, (Comment, Declaration, Doctype, ProcessingInstruction))):
        node.extract()
    _tab_labels_into_panels(soup)
    # A separator a stylesheet draws between two names ("<a>Gtk</a><span class="sep" role="presentation"></span>
    # DropTarget", gi-docgen's every title): a space, not "GtkDropTarget".
    for separator in soup.select("span[role=presentation]:empty"):
        separator.replace_with(" ")
    sidebars = [element for element in soup.select(SEARCH_SIDEBAR) if element.name not in ("html", "body")
                and element.select_one(MAIN_PART) is None and element.find("h1") is None]
    for element in [*soup.select(f"{CHROME}, {NOT_TEXT}, {HIDDEN}"), *sidebars]:
        element.decompose()
    _code_fragments_as_blocks(soup)
    _numbered_code_as_blocks(soup)
    _manual_pages_as_text(soup)
    # A code block inside a code block is one (mdBook's every example, ``<pre><pre class="playground">``): read as two,
    # the inner block's fence stood in the outer one's text.
    for inner in soup.select("pre pre"):
        inner.unwrap()
    _title_box_as_heading(soup)
    _sections_out_of_lists(soup)
    for contents in soup.select(SITE_CONTENTS):
        caption = contents.find_previous_sibling()
        if caption is not None and "caption" in _words(caption, "class"):
            caption.decompose()
        contents.decompose()
    _drop_site_chrome(soup, title)
    _drop_contents_under_their_heading(soup)
    for terms in soup.find_all("dl"):
        if not _removed(terms) and _an_index(terms):
            terms.decompose()
    _drop_generator_note(soup)
    _drop_site_heading(soup, title)
    _admonitions_out_of_tables(soup)
    _link_columns_dropped(soup)
    _layout_tables_as_text(soup)
    _row_spans_carried_down(soup)
    # A picture without alt text says nothing a text can hold (Apache's feather logo on every page): its file name
    # would be read as words. Nor does one whose alt text is its file name, as Sphinx writes a logo's ("_images/
    # click-logo.png" opened a new user's Click front page).
    for picture in soup.find_all("img"):
        alt = str(picture.get("alt") or "").strip()
        source = str(picture.get("src") or "").strip()
        if not alt or alt in (source, source.rsplit("/", 1)[-1]) or _says_again(picture, alt):
            picture.decompose()
        elif not _WORD.search(alt) and picture.find_parent("a") is not None:
            # A link drawn as a mark ("(p. [*])": LaTeX2HTML's cross-reference, a picture of "[*]" 827 times in a new
            # user's gnuplot manual) is that mark, "[*](node318.html#set_jitter)", not the picture's file name.
            picture.replace_with(alt[1:-1] if alt[:1] == "[" and alt[-1:] == "]" and len(alt) > 2 else alt)
    for link in soup.find_all("a"):
        link.attrs.pop("title", None)
        # A path holding brackets or spaces ends a Markdown link early: "[Quartz](cairo-Quartz-(CGFont)-Fonts.html)"
        # read as a link to "cairo-Quartz-" (a new user's cairo manual), so they are written encoded, as a browser
        # sends them.
        if (href := link.get("href")) and _BREAKS_A_LINK.search(str(href)):
            link["href"] = quote(str(href), safe=_SAFE_IN_LINKS)
    _links_outside_code(soup)
    # A heading that links back to the page's table of contents (Sphinx's "toc-backref", the kernel's every
    # sysctl entry) is the heading's words; the contents it led to are gone.
    for backlink in soup.select("a[role=doc-backlink], a.toc-backref"):
        backlink.unwrap()
    # A footnote's mark and the footnote's way back to it are the mark alone, in brackets ("[a]", "[1]"): as links
    # they put an id's words into the sentence ("box,[[a]](#ftn.FUNCTIONS-GEOMETRY-ROTATION-FN) path", DocBook;
    # "[1](#id2)", Sphinx), and a reference to the page's own footnote is no reference to follow. A way back drawn
    # as an arrow ("↩") is nothing to read.
    for mark in soup.select(FOOTNOTE_MARKS):
        if "#" in str(mark.get("href") or ""):
            label = mark.get_text("")
            mark_only = label.strip()
            if not _WORD.search(mark_only):
                mark.decompose()
            else:
                mark.replace_with(label if mark_only.startswith("[") else label.replace(mark_only, f"[{mark_only}]"))
    _drop_edge_rules(soup)
    _emphasis_runs_as_text(soup)
    _marks_inside_words(soup)
    _line_breaks_out_of_inline(soup)
    names = _mark_anchors(soup)
    _drop_empty_anchors(soup)
    # A page's source line breaks stay (inside a block quote each gets a "> "): joining them as a browser does
    # re-cut every chunk and was lower on some dev corpora (bench/results/firststage/NOTES.md).
    converter = _PageConverter(heading_style="ATX", escape_underscores=False, escape_asterisks=False,
                               escape_misc=False, bullets="-")
    text = converter.convert_soup(soup)
    # markdownify leaves runs of blank lines where block elements were removed.
    lines, blank = [], 0
    for line in text.splitlines():
        blank = blank + 1 if not line.strip() else 0
        if blank <= 1:
            lines.append(line.rstrip())
    code = in_code_fences(lines)
    for i, line in enumerate(lines):
        if _HEADING in line:
            lines[i] = line.replace(_HEADING, "", 1)
        elif not code[i]:
            lines[i] = _HEADING_LIKE.sub(r"\1\\\2", line, count=1)
    page = _unmark("\n".join(lines).strip() + "\n", names)
    target = _refresh_target(refresh_content)
    if target and len(_WORD.findall(page.text)) <= REDIRECT_WORDS:
        return HtmlPage(page.text, page.anchors, redirect=target)
    return HtmlPage(page.text, page.anchors, search_form=search_form) if search_form else page


# What markdownify starts a heading's line with, behind a mark (of Unicode's private use area) that says the line is
# an h1-h6's. A line of the page's words that starts so is escaped as Markdown escapes it ("\\# apt-get install": a
# shell prompt written as a paragraph, 49 of them in the Debian Live manual as a Word file), so neither the
# splitter nor the headings above a window take it for a heading.
_HEADING = "\ue002"
_HEADING_LIKE = re.compile(r"^([ \t]*(?:\ue000\d+\ue001)*)(#{1,6}(?:[ \t]|$))")


class _PageConverter(MarkdownConverter):
    """markdownify's converter, its headings' lines marked as theirs."""

    def convert_hN(self, n: int, el: Tag, text: str, parent_tags: set[str]) -> str:
        markdown = super().convert_hN(n, el, text, parent_tags)  # type: ignore[misc]
        return markdown.replace("#", _HEADING + "#", 1) if markdown.startswith("\n\n#") else markdown

    def convert_sup(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        """An exponent written after its base as "2^24": run together, "2<sup>24</sup>" read "224" (a new user's
        Debian Administrator's Handbook: "a class-A range (with 224 IP addresses)"). A footnote's mark
        ("<sup>[1]</sup>", SQLite's "BETWEEN<sup>5</sup>": a word is no base) and a superscript after a space stay as
        they are."""
        before = el.previous_sibling
        if _EXPONENT.fullmatch(text) and isinstance(before, NavigableString) and _BASE.search(str(before)):
            return "^" + text
        return super().convert_sup(el, text, parent_tags)  # type: ignore[misc]

    def convert_code(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        """A code span that holds only a space is that space, shown: markdownify drops a span its whitespace trimmed
        to nothing (GNU m4's printf flags "‘+’, ‘-’, ‘<samp> </samp>’" read "‘+’, ‘-’, ‘’")."""
        if "_noformat" not in parent_tags and " " in text and not text.strip():
            return "` `"
        return super().convert_code(el, text, parent_tags)  # type: ignore[misc]

    convert_kbd = convert_samp = convert_code

    def convert_pre(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        """A code block that shows a fence of its own (Python-Markdown's examples of fenced code) is fenced by a
        longer one, as Markdown allows: fenced by three backticks, its own closed the block half way."""
        markdown = super().convert_pre(el, text, parent_tags)  # type: ignore[misc]
        # A line the splitter reads as a fence (in_code_fences): backticks, as the block's own fence is.
        shown = max((len(m.group(1)) for line in text.split("\n") if (m := FENCE.match(line)) and m.group(1)[0] == "`"),
                    default=0)
        if not shown:
            return markdown
        fence = "`" * (shown + 1)
        opening, _, rest = markdown.partition("```")
        body, _, closing = rest.rpartition("```")
        return opening + fence + body + fence + closing


# What an exponent's base ends with: a number or a variable's one letter ("O(N<sup>2</sup>)").
_BASE = re.compile(r"(?:\d|(?<![^\W\d_])[A-Za-z])\Z")
# What a superscript after its base holds when it is an exponent: "24", "-1", "2n", "n", "n+1"; not an ordinal's "st".
_EXPONENT = re.compile(r"[-+\u2212]?(?:\d{1,12}[a-z]?|\d{1,12}[-+]\w{1,4}|[A-Za-z](?:[-+]\w{1,4})?)")

# Inline elements whose words markdownify marks ("*em*", "**strong**", "[link](href)", "`code`").
INLINE = ["a", "b", "strong", "i", "em", "cite", "dfn", "var", "code", "tt", "kbd", "samp"]
_BREAK_AT_START = re.compile(r"\s*\n\s*")
_BREAK_AT_END = re.compile(r"\s*\n\s*\Z")


EMPHASIS = ["em", "i", "strong", "b"]
# Emphasis of the same kind: markdownify writes both of a pair alike ("**" for <b> and <strong>, "*" for <i>, <em>).
SAME_KIND = {"em": ["em", "i"], "i": ["em", "i"], "strong": ["strong", "b"], "b": ["strong", "b"]}
# Inline elements that add no mark of their own to an emphasis they alone hold (DocBook wraps each one in
# <span class="emphasis">), or whose mark goes round it whatever it holds (a link's "[...](...)").
HOLDERS = ("a", "span")


def _emphasis_runs_as_text(soup: BeautifulSoup) -> None:
    """Emphasis that is no emphasis is read as its words, so the words are the page's and its Markdown reads:

    - put on one token at a time: Sphinx writes a parameter's type that way ("<em>Optional</em><em>[</em>
      <em>str</em><em>]</em>", a link's <em> among them), which read as "*Optional**[**str**]*": Flask's API
      page had 10,848 asterisks, a chunk of it mostly brackets. A run of such pieces, side by side with
      nothing between, is read as its words. So is DocBook's "<strong>lib</strong><em>foo7</em><strong>-dev
      </strong>", each piece in a span of its own, which read "**lib***foo7***-dev**": the indexed text never
      held the package's name;
    - put inside an emphasis of the same kind: "**Add to the **~/.bashrc** file.**" closed the outer one early;
    - whose words begin or end with the mark's own star: a new user's requests API page listed its parameters
      as "<strong>**kwargs</strong>", read "****kwargs**".
    """
    def piece(node: PageElement | None) -> Tag | None:
        """The emphasis a node is, or the one a holder holds and nothing else."""
        while isinstance(node, Tag) and node.name in HOLDERS and len(node.contents) == 1:
            node = node.contents[0]
        return node if isinstance(node, Tag) and node.name in EMPHASIS else None

    def outermost(element: Tag) -> Tag:
        """The emphasis, or the outermost holder that holds it and nothing else."""
        while element.parent is not None and element.parent.name in HOLDERS and piece(element.parent) is element:
            element = element.parent
        return element

    def as_text(run: list[Tag]) -> None:
        if len(run) > 1:
            for element in run:
                element.unwrap()

    run: list[Tag] = []
    for element in soup.find_all(EMPHASIS):
        if run and piece(outermost(run[-1]).next_sibling) is element:
            run.append(element)
            continue
        as_text(run)
        run = [element]
    as_text(run)
    for element in soup.find_all(EMPHASIS):
        words = element.get_text().strip()
        if element.find_parent(SAME_KIND[element.name]) is not None or words[:1] == "*" or words[-1:] == "*":
            element.unwrap()


# Inline elements markdownify sets off with marks of their own ("*", "**", "`").
MARKED = [*EMPHASIS, "code", "tt", "kbd", "samp"]
# A name's joint at an element's edge, a word beyond it: "<i>transport</i>_destination", "<code>os.path</code>.join",
# "non-<code>null</code>". Letters that touch letters are not (Policy's placeholders "libraryname<em>soversion</em>"
# read as one word, unsearchable, when that was tried).
_WORD_AFTER = re.compile(r"\A(?:_|[.\-/]\w)")
_WORD_BEFORE = re.compile(r"(?:_|\w[.\-/])\Z")


def _marks_inside_words(soup: BeautifulSoup) -> None:
    """An element set off inside a name is read as its words: Postfix writes a parameter's variable part in italics
    ("<i>transport</i>_destination_concurrency_limit"), read as "*transport*_destination_concurrency_limit", a name
    no one searches for and the BM25 leg split in two."""
    for element in soup.find_all(MARKED):
        if element.find_parent("pre") is not None:
            continue
        before, after, words = element.previous_sibling, element.next_sibling, element.get_text()
        if not words.strip():
            continue
        if (isinstance(before, NavigableString) and _WORD_BEFORE.search(before) and not words[0].isspace()) or \
                (isinstance(after, NavigableString) and _WORD_AFTER.match(after) and not words[-1].isspace()):
            element.unwrap()


def _line_breaks_out_of_inline(soup: BeautifulSoup) -> None:
    """A source line break at the edge of an inline element, a word beside the element, is a space: markdownify
    moves a space outside the element's marks but drops a line break, so "<I>By a top level declaration.\n</I>A
    top-level" read "*By a top level declaration.*A top-level", two words glued (the Haskell 98 Report)."""
    for element in soup.find_all(INLINE):
        strings = element.find_all(string=True)
        if not strings or not (_BREAK_AT_START.match(strings[0]) or _BREAK_AT_END.search(strings[-1])) \
                or element.find_parent("pre") is not None or not element.get_text().strip():
            continue   # most elements have no line break at an edge: nothing else is looked up for them
        block = _block(element)
        before, after = strings[0].find_previous(string=True), strings[-1].find_next(string=True)
        head = _BREAK_AT_START.match(strings[0])
        if head and before is not None and str(before)[-1:].isalnum() and _block(before) is block:
            strings[0].replace_with(spaced := NavigableString(" " + strings[0][head.end():]))
            strings[0] = spaced   # (also the last string, when it is the only one)
        tail = _BREAK_AT_END.search(strings[-1])
        if tail and after is not None and str(after)[:1].isalnum() and _block(after) is block:
            strings[-1].replace_with(NavigableString(strings[-1][:tail.start()] + " "))


def _block(node: PageElement) -> Tag | None:
    """The nearest element around ``node`` that is not inline."""
    return next((parent for parent in node.parents if parent.name not in INLINE), None)


def _refresh_target(refresh: str) -> str:
    """The address of a ``<meta http-equiv="refresh" content="0; url=X">`` ("0; X" and quotes too), or ""
    for a page that only reloads itself."""
    _, _, rest = refresh.partition(";")
    return re.sub(r"^\s*url\s*=\s*", "", rest, flags=re.I).strip().strip("'\"").strip()


# Where an anchor's words begin, written into the text before conversion and taken out after it: what
# markdownify makes of the page (cells, lists, fenced code) is then measured, not predicted. Characters of
# Unicode's private use area, which no page's own text is expected to hold and markdownify leaves alone.
_MARK_OPEN, _MARK_CLOSE = "\ue000", "\ue001"
_MARK = re.compile(f"{_MARK_OPEN}(\\d+){_MARK_CLOSE}")


def _mark_anchors(soup: BeautifulSoup) -> list[str]:
    """Put a numbered mark where each anchor's words begin (the first text inside it, else the first after
    it: ``<a name="x"></a>`` stands before what it names) and return the anchors' names by number. A page
    already holding a mark character keeps its text as it is and names no anchor."""
    if any(_MARK_OPEN in s or _MARK_CLOSE in s for s in soup.find_all(string=True)):
        return []
    names: list[str] = []
    for element in soup.find_all(lambda tag: tag.has_attr("id") or (tag.name == "a" and tag.has_attr("name"))):
        start = next((s for s in element.next_elements if isinstance(s, NavigableString) and s.strip()
                      and s.parent is not None and s.parent.name not in ("script", "style")), None)
        if start is None:
            continue
        for name in dict.fromkeys(str(v).strip() for v in (element.get("id"), element.get("name")) if v):
            if name and not any(c.isspace() for c in name):
                mark = f"{_MARK_OPEN}{len(names)}{_MARK_CLOSE}"
                names.append(name)
                link = start.find_parent("a", href=True)
                if link is not None and link.get_text() == link["href"]:
                    link.insert_before(mark)   # a link shown as its address is written <address>: as it was
                    continue
                lead = len(start) - len(start.lstrip())
                marked = NavigableString(f"{start[:lead]}{mark}{start[lead:]}")
                start.replace_with(marked)
                start = marked
    return names


def _drop_empty_anchors(soup: BeautifulSoup) -> None:
    """Once marked, an anchor with no words of its own goes, and the text around it becomes one string: texinfo
    writes an index entry's ``<span id="index-...">`` on a line of its own inside a paragraph, and its lines' breaks
    on either side read as a blank line ("`R_PAPERSIZE`", blank line, "on the `make` command line": 101 of 333 in
    R's manuals)."""
    for element in soup.find_all(["span", "a"]):
        if not element.contents and not element.has_attr("href"):
            element.extract()
    soup.smooth()


def _unmark(text: str, names: list[str]) -> HtmlPage:
    """The text without its marks, and each marked anchor's offset in it (the first, if marked twice)."""
    if not names:
        return HtmlPage(text)
    anchors: dict[str, int] = {}
    parts, cut, removed = [], 0, 0
    for m in _MARK.finditer(text):
        parts.append(text[cut:m.start()])
        removed += m.end() - m.start()
        anchors.setdefault(names[int(m.group(1))], m.end() - removed)
        cut = m.end()
    parts.append(text[cut:])
    return HtmlPage("".join(parts), anchors)


def _says_again(picture: Tag, alt: str) -> bool:
    """Whether a picture's alt text is the words beside it, the whole of its parent's text (HAProxy's "yes" over a
    tick whose alt is "yes": every "May be used in sections" table read "yes yes | no no"). Read no further than the
    alt text is long: a page's hundred icons in one long paragraph would each read all of it."""
    words, length = [], 0
    for text in picture.parent.stripped_strings if picture.parent is not None else ():
        length += len(text) + 1
        if length > len(alt) + 1:
            return False
        words.append(text)
    return " ".join(words).casefold() == alt.casefold()


def _removed(element: Tag) -> bool:
    """Whether ``element`` was decomposed, itself or with a block around it. (bs4's ``decomposed`` looks its flag up
    as a child tag's name on a live element, a search of the whole subtree each time: BIND 9's reference page read
    in 10.1 s with it, 8.3 s without.)"""
    return bool(element.__dict__.get("_decomposed"))


def _drop_site_chrome(soup: BeautifulSoup, title: str) -> None:
    """What a site wraps around every page, found by what it is rather than by one generator's names: blocks
    whose class or id says navigation (``ul.nav``, ``div.mainmenu``, ``p.menu``, ``#sidebar``,
    ``#footer``), a page's own table of contents (a list of links into the page: its headings follow),
    links that only move the reader ("<-previous", "Next", "Up", "Top"; any link whose ``rel`` says next,
    previous, up or contents, with the labels left around it; a row of navigation buttons) and controls
    (buttons, ``javascript:`` links)."""
    page: list[int] = []   # the page's text length, measured once a block's name says navigation
    marks_main = soup.select_one(MAIN_PART) is not None
    in_page = [link for link in soup.find_all("a", href=True) if str(link["href"]).startswith("#")]
    headings = _heading_ids(soup) if len(in_page) >= 3 else set()
    # Only blocks around a link to one of the page's headings can be its table of contents.
    around_contents = {id(block) for link in in_page if str(link["href"])[1:] in headings for block in link.parents}
    gone: set[int] = set()   # boxes removed with the table of contents they held, before their turn
    # Innermost first: a table of contents goes, not the title box around it.
    for element in reversed(soup.find_all(BLOCKS)):
        # The heading over a table of contents goes with it, before its own turn (docutils' HTML pages: 45 of
        # docutils-doc's failed to read, a new user's folder).
        if id(element) in gone or _removed(element):
            continue
        if _names_navigation(element):
            page = page or [_unlinked_words(soup)]
            if not _holds_the_page(element, page[0], marks_main, title) and not _a_box_of_prose(element):
                element.decompose()
                continue
        if id(element) in around_contents and _in_page_contents(element, headings):
            # Its box goes too when nothing but a label is left there ("► Table Of Contents"), or the entry of the
            # page's own title the list hung from (docutils' contents box: "Contents - [cmake-buildsystem(7)]", the
            # shell a new user's CMake pages kept after their entries went).
            while element.parent is not None and element.parent.name != "body" and \
                    _only_contents_left(element.parent, element, headings):
                element = element.parent
                gone.add(id(element))
            heading = _heading_of(element, title)
            lead_in = _contents_lead_in(element)
            element.decompose()
            for above in (heading, lead_in):
                if above is not None:
                    above.decompose()
    bars = []
    labelled: dict[int, Tag] = {}   # blocks holding a link right after "Next:", "Previous:" or "Up:"
    for element in soup.find_all("a", href=True):
        if NAVIGATION_RELS.intersection(_words(element, "rel")) and element.parent is not None:
            bars.append(element.parent)
            element.decompose()
        elif _moves_the_reader(element) or _permalink(element):
            element.decompose()
        elif str(element["href"]).strip().lower().startswith("javascript:"):
            # A script that opens a page is a link to it (Erlang/OTP's every link into another application,
            # "javascript:erlhref('../../../../doc/../','kernel','file.html#open-2')": 4,331 on a new user's 113
            # pages, read as "see ." and type lines ending in "="); any other is a control ("Expand All").
            opened = _SCRIPT_PAGE.search(str(element["href"]))
            if opened:
                element["href"] = _script_page(opened)
            elif element.get("data-link"):
                # gi-docgen's link into another library's manual: its script finds the library's address by the
                # namespace ("javascript:void(0)" data-namespace="Gdk" data-link="method.Drop.finish.html": 1,785
                # links on a new user's GTK 4 pages, read as "by calling ." when dropped as controls).
                namespace = str(element.get("data-namespace") or "")
                element["href"] = f"../{namespace}/{element['data-link']}" if namespace else str(element["data-link"])
            else:
                element.decompose()
        elif element.parent is not None and _after_move_label(element):
            labelled[id(element.parent)] = element.parent
    for bar in bars:
        if not _removed(bar) and NAVIGATION_LABELS.fullmatch(bar.get_text(" ")):
            bar.decompose()
    for bar in labelled.values():
        if not _removed(bar) and _labelled_move_bar(bar):
            bar.decompose()
    for element in reversed(soup.find_all(BLOCKS)):
        if not _removed(element) and _navigation_bar(element):
            element.decompose()
    for row in _link_rows(soup):
        for node in row:
            node.extract()
    for element in soup.find_all("button"):
        element.decompose()
    # A control drawn without <button>: a few words a script answers a click on (lxml's pages open every page with
    # "Menu", ``div.menutrigger[onclick]``, which kept a page of its sidebar alone as a chunk "Menu"). A heading
    # that folds its section keeps its words.
    for element in soup.select("[onclick], [role=button]"):
        if not _removed(element) and element.name not in HEADINGS and not element.find(HEADINGS) \
                and len(_WORD.findall(element.get_text(" "))) <= CONTROL_WORDS:
            element.decompose()
    # The same page in other languages ("Available languages: en | fr | ja"): links, some marked with the
    # language they lead to, and a label. A page in two languages marks one (Apache's: the page's own "en" is a
    # link without hreflang).
    blocks = {id(link.parent): link.parent for link in soup.find_all("a", hreflang=True) if link.parent is not None}
    for block in blocks.values():
        if _removed(block):   # inside a block that went before it
            continue
        links = block.find_all("a")
        label = len(_WORD.findall(block.get_text(" "))) - sum(len(_WORD.findall(a.get_text(" "))) for a in links)
        if len(links) >= 2 and label <= 5:
            block.decompose()


def _heading_of(block: Tag, title: str) -> Tag | None:
    """The heading right above a block that is all its section holds (the next heading is of its level or
    higher, or none follows), unless it is the page's title: Apache's "Topics" and "Directives" over a page's
    contents lists."""
    heading = block.find_previous_sibling(True)
    if heading is None or heading.name not in HEADINGS or _repeats_title(heading, title) or \
            any(str(node).strip() for node in takewhile(lambda node: node is not block, heading.next_siblings)):
        return None
    after = block.find_next_sibling(True)
    return heading if after is None or after.name in HEADINGS and int(after.name[1]) <= int(heading.name[1]) \
        else None


def _drop_site_heading(soup: BeautifulSoup, title: str) -> None:
    """A heading above the page's own title is the site's name (Exim's "Exim Internet Mailer" on every
    page), and a page's first heading is its title to every step after this one. The page's title is the
    first heading (or block named a title: SQLite's ``div.fancy_title``) that the HTML ``<title>`` mostly
    repeats; the heading before it goes when all that stands before it is a banner's few words. A site's name is
    one heading: several before it are the page's own (the gettext FAQ's "Frequently Asked Questions for GNU
    gettext" and "Questions" above "Problems building GNU gettext", whose words its <title> shares). Above the
    title, a block saying only the site's name as the <title> gives it, and a breadcrumb trail, go too."""
    if not title.strip():
        return
    for element in soup.css.iselect("h1, h2, h3, [class*=title], [id*=title]"):
        if _repeats_title(element, title):
            break
    else:
        return
    # The title said twice, by the site's bar and over the page's text (Erlang/OTP's every page: "# heart" "# heart"),
    # is the page's title once, where its text begins.
    again = _last_inside(element).find_next(HEADINGS)
    if again is not None and again.get_text(" ", strip=True) == element.get_text(" ", strip=True) and \
            not _words_between(element, again):
        element.decompose()
        element = again
    before = element.find_all_previous(string=True)
    if sum(len(_WORD.findall(s)) for s in before) > BANNER_WORDS:
        return
    ancestors = {id(parent) for parent in element.parents}
    headings = [heading for heading in element.find_all_previous(HEADINGS) if id(heading) not in ancestors]
    if len(headings) == 1:
        headings[0].decompose()
    # The <title>'s other parts name the site ("mod_deflate - Apache HTTP Server Version 2.4"): a block above the
    # page's title that says only that is the site's banner; so is a trail of links to the pages above this one, and
    # a list of links to other pages alone (Pygments' "Home, Languages, Styles, FAQ, Get it, Docs" opened every page).
    site = {part.lower() for part in TITLE_PARTS.split(title) if not _repeats_title(element, part)}
    for block in element.find_all_previous(BANNER_BLOCKS):
        if not _removed(block) and id(block) not in ancestors and \
                (block.get_text(" ", strip=True).lower() in site or _breadcrumb_trail(block) or _site_menu(block)):
            block.decompose()


def _script_page(opened: re.Match[str]) -> str:
    """The path from this page to the one a script opens: in a folder of the name it is given beside this page's (an
    Erlang/OTP application's pages are a folder of its name, its siblings the other applications'), else as given."""
    folder, page = opened.group("folder"), opened.group("page")
    return f"../{folder}/{page}" if folder else page


def _last_inside(element: Tag) -> PageElement:
    """The last of what ``element`` holds, at any depth (itself when empty): what follows it follows the element."""
    last: PageElement = element
    while isinstance(last, Tag) and last.contents:
        last = last.contents[-1]
    return last


def _words_between(first: Tag, second: Tag) -> int:
    """How many words stand after ``first`` (and all it holds) and before ``second``."""
    words = 0
    for node in _last_inside(first).next_elements:
        if node is second:
            break
        if isinstance(node, NavigableString):
            words += len(_WORD.findall(node))
    return words


def _site_menu(block: Tag) -> bool:
    """A list of at least two items, each one link to another page and no other words."""
    items = block.find_all("li", recursive=False) if block.name in ("ul", "ol") else []
    if len(items) < 2:
        return False
    for item in items:
        links = item.find_all("a", href=True)
        if len(links) != 1 or str(links[0]["href"]).startswith("#") or \
                item.get_text(" ", strip=True) != links[0].get_text(" ", strip=True):
            return False
    return True


def _breadcrumb_trail(block: Tag) -> bool:
    """Links to the pages above this one, one after another with nothing but a trail's mark between them
    ("Apache > HTTP Server > Documentation > Version 2.4", "Docs » Modules »"); the page's own name may end it."""
    pieces = _outside_links(block)
    if len(pieces) < 3:   # fewer than two links
        return False
    lead, *between, tail = pieces
    return not lead.strip() and all(TRAIL_MARK.fullmatch(piece) for piece in between) and \
        (not tail.strip() or bool(TRAIL_END.fullmatch(tail)))


def _repeats_title(element: Tag, title: str) -> bool:
    """Whether the HTML ``<title>`` mostly repeats an element's words (at least half of them)."""
    wanted = set(_WORD.findall(title.lower()))
    words = _WORD.findall(element.get_text(" ", strip=True).lower())
    return bool(words) and sum(w in wanted for w in words) >= len(words) / 2


def _names_navigation(element: Tag) -> bool:
    """Whether a block's class or id says it is a site's navigation, banner or footer. An id made from the block's
    own heading names a section of the page (Sphinx: "The menu Governor" is ``section#the-menu-governor``, the
    kernel's cpuidle page's whole account of that governor)."""
    classes = _words(element, "class")
    if TITLE_NAMES.intersection(classes):
        return False
    if _say_navigation(classes):
        return True
    named = _words(element, "id")
    return _say_navigation(named) and not _heading_slug(element, named)


def _say_navigation(words: set[str]) -> bool:
    return bool(CHROME_NAMES.intersection(words)) or any(
        w != NAV_AFFIX and (w.startswith(NAV_AFFIX) or w.endswith(NAV_AFFIX)) for w in words)


def _heading_slug(element: Tag, named: set[str]) -> bool:
    """Whether the block's id words ``named`` are its first heading's words (a numbered duplicate's number aside)."""
    heading = element.find(HEADINGS)
    return heading is not None and \
        {w for w in named if not w.isdigit()} <= set(_WORD.findall(heading.get_text(" ").lower()))


def _a_box_of_prose(element: Tag) -> bool:
    """A sidebar that is the page's own box of prose, not a site's links: DocBook and Sphinx (``.. sidebar::``)
    write their "TIP" and "GOING FURTHER" boxes as ``div.sidebar`` (a quarter of the Debian Administrator's
    Handbook). Its words are mostly not link words: a site's sidebar is links."""
    if "sidebar" not in _words(element, "class", "id"):
        return False
    linked_words = [(len(_WORD.findall(text)), text.strip()) for text in (a.get_text(" ") for a in element("a"))]
    # An address the box prints ("-> https://www.debian.org/releases/...#security-archive") is one word, not the
    # dozen its parts make: counted as link words, they dropped the handbook's short NOTE and TIP boxes that end in one.
    printed = sum(n - 1 for n, text in linked_words if _PRINTED_ADDRESS.match(text))
    words = len(_WORD.findall(element.get_text(" "))) - printed
    linked = sum(n for n, _ in linked_words) - printed
    return words - linked >= PROSE_WORDS and linked <= words / 3


def _words(element: Tag, *attributes: str) -> set[str]:
    """The words of some attributes (class, id, rel), lower case, split at white space, "-" and "_"."""
    values = (element.get(a) for a in attributes)
    text = " ".join(v if isinstance(v, str) else " ".join(v) for v in values if v)
    return set(re.split(r"[\s_-]+", text.lower())) - {""}


def _moves_the_reader(link: Tag) -> bool:
    """A link that only takes the reader to the previous, next or parent page: its text says so ("<-previous",
    "Next »", "Up") and so does an arrow in it, its ``rel`` or its class. "Next" alone can be a name the page
    documents (SQLite's Next opcode). A link that is only a picture says it with the picture's alt text alone
    (Apache's ``<img alt="top">`` under every section and ``<img alt="<-">`` to the parent page)."""
    text = link.get_text(" ", strip=True)
    if not text:
        said = " ".join(str(img.get("alt") or "").strip() for img in link.find_all("img")).strip()
        return bool(said) and bool(NAVIGATION_LINK.fullmatch(said) or ARROWS.search(said) and not _WORD.search(said))
    if not NAVIGATION_LINK.fullmatch(text):
        return False
    return bool(ARROWS.search(text) or NAVIGATION_WORDS.intersection(_words(link, "rel", "class")))


def _permalink(link: Tag) -> bool:
    """A link to an anchor of the page whose text is only a mark (:data:`PERMALINK_MARKS`)."""
    return str(link["href"]).startswith("#") and link.get_text(strip=True) in PERMALINK_MARKS


def _after_move_label(link: Tag) -> bool:
    """Whether the words right before a link are a label of moving (:data:`MOVE_LABEL`)."""
    return isinstance(link.previous_sibling, NavigableString) and bool(MOVE_LABEL.search(str(link.previous_sibling)))


def _labelled_move_bar(block: Tag) -> bool:
    """texinfo's "Next: X, Previous: Y, Up: Z [Contents][Index]" without ``rel``: at least two links each right after
    a label of moving, and nothing but labels and punctuation besides the links."""
    if sum(_after_move_label(a) for a in block.find_all("a")) < 2:
        return False
    return bool(NAVIGATION_LABELS.fullmatch("".join(_outside_links(block))))


def _outside_links(block: Tag) -> list[str]:
    """A block's words outside its links, cut where each link stands: before the first, between each two, after the
    last (one piece for a block without links)."""
    inside = {id(a) for a in block.find_all("a")}
    pieces, last = [""], None
    for string in block.find_all(string=True):
        link = string.find_parent("a")
        if id(link) not in inside:
            pieces[-1] += string
            link = None
        elif link is not last:
            pieces.append("")
        last = link
    return pieces


def _navigation_bar(block: Tag) -> bool:
    """A block of at least two links, each a navigation button (:data:`NAVIGATION_BUTTON`), and nothing but
    brackets and separators around them. One such link alone can be a page's own words (SQLite's Next opcode);
    a row of them is the bar a generator puts above and below each part of a manual."""
    links = block.find_all("a")
    if len(links) < 2:
        return False
    texts = [a.get_text(" ", strip=True) for a in links]
    if not all(text and NAVIGATION_BUTTON.fullmatch(text) for text in texts):
        return False
    return len(_WORD.findall(block.get_text(" "))) == sum(len(_WORD.findall(text)) for text in texts)


def _link_rows(soup: BeautifulSoup) -> list[list[PageElement]]:
    """Rows of navigation buttons that stand among a block's other content rather than in a block of their own:
    at least two buttons side by side (:data:`NAVIGATION_BUTTON`) with nothing but separators and leftover
    labels between them (the Haskell 98 Report's "top | back | next | contents | function index" under the
    report's name at the top and bottom of every page, ``<br>`` before and after)."""
    rows: list[list[PageElement]] = []
    seen: set[int] = set()
    for link in soup.find_all("a", href=True):
        if id(link) in seen or not _button(link):
            continue
        row: list[PageElement] = [link]
        for step in ("previous_sibling", "next_sibling"):
            node = getattr(link, step)
            while node is not None and (_button(node) or isinstance(node, NavigableString)
                                        and NAVIGATION_LABELS.fullmatch(str(node))):
                row.append(node)
                node = getattr(node, step)
        seen.update(id(node) for node in row)
        if sum(isinstance(node, Tag) for node in row) >= 2:
            rows.append(row)
    return rows


def _button(node: PageElement) -> bool:
    """A link whose words are a navigation button's (a link with no words, an image's, is none)."""
    if not isinstance(node, Tag) or node.name != "a":
        return False
    text = node.get_text(" ", strip=True)
    return bool(text) and bool(NAVIGATION_BUTTON.fullmatch(text))


def _holds_the_page(element: Tag, page: int, marks_main: bool, title: str) -> bool:
    """Whether a block is where the page's own words are, whatever its name says (Read the Docs' theme puts
    the whole page in ``div.wy-nav-content``): it holds the page's main part, half its words outside links
    (``page``: the page's) and more than the labels of a bar of moving links (LaTeX2HTML's "Next: X Up: Y
    Previous: Z" was more than half of the text of a short "See X" page, a texinfo menu of 142 links most of a
    Top node's), or, on a page that marks no main part, its title: a heading the ``<title>`` repeats (any heading
    when there is no ``<title>``). mdBook's ``div.menu-bar`` holds an ``h1`` (the book's name, on every page)
    while the page stands in ``<main>`` beside it; nginx.org's ``div#menu`` holds ``<h1>nginx</h1>`` above the
    site's links on pages titled "Module ngx_http_gzip_module"."""
    if element.select_one(MAIN_PART) is not None:
        return True
    if not marks_main and any(not title.strip() or _repeats_title(heading, title)
                              for heading in element.select("h1, h2")):
        return True
    outside = " ".join(_outside_links(element))
    return _unlinked_words(outside) > 0.5 * page and not NAVIGATION_LABELS.fullmatch(outside)


def _drop_contents_under_their_heading(soup: BeautifulSoup) -> None:
    """A heading that says "Table of Contents" (or "Contents", "Topics") and the list of links to other pages under
    it: the zsh FAQ's front page, each question's title a heading and a link, was in a new user's top 3 for 3 of 24
    questions and answered none. A page's own contents (links to its headings) are :func:`_drop_site_chrome`'s."""
    for heading in soup.find_all(HEADINGS):
        label = heading.get_text(" ", strip=True)
        listing = heading.find_next_sibling()
        if not _WORD.search(label) or not CONTENTS_LABEL.fullmatch(label) or listing is None \
                or listing.name not in ("dl", "ul", "ol"):
            continue
        links = [str(a["href"]) for a in listing.find_all("a", href=True)]
        if len([h for h in links if not h.startswith("#")]) >= 3 and _links_alone(listing):
            listing.decompose()
            heading.decompose()


def _an_index(terms: Tag) -> bool:
    """Whether a definition list is a book's index (:data:`INDEX_TERMS`)."""
    entries = [dt.get_text(" ", strip=True) for dt in terms.find_all("dt")]
    return len(entries) >= INDEX_TERMS and sum(bool(SECTION_NUMBER.match(e)) for e in entries) < 0.2 * len(entries) \
        and _links_alone(terms)


def _links_alone(block: Tag) -> bool:
    """Whether nearly all of a block's words are its links' (:data:`INDEX_UNLINKED_SHARE`)."""
    return _unlinked_words(block) <= INDEX_UNLINKED_SHARE * len(_WORD.findall(block.get_text(" ")))


def _unlinked_words(element: Tag | str) -> int:
    """How many words a block holds outside its links (``element``: the block, or those words already joined)."""
    return len(_WORD.findall(element if isinstance(element, str) else " ".join(_outside_links(element))))


def _drop_edge_rules(soup: BeautifulSoup) -> None:
    """A rule with no words of the page before it, or none after it, separates nothing: texinfo draws one under the
    navigation bar and one over the bar at the foot, and with the bars gone 35 of a new user's 36 SBCL internals
    pages began with "---" (a chunk's first line)."""
    def words(elements: Iterable[PageElement]) -> bool:   # (the <head> is gone by now, with the site's chrome)
        return any(isinstance(e, NavigableString) and _WORD.search(e) for e in elements)

    rules = soup.find_all("hr")
    while rules and not words(rules[0].previous_elements):
        rules.pop(0).decompose()
    while rules and not words(rules[-1].next_elements):
        rules.pop().decompose()


def _drop_generator_note(soup: BeautifulSoup) -> None:
    """What made the page (:data:`GENERATOR_NOTE`), and the few words a site adds after it at the page's end ("Zsh
    version 5.9, released on May 14, 2022.", texi2any's PRE_BODY_CLOSE). Looked for by its word, not by reading
    every paragraph's text."""
    for note in {id(p): p for s in soup.find_all(string=_GENERATED) if (p := s.find_parent(["p", "address"]))}.values():
        if not _removed(note) and GENERATOR_NOTE.fullmatch(note.get_text(" ")):
            after = list(note.next_siblings)
            if len(_WORD.findall(" ".join(s.get_text(" ") for s in after))) <= BANNER_WORDS:
                for sibling in after:
                    sibling.extract()
            note.decompose()


def _code_fragments_as_blocks(soup: BeautifulSoup) -> None:
    """Doxygen's code blocks as the code blocks they show: it writes one as a div of lines (``div.fragment`` >
    ``div.line``), which read as a paragraph per line, and a header's listing with each line's number in front
    ("94#define SSH_TIMEOUT_USER -2"; a new user's libssh manual: 41 listings, 360 of its 976 chunks)."""
    for fragment in soup.select("div.fragment"):
        lines = fragment.select("div.line")
        if not lines:
            continue
        for number in fragment.select("span.lineno"):
            number.decompose()
        block = soup.new_tag("pre")
        block.string = "\n".join(line.get_text("").replace("\u00a0", " ").rstrip() for line in lines)
        fragment.replace_with(block)


# A manual page as groff prints it: its name and section at both ends of its first line ("QMGR(8)   QMGR(8)"), and
# the last line ends with them.
MANUAL_HEADER = re.compile(r"[ \t]*(?P<name>[\w.:+-]+\(\w{1,6}\))[ \t]{2,}(?:\S.*[ \t]{2,})?(?P=name)[ \t]*")


def _manual_pages_as_text(soup: BeautifulSoup) -> None:
    """A manual page that a page shows as groff printed it, in one ``<pre>`` (Postfix's 71 manual pages), as the text
    it is: its name the page's title, a section's title (a line at the margin) a heading, each paragraph a paragraph,
    its links kept, and a word the printed line's end hyphenated whole ("dis-\n carded", a link's word split in two
    links). Read as one code block, its links lost their targets and its hyphenated words were two."""
    for block in soup.find_all("pre"):
        words = block.get_text()
        lines = words.strip("\n").splitlines()
        header = MANUAL_HEADER.fullmatch(lines[0]) if lines else None
        if header is None or not lines[-1].rstrip().endswith(header.group("name")):
            continue
        markup = block.decode_contents().strip("\n").splitlines()
        if len(markup) != len(lines):   # a tag's attributes broken over lines: each line's words are not its own
            continue
        vocabulary = hyphen_vocabulary(words)
        replacement = soup.new_tag("div")
        title = soup.new_tag("h1")
        title.string = header.group("name")
        replacement.append(title)
        # The first line is the header (the page's title above), the last the footer (its source, date and name).
        for heading, paragraph in _manual_parts(lines[1:-1], markup[1:-1]):
            if heading:
                element = soup.new_tag("h2")
                element.string = heading
            else:
                element = soup.new_tag("p")
                paragraph = join_line_end_hyphens(_SPLIT_LINK.sub(r"\g<open>\g<first>\g<second></a>", paragraph),
                                                  INDENTED_LINE_END_HYPHEN, vocabulary, groff=True)
                element.extend(list(BeautifulSoup(paragraph, "html.parser").contents))
            replacement.append(element)
        block.replace_with(replacement)


def _manual_parts(lines: list[str], markup: list[str]) -> list[tuple[str, str]]:
    """A printed manual page's parts from its lines (their words and their markup, line for line): (a section's
    title, "") for a line at the margin, ("", a paragraph's markup) for indented lines up to a blank line."""
    parts: list[tuple[str, str]] = []
    paragraph: list[str] = []
    for text, line in [*zip(lines, markup), ("", "")]:
        if text.strip() and text[:1].isspace():
            paragraph.append(line)
            continue
        if paragraph:
            parts.append(("", "\n".join(paragraph)))
            paragraph = []
        if text.strip():
            parts.append((text.strip(), ""))
    return parts


# A linked word groff hyphenated at a line's end, each part its own link to the same place: "<a href="#mydestination">
# mydesti</a>-\n       <a href="#mydestination">nation</a>".
_SPLIT_LINK = re.compile(r'(?P<open><a href="(?P<href>[^"]*)">)(?P<first>[^<>]*[^\W\d_])</a>[-\u2010]\n[ \t]*'
                         r'<a href="(?P=href)">(?P<second>[^\W\d_][^<>]*)</a>')


def _numbered_code_as_blocks(soup: BeautifulSoup) -> None:
    """A code listing drawn as a table of two cells, the lines' numbers in one and the code in the other (gtk-doc's
    ``table.listing_frame``, Pygments' ``table.highlighttable``), as the code block it shows: read as a table it was
    one row, the code's line breaks gone and "1 2 3 ... 19" beside it (a new user's cairo manual: 26 chunks)."""
    for table in soup.find_all("table"):
        if _removed(table):
            continue
        rows = _own_rows(table)
        cells = rows[0].find_all(["td", "th"], recursive=False) if len(rows) == 1 else []
        if len(cells) != 2 or not (numbers := cells[0].get_text().split()) or not all(n.isdigit() for n in numbers):
            continue
        code = cells[1].find("pre")
        first = int(numbers[0])
        if code is not None and [int(n) for n in numbers] == list(range(first, first + len(numbers))):
            table.replace_with(code.extract())


def _title_box_as_heading(soup: BeautifulSoup) -> None:
    """Doxygen's page title, a box of its own (``div.headertitle > div.title``) that read as a line of text, as the
    page's heading: the headings above a window start there, and a page titled "Chapter 2: A deeper insight on
    authentication" starts chapter 2 for "Chapter 2" elsewhere. The group a page belongs to (``div.ingroups``, a
    link inside the title) stands below it."""
    for title in soup.select("div.headertitle > div.title"):
        for group in title.select("div.ingroups"):
            title.insert_after(group.extract())
        title.name, title.attrs = "h1", {}


def _sections_out_of_lists(soup: BeautifulSoup) -> None:
    """A list whose every item opens with a heading is a page's sections laid out as a list (Javadoc's "Method
    Details" and each method's section, items of nested lists): read as a list, each heading stood behind a bullet
    ("- ## Method Summary", "  - ### getValue"), which neither the splitter nor the headings above a window take
    for a heading."""
    for listing in reversed(soup.find_all(["ul", "ol"])):
        items = listing.find_all("li", recursive=False)
        if items and all(_opens_with_heading(item) for item in items):
            for item in items:
                item.unwrap()
            listing.unwrap()


def _opens_with_heading(element: Tag) -> bool:
    """Whether the first thing in ``element`` (inside any section or div that opens it) is a heading."""
    while True:
        first = next((c for c in element.children if not (isinstance(c, NavigableString) and not c.strip())), None)
        if not isinstance(first, Tag):
            return False
        if first.name in HEADINGS:
            return True
        if first.name not in ("section", "div"):
            return False
        element = first


def _definition_items_closed(soup: BeautifulSoup) -> None:
    """Each ``<dt>`` and ``<dd>`` that lxml left inside the one before it (LaTeX2HTML writes its index's 749 terms
    without ``</dt>``: nested 749 deep, past Python's recursion limit, the page failed to read) stands after it, as a
    browser closes the one before."""
    for item in soup.find_all(["dt", "dd"]):
        while item.parent is not None and item.parent.name in ("dt", "dd"):
            item.parent.insert_after(item.extract())


def _heading_ids(soup: BeautifulSoup) -> set[str]:
    """The ids a link to a heading of the page uses: a heading's own, an anchor's inside it, and those of
    the sections a heading opens."""
    ids: set[str] = set()
    for heading in soup.find_all(HEADINGS):
        for element in [heading, *heading.find_all(True)]:
            ids.update(str(v) for v in (element.get("id"), element.get("name")) if v)
        parent = heading.parent
        if parent is not None and parent.get("id") and _opens(parent, heading):
            ids.add(str(parent["id"]))
    return ids


def _opens(section: Tag, heading: Tag) -> bool:
    """Whether ``heading`` opens ``section``: nothing stands before it there but empty anchors and a bar of moving
    links (texinfo's single-page manuals put each node's "Next: X, Previous: Y, Up: Z" bar above its heading)."""
    before: list[str] = []
    for node in section.descendants:   # in reading order, up to the heading only: a section may be a whole manual
        if node is heading:
            return bool(NAVIGATION_LABELS.fullmatch("".join(before)))
        if isinstance(node, NavigableString):
            link = node.find_parent("a")
            if link is None or not NAVIGATION_RELS.intersection(_words(link, "rel")):
                before.append(str(node))
    return False


def _only_contents_left(box: Tag, contents: Tag, headings: set[str]) -> bool:
    """Whether ``box`` holds nothing but the table of contents ``contents``, a label ("Contents") and links to the
    page's own headings (the title entry a contents list hangs from)."""
    words = box.get_text(" ", strip=True).replace(contents.get_text(" ", strip=True), "", 1)
    listed = {id(link) for link in contents.find_all("a")}
    for link in box.find_all("a", href=True):
        href = str(link["href"])
        if href.startswith("#") and href[1:] in headings and id(link) not in listed:
            words = words.replace(link.get_text(" ", strip=True), "", 1)
    return CONTENTS_LABEL.fullmatch(words) is not None


# What holds one entry of a table of contents.
CONTENTS_ENTRIES = ("li", "dt", "dd", "p", "tr", "div")


def _contents_lead_in(contents: Tag) -> Tag | None:
    """The words right above a page's table of contents that only announce it ("Topics covered in this document:",
    over each of Postfix's READMEs' lists): a paragraph shorter than a sentence of prose, ending with a colon."""
    before = contents.find_previous_sibling()
    if before is None or before.name != "p":
        return None
    said = before.get_text(" ", strip=True)
    return before if said.endswith(":") and len(_WORD.findall(said)) < PROSE_WORDS else None


def _in_page_contents(element: Tag, headings: set[str]) -> bool:
    """A list or box of at least three links to headings of the page itself, with next to no other text:
    the page's table of contents (SQLite's, Apache's), which the headings it lists repeat. A list of links
    to entries of the page (the options a statement takes) is the page's own words."""
    if element.name not in ("ul", "ol", "dl", "div", "nav", "table", "td", "aside"):
        return False
    links = element.find_all("a", href=True)
    if len(links) < 3 or not all(str(a["href"]).startswith("#") and str(a["href"])[1:] in headings for a in links):
        return False
    # Each heading an entry of its own: the types a parameter takes, links in one item ("Type: <AesKeyGenParams> |
    # <RsaHashedKeyGenParams> | ..." in Node.js's webcrypto page, one cell of its stream page's table), are the
    # page's words.
    if len({id(a.find_parent(CONTENTS_ENTRIES) or element) for a in links}) < 3:
        return False
    # A list a sentence of the page introduces is that sentence's ("The possible representations for a type are:"
    # over links to the sections on each: a new user's Rust Reference lost the list).
    before = element.find_previous_sibling()
    if element.name in ("ul", "ol") and before is not None and before.name == "p":
        said = before.get_text(" ", strip=True)
        if said.endswith(":") and len(_WORD.findall(said)) >= PROSE_WORDS:
            return False
    text = len(element.get_text(" ", strip=True))
    linked = sum(len(a.get_text(" ", strip=True)) for a in links)
    return text - linked <= 0.25 * text


# The admonitions DocBook writes (its <note>, <tip>, ... elements, each a div of that class).
ADMONITIONS = ("note", "tip", "warning", "caution", "important")


def _admonitions_out_of_tables(soup: BeautifulSoup) -> None:
    """A DocBook admonition drawn with its icon (``admon.graphics``) as its label and its words: a table holds the
    icon, the label and, in a row below, the text, read as "| [Note] | Note |" over a table row of prose (48 of the
    Guide for Debian Maintainers' pages); the label, in bold, stands before the text instead."""
    for box in soup.select(", ".join(f"div.{kind} > table" for kind in ADMONITIONS)):
        label = box.find("th")
        cells = [td for td in box.find_all("td") if td.find("img") is None and td.get_text(strip=True)]
        if label is None or len(cells) != 1:
            continue
        heading = soup.new_tag("p")
        strong = soup.new_tag("strong")
        strong.string = label.get_text(" ", strip=True)
        heading.append(strong)
        box.insert_before(heading)
        for child in list(cells[0].children):
            box.insert_before(child.extract())
        box.decompose()



# Block elements: a cell holding only inline content is read as a paragraph of its own.
_BLOCKS = ("p", "pre", "div", "ul", "ol", "dl", "table", "blockquote", "h1", "h2", "h3", "h4", "h5", "h6")


def _link_columns_dropped(soup: BeautifulSoup) -> None:
    """A column of links beside the page's text in a table that lays out the page: a site's menu, as a sidebar named
    so is (libxml2's site, laid out with tables as pages of the 2000s were: "Main Menu", "Related links" read as text
    on 78 of a new user's 102 pages, and on 9 as one table row with the page's text). The column holds at least
    :data:`LINK_COLUMN_LINKS` links, nearly all its words theirs, and a cell beside it more words of its own than a
    banner's."""
    for row in soup.find_all("tr"):
        cells = [cell for cell in row.find_all("td", recursive=False) if not _removed(cell)]
        # Words are counted only in a row with a cell of that many links: a data table's rows are not walked again.
        menus = [cell for cell in cells if len(cell.find_all("a", limit=LINK_COLUMN_LINKS)) == LINK_COLUMN_LINKS]
        if len(cells) < 2 or not menus:
            continue
        own = {id(cell): _unlinked_words(cell) for cell in cells}
        for cell in menus:
            beside = max(n for key, n in own.items() if key != id(cell))
            if own[id(cell)] <= len(_WORD.findall(cell.get_text(" "))) * (1 - LINK_COLUMN_SHARE) and \
                    beside > max(own[id(cell)], BANNER_WORDS):
                cell.decompose()


def _layout_tables_as_text(soup: BeautifulSoup) -> None:
    """A table that lays out a page rather than tabulating data, read row by row as its words: one holding a heading
    or another table (DocBook's revision history: each revision's changes a table in a cell, whose rows and rules
    were written into one line of the outer table), or DocBook's questions and answers (a ``qandaset``, rows of
    class ``question`` and ``answer``); DocBook's terms and their definitions (a ``variablelist`` drawn as a table)
    as a definition list. Read as a Markdown table, each answer's or option's paragraphs, lists and code became one
    line of a cell (Valgrind's FAQ, Cockpit's cockpit.conf options)."""
    for table in soup.find_all("table"):
        if table.find_parent("table") is not None or table.parent is None:
            continue
        if "variablelist" in _words(table, "class"):
            _definitions(soup, table)
            continue
        rows = _own_rows(table)
        classes = {word for row in rows for word in _words(row, "class")}
        # ... or a row of columns that are lists (Postfix's documentation index: three columns of titled lists).
        columns = len(rows) == 1 and all(cell.find(["ul", "ol"]) for cell in rows[0].find_all(["td", "th"],
                                                                                              recursive=False))
        if not (table.find(re.compile("^h[1-6]$")) or {"question", "answer"} <= classes or table.find("table")
                or columns):
            continue
        for inner in table.find_all("table"):
            _column_as_list(soup, inner)
        for row in rows:
            cells = [cell for cell in row.find_all(["td", "th"], recursive=False) if cell.get_text(strip=True)]
            if cells and not any(cell.find(_BLOCKS) for cell in cells):
                line = soup.new_tag("p")   # "1.1." and its question, side by side: one line
                for cell in cells:
                    line.append(cell)
                    line.append(" ")
                    cell.unwrap()
                table.insert_before(line)
                continue
            for cell in cells:   # a cell of blocks as its blocks, one of words as a paragraph
                table.insert_before(cell)
                if cell.find(_BLOCKS):
                    cell.unwrap()
                else:
                    cell.name, cell.attrs = "p", {}
        table.decompose()


def _column_as_list(soup: BeautifulSoup, table: Tag) -> None:
    """A table of one column inside a table read row by row is a list of its cells (DocBook's ``simplelist``: a
    revision's changes)."""
    rows = _own_rows(table)
    cells = [row.find_all(["td", "th"], recursive=False) for row in rows]
    if not rows or any(len(row) > 1 for row in cells):
        return
    filled = [row[0] for row in cells if row and row[0].get_text(strip=True)]
    if len(filled) == 1:   # a box around a block (libxml2's pages, boxes in boxes), no list: read as its block
        filled[0].name, filled[0].attrs = "div", {}
        table.replace_with(filled[0].extract())
        return
    listing = soup.new_tag("ul")
    for item in filled:
        item.name, item.attrs = "li", {}
        listing.append(item.extract())
    table.replace_with(listing)


def _row_spans_carried_down(soup: BeautifulSoup) -> None:
    """A cell that spans rows is read in each row it spans, as a reader sees it beside each: Markdown's tables have no
    spans, and read once, every row below it lost that column and its cells moved left (Babel's date fields, "Year"
    over the rows of "y", "Y" and "u")."""
    spanned = {id(t): t for cell in soup.select("td[rowspan], th[rowspan]") if (t := cell.find_parent("table"))}
    for table in spanned.values():   # most pages have none: their tables are not walked
        above: dict[int, tuple[Tag, int]] = {}   # column -> (the spanning cell, rows it still spans)
        for row in _own_rows(table):
            cells = row.find_all(["td", "th"], recursive=False)
            column, i = 0, 0
            while i < len(cells) or any(c >= column for c in above):
                if column in above:
                    cell, left = above.pop(column)
                    copied = copy.copy(cell)
                    for element in [copied, *copied.find_all(True)]:
                        element.attrs.pop("id", None)   # the place is the first cell's
                    if i < len(cells):
                        cells[i].insert_before(copied)
                    else:
                        row.append(copied)
                    if left > 1:
                        above[column] = (cell, left - 1)
                    column += _span(cell, "colspan")
                elif i < len(cells):
                    cell = cells[i]
                    i += 1
                    if (rows := _span(cell, "rowspan")) > 1:
                        above[column] = (cell, rows - 1)
                        del cell["rowspan"]
                    column += _span(cell, "colspan")
                else:
                    column += 1


def _span(cell: Tag, attribute: str) -> int:
    value = str(cell.get(attribute) or "1").strip()
    return min(int(value), MAX_SPAN) if value.isdigit() and int(value) > 0 else 1


def _own_rows(table: Tag) -> list[Tag]:
    """The table's rows, not those of a table inside one of its cells."""
    return [row for row in table.find_all("tr") if row.find_parent("table") is table]


def _definitions(soup: BeautifulSoup, table: Tag) -> None:
    """A table of two cells a row, term and definition, as a definition list (left as it is otherwise)."""
    rows = [[cell for cell in row.find_all(["td", "th"], recursive=False)] for row in _own_rows(table)]
    if not rows or any(len(cells) != 2 for cells in rows):
        return
    terms = soup.new_tag("dl")
    for term, definition in rows:
        entry = soup.new_tag("dt")
        entry.extend(list((term.find("p") or term).children))
        definition.name, definition.attrs = "dd", {}
        terms.extend([entry, definition])
    table.replace_with(terms)


def _tab_labels_into_panels(soup: BeautifulSoup) -> None:
    """Each tab's label written at the top of the panel it shows (WAI-ARIA tabs: ``role=tab`` buttons naming their
    panel by ``aria-controls``): the labels stand apart in a row of buttons that is not read, and the panels alone
    said "Save the script somewhere." three times with no shell named (sphinx-tabs' Bash / Zsh / Fish, a new user's
    Click pages)."""
    for tab in soup.select("[role=tab][aria-controls]"):
        panel = soup.find(id=str(tab["aria-controls"]))
        label = tab.get_text(" ", strip=True)
        if panel is not None and label:
            strong = soup.new_tag("strong")
            strong.string = label
            paragraph = soup.new_tag("p")
            paragraph.append(strong)
            panel.insert(0, paragraph)
            tab.decompose()

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
