"""HTML pages are read as Markdown: the page's words and its links, without the navigation chrome."""

import gzip
from pathlib import Path

import pytest

from ragplugins.html_reader import html_to_markdown, read_html
from ragplugins.readers import read_documents
from ragplugins.splitting import section_starts

DOCBOOK_PAGE = """<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<!DOCTYPE html><html><head><title>25.1. SQL Dump</title><style>p {color: red}</style></head><body>
<div class="navheader"><table><tr><th colspan="5">25.1. SQL Dump</th></tr>
<tr><td><a accesskey="p" href="backup.html" title="Chapter 25. Backup and Restore">Prev</a></td>
<td><a accesskey="u" href="backup.html">Up</a></td><td><a accesskey="h" href="index.html">Home</a></td>
<td><a accesskey="n" href="backup-file.html">Next</a></td></tr></table><hr/></div>
<div class="sect1"><h2 class="title">25.1. SQL Dump</h2>
<p>The utility <a class="xref" href="app-pgdump.html" title="pg_dump">pg_dump</a> writes a dump;
restoring is described in <a class="xref" href="backup-dump.html#BACKUP-DUMP-RESTORE"
title="25.1.1. Restoring the Dump">Section 25.1.1</a>.</p><pre>pg_dump dbname &gt; dumpfile</pre></div>
<div class="navfooter"><hr/><table><tr><td><a href="backup.html">Prev</a></td>
<td><a href="index.html">Home</a></td><td><a href="backup-file.html">Next</a></td></tr></table></div>
</body></html>"""

SPHINX_PAGE = """<html><head><title>os.path</title><script>var x = 1;</script></head><body>
<div class="related" role="navigation"><ul><li><a href="../genindex.html">index</a></li>
<li><a href="os.html">next</a></li></ul></div>
<div class="body" role="main"><h1>os.path &#8212; Common pathname manipulations<a class="headerlink"
href="#module-os.path" title="Permalink to this heading">&#182;</a></h1>
<p>See also <a class="reference internal" href="os.html#module-os"><code>os</code></a>.</p></div>
<div class="sphinxsidebar" role="navigation"><h3>This page</h3><a href="../bugs.html">Report a Bug</a></div>
<div class="footer">&copy; Copyright 2001-2023.</div></body></html>"""


def _read(tmp_path, name, html):
    (tmp_path / name).write_text(html, encoding="utf-8")
    return read_documents([tmp_path / name]).documents


def test_docbook_page_keeps_text_links_and_headings_and_drops_navigation(tmp_path):
    [doc] = _read(tmp_path, "backup-dump.html", DOCBOOK_PAGE)
    text = doc.text
    assert text.startswith("## 25.1. SQL Dump")                                 # heading, no header bar
    assert "[pg_dump](app-pgdump.html)" in text                                 # link kept, literal underscore
    assert "[Section 25.1.1](backup-dump.html#BACKUP-DUMP-RESTORE)" in text
    assert "pg_dump dbname > dumpfile" in text                                  # code, entities decoded
    for chrome in ("Prev", "Home", "Next", "backup-file.html", "xml version", "color: red", "Restoring the Dump"):
        assert chrome not in text                                               # nav bars, prolog, CSS, link titles


def test_sphinx_page_drops_sidebar_related_bar_and_footer(tmp_path):
    [doc] = _read(tmp_path, "os.path.htm", SPHINX_PAGE)
    assert doc.text.startswith("# os.path — Common pathname manipulations\n")    # no pilcrow permalink
    assert "[`os`](os.html#module-os)" in doc.text
    for chrome in ("genindex", "Report a Bug", "Copyright", "var x", "¶", "#module-os.path"):
        assert chrome not in doc.text
    assert doc.id_ == "os.path.htm"


def test_a_page_with_only_chrome_is_skipped_as_empty(tmp_path):
    (tmp_path / "nav.html").write_text('<html><body><nav><a href="a.html">A</a></nav></body></html>')
    (tmp_path / "ok.md").write_text("Some text.")
    with pytest.warns(UserWarning, match="nav.html': it has no text"):
        report = read_documents([tmp_path])
    assert [d.id_ for d in report.documents] == ["ok.md"]


def test_end_tags_a_page_may_omit_are_closed_as_a_browser_closes_them(tmp_path):
    # SQLite's documentation leaves out </li> and </p>, as HTML allows; read as nested elements, its list
    # items ran together and a page of 2,800 of them overflowed Python's recursion limit (the page was lost).
    items = "".join(f"<li><a href='page{i}.html'>Page {i}</a>\n" for i in range(3000))
    page = f"<html><body><h1>Index</h1><p>First paragraph.<p>Second paragraph.<ul>{items}</ul></body></html>"
    [doc] = _read(tmp_path, "index.html", page)
    lines = doc.text.splitlines()
    assert "- [Page 0](page0.html)" in lines and "- [Page 2999](page2999.html)" in lines   # one item per line
    assert "First paragraph." in lines and "Second paragraph." in lines                  # two paragraphs


def test_drawings_and_forms_are_not_text_and_a_link_inside_code_is_kept(tmp_path):
    # SQLite draws its SQL syntax as inline SVG (its labels came out one word per line, whole chunks of
    # them) and puts a search form on every page; Apache writes every directive reference as a link
    # inside <code>, which a Markdown code span cannot hold (the link, and its reference, were lost).
    page = """<html><body><form action="search"><select><option>Search Changelog</option></select></form>
    <h1>ATTACH DATABASE</h1><svg><text>ATTACH</text><text>schema-name</text></svg>
    <p>The <code class="directive"><a href="../mod/mpm_common.html#maxrequestworkers">MaxRequestWorkers</a></code>
    directive; <code>plain()</code> stays code; <code>f(<a href="x.html">x</a>)</code> keeps its words.</p>
    </body></html>"""
    [doc] = _read(tmp_path, "lang_attach.html", page)
    assert "[`MaxRequestWorkers`](../mod/mpm_common.html#maxrequestworkers)" in doc.text
    assert "`plain()`" in doc.text and "`f(x)`" in doc.text
    for drawn in ("schema-name", "Search Changelog"):
        assert drawn not in doc.text
    assert doc.text.startswith("# ATTACH DATABASE")



def test_a_code_span_that_holds_only_a_space_shows_the_space(tmp_path):
    # GNU m4's printf flags "‘+’, ‘-’, ‘<samp> </samp>’" read "‘+’, ‘-’, ‘’" (a new user's walkthrough).
    page = ("<html><body><h1>Format</h1><p>The flags &lsquo;<samp>+</samp>&rsquo;, &lsquo;<samp> </samp>&rsquo; "
            "and &lsquo;<code>#</code>&rsquo;; a <kbd> </kbd> key; <code></code> and <code>\n</code> hold nothing."
            "</p></body></html>")
    [doc] = _read(tmp_path, "format.html", page)
    assert "The flags ‘`+`’, ‘` `’ and ‘`#`’; a ` ` key;  and  hold nothing." in doc.text, doc.text

SITE_PAGE = """<html><body>
<div class="menu mainmenu"><ul><li><a href="index.html">Home</a></li><li><a href="javascript:void(0)">Menu</a></li>
<li><a href="download.html">Download</a></li></ul></div>
<div class="wy-nav-content-wrap"><div class="document">
<a class="previous_page" href="ch-30.html">&lt;-previous</a><a class="next_page" href="ch-32.html">next-&gt;</a>
<h1 id="top">CREATE TABLE</h1>
<div class="fancy_toc"><b>Table Of Contents</b><ul><li><a href="#syntax">1. Syntax</a></li>
<li><a href="#rowid">2. ROWIDs</a></li><li><a href="#limits">3. Limits</a></li></ul></div>
<h2 id="syntax">1. Syntax</h2><p>create-table-stmt: <button onclick="toggle()">hide</button></p>
<p>A table is created with the statement; its options are
<ul><li><a href="#opt-strict">STRICT</a></li><li><a href="#opt-norowid">WITHOUT ROWID</a></li>
<li><a href="#opt-temp">TEMP</a></li></ul></p>
<dl><dt id="opt-strict">STRICT</dt><dd>Type checks.</dd><dt id="opt-norowid">WITHOUT ROWID</dt><dd>No rowid.</dd>
<dt id="opt-temp">TEMP</dt><dd>Temporary.</dd></dl>
<h2><a name="rowid"></a>2. ROWIDs</h2><p>SorterNext works just like <a href="opcode.html#Next">Next</a>.</p>
<h2 id="limits">3. Limits</h2><p>At most 2000 columns. <a href="#top" class="top">Top</a></p>
</div></div>
<div id="footer">Copyright 2026 The Example Foundation.</div></body></html>"""


def test_site_chrome_goes_and_the_page_s_own_words_and_lists_stay(tmp_path):
    [doc] = _read(tmp_path, "lang_createtable.html", SITE_PAGE)
    text = doc.text
    # The site's menu, the prev/next links, the page's table of contents (links to its own headings), a
    # button, the "Top" link and the footer are the site's, not the page's.
    for chrome in ("Download", "javascript", "previous", "next->", "Table Of Contents", "1. Syntax](#syntax)",
                   "hide", "[Top]", "Copyright"):
        assert chrome not in text, chrome
    # A block whose class says navigation but that holds the page (Read the Docs' wy-nav-content-wrap) stays,
    # as do a list of links to the page's entries (the options a statement takes) and a link whose text is a
    # name the page documents ("Next", an opcode).
    assert text.startswith("# CREATE TABLE")
    assert "[STRICT](#opt-strict)" in text and "- [TEMP](#opt-temp)" in text
    assert "SorterNext works just like [Next](opcode.html#Next)." in text
    assert "## 2. ROWIDs" in text and "At most 2000 columns." in text


MDBOOK_PAGE = """<html><head><title>What is Ownership? - The Rust Programming Language</title></head><body>
<nav id="sidebar" class="sidebar"><ol class="chapter"><li><a href="ch04-00.html">Understanding Ownership</a></li>
<li><a href="ch04-01-what-is-ownership.html" class="active">What is Ownership?</a></li></ol></nav>
<div id="page-wrapper" class="page-wrapper"><div class="page">
<div id="menu-bar" class="menu-bar sticky bordered"><div class="left-buttons"><button id="sidebar-toggle">=</button>
</div><h1 class="menu-title">The Rust Programming Language</h1><div class="right-buttons">
<a href="print.html" title="Print this book">Print</a></div></div>
<div id="content" class="content"><main>
<h2 id="what-is-ownership"><a class="header" href="#what-is-ownership">What Is Ownership?</a></h2>
<p><em>Ownership</em> is a set of rules that governs how a Rust program manages memory.</p>
</main></div></div></div></body></html>"""


def test_a_menu_bar_s_heading_is_the_site_s_when_the_page_stands_in_main_beside_it(tmp_path):
    # mdBook puts the book's name in an h1 of its menu bar on every page; the page itself is in <main>. Kept,
    # every chunk of a book began with the book's name and every page had the same first heading.
    [doc] = _read(tmp_path, "ch04-01-what-is-ownership.html", MDBOOK_PAGE)
    assert "The Rust Programming Language" not in doc.text and "Print" not in doc.text
    assert doc.text.startswith("## [What Is Ownership?](#what-is-ownership)")
    assert "*Ownership* is a set of rules" in doc.text


def test_an_mdbook_page_of_today_is_read_whole(tmp_path):
    # mdBook now writes <html class="sidebar-visible no-js light"> around a search form: taken for a sidebar with a
    # search field, every page of a new user's Rust Reference went whole ("no file could be read", walk97). Its
    # examples are a code block inside a code block with the lines it hides ("boring") in them, and a list a
    # sentence introduces is no table of contents, though its items link to the page's headings.
    page = (MDBOOK_PAGE.replace("<html>", '<html lang="en" class="sidebar-visible no-js light">')
            .replace('<div class="page">', '<div class="page"><div id="search-wrapper" class="hidden"><form '
                     'id="searchbar-outer"><input type="search" id="searchbar"></form></div>')
            .replace("</main>", '<p>A slice of an array:</p><pre><pre class="playground"><code class="language-rust">'
                     '<span class="boring">fn main() {\n</span>let slice = &amp;boxed[..];\n'
                     '<span class="boring">}\n</span></code></pre></pre>'
                     '<p>Composite types have one; the possible representations for a type are:</p>'
                     '<ul><li><a href="#default">Default</a></li><li><a href="#c">C</a></li>'
                     '<li><a href="#transparent">transparent</a></li></ul>'
                     '<h3 id="default">Default</h3><p>d</p><h3 id="c">C</h3><p>c</p>'
                     '<h3 id="transparent">transparent</h3><p>t</p></main>'))
    [doc] = _read(tmp_path, "ch04-01-what-is-ownership.html", page)
    assert doc.text.startswith("## [What Is Ownership?](#what-is-ownership)")
    assert "*Ownership* is a set of rules" in doc.text and "searchbar" not in doc.text
    assert "```\nlet slice = &boxed[..];\n```" in doc.text and "fn main" not in doc.text
    assert "are:\n\n- [Default](#default)\n- [C](#c)\n- [transparent](#transparent)" in doc.text


