"""Index throughput, query latency and bytes stored at up to a million chunks, on local disk or a local S3 server.

    python bench/bench_scale_s3.py --sizes 10000,100000 --store s3 --executor serial
    python bench/bench_scale_s3.py --sizes 1000000 --store s3 --executor ray --workers 2 --batch-docs 0 \
        --retrieval dense

The synthetic corpus (bench/synth.py: contracts that cite each other) is generated as a stream of
Documents and indexed in batches of ``--batch-docs`` documents (0: one call with all of them), with
the hashing embedder (bench/bench_scaling.py: MiniLM's 384 dimensions at a fraction of its cost).
For each size and each arm (plugins off, then crossref + overview + retry on), one child process
builds the index (so its peak RSS is its own) and reports the time and peak memory of each stage;
then 1 and then 4 query processes each load the app on that index, run the fixed query list, and
report their latencies. ``--store s3`` starts moto's S3 server on 127.0.0.1 and indexes into
``s3://<bucket>/<size>-<arm>``; bytes stored are the sum of the object sizes under that prefix (the
directory size on local disk); moto keeps the bucket in this process's memory, about 3.1 KB per chunk
plus superseded versions. With ``--executor ray`` give ``--batch-docs 0`` (one run: the corpus-wide
steps once); the build's peak RSS is the driver's only. Results:
bench/results/scale/<store>-<executor><workers>.json and a Markdown table on stdout. A missing API
(``executor=`` on build_index, an ``s3://`` persist_dir) is reported in one line, exit status 2.
"""

from __future__ import annotations

import argparse
import inspect
import itertools
import json
import logging
import multiprocessing as mp
import os
import resource
import shutil
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synth import WORDS, iter_documents, title  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "scale"
# Chunks per synthetic document with chunk_size 128 and the sentence splitter (measured: 124 chunks from
# 20 documents); synth.py's sizes assume 10, so a size in chunks asks it for size * 10 / 6.2.
CHUNKS_PER_DOCUMENT = 6.2
BUCKET = "ragplugins-scale"
# Fixed before the first run: words of the corpus, a label, and a document named by its title.
QUERIES = [f"{WORDS[i % len(WORDS)]} {WORDS[(3 * i + 1) % len(WORDS)]} exhibit {chr(65 + i % 6)}" for i in range(10)] \
    + [f"{WORDS[(5 * i) % len(WORDS)]} in the {title(7 * i + 3)}" for i in range(10)]


class Unsupported(SystemExit):
    def __init__(self, message: str):
        print(f"bench_scale_s3: {message}", file=sys.stderr)
        super().__init__(2)


# -- the store ----------------------------------------------------------------
class CountingMotoServer:
    """moto's S3 server on 127.0.0.1 that counts the requests it serves and the bytes it sends.

    Why: moto answers a range read by copying the whole object (0.6 ms per MB of the object here, see
    ``calibrate``), so its latencies grow with file size where S3's do not; requests and bytes per query
    are what carries over to a real object store."""

    def __init__(self, port: int):
        from moto.server import ThreadedMotoServer

        self.requests: dict[str, int] = defaultdict(int)
        self.bytes_sent = 0
        self._lock = threading.Lock()
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
        self._server._server_entry = self._serve  # type: ignore[method-assign]

    def _serve(self) -> None:
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
        from werkzeug.serving import make_server

        app = DomainDispatcherApplication(create_backend_app)

        def counted(environ: dict, start_response: Callable) -> Iterator[bytes]:
            sent = 0
            for part in app(environ, start_response):
                sent += len(part)
                yield part
            with self._lock:
                self.requests[environ["REQUEST_METHOD"]] += 1
                self.bytes_sent += sent

        inner = self._server
        inner._server = make_server("127.0.0.1", inner._port, counted, True)
        inner._server_ready_event.set()
        inner._server.serve_forever()

    def start(self) -> None:
        self._server.start()

    def stop(self) -> None:
        self._server.stop()

    def snapshot(self) -> tuple[int, int]:
        """(GET requests, bytes sent) so far."""
        with self._lock:
            return self.requests["GET"], self.bytes_sent


def start_s3() -> CountingMotoServer:
    """moto's S3 server on a free port of 127.0.0.1, with the AWS_* variables that point clients at it."""
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = CountingMotoServer(port)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    os.environ.update({"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench", "AWS_REGION": "us-east-1",
                       "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": endpoint, "AWS_ENDPOINT": endpoint,
                       "AWS_ALLOW_HTTP": "true"})
    _s3().create_bucket(Bucket=BUCKET)
    return server


