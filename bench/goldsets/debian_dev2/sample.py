"""Draw the pointers the dev2 questions are written from: a seeded random order over every formal
reference of a corpus (not the project's extraction code: a plain regex per corpus convention).

    python bench/goldsets/debian_dev2/sample.py git [--n 40]

A reference counts when its target is another file of the corpus. The candidates are all (file, line,
target) occurrences, sorted, then shuffled with random.Random(1402); they are taken in that order,
skipping an anchor file or a target already taken and an (anchor, target) pair already used by
bench/goldsets/debian/<corpus>.jsonl. Prints the anchor's lines around each pointer.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
from debian_corpora import corpus_dir  # noqa: E402

SEED = 1402
LINKGIT = re.compile(r"linkgit:([\w.-]+)\[\d\]")
HREF = re.compile(r'href="([\w.-]+\.html)(?:#[^"]*)?"')
ROLE = re.compile(r":(?:mod|func|class|meth|exc|data|attr):`[~!]?(?:[^`<]*<)?([\w.]+)>?`")
MODULE = re.compile(r"^\.\. module:: ([\w.]+)", re.M)


def candidates(corpus: str) -> list[tuple[str, int, str, str]]:
    root = corpus_dir(corpus)
    files = sorted(p.name for p in root.iterdir() if p.is_file())
    names = set(files)
    modules: dict[str, str] = {}
    if corpus == "python":
        for f in files:
            for m in MODULE.findall((root / f).read_text(errors="replace")):
                modules.setdefault(m, f)
    out = []
    for f in files:
        for no, line in enumerate((root / f).read_text(errors="replace").splitlines(), 1):
            if corpus == "git":
                hits = [(m.group(0), f"{m.group(1)}.txt") for m in LINKGIT.finditer(line)]
            elif corpus == "postgres":
                hits = [(m.group(0), m.group(1)) for m in HREF.finditer(line)]
            else:
                hits = []
                for m in ROLE.finditer(line):
                    parts = m.group(1).split(".")
                    target = next((modules[".".join(parts[:n])] for n in range(len(parts), 0, -1)
                                   if ".".join(parts[:n]) in modules), None)
                    if target:
                        hits.append((m.group(0), target))
            out += [(f, no, cue, t) for cue, t in hits if t in names and t != f]
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("corpus")
    p.add_argument("--n", type=int, default=40)
    args = p.parse_args()
    used = {(r["anchor_doc"], r["expected_sources"][0])
            for r in map(json.loads, (HERE.parent / "debian" / f"{args.corpus}.jsonl").read_text().splitlines())
            if r.get("anchor_doc")}
    cands = sorted(set(candidates(args.corpus)))
    random.Random(SEED).shuffle(cands)
    anchors, targets, taken = set(), set(), 0
    root = corpus_dir(args.corpus)
    for f, no, cue, t in cands:
        if f in anchors or t in targets or (f, t) in used:
            continue
        anchors.add(f)
        targets.add(t)
        taken += 1
        lines = (root / f).read_text(errors="replace").splitlines()
        print(f"=== {taken}. {f}:{no} {cue} -> {t}")
        print("\n".join(lines[max(0, no - 6): no + 4]))
        if taken >= args.n:
            break


if __name__ == "__main__":
    main()
