"""Markdown files read as their pages show them.

A Markdown page rendered by GitHub or a static site generator shows neither its HTML comments nor its front
matter. Indexed as written, both went into the chunks: Docker's pages open with seven lines of "This file is
maintained within the docker/cli GitHub repository..." in a comment, Node.js's API pages keep each entry's
history in ``<!-- YAML ... -->`` (12 % of their characters), and npm's and Docker's pages begin with
``---\\ntitle: ...\\nkeywords: ...\\n---``. Comments outside code are dropped, as markdown-it (CommonMark) parses
them; a YAML (``---``) or TOML (``+++``) front matter gives way to the words its author wrote about the page, its
title as the page's heading (when the page has no top heading of its own, as the site's layout would show it)
and its description; its other keys (keywords, layout, permalink) are the site's settings and are not read. An
empty anchor element (``### <a name="tmpfs"></a> Mount tmpfs``) is a place a link's ``#tmpfs`` names, as an HTML
page's ids are (``ragplugins.anchors``), not words.
"""

from __future__ import annotations

import re
import tomllib

import yaml
from markdown_it import MarkdownIt

from ragplugins.html_reader import HtmlPage

MARKDOWN_SUFFIXES = (".md", ".markdown")

_FRONT_MATTER = {
    "---": re.compile(r"\A---[ \t]*\r?\n(?P<body>.*?)^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S | re.M),
    "+++": re.compile(r"\A\+\+\+[ \t]*\r?\n(?P<body>.*?)^\+\+\+[ \t]*(?:\r?\n|\Z)", re.S | re.M),
}
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_EMPTY_ANCHOR = re.compile(
    r"""<(?P<tag>a|span)\s+(?:name|id)\s*=\s*["'](?P<name>[^"'\s>]{1,200})["']\s*(?:/>|>\s*</(?P=tag)>)""", re.I)
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`).*?(?<!`)\1(?!`)", re.S)   # CommonMark: closed by as many backticks
_PARSER = MarkdownIt("commonmark")


def read_markdown(text: str) -> HtmlPage:
    """``text`` without its HTML comments (those in code kept), its front matter written as the page's title
    and description, and its empty anchors (``<a id="tmpfs"></a>``) as the page's anchors."""
    fields, body = front_matter(text)
    body, anchors = anchors_out(without_comments(body))
    head: list[str] = []
    if fields:
        title, description = (_words(fields.get(key)) for key in ("title", "description"))
        head = [f"# {title}"] if title and not _has_top_heading(body) else []
        head += [description] if description else []
        stripped = body.lstrip("\r\n")
        shift = len(stripped) - len(body)
        body = stripped
        anchors = {name: max(0, at + shift) for name, at in anchors.items()}
    if not head:
        return HtmlPage(body, anchors)
    lead = "\n\n".join(head) + "\n\n"
    return HtmlPage(lead + body, {name: at + len(lead) for name, at in anchors.items()})


def anchors_out(text: str) -> tuple[str, dict[str, int]]:
    """``text`` without its empty anchor elements outside code (``<a name="x"></a>``, ``<a id='x'/>``, ``<span
    id="x"></span>``: what a heading's own id cannot say, as Docker's and Node.js's pages write them), and where
    each one stood in what is left (the first of a name)."""
    if "<" not in text:
        return text, {}
    code = _code_spans(text)
    parts: list[str] = []
    anchors: dict[str, int] = {}
    at = kept = 0   # where the text not yet copied starts; how many characters have been kept before it
    for found in _EMPTY_ANCHOR.finditer(text):
        start, end = found.span()
        if start < at or any(a <= start < b for a, b in code):
            continue
        # "### <a name="tmpfs"></a> Mount tmpfs": one space between the heading's marks and its words.
        if start > 0 and text[start - 1] in " \t" and end < len(text) and text[end] in " \t":
            end += 1
        parts.append(text[at:start])
        kept += start - at
        anchors.setdefault(found["name"], kept)
        at = end
    parts.append(text[at:])
    return "".join(parts), anchors


def _code_spans(text: str) -> list[tuple[int, int]]:
    """Character ranges of ``text`` that are code: fenced and indented blocks (markdown-it's), code spans."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    blocks = [(offsets[t.map[0]], offsets[t.map[1]]) for t in _PARSER.parse(text)
              if t.type in ("fence", "code_block") and t.map is not None]
    # Code spans outside the blocks only: a block's stray backtick would pair with one in the prose after it.
    masked = list(text)
    for a, b in blocks:
        masked[a:b] = " " * (b - a)
    return blocks + [m.span() for m in _CODE_SPAN.finditer("".join(masked))]


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


def without_comments(text: str) -> str:
    """``text`` without the HTML comments markdown-it finds outside code (a comment a code block or a code span
    shows is the page's text)."""
    if "<!--" not in text:
        return text
    lines = text.splitlines(keepends=True)
    cuts: list[tuple[int, int, int]] = []   # (first line, end line, comments to drop there; -1: all)
    for token in _PARSER.parse(text):
        if token.map is None:
            continue
        if token.type == "html_block" and "<!--" in token.content:
            cuts.append((token.map[0], token.map[1], -1))
        elif token.type == "inline" and token.children:
            inline = sum(1 for child in token.children
                         if child.type == "html_inline" and child.content.startswith("<!--"))
            if inline:
                cuts.append((token.map[0], token.map[1], inline))
    for first, end, count in reversed(cuts):
        part = "".join(lines[first:end])
        kept = _COMMENT.sub("", part) if count < 0 else _drop_outside_code_spans(part, count)
        if not kept.strip() and part.strip():
            kept = ""   # a block that was only comments leaves no blank-only lines behind
        lines[first:end] = [kept]
    return "".join(lines)


def _drop_outside_code_spans(part: str, count: int) -> str:
    """``part`` (a paragraph) without its first ``count`` comments that no code span holds."""
    spans = [m.span() for m in _CODE_SPAN.finditer(part)]
    out, at = [], 0
    for found in _COMMENT.finditer(part):
        if count and not any(a <= found.start() < b for a, b in spans):
            out.append(part[at:found.start()])
            at = found.end()
            count -= 1
    return "".join(out) + part[at:]


def _has_top_heading(text: str) -> bool:
    return any(token.type == "heading_open" and token.tag == "h1" for token in _PARSER.parse(text))


def _words(value: object) -> str:
    """A front matter field as one line of text ("" for a list, a table or nothing)."""
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return " ".join(str(value).split())
    return ""
