"""Reading documents: what each document is (its profile) and what its chunks point at (raw references).

Everything here is deterministic text processing over a chunk's original text;
nothing is resolved to a document yet except name mentions (see ``resolve``).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import unquote

from ragplugins import api
from ragplugins_crossref.families import MD_LINK, TERM, ReferenceFamily, families_for
from ragplugins_crossref.names import Mention, NameIndex, file_stem_name, title_variants, tokens

_HEADING_LINE = r"[ \t]{0,3}#{1,6}[ \t]+(?P<text>\S.{0,300})$"
_MD_HEADING = re.compile("^" + _HEADING_LINE, re.M)
# The same, also inside a block quote ("> ### The Stack and the Heap").
_QUOTED_HEADING = re.compile(r"^(?:[ \t]{0,3}>)*" + _HEADING_LINE, re.M)
# Where a section starts: "## 4.3 Title", "4.1 Buyer's obligation", "ARTICLE IV - ...", "Section 7. Fees", "§ 3".
_SECTION_START = re.compile(
    r"^[ \t]{0,8}(?P<hashes>#{1,6}[ \t]{1,3})?"
    r"(?:(?P<word>(?i:article|section|clause|chapter))[ \t\u00a0]{1,3}|§[ \t]{0,2})?"
    # Roman numerals only after a word ("Article IV"), so list letters ("C. Due Diligence") are not sections.
    # A bare number has at most two digits at the top level: "500 Technology Drive" is an address.
    # A heading's number may link to its own anchor, as HAProxy's manuals write them: "# [2.](#2) Configuring".
    r"(?P<link>\[)?"
    r"(?P<value>(?(word)\d{1,4}|\d{1,2})(?:\.\d{1,3}){0,4}|(?(word)[IVXLC]{1,7}(?=[ \t.:\-–—])|(?!)))"
    r"[.:]?(?(link)\]\(#[^()\s]{0,80}\))[ \t\u00a0]{1,4}(?=[A-Z\"“(\-–—])"
    # A date on a line of its own ("18 February 2016", a PDF's title page) is no section 18.
    r"(?!(?:January|February|March|April|May|June|July|August|September|October|November|December),?[ \t]+\d{4}\b)",
    re.M)
# A setext title, as AsciiDoc and reStructuredText write it: "git-config(1)" over a line of "=".
_SETEXT_TITLE = re.compile(
    r"\A\s{0,200}?(?:[=\-~^*#]{3,300}[ \t]*\n)?(?P<text>\S[^\n]{0,300})\n[=\-~^*#]{3,300}[ \t]*$", re.M
)
# A manual page's file, named as man and its HTML and text renderings name them: "postconf.5.html" is
# postconf(5), "signal.7.txt" signal(7), "git-config.1" git-config(1).
_MANUAL_PAGE_FILE = re.compile(r"(?P<id>[A-Za-z][\w+-]{0,60}(?:\.[A-Za-z][\w+-]{0,30}){0,3}?)"
                               r"\.(?P<volume>[1-9])[a-z]{0,3}(?:\.(?i:html?|txt|gz))*$")
# A manual page's title opens with its name ("syslog(3)", "GIT-CONFIG(1) Manual Page"), a section number at most
# before it; a title that names one further in is about using it (Linux-PAM's guide: "5.2. Use of syslog(3)" took
# every syslog(3) of the folder), where a standard's title may name it after its words ("Using TLS to Secure QUIC
# (RFC 9001)").
_TITLE_NUMBER = re.compile(r"[\s\d.]*")
# A manual page's header line, its name and volume at both ends: "define(3tcl)   TclOO Commands   define(3tcl)".
_MANUAL_PAGE_HEADER = re.compile(r"(?P<name>[A-Za-z][\w.:+-]{0,60}\([1-9][a-z]{0,3}\))[ \t].{0,200}[ \t](?P=name)")
# A manual page's NAME section: every name before the dash is one ``man`` finds the page by ("Tcl_Alloc,
# Tcl_Free, ckalloc - allocate or free heap memory"; Debian links Tcl_Free.3tcl to Tcl_Alloc.3tcl). groff's HTML
# makes NAME a heading ("## NAME", a blank line, the names).
_MANUAL_PAGE_NAMES = re.compile(r"^(?:#{1,6}[ \t]+)?NAME[ \t]*\n(?:[ \t]*\n)?"
                                r"(?P<names>(?:[ \t]{0,12}\S[^\n]{0,300}(?:\n|\Z)){1,24})", re.M)
_NAMES_END = re.compile(r"[ \t](?:\\?-|[\u2010-\u2014])[ \t]")
_MANUAL_PAGE_NAME = re.compile(r"[A-Za-z][\w.+-]{0,60}(?:::[A-Za-z][\w.+-]{0,60}){0,3}")
# docutils' manual-page writer (rst2man) takes a page's volume from its field ":Manual section: 1", and HTML built
# from the same source shows it under the title ("Manual section:" over ":   1" as the reader writes a definition
# list, or a docinfo table's row): libvirt's manpages/virsh.html is virsh(1), whose title is just "virsh".
_MANUAL_SECTION_FIELD = re.compile(r"^(?::?Manual section:[ \t]*(?:\n:[ \t]+)?|\|[ \t]*Manual section:[ \t]*\|[ \t]*)"
                                   r"(?P<volume>[1-9][a-z]{0,3})\b", re.M)
# Names a reStructuredText (Sphinx) document declares for others to point at.
# A label ".. _name:" marks the place below it; with a path after it, on its line or the next indented one, it is
# a hyperlink target (_RST_TARGET), the name of another page.
_RST_LABEL = re.compile(r"^\.\.[ \t]{1,3}_(?P<key>[^:\n`]{1,200}):[ \t]*$(?!\n[ \t]{1,12}\S)", re.M)
_RST_TARGET = re.compile(r"^\.\.[ \t]{1,3}_(?:`(?P<quoted>[^`\n]{1,200})`|(?P<key>[^:`\n]{1,200})):"
                         r"(?:[ \t]{1,8}|[ \t]*\n[ \t]{1,12})(?P<entry>\S{1,300})[ \t]*$", re.M)
# Chained targets: ".. _HTML4:" right above ".. _html4 writer: ../../user/html.html#html4css1" names that path too.
_RST_CHAINED_TARGET = re.compile(
    r"^\.\.[ \t]{1,3}_(?:`(?P<quoted>[^`\n]{1,200})`|(?P<key>[^:`\n]{1,200})):[ \t]*\n"
    r"(?=(?:\.\.[ \t]{1,3}_[^\n]{1,200}:[ \t]*\n){0,8}"
    r"\.\.[ \t]{1,3}_(?:`[^`\n]{1,200}`|[^:`\n]{1,200}):[ \t]{1,8}(?P<entry>\S{1,300})[ \t]*$)", re.M)
# Anonymous references, `Some words`__ and word__, and their targets ("__ path" or ".. __: path"), which go by
# order: the n-th reference names the n-th target.
_RST_ANONYMOUS = re.compile(r"(?<![`\w:])`(?P<quoted>[^`<>]{1,200})`__(?![\w`])"
                            r"|(?<![\w`.:/\\-])(?P<word>[A-Za-z0-9](?:[\w.+-]{0,80}[A-Za-z0-9])?)__(?![\w`])")
_RST_ANONYMOUS_TARGET = re.compile(r"^[ \t]{0,12}(?:__|\.\.[ \t]{1,3}__:)(?:[ \t]{1,8}|[ \t]*\n[ \t]{1,12})"
                                   r"(?P<entry>\S{1,300})[ \t]*$", re.M)
# A line that defines a hyperlink target (".. _name: path", "__ path"): what it names is read where it is referred to.
_RST_TARGET_LINE = re.compile(r"^[ \t]{0,12}(?:\.\.[ \t]{1,3}_|__[ \t])", re.M)
RST_DIRECTIVE = re.compile(
    r"^(?P<indent>[ \t]{0,12})\.\.[ \t]{1,3}(?:py:)?(?P<what>module|currentmodule|function|class|exception|data|"
    r"method|attribute|decorator|classmethod|staticmethod|property|decoratormethod|abstractmethod)::[ \t]{1,5}"
    r"(?P<name>[\w.]{1,200})", re.M)
# Where a document defines a name (an option, a variable, a parameter): the first cell of a table row
# ("| tls_dhparam | Use: main | ..."), a Markdown definition-list term ("$sender_host_name" over ":   This
# variable ...", "**mydestination (default: ...)**"), an AsciiDoc one ("core.editor::"). A name merely used
# stands in running text. Any one-word name here (prose finds only families.TERM's): a link's fragment or
# words name the entry exactly.
_NAME = r"\$?[A-Za-z][\w$-]{0,60}(?:\.[\w$-]{1,40}){0,6}"
_TERM_DEFINITION = re.compile(
    # (not a header row: the row above a "| --- |" line)
    rf"^(?:\|[ \t]{{0,4}}(?:`|\*\*)?(?P<cell>{_NAME})(?:`|\*\*)?[ \t]{{0,4}}\|"
    rf"(?![^\n]*\n[ \t]{{0,3}}\|[ \t]{{0,4}}:?-{{3}})"
    rf"|(?:`|\*\*)?(?P<term>{_NAME})(?:`|\*\*|[ \t(,][^\n]{{0,300}})?\n[ \t]{{0,3}}:[ \t]"
    rf"|(?P<adoc>{_NAME})::[ \t]*$)", re.M)
# A command-line option's definition-list term, "`-of, -print_format writer_name[=writer_options]`" over ":   Set
# the output printing format": it defines each option it lists, without its dashes (the page's prose calls it "the
# `print_format` option"; FFmpeg's filters page defines an option of that name too).
_OPTION_TERM = re.compile(r"^(?:`|\*\*)?(?P<line>--?[A-Za-z][^\n]{0,300})\n[ \t]{0,3}:[ \t]", re.M)
_OPTION_NAME = re.compile(r"(?:^|,[ \t]{0,4})(?:`|\*\*)?--?(?P<name>[A-Za-z][\w.-]{0,60}[A-Za-z0-9])")
# A heading that is one configuration name, as a reference page heads each setting ("### site_name" in MkDocs'
# configuration page, whose prose calls it "the `site_name` setting": a release note's table row naming it was the
# only definition found, and 4 such references went there).
_TERM_HEADING = re.compile(rf"^#{{1,6}}[ \t]+(?:`|\*\*)?(?P<name>{TERM})(?:`|\*\*)?[ \t]*$", re.M)
_LINE_SLACK = 12   # characters of emphasis and indent a name alone on its line may stand among
_SENTENCE_ENDS = (".", "!", "?", "*", "_", "`", "|", ">", "#", "-", "=")   # a sentence's end, emphasis, a table, a rule
_LIST_ITEM = re.compile(r"[ \t]{0,8}(?:[-*+\u2022][ \t]|\d{1,3}[.)][ \t])")
_LABEL_LINE_PREFIX = re.compile(r"^[ \t]{0,8}(?:#{1,6}[ \t]{1,3}|[-*•][ \t]{1,3})?", re.M)
# "[RFC2119]  Bradner, S., ..." with its continuation lines (indented deeper, as RFCs and many
# standards wrap their reference lists, or not, as a page's footnote wraps its paragraph: "[28] See" over "[Debian
# Policy Manual, ...](...)"), or with the entry starting on the next line (DocBook's footnote whose text is a
# paragraph of its own: "[87]" over "Alternatively: ..."). A line that starts another entry, a list item or a
# heading ends it.
_REFERENCE_ENTRY = re.compile(
    r"^[ \t]{0,8}(?P<item>[-*•][ \t]{1,3})?\[(?P<key>[A-Za-z][A-Za-z0-9_.:+-]{1,39}|\d{1,3})\]:?"
    r"(?:[ \t]{1,16}|[ \t]{0,4}\n[ \t]{0,40})(?P<entry>\S.{2,400}(?:\n[ \t]{4,40}\S.{0,400}"
    r"|\n(?![ \t]{0,8}(?:[-*•][ \t]|\[[^\]\n]{1,40}\](?!\()|#))\S.{0,400}){0,8})$",
    re.M,
)
# A line an entry of a reference list may follow: another entry, or an entry's indented continuation.
_AFTER_ENTRY = re.compile(r"[ \t]{0,8}(?:[-*•][ \t]{1,3})?\[|[ \t]{4}")
# A Markdown link reference definition, "[`EventEmitter`]: events.md#class-eventemitter" (CommonMark: up to
# three spaces of indent, the destination optionally in angle brackets).
_MD_LINK_DEFINITION = re.compile(r"^ {0,3}\[(?P<key>[^\[\]\n]{1,200})\]:[ \t]{0,8}<?(?P<entry>[^\s<>]{1,300})>?", re.M)
_STEM_LABEL = re.compile(r"^(?P<word>exhibit|appendix|schedule|annex|attachment|addendum)[ _.\-]{0,3}"
                         r"(?:no[ _.\-]{0,2})?(?P<value>[a-z]|\d{1,4}(?:\.\d{1,4}){0,3})(?![a-z0-9])", re.I)
# What may stand between a reference and the document it belongs to: "Section 4.3 of the
# Master Agreement", "Exhibit C - Earnout Terms of the Document: Acquisition Agreement".
# The section's title may stand between, quoted ('section 9.3 "Unix Socket commands" of Management Guide') or, as
# LaTeX's guides write it, not ("Section 6.4 Naming conventions of the file fntguide.tex": a capitalised word and at
# most four more).
_QUALIFIER_AFTER = re.compile(r"(?:[ \t\n]{1,3}[\"“][^\"“”\n]{1,80}[\"”]"
                              r"|[ \t\n]{1,3}[A-Z][a-z][\w-]{0,30}(?:[ \t\n]{1,3}[\w-]{1,30}){0,4}?)?"
                              r"[ \t]{0,3},?[ \t\n]{0,3}(?:of|in|under|to)[ \t\n]{1,3}(?:the[ \t\n]{1,3})?"
                              r"(?:(?i:document)[ \t]{0,2}:[ \t\n]{1,3}|(?i:file)[ \t\n]{1,3})?")
# A work named in words after it that no reference names ('section 9.3 "Unix Socket commands" of Management Guide' in
# HAProxy's configuration manual): another work's section, or this one's by its title, never this one's by number alone.
_NAMED_WORK = re.compile(r"(?!(?:This|These|That)\b)[A-Z][a-z][\w-]{0,30}(?:[ \t]{1,3}[A-Z][a-z][\w-]{0,30}){0,5}")
# The owner just before: "the Master Agreement's Section 4", or the section set in parentheses after it ("the
# Debian Reference (Chapter 2 - Debian fundamentals)", "[RFC1122](ftp://...), (in the section 3.3.4.2)": the
# Securing Debian Manual's, which went to its own chapter 2 and section 3.3).
_QUALIFIER_BEFORE = re.compile(r"(?:['’]s)?[ \t\n]{1,3}|,?[ \t]{0,2}\((?:(?:in|see)[ \t]{1,3})?(?:the[ \t]{1,3})?")
_OWNER_GAP = 12   # the longest of those gaps: ", (in the "
# A work named in words before such a parenthesis, that no reference names.
_NAMED_WORK_BEFORE = re.compile(r"\b(?:of|in|from)[ \t\n]{1,3}the[ \t\n]{1,3}"
                                r"(?P<work>[A-Z][a-z][\w-]{0,30}(?:[ \t\n]{1,3}[A-Z][a-z][\w-]{0,30}){0,5})"
                                r"[ \t]{0,2}\([ \t]{0,2}\Z")
# A standard's designator written just before a section ("see H.262 section 6.3.3", "ETS 300 706, Section 15",
# "RFC 4629 Section 3"): the section is that document's, indexed or not.
_DESIGNATOR_BEFORE = re.compile(r"(?<![\w.-])[A-Z]{1,8}(?:-[A-Z]{1,4})?(?:[ .]?[A-Z]?\d[\d.:-]*)(?:[ ]\d[\d.-]*)*,?"
                                r"[ \t\n]{1,3}\Z")
_CHAIN = re.compile(r"[ \t\n]{0,3}[,;]?[ \t\n]{0,3}(?:(?:and|or)[ \t\n]{1,3})?")


# Marks a manual page's other names (its NAME section's) among its ids: looked up only when no page has the
# name as its own, so ``Tcl_Free(3tcl)`` finds Tcl_Alloc's page and ``stat(2)`` never the page that lists it.
OTHER_NAME = "~"
# Marks a manual page name another page's link gives a page ("[`ntpd(8)` - NTP daemon](ntpd.html)": NTPsec's
# pages are its manual pages in HTML, named ntpd.html and ntp_conf.html, without the volume): looked up only when
# no page declares the name itself, as its own or as another of its names.
LINKED_NAME = "@"
# A link whose words open with a manual page's name: the words of a list of pages, "`ntp.conf(5)` - ntpd
# Configuration File", or the name alone.
_MD_LINK_PATTERN = re.compile(MD_LINK)
_LINKED_PAGE_NAME = re.compile(r"[`*]{0,2}(?P<id>[A-Za-z][\w.+-]{0,60}(?:::[A-Za-z][\w.+-]{0,60}){0,3})[`*]{0,2}"
                               r"\((?P<volume>[1-9][a-z]{0,3})\)[`*]{0,2}(?:\s|\Z)")


def label_key(word: str, value: str) -> str:
    return f"{word.lower()} {value.lower()}"


def section_key(word: str | None, value: str) -> str:
    word = (word or "").lower()
    return f"{word if word in ('article', 'chapter') else 'section'} {value.lower()}"


def _written_identifier(raw: str) -> str:
    """An identifier without its white space, a prefix's hyphen before its number dropped ("RFC-9000")."""
    return re.sub(r"^([A-Za-z/]+)-(?=\d)", r"\1", re.sub(r"[\s\u00a0]+", "", raw))