NGINX_PAGE = """<html><head><title>Module ngx_http_gzip_module</title></head><body>
<div id="menu"><h1><a href="../../../index.html">nginx</a></h1><div>english <a href="../../../ru/index.html">русский</a>
</div><div><a href="../../../news.html">news</a> <a href="../../../en/download.html">download</a>
<a href="../../../en/security_advisories.html">security</a></div></div>
<div id="content"><h2>Module ngx_http_gzip_module</h2>
<p>The <code>ngx_http_gzip_module</code> module is a filter that compresses responses using the gzip method.</p>
</div></body></html>"""


def test_a_menu_s_heading_that_is_not_the_page_s_title_is_the_site_s(tmp_path):
    # nginx.org's menu holds <h1>nginx</h1> on every page, which marks no main part: taken for the page's title,
    # the menu stayed and every page began with "english русский news download security" (a new user's nginx
    # pages; answers in those first chunks ranked lower).
    [doc] = _read(tmp_path, "ngx_http_gzip_module.html", NGINX_PAGE)
    assert "news" not in doc.text and "download" not in doc.text and "nginx](" not in doc.text
    assert doc.text.startswith("## Module ngx_http_gzip_module")
    # A block whose name says menu but that holds the heading the page's <title> repeats is the page.
    page = NGINX_PAGE.replace('<div id="menu"><h1><a href="../../../index.html">nginx</a></h1>',
                              '<div id="menu"><h1>Module ngx_http_gzip_module</h1>')
    [doc] = _read(tmp_path, "kept.html", page)
    assert doc.text.startswith("# Module ngx_http_gzip_module") and "download" in doc.text


TEXINFO_PAGE = """<html><head><title>Cache Files (Autoconf)</title></head><body>
<div class="subsection" id="Cache-Files"><div class="header"><p>
Next: <a href="Cache-Checkpointing.html#Cache-Checkpointing" accesskey="n" rel="next">Cache Checkpointing</a>,
Previous: <a href="Cache-Variable-Names.html#Cache-Variable-Names" accesskey="p" rel="prev">Cache Variable Names</a>,
Up: <a href="Caching-Results.html#Caching-Results" accesskey="u" rel="up">Caching Results</a> &nbsp;
[<a href="Top.html#SEC_Contents" title="Table of contents" rel="contents">Contents</a>][<a href="Indices.html#Indices"
title="Index" rel="index">Index</a>]</p></div>
<h4 class="subsection">7.4.2 Cache Files</h4>
<p>A cache file is a shell script; see <a href="Cache-Variable-Names.html">Cache Variable Names</a>.</p>
</div></body></html>"""


def test_a_bar_of_links_whose_rel_says_next_previous_or_up_is_navigation(tmp_path):
    # texinfo heads every node's page with "Next: X, Previous: Y, Up: Z [Contents][Index]", each link named after
    # the node it leads to; kept, half of a manual's references were that bar and the hop followed "Previous:".
    [doc] = _read(tmp_path, "Cache-Files.html", TEXINFO_PAGE)
    assert doc.text.startswith("#### 7.4.2 Cache Files")
    for chrome in ("Next:", "Previous:", "Up:", "Cache Checkpointing", "Caching-Results.html", "[]", "Contents"):
        assert chrome not in doc.text, chrome
    # The same page linked from the text stays a link.
    assert "see [Cache Variable Names](Cache-Variable-Names.html)." in doc.text


def test_texinfos_bar_below_a_node_and_its_definitions_permalinks_are_not_read(tmp_path):
    # Below a long node texinfo repeats the bar without rel; after each indexed definition it writes a pilcrow
    # linking the definition's anchor (the GNU Octave manual: 122 of 211 pages kept the bar, 999 pilcrows).
    page = TEXINFO_PAGE.replace("</div></body>", """<dl><dt id="index-nargout"><strong>nargout</strong> ()<a
href='#index-nargout' class='copiable-anchor'> &para;</a></dt><dd>Report the number of outputs.</dd></dl>
<p>See <a href="#index-nargout">nargout</a> and section <a href="#s2">&sect; 2</a>.</p>
<hr><div class="header"><p>Next: <a href="Cache-Checkpointing.html">Cache Checkpointing</a>,
Previous: <a href="Cache-Variable-Names.html">Cache Variable Names</a>, Up: <a href="Caching-Results.html">Caching
Results</a> &nbsp; [<a href="Top.html#SEC_Contents" title="Table of contents">Contents</a>]</p></div>
<p>Next: <a href="cache-a.html">the a cache</a> and <a href="cache-b.html">the b cache</a>.</p>
<p>Up: <a href="a.html">one</a>, Next: <a href="b.html">two</a>, said the guide.</p></div></body>""")
    [doc] = _read(tmp_path, "Cache-Files.html", page)
    assert "¶" not in doc.text and "**nargout** ()" in doc.text
    for chrome in ("Previous:", "Cache Checkpointing", "Caching-Results.html", "Contents"):
        assert chrome not in doc.text, chrome
    # Links the page's words make stay, whatever their words: a label must stand before two links and nothing
    # but labels besides them.
    assert "See [nargout](#index-nargout) and section [§ 2](#s2)." in doc.text
    assert "Next: [the a cache](cache-a.html) and [the b cache](cache-b.html)." in doc.text
    assert "Up: [one](a.html), Next: [two](b.html), said the guide." in doc.text


def test_an_index_entry_s_anchor_on_its_own_line_does_not_break_its_paragraph(tmp_path):
    # texinfo writes @cindex as an empty <span id="index-..."> on a line of its own inside the paragraph; the
    # line breaks either side read as a blank line after inline code (R's manuals: 101 of 333).
    page = ("<html><body><p>this can be overridden by setting\n<code>R_PAPERSIZE</code>\n"
            '<span id="index-R_005fPAPERSIZE"></span>\non the <code>make</code> command line.</p></body></html>')
    [doc] = _read(tmp_path, "R-admin.html", page)
    assert "`R_PAPERSIZE`\non the `make` command line." in doc.text
    page = read_html(page)
    assert page.text[page.anchors["index-R_005fPAPERSIZE"]:].startswith("on the")


TEXI2HTML_BUTTONS = "".join(
    f'<td valign="middle" align="left">[<a href="{href}" title="{title}">{text}</a>]</td>'
    for href, title, text in [("#Completion-System", "Beginning of this chapter or previous chapter", " &lt;&lt; "),
                              ("#Control-Functions", "Previous section in reading order", " &lt; "),
                              ("#Completion-System", "Up section", " Up "),
                              ("#Completion-Functions", "Next section in reading order", " &gt; "),
                              ("index.html", "Cover (top) of document", "Top"),
                              ("zsh_toc.html#SEC_Contents", "Table of contents", "Contents"),
                              ("Concept-Index.html", "Index", "Index"), ("zsh_abt.html", "About (help)", " ? ")])
TEXI2HTML_PAGE = f"""<html><head><title>zsh: 20 Completion System</title></head><body>
<p>the return status of the function is irrelevant.</p><hr>
<div class="section" id="Bindable-Commands">
<table class="header" cellpadding="1" cellspacing="1" border="0"><tr>{TEXI2HTML_BUTTONS}
<td> &nbsp; </td></tr></table>
<h2 class="section">20.5 Bindable Commands</h2>
<p>A few widgets can be bound separately to keys; see <a href="Zle-Widgets.html">Zle Widgets</a>.</p>
<ul><li><a href="Completion-System.html">Completion System</a></li><li><a href="#Next">Next</a></li></ul>
<p>The opcodes that end a loop: <a href="opcode.html#Next">Next</a> and <a href="opcode.html#Prev">Prev</a>.</p>
</div>
<hr><ul><li> <a href="FAQ.html">Table of Contents</a><li> <a href="FAQ01.html">Previous Chapter</a>
<li> <a href="FAQ03.html">Next Chapter</a></ul>
</body></html>"""


def test_a_row_of_navigation_buttons_is_navigation_and_an_anchor_above_it_names_the_heading_below(tmp_path):
    # texi2html (zsh, gettext) puts a table of "[ << ] [ < ] [ Up ] [ > ] [Top] [Contents] [Index] [ ? ]" above
    # and below each section: a fifth of zsh's chunks held one, and the section's anchor, standing above the
    # bar, named the chunk before its heading.
    page = read_html(TEXI2HTML_PAGE)
    for chrome in ("<<", "[<]", "Up", "Top", "Contents", "Index", "?", "Chapter", "zsh_abt.html", "FAQ01.html"):
        assert chrome not in page.text, chrome
    assert page.text[page.anchors["Bindable-Commands"]:].startswith("20.5 Bindable Commands")
    # A link among the page's own words stays, also one whose name is a navigation word, and a list with
    # another link.
    assert "see [Zle Widgets](Zle-Widgets.html)." in page.text
    assert "[Next](opcode.html#Next) and [Prev](opcode.html#Prev)." in page.text
    assert "- [Completion System](Completion-System.html)\n- [Next](#Next)" in page.text


REPORT_PAGE = """<title>The Haskell 98 Report: Bibliography</title>
<body> <i>The Haskell 98 Report</i><br> <a href="index.html">top</a> | <a href="random.html">back</a> | next |
<a href="index98.html">contents</a> | <a href="prelude-index.html">function index</a> <br><hr>
<h2>4 Declarations</h2><p>The report's <a href="decls.html">next</a> and <a href="index98.html">contents</a> links
are words of a sentence here, as is <a href="ix.html">Section 16</a>.</p>
<hr><i>The Haskell 98 Report</i><br><a href="index.html">top</a> | <a href="ix.html">back</a> |
<a href="list.html">next</a> | <a href="index98.html">contents</a> | <a href="prelude-index.html">function index</a>
<br><font size=2>December 2002</font>"""


def test_a_row_of_navigation_buttons_between_line_breaks_is_navigation(tmp_path):
    # The Haskell 98 Report's pages (haskell98-report): "top | back | next | contents | function index" under the
    # report's name at the top and bottom of every page, in no block of its own; the last page's "next" is no link.
    # 113 of the 261 links crossref recorded from them were these.
    text = read_html(REPORT_PAGE).text
    for chrome in ("[top]", "[back]", "| next |", "function index", "prelude-index.html", "random.html", "list.html"):
        assert chrome not in text, chrome
    assert "The report's [next](decls.html) and [contents](index98.html) links" in text
    assert "[Section 16](ix.html)" in text and "December 2002" in text


def test_a_line_break_at_an_inline_element_s_edge_is_a_space_not_nothing():
    # The Haskell 98 Report writes "<I>By a top level declaration.\n</I>A top-level"; markdownify drops the line
    # break and glued the words. Punctuation after the element stays where it is; code keeps its lines.
    text = read_html("<p><I>By a top level declaration.\n</I>A top-level <i>and\n</i>the name, "
                     "<a href='x.html'><em>The Manifesto\n</em></a>. See<a href='y.html'>\nthis</a>.</p>"
                     "<pre><b>x\n</b>y</pre>").text
    assert "*By a top level declaration.* A top-level *and* the name, [*The Manifesto*](x.html). See " \
           "[this](y.html)." in text
    assert "x\ny" in text


def test_a_section_whose_id_is_its_heading_s_words_is_the_page_s_whatever_the_words():
    # Sphinx makes a section's id from its heading: the kernel's cpuidle page lost "The menu Governor"
    # (section#the-menu-governor, "menu" a navigation word) and svga.html its "Menu" section. A block named menu
    # without such a heading is still a site's.
    text = read_html("<title>CPU Idle</title><h1>CPU Idle</h1><section id='the-menu-governor'><h2>The menu "
                     "Governor</h2><p>The menu governor is the default for tickless systems.</p></section>"
                     "<section id='menu-1'><h2>Menu</h2><p>Pick a mode.</p></section>"
                     "<div id='menu'><h3>Site</h3><a href='a.html'>Home</a> <a href='b.html'>Docs</a></div>").text
    assert "## The menu Governor" in text and "tickless systems" in text and "Pick a mode." in text
    assert "Site" not in text and "b.html" not in text


def test_a_heading_s_link_back_to_the_contents_is_its_words():
    # The kernel's Sphinx pages: each sysctl entry's heading links back to the removed contents ("## [acct](#id1)"),
    # footnotes back to their citation ("[[1](#id1)]"). A link in a heading's words stays.
    text = read_html('<h2><a class="toc-backref" href="#id1" role="doc-backlink">acct</a></h2><p>Text.</p>'
                     '<h3>Customizing the <a href="#site">AdminSite</a> class</h3>').text
    assert "## acct\n" in text and "#id1" not in text
    assert "### Customizing the [AdminSite](#site) class" in text


