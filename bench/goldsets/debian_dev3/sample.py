"""What the dev3 questions are written about, drawn before any question is written (a fixed rule, so the
writer does not pick easy passages or references).

    python bench/goldsets/debian_dev3/sample.py <corpus> passages [--n 20]
    python bench/goldsets/debian_dev3/sample.py <corpus> pointers [--n 20]
    python bench/goldsets/debian_dev3/sample.py <corpus> passages --seed 2028    # debian_dev4's draw

passages: every paragraph of 200-1,200 characters of the text ragplugins indexes (its reader's output), in
(file, position) order, shuffled with random.Random(2027); printed in that order with its file and first
words. pointers: every occurrence of the corpus's reference syntax whose target is another corpus file
(git ``linkgit:name[N]``, manpages ``name(N)``, nodejs Markdown links and link definitions to ``x.md``,
postgres and policy ``href="x.html..."``, python ``:mod:`` / ``:func:`` / ``:class:`` / ``:meth:`` roles
resolved to the file declaring the longest module prefix), sorted, shuffled with random.Random(2027).
"""
from __future__ import annotations

import argparse
import random
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
from debian_corpora import corpus_dir  # noqa: E402

from ragplugins.readers import read_documents  # noqa: E402

SEED = 2027


def passages(root: Path) -> list[tuple[str, int, str]]:
    out = []
    for doc in sorted(read_documents([root]).documents, key=lambda d: d.id_):
        for m in re.finditer(r"(?:[^\n]+\n?)+", doc.text):
            para = m.group().strip()
            if 200 <= len(para) <= 1200:
                out.append((Path(doc.metadata.get("file_name", doc.id_)).name, m.start(), para))
    return out


def pointers(corpus: str, root: Path) -> list[tuple[str, int, str, str]]:
    files = {p.name for p in root.iterdir()}
    modules: dict[str, str] = {}
    if corpus == "python":
        for p in sorted(root.iterdir()):
            for m in re.finditer(r"^\.\. (?:module|currentmodule):: ([\w.]+)", p.read_text(errors="replace"), re.M):
                modules.setdefault(m.group(1), p.name)
    out = []
    for p in sorted(root.iterdir()):
        for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1):
            targets: list[str] = []
            if corpus == "git":
                targets = [f"{m.group(1)}.txt" for m in re.finditer(r"linkgit:([\w-]+)\[\d\]", line)]
            elif corpus == "manpages":
                targets = [f"{m.group(1)}.{m.group(2)}.txt" for m in re.finditer(r"\b([\w.-]+)\((\d)\)", line)]
            elif corpus == "nodejs":
                targets = [m.group(1) for m in re.finditer(r"\]\(?:?\s*([\w.-]+\.md)(?:#[^)\s]*)?", line)]
            elif corpus in ("postgres", "policy"):
                targets = [m.group(1) for m in re.finditer(r'href="([\w.-]+\.html)', line)]
            elif corpus == "python":
                for m in re.finditer(r":(?:mod|func|class|meth|exc|data|attr):`~?([\w.]+)`", line):
                    parts = m.group(1).split(".")
                    for k in range(len(parts), 0, -1):
                        if ".".join(parts[:k]) in modules:
                            targets.append(modules[".".join(parts[:k])])
                            break
            for t in dict.fromkeys(targets):
                if t in files and t != p.name:
                    out.append((p.name, n, t, line.strip()[:160]))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("what", choices=["passages", "pointers"])
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--seed", type=int, default=SEED, help="another draw for another batch (dev4: 2028)")
    args = ap.parse_args()
    root = corpus_dir(args.corpus)
    rng = random.Random(args.seed)
    if args.what == "passages":
        items = passages(root)
        rng.shuffle(items)
        for i, (name, at, para) in enumerate(items[: args.n], 1):
            print(f"#{i} {name} @char {at}: {para[:300]!r}\n")
    else:
        refs = sorted(set(pointers(args.corpus, root)))
        rng.shuffle(refs)
        for i, (name, line, target, text) in enumerate(refs[: args.n], 1):
            print(f"#{i} {name}:{line} -> {target} | {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