def identifier_key(raw: str, volume: str | None = None) -> str:
    key = _written_identifier(raw).lower()
    return f"{key}({volume})" if volume else key


def case_identifier_key(raw: str, volume: str | None = None) -> str:
    """An identifier's key with its case where the case tells pages apart: written in one case (``stat(2)``,
    ``STAT(2)``, "RFC 9000"; a header in capitals says nothing of the name's case), the key of
    :func:`identifier_key`, which any one-case spelling shares; written in mixed case, the identifier as written,
    marked "=" (Tcl's manual has a page ``Load(3tcl)``, the C function Tcl_LoadFile, and a page ``load(3tcl)``,
    the command; ``RegExp`` and ``regexp``)."""
    letters = [c for c in raw if c.isalpha()]
    if all(c.isupper() for c in letters) or all(c.islower() for c in letters):
        return identifier_key(raw, volume)
    key = "=" + _written_identifier(raw)
    return f"{key}({volume})" if volume else key


def anchor_key(space: str | None, name: str) -> str:
    """'py:os.path' for Python modules and objects (one namespace, so 'os.path.join' can fall back
    to its module), 'ref:label' for labels; a role's '~'/'!' prefix and '()' suffix dropped
    ('py:.open' keeps the dot of ':func:`.open`')."""
    # A leading "." asks Sphinx to look in the citing module first; it is kept to say so.
    name = name.strip().lstrip("~!").removesuffix("()")
    name = ("." if name.startswith(".") else "") + name.lstrip(".")
    space = (space or "").lower()
    return f"ref:{name.lower()}" if space == "ref" else (f"{space}:{name}" if space and space not in PY_ROLES
                                                           else f"py:{name}")


