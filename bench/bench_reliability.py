"""Large plain-text files: reading and splitting time per MB (the step that used to fail on 16-20 MB).

    python bench/bench_reliability.py --sizes 1,4,16

Each size is one generated .txt file (one paragraph per 80 words, one sentence end every ~20
words), read by ragplugins' reader and split by the core splitter at the default chunk size,
under nltk's own regex timeout (5 s). Times are wall clock on a shared machine: read them as
"linear or not", not as absolute speeds. The crash-injection results are from
tests/test_crash.py (pytest), not from this script.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

from ragplugins import load
from ragplugins.readers import read_documents

RESULTS = Path(__file__).parent / "results" / "reliability"
WORDS = ("the agreement fee payment schedule section exhibit policy termination notice party clause "
         "invoice quarter annual interest late written days either may").split()


def make_text(mb: float, seed: int = 0) -> str:
    rng = random.Random(seed)
    out, size, n = [], 0, 0
    while size < mb * 1_000_000:
        word = rng.choice(WORDS)
        n += 1
        if n % 20 == 0:
            word += "."
        if n % 80 == 0:
            word += "\n\n"
        out.append(word)
        size += len(word) + 1
    return " ".join(out)


def commit_cost(rows: int = 100_000, batch: int = 1_000) -> dict:
    """Seconds to write ``batch`` rows into a ``rows``-row LanceDB table: append, merge on id, and merge
    that also removes two documents' other rows (what RagLanceDBVectorStore.write_batch does)."""
    import lancedb
    import numpy as np
    import pyarrow as pa

    def table(start: int, n: int) -> pa.Table:
        vectors = np.random.default_rng(start).random(n * 384, dtype=np.float32)
        return pa.table({"id": [f"id{i}" for i in range(start, start + n)],
                         "doc_id": [f"d{i // 10}" for i in range(start, start + n)],
                         "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors), 384),
                         "text": ["some chunk text " * 20] * n})

    out = {"rows": rows, "batch": batch}
    with tempfile.TemporaryDirectory() as tmp:
        t = lancedb.connect(tmp).create_table("t", table(0, rows))
        steps = {
            "append_s": lambda: t.add(table(rows * 2, batch)),
            "merge_s": lambda: t.merge_insert("id").when_matched_update_all().when_not_matched_insert_all()
            .execute(table(rows * 3, batch)),
            "merge_and_remove_s": lambda: t.merge_insert("id").when_matched_update_all()
            .when_not_matched_insert_all().when_not_matched_by_source_delete("doc_id IN ('d5', 'd6')")
            .execute(table(rows * 4, batch)),
        }
        for name, step in steps.items():
            start = time.perf_counter()
            step()
            out[name] = round(time.perf_counter() - start, 3)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1,4,16", help="File sizes in MB, comma-separated.")
    ap.add_argument("--plain", action="store_true",
                    help="LlamaIndex's SentenceSplitter as the core used it before (whole text at once), to compare.")
    ap.add_argument("--commit-cost", action="store_true", help="Only time one batch commit on a 100,000-row table.")
    args = ap.parse_args()
    if args.commit_cost:
        result = commit_cost()
        print(result)
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "commit_cost.json").write_text(json.dumps(result, indent=2))
        return
    rp = load({"enable": []})
    splitter = rp.splitter()
    if args.plain:
        from llama_index.core.node_parser import SentenceSplitter

        splitter = SentenceSplitter(chunk_size=rp.config.core.chunk_size, chunk_overlap=rp.config.core.chunk_overlap)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for mb in [float(s) for s in args.sizes.split(",")]:
            path = Path(tmp) / f"big-{mb:g}mb.txt"
            path.write_text(make_text(mb), encoding="utf-8")
            start = time.perf_counter()
            docs = read_documents([path]).documents
            read_s = time.perf_counter() - start
            start = time.perf_counter()
            try:
                nodes = splitter.get_nodes_from_documents(docs)
            except TimeoutError as exc:  # nltk's regex guard
                print({"mb": mb, "error": str(exc)[:120], "after_s": round(time.perf_counter() - start, 1)})
                continue
            split_s = time.perf_counter() - start
            size = path.stat().st_size / 1_000_000
            rows.append({"mb": round(size, 2), "read_s": round(read_s, 2), "split_s": round(split_s, 2),
                         "split_s_per_mb": round(split_s / size, 2), "chunks": len(nodes)})
            print(rows[-1], flush=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / ("large_files_plain.json" if args.plain else "large_files.json")).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
