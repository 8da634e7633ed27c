"""The table of reference families: what a reference looks like in text.

Every pattern is linear in the length of the text it scans: no nested
quantifiers, and each repetition is bounded, so a 100,000-character line of
"Section 1.1.1.1..." or nested brackets costs one pass, not a blow-up.

A family is a compiled pattern plus a ``kind``:

- ``label``: groups ``word`` and ``value`` (and optionally ``caption``), e.g. "Exhibit A - Financial Terms";
- ``section``: group ``value`` (and optionally ``word``), e.g. "Section 4.3", "Article IV", "§ 7";
- ``identifier``: group ``id``, e.g. "RFC 9000", "ISO 27001": resolved to the document that carries it in its name;
- ``citation``: group ``key`` (or ``label`` where given), e.g. "[BROWN19]", a Markdown reference link
  "[`EventEmitter`][]" or a reStructuredText reference "`Directives`_": resolved through the citing
  document's own reference list, link definitions ("[`EventEmitter`]: events.md#class-eventemitter") or
  hyperlink targets (".. _Directives: directives.html");
- ``document``: group ``name``: a file name or a phrase resolved against document names;
- ``link``: group ``href``: a hyperlink, resolved relative to the citing document's path (fragment dropped);
- ``anchor``: group ``key`` (and optionally ``space``): a name some document declares, e.g. a Sphinx
  ``:mod:`os.path``` resolved through the target's ``.. module:: os.path``, or a configuration name
  ("see the tls_dhparam option") resolved through the one document that defines it in a table or a
  definition list (the family's ``space`` is then ``term``). An anchor family may bring its own
  ``defines`` pattern (group ``key``): where a document declares a name the family's references look up
  (Vim's help: ``|textwidth|`` -> the file holding ``*textwidth*``); its space is then the family's name.

A family may read only the documents that match its ``only_in`` pattern somewhere (Vim's help: the header a
help file opens with, ``*usr_27.txt*  For Vim version 9.0``, or its modeline, ``vim:tw=78:ts=8:noet:ft=help``),
so that a way of writing a reference one documentation system owns is not read into every other document.

An identifier family may also have a ``volume`` group: the key is then ``id(volume)``, so
``linkgit:git-config[1]`` and ``git-config(1)`` name the same manual page.

Third parties add families through the ``ragplugins_crossref_families`` hook or
the ``families`` config list. Families declared in the config run on RE2
(``google-re2``), which matches in linear time whatever the pattern; a pattern RE2
cannot run (look-around, back-references) is refused with the family's name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, get_args

Kind = Literal["label", "section", "identifier", "citation", "document", "link", "anchor"]
KINDS: tuple[str, ...] = get_args(Kind)
REQUIRED_GROUPS = {"label": {"word", "value"}, "section": {"value"}, "identifier": {"id"},
                   "citation": {"key"}, "document": {"name"}, "link": {"href"}, "anchor": {"key"}}

# A caption is up to seven capitalised words ("Financial Terms", "IP Assets"), possibly joined
# by one lowercase connector ("Terms and Conditions"). A dot only inside a word ("U.S."), so a
# sentence ends the caption; across a line break only a Title-case word continues it, so the
# next line's heading ("ARTICLE IV") does not.
_CAPWORD = r"[A-Z](?:[\w&'’]|\.(?=\w)){0,30}"
_CONNECTOR = r"(?:(?:of|and|for|to|on|in|&)[ \t]{1,3})?"
_CAPTION = (rf"(?P<caption>{_CAPWORD}(?:[ \t]{{1,3}}{_CONNECTOR}{_CAPWORD}"
            rf"|[ \t]{{0,3}}\n[ \t]{{0,3}}{_CONNECTOR}[A-Z][a-z](?:[\w&'’]|\.(?=\w)){{0,29}}){{0,6}})")
# "Exhibit A", "Schedule No. 2.1", "Annex #3". The single letter is case-sensitive on
# purpose: "appendix in the margin" must not become "appendix i".
_LABEL_WORDS = r"(?i:exhibit|appendix|schedule|annex|attachment|addendum)"
_LABEL = (rf"\b(?P<word>{_LABEL_WORDS})[ \t\u00a0]{{1,3}}(?:(?i:no)\.?[ \t]{{0,2}}|\#[ \t]{{0,2}})?"
          rf"(?P<value>[A-Z](?![A-Za-z])|\d{{1,4}}(?:\.\d{{1,4}}){{0,5}}(?![\d.]\d))"
          rf"(?:[ \t]{{0,3}}[-–—:][ \t\n]{{1,3}}{_CAPTION})?")
# "Section 4.3", "clause 7.2(b)", "Article IV", "§ 4", "§§ 3.1". Roman numerals are
# upper case only, so "article i" in prose stays prose.
_SECTION = (r"(?:\b(?P<word>(?i:section|clause|article|chapter|sec\.))[ \t\u00a0]{1,3}"
            r"|§{1,2}[ \t\u00a0]{0,2})"
            r"(?P<value>\d{1,4}(?:\.\d{1,4}){0,5}(?![\d.]\d)|[IVXLC]{1,7}\b)"
            # The number whole (not "1" of "12 man pages"), and not a section of the manual pages ("installing
            # section 1 man pages": the GNU Coding Standards).
            r"(?!\d|[ \t\u00a0]{1,3}(?i:man(?:ual)?[ \t\u00a0]{1,3}pages?|manpages?)\b)"
            r"(?:\([a-z0-9]{1,3}\)){0,3}")
_IDENTIFIER = (r"\b(?P<id>(?:RFC|BCP|STD|ISO(?:/IEC)?|IEC|IEEE|EN|DIN|BS|ANSI|ASTM|NIST[ \t]SP|ITU-T[ \t][A-Z])"
               r"[ \t\u00a0-]{0,2}\d{1,6}(?:[-.:]\d{1,5}){0,3})\b")
_ARXIV = r"\b(?P<id>arXiv:[ \t]?\d{4}\.\d{4,5})(?:v\d{1,2})?\b"
_DOI = r"\b(?P<id>10\.\d{4,9}/[^\s\"'<>\])]{1,120})"
# "[BROWN19]", "[RFC9000]", "[12]"; not a Markdown link "[text](...)", not a checkbox "[X]".
# A file name with a document extension, as in a link "[see](docs/retrieval_pipeline.md#retry)".
_FILENAME = (r"(?<![\w.-])(?P<name>[\w-]{1,80}(?:\.[\w-]{1,40}){0,2}"
             r"\.(?i:md|markdown|pdf|txt|rst|html?|docx?|pptx?|xlsx?|odt|epub|tex|texi|texinfo))"
             # Not the start of a longer name ("index.html.in.pot"); a compressed copy ("README.md.gz") is the file.
             r"(?![\w-]|\.(?!gz(?![\w-]))\w)")
# A file named without a document extension, as GNU and Debian name a package's notes, where the words send the
# reader there: "see the AUTHORS file", "read the file INSTALL", "as listed in the file `THANKS'". Not a file
# the sentence is about ("generating the ChangeLog file", a change log's "update the NEWS file"): that names a kind
# of file, often not this index's.
_NAMED_FILE = (r"\b(?i:see|read|consult|check|(?:refer|go)[ \t]to|(?:listed|mentioned|named|described|given|found|"
               r"documented|explained)[ \t]in)[ \t\n]{1,3}(?i:also[ \t\n]{1,3})?(?i:the)[ \t\n]{1,3}"
               r"(?P<lead>(?i:file)[ \t\n]{1,3})?[`'\"\u2018\u201c]?"
               r"(?P<name>[A-Z][A-Za-z0-9_+-]{1,40}(?:\.[A-Za-z][\w-]{0,15}){0,2})[`'\"\u2019\u201d]?"
               r"(?(lead)(?![\w~-]|\.\w)|[ \t\n]{1,3}(?i:files?)\b)")
# Manual pages: "git-config(1)", "stat(2)", Tcl's "oo::define(3tcl)", and AsciiDoc's "linkgit:git-config[1]".
# groff's HTML sets the name in bold, read as Markdown "**textdomain**(3)"; Debian Policy the whole, "*deb(5)*".
_MANPAGE = (r"(?<![\w.:/-])(?P<emphasis>\*{0,2})(?P<id>[A-Za-z][\w.+-]{0,60}(?:::[A-Za-z][\w.+-]{0,60}){0,3})"
            r"(?P=emphasis)\((?P<volume>[1-9])[a-z]{0,3}\)(?![\w(])")
_LINKGIT = r"\blinkgit:(?P<id>[\w.+-]{1,80})\[(?P<volume>[1-9])\]"
# "[text](target.html#frag)" (an optional "title") and raw <a href="...">. The words may hold brackets in pairs
# ("[`TEST['TEMPLATE']`](settings.html#...)", Sphinx's "[[source]](...)"), not nested deeper.
MD_LINK = (r"\[(?P<text>(?:[^\[\]]|\[[^\[\]]{0,200}\]){0,300})\]"
            r"\((?P<href>[^\s()<>\"]{1,300})(?:[ \t]{1,3}\"[^\"\n]{0,200}\")?\)")
# The second half of a Markdown link that the splitter cut at this chunk's start, "...option`](gettext_5.html#IDX162)":
# the link it is, its fragment kept (read as a file name it named the page, not the place).
MD_LINK_TAIL = r"\A[^\[\]\n]{0,300}\]\((?P<href>[^\s()<>\"]{1,300})(?:[ \t]{1,3}\"[^\"\n]{0,200}\")?\)"
_HTML_LINK = r"<a[ \t\n][^<>]{0,300}?\bhref=[\"'](?P<href>[^\"'<>\s]{1,300})[\"']"
# Sphinx cross-reference roles: :mod:`os.path`, :func:`~os.path.join`, :ref:`text <label>`, :py:class:`!x`.
_SPHINX_ROLE = (r":(?:py:)?(?P<space>mod|ref|func|class|meth|exc|attr|data|const|obj):"
                r"`(?:[^`<>]{0,200}<(?P<key>[^`<>]{1,200})>|(?P<plain>[^`<>]{1,200}))`")
# AsciiDoc: "include::diff-options.txt[]" (the file's text is part of this page), "link:user-manual.html[the manual]",
# Asciidoctor's "xref:install.adoc#proxy[Proxies]" and "<<install.adoc#proxy,Proxies>>" (a bare "<<proxy>>" is a place
# in the same file).
_ASCIIDOC_LINK = r"(?<![\w:/])(?:include::|link:|xref:)(?P<href>[^\s\[\]:]{1,300})\[(?P<text>[^\[\]]{0,300})\]"
_ASCIIDOC_XREF = r"<<(?P<href>[^\s,<>#]{1,300}\.a(?:sci)?doc(?:#[^\s,<>]{0,200})?)(?:,(?P<text>[^<>]{0,300}))?>>"
# Not a footnote's mark, "^[1]" (DocBook's text: X.Org's specifications), nor a regex's class, "^[0-9]", nor an
# array's subscript, "array[1]", "$argv[1]" (a new user's zsh FAQ: read as citations of its footnote [1]).
_CITATION = r"(?<![\^\w])\[(?P<key>[A-Za-z][A-Za-z0-9_.:+-]{1,39}|\d{1,3})\](?![(\[:])"
# Markdown reference links, full "[text][label]" and collapsed "[text][]" (CommonMark: the label is the text).
_MD_REFERENCE_LINK = r"\[(?P<key>[^\[\]\n]{1,200})\]\[(?P<label>[^\[\]\n]{0,200})\]"
# reStructuredText's hyperlink references, looked up in the citing file's own targets (".. _Directives:
# directives.html#sectnum", usually at the file's end): `Some Name`_ and name_. Not `anonymous`__ (their
# targets go by order), nor a role's :ref:`name` or a ``literal``_.
_RST_REFERENCE = r"(?<![`\w:])`(?P<key>[^`<>]{1,200})`_(?![\w`])"
_RST_NAME_REFERENCE = r"(?<![\w`.:/\\-])(?P<key>[A-Za-z0-9](?:[\w.+-]{0,80}[A-Za-z0-9])?)_(?![\w`])"
# `text <directives.html#sectnum>`_: the target inside the reference.
_RST_EMBEDDED = r"(?<![`\w:])`(?P<text>[^`<>]{0,200})<(?P<href>[^<>\s`]{1,300})>`__?(?![\w`])"
# A web address standing alone in prose ("See <https://docutils.sourceforge.io/docs/ref/rst/roles.html>"), not
# inside a Markdown, reStructuredText or HTML link (those families read it); its sentence's last stop is no part of it.
_WEB_ADDRESS = (r"(?<![^\s<(])(?<!\]\()(?P<href>https?://[^\s<>\"'`()\[\]]{0,298}[^\s<>\"'`()\[\].,;:!?])"
                r"(?=[.,;:!?]{0,3}(?:[\s<>\"'`()\[\]]|\Z))(?!>`)")
# Vim's help: a file declares the tags it answers for as *tag* and points at another's with |tag| (":help" jumps
# there). A help file opens with its own tag and the version ("*usr_27.txt*	For Vim version 9.0.") or ends with a
# modeline naming the help filetype (vim-doc's HTML keeps the first, drops the second on 73 of 109 pages).
_VIM_TAG = r"\|(?P<key>[^\s|*]{1,60})\|"
_VIM_TAG_DECLARATION = r"\*(?P<key>[^\s*|]{1,60})\*"
_VIM_HELP = r"\*[\w.+-]{1,60}\.txt\*[ \t]{1,20}For Vim version|\bvim:[^\n]{0,80}\bft=help\b"
# A configuration name as code writes it: at least one "_" or "." inside, so a prose word never is one
# ("tls_dhparam", "$lookup_dnssec_authenticated", "core.editor").
TERM = r"\$?[A-Za-z][A-Za-z0-9]{0,40}(?:[_.][A-Za-z0-9]{1,40}){1,6}"
_GAP = r"[ \t\n]{1,3}"
# Prose that points at where a name is defined: "See the ldap_start_tls option", "the generic
# redirect_router option", "the qualify_single and search_parents options", "the $sender_host_name
# variable", "see the documentation for tls_dhparam". The noun says a name is meant, not a mention
# of the value in passing; a leading "see" belongs to the reference as written.
_DEFINED_TERM = (rf"(?:\b(?i:see)(?:{_GAP}also)?{_GAP})?"
                 rf"(?:(?P<doc>(?:the{_GAP})?\b(?i:documentation){_GAP}(?:of|for|on){_GAP}(?:the{_GAP})?)|\b(?i:the){_GAP}"
                 rf"(?:[a-z]{{3,15}}{_GAP})?)`?(?P<key>{TERM})`?"
                 rf"(?(doc)|(?:(?:{_GAP}(?:and|or)|,){_GAP}`?{TERM}`?){{0,4}}{_GAP}(?:[a-z]{{3,15}}{_GAP})?"
                 rf"(?:option|variable|setting|parameter|directive)s?\b)")


@dataclass(frozen=True)
class ReferenceFamily:
    """One way of writing a reference: a linear-time pattern and the kind of thing it names."""

    name: str
    kind: str
    pattern: re.Pattern   # or an RE2 pattern (same interface), see linear_family
    description: str = ""
    space: str = ""       # an anchor family without a ``space`` group: the declarations it looks names up in
    defines: re.Pattern | None = None   # an anchor family's own declarations (group ``key``), in its ``space``
    only_in: re.Pattern | None = None   # the documents it reads hold a match somewhere (None: every document)
    # A document family whose matches are references only where an indexed file has that name: "the WAL file"
    # is no file of the index, and not the page wal.html either.
    indexed_files_only: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"reference family '{self.name}': kind '{self.kind}' is not one of {', '.join(KINDS)}")
        missing = REQUIRED_GROUPS[self.kind] - set(self.pattern.groupindex)
        if missing:
            raise ValueError(f"reference family '{self.name}' (kind '{self.kind}'): its pattern needs the named "
                             f"group(s) {', '.join(sorted(missing))}, e.g. (?P<{sorted(missing)[0]}>...)")
        if self.defines is not None:
            if self.kind != "anchor":
                raise ValueError(f"reference family '{self.name}': 'defines' is for kind 'anchor' (a name some "
                                 f"document declares), not '{self.kind}'")
            if "key" not in self.defines.groupindex:
                raise ValueError(f"reference family '{self.name}': its 'defines' pattern needs the named group "
                                 "key, e.g. \\*(?P<key>[^*\\s]+)\\*")


def family(name: str, kind: str, pattern: str, description: str = "", space: str = "",
           defines: str | None = None, only_in: str | None = None,
           indexed_files_only: bool = False) -> ReferenceFamily:
    """Build a family from a pattern string; errors name the family and the bad pattern."""
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"reference family '{name}': pattern {pattern!r} is not a valid regular expression: "
                         f"{exc}") from exc
    return ReferenceFamily(name, kind, compiled, description, space or (name if defines else ""),
                           defines=re.compile(defines) if defines else None,
                           only_in=re.compile(only_in) if only_in else None,
                           indexed_files_only=indexed_files_only)


def families_for(families: Sequence[ReferenceFamily], document: str) -> list[ReferenceFamily]:
    """The families that read ``document`` (its chunks' text joined): all but those whose ``only_in`` it lacks."""
    return [f for f in families if f.only_in is None or f.only_in.search(document) is not None]


def _message(exc: Exception) -> str:
    raw = exc.args[0] if exc.args else exc
    return raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw)


