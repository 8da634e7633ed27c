"""The headings a point of a document sits under, so a window of a chunk can say what it is part of.

A window that starts in the middle of a chunk (``ragplugins.windows``) starts in the middle of some
section: "The default is 100." means nothing without "dgram > Class: dgram.Socket >
socket.setRecvBufferSize(size)" above it. The headings come from the markup the readers give
(Markdown and AsciiDoc titles, underlined titles, numbered headings, reStructuredText directives,
AsciiDoc definition terms, as ``ragplugins.splitting.section_starts`` finds them) and from plain-text
outline lines (a manual page's ``DESCRIPTION`` above its indented text, a definition term above its
indented body), nested by their level. A document's chunks are read together, in order, so a chunk
knows the headings above its start.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence

from llama_index.core.schema import BaseNode

from ragplugins.markup_lines import UNDERLINE, in_code_fences
from ragplugins.splitting import section_starts

# (offset, level, title): a heading at that character of a chunk (negative: above the chunk's start).
Heading = tuple[int, int, str]

_MARKED = re.compile(r"(#{1,6}|={1,5})[ \t]+")                 # "## Title", "== Title": level = the marks
_POD_HEADING = re.compile(r"=head([1-6])[ \t]+")                 # "=head2 Options": level = the number
_NUMBERED = re.compile(r"\d+(?:\.\d+)*\.?[ \t]")               # "4.3. Scope": level = the depth
_MARKUP = re.compile(r"^(?:=head[1-6])?[#=\s]+|[`*]|::\s*$|\[¶\]\([^)]*\)")    # what a title's text is written in
_CODE_LINE = re.compile(r"[{};,(=\\]$")                        # "struct sockaddr_in {": code, no heading
_DIRECTIVE_LEVEL = 10   # a directive or a definition term sits below every heading
_OUTLINE_LEVEL = 20     # a plain-text outline line below those, deeper by its indentation
_MAX_CHARS = 300        # of the heading path put in front of a window (its deepest headings kept)


def outline_starts(text: str) -> list[int]:
    """Offsets of plain-text outline lines: a short line after a blank line whose next line is indented
    deeper (a manual page's ``DESCRIPTION``, a definition term), besides the section starts."""
    lines = text.splitlines(keepends=True)
    starts, at = set(section_starts(text)) - {0}, 0
    for i, line in enumerate(lines):
        if line.strip() and (i == 0 or not lines[i - 1].strip()) and i + 1 < len(lines) and lines[i + 1].strip():
            line_x, nxt = line.expandtabs(), lines[i + 1].expandtabs()
            indent = len(line_x) - len(line_x.lstrip())
            if len(nxt) - len(nxt.lstrip()) > indent and len(line.strip()) < 100:
                starts.add(at)
        at += len(line)
    return sorted(starts - {0})


def headings(text: str) -> list[Heading]:
    """The headings of ``text`` with their levels: marked titles by their marks, underlined titles by the
    order each underline character first appears (as reStructuredText ranks them), numbered headings by
    their depth ("5. Text" alone is as often a list item: the directive level), directives and definition
    terms below any heading, outline lines below those. Nothing inside a Markdown code fence counts."""
    lines = text.splitlines(keepends=True)
    at, offsets = 0, []
    for line in lines:
        offsets.append(at)
        at += len(line)
    starts, outlined = set(section_starts(text)), set(outline_starts(text))
    underlines: list[str] = []
    out: list[Heading] = []
    code = in_code_fences(lines)
    for i, line in enumerate(lines):
        o, stripped = offsets[i], line.strip()
        if code[i] or not stripped or UNDERLINE.fullmatch(stripped):
            continue
        below = lines[i + 1].strip() if i + 1 < len(lines) and not code[i + 1] else ""
        title = _MARKUP.sub("", stripped).strip()[:100]
        if sum(c.isalpha() for c in title) < 2:
            continue
        above = offsets[i - 1] if i > 0 and UNDERLINE.fullmatch(lines[i - 1].strip()) else o
        if UNDERLINE.fullmatch(below) and abs(len(below) - len(stripped)) <= 2 and (o in starts or above in starts):
            if below[0] not in underlines:
                underlines.append(below[0])
            out.append((above, 1 + underlines.index(below[0]), title))
        elif o in starts and (marks := _MARKED.match(stripped)):
            out.append((o, len(marks.group(1)), title))
        elif o in starts and (pod := _POD_HEADING.match(stripped)):
            out.append((o, int(pod.group(1)), title))
        elif o in starts and _NUMBERED.match(stripped):
            depth = len(stripped.split()[0].rstrip(".").split("."))
            out.append((o, depth if depth > 1 else _DIRECTIVE_LEVEL, title))
        elif (o in starts and o > 0) or (o == 0 and (stripped.startswith("..") or stripped.endswith("::"))):
            out.append((o, _DIRECTIVE_LEVEL, title))
        elif o in outlined and not _CODE_LINE.search(stripped):
            out.append((o, _OUTLINE_LEVEL + len(line.expandtabs()) - len(line.expandtabs().lstrip()), title))
    return out


def chunk_headings(nodes: Sequence[BaseNode]) -> dict[str, list[Heading]]:
    """Per chunk id, the headings of its document above and inside it, at offsets from the chunk's start.
    Each chunk is read on its own and a document's chunks (``ref_doc_id``) are placed by their
    ``start_char_idx`` (a heading in the overlap of two chunks counts once). Reading the document as one
    text instead (so a chunk that starts inside a code fence knows it) measured lower on the Markdown
    sets (bench/results/firststage/NOTES.md, 2026-12-02 evening)."""
    by_doc: dict[str, list[BaseNode]] = defaultdict(list)
    for node in nodes:
        by_doc[str(node.ref_doc_id)].append(node)
    out: dict[str, list[Heading]] = {}
    for members in by_doc.values():
        members.sort(key=lambda n: _start(n) or 0)
        found: dict[int, tuple[int, str]] = {}
        for node in members:
            start = _start(node) or 0
            for o, level, title in headings(node.get_content()):
                found.setdefault(start + o, (level, title))
        ordered = sorted(found.items())
        for node in members:
            start = _start(node) or 0
            end = start + len(node.get_content())
            out[node.node_id] = [(o - start, level, title) for o, (level, title) in ordered if o < end]
    return out


def _start(node: BaseNode) -> int | None:
    """Where ``node`` starts in its document's text (a TextNode's ``start_char_idx``), if known."""
    start = getattr(node, "start_char_idx", None)
    return start if isinstance(start, int) else None


def heading_path(found: Sequence[Heading], at: int) -> str:
    """The headings in force just before character ``at``, outermost first ("dgram > Class: dgram.Socket >
    socket.bind()"): each heading closes those at its level and deeper."""
    stack: list[tuple[int, str]] = []
    for o, level, title in found:
        if o >= at:
            break
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
    return " > ".join(title for _, title in stack)[-_MAX_CHARS:]