PY_ROLES = frozenset("mod func class meth exc attr data const obj py".split())


def citation_key(raw: str) -> str:
    """A reference-list key or a Markdown link label as looked up: case and runs of white space ignored."""
    return " ".join(raw.split()).lower()


def caption_key(caption: str | None) -> str:
    return " ".join(tokens(caption or ""))


def captions_agree(a: str, b: str) -> bool:
    """Two captions of one label agree when either is absent or one starts the other."""
    return not a or not b or a.startswith(b) or b.startswith(a)


# A table of contents' entry ends with its page number after a dot leader ("4.7 Option processing . . . 20"),
# or with a bare one among such entries ("3 The structure of a class or package 9").
_DOT_LEADER_END = re.compile(r"(?:\.[ \t]?){3,}[ \t]*\d{1,4}[ \t]*$")
_PAGE_NUMBER_END = re.compile(r"\S[ \t]+\d{1,4}[ \t]*$")
_CONTENTS_REACH = 60   # lines looked at either way for a dot leader


def _entry_text(entry: re.Match[str]) -> str:
    """An entry's words. Lines that are not indented go on a numbered footnote's paragraph; after a named key they are
    the paragraph that an AsciiDoc label such as "[NOTE]" opens, no entry of a list."""
    lines = entry.group("entry").split("\n")
    if not entry.group("key").isdigit():
        lines = lines[:next((i for i, line in enumerate(lines[1:], 1) if not line[:4].isspace()), len(lines))]
    return " ".join(" ".join(lines).split())


def _entry_set_out(entry: re.Match[str]) -> bool:
    """Whether an entry's text is set out as one: after its key on the key's line, or indented on the next line, or,
    for a numbered footnote alone on its line, on the next line as it comes (DocBook's "[87]" over its paragraph).
    AsciiDoc's "[NOTE]" over a paragraph is a block's attribute, no entry."""
    gap = entry.string[entry.end("key"):entry.start("entry")]
    return "\n" not in gap or gap.endswith(("  ", "\t")) or entry.group("key").isdigit()


def _starts_an_entry(text: str, start: int) -> bool:
    """Whether a reference-list entry may start at ``start`` (a line's start): a reference list's entry starts a
    paragraph, or follows its heading ("References") or another entry. A footnote's mark in the text that a line
    break puts at a line's start ("... and `prerm` files" over "[57] are called maintainer scripts", DocBook's HTML
    wrapped so) is no entry: it was read as footnote 57's text, which stands below (7 of a new user's 100
    footnotes)."""
    if start == 0:
        return True
    before = text[text.rfind("\n", 0, start - 1) + 1:start - 1]
    return not before.strip() or _AFTER_ENTRY.match(before) is not None or before.lstrip().startswith("#") \
        or heading_like(before)


def _line_end(text: str, pos: int) -> int:
    """Where the line holding ``pos`` ends: its line break, or the end of ``text``."""
    end = text.find("\n", pos)
    return len(text) if end < 0 else end


def contents_entry(text: str, start: int) -> bool:
    """Whether the line of ``text`` starting at ``start`` is an entry of a table of contents (the
    section it numbers starts elsewhere: a PDF's contents page comes first and was taken for the
    LaTeX guides' sections): it ends with a page number after a dot leader, or with a bare page
    number in a run of lines ending so (an entry may wrap onto two), one of which has a dot leader."""
    end = _line_end(text, start)
    line = text[start:end]
    if _DOT_LEADER_END.search(line):
        return True
    if not _PAGE_NUMBER_END.search(line):
        # An entry's first line, wrapped: the next line continues it (it starts no section of its own) up to
        # the dot leader ("B.2 Using the ... package to\n   typeset ... . . . 14").
        following = text[end + 1:_line_end(text, end + 1)]
        return bool(_DOT_LEADER_END.search(following)) and not _SECTION_START.match(following)
    # Only the lines within reach are split off: section starts are many, a contents entry is rare.
    above = text[:start].rsplit("\n", _CONTENTS_REACH + 1)[-_CONTENTS_REACH - 1:-1][::-1]
    below = text[start:].split("\n", _CONTENTS_REACH + 1)[1:_CONTENTS_REACH + 1]
    for run in (above, below):
        wrapped = False   # an entry wraps onto a second line, the number at the end of that line
        for neighbour in run:
            if _DOT_LEADER_END.search(neighbour):
                return True
            numbered = bool(_PAGE_NUMBER_END.search(neighbour))
            if not numbered and wrapped:
                break
            wrapped = not numbered
    return False


