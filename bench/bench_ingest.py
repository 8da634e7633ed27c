"""Index throughput, serial vs Ray workers, and what adding 1 % new documents costs, plugins off and on.

    python bench/bench_ingest.py --docs 4000 --out bench/results/ingest

A synthetic corpus (bench/synth.py: Markdown contracts that cite each other), ``chunk_size = 128``,
the ``hashing`` embedder of bench/bench_scaling.py (MiniLM's 384 dimensions, no model time: what is
measured is the pipeline, the store and the plugins). For each arm (serial, Ray with 1 and 2
workers) x (plugins off, crossref + overview + retry on): a full build into a new index, then the
same folder with 1 % new documents indexed again. Each run's time is split into the corpus-wide
steps that follow the write (the store's own after-write step, each plugin's ``ragplugins_after_index``) and the
rest (listing, reading, hashing, splitting, transforming, embedding, writing). One local Ray cluster
(``ray.init(num_cpus=2)``) serves every Ray arm; its start is reported, not counted; starting the
workers (actors) is counted in each Ray run. Arms run one after another on a shared machine: the load
average before each run is recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_scaling  # noqa: E402
from bench_scaling import HashingEmbedding  # noqa: E402
from synth import make_corpus  # noqa: E402

from ragplugins import load  # noqa: E402
from ragplugins.executors.ray import RayIndexRun  # noqa: E402
from ragplugins.indexing import Indexing  # noqa: E402
from ragplugins.plugins import PluginRegistry  # noqa: E402

PLUGINS = ["crossref", "overview", "retry"]
ARMS = [("serial", None), ("ray", 1), ("ray", 2)]


class Timings:
    """Seconds spent in the corpus-wide steps after a write, by step, for the run in progress."""

    def __init__(self) -> None:
        self.steps: dict[str, float] = defaultdict(float)
        self.workers_start = 0.0

    def install(self) -> None:
        timings = self
        after_write, call = Indexing._after_write, PluginRegistry.call

        def timed_after_write(app, index, nodes, deleted):
            store = app.context(index).store
            refresh = store.after_write

            def timed_refresh():
                t = time.perf_counter()
                refresh()
                timings.steps["store after-write"] += time.perf_counter() - t

            store.after_write = timed_refresh
            try:
                return after_write(app, index, nodes, deleted)
            finally:
                del store.after_write

        def timed_call(registry, record, hook, **kwargs):
            t = time.perf_counter()
            try:
                return call(registry, record, hook, **kwargs)
            finally:
                if hook == "ragplugins_after_index":
                    timings.steps[f"{record.name} after_index"] += time.perf_counter() - t

        start_workers = RayIndexRun._start

        def timed_start(run):
            start_workers(run)
            timings.workers_start += run.startup_s

        Indexing._after_write = timed_after_write  # type: ignore[method-assign]
        PluginRegistry.call = timed_call  # type: ignore[method-assign]
        RayIndexRun._start = timed_start  # type: ignore[method-assign]

    def take(self) -> tuple[dict[str, float], float]:
        out, self.steps = dict(self.steps), defaultdict(float)
        workers, self.workers_start = self.workers_start, 0.0
        return {k: round(v, 2) for k, v in out.items()}, round(workers, 2)


def new_documents(folder: Path, count: int, seed: int = 99) -> None:
    """``count`` new documents in ``folder`` (the synthetic kind, another seed, names that sort last)."""
    staging = Path(tempfile.mkdtemp(prefix="ingest-new-"))
    make_corpus(staging, count * 10, seed=seed)
    for path in sorted(staging.iterdir())[:count]:
        shutil.move(str(path), folder / f"zz_new_{path.name}")
    shutil.rmtree(staging, ignore_errors=True)


def run(corpus: Path, enable: list[str], executor: str, workers: int | None, timings: Timings,
        registry: PluginRegistry, embed: Any) -> dict[str, Any]:
    persist = Path(tempfile.mkdtemp(prefix="ingest-idx-"))
    row: dict[str, Any] = {"executor": executor if workers is None else f"ray x{workers}",
                           "plugins": "on" if enable else "off"}
    try:
        for phase in ("full", "plus1pct"):
            if phase == "plus1pct":
                new_documents(corpus, max(1, round(len(list(corpus.iterdir())) / 100)))
            rp = load({"enable": enable, "persist_dir": str(persist), "chunk_size": 128, "chunk_overlap": 16},
                      embed_model=embed, registry=registry)
            row[f"{phase}_load1"] = round(os.getloadavg()[0], 1)
            timings.take()
            start = time.perf_counter()
            _, report = rp.index_paths([corpus], executor=executor, workers=workers)
            seconds = time.perf_counter() - start
            steps, workers_start = timings.take()
            row[f"{phase}_s"] = round(seconds, 2)
            row[f"{phase}_workers_start_s"] = workers_start
            row[f"{phase}_chunks"] = report.chunks_written
            row[f"{phase}_docs"] = len(report.added) + len(report.updated)
            row[f"{phase}_corpus_wide"] = steps
            row[f"{phase}_rest_s"] = round(seconds - sum(steps.values()) - workers_start, 2)
        row["total_chunks"] = row["full_chunks"] + row["plus1pct_chunks"]
        row["incremental_share"] = round(row["plus1pct_s"] / row["full_s"], 3)
    finally:
        shutil.rmtree(persist, ignore_errors=True)
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--docs", type=int, default=4000, help="Documents in the corpus (about 6.4 chunks each).")
    p.add_argument("--arms", default="serial,ray1,ray2")
    p.add_argument("--plugins", default="off,on")
    p.add_argument("--embedder", choices=["hashing", "default"], default="hashing",
                   help="hashing: no model time (what is measured is the pipeline); default: the bundled MiniLM, "
                        "the cost a real build has (serial arms only: it is not sent to Ray workers by value).")
    p.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "ingest"))
    args = p.parse_args()
    import ray
    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(bench_scaling)  # the workers get the embedder's class by value
    arms = [a for a in ARMS if (a[0] if a[1] is None else f"ray{a[1]}") in args.arms.split(",")]
    base = make_corpus(Path(tempfile.mkdtemp(prefix="ingest-corpus-")), args.docs * 10)
    if args.embedder == "default":
        from ragplugins.embeddings import load_embed_model

        embed = load_embed_model("default")
    else:
        embed = HashingEmbedding(model_name="hashing-384")
    registry = PluginRegistry.discover()
    timings = Timings()
    timings.install()
    started = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR")
    ray_start = time.perf_counter() - started
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for plugins in args.plugins.split(","):
        for executor, workers in arms:
            corpus = Path(tempfile.mkdtemp(prefix="ingest-arm-")) / "corpus"
            shutil.copytree(base, corpus)
            row = run(corpus, PLUGINS if plugins == "on" else [], executor, workers, timings, registry, embed)
            row["ray_init_s"] = round(ray_start, 1)
            shutil.rmtree(corpus.parent, ignore_errors=True)
            rows.append(row)
            print(json.dumps(row), flush=True)
            (out / "ingest.json").write_text(json.dumps(rows, indent=1))
    print(f"\nray.init(num_cpus=2): {ray_start:.1f} s (not counted)\n")
    print("| plugins | executor | full build s (chunks/s) | of which workers' start, s | +1 % docs s (chunks) "
          "| +1 % / full | the +1 % run: workers' start, corpus-wide steps, rest (s) |\n|---|---|---|---|---|---|---|")
    for r in rows:
        steps = ", ".join(f"{k} {v:.1f}" for k, v in sorted(r["plus1pct_corpus_wide"].items(), key=lambda kv: -kv[1])
                          if v >= 0.05)
        print(f"| {r['plugins']} | {r['executor']} | {r['full_s']:.1f} ({r['full_chunks'] / r['full_s']:.0f}) "
              f"| {r['full_workers_start_s']:.1f} | {r['plus1pct_s']:.1f} ({r['plus1pct_chunks']}) "
              f"| {100 * r['incremental_share']:.1f} % | workers {r['plus1pct_workers_start_s']:.1f}; {steps}; "
              f"rest {r['plus1pct_rest_s']:.1f} |")
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