def test_a_picture_that_says_again_the_words_beside_it_is_not_read():
    # HAProxy's manual draws "yes" over a tick whose alt text is "yes" in every "May be used in sections" table.
    text = read_html('<table><tr><th>defaults</th><th>backend</th></tr><tr><td>yes<br /><img src="css/check.png" '
                     'alt="yes" /></td><td>no<br /><img src="css/cross.png" alt="no" /></td></tr></table>'
                     '<p><img src="warn.png" alt="Warning" /> Back up first.</p>').text
    assert "| yes | no |" in text, text
    assert "Warning" in text and "Back up first." in text, text


def test_a_sidebar_holding_a_search_field_is_the_site_s():
    # haproxy-dconv's manuals: a search box and "Keyboard navigation: When enabled, you can use left and right arrow
    # keys to navigate between chapters." in div#sidebar opened every manual's first chunk. A sidebar of prose alone
    # (DocBook's TIP boxes) stays the page's.
    text = read_html('<div id="sidebar"><form role="form"><input type="text" name="keyword"></form><p>Keyboard '
                     'navigation : <span></span></p><p>When enabled, you can use <strong>left</strong> and <strong>'
                     'right</strong> arrow keys to navigate between chapters. The feature is automatically disabled '
                     'when the search field is focused.</p></div><div id="page-wrapper"><h1>HAProxy</h1><h2>Management'
                     ' Guide</h2><p>Stopping and restarting.</p><div class="sidebar"><p>TIP: keep one old process '
                     'running while the new one starts, so that no connection is refused during a reload.</p></div>'
                     '</div>').text
    assert "Keyboard" not in text and "arrow keys" not in text, text
    assert "## Management Guide" in text and "TIP: keep one old process" in text, text


def test_a_footnote_s_mark_and_its_way_back_are_the_mark_alone():
    # PostgreSQL's DocBook pages read "box,[[a]](#ftn.FUNCTIONS-GEOMETRY-ROTATION-FN) path": an id's words inside
    # the sentence, and a reference to the page's own footnote for crossref to store.
    docbook = read_html(
        '<h1>Geometric Functions</h1><p>Available for <code>point</code>, <code>box</code>,<a href="#ftn.ROT" '
        'class="footnote"><sup class="footnote" id="ROT">[a]</sup></a> <code>path</code>.</p><p>See also '
        '<a href="functions.html#ftn.X">another page</a> and the <a href="biblio.html#SQL">[sql]</a> standard.</p>'
        '<div id="ftn.ROT" class="footnote"><p><a href="#ROT" class="para"><sup class="para">[a] </sup></a>'
        'Rotating a box only moves its corners.</p></div>').text
    assert "`box`,[a] `path`." in docbook, docbook
    assert "[a] Rotating a box only moves its corners." in docbook, docbook
    assert "ftn.ROT" not in docbook and "#ROT" not in docbook, docbook
    # An ordinary link, even to a fragment, and a bibliography entry stay links.
    assert "[another page](functions.html#ftn.X)" in docbook and "[[sql]](biblio.html#SQL)" in docbook, docbook
    sphinx = read_html('<p>Merging is organised <a class="footnote-reference brackets" href="#id2" id="id1" '
                       'role="doc-noteref"><span class="fn-bracket">[</span>1<span class="fn-bracket">]</span></a>.'
                       '</p><aside class="footnote brackets" id="id2"><span class="label"><span class="fn-bracket">'
                       '[</span><a role="doc-backlink" href="#id1">1</a><span class="fn-bracket">]</span></span>'
                       '<p>Tim Peters.</p></aside>').text
    assert "organised [1]." in sphinx and "#id" not in sphinx, sphinx
    # Debian Policy's Sphinx draws the brackets with its style sheet ("hard links, [2](#id7) device"); Python-Markdown
    # goes back from a footnote by an arrow.
    styled = read_html('<p>No hard links, <a class="footnote-reference brackets" href="#id7" id="id2">2</a> device '
                       'files.</p><dl class="footnote brackets"><dt class="label" id="id7"><span class="brackets">'
                       '<a class="fn-backref" href="#id2">2</a></span></dt><dd><p>Hard links break.</p></dd></dl>'
                       '<p>Markdown<sup id="fnref:1"><a class="footnote-ref" href="#fn:1">1</a></sup>.</p><div class='
                       '"footnote"><ol><li id="fn:1"><p>A note.&#160;<a class="footnote-backref" href="#fnref:1">'
                       '&#8617;</a></p></li></ol></div>').text
    assert "No hard links, [2] device files." in styled and "[2]" in styled.split("device files.")[1], styled
    assert "Markdown[1]." in styled and "A note." in styled and "\u21a9" not in styled and "fn:1" not in styled, styled


def test_the_contents_and_indexes_a_sphinx_build_writes_into_its_pages_are_not_read():
    # A new user's SQLAlchemy FAQ index (a toctree of the FAQ's questions) took one of the top 3 places for 6 of 24
    # questions and held none of their answers. The page's own words stay; so does a list of links in them.
    text = read_html('<title>Frequently Asked Questions</title><h1>Frequently Asked Questions</h1>'
                     '<p>Answers to common questions; see also <a href="glossary.html">the glossary</a>.</p>'
                     '<div class="toctree-wrapper compound"><ul><li class="toctree-l1"><a class="reference '
                     'internal" href="connections.html">Connections / Engines</a><ul><li class="toctree-l2">'
                     '<a class="reference internal" href="connections.html#pool">How do I configure '
                     'logging?</a></li></ul></li></ul></div>'
                     '<ul><li><a href="sessions.html">Sessions</a></li><li><a href="orm.html">ORM</a></li>'
                     '<li><a href="core.html">Core</a></li></ul>').text
    assert "Answers to common questions; see also [the glossary](glossary.html)." in text
    assert "Connections / Engines" not in text and "How do I configure logging?" not in text
    assert "- [Sessions](sessions.html)" in text and "- [Core](core.html)" in text
    # The root document of Sphinx's own theme: the list below its caption, no wrapper.
    root = read_html('<h1>Sphinx documentation contents</h1><p class="caption" role="heading"><span class="caption-'
                     'text">Get started</span></p><ul><li class="toctree-l1"><a class="reference internal" href="usage/'
                     'quickstart.html">Getting Started</a></li></ul><p class="lead">Read the tutorial first.</p>').text
    assert "Get started" not in root and "Getting Started" not in root and "Read the tutorial first." in root
    index = read_html('<h1 id="index">Index</h1><div class="genindex-jumpbox"><a href="#A"><strong>A</strong></a> | '
                      '<a href="#B"><strong>B</strong></a></div><h2 id="A">A</h2><table class="indextable '
                      'genindextable"><tr><td><ul><li><a href="extdev/appapi.html#sphinx.application.Sphinx.add_'
                      'directive">add_directive() (sphinx.application.Sphinx method)</a></li></ul></td></tr></table>'
                      '<p>Entries are sorted by name.</p>').text
    assert "add_directive" not in index and "**B**" not in index and "Entries are sorted by name." in index


def test_the_menus_contents_and_indexes_texinfo_writes_into_its_pages_are_not_read():
    # A new user's flex manual (makeinfo 6.8): node menus, the Top node's contents and the index nodes were 73 of 303
    # chunks, in the top 10 for up to 7 of 24 questions; the FAQ node's menu, every question's title, among them.
    faq = read_html('<div class="unnumbered" id="FAQ"><h2 class="unnumbered">FAQ</h2><p>From time to time, the '
                    'maintainer receives certain questions.</p><ul class="section-toc"><li><a href="When-was-flex-'
                    'born_003f.html" accesskey="1">When was flex born?</a></li></ul><p>See also <a href="Bugs.html">'
                    'Reporting Bugs</a>.</p></div>').text
    assert "certain questions." in faq and "When was flex born?" not in faq
    assert "[Reporting Bugs](Bugs.html)" in faq
    top = read_html('<div class="top" id="Top"><h1 class="top">flex</h1><p>This manual describes flex.</p></div>'
                    '<div class="Contents_element" id="SEC_Contents"><h2 class="contents-heading">Table of Contents'
                    '</h2><div class="contents"><ul class="no-bullet"><li><a id="toc-Copyright-1" href="Copyright.'
                    'html">1 Copyright</a></li></ul></div></div><p>Written by Vern Paxson.</p>').text
    assert "This manual describes flex." in top and "Written by Vern Paxson." in top
    assert "Table of Contents" not in top and "Copyright" not in top
    letters = ('<table><tr><th>Jump to: &nbsp; </th><td><a class="summary-letter" href="#cp_letter-A"><b>A</b></a>'
               '</td></tr></table>')
    index = read_html(f'<h3 class="unnumberedsec">Concept Index</h3><p>Every concept.</p>{letters}<table class='
                      '"index-cp"><tr><td><a href="Actions.html#index-actions">actions</a>:</td><td><a href="Actions.'
                      f'html">Actions</a></td></tr></table>{letters}').text
    assert "Every concept." in index and "actions" not in index and "Jump to" not in index
    # texinfo 7 names them otherwise.
    seven = read_html('<p>Words.</p><ul class="mini-toc"><li><a href="Copyright.html">Copyright</a></li></ul><table '
                      'class="cp-letters-header-printindex"><tr><th>Jump to: </th><td><a class="summary-letter-'
                      'printindex" href="#A"><b>A</b></a></td></tr></table><table class="cp-entries-printindex"><tr>'
                      '<td><a href="Actions.html#index-actions">actions</a></td></tr></table>').text
    assert "Words." in seven and "Copyright" not in seven and "actions" not in seven and "Jump to" not in seven


BANNER_PAGE = """<html><head><title>31. Address rewriting</title></head><body>
<h1 id="header"><a href="http://www.exim.org">Exim Internet Mailer</a></h1>
<div class="tagline">Small. Fast. Reliable.</div>
<div id="path"><a href="https://example.org/">Project</a> &gt; <a href="index.html">Documentation</a></div>
<h2 id="CHAP31"><a href="ch31.html">Chapter 31 - Address rewriting</a></h2>
<div class="toplang"><p><span>Available Languages: </span><a href="../en/ch31.html">en</a> |
<a href="../fr/ch31.html" hreflang="fr" rel="alternate">fr</a> |
<a href="../ja/ch31.html" hreflang="ja" rel="alternate">ja</a></p></div>
<p>Unqualified envelope addresses are accepted only for locally submitted messages.</p>
<p>A link in the page's words: <a href="../fr/faq.html" hreflang="fr">the French FAQ</a>.</p>
</body></html>"""

NOTICE_PAGE = """<html><head><title>Moving From SQLite 3.5 To 3.6</title></head><body>
<h1>SQLite</h1>
<p>Editorial note: this document was written in 2008 as a guide to helping programmers move from one
version to the next; the interfaces it describes have changed since, and readers who start a project
today should read the current documentation of each function instead of this page, which is kept for
those who maintain older code.</p>
<div class="fancy_title">Moving From SQLite 3.5 To 3.6</div>
<p>The file format is unchanged.</p></body></html>"""


def test_a_site_s_name_and_trail_above_the_page_s_title_and_its_other_languages_go_and_a_notice_there_stays(
        tmp_path):
    [doc] = _read(tmp_path, "ch31.html", BANNER_PAGE)
    # The site's name as first heading stands above the heading the page's <title> repeats: it goes, so the
    # page's first heading is its title. The same page in other languages is a bar of hreflang links.
    assert "Exim Internet Mailer" not in doc.text and "Available Languages" not in doc.text and "[fr]" not in doc.text
    # A trail of links to the pages above goes too; a tagline the <title> does not hold stays.
    assert doc.text.startswith("Small. Fast. Reliable.\n\n## [Chapter 31 - Address rewriting](ch31.html)\n\n"
                               "Unqualified envelope"), doc.text
    assert "[the French FAQ](../fr/faq.html)" in doc.text
    # Above a title, a paragraph-long notice is the page's: nothing above the title goes.
    [doc] = _read(tmp_path, "migration.html", NOTICE_PAGE)
    assert doc.text.startswith("# SQLite\n\nEditorial note:"), doc.text
    # Several headings above it are the page's own: gettext's FAQ, titled "GNU gettext FAQ", whose first section
    # under "Questions" the <title> repeats more than its h1 (which lost its headings).
    faq = ('<html><head><title>GNU gettext FAQ</title></head><body><h1>Frequently Asked Questions<br>for GNU '
           'gettext</h1><h1>Questions</h1><h3>General</h3><ul><li><a href="#list">Where is the mailing list?</a>'
           '</li></ul><h3>Problems building GNU gettext</h3><p>On Solaris, the build fails.</p></body></html>')
    [doc] = _read(tmp_path, "FAQ.html", faq)
    assert doc.text.startswith("# Frequently Asked Questions for GNU gettext\n\n# Questions\n\n### General"), doc.text
    # A page in two languages: the other one is the only link marked with its language.
    two = BANNER_PAGE.replace('|\n<a href="../ja/ch31.html" hreflang="ja" rel="alternate">ja</a>', "")
    assert two != BANNER_PAGE
    [doc] = _read(tmp_path, "ch31b.html", two)
    assert "Available Languages" not in doc.text and "[the French FAQ](../fr/faq.html)" in doc.text
    # Without a <title> nothing tells which heading is the page's.
    [doc] = _read(tmp_path, "untitled.html", BANNER_PAGE.replace("<title>31. Address rewriting</title>", ""))
    assert doc.text.startswith("# [Exim Internet Mailer](http://www.exim.org)")


