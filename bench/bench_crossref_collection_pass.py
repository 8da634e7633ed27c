"""Memory and time of crossref's whole-collection pass (every document resolved again), in two checkouts.

    python bench/bench_crossref_collection_pass.py --chunks 20000 --old /work/main

Builds one index of the synthetic contracts (bench/synth.py, as bench_scale_s3.py makes them: chunk_size
128, the hashing embedder; crossref only) the way a Ray build leaves it: each batch of --batch-docs
documents extracted without the index (references resolved within the batch, profiles marked partial),
no after-index step. Then, for each checkout (--old, then this one), a child process opens its own copy
of the index and makes one call: what follows a Ray build, the after-index step with an empty batch (no
state: every document read, resolved again and patched); the same with the store's metadata update a
no-op (crossref's own part); ``ragplugins check``'s stale_references. Each call reports its wall time
and its peak RSS above the RSS just before it (the kernel's high-water mark, reset through
/proc/self/clear_refs). Only the crossref package differs between the two children (its
checkout's plugins/crossref first on the path); the core is this one's. Results:
bench/results/crossref_collection_pass/<chunks>.json and a Markdown table on stdout.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
RESULTS = HERE / "results" / "crossref_collection_pass"
CHUNKS_PER_DOCUMENT = 6.2   # bench_scale_s3.py's measure for this corpus and chunk size


def _status_mb(field: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def _measured(call):
    gc.collect()
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")   # resets VmHWM, the peak RSS, to the current RSS
    before = _status_mb("VmRSS")
    start = time.perf_counter()
    value = call()
    return value, {"s": round(time.perf_counter() - start, 1), "rss_before_mb": round(before),
                   "peak_above_mb": round(_status_mb("VmHWM") - before)}


def _app(location: Path):
    from bench_scale_s3 import open_app

    return open_app(str(location), ["crossref"])


def build(location: Path, chunks: int, batch_docs: int) -> dict:
    """The index as a Ray build's workers leave it, before the driver's after-index step."""
    from synth import iter_documents

    import ragplugins_crossref.plugin as plugin
    import ragplugins_crossref.transform as transform

    transform.CrossrefExtractor._index_id = lambda self: None   # type: ignore[method-assign]
    transform.stored_profiles = lambda ctx, exclude=frozenset(): {}
    plugin.backfill = lambda *args, **kwargs: 0
    rp = _app(location)
    docs = iter_documents(int(chunks * 10 / CHUNKS_PER_DOCUMENT))
    start = time.perf_counter()
    while batch := list(itertools.islice(docs, batch_docs)):
        rp.build_index(batch)
    ctx = rp.context(rp.index())
    listed = ctx.list_documents()
    return {"build_s": round(time.perf_counter() - start), "documents": len(listed),
            "chunks": sum(len(i.node_ids) for i in listed.values())}


MEASURES = ("after_index", "without_writes", "check")


def measure(location: Path, what: str) -> dict:
    """One call in a fresh process: ``after_index`` (the step as it runs), ``without_writes`` (the same with
    the store's metadata update a no-op: crossref's own part) or ``check`` (stale_references)."""
    import ragplugins_crossref
    from ragplugins_crossref import backfill, plugin

    rp = _app(location)
    ctx = rp.context(rp.index())
    extractor = plugin.extractor(rp.config.for_plugin("crossref"), ctx)
    if what == "check":
        found, took = _measured(lambda: backfill.stale_references(ctx, extractor))
        return {"crossref": str(Path(ragplugins_crossref.__file__).parent), **took, "found": found}
    if what == "without_writes":
        type(ctx.store).update_metadata = lambda self, updates: len(updates)
    patched, took = _measured(lambda: backfill.backfill(ctx, extractor, [], []))
    return {"crossref": str(Path(ragplugins_crossref.__file__).parent), **took, "patched": patched}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--chunks", type=int, default=20000)
    p.add_argument("--batch-docs", type=int, default=500, help="Documents per worker batch of the emulated build.")
    p.add_argument("--old", type=Path, help="Another checkout whose plugins/crossref is measured first.")
    p.add_argument("--child", choices=["build", "measure"], help=argparse.SUPPRESS)
    p.add_argument("--dir", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--what", choices=MEASURES, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child == "build":
        print(json.dumps(build(args.dir, args.chunks, args.batch_docs)))
        return
    if args.child == "measure":
        print(json.dumps(measure(args.dir, args.what)))
        return

    def child(kind: str, location: Path, crossref: Path, what: str = "after_index") -> dict:
        path = [str(crossref), str(ROOT), os.environ.get("PYTHONPATH", "")]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
        out = subprocess.run([sys.executable, __file__, "--child", kind, "--dir", str(location), "--chunks",
                              str(args.chunks), "--batch-docs", str(args.batch_docs), "--what", what],
                             env=env, check=True, capture_output=True, text=True).stdout
        return json.loads(out.strip().splitlines()[-1])

    work = Path(tempfile.mkdtemp(prefix="crossref-pass-"))
    try:
        built = child("build", work / "built", ROOT / "plugins" / "crossref")
        print(json.dumps(built), flush=True)
        rows = []
        for name, checkout in ([("old", args.old)] if args.old else []) + [("this", ROOT)]:
            row: dict = {"checkout": name}
            for what in MEASURES:
                copy = work / f"{name}-{what}"
                shutil.copytree(work / "built", copy)
                row[what] = child("measure", copy, checkout / "plugins" / "crossref", what)
                shutil.rmtree(copy)
            print(json.dumps(row), flush=True)
            rows.append(row)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{args.chunks}.json").write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()},
                                                             "index": built, "rows": rows}, indent=2))
    print(f"\n{built['chunks']:,} chunks, {built['documents']:,} documents\n")
    print("| checkout | after-index s | peak above MB | patched | without writes s | peak above MB "
          "| check s | peak above MB |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        a, w, c = r["after_index"], r["without_writes"], r["check"]
        print(f"| {r['checkout']} | {a['s']} | {a['peak_above_mb']:,} | {a['patched']:,} | {w['s']} | "
              f"{w['peak_above_mb']:,} | {c['s']} | {c['peak_above_mb']:,} |")

if __name__ == "__main__":
    main()
