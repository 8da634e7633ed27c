"""Gold query sets: the bench JSONL schema, or the minimal ``{"query", "expected"}`` form."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragplugins.errors import InputError


@dataclass(frozen=True)
class GoldRow:
    id: str
    query: str
    expected: tuple[str, ...]
    match: str = "any"
    dimensions: dict[str, Any] = field(default_factory=dict)
    expected_sources: tuple[str, ...] = ()
    anchor_doc: str | None = None
    multi_document: bool | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def slices(self) -> list[str]:
        """The slices this row belongs to: all, requires_crossref / control, multi_document, key=value."""
        out = ["all"]
        rc = self.dimensions.get("requires_crossref")
        if rc is True:
            out.append("requires_crossref")
        elif rc is False:
            out.append("control")
        if self.multi_document:
            out.append("multi_document")
        for key, value in sorted(self.dimensions.items()):
            if isinstance(value, (str, bool, int)):
                out.append(f"{key}={str(value).lower() if isinstance(value, bool) else value}")
        return out


def load_gold(paths: Iterable[str | Path]) -> list[GoldRow]:
    """Read gold rows; blank lines and lines starting with // are ignored. Sorted by id."""
    rows: list[GoldRow] = []
    for path in paths:
        path = Path(path)
        if not path.is_file():
            raise InputError(f"gold file '{path}' does not exist")
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip() or line.lstrip().startswith("//"):
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{lineno}: not valid JSON: {exc}") from exc
            if not isinstance(data, dict):
                raise InputError(f"{path}:{lineno}: a gold row is a JSON object with 'query' and 'expected'")
            if missing := [key for key in ("query", "expected") if key not in data]:
                raise InputError(f"{path}:{lineno}: a gold row needs 'query' and 'expected'; this one has no "
                                 + " and no ".join(f"'{key}'" for key in missing))
            expected = data["expected"]
            if isinstance(expected, str):
                expected = [expected]
            if not expected or not all(isinstance(e, str) and e.strip() for e in expected):
                raise InputError(f"{path}:{lineno}: 'expected' must be a non-empty list of strings")
            match = data.get("match", "any")
            if match not in ("any", "all"):
                raise InputError(f"{path}:{lineno}: 'match' must be 'any' or 'all', not {match!r}")
            rows.append(GoldRow(
                id=str(data.get("id") or f"{path.stem}:{lineno}"), query=data["query"], expected=tuple(expected),
                match=match, dimensions=dict(data.get("dimensions") or {}),
                expected_sources=tuple(data.get("expected_sources") or ()), anchor_doc=data.get("anchor_doc"),
                multi_document=data.get("multi_document"), raw=data))
    ids = [r.id for r in rows]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise InputError(f"duplicate gold ids: {', '.join(dupes[:5])}")
    return sorted(rows, key=lambda r: r.id)