DIRECTIVES_PAGE = """<html><head><title>Module ngx_http_gzip_module</title></head><body>
<h1>Module ngx_http_gzip_module</h1>
<p>See <a href="https://nginx.org/">https://nginx.org/</a> and <a href="#gzip_proxied">gzip_proxied</a>.</p>
<a name="gzip"></a><div class="directive"><table><tr><th>Syntax:</th><td><code><strong>gzip</strong> on | off</code>;
</td></tr></table></div><p>Enables or disables gzipping of responses.</p>
<a name="gzip_proxied"></a><div class="directive"><table><tr><th>Syntax:</th><td><code><strong>gzip_proxied</strong>
off | any</code>;</td></tr></table></div><p>Enables gzipping for proxied requests.</p>
<dl><dt id="GUC-WORK-MEM"><code>work_mem</code> (integer)</dt><dd>Sets the memory.</dd></dl>
<h2 id="variables">Embedded Variables</h2><p id="empty">   </p><a id="last"></a></body></html>"""


def test_a_page_s_anchors_are_where_their_words_begin_and_the_text_is_as_without_them(tmp_path):
    page = read_html(DIRECTIVES_PAGE)
    assert page.text == html_to_markdown(DIRECTIVES_PAGE)
    # An empty <a name> names what follows it; an id names its element's own words.
    assert page.text[page.anchors["gzip_proxied"]:].startswith("Syntax: | `gzip_proxied off")
    assert page.text[page.anchors["gzip"]:].startswith("Syntax: | `gzip on")
    assert page.text[page.anchors["GUC-WORK-MEM"]:].startswith("work_mem` (integer)")   # its first word
    assert page.text[page.anchors["variables"]:].startswith("Embedded Variables")
    # No words after it: no place in the text. The text is not marked anywhere.
    assert "last" not in page.anchors and "\ue000" not in page.text
    # The link shown as its own address is still written <address> (a mark inside it would have broken that).
    assert "<https://nginx.org/>" in page.text
    # Documents carry them to the chunk step (ragplugins.anchors), out of the embedded and LLM text.
    [doc] = _read(tmp_path, "gzip.html", DIRECTIVES_PAGE)
    assert doc.text == page.text and "gzip_proxied" not in doc.get_content(metadata_mode="embed").split("\n\n")[0]


PUBLICAN_PAGE = """<html><head><title>6.2. apt-get</title></head><body>
<div id="banner"><a href="http://debian-handbook.info/get/"><span class="text">Download the ebook</span></a></div>
<ul class="docnav top"><li class="previous"><a accesskey="p" href="apt.html"><strong>Prev</strong></a></li>
<li class="home">The Debian Administrator's Handbook</li>
<li class="next"><a accesskey="n" href="sect.apt-cache.html"><strong>Next</strong></a></li></ul>
<div class="section"><h2 class="title">6.2. apt-get</h2><div class="para">APT is a vast project.</div>
<div class="sidebar"><div class="titlepage"><p class="title"><strong>TIP Incremental updates</strong></p></div>
<div class="para">APT can download diff files instead of whole Packages files, see
<a class="xref" href="sect.apt-cache.html#sect.apt-cache">Section 6.3</a>.</div></div>
<div class="sidebar" id="links"><a href="a.html">Installing</a> <a href="b.html">Upgrading the whole system
</a> <a href="c.html">Removing packages</a></div></div>
<ul class="docnav"><li class="previous"><a accesskey="p" href="apt.html"><strong>Prev</strong>Chapter 6. APT</a></li>
<li class="next"><a accesskey="n" href="sect.apt-cache.html"><strong>Next</strong>6.3. apt-cache</a></li></ul>
</body></html>"""


def test_a_sidebar_of_prose_is_the_page_s_and_bars_named_nav_or_banner_are_the_site_s(tmp_path):
    [doc] = _read(tmp_path, "sect.apt-get.html", PUBLICAN_PAGE)
    # DocBook's "TIP" box is div.sidebar: the page's own words and links (a quarter of the Debian
    # Administrator's Handbook was lost with them).
    assert "APT can download diff files" in doc.text and "[Section 6.3](sect.apt-cache.html#sect.apt-cache)" in doc.text
    # A sidebar that is a list of links is a site's; so are Publican's ul.docnav bars and the banner.
    assert "Removing packages" not in doc.text
    assert "Prev" not in doc.text and "Chapter 6. APT" not in doc.text and "Download the ebook" not in doc.text
    assert doc.text.startswith("## 6.2. apt-get\n\nAPT is a vast project."), doc.text


DOCUTILS_SIDEBAR_PAGE = """<html><head><title>pytest documentation</title></head><body><div class="body">
<aside class="sidebar"><p class="sidebar-title">Next Open Trainings</p>
<ul class="simple"><li><p><a href="https://example.org/course.html">Professional Testing with Python</a>, via
<a href="https://example.org/">Python Academy</a>, March 7th to 9th 2023 (3 day in-depth training), Remote and
Leipzig, Germany</p></li></ul>
<p>Also see <a href="talks.html">previous talks and blogposts</a>.</p></aside>
<h1>pytest: helps you write better programs</h1><p>The pytest framework makes it easy to write small tests.</p>
</div></body></html>"""


def test_a_sidebar_of_prose_is_judged_with_its_title(tmp_path):
    # docutils' ``.. sidebar::`` titles its box p.sidebar-title: dropped first as a block named "sidebar", it
    # left a third of the box's words linked and the whole box went (pytest's index lost its link to talks.html).
    [doc] = _read(tmp_path, "index.html", DOCUTILS_SIDEBAR_PAGE)
    assert "Next Open Trainings" in doc.text
    assert "Also see [previous talks and blogposts](talks.html)." in doc.text


def test_a_page_that_only_sends_the_reader_on_is_skipped_and_one_with_words_of_its_own_is_read(tmp_path):
    # texinfo writes a stub for every old node name (43 of zsh's 60 pages): titled with the node's name, it
    # matched questions about that node and held none of its words.
    stub = ('<html><head><title>Brace Expansion (zsh)</title><meta http-equiv="Refresh" '
            'content="0; url=Expansion.html#Brace-Expansion"></head><body><p>The node you are looking for is at '
            '<a href="Expansion.html#Brace-Expansion">Brace Expansion</a>.</p></body></html>')
    (tmp_path / "Brace-Expansion.html").write_text(stub)
    (tmp_path / "moved.html").write_text("<html><head><meta http-equiv='refresh' content=\"0; './cli.html'\">"
                                         "</head><body>Redirect to ./cli.html</body></html>")
    words = " ".join(["A page with words of its own that a site also refreshes now and then."] * 4)
    (tmp_path / "news.html").write_text(f'<html><head><meta http-equiv="refresh" content="300; url=news.html">'
                                        f'</head><body><p>{words}</p></body></html>')
    (tmp_path / "clock.html").write_text('<html><head><meta http-equiv="refresh" content="30"></head>'
                                         '<body><p>The time now.</p></body></html>')
    with pytest.warns(UserWarning, match=r"'.*Brace-Expansion.html' and 1 more file: it only sends the reader to "
                                         r"another page"):
        report = read_documents([tmp_path])
    assert sorted(d.id_ for d in report.documents) == ["clock.html", "news.html"]
    assert read_html(stub).redirect == "Expansion.html#Brace-Expansion"



def test_a_page_with_nothing_but_its_title_is_skipped(tmp_path):
    # texinfo's index nodes once their index is not read ("### Concept Index" between two rules) and its chapters
    # that are only a menu: flex's five and m4's two such pages matched questions on their titles' words.
    (tmp_path / "Concept-Index.html").write_text(
        '<html><body><hr><div class="unnumbered"><h3 class="unnumbered">Concept Index</h3>'
        '<table class="index-cp"><tr><td><a href="Intro.html">options</a></td></tr></table></div><hr>'
        '</body></html>')
    (tmp_path / "Appendices.html").write_text('<html><body><h2>Appendix A Appendices</h2><ul class="mini-toc">'
                                              '<li><a href="Makefiles.html">Makefiles</a></li></ul></body></html>')
    (tmp_path / "notes.md").write_text("# Notes\n\n---\n\n## To do\n")
    (tmp_path / "Intro.html").write_text("<html><body><h2>Introduction</h2><p>flex reads its input.</p></body></html>")
    (tmp_path / "short.md").write_text("# Short\n\nOne line of text.\n")
    with pytest.warns(UserWarning) as said:
        report = read_documents([tmp_path])
    assert sorted(d.id_ for d in report.documents) == ["Intro.html", "short.md"]
    reasons = " ".join(str(w.message) for w in said)
    for title in ("Concept Index", "Appendix A Appendices", "Notes"):
        assert f"it has no text but its title ('{title}')" in reasons, reasons


def test_a_site_s_search_page_and_its_page_for_a_missing_address_are_skipped(tmp_path):
    # Every Sphinx site has a search.html (18 of Debian's documentation packages here) and themes add a 404.html: a
    # new user's Click pages indexed "Please activate JavaScript to enable the search functionality" as a document.
    (tmp_path / "search.html").write_text(
        '<html><body><div class="body" role="main"><h1 id="search-documentation">Search</h1><noscript><div '
        'class="admonition warning"><p>Please activate JavaScript to enable the search functionality.</p></div>'
        '</noscript><p>Searching for multiple words only shows matches that contain all words.</p><form action="" '
        'method="get"><input name="q" type="text"/><input type="submit" value="search"/></form>'
        '<div id="search-results"></div></div></body></html>')
    (tmp_path / "404.html").write_text("<html><body><h1>Page Not Found</h1><p>The page you requested does not "
                                       "exist. Go to the <a href='index.html'>overview</a>.</p></body></html>")
    # A page about searching, with a search box of its own but no results a script draws, is a document.
    (tmp_path / "searching.html").write_text(
        '<html><body><h1>Searching</h1><p>Use the search box to find a command by name.</p>'
        '<form><input name="q"/></form></body></html>')
    with pytest.warns(UserWarning) as said:
        report = read_documents([tmp_path])
    assert [d.id_ for d in report.documents] == ["searching.html"]
    reasons = " ".join(str(w.message) for w in said)
    assert "search.html': it is the site's search page" in reasons, reasons
    assert "404.html': it is the page a web server shows for an address it does not have" in reasons, reasons


def test_each_tab_s_label_stands_at_the_top_of_its_panel():
    # sphinx-tabs (Click's shell completion page): the row of Bash / Zsh / Fish buttons was not read, and the three
    # panels said "Save the script somewhere." with no shell named.
    page = ('<html><body><h1>Shell Completion</h1><div class="sphinx-tabs"><div role="tablist">'
            '<button role="tab" aria-controls="panel-bash" id="tab-bash">Bash</button>'
            '<button role="tab" aria-controls="panel-fish" id="tab-fish">Fish</button></div>'
            '<div role="tabpanel" id="panel-bash" aria-labelledby="tab-bash"><p>Save the script somewhere.</p></div>'
            '<div role="tabpanel" id="panel-fish" hidden="true"><p>Save the script to ~/.config/fish.</p></div>'
            '</div></body></html>')
    text = read_html(page).text
    assert "**Bash**\n\nSave the script somewhere.\n\n**Fish**\n\nSave the script to ~/.config/fish." in text, text
    assert text.count("Bash") == 1 and text.count("Fish") == 1, text