def heading_like(line: str) -> bool:
    words = line.split()
    if not words or len(words) > 14 or len(line) > 140 or line.rstrip()[-1] in ".,;:":
        return False
    content = [w for w in words if w[:1].isalpha() and w.lower() not in ("of", "and", "the", "for", "to", "a")]
    return bool(content) and sum(w[0].isupper() for w in content) >= 0.6 * len(content)


@dataclass
class Profile:
    """What other documents can call this one: stored as JSON on the document's first chunk."""

    doc_id: str
    file_name: str = ""
    titles: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)                      # "git-config(1)"; OTHER_NAME + "tcl_free(3)"
    labels: dict[str, dict[str, str]] = field(default_factory=dict)   # "exhibit b" -> {caption, chunk}
    sections: dict[str, str] = field(default_factory=dict)            # "section 4.3" -> chunk id
    headings: list[str] = field(default_factory=list)                 # sections it starts with a heading
    citations: dict[str, str] = field(default_factory=dict)           # "brown19" -> reference-list entry
    # [label, caption, owner doc]: labels it says belong elsewhere
    claims: list[list[str]] = field(default_factory=list)
    anchors: list[str] = field(default_factory=list)                  # names it declares: "py:os.path", "ref:label"
    scope: str = ""                                                   # the module it documents (Sphinx)
    terms: dict[str, str] = field(default_factory=dict)               # "tls_dhparam" -> chunk of its entry
    slugs: dict[str, str] = field(default_factory=dict)               # "classeventemitter" -> chunk of heading
    defined: dict[str, str] = field(default_factory=dict)             # a family's declarations: "vim:'tw'" -> chunk
    # its page's anchors: "gzipproxied" -> chunk, and as written: "#requests.Request" -> chunk
    fragments: dict[str, str] = field(default_factory=dict)
    parameters: list[str] = field(default_factory=list)               # its own signature's names: "PROJECT_NAME"
    named_links: dict[str, str] = field(default_factory=dict)         # "ntpd(8)" -> "ntpd.html": what its links call
    opening: str = ""                                                 # its first chunk: its title and what follows

    def anchored(self, fragment: str) -> str | None:
        """The chunk where the page's anchor a link's ``fragment`` names begins: the anchor as written first, so
        "#requests.Request" (the class) is not "#requests.request" (the function) on a page that has both, then
        as anchors respell it (:func:`entry_name_key`)."""
        return self.fragments.get(f"#{fragment}") or self.fragments.get(entry_name_key(fragment))

    @functools.cached_property
    def respelt_terms(self) -> dict[str, str]:
        """``terms`` by ``entry_name_key``, built once per profile (links into one page are resolved many times)."""
        return {entry_name_key(term): chunk for term, chunk in self.terms.items()}

    def names(self) -> list[str]:
        out = [v for t in self.titles for v in title_variants(t)]
        if self.file_name:
            out.append(file_stem_name(self.file_name))   # "FILTER_README": its words as the name's (tokens)
        return out

    def to_json(self, partial: bool = False) -> str:
        """``partial``: resolved without the rest of the index (the after-index step resolves it again)."""
        data: dict[str, Any] = {k: v for k, v in asdict(self).items() if v and k != "doc_id"}
        if partial:
            data["partial"] = True
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, doc_id: str, raw: Any) -> Profile | None:
        try:
            data = json.loads(raw) if isinstance(raw, str) else None
        except json.JSONDecodeError:
            return None
        if not isinstance(data, dict):
            return None
        known = {k: data[k] for k in ("file_name", "titles", "ids", "labels", "sections", "citations", "claims",
                                      "anchors", "scope", "headings", "terms", "slugs", "defined", "fragments",
                                      "parameters", "named_links", "opening")
                 if k in data}
        return cls(doc_id=doc_id, **known)


def _first_title(text: str, metadata: dict) -> list[str]:
    out = [metadata["title"]] if isinstance(metadata.get("title"), str) and metadata["title"].strip() else []
    setext = _SETEXT_TITLE.match(text)
    md = _MD_HEADING.search(text)
    if setext:
        out.append(setext.group("text").strip())
    elif md:
        # A heading that links somewhere ("# [About](#anchor-1)", a Word contents entry) is titled by its words.
        out.append(_MD_LINK_TEXT.sub(r"\g<text>", md.group("text")).strip().strip("#").strip())
    else:
        first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
        if heading_like(first) or _MANUAL_PAGE_HEADER.fullmatch(first):
            out.append(first)
    return out


def _manual_page_names(text: str) -> list[str]:
    """The names a manual page's NAME section gives it (none when the section has no "name - what" line)."""
    m = _MANUAL_PAGE_NAMES.search(text)
    if not m:
        return []
    names = " ".join(m.group("names").split())
    end = _NAMES_END.search(names)
    if not end:
        return []
    out = [n.strip() for n in names[:end.start()].split(",")]
    return out if all(_MANUAL_PAGE_NAME.fullmatch(n) for n in out) else []


