"""Speed and cost, measured side by side in one run (ratios, not absolute times: the machine is shared).

    python bench/bench_speed.py --plugins crossref,overview,retry

1. Query overhead of the ragplugins retriever with every plugin disabled against the bare
   LlamaIndex retriever it wraps (interleaved, same queries, same index).
2. Indexing throughput (chunks/s) with plugins off and on (alternating builds).
3. Each plugin's added query latency when on (interleaved per query).
4. Peak memory (max RSS) of a process that indexes and queries, per arm (one subprocess each).
"""

from __future__ import annotations

import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from common import RESULTS, parser

from ragplugins import load
from ragplugins.embeddings import load_embed_model
from ragplugins.eval import bench_corpus
from ragplugins.plugins import PluginRegistry


def _median_ratio(a: list[float], b: list[float]) -> float:
    return statistics.median(y / x for x, y in zip(a, b))


def overhead(paths, gold, embed, reg, repeats: int) -> dict:
    rp = load({"enable": [], "persist_dir": tempfile.mkdtemp()}, embed_model=embed, registry=reg)
    index, _ = rp.index_paths(paths)
    bare = index.as_retriever(similarity_top_k=20)
    wrapped = rp.retriever(index, base=bare)
    queries = [r.query for r in gold]
    for q in queries[:3]:  # warm up both paths
        bare.retrieve(q), wrapped.retrieve(q)
    t_bare, t_wrapped = [], []
    for rep in range(repeats):
        for i, q in enumerate(queries):
            order = [(bare, t_bare), (wrapped, t_wrapped)]
            if (rep + i) % 2:
                order.reverse()
            for retriever, sink in order:
                start = time.perf_counter()
                retriever.retrieve(q)
                sink.append(time.perf_counter() - start)
    return {"pairs": len(t_bare), "bare_ms_median": 1000 * statistics.median(t_bare),
            "wrapped_ms_median": 1000 * statistics.median(t_wrapped),
            "median_ratio": _median_ratio(t_bare, t_wrapped), "total_ratio": sum(t_wrapped) / sum(t_bare)}


def throughput(paths, embed, reg, plugins: list[str], rounds: int) -> dict:
    out = {"off": [], "on": []}
    for _ in range(rounds):
        for arm, enable in (("off", []), ("on", plugins)):
            rp = load({"enable": enable, "persist_dir": tempfile.mkdtemp()}, embed_model=embed, registry=reg)
            start = time.perf_counter()
            _, report = rp.index_paths(paths)
            out[arm].append(report.chunks_written / (time.perf_counter() - start))
    return {arm: statistics.median(v) for arm, v in out.items()} | {
        "on_over_off": statistics.median(out["on"]) / statistics.median(out["off"])}


def plugin_latency(paths, gold, embed, reg, plugins: list[str], repeats: int) -> dict:
    arms = {"off": []} | {p: [p] for p in plugins} | {"all": plugins}
    rps = {}
    for name, enable in arms.items():
        rps[name] = load({"enable": enable, "persist_dir": tempfile.mkdtemp()}, embed_model=embed, registry=reg)
        rps[name].index_paths(paths)
    times = {name: [] for name in arms}
    names = list(arms)
    for rep in range(repeats):
        for i, row in enumerate(gold):
            rot = (rep + i) % len(names)
            for name in names[rot:] + names[:rot]:
                start = time.perf_counter()
                rps[name].search(row.query)
                times[name].append(time.perf_counter() - start)
    base = times["off"]
    return {name: {"mean_ms": 1000 * statistics.fmean(t), "added_vs_off": sum(t) / sum(base) - 1}
            for name, t in times.items()}


def memory_child(corpus: str, enable: list[str], bench_dir: str | None) -> None:
    paths, gold = bench_corpus(corpus, bench_dir)
    rp = load({"enable": enable, "persist_dir": tempfile.mkdtemp()})
    rp.index_paths(paths)
    for row in gold:
        rp.search(row.query)
    # The peak is usually reached while torch loads the embedder, the same in every arm; the resident
    # size after indexing and querying is where what the plugins keep (sidecars, caches) shows.
    with open("/proc/self/statm") as statm:
        resident = int(statm.read().split()[1]) * resource.getpagesize() / 2**20
    print(json.dumps({"max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "rss_after_mb": resident}))


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--corpus", default="acq+docs")
    p.add_argument("--plugins", default="crossref,overview,retry", help="Comma-separated plugins to measure.")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--child-memory", default=None, help="(internal) measure one arm in this process.")
    args = p.parse_args()
    plugins = [x for x in args.plugins.split(",") if x]
    if args.child_memory is not None:
        memory_child(args.corpus, [x for x in args.child_memory.split(",") if x], args.bench_dir)
        return
    embed = load_embed_model()
    reg = PluginRegistry.discover()
    paths, gold = bench_corpus(args.corpus, args.bench_dir)
    result = {"corpus": args.corpus, "plugins": plugins}
    result["overhead"] = overhead(paths, gold, embed, reg, args.repeats)
    print(json.dumps({"overhead": result["overhead"]}, indent=1), flush=True)
    result["indexing_chunks_per_s"] = throughput(paths, embed, reg, plugins, rounds=2)
    print(json.dumps({"indexing": result["indexing_chunks_per_s"]}, indent=1), flush=True)
    result["plugin_latency"] = plugin_latency(paths, gold, embed, reg, plugins, args.repeats)
    print(json.dumps({"plugin_latency": result["plugin_latency"]}, indent=1), flush=True)
    memory = {}
    for name, enable in [("off", "")] + [(p, p) for p in plugins] + [("all", ",".join(plugins))]:
        cmd = [sys.executable, __file__, "--corpus", args.corpus, "--child-memory", enable]
        if args.bench_dir:
            cmd += ["--bench-dir", args.bench_dir]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
        memory[name] = json.loads(out)
    result["peak_memory_mb"] = memory
    print(json.dumps({"peak_memory_mb": memory}, indent=1))
    (RESULTS / "speed").mkdir(parents=True, exist_ok=True)
    (RESULTS / "speed" / f"{args.corpus.replace('+', '_plus_')}.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