DOCUTILS_FAQ = """<html><body><div class="document" id="faq"><h1 class="title">Docutils FAQ</h1>
<table class="docinfo"><tbody><tr><th class="docinfo-name">Date:</th><td>2022-06-17</td></tr></tbody></table>
<div class="contents topic" id="contents"><p class="topic-title">Contents</p><ul class="auto-toc simple">
<li><a class="reference internal" href="#docutils" id="toc-entry-1">1 Docutils</a><ul class="auto-toc">
<li><a class="reference internal" href="#what-is-docutils" id="toc-entry-2">1.1 What is Docutils?</a></li>
<li><a class="reference internal" href="#why-is-it-called" id="toc-entry-3">1.2 Why is it called?</a></li></ul></li>
</ul></div>
<div class="section" id="docutils"><h2><a class="toc-backref" href="#toc-entry-1">1 Docutils</a></h2>
<div class="section" id="what-is-docutils"><h3><a class="toc-backref" href="#toc-entry-2">1.1 What is Docutils?</a></h3>
<p>Docutils is a system for processing plaintext documentation.</p></div>
<div class="section" id="why-is-it-called"><h3><a class="toc-backref" href="#toc-entry-3">1.2 Why is it called?</a></h3>
<p>Because it is a set of utilities.</p></div></div></div></body></html>"""


def test_a_page_whose_contents_box_goes_with_its_heading_is_read():
    # docutils' own HTML pages (45 of docutils-doc's): the reader failed on each ("'NoneType' object has no
    # attribute 'get'") and the page was skipped.
    text = read_html(DOCUTILS_FAQ).text
    assert "### 1.1 What is Docutils?\n\nDocutils is a system for processing plaintext documentation." in text, text
    assert "toc-entry" not in text and "Contents" not in text, text


def test_the_words_that_only_announce_a_page_s_contents_go_with_it():
    # Postfix's READMEs open "Topics covered in this document:" over a list of links to their sections: the list
    # went and the lead-in stood alone. A sentence that introduces such a list stays with it (the mdBook test).
    text = read_html('<h1>Postfix BDAT support</h1><p> Topics covered in this document: </p><ul>'
                     '<li><a href="#disable">Disabling BDAT support</a></li><li><a href="#impact">Impact</a></li>'
                     '<li><a href="#example">Example SMTP session</a></li></ul><p>Postfix supports CHUNKING:</p>'
                     '<h2 id="disable">Disabling BDAT support</h2><p>d</p><h2 id="impact">Impact</h2><p>i</p>'
                     '<h2 id="example">Example SMTP session</h2><p>e</p>').text
    assert "Topics covered" not in text and "](#impact)" not in text, text
    assert text.startswith("# Postfix BDAT support\n\nPostfix supports CHUNKING:\n\n## Disabling BDAT support"), text


def test_a_contents_box_hanging_from_the_page_s_title_entry_goes_whole():
    # CMake's Sphinx pages (docutils' contents directive): the page's title is the box's one top entry, its sections
    # nested below; once the nested list went, "Contents - [cmake-buildsystem(7)](#cmake-buildsystem-7)" was left
    # at the top of 28 pages of a new user's CMake documentation.
    page = ('<html><body><section id="cmake-buildsystem-7"><h1>cmake-buildsystem(7)</h1>'
            '<div class="contents topic" id="contents"><p class="topic-title">Contents</p><ul class="simple">'
            '<li><p><a class="reference internal" href="#cmake-buildsystem-7">cmake-buildsystem(7)</a></p><ul>'
            '<li><p><a class="reference internal" href="#introduction">Introduction</a></p></li>'
            '<li><p><a class="reference internal" href="#binary-targets">Binary Targets</a></p></li>'
            '<li><p><a class="reference internal" href="#pseudo-targets">Pseudo Targets</a></p></li>'
            '</ul></li></ul></div>'
            '<section id="introduction"><h2>Introduction</h2><p>A buildsystem is a set of targets.</p></section>'
            '<section id="binary-targets"><h2>Binary Targets</h2><p>Executables and libraries.</p></section>'
            '<section id="pseudo-targets"><h2>Pseudo Targets</h2><p>Imported and alias targets.</p>'
            '<p>See <a href="#introduction">Introduction</a>.</p></section></section></body></html>')
    text = read_html(page).text
    assert text.startswith("# cmake-buildsystem(7)\n\n## Introduction\n\nA buildsystem is a set of targets."), text
    assert "Contents" not in text and "See [Introduction](#introduction)." in text, text


def test_the_text_a_page_beside_it_was_made_from_is_not_read(tmp_path):
    # Debian's documentation packages ship a page's source or plain-text rendering beside it (378 pairs here:
    # docutils' FAQ.txt and FAQ.html; the GNU Coding Standards' standards.text.gz): the same words twice, whose copies
    # took the places of the pages' own chunks in a new user's top 10.
    (tmp_path / "FAQ.txt").write_text("Docutils FAQ\n============\n\nDocutils is a system.\n")
    (tmp_path / "FAQ.html").write_text(DOCUTILS_FAQ)
    (tmp_path / "standards.text.gz").write_bytes(gzip.compress(b"GNU Coding Standards\n\nWrite good code.\n"))
    (tmp_path / "standards.html").write_text("<html><body><h1>GNU Coding Standards</h1><p>Write good code.</p>"
                                             "</body></html>")
    (tmp_path / "NOTES.txt").write_text("Notes of no page.\n")
    (tmp_path / "README.html").write_text("<html><body><h1>README</h1><p>Build it with make.</p></body></html>")
    (tmp_path / "README").write_text("README\n\nBuild it with make.\n")
    (tmp_path / "README.Debian").write_text("On Debian the files are in /usr/share.\n")   # notes of its own
    with pytest.warns(UserWarning, match=r"'.*FAQ.txt' and 2 more files: it is the text of the HTML page of its name "
                                         r"beside it; the page is read as HTML"):
        report = read_documents([tmp_path])
    assert sorted(d.id_ for d in report.documents) == ["FAQ.html", "NOTES.txt", "README.Debian", "README.html",
                                                       "standards.html"]

def test_emphasis_put_on_one_token_at_a_time_is_read_as_its_words(tmp_path):
    # Sphinx writes a parameter's type one <em> per token, a link's <em> among them: Flask's API page read as
    # "*Optional**[**Union**[*..." (10,848 asterisks).
    page = ('<html><body><h1>API</h1><dl><dd><p><strong>view_func</strong> (<em>Optional</em><em>[</em>'
            '<em>Union</em><em>[</em><a class="reference internal" href="#flask.Response"><em>Response</em></a>'
            '<em>, </em><em>str</em><em>]</em><em>]</em>) – the function to call.</p>'
            '<p>This is <em>very</em> <em>important</em>: <em>a</em> word at a time.</p></dd></dl></body></html>')
    [doc] = _read(tmp_path, "api.html", page)
    assert "**view_func** (Optional[Union[[Response](#flask.Response), str]]) – the function to call." in doc.text, \
        doc.text
    assert "This is *very* *important*: *a* word at a time." in doc.text, doc.text


def test_a_docbook_admonition_drawn_with_its_icon_is_its_label_and_its_words():
    # The Guide for Debian Maintainers (DocBook, admon.graphics): "| [Note] | Note |" over a table row of prose.
    page = ('<html><body><h1>Basics</h1><p>An overview.</p><div class="note" style="margin-left: 0.5in;">'
            '<table border="0" summary="Note"><tr><td rowspan="2" align="center" valign="top">'
            '<img alt="[Note]" src="images/note.png"/></td><th align="left">Note</th></tr>'
            '<tr><td align="left" valign="top"><p>Some details are skipped. Read <strong>dpkg</strong>(1).</p>'
            '<p>And <code>deb</code>(5).</p></td></tr></table></div><p>After the note.</p></body></html>')
    text = read_html(page).text
    assert "**Note**\n\nSome details are skipped. Read **dpkg**(1).\n\nAnd `deb`(5).\n\nAfter the note." in text, text
    assert "[Note]" not in text and "|" not in text, text
    # A table of data inside a note is the note's words, as written.
    data = page.replace('<img alt="[Note]" src="images/note.png"/>', "1").replace("<th", "<td")
    data = data.replace("</th>", "</td>")
    assert "| Note |" in read_html(data).text



def test_a_table_laying_out_questions_and_answers_or_headings_is_read_as_its_words():
    # Valgrind's FAQ (DocBook qandaset): each answer's paragraphs and code became one line of a Markdown table cell.
    faq = ('<html><body><h1>FAQ</h1><table summary="Q and A Div" border="0">'
           '<tr class="qandadiv"><td colspan="2"><h3 class="title">1. Background</h3></td></tr>'
           '<tr class="question"><td><b>1.1.</b></td><td><b>How do you pronounce "Valgrind"?</b></td></tr>'
           '<tr class="answer"><td></td><td><p>The "Val" as in the word "value".</p>'
           '<pre class="screen">% valgrind ls</pre><p>Almost everyone gets it wrong.</p></td></tr>'
           '</table><p>After.</p></body></html>')
    text = read_html(faq).text
    assert ('### 1. Background\n\n**1.1.** **How do you pronounce "Valgrind"?**\n\nThe "Val" as in the word '
            '"value".\n\n```\n% valgrind ls\n```\n\nAlmost everyone gets it wrong.\n\nAfter.') in text, text
    assert "|" not in text, text
    # Without headings or question and answer rows a table is data, read as a table.
    data = faq.replace('<h3 class="title">1. Background</h3>', "1. Background").replace(' class="question"', "")
    assert "| **1.1.** |" in read_html(data).text
    # Cockpit's cockpit.conf (DocBook's variablelist drawn as a table): an option's words and its example, one line
    # of a table row each, are a term and its definition.
    options = ('<html><body><h2>WebService</h2><table border="0" class="variablelist"><colgroup><col/><col/></colgroup>'
               '<tbody><tr><td><p><span class="term"><code class="option">Origins</code></span></p></td>'
               '<td><p>Allow access from alternate domains.</p><div class="informalexample">'
               '<pre class="programlisting">[WebService]\nOrigins = https://a.example</pre></div></td></tr>'
               '<tr><td><p><span class="term"><code>LoginTitle</code></span></p></td><td><p>The title.</p></td></tr>'
               '</tbody></table></body></html>')
    text = read_html(options).text
    assert ("`Origins`\n:   Allow access from alternate domains.\n\n    ```\n    [WebService]\n    Origins = "
            "https://a.example\n    ```\n\n`LoginTitle`\n:   The title.") in text, text
    # A table of data inside an answer stays a table, its rows its own.
    nested = faq.replace("<p>Almost everyone gets it wrong.</p>",
                         "<table><tr><th>Tool</th><th>Slowdown</th></tr><tr><td>Memcheck</td><td>20x</td></tr></table>")
    assert "| Tool | Slowdown |\n| --- | --- |\n| Memcheck | 20x |" in read_html(nested).text

def test_links_to_the_page_s_headings_inside_one_entry_are_its_words():
    # Node.js's webcrypto page: "Type: <AesKeyGenParams> | <RsaHashedKeyGenParams> | ..." went as a contents list.
    names = ("AesKeyGenParams", "RsaHashedKeyGenParams", "EcKeyGenParams")
    page = ("<html><body>" + "".join(f'<h2 id="{n}">{n}</h2>' for n in names) + "<ul><li>Type: "
            + " | ".join(f'<a href="#{n}">&lt;{n}&gt;</a>' for n in names) + "</li></ul></body></html>")
    assert "Type: [<AesKeyGenParams>](#AesKeyGenParams) | [<RsaHashedKeyGenParams>]" in read_html(page).text
    # Each one an entry: the page's contents.
    listed = page.replace("<li>Type: ", "<li>").replace(" | ", "</li><li>")
    assert "AesKeyGenParams>](#" not in read_html(listed).text


def test_a_single_page_manuals_contents_listing_sections_opened_by_their_bar_is_not_read(tmp_path):
    # texinfo's single-page manuals (R's) link each contents entry to a section <div id> whose heading comes after
    # the node's "Next: / Previous: / Up:" bar; the contents (15.7 % of R's chunks with menus and indexes) went.
    sections = "".join(
        f'<div class="section" id="S{i}"><div class="header"><p>Next: <a href="#S{i + 1}" rel="next">N</a>, '
        f'Up: <a href="#Top" rel="up">Top</a></p></div><span id="S{i}-1"></span><h3>1.{i} Part {i}</h3>'
        f"<p>Words of part {i}.</p></div>" for i in range(1, 5))
    contents = "".join(f'<li><a id="toc-S{i}" href="#S{i}">1.{i} Part {i}</a></li>' for i in range(1, 5))
    page = ('<html><body><div class="Contents_element" id="SEC_Contents"><h2 class="contents-heading">Table of '
            f'Contents</h2><div class="contents"><ul>{contents}</ul></div></div>{sections}</body></html>')
    [doc] = _read(tmp_path, "R-FAQ.html", page)
    assert "Table of Contents" not in doc.text and "(#S1)" not in doc.text
    assert "### 1.1 Part 1\n\nWords of part 1." in doc.text
    # Unmarked (texinfo marks its contents' heading, a generator of its own may not), a section whose heading
    # follows words of its own is not opened by it: contents linking there stay.
    page = page.replace('<span id="S1-1"></span>', "<p>An introduction first.</p>").replace(
        ' class="contents-heading"', "").replace(' class="contents"', "")
    [doc] = _read(tmp_path, "R-FAQ.html", page)
    assert "(#S1)" in doc.text


