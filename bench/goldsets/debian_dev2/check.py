"""Check the dev2 rows with validate.py's own matching (every expected substring, whitespace collapsed
and lowercased, inside each expected source; HTML also with tags stripped), ids unique, paraphrase_of
present, the anchor a corpus file other than the source.

    python bench/goldsets/debian_dev2/check.py git python
"""
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "debian"))
from validate import corpus_dir, norm, page_texts  # noqa: E402

bad = 0
for corpus in sys.argv[1:]:
    rows = [json.loads(line) for line in (HERE / f"{corpus}.jsonl").read_text().splitlines() if line.strip()]
    ids = [r["id"] for r in rows]
    root = corpus_dir(corpus)
    problems = [f"duplicate {i}" for i in set(ids) if ids.count(i) > 1]
    for r in rows:
        if r["paraphrase_of"] and r["paraphrase_of"] not in ids:
            problems.append(f"{r['id']}: paraphrase_of {r['paraphrase_of']} missing")
        if not (root / r["anchor_doc"]).is_file() or r["anchor_doc"] in r["expected_sources"]:
            problems.append(f"{r['id']}: anchor {r['anchor_doc']}")
        for src in r["expected_sources"]:
            texts = page_texts(root / src)
            problems += [f"{r['id']}: '{e}' not in {src}" for e in r["expected"]
                         if not any(norm(e) in t for t in texts)]
    print(corpus, len(rows), "rows,", len(problems), "problems", *problems, sep="\n  ")
    bad += len(problems)
sys.exit(1 if bad else 0)
