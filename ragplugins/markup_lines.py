"""Lines of the text the readers write and the splitter reads, Markdown's and reStructuredText's alike: a title's
underline and a code fence. The HTML reader, the section splitter and the headings above a window read them one way.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

UNDERLINE = re.compile(r"([=\-~^*+#`])\1{2,}[ \t]*$")  # "=====" under (or over) a title
# A Markdown code fence: "```", "```python", "~~~"; in a list, indented or after the item's marker ("6. ```").
FENCE = re.compile(r"[ \t]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+)?(`{3,}|~{3,})")


def in_code_fences(lines: Sequence[str]) -> list[bool]:
    """Per line, whether it is a Markdown code fence or inside one. A fence closes at a line of the character that
    opened it, at least as long. A line of tildes or backticks right under a title as long is the title's
    underline (reStructuredText's, AsciiDoc's), not a fence."""
    inside: list[bool] = []
    opened = ""
    for i, line in enumerate(lines):
        fence = FENCE.match(line)
        if opened:
            inside.append(True)
            if fence and fence.group(1).startswith(opened) and not line[fence.end():].strip():
                opened = ""
            continue
        above = lines[i - 1].strip() if i else ""
        underline = fence is not None and above != "" and UNDERLINE.fullmatch(line.strip()) is not None \
            and abs(len(line.strip()) - len(above)) <= 2
        if fence and not underline:
            opened = fence.group(1)
        inside.append(bool(opened))
    return inside


_ATX_HEADING = re.compile(r"[ \t]{0,3}#{1,6}[ \t]+\S.*")
_RULE = re.compile(r"[ \t]{0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*")


def only_rules(text: str) -> bool:
    """Whether a Markdown text holds nothing but rules ("---"): a page whose words all went, its ``<hr>`` left."""
    return all(not line.strip() or _RULE.fullmatch(line) for line in text.splitlines())


def only_headings(text: str) -> str | None:
    """The first heading of a Markdown text that holds nothing but headings and rules, else None."""
    lines = [line for line in text.splitlines() if line.strip() and not _RULE.fullmatch(line)]
    if lines and all(_ATX_HEADING.fullmatch(line) for line in lines):
        return lines[0].strip().lstrip("#").strip()
    return None
