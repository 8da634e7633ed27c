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