def calibrate() -> dict[str, float]:
    """Milliseconds moto takes for a 4 KB range read of objects of 1 to 256 MB (median of 5)."""
    client, out = _s3(), {}
    for mb in (1, 16, 64, 256):
        client.put_object(Bucket=BUCKET, Key=f"calibrate/{mb}", Body=os.urandom(mb << 20))
        times = []
        for _ in range(5):
            t = time.perf_counter()
            client.get_object(Bucket=BUCKET, Key=f"calibrate/{mb}", Range="bytes=0-4095")["Body"].read()
            times.append((time.perf_counter() - t) * 1000)
        out[f"{mb} MB"] = statistics.median(times)
        client.delete_object(Bucket=BUCKET, Key=f"calibrate/{mb}")
    return out


def _s3() -> Any:
    import boto3  # type: ignore[import-untyped]

    return boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"])


def _part(key: str) -> str:
    """Which part of an index a stored file belongs to."""
    if "/_indices/" in key:
        return "lance indices"
    if "/data/" in key:
        return "lance rows (all versions)"
    if "/_versions/" in key or "/_transactions/" in key or "/_deletions/" in key:
        return "lance versions and deletions"
    if "sidecars/" in key:
        return "plugin state"
    return "other (manifest, journal)"


def stored_bytes(location: str) -> dict[str, int]:
    """Bytes stored under ``location`` by part of the index (see _part)."""
    if location.startswith("s3://"):
        prefix = location.removeprefix(f"s3://{BUCKET}/").rstrip("/") + "/"
        pages = _s3().get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
        files = [(obj["Key"], obj["Size"]) for page in pages for obj in page.get("Contents", [])]
    else:
        files = [(f.as_posix(), f.stat().st_size) for f in Path(location).rglob("*") if f.is_file()]
    parts: dict[str, int] = defaultdict(int)
    for key, size in files:
        parts[_part(key)] += size
    return dict(parts)


def largest_data_file(location: str) -> int:
    """Bytes of the largest Lance data file under ``location`` (what moto copies per range read)."""
    if location.startswith("s3://"):
        prefix = location.removeprefix(f"s3://{BUCKET}/").rstrip("/") + "/"
        pages = _s3().get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
        sizes = [obj["Size"] for page in pages for obj in page.get("Contents", []) if "/data/" in obj["Key"]]
    else:
        sizes = [f.stat().st_size for f in Path(location).rglob("*.lance") if "/data/" in f.as_posix()]
    return max(sizes, default=0)


def remove(location: str) -> None:
    if location.startswith("s3://"):
        prefix = location.removeprefix(f"s3://{BUCKET}/").rstrip("/") + "/"
        client = _s3()
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix):
            keys = [{"Key": o["Key"]} for o in page.get("Contents", [])]
            if keys:
                client.delete_objects(Bucket=BUCKET, Delete={"Objects": keys})
    else:
        shutil.rmtree(location, ignore_errors=True)


def open_app(location: str, enable: list[str], retrieval: str = "hybrid") -> Any:
    from bench_scaling import HashingEmbedding

    from ragplugins import load

    rp = load({"enable": enable, "persist_dir": location, "chunk_size": 128, "chunk_overlap": 16,
               "retrieval": retrieval, "vector_index": os.environ.get("BENCH_VECTOR_INDEX", "flat")},
              embed_model=HashingEmbedding(model_name="hashing-384"))
    if location.startswith("s3://") and isinstance(rp.persist_dir, Path):
        raise Unsupported("this checkout has no object-storage persist_dir (persist_dir = \"s3://bucket/prefix\", "
                          "issue 16, h-s3); run with --store local, or on a branch that has it")
    return rp