def test_emphasis_in_pieces_of_one_word_and_emphasis_inside_its_own_kind_are_read_as_words():
    # DocBook wraps each piece in a span: "**lib***foo7***-dev**" held no "libfoo7-dev" (a new user's EPUB shelf);
    # "**Add to the **~/.bashrc** file.**" closed the outer bold at the inner one.
    text = read_html('<p>renamed from <span class="strong"><strong>lib</strong></span><span class="emphasis">'
                     '<em>foo7</em></span><span class="strong"><strong>-dev</strong></span> to its new name.</p>'
                     '<p><strong>Add to the <strong>~/.bashrc</strong> file.</strong></p>'
                     '<p>a <em>Parsing documents into <em>tokens</em></em>, a <b>bold</b> and an <em>it</em><b>bold</b>'
                     ' word, and lib<em>foo</em> kept.</p>').text
    assert "renamed from libfoo7-dev to its new name." in text, text
    assert "**Add to the ~/.bashrc file.**" in text, text
    assert "a *Parsing documents into tokens*, a **bold** and an itbold word, and lib*foo* kept." in text, text


def test_a_line_of_text_starting_with_a_hash_is_not_a_heading():
    # A shell prompt written as a paragraph (the Debian Live manual as a Word file: 49 of them) read as a heading,
    # so the splitter began a section there. Headings are the page's h1-h6; code keeps its "#".
    page = read_html("<h1>Install</h1><p># apt-get install live-build</p><p>Lines that start\n# are comments, "
                     "see <b>x</b> # here</p><ul><li><h3>Note</h3><p>## indented</p></li></ul>"
                     "<pre># root prompt</pre><h2 id='two'>Two</h2><p><a name='p'></a># anchored</p>")
    text = page.text
    assert "\n\\# apt-get install live-build\n" in text, text
    assert "Lines that start\n\\# are comments, see **x** # here" in text, text
    assert "```\n# root prompt\n```" in text, text
    assert text.startswith("# Install\n") and "\n## Two\n" in text and "### Note" in text, text
    assert "\\## indented" in text and "\ue002" not in text, text
    assert text[page.anchors["two"]:].startswith("Two") and text[page.anchors["p"]:].startswith("\\# anchored")
    # The list's one item opens with a heading: a section laid out as a list (test_a_list_of_sections_...).
    assert section_starts(text) == [0, text.index("### Note"), text.index("## Two")], section_starts(text)


APACHE_PAGE = """<html><head><title>mod_deflate - Apache HTTP Server Version 2.4</title></head><body>
<div id="page-header"><p class="apache">Apache HTTP Server Version 2.4</p><img alt="" src="../images/feather.png">
<img alt="_images/click-logo.png" src="_images/click-logo.png"><img alt="asf.png" src="../images/asf.png"></div>
<div class="up"><a href="./index.html"><img title="&lt;-" alt="&lt;-" src="../images/left.gif"></a></div>
<div id="path"><a href="https://www.apache.org/">Apache</a> &gt; <a href="../index.html">Version 2.4</a> &gt;
<a href="./index.html">Modules</a></div>
<div id="page-content"><div id="preamble"><h1>Apache Module mod_deflate</h1>
<h3>Summary</h3><p>The module provides the DEFLATE output filter.</p></div>
<div id="quickview"><h3>Topics</h3><ul id="topics"><li><img alt="" src="../images/down.gif">
<a href="#supported">Supported Encodings</a></li><li><a href="#enable">Enabling Compression</a></li>
<li><a href="#proxies">Dealing with proxy servers</a></li></ul>
<h3 class="directives">Directives</h3><ul id="toc"><li><a href="#deflatebuffersize">DeflateBufferSize</a></li>
<li><a href="#deflatememlevel">DeflateMemLevel</a></li><li><a href="#deflatewindowsize">DeflateWindowSize</a></li></ul>
<h3>See also</h3><ul class="seealso"><li><a href="../filter.html">Filters</a></li></ul></div>
<div class="top"><a href="#page-header"><img alt="top" src="../images/up.gif"></a></div>
<div class="section"><h2 id="supported">Supported Encodings</h2><p>Only gzip is supported.</p>
<p><img alt="Data flow: request, filter, response" src="flow.png"> <a href="flow.html"><img alt="Flow chart"
src="chart.png"></a></p></div>
<div class="top"><a href="#page-header"><img alt="top" src="../images/up.gif"></a></div>
<div class="section"><h2 id="enable">Enabling Compression</h2><p>Apache &gt; HTTP Server &gt; the filter chain.</p>
<p><a href="a.html">one</a> &gt; <a href="b.html">two</a></p></div>
<h2 id="proxies">Dealing with proxy servers</h2><h2 id="deflatebuffersize">DeflateBufferSize</h2>
<h2 id="deflatememlevel">DeflateMemLevel</h2><h2 id="deflatewindowsize">DeflateWindowSize</h2></div></body></html>"""


def test_a_sites_banner_trail_picture_buttons_and_the_headings_of_a_page_s_contents_are_not_read(tmp_path):
    """Apache's manual: the site's name the <title> gives after the page's, a logo without alt text (or with its file
    name for one), a picture link to the parent page ("<-") and to the page's top after each section, the breadcrumb
    trail, and the "Topics" and "Directives" headings over the page's own contents lists (which go as before)."""
    [doc] = _read(tmp_path, "mod_deflate.html", APACHE_PAGE)
    text = doc.text
    assert text.startswith("# Apache Module mod_deflate\n\n### Summary\n\nThe module provides"), text
    # ... nor a picture whose alt text is its file name (Sphinx writes a logo's so).
    for gone in ("Apache HTTP Server Version 2.4", "feather", "left.gif", "up.gif", "page-header", "[Apache]",
                 "Version 2.4", "Topics", "Directives", "down.gif", "click-logo", "asf.png"):
        assert gone not in text, gone
    assert "### See also\n\n- [Filters](../filter.html)" in text             # a heading over links to other pages
    # A picture that says something stays, as a link or not; so do ">" in the page's words, below its title.
    assert "![Data flow: request, filter, response](flow.png)" in text
    assert "[![Flow chart](chart.png)](flow.html)" in text
    assert "Apache > HTTP Server > the filter chain." in text and "[one](a.html) > [two](b.html)" in text
    assert "## Dealing with proxy servers\n\n## DeflateBufferSize" in text     # empty sections the page has


HANDBOOK_SECTION = """<html><head><title>6.1. Filling in the sources.list File</title></head><body>
<div class="section"><h2 class="title" id="sources">6.1. Filling in the sources.list File</h2>
<div class="para">Each active line starts with the type of source.</div>
<div class="sidebar"><p class="title"><strong>NOTE Layout of security repositories</strong></p>
<div class="para">Starting with Debian 11 Bullseye, the codename of the repository providing security updates has
been renamed. <div class="url">&#8594; <a href="https://www.debian.org/releases/bullseye/amd64/release-notes/ch-information.en.html#security-archive">https://www.debian.org/releases/bullseye/amd64/release-notes/ch-information.en.html#security-archive</a></div></div></div>
<div class="sidebar" id="links"><a href="a.html">Installing</a> <a href="https://example.org/b.html">https://example.org/b.html</a>
<a href="c.html">Removing packages</a></div>
<div class="para">A class-A range holds 2<sup>24</sup> addresses,
as the 1<sup>st</sup> footnote<sup>[<a href="#ftn.1">1</a>]</sup> says,
in O(N<sup>2</sup>) time<sup>2</sup>.</div></div>
</body></html>"""


def test_a_box_of_prose_that_prints_an_address_is_the_page_s_and_an_exponent_stays_apart_from_its_base(tmp_path):
    """The Debian Administrator's Handbook (Publican's DocBook): a NOTE box ending with the address it cites was read
    as a site's sidebar of links (the address's dozen words counted as link words) and lost; "2<sup>24</sup>" read
    "224"."""
    [doc] = _read(tmp_path, "apt.html", HANDBOOK_SECTION)
    text = doc.text
    assert "NOTE Layout of security repositories" in text and "the codename of the repository" in text
    assert "ch-information.en.html#security-archive" in text
    assert "Removing packages" not in text                     # a box of links is still a site's, addresses or not
    # An exponent stays apart from its base (a number, a variable's letter); an ordinal's letters and a footnote's
    # mark (after a word) do not take one.
    assert "holds 2^24 addresses,\nas the 1st footnote[[1](#ftn.1)] says,\nin O(N^2) time2." in text, text


def test_the_http_header_a_cgi_program_saved_above_its_page_is_not_read(tmp_path):
    # man2html writes "Content-type: text/html" above the page it serves; saved as bash.html, it was the page's first
    # words, and the page's <title> with them.
    page = ("Content-type: text/html; charset=UTF-8\n\n"
            "<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01 Transitional//EN\">\n"
            "<HTML><HEAD><TITLE>Man page of BASH</TITLE>\n</HEAD><BODY>\n<H1>BASH</H1>\n<H2>NAME</H2>\n"
            "bash - GNU Bourne-Again SHell\n</BODY></HTML>\n")
    [doc] = _read(tmp_path, "bash.html", page)
    assert doc.text == "# BASH\n\n## NAME\n\nbash - GNU Bourne-Again SHell\n"
    # A page whose words begin so is read as it is.
    assert read_html("<p>Content-type: text/html is the header a CGI program writes.</p>").text.startswith(
        "Content-type: text/html is")


def test_a_bar_of_moving_links_is_not_the_page_however_short_the_page():
    # LaTeX2HTML's short "See X" pages (a new user's gnuplot manual): the bar "Next: Y2ticlabels Up: Using Previous:
    # X2ticlabels" in div.navigation was more than half of the page's text and stayed; the question ranked the page on
    # the bar's "X2ticlabels". texinfo's Top node: its menu of 142 links was most of the page's text and stayed.
    gnuplot = read_html(
        '<html><head><title>Yticlabels</title></head><body><div class="navigation"><a href="node238.html"><img '
        'alt="next" src="next.png"></a><br><b> Next:</b> <a href="node238.html">Y2ticlabels</a> <b> Up:</b> <a '
        'href="node231.html">Using</a> <b> Previous:</b> <a href="node236.html">X2ticlabels</a> &nbsp; <b><a '
        'href="node649.html">Index</a></b></div><h4>Yticlabels</h4>See <b>plot using xticlabels (p.&nbsp;<a '
        'href="node235.html#plot_using_xticlabels"><img alt="[*]" src="crossref.png"></a>)</b>.<br><hr><a '
        'id="CHILD_LINKS"><strong>Subsections</strong></a><ul class="ChildLinks"><li><a href="node248.html">1D '
        'sampling</a></ul></body></html>').text
    assert "X2ticlabels" not in gnuplot and "Next" not in gnuplot, gnuplot
    # ... nor its list of the subsections' pages
    assert "Subsections" not in gnuplot and "1D sampling" not in gnuplot, gnuplot
    # the cross-reference drawn as a picture of "[*]" is that mark, not the picture's file name
    assert "[*](node235.html#plot_using_xticlabels))" in gnuplot and "crossref.png" not in gnuplot, gnuplot
    rows = "".join(f'<tr><td><a href="c{n}.html#c{n}">{n} Chapter {n}</a></td><td>&nbsp;&nbsp;</td><td></td></tr>'
                   for n in range(1, 40))
    top = read_html(f'<html><head><title>The Z Shell Manual</title></head><body><h1>The Z Shell Manual</h1><p>This '
                    f'Info file documents Zsh, a freely available UNIX command interpreter.</p><table class="menu">'
                    f'{rows}<tr><th colspan="3"><pre class="menu-comment">&mdash; Indices &mdash;</pre></th></tr>'
                    f'</table></body></html>').text
    assert "Chapter 12" not in top and "documents Zsh" in top, top


