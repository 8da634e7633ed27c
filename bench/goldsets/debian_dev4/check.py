"""Check extra dev rows (dev3; dev2 with --dir) against the text ragplugins indexes (its reader's output,
whitespace collapsed and lowercased, as the metric matches): every expected substring inside each expected
source, ids unique, paraphrase_of present, a pointer's anchor a corpus file other than its source, every
row split "dev".

    python bench/goldsets/debian_dev3/check.py manpages [nodejs ...]
    python bench/goldsets/debian_dev3/check.py --dir bench/goldsets/debian_dev2 git python
"""
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
from debian_corpora import corpus_dir  # noqa: E402

from ragplugins.eval.metrics import norm  # noqa: E402
from ragplugins.readers import read_documents  # noqa: E402

args = sys.argv[1:]
folder = HERE
if args[:1] == ["--dir"]:
    folder, args = Path(args[1]), args[2:]
bad = 0
for corpus in args:
    rows = [json.loads(line) for line in (folder / f"{corpus}.jsonl").read_text().splitlines() if line.strip()]
    ids = [r["id"] for r in rows]
    root = corpus_dir(corpus)
    problems = [f"duplicate {i}" for i in set(ids) if ids.count(i) > 1]
    texts: dict[str, str] = {}
    for r in rows:
        kind = r["dimensions"]["kind"]
        if r["dimensions"].get("split") != "dev" or r["corpus"] != corpus:
            problems.append(f"{r['id']}: split/corpus")
        if r["paraphrase_of"] and r["paraphrase_of"] not in ids:
            problems.append(f"{r['id']}: paraphrase_of {r['paraphrase_of']} missing")
        if kind == "pointer" and (not r.get("anchor_doc") or not (root / r["anchor_doc"]).is_file()
                                  or r["anchor_doc"] in r["expected_sources"]):
            problems.append(f"{r['id']}: anchor {r.get('anchor_doc')}")
        for src in r["expected_sources"]:
            if src not in texts:
                docs = read_documents([root / src]).documents
                texts[src] = norm(" ".join(d.text for d in docs))
            problems += [f"{r['id']}: '{e}' not in {src}" for e in r["expected"] if norm(e) not in texts[src]]
    print(f"{corpus}: {len(rows)} rows, {len(problems)} problems", *problems, sep="\n  ")
    bad += len(problems)
sys.exit(1 if bad else 0)