# -- stage timings --------------------------------------------------------------
class Stages:
    """Wall time, calls and the highest RSS seen while each named stage ran (sampled every 50 ms)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self.peak_mb: dict[str, float] = defaultdict(float)
        self.active: dict[str, int] = defaultdict(int)
        self.rss_mb = 0.0
        threading.Thread(target=self._sample, daemon=True).start()

    def _sample(self) -> None:
        page = os.sysconf("SC_PAGE_SIZE") / 1e6
        while True:
            with open("/proc/self/statm") as f:
                self.rss_mb = int(f.read().split()[1]) * page
            for name, n in list(self.active.items()):
                if n:
                    self.peak_mb[name] = max(self.peak_mb[name], self.rss_mb)
            time.sleep(0.05)

    def timed(self, name: str, fn: Callable) -> Callable:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            self.active[name] += 1
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[name] += time.perf_counter() - start
                self.calls[name] += 1
                self.active[name] -= 1
        return wrapper

    def patch(self, owner: Any, attr: str, name: str | None = None) -> None:
        setattr(owner, attr, self.timed(name or f"{getattr(owner, '__name__', owner)}.{attr}", getattr(owner, attr)))

    def report(self) -> dict[str, dict[str, float]]:
        return {n: {"s": round(self.seconds[n], 3), "calls": self.calls[n], "peak_rss_mb": round(self.peak_mb[n])}
                for n in sorted(self.seconds, key=lambda n: -self.seconds[n])}


def instrument(stages: Stages) -> None:
    """Time the indexing stages: each transformation, the store's reads and writes, each after-index hook."""
    from llama_index.core.ingestion import pipeline

    from ragplugins import indexing
    from ragplugins.plugins import PluginRegistry
    from ragplugins.stores.lancedb import LanceDBAdapter

    def run_transformations(nodes, transformations, in_place=True, cache=None, cache_collection=None,
                            show_progress=False, **kwargs):
        for step in transformations:
            plugin = getattr(step, "plugin", None)
            name = f"transform:{plugin}" if plugin else f"transform:{type(step).__name__}"
            nodes = stages.timed(name, step)(nodes, show_progress=show_progress, **kwargs)
        return nodes

    pipeline.run_transformations = run_transformations
    for attr in ("write_batch", "after_write", "list_documents", "iter_nodes", "iter_chunk_rows", "get_nodes",
                 "update_metadata"):
        stages.patch(LanceDBAdapter, attr, f"store.{attr}")
    stages.patch(indexing.Indexing, "_upsert", "build_index (all)")
    call = PluginRegistry.call

    def timed_call(self, record, hook, **kwargs):
        return stages.timed(f"{hook}:{record.name}", call)(self, record, hook, **kwargs)

    PluginRegistry.call = timed_call  # type: ignore[method-assign]


def batches(chunks: int, batch_docs: int, stages: Stages) -> Iterator[list]:
    docs = iter_documents(int(chunks * 10 / CHUNKS_PER_DOCUMENT))
    gen = stages.timed("synth: generate documents", lambda: list(itertools.islice(docs, batch_docs or None)))
    while batch := gen():
        yield batch


