"""Extraction and resolution time against document size, per reference family, on ordinary and
adversarial text: the crossref annotation must stay linear from 0.3 to 5 MB per document.

    python bench/bench_crossref_linear.py            # writes bench/results/crossref/linear.json

Each case is one document of the given size as ONE chunk (the worst case: every per-chunk step sees
the whole text), annotated together with a few small documents it can point at. The verdict per case
compares seconds per MB at the largest size with the smallest: linear means the ratio stays near 1
(a quadratic step would make it about 17 here).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from ragplugins_crossref.families import BUILTIN_FAMILIES
from ragplugins_crossref.resolve import annotate

RESULTS = Path(__file__).resolve().parent / "results" / "crossref"
SIZES_MB = (0.3, 1.2, 5.0)

TARGETS = {
    "other.md": "# Other Agreement\n\n## Exhibit 1.1 - Terms\nText.\n\n## Section 4.3 Inspection\nText.\n",
    "page-1.html": "## 9.17. Sequence Functions\nText.",
    "git-bar.txt": "git-bar(1)\n==========\n\nNAME\n----\ngit-bar - a command\n",
    "mod.rst.txt": "mod\n===\n\n.. module:: mod\n\n.. _label-1:\n\n.. function:: f1(x)\n",
    "rfc9000.txt": "RFC 9000: QUIC Transport\ntext",
}

# Ordinary text in each family's convention, and text built to make a careless pattern backtrack.
CASES = {
    "label: Exhibit N.M of other.md (issue 14's 122 s case)": "Exhibit {i}.{j} of other.md. ",
    "section/chapter": "as set out in Section {i}.{j} and Chapter {j}; see Section 4.3 of the Other Agreement. ",
    "hyperlink": "see [the sequence functions](page-1.html#FUNC-{i}) and [Section 9.17](page-1.html). ",
    "manual page": "configure it with linkgit:git-bar[1] or git-bar(1), not stat({j}). ",
    "sphinx role": "use :func:`mod.f1`, :ref:`the label <label-1>`, :class:`~mod.C{i}` here. ",
    "citation": "as shown in [RFC9000] and [K{i}]. ",
    "adversarial: open brackets": "[" * 40 + "x" * 20,
    "adversarial: unclosed link": "[text](" + "a/" * 30,
    "adversarial: unclosed role": ":func:`" + "a." * 30,
    "adversarial: linkgit run": "linkgit:" + "a-" * 30,
    "adversarial: parentheses": "a(" * 30 + "1",
    "adversarial: dotted section": "Section " + "1." * 30,
    "adversarial: html href": '<a href="' + "x" * 60,
}
REFERENCES = "\n\nReferences\n\n   [RFC9000]  Iyengar, J., \"QUIC\",\n              RFC 9000, May 2021.\n"


def document(pattern: str, mb: float) -> str:
    target = int(mb * 1_000_000)
    parts, size, i = [], 0, 0
    while size < target:
        piece = pattern.format(i=i % 97, j=i % 13) if "{" in pattern else pattern
        parts.append(piece)
        size += len(piece)
        i += 1
        if i % 20 == 0:
            parts.append("\n")
    return "".join(parts) + REFERENCES


def run_case(pattern: str, mb: float) -> float:
    docs = {name: [(f"{name}#0", text)] for name, text in TARGETS.items()}
    docs["big.md"] = [("big.md#0", document(pattern, mb))]
    meta = {d: {"file_name": d} for d in docs}
    start = time.perf_counter()
    annotate(docs, meta, BUILTIN_FAMILIES)
    return time.perf_counter() - start


def main() -> int:
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, pattern in CASES.items():
        seconds = {mb: round(run_case(pattern, mb), 3) for mb in SIZES_MB}
        per_mb = {mb: s / mb for mb, s in seconds.items()}
        ratio = per_mb[SIZES_MB[-1]] / max(per_mb[SIZES_MB[0]], 1e-9)
        out[name] = {"seconds": seconds, "growth_of_s_per_mb": round(ratio, 2)}
        print(f"{name:55} " + "  ".join(f"{mb} MB {s:.2f} s" for mb, s in seconds.items())
              + f"   s/MB at 5 MB vs 0.3 MB: x{ratio:.2f}", flush=True)
    (RESULTS / "linear.json").write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