def linear_family(name: str, kind: str, pattern: str, description: str = "",
                  defines: str | None = None) -> ReferenceFamily:
    """A family whose pattern runs on RE2, which matches in time linear in the text for any pattern:
    for patterns written by users (the config), where ``(a+)+b`` would otherwise take exponential time
    on a long run of ``a``. RE2 has no look-around or back-references; such a pattern is refused.
    ``defines``: an anchor family's declarations (see the module's docstring), also on RE2."""
    import re2

    options = re2.Options()
    options.log_errors = False

    def linear(which: str, source: str) -> re.Pattern:
        try:
            re.compile(source)   # Python's syntax message first: RE2's says less
        except re.error as exc:
            raise ValueError(f"reference family '{name}': {which} {source!r} is not a valid regular expression: "
                             f"{exc}") from exc
        try:
            return re2.compile(source, options)
        except re2.error as exc:
            raise ValueError(f"reference family '{name}': {which} {source!r} uses a construct that cannot run in "
                             f"linear time (RE2 says: {_message(exc)}); drop look-arounds and back-references") from exc

    compiled = linear("pattern", pattern)
    if defines is None:
        return ReferenceFamily(name, kind, compiled, description)
    return ReferenceFamily(name, kind, compiled, description, space=name, defines=linear("defines", defines))


