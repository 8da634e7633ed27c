"""Gold query sets: the bench JSONL schema, or the minimal ``{"query", "expected"}`` form."""

from __future__ import annotations

import difflib
import json
import re
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

    def is_source(self, doc_id: str) -> bool:
        """Whether ``doc_id`` is one of the row's ``expected_sources``: that id, or one that ends with it as a path
        (a page under a folder, "guide/sso.html", for "sso.html")."""
        return names_document(doc_id, self.expected_sources)


def names_document(doc_id: str, names: Iterable[str]) -> bool:
    """Whether one of ``names`` (as a gold row writes a document) is the document ``doc_id``: its id, or the end of
    its id as a path."""
    path = doc_id.replace("\\", "/")
    return any(path == name or path.endswith("/" + name.lstrip("/")) for name in names)


# The row keys ragplugins reads; a row may carry others (a bench's "corpus", "answer", notes).
KNOWN_KEYS = ("id", "query", "expected", "match", "dimensions", "expected_sources", "anchor_doc", "multi_document")
# What a row written by hand often calls its question.
_QUERY_NAMES = ("question", "q", "prompt", "text", "input")
_MAX_PROBLEMS = 20


def _misspelt(data: dict[str, Any]) -> list[str]:
    """Keys of a row that look like a misspelt key ragplugins reads which the row lacks ("expected_source")."""
    out = []
    for key in data:
        if key in KNOWN_KEYS:
            continue
        close = difflib.get_close_matches(key, [k for k in KNOWN_KEYS if k not in data], n=1, cutoff=0.8)
        if close:
            out.append(f"'{key}' (did you mean '{close[0]}'?)")
    return out


def _row_problems(data: Any) -> list[str]:
    if not isinstance(data, dict):
        return ["a gold row is a JSON object with 'query' and 'expected'"]
    problems = []
    if missing := [key for key in ("query", "expected") if key not in data]:
        hint = next((f" (it has '{k}': call it 'query')" for k in _QUERY_NAMES if k in data and "query" in missing), "")
        problems.append("a gold row needs 'query' and 'expected'; this one has no "
                        + " and no ".join(f"'{key}'" for key in missing) + hint)
    if misspelt := _misspelt(data):
        problems.append(f"unknown key {', '.join(misspelt)}")
    if "expected" in data:
        expected = [data["expected"]] if isinstance(data["expected"], str) else data["expected"]
        if not isinstance(expected, list) or not expected \
                or not all(isinstance(e, str) and e.strip() for e in expected):
            problems.append("'expected' must be a non-empty list of strings")
    if data.get("match", "any") not in ("any", "all"):
        problems.append(f"'match' must be 'any' or 'all', not {data['match']!r}")
    sources = data.get("expected_sources")
    if sources is not None and not isinstance(sources, str) and \
            not (isinstance(sources, list) and all(isinstance(s, str) for s in sources)):
        problems.append("'expected_sources' must be a document id or a list of them")
    if data.get("anchor_doc") is not None and not isinstance(data["anchor_doc"], str):
        problems.append("'anchor_doc' must be a document id or null")
    return problems


# The place a chunk or passage holds in its document, as `query` and eval's results name it ("guide/sso.html#3",
# "guide/sso.html#0+1"): a row naming the document so means the document.
_PLACE = re.compile(r"#\d+(?:\+\d+)*\Z")


def _document_name(name: str) -> str:
    return _PLACE.sub("", name)


def load_gold(paths: str | Path | Iterable[str | Path]) -> list[GoldRow]:
    """Read gold rows from one file or several; blank lines and lines starting with // are ignored. Sorted by
    id. Every problem of every file is reported at once (the first 20), each with its file and line."""
    rows: list[GoldRow] = []
    problems: list[str] = []
    where: dict[str, list[str]] = {}
    # One path, not its characters (a new user's load_gold("gold.jsonl") read "gold file '/' does not exist").
    for path in [paths] if isinstance(paths, (str, Path)) else paths:
        path = Path(path)
        if not path.is_file():
            raise InputError(f"gold file '{path}' does not exist")
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip() or line.lstrip().startswith("//"):
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                problems.append(f"{path}:{lineno}: not valid JSON: {exc}")
                continue
            if found := _row_problems(data):
                problems += [f"{path}:{lineno}: {p}" for p in found]
                continue
            expected, sources = data["expected"], data.get("expected_sources") or []
            row = GoldRow(
                id=str(data.get("id") or f"{path.stem}:{lineno}"), query=data["query"],
                expected=tuple([expected] if isinstance(expected, str) else expected),
                match=data.get("match", "any"), dimensions=dict(data.get("dimensions") or {}),
                expected_sources=tuple(map(_document_name, [sources] if isinstance(sources, str) else sources)),
                anchor_doc=_document_name(data["anchor_doc"]) if data.get("anchor_doc") else None,
                multi_document=data.get("multi_document"), raw=data)
            rows.append(row)
            where.setdefault(row.id, []).append(f"{path}:{lineno}")
    problems += [f"duplicate gold id '{i}': {', '.join(places)}" for i, places in where.items() if len(places) > 1]
    if problems:
        more = f"\n(and {len(problems) - _MAX_PROBLEMS} more)" if len(problems) > _MAX_PROBLEMS else ""
        raise InputError("the gold set has problems; fix them and run again:\n"
                         + "\n".join(problems[:_MAX_PROBLEMS]) + more)
    return sorted(rows, key=lambda r: r.id)