def build_profile(doc_id: str, chunks: Sequence[tuple[str, str]], metadata: dict,
                  families: Sequence[ReferenceFamily], anchors: Mapping[str, Sequence[str]] | None = None) -> Profile:
    """A document's profile from its chunks [(chunk id, original text)] in reading order; ``anchors``: the
    names of its page's anchors that begin in each chunk (by chunk id), as the core's reader gives them."""
    file_name = str(metadata.get("file_name") or metadata.get("file_path") or doc_id)
    prof = Profile(doc_id=doc_id, file_name=file_name.replace("\\", "/").rsplit("/", 1)[-1])
    if not chunks:
        return prof
    prof.opening = chunks[0][0]
    prof.titles = _first_title(chunks[0][1], metadata)
    whole = "\n".join(text for _, text in chunks)
    families = families_for(families, whole)
    label_family = next((f for f in families if f.kind == "label"), None)
    id_families = [f for f in families if f.kind == "identifier"]
    stem = file_stem_name(prof.file_name)
    m = _STEM_LABEL.match(stem)
    if m:
        prof.labels[label_key(m.group("word"), m.group("value"))] = {"caption": "", "chunk": chunks[0][0]}
    volumes: set[str] = set()   # the manual volumes its own names are in
    named = [(im.group("id"), im.groupdict().get("volume")) for source in (*prof.titles, stem.replace("_", " ").upper())
             for fam in id_families for im in fam.pattern.finditer(source)
             if "volume" not in fam.pattern.groupindex or _TITLE_NUMBER.fullmatch(source, 0, im.start())]
    page = _MANUAL_PAGE_FILE.match(prof.file_name)
    if page:
        named.append((page.group("id"), page.group("volume")))
    field = _MANUAL_SECTION_FIELD.search(chunks[0][1])
    if field and prof.titles and _MANUAL_PAGE_NAME.fullmatch(prof.titles[-1]):
        named.append((prof.titles[-1], field.group("volume")))
    for name, volume in named:
        key = case_identifier_key(name, volume)
        if key not in prof.ids:
            prof.ids.append(key)
        if volume:
            volumes.add(volume)
    if len(volumes) == 1:   # a manual page, of one volume: its other names are in that volume
        volume = volumes.pop()
        for name in _manual_page_names(chunks[0][1]):
            key = case_identifier_key(name, volume)
            if key not in prof.ids and OTHER_NAME + key not in prof.ids:
                prof.ids.append(OTHER_NAME + key)
    best_section: dict[str, tuple[tuple[bool, bool], int, str]] = {}
    headings: dict[str, None] = {}
    for chunk_id, text in chunks:
        code = _code_lines(text)
        for sm in _SECTION_START.finditer(text):
            if sm.start() in code or (sm.group("hashes") and sm.start("hashes") > sm.start()):
                # A comment in code, inside a fence or a "#" line indented as code is ("   # 1. Apply computed bias"
                # in Python's profile docs made "section 3.13 of the Unicode standard" a pointer to that page).
                continue
            key = section_key(sm.group("word"), sm.group("value"))
            line = text[sm.start():_line_end(text, sm.start())]
            heading = bool(sm.group("hashes") or (sm.group("word") and heading_like(line)))
            # A number alone heads a texinfo chapter ("1 Copyright"), which other documents do not call "section 1"
            # (flex's "section 1 of the flex input", 3 of 3, went there); "Section 7:", "4. Leave", "7.2" number a
            # section as such.
            if heading and (sm.group("word") or "." in sm.group("value") or text[sm.end("value"):sm.end("value") + 1]
                            in (".", ":")):
                # "## 25.1.3. Restoring", "Section 7: Leave": a heading, not a numbered list item, nor a
                # sentence that starts a line ("Chapter 4 covers ownership.", a wrapped "Section 4.3 of ...").
                headings[key] = None
            room = len(text) - sm.start()
            # A heading starts its section, wherever a list item of that number stands, and either before a
            # contents entry naming it. Chunks overlap: a heading in the last lines of one chunk starts its
            # section in the next.
            rank = (not contents_entry(text, sm.start()), heading)
            held = best_section.get(key)
            if held is None or rank > held[0] or (rank == held[0] and held[1] < 200 and room > held[1]):
                best_section[key] = (rank, room, chunk_id)
        if label_family is not None:
            for lm in _LABEL_LINE_PREFIX.finditer(text):
                hit = label_family.pattern.match(text, lm.end())
                if not hit:
                    continue
                line = text[lm.end():_line_end(text, hit.start())]
                # A heading ("# Exhibit B - Pricing", marked or written as one; texinfo's "## Appendix C The
                # command-line editor") or a definition ("- Exhibit A: MegaCorp Consent Letter").
                marked = lm.group().lstrip().startswith("#")
                if marked or heading_like(line) or text[hit.end("value"):hit.end("value") + 2].lstrip().startswith(":"):
                    key = label_key(hit.group("word"), hit.group("value"))
                    caption = hit.groupdict().get("caption") or ""
                    prof.labels.setdefault(key, {"caption": caption_key(caption), "chunk": chunk_id})
        for em in _REFERENCE_ENTRY.finditer(text):
            if (em.group("item") or _starts_an_entry(text, em.start())) and _entry_set_out(em):
                prof.citations.setdefault(citation_key(em.group("key")), _entry_text(em))
        for em in _MD_LINK_DEFINITION.finditer(text):
            prof.citations.setdefault(citation_key(em.group("key")), em.group("entry"))
        for em in (*_RST_TARGET.finditer(text), *_RST_CHAINED_TARGET.finditer(text)):
            prof.citations.setdefault(citation_key(em.group("quoted") or em.group("key")), em.group("entry"))
    prof.sections = {k: v[2] for k, v in best_section.items()}
    prof.headings = list(headings)
    prof.anchors, prof.scope = _declarations(whole)
    prof.terms = _defined_terms(chunks)
    prof.parameters = _signature_names(prof.titles, whole)
    prof.slugs = _heading_slugs(chunks)
    prof.named_links = _named_links(chunks, prof.ids)
    for chunk_id, _ in chunks:
        for name in (anchors or {}).get(chunk_id, ()):
            if entry_name_key(name):
                prof.fragments.setdefault(entry_name_key(name), chunk_id)
                prof.fragments.setdefault(f"#{name}", chunk_id)
    for fam in families:
        if fam.defines is not None:
            prof.defined.update(_earliest_chunk(chunks, functools.partial(_declared_by, fam)))
    return prof


def _named_links(chunks: Sequence[tuple[str, str]], own: Sequence[str]) -> dict[str, str]:
    """The manual page names the document's links give the pages they lead to (a name's first link), by key:
    not its own names, nor a link into itself, to a web address or out of a code block."""
    out: dict[str, str] = {}
    for _, text in chunks:
        code: set[int] | None = None   # read only for a chunk with such a link
        for hit in _MD_LINK_PATTERN.finditer(text):
            href = hit.group("href")
            named = _LINKED_PAGE_NAME.match(hit.group("text").strip())
            if not named or href.startswith("#") or "://" in href:
                continue
            code = _code_lines(text) if code is None else code
            if text.rfind("\n", 0, hit.start()) + 1 in code:
                continue
            key = case_identifier_key(named.group("id"), named.group("volume")[0])
            if key not in own and OTHER_NAME + key not in own:
                out.setdefault(key, href)
    return out


def _code_lines(text: str) -> set[int]:
    """Where each line of ``text`` inside a Markdown code fence starts."""
    lines = text.split("\n")
    starts = itertools.accumulate((len(line) + 1 for line in lines[:-1]), initial=0)
    return {start for start, inside in zip(starts, api.in_code_fences(lines)) if inside}


def _declared_by(fam: ReferenceFamily, text: str) -> Iterator[tuple[str, int]]:
    """(anchor key, position) of each name ``text`` declares by the family's own ``defines`` pattern."""
    assert fam.defines is not None
    for m in fam.defines.finditer(text):
        if m.group("key"):
            yield anchor_key(fam.space, m.group("key")), m.start()


def entry_name_key(name: str) -> str:
    """A name as anchors respell it, reduced to its letters and digits: "#relay-domains" and "RELAY_DOMAINS"
    for relay_domains; "#class-eventemitter" for the heading "Class: `EventEmitter`" (GitHub, MkDocs),
    "#fs-readfile" (Sphinx) and "#fsreadfile" (GitHub) for "fs.readFile"."""
    return _NOT_ALNUM.sub("", name.lower())


_NOT_ALNUM = re.compile(r"[\W_]+")


# A title underlined (reStructuredText, Markdown's setext): "smart_quotes\n~~~~~~~~~~~~".
_UNDERLINED_HEADING = re.compile(r"^(?P<text>[ \t]{0,3}\w[^\n]{0,300})\n([=\-~^*+#`'\"])\2{2,}[ \t]*$", re.M)
# A heading that links to its own anchor, as mdBook and many static site generators write them:
# "### [Stack-Only Data: Copy](#stack-only-data-copy)".
_SELF_ANCHOR = re.compile(r"\]\(#(?P<anchor>[^)\s]{1,200})\)")
_MD_LINK_TEXT = re.compile(r"\[(?P<text>[^\]]{0,300})\]\([^)]{0,300}\)")


def _heading_slugs(chunks: Sequence[tuple[str, str]]) -> dict[str, str]:
    """The document's headings by ``entry_name_key`` -> the chunk the heading starts: a link's fragment is
    usually its heading's text made an anchor, or the anchor the heading links to."""
    def found(text: str):
        for m in _UNDERLINED_HEADING.finditer(text):
            key = entry_name_key(m.group("text"))
            if len(key) >= 3:
                yield key, m.start()
        for m in _QUOTED_HEADING.finditer(text):
            heading = m.group("text").strip().strip("#")
            anchors = [a.group("anchor") for a in _SELF_ANCHOR.finditer(heading)]
            for key in {entry_name_key(_MD_LINK_TEXT.sub(r"\g<text>", heading)), *map(entry_name_key, anchors)}:
                if len(key) >= 3:
                    yield key, m.start()
    return _earliest_chunk(chunks, found)


_TERM_NAME = re.compile(TERM)
_CALLABLE_NAME = re.compile(r"[A-Za-z][\w.:]{0,80}")


def _signature_names(titles: Sequence[str], text: str) -> list[str]:
    """The names inside a reference page's own signature, the line that calls its title ("build_command(<variable>
    [PROJECT_NAME <projname>])" on the page titled build_command): its parameters, which its text calls "the
    `PROJECT_NAME` option" though another page defines an option of that name."""
    names = {t.strip(" `") for t in titles[:2] if _CALLABLE_NAME.fullmatch(t.strip(" `"))}
    out: dict[str, None] = {}
    for name in names:
        for call in re.finditer(rf"^[ \t]{{0,8}}{re.escape(name)}\((?P<args>[^()]{{0,2000}})\)", text, re.M):
            out.update((m.group(), None) for m in _TERM_NAME.finditer(call.group("args")))
    return list(out)


