"""Perl's POD (``.pod``) read as ``perldoc`` shows it, written as Markdown: ``=head2`` titles as headings, formatting
codes as the words they mark (``C<open>`` as code, ``E<gt>`` as ">", index entries ``X<...>`` not at all), ``L<...>``
links as Markdown links to the page they name (``L<perlsub/"Private Variables via my()">`` to
``perlsub.pod#Private-Variables-via-my``), so crossref follows them as it follows a page's hyperlinks. Blocks for
other formatters (``=begin html``, ``=for man``) and code outside POD are not shown by ``perldoc``, nor read here.

Read raw, a new user's 66 pages of Perl's documentation held 3,123 index entries in their sentences ("a
X<JAPH acronym>clever but cryptic"), codes around the words questions quote, and 965 links crossref could not follow.
The rules are perlpodspec's.
"""

from __future__ import annotations

import html
import re

from ragplugins.html_reader import HtmlPage

_COMMAND = re.compile(r"=([a-zA-Z]\S*)[ \t]*(.*)", re.S)
_CODE_START = re.compile(r"([A-Z])(<+)")
_NOT_SLUG = re.compile(r"[^\w.:-]+")
# Formatting codes that show nothing: an index entry, a null code.
_DROPPED = {"X", "Z"}


def read_pod(text: str) -> HtmlPage:
    """``text``, a POD document, as Markdown (a text with no POD command in it as it is), and where each title and
    list item's anchor (:func:`pod_anchor` of its words) begins."""
    paragraphs = re.split(r"\n[ \t]*\n", text.replace("\r\n", "\n"))
    if not any(_COMMAND.match(p.lstrip("\n")) for p in paragraphs):
        return HtmlPage(text)
    out: list[str] = []
    anchors: dict[str, int] = {}
    in_pod, hidden, bullet = False, "", ""
    at = 0
    for raw in paragraphs:
        paragraph = raw.strip("\n")
        command = _COMMAND.match(paragraph)
        if command:
            name, rest = command.group(1), " ".join(command.group(2).split())
            in_pod = name != "cut"
            if hidden:
                hidden = "" if name == "end" and rest.split()[:1] == [hidden] else hidden
                continue
            if name == "begin":
                hidden = "" if rest.split()[:1] in (["text"], []) else (rest.split() or [""])[0]
                continue
            if name.startswith("head") and name[4:].isdigit():
                line = "#" * min(int(name[4:]), 6) + " " + render_codes(rest).strip()
                anchors.setdefault(pod_anchor(_plain(rest)), at)
            elif name == "item":
                item = rest.strip()
                if item in ("", "*", "-", "+") or re.fullmatch(r"\d+\.?", item):
                    bullet = "- " if not item[:1].isdigit() else item.rstrip(".") + ". "
                    continue
                # "=item open FILEHANDLE,EXPR" is what L<perlfunc/open> names, as perldoc -f finds it.
                for words in (item, item.split()[0]):
                    anchors.setdefault(pod_anchor(_plain(words)), at)
                line = render_codes(item).strip()
            elif name == "for" and rest.split()[:1] == ["text"]:
                line = render_codes(rest.partition(" ")[2]).strip()
            else:   # =pod, =over, =back, =encoding, =for another formatter, =cut
                continue
        elif not in_pod or hidden or not paragraph.strip():
            continue
        elif paragraph[:1] in " \t":
            line = paragraph   # verbatim: shown as written, an indented block
        else:
            line = bullet + render_codes(" ".join(paragraph.split("\n")) if bullet else paragraph)
            bullet = ""
        out.append(line)
        at += len(line) + 2
    return HtmlPage("\n\n".join(out) + "\n", anchors)


def pod_anchor(title: str) -> str:
    """The anchor a title or item gets, and a link's section names: its words joined by "-" ("Private Variables via
    my()" -> "Private-Variables-via-my"), as pod2html writes them."""
    return _NOT_SLUG.sub("-", title).strip("-")


def render_codes(text: str) -> str:
    """``text`` with its formatting codes as the words they mark."""
    rendered, _ = _render(text, 0, "")
    return rendered


def _plain(text: str) -> str:
    """A title's words without the marks of code and links, as a link's section names it."""
    return re.sub(r"\]\([^)]*\)|[`\[]", "", render_codes(text))


def _render(text: str, i: int, close: str) -> tuple[str, int]:
    """The text from ``i`` up to ``close`` (its end when ""), rendered, and where it stopped (after ``close``)."""
    out: list[str] = []
    while i < len(text):
        if close and text.startswith(close, i):
            return "".join(out), i + len(close)
        code = _CODE_START.match(text, i)
        if code:
            letter, angles = code.group(1), len(code.group(2))
            start = code.end()
            if angles > 1:
                if start < len(text) and not text[start].isspace():
                    out.append(text[i:start])
                    i = start
                    continue
                inner, i = _render_multi(text, start, ">" * angles)
            else:
                inner, i = _render(text, start, ">")
            out.append(_code(letter, inner))
            continue
        out.append(text[i])
        i += 1
    return "".join(out), i


def _render_multi(text: str, i: int, closing: str) -> tuple[str, int]:
    """A code written with several angles (``C<< $a <=> $b >>``): up to white space and ``closing``."""
    end = re.compile(r"\s" + re.escape(closing)).search(text, i)
    stop = end.start() if end else len(text)
    inner, _ = _render(text[:stop], i, "")
    return inner.strip(), (end.end() if end else len(text))


def _code(letter: str, inner: str) -> str:
    """What a formatting code shows: ``C`` as code, ``E`` the character, ``L`` a link; B, I, F, S and unknown ones
    their words."""
    if letter in _DROPPED:
        return ""
    if letter == "C":
        return f"`{inner}`" if inner.strip() else inner
    if letter == "E":
        return _escape(inner)
    if letter == "L":
        return _link(inner)
    return inner


def _escape(name: str) -> str:
    """``E<gt>``, ``E<0x263A>``, ``E<233>``, ``E<eacute>``: the character."""
    name = name.strip()
    if name in ("verbar", "sol"):
        return "|" if name == "verbar" else "/"
    try:
        if name.lower().startswith("0x"):
            return chr(int(name, 16))
        if name.isdigit():
            return chr(int(name))
    except (ValueError, OverflowError):
        return name
    return html.unescape(f"&{name};") if name else ""


def _link(inner: str) -> str:
    """``L<text|name/"section">`` and its shorter forms, as a Markdown link: the page a name names is ``name.pod``
    beside this one (``Some::Module`` as ``Some/Module.pod``), its section an anchor (:func:`pod_anchor`)."""
    text, bar, target = inner.partition("|")
    if not bar:
        text, target = "", inner
    target = target.strip()
    if re.match(r"\w+:[^:\s]\S*$", target):   # a web address
        return f"[{text or target}]({target})"
    name, slash, section = target.partition("/")
    if not slash and target.startswith('"'):
        name, section = "", target
    section = section.strip().strip('"')
    name = name.strip()
    words = text or (f'"{section}" in {name}' if name and section else section or name)
    place = "#" + pod_anchor(section) if section else ""
    page = name.replace("::", "/") + ".pod" if name else ""
    return f"[{words}]({page}{place})" if page or place else words
