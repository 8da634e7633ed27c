"""Batch verification: read rows of question, answer and evidence, verify, and score labels.

A row is a JSON object per line (blank lines and ``//`` lines are skipped)::

    {"id": "q1", "question": "...", "answer": "...", "label": true,
     "evidence": ["plain text", {"id": "n1", "text": "..."},
                  {"path": "corpora/hr/policy.pdf", "page": 2},
                  {"path": "corpora/docs/guide.md", "section": "Configuration"}]}

``label`` is optional (true/"grounded"/1 = grounded, false/"ungrounded"/0 = not).
File evidence is resolved against ``root`` (a PDF page, 1-based, or the Markdown
section under a heading), so a labelled set can point into a corpus instead of
copying it. Positive class in the metrics = grounded.
"""

from __future__ import annotations

import functools
import json
import re
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragplugins_verifier.base import Evidence, Verifier, VerifierError
from ragplugins_verifier.verdict import Verdict

# 1 and 0 are the same keys as True and False.
_LABELS = {True: True, False: False, "true": True, "false": False, "grounded": True,
           "ungrounded": False, "supported": True, "unsupported": False, "1": True, "0": False}


@dataclass
class Case:
    id: str
    question: str
    answer: str
    evidence: list[Evidence]
    label: bool | None = None
    fields: dict[str, Any] = field(default_factory=dict)


@dataclass
class CaseResult:
    case: Case
    verdict: Verdict

    @property
    def correct(self) -> bool | None:
        return None if self.case.label is None else self.case.label == self.verdict.grounded


def read_cases(path: str | Path, root: str | Path | None = None) -> list[Case]:
    """Read a JSONL file of rows; errors name the file, line and key."""
    path = Path(path)
    if not path.is_file():
        raise VerifierError(f"'{path}' does not exist; give a JSONL file of question/answer/evidence rows")
    base = Path(root) if root is not None else path.parent
    cases: list[Case] = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("//"):
            continue
        where = f"{path}:{lineno}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise VerifierError(f"{where}: not valid JSON ({exc.msg})") from exc
        if not isinstance(row, dict):
            raise VerifierError(f"{where}: each line must be a JSON object")
        cases.append(_case(row, where, base, len(cases)))
    return cases


def _case(row: dict, where: str, base: Path, n: int) -> Case:
    for key in ("answer", "evidence"):
        if key not in row:
            raise VerifierError(f"{where}: missing key '{key}' (rows need question, answer, evidence)")
    if not isinstance(row["answer"], str):
        raise VerifierError(f"{where}: 'answer' must be a string")
    evidence = row["evidence"]
    if isinstance(evidence, (str, dict)):
        evidence = [evidence]
    if not isinstance(evidence, list):
        raise VerifierError(f"{where}: 'evidence' must be a list of strings or objects")
    items = [_evidence(item, where, base, i) for i, item in enumerate(evidence)]
    label = row.get("label")
    if label is not None:
        key = label.lower() if isinstance(label, str) else label
        if key not in _LABELS:
            raise VerifierError(f"{where}: label {label!r} is not one of true/false, grounded/ungrounded, 1/0")
        label = _LABELS[key]
    known = {"id", "question", "query", "answer", "evidence", "label"}
    return Case(id=str(row.get("id", n + 1)), question=str(row.get("question") or row.get("query") or ""),
                answer=row["answer"], evidence=items, label=label,
                fields={k: v for k, v in row.items() if k not in known})


def _evidence(item: Any, where: str, base: Path, i: int) -> Evidence:
    if isinstance(item, str):
        return Evidence(f"evidence-{i}", item)
    if not isinstance(item, dict):
        raise VerifierError(f"{where}: evidence item {i} must be a string or an object")
    if isinstance(item.get("text"), str):
        return Evidence(str(item.get("id") or f"evidence-{i}"), item["text"])
    if "path" not in item:
        raise VerifierError(f"{where}: evidence item {i} needs 'text', or 'path' with 'page' or 'section'")
    path = base / item["path"]
    if not path.is_file():
        raise VerifierError(f"{where}: evidence file '{path}' does not exist (set --root to the folder the "
                            f"paths are relative to)")
    if "page" in item:
        text = _pdf_page(str(path), int(item["page"]), where)
        return Evidence(f"{item['path']}#page={item['page']}", text)
    if "section" in item:
        text = _markdown_section(path.read_text(encoding="utf-8"), str(item["section"]), where)
        return Evidence(f"{item['path']}#{item['section']}", text)
    return Evidence(str(item["path"]), path.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=256)
def _pdf_page(path: str, page: int, where: str) -> str:
    from pypdf import PdfReader

    pages = PdfReader(path).pages
    if not 1 <= page <= len(pages):
        raise VerifierError(f"{where}: '{path}' has {len(pages)} pages, not page {page}")
    return pages[page - 1].extract_text()


def _markdown_section(text: str, heading: str, where: str) -> str:
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        m = re.match(r"^(#{1,6})\s+(.*?)\s*$", line)
        if m and m.group(2) == heading:
            level = len(m.group(1))
            end = next((j for j in range(i + 1, len(lines))
                        if (h := re.match(r"^(#{1,6})\s", lines[j])) and len(h.group(1)) <= level), len(lines))
            return "".join(lines[i:end])
    raise VerifierError(f"{where}: no Markdown heading '{heading}' in that file")


def run_cases(verifier: Verifier, cases: Iterable[Case]) -> list[CaseResult]:
    return [CaseResult(c, verifier.verify(c.question, c.answer, c.evidence)) for c in cases]


def metrics(results: list[CaseResult]) -> dict[str, Any]:
    """Accuracy, TPR (grounded answers accepted), TNR (ungrounded answers rejected), confusion matrix."""
    labelled = [r for r in results if r.case.label is not None]
    tp = sum(1 for r in labelled if r.case.label and r.verdict.grounded)
    fn = sum(1 for r in labelled if r.case.label and not r.verdict.grounded)
    tn = sum(1 for r in labelled if not r.case.label and not r.verdict.grounded)
    fp = sum(1 for r in labelled if not r.case.label and r.verdict.grounded)
    latencies = [r.verdict.latency_ms for r in results]
    return {
        "n": len(results), "labelled": len(labelled),
        "accuracy": (tp + tn) / len(labelled) if labelled else None,
        "tpr": tp / (tp + fn) if tp + fn else None,
        "tnr": tn / (tn + fp) if tn + fp else None,
        "confusion": {"tp": tp, "fn": fn, "tn": tn, "fp": fp},
        "errors": sum(1 for r in results if r.verdict.error),
        "latency_ms_mean": statistics.fmean(latencies) if latencies else None,
        "latency_ms_p50": statistics.median(latencies) if latencies else None,
        "latency_ms_max": max(latencies) if latencies else None,
    }
