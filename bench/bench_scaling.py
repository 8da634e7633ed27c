"""How index-time and query-time costs grow with corpus size, plugins off and on.

    python bench/bench_scaling.py --sizes 1000,10000,100000 --plugins crossref,overview,retry

Synthetic corpora (bench/synth.py) with references between documents.
"""

from __future__ import annotations

import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from common import RESULTS, parser
from synth import WORDS, make_corpus

from ragplugins import load
from ragplugins.embeddings import load_embed_model
from ragplugins.plugins import PluginRegistry


def _dir_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


def measure(corpus: Path, enable: list[str], embed, reg, queries: list[str]) -> dict:
    persist = Path(tempfile.mkdtemp(prefix="scale-"))
    rp = load({"enable": enable, "persist_dir": str(persist), "chunk_size": 128, "chunk_overlap": 16},
              embed_model=embed, registry=reg)
    start = time.perf_counter()
    _, report = rp.index_paths([corpus])
    index_s = time.perf_counter() - start
    rp.search(queries[0])  # warm caches (BM25/FTS, sidecars)
    lat = []
    for q in queries:
        t = time.perf_counter()
        rp.search(q)
        lat.append((time.perf_counter() - t) * 1000)
    out = {"chunks": report.chunks_written, "index_s": index_s, "chunks_per_s": report.chunks_written / index_s,
           "query_ms_p50": statistics.median(lat), "query_ms_p90": sorted(lat)[int(0.9 * (len(lat) - 1))],
           "index_mb": _dir_mb(persist)}
    shutil.rmtree(persist, ignore_errors=True)
    return out


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--sizes", default="1000,10000")
    p.add_argument("--plugins", default="crossref,overview,retry")
    args = p.parse_args()
    plugins = [x for x in args.plugins.split(",") if x]
    embed, reg = load_embed_model(), PluginRegistry.discover()
    queries = [f"{WORDS[i % len(WORDS)]} {WORDS[(3 * i + 1) % len(WORDS)]} exhibit {chr(65 + i % 6)}" for i in range(20)]
    results = []
    for size in [int(s) for s in args.sizes.split(",")]:
        corpus = make_corpus(Path(tempfile.mkdtemp(prefix=f"synth{size}-")), size)
        for arm, enable in (("off", []), ("on", plugins)):
            row = {"size": size, "arm": arm, **measure(corpus, enable, embed, reg, queries)}
            results.append(row)
            print(json.dumps(row), flush=True)
        shutil.rmtree(corpus, ignore_errors=True)
    (RESULTS / "scaling").mkdir(parents=True, exist_ok=True)
    (RESULTS / "scaling" / "results.json").write_text(json.dumps(results, indent=1))
    print("\n| chunks | arm | index s | chunks/s | query p50 ms | query p90 ms | index MB |\n|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['chunks']} | {r['arm']} | {r['index_s']:.1f} | {r['chunks_per_s']:.0f} | "
              f"{r['query_ms_p50']:.1f} | {r['query_ms_p90']:.1f} | {r['index_mb']:.1f} |")


if __name__ == "__main__":
    main()