def test_texinfo_s_contents_page_an_index_of_terms_and_the_generator_s_note_are_not_read(tmp_path):
    # A new user's zsh manual (texi2any): its "Table of Contents" page (16 chunks), and on every page "This document
    # was generated on February 5, 2023 using texi2any." and zsh's version line after it, which kept its six index
    # pages (one chunk each, title and foot). LaTeX2HTML's index: 749 terms, each a link, no </dt> (libxml2 nested
    # them 749 deep: the page failed to read); a table of contents' numbered entries stay.
    foot = ('<p><font size="-1">This document was generated on <em>February 5, 2023</em> using <a '
            'href="https://www.gnu.org/software/texinfo/"><em>texi2any</em></a>.</font></p>'
            '<font size="-1">Zsh version 5.9, released on May 14, 2022.</font>')
    (tmp_path / "zsh_toc.html").write_text(
        '<html><head><title>Table of Contents</title></head><body><h1 class="contents-heading">Table of Contents</h1>'
        '<div class="contents"><ul><li><a href="Intro.html#Intro">1 Introduction</a></li></ul></div><hr>'
        f'{foot}</body></html>')
    # The zsh FAQ's front page: "Table of Contents" over the other pages' questions, each a heading and a link.
    (tmp_path / "FAQ.html").write_text(
        '<html><head><title>Z-Shell FAQ</title></head><body><h1>Z-Shell Frequently-Asked Questions</h1><h1>Table of '
        'Contents</h1><dl><dt><h2><a href="FAQ01.html#l1">Chapter 1: Introducing zsh</a></h2></dt><dd><dl>'
        + "".join(f'<dt><h3><a href="FAQ01.html#l{n}">1.{n}: Question {n}?</a></h3></dt>' for n in range(2, 9))
        + '</dl></dd></dl><p>This document contains a list of frequently-asked questions.</p></body></html>')
    (tmp_path / "Concept-Index.html").write_text(
        f'<html><head><title>Concept Index</title></head><body><h1>Concept Index</h1><hr>{foot}</body></html>')
    (tmp_path / "Files.html").write_text(
        f'<html><head><title>Files</title></head><body><h1>Files</h1><p>Startup files.</p><hr>{foot}</body></html>')
    terms = "".join(f'<DT><A HREF="node{n}.html#{n}"><STRONG>term{n}</STRONG></A>\n' for n in range(1200))
    (tmp_path / "node649.html").write_text(f'<HTML><BODY><H2>Index</H2><DL COMPACT>{terms}</DL></BODY></HTML>')
    contents = "".join(f'<dt><a href="ch{n}.html">{n}. Chapter {n}</a></dt>' for n in range(1, 30))
    (tmp_path / "admin.html").write_text(f'<html><body><h1>Administration</h1><div class="toc"><dl class="toc">'
                                         f'{contents}</dl></div></body></html>')
    report = read_documents([tmp_path])
    docs = {d.id_: d.text for d in report.documents}
    assert set(docs) == {"Files.html", "admin.html", "FAQ.html"}, docs
    assert "Question 3" not in docs["FAQ.html"] and "Table of Contents" not in docs["FAQ.html"], docs["FAQ.html"]
    assert "frequently-asked questions." in docs["FAQ.html"]
    assert "generated" not in docs["Files.html"] and "Zsh version" not in docs["Files.html"], docs["Files.html"]
    assert "[29. Chapter 29](ch29.html)" in docs["admin.html"]
    skipped = dict((Path(f).name, why) for f, why in report.skipped)
    assert skipped["node649.html"] == "it has no text but its title ('Index')", skipped
    assert skipped["zsh_toc.html"] == "it has no text" and "Concept Index" in skipped["Concept-Index.html"], skipped


def test_a_control_a_script_answers_is_not_read_and_a_heading_that_folds_its_section_is(tmp_path):
    """lxml's pages open with a "Menu" that a script opens the sidebar with (``div.menutrigger[onclick]``): read,
    it opened every page, and kept the sitemap (the sidebar alone) as a page reading "Menu"."""
    page = ("<html><head><title>lxml FAQ</title></head><body><div class=\"menutrigger\" "
            "onclick=\"trigger_menu(event)\">Menu</div><h1>lxml FAQ</h1>"
            "<h2 onclick=\"fold(this)\">Building</h2><p>Static builds need the libraries first.</p>"
            "<span role=\"button\">Copy</span><div onclick=\"go()\">A paragraph of the page that a script also "
            "answers a click on, which is its text all the same.</div></body></html>")
    [doc] = _read(tmp_path, "FAQ.html", page)
    assert doc.text.startswith("# lxml FAQ\n\n## Building\n\nStatic builds need the libraries first."), doc.text
    assert "Menu" not in doc.text and "Copy" not in doc.text and "its text all the same" in doc.text



def test_a_table_holding_a_table_is_read_row_by_row_and_its_inner_column_as_a_list(tmp_path):
    """DocBook's revision history (the Securing Debian Manual's appendix): each revision's changes a one-column table
    in a cell of the outer table, read as one line of pipes and rules ("| | | --- | | Migrate to Docbook XML. |")."""
    page = ("<html><head><title>Appendix A. History</title></head><body><h1>Appendix A. History</h1>"
            "<div class=\"revhistory\"><table><tr><th colspan=\"3\">Revision History</th></tr>"
            "<tr><td>Revision 3-18</td><td>April 2017</td><td>Marcos Fouces</td></tr>"
            "<tr><td colspan=\"3\"><table class=\"simplelist\"><tr><td>Migrate to Docbook XML.</td></tr>"
            "<tr><td>Build with Publican.</td></tr></table></td></tr></table></div>"
            "<table><tr><th>Option</th><th>Default</th></tr><tr><td>on</td><td>yes</td></tr></table></body></html>")
    [doc] = _read(tmp_path, "changelog_history.html", page)
    assert "Revision 3-18 April 2017 Marcos Fouces\n\n- Migrate to Docbook XML.\n- Build with Publican." in doc.text, \
        doc.text
    assert "| --- | |" not in doc.text and "| Option | Default |" in doc.text   # a table of data stays one


def test_a_rule_at_the_page_s_edge_and_a_menu_of_links_above_its_title_are_not_read():
    # texinfo draws a rule under its navigation bar and over the one at the foot: with the bars gone, a new user's
    # SBCL internals pages began with "---". Pygments' pages open with a list of links to the site's other pages.
    texinfo = ('<html><head><title>Cold init (SBCL Internals)</title></head><body>'
               '<div class="header"><p>Up: <a href="Build.html" rel="up">Build</a></p></div><hr>'
               '<h3>1.1 Cold init</h3><p>At the start of cold init.</p><hr><p>Then genesis.</p>'
               '<hr><div class="header"><p>Next: <a href="Warm.html" rel="next">Warm</a></p></div></body></html>')
    text = html_to_markdown(texinfo)
    assert text.startswith("### 1.1 Cold init") and text.rstrip().endswith("Then genesis.")
    assert text.count("---") == 1   # the rule between two paragraphs stays
    site = ('<html><head><title>Available formatters — Pygments</title></head><body><div class="pageheader"><ul>'
            '<li><a href="../index.html">Home</a></li><li><a href="../faq.html">FAQ</a></li>'
            '<li><a href="index.html">Docs</a></li></ul></div>'
            '<h1>Available formatters</h1><p>All formatters:</p><ul><li><a href="html.html">HTML</a></li>'
            '<li><a href="latex.html">LaTeX</a></li></ul></body></html>')
    text = html_to_markdown(site)
    assert "FAQ" not in text and "[HTML](html.html)" in text and "[LaTeX](latex.html)" in text


def test_a_term_s_classifier_is_set_apart_from_the_term():
    # Sphinx writes an option's type after its name with nothing between (docutils' stylesheet draws " : "): a new
    # user's Pygments options read "codetagslist of strings". docutils' own HTML writes the colon.
    sphinx = ('<dl><dt><cite>codetags</cite><span class="classifier">list of strings</span></dt>'
              '<dd><p>Code tags.</p></dd></dl>')
    assert "codetags : list of strings" in html_to_markdown(sphinx)
    docutils = ('<dl><dt><tt>scale</tt> <span class="classifier-delimiter">:</span> '
                '<span class="classifier">integer percentage</span></dt><dd><p>Scale.</p></dd></dl>')
    assert "scale : integer percentage" in html_to_markdown(docutils)


def test_a_code_block_that_shows_a_fence_is_fenced_by_a_longer_one():
    # Python-Markdown's pages show fenced code as examples: fenced by three backticks, their own closing fence ended
    # the block half way and the rest of the page read as code.
    from ragplugins.markup_lines import in_code_fences

    text = html_to_markdown("<h1>Fenced</h1><pre><code>```python\nprint(1)\n```\n</code></pre>"
                            "<h2>Next</h2><p>After.</p>")
    lines = text.splitlines()
    assert "````\n```python\nprint(1)\n```\n````" in text
    assert not in_code_fences(lines)[lines.index("## Next")]
    assert "```\nprint(2)\n```" in html_to_markdown("<pre><code>print(2)</code></pre>")


def test_a_cell_that_spans_rows_is_read_in_each_row():
    # Babel's date fields: "Year" spans the rows of "y", "Y" and "u"; read once, the rows below it lost a column.
    text = html_to_markdown("<table><tr><th>Field</th><th>Symbol</th><th>Meaning</th></tr>"
                            "<tr><td rowspan='3' id='year'>Year</td><td>y</td><td>the year</td></tr>"
                            "<tr><td>Y</td><td>the ISO year</td></tr><tr><td>u</td><td>unknown</td></tr>"
                            "<tr><td>a</td><td rowspan='2'>b</td><td>c</td></tr><tr><td>d</td><td>e</td></tr>"
                            "<tr><td colspan='2'>wide</td><td>f</td></tr></table>")
    assert "| Year | Y | the ISO year |" in text and "| Year | u | unknown |" in text
    assert "| d | b | e |" in text and "| wide | | f |" in text
    assert text.count("Year") == 3


def test_a_dialog_a_script_opens_is_not_read():
    # MkDocs' theme puts its "Search" and "Keyboard Shortcuts" boxes at the foot of every page.
    text = html_to_markdown('<h1>Writing</h1><p>Pages are Markdown.</p><div class="modal" role="dialog" '
                            'aria-hidden="true"><h4>Keyboard Shortcuts</h4><table><tr><td>s</td><td>Search</td></tr>'
                            '</table></div>')
    assert "Pages are Markdown." in text and "Keyboard" not in text


DOXYGEN_PAGE = """<html><head><title>libssh: The SSH scp functions</title></head><body>
<div id="top"><div id="titlearea"><table><tr><td><div id="projectname">libssh <span id="projectnumber">0.10.6</span>
</div><div id="projectbrief">The SSH library</div></td></tr></table></div></div>
<div class="header"><div class="summary"><a href="#func-members">Functions</a></div>
<div class="headertitle"><div class="title">The SSH scp functions<div class="ingroups"><a class="el"
href="group__libssh.html">The libssh API</a></div></div></div></div>
<div class="contents"><p>Connect with <a class="el" href="group__session.html#ga1">ssh_new()</a>, then:</p>
<div class="fragment"><div class="line"><a id="l00090" name="l00090"></a><span class="lineno">   90</span>
<span class="preprocessor">#include &lt;libssh/libssh.h&gt;</span></div>
<div class="line"><a id="l00091" name="l00091"></a><span class="lineno">   91</span>&#160;&#160;<a
class="code hl_function" href="group__session.html#ga1">ssh_new</a>();</div></div>
<div class="ttc" id="agroup__session_html_ga1"><div class="ttname"><a href="group__session.html#ga1">ssh_new</a></div>
<div class="ttdeci">LIBSSH_API ssh_session ssh_new(void)</div><div class="ttdoc">Create a new ssh session.</div>
<div class="ttdef"><b>Definition:</b> session.c:59</div></div>
<h2 class="memtitle"><span class="permalink"><a href="#ga9f">&#9670;&#160;</a></span>ssh_scp_new()</h2>
<p>Key exchange: curve<span class="obfuscator">.nosp@m.</span>25519-sha256@libssh.org.</p></div>
<hr class="footer"/><address class="footer"><small>Generated by&#160;<a href="https://www.doxygen.org/index.html">
<img class="footer" src="doxygen.svg" alt="doxygen"/></a> 1.9.4</small></address></body></html>"""


def test_a_doxygen_page_reads_as_its_browser_shows_it():
    # A new user's libssh manual (walk95): tooltips and e-mail obfuscation its stylesheet hides were read (11 % of
    # the text), code fragments read a paragraph per line with line numbers glued on, and every page kept the
    # project's title area, the jump bar above the title and the "Generated by doxygen" footer.
    text = read_html(DOXYGEN_PAGE).text
    assert "```\n#include <libssh/libssh.h>\n  [" not in text
    assert "```\n#include <libssh/libssh.h>\n  ssh_new();\n```" in text
    assert "## ssh_scp_new()" in text and "◆" not in text
    assert "curve25519-sha256@libssh.org" in text
    for hidden in ("Create a new ssh session", "session.c:59", "nosp", "0.10.6", "The SSH library", "[Functions]",
                   "Generated", "1.9.4", " 90", "91"):
        assert hidden not in text, hidden
    assert "Connect with [ssh_new()](group__session.html#ga1), then:" in text
    # Its title box is the page's heading, the group it belongs to below it.
    assert text.startswith("# The SSH scp functions\n\n[The libssh API](group__libssh.html)\n"), text