def _defined_terms(chunks: Sequence[tuple[str, str]]) -> dict[str, str]:
    """Configuration names the document defines (``_TERM_DEFINITION``, ``_OPTION_TERM``) -> the chunk holding
    the entry."""
    def found(text: str) -> Iterator[tuple[str, int]]:
        yield from ((m.group(m.lastgroup or ""), m.start()) for m in _TERM_DEFINITION.finditer(text))
        for m in _OPTION_TERM.finditer(text):
            yield from ((o.group("name"), m.start()) for o in _OPTION_NAME.finditer(m.group("line")))

    def headed(text: str) -> Iterator[tuple[str, int]]:
        headings = list(_TERM_HEADING.finditer(text))
        code = _code_lines(text) if headings else set()   # a shell's or a config file's comment is no heading
        yield from ((m.group("name"), m.start()) for m in headings if m.start() not in code)
    # A name's entry, where the page has one, is its place; a heading declares only what no entry does.
    return {**_earliest_chunk(chunks, headed), **_earliest_chunk(chunks, found)}


def _earliest_chunk(chunks: Sequence[tuple[str, str]],
                    found: Callable[[str], Iterable[tuple[str, int]]]) -> dict[str, str]:
    """Each key ``found`` in the chunks' texts (key, position) -> the chunk where it stands earliest. Chunks
    overlap, so an entry or heading at the end of one chunk starts the next: its chunk is the one where its
    body follows it."""
    first: dict[str, tuple[int, str]] = {}
    for chunk_id, text in chunks:
        for key, start in found(text):
            if key not in first or start < first[key][0]:
                first[key] = (start, chunk_id)
    return {key: chunk for key, (_, chunk) in first.items()}


def _declarations(text: str) -> tuple[list[str], str]:
    """The names a Sphinx source declares (modules, objects qualified by their module and class,
    labels) and the first module it documents. Chunks overlap, so the text may repeat: order kept,
    duplicates dropped."""
    anchors: dict[str, None] = {}
    scope, module, cls, cls_indent = "", "", "", -1
    for m in RST_DIRECTIVE.finditer(text):
        what, name, indent = m.group("what"), m.group("name"), len(m.group("indent").expandtabs())
        if what in ("module", "currentmodule"):
            module, cls = name, ""
            if what == "module":
                anchors[anchor_key("py", name)] = None
                scope = scope or name
            continue
        if cls and indent > cls_indent and "." not in name:
            name = f"{cls}.{name}"
        elif indent <= cls_indent:
            cls, cls_indent = "", -1
        full = f"{module}.{name}" if module and not name.startswith(module + ".") else name
        anchors[anchor_key("py", full)] = None
        if what in ("class", "exception"):
            cls, cls_indent = name, indent
    for m in _RST_LABEL.finditer(text):
        anchors[anchor_key("ref", m.group("key"))] = None
    return list(anchors), scope


@dataclass
class RawRef:
    """One reference as written in a chunk, before resolution."""

    kind: str
    key: str
    text: str
    start: int
    end: int
    family: str = ""
    caption: str = ""
    docs: frozenset[str] = frozenset()       # documents a name mention points at
    qualifier: RawRef | None = None         # the document a label/section is said to belong to
    designated: bool = False               # a section of a document named by a designator no reference resolved
    work: str = ""                         # the name of the work a section is said to be of, where no reference is
    entries: tuple[str, ...] = ()          # a link's fragment and shown words: an entry the target may define
    fragment: str = ""                     # a link's fragment: also one of the target's headings
    case_key: str = ""                     # an identifier's key with its case (case_identifier_key)


def _string_literal(text: str, start: int, end: int) -> bool:
    """Whether a file name, with the folders written before it, stands in quotes of its own, a value in code:
    Django's `{% extends "base.html" %}` and `template_name = "index.html"`, Flask's `render_template(
    'blog/index.html')` name a project's templates, not the pages of those names."""
    quote = text[start - 1: start]
    return quote in ("'", '"') and text[end: end + 1] == quote


def _alone_on_its_line(text: str, mention: Mention) -> bool:
    """Whether a name stands alone on its line, emphasis aside: a banner or a heading set in italics, not a
    sentence or a list's item pointing at the document ("*The Haskell 98 Report*" atop every page of the
    report, its bibliography page titled by it for want of a heading), nor the end of a sentence the line before
    runs into ("... before the March 1 closing date per Document:" then "Closing Checklist.": pypdf 6 breaks a PDF's
    line there)."""
    start = text.rfind("\n", 0, mention.start) + 1
    end = _line_end(text, mention.end)
    if (end - start) - (mention.end - mention.start) > _LINE_SLACK:   # more than marks and spaces around it
        return False
    line = text[start:end]
    before = text[text.rfind("\n", 0, max(start - 1, 0)) + 1:max(start - 1, 0)].rstrip()   # the line before
    if before and not before.endswith(_SENTENCE_ENDS):
        return False
    return not _LIST_ITEM.match(line) and tokens(line) == tokens(mention.text)


def scan_chunk(text: str, families: Sequence[ReferenceFamily], names: NameIndex,
               file_docs: dict[str, set[str]], exact_names: dict[tuple, set[str]]) -> list[RawRef]:
    """Every reference in ``text``, in text order, with qualifiers attached to labels and sections."""
    refs: list[RawRef] = []
    links: list[tuple[int, int]] = []   # every hyperlink's span, to this corpus or elsewhere
    # A heading holding another document's name heads this document's own section on that subject: "##
    # Reverse Proxy" in Apache's URL mapping page is no pointer to its reverse proxy guide, nor "###
    # Authorization and Access Control" in its caching guide to the access control one.
    headings = [(h.start("text"), h.end("text")) for h in _MD_HEADING.finditer(text)]
    for m in names.find(text):
        if any(start <= m.start and m.end <= end for start, end in headings) or _alone_on_its_line(text, m):
            continue
        refs.append(RawRef("document", " ".join(tokens(m.text)), m.text, m.start, m.end, "name", docs=m.doc_ids))
    for fam in families:
        for hit in fam.pattern.finditer(text):
            groups = hit.groupdict()
            if fam.kind == "label":
                refs.append(RawRef("label", label_key(groups["word"], groups["value"]), hit.group(), hit.start(),
                                   hit.end(), fam.name, caption=caption_key(groups.get("caption"))))
            elif fam.kind == "section":
                refs.append(RawRef("section", section_key(groups.get("word"), groups["value"]), hit.group(),
                                   hit.start(), hit.end(), fam.name))
            elif fam.kind == "identifier":
                refs.append(RawRef("identifier", identifier_key(groups["id"], groups.get("volume")), hit.group(),
                                   hit.start(), hit.end(), fam.name,
                                   case_key=case_identifier_key(groups["id"], groups.get("volume"))))
            elif fam.kind == "link":
                links.append((hit.start(), hit.end()))
                if not _navigation(text, hit.start(), hit.end(), groups.get("text") or "", groups["href"], headings):
                    refs.extend(_link_ref(hit, groups["href"], groups.get("text") or "", fam.name))
            elif fam.kind == "anchor":
                name = groups.get("key") or groups.get("plain") or ""
                if name.strip():
                    key = anchor_key(groups.get("space") or fam.space, name)
                    refs.append(RawRef("anchor", key, hit.group(), hit.start(), hit.end(), fam.name))
            elif fam.kind == "citation":
                links.append((hit.start(), hit.end()))   # like a link, the citation is the reference, not its words
                refs.append(RawRef("citation", citation_key(groups.get("label") or groups["key"]), hit.group(),
                                   hit.start(), hit.end(), fam.name))
            else:
                name = groups["name"]
                at = hit.start(fam.pattern.groupindex["name"])   # (RE2's matches take a group's number only)
                folders = _WRITTEN_FOLDERS.search(text, max(0, at - 300), at)
                if _SERVER_PATH.search(text, max(0, at - 300), at) or \
                        _string_literal(text, folders.start() if folders else at, hit.end()) or \
                        _changed_file(text, folders.start() if folders else at, hit.end()):
                    continue
                base = name.replace("\\", "/").rsplit("/", 1)[-1].lower()
                docs = file_docs.get(base) or set()
                if not docs and fam.indexed_files_only:
                    continue
                docs = docs or exact_names.get(tokens(name)) or set()
                # A file written with its folders is a file of those folders: "admin/base.html" (a template) is not
                # ref/class-based-views/base.html. The path may start above the folder indexed, as paths from a
                # project's top do ("Documentation/revisions.txt" with Documentation/ indexed): the folders the two
                # share must agree. Where files of that name stand in several folders, the written folders pick one
                # by being its own: Flask's "Open `htmlcov/index.html` in your browser" (a coverage report) is not
                # the manual's front page, the one index.html that has no folder to disagree.
                if folders:
                    written = folders.group().split("/")[:-1]
                    several = len(docs) > 1   # then one at the top, with no folder to agree, is none of them
                    docs = {d for d in docs if in_folders(d, written, overlap=True)
                            and (not several or "/" in d.replace("\\", "/"))}
                # The name's own span: "the file README.md" is one reference with the file name family's "README.md".
                refs.append(RawRef("document", " ".join(tokens(name)) if base not in file_docs else base,
                                   name, at, at + len(name), fam.name, docs=frozenset(docs)))
    for hit, target in _rst_anonymous_links(text) if "__" in text else ():
        links.append((hit.start(), hit.end()))
        refs.extend(_link_ref(hit, target, hit.group("quoted") or hit.group("word"), "rst_anonymous"))
    refs.sort(key=lambda r: (r.start, -r.end))
    # The same words read as the same kind by two families are one reference, the first family's: a config
    # family repeating a built-in one (Vim's `|tag|`, declared in the config before vim_help_tag was built in)
    # stored each tag twice, and the chunk's cap kept fewer references.
    first: dict[tuple[str, int, int], RawRef] = {}
    for ref in refs:
        first.setdefault((ref.kind, ref.start, ref.end), ref)
    refs = list(first.values())
    refs = _drop_link_labels(text, refs, links)
    # A heading's own number names the section it opens, not one it points at ("# Chapter 12. Advanced
    # Administration" was a reference of each chapter page of a new user's handbook to itself).
    opened = {start for start, _ in headings}
    refs = [r for r in refs if not (r.kind in ("section", "label") and r.start in opened)]
    refs = [r for r in refs if not _NAVIGATION_LABEL.search(text, line := text.rfind("\n", 0, r.start) + 1, r.start)
            and not _RST_TARGET_LINE.match(text, line)]
    _attach_qualifiers(text, refs, links)
    return refs