BUILTIN_FAMILIES: tuple[ReferenceFamily, ...] = (
    family("label", "label", _LABEL, "Exhibit/Appendix/Schedule/Annex/Attachment/Addendum + letter or number"),
    family("section", "section", _SECTION, "Section/Clause/Article/§ + dotted number or roman numeral"),
    family("standard", "identifier", _IDENTIFIER, "standard numbers: RFC 9000, ISO 27001, IEEE 802.11, NIST SP 800-53"),
    family("arxiv", "identifier", _ARXIV, "arXiv identifiers"),
    family("doi", "identifier", _DOI, "DOIs"),
    family("filename", "document", _FILENAME, "file names of indexed documents, e.g. in Markdown links"),
    family("named_file", "document", _NAMED_FILE,
           "files named without an extension in those words: the AUTHORS file, the file INSTALL",
           indexed_files_only=True),
    family("citation", "citation", _CITATION, "bracketed citation keys defined in the document's reference list"),
    family("manpage", "identifier", _MANPAGE, "manual pages: git-config(1), stat(2)"),
    family("linkgit", "identifier", _LINKGIT, "AsciiDoc manual-page links: linkgit:git-config[1]"),
    family("hyperlink", "link", MD_LINK, "Markdown links [text](path#fragment), relative to the citing file"),
    family("hyperlink_tail", "link", MD_LINK_TAIL, "the second half of a Markdown link cut at the chunk's start"),
    family("md_reference", "citation", _MD_REFERENCE_LINK,
           "Markdown reference links [text][label] and [text][], through the document's [label]: path definitions"),
    family("rst_reference", "citation", _RST_REFERENCE,
           "reStructuredText references `Some Name`_, through the file's .. _Some Name: path targets"),
    family("rst_name_reference", "citation", _RST_NAME_REFERENCE,
           "reStructuredText references name_, through the file's .. _name: path targets"),
    family("rst_embedded", "link", _RST_EMBEDDED, "reStructuredText references with their target, `text <path>`_"),
    family("web_address", "link", _WEB_ADDRESS,
           "web addresses standing alone in prose; one names a document whose folders and file end its path"),
    family("html_link", "link", _HTML_LINK, "HTML <a href> links, relative to the citing file"),
    family("asciidoc_link", "link", _ASCIIDOC_LINK,
           "AsciiDoc include::file[], link:file[text], xref:file.adoc#id[text]"),
    family("asciidoc_xref", "link", _ASCIIDOC_XREF, "AsciiDoc cross references to another file, <<file.adoc#id,text>>"),
    family("sphinx_role", "anchor", _SPHINX_ROLE,
           "Sphinx roles :mod:/:func:/:class:/:ref:..., resolved through .. module:: and .. _label: declarations"),
    family("vim_help_tag", "anchor", _VIM_TAG,
           "Vim's help: |tag| resolved to the file declaring *tag* (in files whose header or modeline says so)",
           defines=_VIM_TAG_DECLARATION, only_in=_VIM_HELP),
    family("defined_term", "anchor", _DEFINED_TERM,
           "configuration names in prose (the tls_dhparam option), resolved to the one document defining them "
           "in a table's first column or a definition list", space="term"),
)