def test_a_signature_s_parameters_are_not_emphasis():
    # Sphinx sets a signature's parameters in italics: as Markdown emphasis, "*args" ran into the marks.
    text = html_to_markdown('<dl class="py method"><dt class="sig sig-object py" id="Task.delay"><em class="property">'
                            '<span class="pre">method</span> </em><span class="sig-name descname">delay</span>('
                            '<em class="sig-param"><span class="o">*</span><span class="n">args</span></em>, '
                            '<em class="sig-param"><span class="o">**</span><span class="n">kwargs</span></em>)</dt>'
                            '<dd><p>Star argument <em>version</em> of apply_async.</p></dd></dl>')
    assert "method delay(*args, **kwargs)" in text and "*version*" in text


def test_a_bold_parameter_with_stars_of_its_own_is_read_as_written():
    # A new user's requests API page: "<strong>**kwargs</strong>" read "****kwargs**".
    text = html_to_markdown('<ul><li><p><strong>**kwargs</strong> – Optional arguments that <strong>request</strong> '
                            'takes.</p></li><li><p><em>*args</em> – More.</p></li></ul>')
    assert "- **kwargs – Optional arguments that **request** takes." in text and "- *args – More." in text, text


def test_a_mark_inside_a_name_is_read_as_the_name():
    # Postfix italicises a parameter's variable part: "*transport*_destination_concurrency_limit" was no name.
    text = html_to_markdown('<p>Set <a href="postconf.5.html#x"><i>transport</i>_destination_concurrency_limit</a>, '
                            'see <code>os.path</code>.join, <i>name</i>.conf and non-<code>null</code>; <b>Note</b>: '
                            'it is <em>not</em> (<em>ever</em>) so, libraryname<em>soversion</em>.</p>')
    assert "[transport_destination_concurrency_limit](postconf.5.html#x)" in text, text
    assert "os.path.join" in text and "name.conf" in text and "non-null" in text
    # set off from the words beside it, or letters touching letters (Policy's placeholders): marked as before
    assert "**Note**: it is *not* (*ever*) so, libraryname*soversion*." in text, text


def test_a_manual_page_printed_into_one_pre_is_read_as_text():
    # Postfix's manual pages are groff's output in one <pre>: read as a code block, its links had no targets and
    # groff's line-end hyphens split words ("dis-\n carded").
    page = ('<html><head><title>Postfix manual - qmgr(8)</title></head><body><pre>\n'
            'QMGR(8)                                                                QMGR(8)\n\n'
            '<b>NAME</b>\n       qmgr - Postfix queue manager\n\n'
            '<b>DESCRIPTION</b>\n'
            '       The <a href="qmgr.8.html"><b>qmgr</b>(8)</a> daemon awaits the arrival of incoming mail. Mail\n'
            '       addressed to the local <b>double-bounce</b> address is  logged  and  dis-\n'
            '       carded. Lists in $<a href="postconf.5.html#mydestination">mydesti</a>-\n'
            '       <a href="postconf.5.html#mydestination">nation</a> are  a  well-\n'
            '       known problem: see the well-known table.\n\n'
            '       hosts = 127.0.0.1\n\n'
            '                                                                       QMGR(8)\n'
            '</pre></body></html>')
    text = html_to_markdown(page)
    assert text.startswith("# QMGR(8)\n\n## NAME\n\nqmgr - Postfix queue manager\n\n## DESCRIPTION\n"), text
    assert "The [**qmgr**(8)](qmgr.8.html) daemon" in text and "```" not in text
    assert "logged and discarded." in text          # no "discarded" elsewhere: groff's hyphen all the same
    assert "$[mydestination](postconf.5.html#mydestination)" in text
    assert "well-\nknown problem" in text            # the page writes "well-known": its own hyphen
    assert text.rstrip().endswith("hosts = 127.0.0.1"), text   # the footer is not read
    # A code block that is no manual page is one.
    assert html_to_markdown("<pre>QMGR(8) is the queue manager\n  run it</pre>").startswith("```")


GI_DOCGEN_PAGE = """<html><body><nav><a href="index.html">Gtk</a> 4.8.3</nav>
<header><h1>Site name</h1></header>
<section id="main" class="content"><header><h3>Class</h3>
<h1 aria-label="Name"><a href="index.html">Gtk</a><span class="sep" role="presentation"></span>DropTargetAsync</h1>
</header><section><div class="toggle-wrapper"><h4 id="description">Description
<a href="#description" class="anchor"></a><a class="srclink" title="go to source location"
href="https://gitlab.gnome.org/GNOME/gtk/-/blob/main/gtk/gtkdroptargetasync.c#L37">[src]</a></h4>
<p>The ::drop handler must finish the operation by calling <a class="external" href="javascript:void(0)"
data-link="method.Drop.finish.html" data-namespace="Gdk"><code>gdk_drop_finish()</code></a>.</p></div>
<div class="toggle-wrapper default-hide ancestor-methods"><h5>Methods inherited from
<a href="class.EventController.html">GtkEventController</a> (13)</h5><h6><a href="method.EventController.reset.html">
gtk_event_controller_reset</a></h6><p>Resets the controller to a clean state.</p></div>
</section></section></body></html>"""


def test_a_gi_docgen_page_is_read_with_its_title_and_its_links_into_other_libraries():
    # A new user's GTK 4 pages: each class page's title is in a header inside its main section (read as the site's,
    # 274 of 276 titles lost); a link into another library's manual is a script's ("by calling ." on 269 pages); the
    # members inherited from each ancestor, folded away, were 43 % of the text.
    text = read_html(GI_DOCGEN_PAGE).text
    assert "# [Gtk](index.html) DropTargetAsync" in text, text
    assert "by calling [`gdk_drop_finish()`](../Gdk/method.Drop.finish.html)." in text
    assert "Site name" not in text
    assert "inherited" not in text and "gtk_event_controller_reset" not in text


def test_what_a_page_says_where_scripts_do_not_run_is_not_read():
    # Javadoc opens every page with "JavaScript is disabled on your browser." (a new user's Commons Lang pages).
    text = html_to_markdown('<noscript><div>JavaScript is disabled on your browser.</div></noscript>'
                            '<h1>Class CharUtils</h1><p>Operations on char primitives.</p>')
    assert "JavaScript" not in text and text.startswith("# Class CharUtils")


def test_a_list_of_sections_is_read_as_its_sections():
    # Javadoc lays out "Method Details" and each method's section as items of nested lists: each heading read
    # behind a bullet ("- ## Method Details", "  - ### getValue"), which the splitter does not take for a heading
    # (a new user's Commons Lang pages). A list whose items only some of which open with a heading is a list.
    text = html_to_markdown('<h1>Class BitField</h1><section class="details"><ul class="details-list"><li>'
                            '<section class="method-details"><h2>Method Details</h2><ul class="member-list"><li>'
                            '<section class="detail" id="getValue(int)"><h3>getValue</h3><p>Obtains the value.</p>'
                            '</section></li><li><section class="detail"><h3>clear</h3><p>Clears the bits.</p>'
                            '</section></li></ul></section></li></ul></section>'
                            '<ul><li><h4>Install</h4></li><li>Then run it.</li></ul>')
    assert "\n## Method Details\n\n### getValue\n\nObtains the value.\n\n### clear\n" in text, text
    assert "- #### Install" in text and "- Then run it." in text, text


def test_a_script_link_that_opens_a_page_is_a_link_to_it_and_the_title_said_twice_is_said_once():
    # Erlang/OTP writes every link into another application as a script call naming the page, and its title both in
    # the site's bar and over the page: a new user's pages read "(see also )" and opened "# heart" "# heart".
    page = ('<html><head><title>Erlang -- heart</title></head><body><div class="topbar"><div class="topbar-title">'
            '<h1 id="heart">heart</h1></div><a href="javascript:openAllFlips()">Expand All</a></div>'
            '<div id="content"><center><h1>heart</h1></center><p>Started with flag -heart (see also '
            '<a href="javascript:erlhref(\'../../../../doc/../\',\'erts\',\'erl.html#heart\');">erl(1)</a>).</p>'
            '<p>A <a href="javascript:popup(\'glossary.html#node\')">node</a>.</p>'
            '<h2>Types</h2><p>Node = <a href="javascript:erlhref(\'../../\',\'erts\',\'erlang.html#type-node\');">'
            'node()</a></p><h3>Node</h3><h3>Node</h3><p>Two headings alike below the title stay.</p></div>'
            '</body></html>')
    text = html_to_markdown(page)
    assert text.count("heart\n") == 1 and text.startswith("# heart")
    # in the folder of the application the script names, beside this one's
    assert "(see also [erl(1)](../erts/erl.html#heart))" in text and "Node = [node()](../erts/erlang.html#type-node)" \
        in text
    assert "A [node](glossary.html#node)." in text
    assert "Expand All" not in text and "javascript" not in text
    assert text.count("### Node") == 2


def test_a_code_listing_drawn_as_a_table_beside_its_line_numbers_is_a_code_block():
    # gtk-doc (and Pygments' linenos="table") put the lines' numbers in one cell and the code in the other: read as a
    # table, a new user's cairo listings were one row, "1 2 3" beside code without its line breaks.
    page = ('<html><body><h1>Surfaces</h1><table class="listing_frame"><tr><td class="listing_lines"><pre>1\n2\n3'
            '</pre></td><td class="listing_code"><pre class="programlisting">void\nflush (cairo_surface_t *s)\n{ }'
            '</pre></td></tr></table><table><tr><td>1</td><td><pre>a data table, not a listing</pre></td></tr>'
            '<tr><td>2</td><td>b</td></tr></table></body></html>')
    text = html_to_markdown(page)
    assert "```\nvoid\nflush (cairo_surface_t *s)\n{ }\n```" in text and "1 2 3" not in text
    assert "| 1 |" in text and "| 2 | b |" in text            # two rows of data stay a table


def test_a_link_to_a_path_with_brackets_or_spaces_is_written_encoded():
    # "[Quartz](cairo-Quartz-(CGFont)-Fonts.html)" read as a link to "cairo-Quartz-" (a new user's cairo manual).
    text = html_to_markdown('<p>See <a href="cairo-Quartz-(CGFont)-Fonts.html#x">Quartz</a> and '
                            '<a href="Adding a Library.html">this</a>.</p>')
    assert "[Quartz](cairo-Quartz-%28CGFont%29-Fonts.html#x)" in text and "[this](Adding%20a%20Library.html)" in text


def test_a_row_of_columns_that_are_lists_is_read_as_the_lists():
    # Postfix's documentation index lays out three columns of titled lists in one table row: read as one Markdown
    # table row, every title and link of a column ran into one cell. A row of cells of words is a table.
    text = read_html('<h1>Postfix Documentation</h1><table><tr><td><p><strong>General configuration</strong></p>'
                     '<ul><li><a href="BASIC.html">Basic configuration</a></li><li><a href="SOHO.html">Small office'
                     '</a></li></ul></td><td><p><strong>Problem solving</strong></p><ul><li><a href="QSHAPE.html">'
                     'Bottleneck analysis</a></li></ul></td></tr></table>'
                     '<table><tr><th>Name</th><th>Default</th></tr><tr><td>a</td><td>1</td></tr></table>').text
    assert "**General configuration**\n\n- [Basic configuration](BASIC.html)\n- [Small office](SOHO.html)" in text, text
    assert "**Problem solving**\n\n- [Bottleneck analysis](QSHAPE.html)" in text
    assert "| Name | Default |" in text


def test_a_column_of_links_beside_the_page_in_a_layout_table_is_a_menu_and_a_box_in_it_is_its_block():
    # libxml2's site, laid out with tables: its "Main Menu" read as text on 78 of a new user's 102 pages, and each box
    # of one cell read as a list item ("- - ## Introduction").
    menu = "".join(f'<tr><td><a href="p{i}.html">Page number {i}</a></td></tr>' for i in range(12))
    page = ('<html><head><title>Introduction</title></head><body><table><tr>'
            f'<td width="200" valign="top"><table><tr><td>Main Menu</td></tr>{menu}</table></td>'
            '<td valign="top"><table><tr><td><h2>Introduction</h2><p>This document describes libxml, the XML C parser '
            'and toolkit developed for the Gnome project, and how to use its push and pull parser interfaces. It '
            'validates documents against a DTD while it parses them, or against one given apart.</p>'
            '</td></tr></table></td></tr></table>'
            '<table><tr><th>Function</th><th>Use</th></tr>'
            + "".join(f'<tr><td><a href="f{i}.html">xmlFunc{i}</a></td><td>does thing {i}</td></tr>' for i in range(12))
            + '</table></body></html>')
    text = html_to_markdown(page)
    assert text.startswith("## Introduction\n\nThis document describes libxml") and "Main Menu" not in text
    assert "Page number" not in text and "- -" not in text
    assert "| [xmlFunc3](f3.html) | does thing 3 |" in text      # a table of data with a column of links stays