# The folders written before a file name: "admin/" of "admin/base.html", "django/forms/widgets/" of ".../email.html".
_WRITTEN_FOLDERS = re.compile(r"(?<![\w.-])(?:[\w.-]{1,80}/){1,8}\Z")


def in_folders(doc_id: str, folders: Sequence[str], overlap: bool = False) -> bool:
    """Whether ``doc_id`` stands in the folders a path names, its last ones ("../reference/x.html" names
    reference/; ".." and "." name no folder); ``overlap``: the path may name folders above the indexed ones, and
    only the folders both have must agree."""
    named = [part.lower() for part in folders if part not in ("", ".", "..")]
    held = [part.lower() for part in doc_id.replace("\\", "/").split("/")[:-1]]
    shared = min(len(named), len(held)) if overlap else len(named)
    return not shared or held[len(held) - shared:] == named[len(named) - shared:]


# The path a file name ends when it is a server's or a site's, not a document's: "GET /index.html", "https://
# example.org/docs/index.html", "/usr/share/doc/x/README.txt" (an absolute path is where a file lives on some
# machine; a relative one, "docs/guide.md", may well be this corpus's). The path may be set in italics or bold, as
# the HTML and Word readers write them ("*/var/www/index.html*").
_SERVER_PATH = re.compile(r"(?:^|[\s\"'`(<=,;*_])(?:/|[A-Za-z][\w+.-]{0,20}://)[^\s\"'`()<>]{0,280}/?\Z")


# A change log entry's list of the files it changed, GNU's "<TAB>* standards.texi (Change Logs):" and Debian's
# "  * debian/control, debian/rules: ...": what was edited, not a document to read (a new user's gnu-standards
# folder: 52 of its 70 references between documents were its change logs' entries, each naming a manual).
_CHANGED_FILES = re.compile(r"[ \t]+\*[ \t]+(?:[^\s,:()]{1,200},[ \t]*){0,20}\Z")
_CHANGED_FILES_END = re.compile(r"[ \t]*[(:,]")


def _changed_file(text: str, start: int, end: int) -> bool:
    """Whether the file name at text[start:end] is one a change log entry lists as changed: followed by the entry's
    "(", ":" or ",", or anything on a line GNU's way, a tab before its "*" ("<TAB>* maintain.texi Change http:")."""
    line_start = text.rfind("\n", 0, start) + 1
    return bool(_CHANGED_FILES.match(text, line_start, start)) and \
        (text.startswith("\t", line_start) or bool(_CHANGED_FILES_END.match(text, end)))


# A link whose words only move the reader ("[Next Chapter](FAQ02.html)", texinfo's "[ [>](...) ]" and, in its
# own brackets, "[ [Up](index.html) ]"): where the page sits in a sequence, not what its text points at. A bare
# "[Next](opcode.html#Next)" or "an [index](lang_createindex.html)" in prose is a reference.
_NAVIGATION_WORDS = re.compile(r"(?i)(?:next|previous|prev|up)\s+(?:chapter|section|page|part|topic|node)"
                               r"|table\s+of\s+contents|[<>?]{1,2}|[«»]")
_BUTTON_WORDS = re.compile(r"(?i)next|previous|prev|up|top|home|contents|index")
# A link that shows only a picture: a site's logo leading home on every page (SQLite's 203 pages, a new user's Sphinx
# build: "[![SPHINX](../_static/sphinxheader.png)](../index.html)", weighed as the best pointer of some questions),
# a button drawn as an image. No words of its own say what it points at.
_PICTURE = re.compile(r"!\[[^\[\]]{0,200}\]\([^()\s]{1,300}\)")


def _navigation(text: str, start: int, end: int, shown: str, href: str, headings: Sequence[tuple[int, int]]) -> bool:
    """Whether the link at text[start:end], showing ``shown``, only moves the reader or shows only a picture; also a
    heading that is one link to a place (``headings``: the spans of the chunk's heading texts), the way back to the
    heading's line in the manual's contents (texi2html's "## [10.1 Invoking the msgfmt Program](gettext_toc.html#
    TOC167)", Sphinx's "# [find_package](#id5)") or to the heading itself. A heading that links a whole page names
    the page its section is about (npm's scripts page: "#### [`npm ci`](/commands/npm-ci)")."""
    if "#" in href and any(hs <= start and end <= he and not text[hs:start].strip(" \t*")
                           and not text[end:he].strip(" \t*#") for hs, he in headings):
        return True
    if _PICTURE.fullmatch(shown.strip()):
        return True
    shown = shown.strip(" \t\n[]*_`")
    if _NAVIGATION_WORDS.fullmatch(shown):
        return not _in_a_sentence(text, start, end)
    wrapped = (text[max(0, start - 2):start].rstrip(" \t").endswith("[")
               and text[end:end + 2].lstrip(" \t").startswith("]"))
    return wrapped and bool(_BUTTON_WORDS.fullmatch(shown))


def _in_a_sentence(text: str, start: int, end: int) -> bool:
    """Whether the link at text[start:end] stands in a paragraph's words rather than in a bar of links: "see the
    [Table of Contents](toc.html) extension" names Python-Markdown's page of that name (7 such links were read as
    navigation, one a new user's pointer question followed), "[Previous](a.html) | [Contents](toc.html)" is a bar."""
    before = text.rfind("\n\n", max(0, start - _PARAGRAPH_REACH), start)
    after = text.find("\n\n", end, end + _PARAGRAPH_REACH)
    around = text[before + 1 if before >= 0 else max(0, start - _PARAGRAPH_REACH):start] + " " + \
        text[end:after if after >= 0 else end + _PARAGRAPH_REACH]
    return len(_PROSE_WORD.findall(_MD_LINK_TEXT.sub(" ", around))) >= _SENTENCE_WORDS


