"""Markdown files read as their pages show them.

A Markdown page rendered by GitHub or a static site generator shows neither its HTML comments nor its front
matter. Indexed as written, both went into the chunks: Docker's pages open with seven lines of "This file is
maintained within the docker/cli GitHub repository..." in a comment, Node.js's API pages keep each entry's
history in ``<!-- YAML ... -->`` (12 % of their characters), and npm's and Docker's pages begin with
``---\\ntitle: ...\\nkeywords: ...\\n---``. Comments outside code are dropped, as markdown-it (CommonMark) parses
them; a YAML (``---``) or TOML (``+++``) front matter gives way to the words its author wrote about the page, its
title as the page's heading (when the page has no top heading of its own, as the site's layout would show it)
and its description; its other keys (keywords, layout, permalink) are the site's settings and are not read.
"""

from __future__ import annotations

import re
import tomllib

import yaml
from markdown_it import MarkdownIt

MARKDOWN_SUFFIXES = (".md", ".markdown")

_FRONT_MATTER = {
    "---": re.compile(r"\A---[ \t]*\r?\n(?P<body>.*?)^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S | re.M),
    "+++": re.compile(r"\A\+\+\+[ \t]*\r?\n(?P<body>.*?)^\+\+\+[ \t]*(?:\r?\n|\Z)", re.S | re.M),
}
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`).*?(?<!`)\1(?!`)", re.S)   # CommonMark: closed by as many backticks
_PARSER = MarkdownIt("commonmark")


def read_markdown(text: str) -> str:
    """``text`` without its HTML comments (those in code kept), its front matter written as the page's title
    and description."""
    fields, body = front_matter(text)
    body = without_comments(body)
    if not fields:
        return body
    title, description = (_words(fields.get(key)) for key in ("title", "description"))
    head = [f"# {title}"] if title and not _has_top_heading(body) else []
    head += [description] if description else []
    return "\n\n".join(head) + "\n\n" + body.lstrip("\r\n") if head else body.lstrip("\r\n")


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
