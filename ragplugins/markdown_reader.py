"""Markdown files read as their pages show them.

A Markdown page rendered by GitHub or a static site generator shows neither its HTML comments nor its front
matter. Indexed as written, both went into the chunks: Docker's pages open with seven lines of "This file is
maintained within the docker/cli GitHub repository..." in a comment, Node.js's API pages keep each entry's
history in ``<!-- YAML ... -->`` (12 % of their characters), and npm's and Docker's pages begin with
``---\\ntitle: ...\\nkeywords: ...\\n---``. Comments outside code (its blocks and spans as markdown-it,
CommonMark, parses them) are dropped; a YAML (``---``) or TOML (``+++``) front matter gives way to the words its
author wrote about the page, its title as the page's heading (when the page has no top heading of its own, as the
site's layout would show it) and its description; its other keys (keywords, layout, permalink) are the site's
settings and are not read. An empty anchor element (``### <a name="tmpfs"></a> Mount tmpfs``) is a place a link's
``#tmpfs`` names, as an HTML page's ids are (``ragplugins.anchors``), not words.
"""

from __future__ import annotations

import re
import tomllib

import yaml
from markdown_it import MarkdownIt
from markdown_it.token import Token

from ragplugins.html_reader import HtmlPage

MARKDOWN_SUFFIXES = (".md", ".markdown")

_FRONT_MATTER = {
    "---": re.compile(r"\A---[ \t]*\r?\n(?P<body>.*?)^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S | re.M),
    "+++": re.compile(r"\A\+\+\+[ \t]*\r?\n(?P<body>.*?)^\+\+\+[ \t]*(?:\r?\n|\Z)", re.S | re.M),
}
# What a rendered page does not show: an HTML comment, an empty anchor element (its name is kept as a place).
_HIDDEN = re.compile(
    r"""<!--.*?-->"""
    r"""|<(?P<tag>a|span)\s+(?:name|id)\s*=\s*["'](?P<name>[^"'\s>]{1,200})["']\s*"""
    r"""(?:/>|>(?:\s|<!--.*?-->)*</(?P=tag)>)""",   # empty but for a comment: Docker's "<!-- for deep-links -->"
    re.S | re.I)
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`).*?(?<!`)\1(?!`)", re.S)   # CommonMark: closed by as many backticks
_PARSER = MarkdownIt("commonmark")


def read_markdown(text: str) -> HtmlPage:
    """``text`` without its HTML comments and empty anchors outside code (the anchors kept as the page's
    places), its front matter written as the page's title and description."""
    fields, body = front_matter(text)
    tokens = _PARSER.parse(body)
    body, anchors = _shown(body, _code_ranges(body, tokens))
    title, description = (_words(fields.get(key)) for key in ("title", "description"))
    head = [f"# {title}"] if title and not any(t.type == "heading_open" and t.tag == "h1" for t in tokens) else []
    head += [description] if description else []
    if fields:
        lead, stripped = "".join(f"{line}\n\n" for line in head), body.lstrip("\r\n")
        shift = len(lead) - (len(body) - len(stripped))
        body = lead + stripped
        anchors = {name: max(len(lead), at + shift) for name, at in anchors.items()}
    return HtmlPage(body, anchors)


def _shown(text: str, code: list[tuple[int, int]]) -> tuple[str, dict[str, int]]:
    """``text`` without the comments and empty anchors (:data:`_HIDDEN`) that start outside ``code``, and where
    each anchor stood in what is left (the first of a name). A comment that fills its lines leaves no blank line
    behind; an anchor between two spaces ("### <a name="tmpfs"></a> Mount tmpfs") leaves one."""
    parts: list[str] = []
    anchors: dict[str, int] = {}
    at = kept = 0   # where the text not yet copied starts; how many characters have been kept before it
    for found in _HIDDEN.finditer(text):
        start, end = found.span()
        if any(a <= start < b for a, b in code):
            continue
        if found["name"] is None:
            line = text.rfind("\n", 0, start) + 1
            rest = len(text) - len(text[end:].lstrip(" \t"))
            if not text[line:start].strip() and text.startswith("\n", rest):
                start, end = max(line, at), rest + 1
        elif start > 0 and text[start - 1] in " \t" and end < len(text) and text[end] in " \t":
            end += 1
        parts.append(text[at:start])
        kept += start - at
        if found["name"] is not None:
            anchors.setdefault(found["name"], kept)
        at = end
    parts.append(text[at:])
    return "".join(parts), anchors


def _code_ranges(text: str, tokens: list[Token]) -> list[tuple[int, int]]:
    """Character ranges of ``text`` that are code, by markdown-it's ``tokens``: fenced and indented blocks, and
    the code spans of each paragraph or heading (a code span never leaves its block)."""
    offsets = [0]
    for line in text.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line))
    ranges = []
    for token in tokens:
        if token.map is None:
            continue
        start, end = offsets[token.map[0]], offsets[token.map[1]]
        if token.type in ("fence", "code_block"):
            ranges.append((start, end))
        elif token.type == "inline":
            ranges += [m.span() for m in _CODE_SPAN.finditer(text, start, end)]
    return ranges


def front_matter(text: str) -> tuple[dict[str, object], str]:
    """(the fields of ``text``'s front matter, the text after it); ({}, text) when it has none: a block that
    does not parse as a table of fields is the page's own text (a thematic break, a table row of dashes)."""
    for opening, pattern in _FRONT_MATTER.items():
        if text.startswith(opening) and (found := pattern.match(text)):
            try:
                fields = yaml.safe_load(found["body"]) if opening == "---" else tomllib.loads(found["body"])
            except (yaml.YAMLError, tomllib.TOMLDecodeError):
                return {}, text
            if isinstance(fields, dict) and fields:
                return {str(k): v for k, v in fields.items()}, text[found.end():]
    return {}, text


def _words(value: object) -> str:
    """A front matter field as one line of text ("" for a list, a table or nothing)."""
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return " ".join(str(value).split())
    return ""