# -- child processes ----------------------------------------------------------------
def build_child(location: str, enable: list[str], chunks: int, executor: str, workers: int, batch_docs: int,
                out: Any) -> None:
    try:
        stages = Stages()
        instrument(stages)
        rp = open_app(location, enable)
        kwargs: dict[str, Any] = {}
        if executor != "serial":
            if "executor" not in inspect.signature(rp.build_index).parameters:
                raise Unsupported(f"this checkout's build_index has no executor= (issue 16, h-ray); "
                                  f"--executor {executor} needs a branch that has it")
            kwargs = {"executor": executor, "workers": workers}
        start = time.perf_counter()
        for batch in batches(chunks, batch_docs, stages):
            rp.build_index(batch, **kwargs)
        index_s = time.perf_counter() - start
        table = rp.context(rp.index()).store.vector_store.table
        written = table.count_rows() if table is not None else 0
        out.put({"index_s": index_s, "chunks": written, "lance_versions": table.version if table is not None else 0,
                 "documents": len(rp.context(rp.index()).list_documents()),
                 "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                 "stages": stages.report()})
    except SystemExit as exc:
        out.put({"exit": exc.code})
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which stops
        out.put({"error": f"{type(exc).__name__}: {exc}"})


def query_child(location: str, enable: list[str], retrieval: str, rounds: int, queries: int, start_gate: Any,
                out: Any) -> None:
    try:
        t = time.perf_counter()
        rp = open_app(location, enable, retrieval)
        rp.index()
        open_s = time.perf_counter() - t
        t = time.perf_counter()
        rp.search(QUERIES[0])  # builds the sparse leg and the plugins' caches
        first_s = time.perf_counter() - t
        for q in QUERIES[1:queries]:
            rp.search(q)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        start_gate.wait()
        lat = []
        for _ in range(rounds):
            for q in QUERIES[:queries]:
                t = time.perf_counter()
                rp.search(q)
                lat.append((time.perf_counter() - t) * 1000)
        out.put({"open_s": open_s, "first_query_s": first_s, "latencies_ms": lat, "peak_rss_mb": rss})
    except BaseException as exc:  # noqa: BLE001
        out.put({"error": f"{type(exc).__name__}: {exc}"})


def _pct(values: list[float], q: float) -> float:
    return sorted(values)[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def run_queries(ctx: Any, location: str, enable: list[str], retrieval: str, procs: int,
                rounds: int, queries: int, server: CountingMotoServer | None) -> dict[str, Any]:
    # The parent passes the gate with the children, so the server's counts between the gate and the last
    # result cover the timed queries only (not opening the index or building the BM25 leg).
    out, gate = ctx.Queue(), ctx.Barrier(procs + 1)
    children = [ctx.Process(target=query_child, args=(location, enable, retrieval, rounds, queries, gate, out))
                for _ in range(procs)]
    for c in children:
        c.start()
    gate.wait()
    before = server.snapshot() if server else (0, 0)
    results = [out.get() for _ in children]
    after = server.snapshot() if server else (0, 0)
    for c in children:
        c.join()
    errors = [r["error"] for r in results if "error" in r]
    if errors:
        raise RuntimeError(f"a query process failed: {errors[0]}")
    lat = [x for r in results for x in r["latencies_ms"]]
    counts = {"s3_gets_per_query": (after[0] - before[0]) / len(lat),
              "s3_mb_per_query": (after[1] - before[1]) / len(lat) / 2**20} if server else {}
    return {"p50_ms": statistics.median(lat), "p99_ms": _pct(lat, 0.99), "queries": len(lat),
            "open_s": max(r["open_s"] for r in results), "first_query_s": max(r["first_query_s"] for r in results),
            "peak_rss_mb_per_process": max(r["peak_rss_mb"] for r in results), **counts}


def memory_short(row: dict[str, Any], procs: int) -> str:
    """Why ``procs`` query processes would not fit in this machine's free memory, judged by the largest
    one measured so far on this index ('' when they fit or nothing was measured yet)."""
    measured = [v["peak_rss_mb_per_process"] for k, v in row.items()
                if k.startswith("query_") and isinstance(v, dict) and "peak_rss_mb_per_process" in v]
    if not measured:
        return ""
    with open("/proc/meminfo") as f:
        available = next(int(line.split()[1]) for line in f if line.startswith("MemAvailable")) / 1024
    need = procs * max(measured) * 1.1
    if need <= available:
        return ""
    return (f"memory: {procs} processes of about {max(measured):,.0f} MB need {need:,.0f} MB, "
            f"{available:,.0f} MB available")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="10000,100000", help="Corpus sizes in chunks (about 11 chunks a document).")
    p.add_argument("--store", choices=["local", "s3"], default="s3")
    p.add_argument("--executor", choices=["serial", "ray"], default="serial")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--plugins", default="crossref,overview,retry")
    p.add_argument("--arms", default="off,on", help="off: no plugins; on: --plugins.")
    p.add_argument("--batch-docs", type=int, default=10000, help="Documents per build_index call (0: all at once).")
    p.add_argument("--query-procs", default="1,4", help="Query processes at once, per measurement ('': no queries).")
    p.add_argument("--rounds", type=int, default=3, help="Timed passes over the queries per query process.")
    p.add_argument("--queries", type=int, default=len(QUERIES),
                   help=f"The first N of the {len(QUERIES)} fixed queries.")
    p.add_argument("--retrieval", choices=["hybrid", "dense"], default="hybrid",
                   help="The query processes' first stage; hybrid builds the BM25 leg in memory on the first query.")
    p.add_argument("--vector-index", choices=["flat", "ivf_flat", "ivf_pq"], default="flat",
                   help="The index's dense search (the vector_index setting); ivf_pq is built after the write.")
    p.add_argument("--out", default=None)
    args = p.parse_args()
    os.environ["BENCH_VECTOR_INDEX"] = args.vector_index  # the build and query processes read it
    server = start_s3() if args.store == "s3" else None
    moto_range_read_ms = calibrate() if server else None
    local_root = Path(tempfile.mkdtemp(prefix="scale-s3-")) if server is None else None
    tag = f"{args.store}-{args.executor}{args.workers if args.executor != 'serial' else ''}"
    out_path = Path(args.out) if args.out else RESULTS / f"{tag}.json"
    out_path.parent.mkdir(parents=True, exist_ok=True)
    ctx = mp.get_context("spawn")
    plugins = [x for x in args.plugins.split(",") if x]
    rows: list[dict[str, Any]] = []
    try:
        for size in [int(s) for s in args.sizes.split(",")]:
            for arm in args.arms.split(","):
                enable = plugins if arm == "on" else []
                location = f"s3://{BUCKET}/{size}-{arm}" if server else str(Path(str(local_root)) / f"{size}-{arm}")
                q = ctx.Queue()
                child = ctx.Process(target=build_child, args=(location, enable, size, args.executor, args.workers,
                                                              args.batch_docs, q))
                child.start()
                built = q.get()
                child.join()
                if "exit" in built:
                    raise SystemExit(built["exit"])
                if "error" in built:
                    raise RuntimeError(f"building {size} chunks, plugins {arm}: {built['error']}")
                row = {"size": size, "arm": arm, "store": args.store, "executor": args.executor,
                       "retrieval": args.retrieval, "workers": args.workers, "batch_docs": args.batch_docs,
                       "queries": args.queries, "rounds": args.rounds, "vector_index": args.vector_index,
                       "load1_before": os.getloadavg()[0],
                       **built, "chunks_per_s": built["chunks"] / built["index_s"],
                       "bytes_by_part": stored_bytes(location)}
                row["bytes"] = sum(row["bytes_by_part"].values())
                row["bytes_per_chunk"] = row["bytes"] / max(1, row["chunks"])
                row["lance_versions"] = built.get("lance_versions")
                row["largest_data_file_mb"] = largest_data_file(location) / 2**20
                row["moto_range_read_ms"] = moto_range_read_ms
                # Written before the queries: at a million chunks the build alone takes an hour.
                print(json.dumps({k: v for k, v in row.items() if k != "stages"}), flush=True)
                out_path.write_text(json.dumps([*rows, row], indent=1))
                for n in [int(x) for x in args.query_procs.split(",") if x]:
                    short = memory_short(row, n)
                    row[f"query_{n}p"] = {"not_run": short} if short else run_queries(
                        ctx, location, enable, args.retrieval, n, args.rounds, args.queries, server)
                    out_path.write_text(json.dumps([*rows, row], indent=1))
                row["load1_after"] = os.getloadavg()[0]
                remove(location)
                rows.append(row)
                print(json.dumps({k: v for k, v in row.items() if k != "stages"}), flush=True)
                out_path.write_text(json.dumps(rows, indent=1))
    finally:
        if server is not None:
            server.stop()
        if local_root is not None:
            shutil.rmtree(local_root, ignore_errors=True)
    procs = [int(x) for x in args.query_procs.split(",") if x]
    print(f"\n{tag}, batches of {args.batch_docs or 'all'} documents\n")
    print("| chunks | plugins | index s | chunks/s | peak RSS MB | bytes/chunk | "
          + " | ".join(f"p50 / p99 ms, {n} proc" for n in procs) + " | first query s | S3 GETs / MB per query "
          "| largest data file MB |")
    print("|---" * (6 + len(procs) + 3) + "|")
    for r in rows:
        qs = " | ".join(f"{r[f'query_{n}p']['p50_ms']:.0f} / {r[f'query_{n}p']['p99_ms']:.0f}" for n in procs)
        q1 = r.get(f"query_{procs[0]}p", {}) if procs else {}
        io = (f"{q1['s3_gets_per_query']:.0f} / {q1['s3_mb_per_query']:.1f}" if "s3_gets_per_query" in q1 else "-")
        first = f"{r[f'query_{procs[0]}p']['first_query_s']:.1f}" if procs else "-"
        print(f"| {r['chunks']:,} | {r['arm']} | {r['index_s']:.0f} | {r['chunks_per_s']:.0f} | {r['peak_rss_mb']:.0f} "
              f"| {r['bytes_per_chunk']:.0f} | {qs} | {first} | {io} | {r['largest_data_file_mb']:.0f} |")


if __name__ == "__main__":
    main()
