"""Check the public_dev2 gold rows by plain string matching (no retrieval).

For every row: required fields present, ids unique across the three files,
split is "dev", match is "any"/"all", and every expected string (normalised:
whitespace runs collapsed, lowercase) occurs in the normalised text of at
least one of its expected_sources files. For match "all" rows every expected
string must occur in some source. Markdown is read raw; PDFs are read with
pypdf (pages joined by a newline).

    python bench/goldsets/public_dev2/validate.py [--corpora DIR]

DIR defaults to $RAGPLUGINS_BENCH_DIR/corpora or /work/shared/bench/corpora.
"""

import argparse
import json
import os
import re
import sys
from pathlib import Path

import pypdf

from ragplugins.eval.metrics import norm

HERE = Path(__file__).resolve().parent
GOLD_FILES = {"docs": "docs.jsonl", "atlas7": "atlas7.jsonl", "hr": "hr.jsonl"}
REQUIRED = ("id", "corpus", "query", "expected", "match", "fact_ids", "answer",
            "expected_sources", "dimensions")
DIMENSIONS = {
    "question_type": {"factoid", "procedural", "comparative", "negative"},
    "difficulty": {"easy", "hard"},
    "kind": {"factoid", "paraphrase", "multi"},
    "split": {"dev"},
}
MARKUP = re.compile(r"[`*|<>]")


def source_text(corpus_dir: Path, corpus: str, name: str) -> str:
    path = corpus_dir / corpus / name
    if path.suffix == ".pdf":
        return "\n".join(page.extract_text() or "" for page in pypdf.PdfReader(path).pages)
    return path.read_text(encoding="utf-8")


def check_row(row: dict, corpus: str, corpus_dir: Path, texts: dict) -> list[str]:
    where = row.get("id", "<no id>")
    problems = [f"{where}: missing field {field!r}" for field in REQUIRED if field not in row]
    if problems:
        return problems
    if row["corpus"] != corpus:
        problems.append(f"{where}: corpus {row['corpus']!r} in the {corpus} file")
    if row["match"] not in ("any", "all"):
        problems.append(f"{where}: match must be 'any' or 'all', not {row['match']!r}")
    for key, allowed in DIMENSIONS.items():
        if row["dimensions"].get(key) not in allowed:
            problems.append(f"{where}: dimensions.{key}={row['dimensions'].get(key)!r} not in {sorted(allowed)}")
    if not row["dimensions"].get("topic"):
        problems.append(f"{where}: dimensions.topic is empty")
    if row["dimensions"].get("kind") == "multi" and (row["match"] != "all" or len(row["expected"]) < 2):
        problems.append(f"{where}: a multi row needs match 'all' and two expected strings")
    if not 1 <= len(row["expected"]) <= 3:
        problems.append(f"{where}: {len(row['expected'])} expected strings (want 1-3)")
    sources = row["expected_sources"]
    for name in sources:
        if name not in texts:
            path = corpus_dir / corpus / name
            if not path.is_file():
                problems.append(f"{where}: expected source {name!r} not found under {corpus_dir / corpus}")
                continue
            texts[name] = norm(source_text(corpus_dir, corpus, name))
    for expected in row["expected"]:
        if MARKUP.search(expected):
            problems.append(f"{where}: expected {expected!r} contains markup characters")
        hits = [name for name in sources if name in texts and norm(expected) in texts[name]]
        if not hits:
            problems.append(f"{where}: expected {expected!r} occurs in none of {sources}")
    return problems


def unlisted_sources(row: dict, corpus: str, corpus_dir: Path, texts: dict) -> list[str]:
    """Corpus files (outside expected_sources) that also contain an expected string."""
    for path in sorted((corpus_dir / corpus).iterdir()):
        if path.name not in texts:
            texts[path.name] = norm(source_text(corpus_dir, corpus, path.name))
    return sorted({name for name, text in texts.items() if name not in row["expected_sources"]
                   and any(norm(e) in text for e in row["expected"])})


def main() -> int:
    default_dir = Path(os.environ.get("RAGPLUGINS_BENCH_DIR", "/work/shared/bench")) / "corpora"
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora", type=Path, default=default_dir)
    args = parser.parse_args()

    problems, seen, counts = [], set(), {}
    for corpus, filename in GOLD_FILES.items():
        texts: dict = {}
        for lineno, line in enumerate((HERE / filename).read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as err:
                problems.append(f"{filename}:{lineno}: invalid JSON ({err})")
                continue
            if row.get("id") in seen:
                problems.append(f"{filename}:{lineno}: duplicate id {row.get('id')!r}")
            seen.add(row.get("id"))
            row_problems = check_row(row, corpus, args.corpora, texts)
            problems.extend(row_problems)
            if not row_problems:
                also = unlisted_sources(row, corpus, args.corpora, texts)
                if also:
                    print(f"note {row['id']}: an expected string also occurs in {also}")
            kind = row.get("dimensions", {}).get("kind")
            counts.setdefault(corpus, {}).setdefault(kind, 0)
            counts[corpus][kind] += 1
    for corpus, by_kind in counts.items():
        total = sum(by_kind.values())
        print(f"{corpus}: {total} rows " + ", ".join(f"{k}={v}" for k, v in sorted(by_kind.items())))
    for problem in problems:
        print("PROBLEM", problem)
    print("OK" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