# How far around a link its paragraph is read, and how many words of its own (outside links) make it prose.
_PARAGRAPH_REACH = 200
_SENTENCE_WORDS = 3
_PROSE_WORD = re.compile(r"[A-Za-z]{2,}")


# What a reference standing right after it moves the reader to, not what the text points at: the "Next chapter:
# |usr_12.txt|" and "Table of contents: |usr_toc.txt|" bars at the top and bottom of every Vim help chapter (plain
# text: the HTML reader drops such bars by their markup).
_NAVIGATION_LABEL = re.compile(
    r"(?:(?:^|\s\s|[|,])\s*(?:next|previous|prev|up)(?:\s+(?:chapter|section|page|part|topic))?"
    r"|(?:^|\s\s)\s*(?:table\s+of\s+)?contents)\s*:\s*[|\[(<`*\"']?$",   # the name inside |...| too
    re.I | re.M)


def _link_ref(hit: re.Match, href: str, shown: str, family: str) -> list[RawRef]:
    """The reference a hyperlink at ``hit`` makes (none to a mail address): its path, and its fragment and shown
    words as entries the target may define. A link within the page ("[Overtime](#overtime)") has no path: it
    names a place of its own document."""
    path = link_path(href)
    fragment = unquote(href.partition("#")[2])
    if not path:
        if href.strip().startswith("#") and fragment:
            return [RawRef("link", "", hit.group(), hit.start(), hit.end(), family, fragment=fragment)]
        return []
    entries = tuple(e for e in (fragment, shown.strip(" `*_")) if e)
    return [RawRef("link", path, hit.group(), hit.start(), hit.end(), family, entries=entries, fragment=fragment)]


def _rst_anonymous_links(text: str) -> Iterator[tuple[re.Match, str]]:
    """(reference, its target as written) of the anonymous references in ``text`` whose targets follow them in it:
    each run of target lines takes the references written since the run before, when there are exactly as many
    (a chunk may start after a reference whose target it holds: then the count says nothing and none is read)."""
    pending: list[re.Match] = []
    events = sorted([(m.start(), 0, m) for m in _RST_ANONYMOUS.finditer(text)]
                    + [(m.start(), 1, m) for m in _RST_ANONYMOUS_TARGET.finditer(text)], key=lambda e: e[0])
    run: list[re.Match] = []
    for i, (_, is_target, m) in enumerate(events):
        if not is_target:
            pending.append(m)
            continue
        run.append(m)
        if i + 1 < len(events) and events[i + 1][1] and not text[m.end():events[i + 1][0]].strip():
            continue   # the run goes on
        if len(run) == len(pending):
            yield from ((ref, target.group("entry")) for ref, target in zip(pending, run))
        pending, run = [], []


def link_path(href: str) -> str:
    """The file a hyperlink points at, fragment and query dropped: a relative path, or a web address
    (``resolve`` decides whether it names an indexed document's web copy); '' for a mail address, another
    scheme or a link within the page."""
    href = href.strip().split("#", 1)[0].split("?", 1)[0]
    if not href or (re.match(r"[A-Za-z][\w+.-]{0,20}:", href) and not WEB_ADDRESS.match(href)) \
            or href.startswith("//"):
        return ""
    return unquote(href)   # "Adding%20a%20Library.html" is the file "Adding a Library.html"


# A web address's path: "https://docutils.sourceforge.io/docs/ref/rst/roles.html" -> "/docs/ref/rst/roles.html".
WEB_ADDRESS = re.compile(r"(?i:https?)://[^/\s]{1,200}(?P<path>/\S{0,300})?\Z")


_LINK_LABEL_GAP = re.compile(r"[ \t]{0,3}")


def _drop_link_labels(text: str, refs: list[RawRef], links: Sequence[tuple[int, int]]) -> list[RawRef]:
    """A file or document name inside a hyperlink (its target "backup-dump.html#BACKUP-DUMP", its
    text) is not a reference of its own: the link is, when it leads into the corpus; a link to another
    site or within the page is none (the Automake manual's ``https://www.gnu.org/.../automake.html`` is
    not the Autoconf manual's Automake.html). Nor is a name written just before a link: it says what the
    link is ("See CMake Policy [CMP0036](../policy/CMP0036.html)" points at the policy's page, not at the
    page titled "cmake_policy"). ``refs`` and ``links`` (spans) in text order, so one pass with the
    furthest link end seen so far does it."""
    out, link_end, pending = [], -1, iter(sorted(links))
    upcoming = next(pending, None)
    for ref in refs:
        while upcoming is not None and upcoming[0] <= ref.start:
            link_end, upcoming = max(link_end, upcoming[1]), next(pending, None)
        if ref.kind == "document" and ref.end <= link_end:
            continue
        if ref.kind == "document" and ref.family == "name" and upcoming is not None \
                and _LINK_LABEL_GAP.fullmatch(text, ref.end, upcoming[0]):
            continue
        out.append(ref)
    return out


def _attach_qualifiers(text: str, refs: list[RawRef], links: Sequence[tuple[int, int]]) -> None:
    # A link within the page (no path) owns nothing: the section it shows is read as it would be without it.
    owners = [r for r in refs if r.kind in ("document", "citation", "identifier", "link") and r.key]
    by_start = {r.start: r for r in owners}
    # A name among a link's words is written up to the link's end ("[RFC1122](ftp://...), (in the section 3.3.4.2)");
    # the link itself, where it names a document here, says it first.
    spans = sorted(links)
    link_starts = [start for start, _ in spans]

    def written_to(r: RawRef) -> int:   # links do not nest: only the last one starting at or before it can hold it
        i = bisect.bisect_right(link_starts, r.start) - 1
        return spans[i][1] if i >= 0 and r.end <= spans[i][1] else r.end

    by_end: dict[int, RawRef] = {}
    for r in owners:
        by_end.setdefault(written_to(r), r)
    pointers = [r for r in refs if r.kind in ("label", "section")]
    starts = {r.start for r in refs}
    # "[Section 9.17](functions-sequence.html)": the link says whose section it is. ``refs`` is sorted
    # by start and links do not nest, so the last link seen is the only one that can enclose a ref.
    inside_link: dict[int, RawRef] = {}
    link = None
    for ref in refs:
        if ref.kind == "link" and ref.key:
            link = ref
        elif link is not None and ref.kind in ("label", "section") and ref.end <= link.end:
            inside_link[id(ref)] = link
    for ref in pointers:
        if id(ref) in inside_link:
            ref.qualifier = inside_link[id(ref)]
            continue
        after = _QUALIFIER_AFTER.match(text, ref.end)
        if after and after.end() in by_start:
            ref.qualifier = by_start[after.end()]
            continue
        if after and after.end() not in starts and (work := _NAMED_WORK.match(text, after.end())):
            ref.work = work.group()
            continue
        # "the Master Agreement's Section 4": the owner is written just before.
        for gap in range(1, _OWNER_GAP + 1):
            owner = by_end.get(ref.start - gap)
            if owner is not None and _QUALIFIER_BEFORE.fullmatch(text, ref.start - gap, ref.start):
                ref.qualifier = owner
                break
        else:
            if work := _NAMED_WORK_BEFORE.search(text, max(0, ref.start - 200), ref.start):
                ref.work = work.group("work")
                continue
            # "H.264 section 7.4.2.1.1" in FFmpeg's manuals: a standard nobody indexed owns it, and the nearest
            # enclosing section of an indexed document ("7", mailing-list-faq's) is not it.
            ref.designated = _DESIGNATOR_BEFORE.search(text, max(0, ref.start - 40), ref.start) is not None
    # "Article IV, Section 4.1(a) of the Acquisition Agreement": the whole chain belongs to it.
    for earlier, later in zip(reversed(pointers[:-1]), reversed(pointers[1:])):
        if earlier.qualifier is None and later.qualifier is not None and \
                _CHAIN.fullmatch(text, earlier.end, later.start):
            earlier.qualifier = later.qualifier
