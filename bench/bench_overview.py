"""Benchmark of the overview plugin (issue 5).

Quality: arms off / boost / adaptive / restrict on the bench corpora at k = 20, first-stage and
final metrics per slice, queries whose recall@20 is lost against off, latency.
Cost: overview scoring per query at 1k, 10k and 100k documents (synthetic unit vectors).

    python bench/bench_overview.py                       # everything
    python bench/bench_overview.py --corpora acq+docs    # one corpus
    python bench/bench_overview.py --skip-quality        # scoring cost only
    python bench/bench_overview.py --skip-quality --skip-scaling --pointer   # out-of-sample questions

The bench data is read from $RAGPLUGINS_BENCH or /work/shared/bench (never copied here).
Results go to bench/results/overview/.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "results" / "overview"
K = 20
SLICES = ("all", "requires_crossref", "control", "multi_document")
ARMS = {
    "off": {"enable": []},
    "boost": {"enable": ["overview"], "overview": {"mode": "boost"}},
    "adaptive": {"enable": ["overview"], "overview": {"mode": "adaptive"}},
    "restrict": {"enable": ["overview"], "overview": {"mode": "restrict"}},
    # Opt-in: also act when the overviews' best document holds the first stage's runner-up.
    "adaptive_runner_up": {"enable": ["overview"], "overview": {"mode": "adaptive", "runner_up_depth": 2}},
}
POINTER_GOLD = HERE / "goldsets" / "acq_pointer_only.jsonl"


def _fmt(value, digits=3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _lost(run, arm: str, stage: str) -> list[str]:
    """Queries whose recall@20 is lower than with the plugin off."""
    off = {r["id"]: r[stage]["recall@20"] for r in run._rows("off", K)}
    return sorted(r["id"] for r in run._rows(arm, K) if r[stage]["recall@20"] < off[r["id"]] - 1e-9)


def quality(corpus: str, cache_dir: str | None) -> dict:
    from ragplugins.eval import Arm, bench_corpus, run_eval

    paths, gold = bench_corpus(corpus)
    arms = [Arm(name, cfg) for name, cfg in ARMS.items()]
    run = run_eval(paths, gold, arms, ks=[K], cache_dir=cache_dir, progress=False)
    run.write(OUT / corpus.replace("+", "_plus_"))
    result = {"corpus": corpus, "n": len(gold), "slices": {}, "lost": {}, "ndcg_changes": {}, "instrument": {},
              "invariant": run.invariant, "coverage_failures": run.coverage_failures}
    for sl in SLICES:
        rows = {arm: run.summary(arm, K, sl) for arm in ARMS}
        if rows["off"].get("n"):
            result["slices"][sl] = rows
    for arm in ARMS:
        if arm == "off":
            continue
        result["lost"][arm] = {"first": _lost(run, arm, "first"), "final": _lost(run, arm, "final")}
        result["ndcg_changes"][arm] = run.compare("off", arm, K, metric="first.ndcg@10")
        s = run.summary(arm, K)
        result["instrument"][arm] = {k: v for k, v in s.items() if k.startswith("overview.")}
    return result


def pointer_check(cache_dir: str | None) -> list[dict]:
    """Every arm on the crossref plugin's pointer-only questions (bench/goldsets), which were never used
    to design the overview plugin: an out-of-sample check of its decision rules, on acq and acq+docs."""
    from ragplugins.eval import Arm, bench_corpus, load_gold, run_eval

    rows = load_gold([POINTER_GOLD])
    out = []
    for corpus in ("acq", "acq+docs"):
        paths, _ = bench_corpus(corpus)
        run = run_eval(paths, rows, [Arm(name, cfg) for name, cfg in ARMS.items()], ks=[K], cache_dir=cache_dir,
                       progress=False)
        for arm in ARMS:
            s = run.summary(arm, K)
            changes = run.compare("off", arm, K, metric="first.ndcg@10") if arm != "off" else None
            out.append({"corpus": corpus, "arm": arm, "n": s["n"], "ndcg@10": s["first.ndcg@10"],
                        "recall@20": s["first.recall@20"], "lost": _lost(run, arm, "first") if arm != "off" else [],
                        "improved": changes["improved"] if changes else [],
                        "regressed": changes["regressed"] if changes else []})
    return out


def pointer_table(rows: list[dict]) -> str:
    lines = ["| corpus | arm | n | first nDCG@10 | recall@20 | recall@20 lost | nDCG@10 vs off: improved / regressed |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        moved = "-" if r["arm"] == "off" else f"{len(r['improved'])} / {len(r['regressed'])} " \
            f"({', '.join(r['regressed']) or 'none'} regressed)"
        lines.append(f"| {r['corpus']} | {r['arm']} | {r['n']} | {r['ndcg@10']:.4f} | {r['recall@20']:.3f} | "
                     f"{len(r['lost'])} | {moved} |")
    return "\n".join(lines)


def quality_tables(res: dict) -> str:
    lines = [f"### `{res['corpus']}` ({res['n']} queries, k = {K})", ""]
    head = ("| slice | arm | n | first R@5 / R@10 / R@20 | first nDCG@10 | final R@20 | final nDCG@10 | "
            "final len | p50 / p90 ms |")
    lines += [head, "|" + "---|" * 9]
    for sl, rows in res["slices"].items():
        for arm, s in rows.items():
            lines.append(
                f"| {sl} | {arm} | {s['n']} | {_fmt(s['first.recall@5'])} / {_fmt(s['first.recall@10'])} / "
                f"{_fmt(s['first.recall@20'])} | {_fmt(s['first.ndcg@10'], 4)} | {_fmt(s['final.recall@20'])} | "
                f"{_fmt(s['final.ndcg@10'], 4)} | {_fmt(s['final_len'], 1)} | "
                f"{_fmt(s['latency_ms_p50'], 0)} / {_fmt(s['latency_ms_p90'], 0)} |")
    lines += ["", "| arm | recall@20 lost vs off (first / final) | nDCG@10 vs off: improved / regressed | "
                  "boost applied | chunks added (mean) | answer doc selected | first relevant moved up (mean ranks) | "
                  "scoring ms |",
              "|---|---|---|---|---|---|---|---|"]
    for arm, lost in res["lost"].items():
        ch = res["ndcg_changes"][arm]
        ins = res["instrument"][arm]
        lost_txt = f"{len(lost['first'])} / {len(lost['final'])}"
        if lost["first"] or lost["final"]:
            lost_txt += f" ({', '.join(sorted(set(lost['first']) | set(lost['final'])))})"
        lines.append(
            f"| {arm} | {lost_txt} | {len(ch['improved'])} / {len(ch['regressed'])} | "
            f"{_fmt(ins.get('overview.applied'), 2)} | {_fmt(ins.get('overview.chunks_added'), 2)} | "
            f"{_fmt(ins.get('overview.answer_document_selected'), 2)} "
            f"(n={ins.get('overview.answer_document_selected.n', 0)}) | "
            f"{_fmt(ins.get('overview.first_relevant_moved'), 2)} "
            f"(n={ins.get('overview.first_relevant_moved.n', 0)}) | "
            f"{_fmt(ins.get('overview.scoring_ms'), 2)} |")
    lines.append("")
    return "\n".join(lines)


def sensitivity(corpus: str, cache_dir: str | None) -> dict:
    """The decision rule's constants varied around the defaults, on one index and the plugin-off candidates.

    The plugin's own OverviewRetriever re-steers the same k = 20 candidates under each setting,
    so only the decision and the fusion vary (one index instead of one per setting).
    """
    from llama_index.core.base.base_retriever import BaseRetriever

    import ragplugins
    from ragplugins import query_inputs
    from ragplugins.eval import bench_corpus
    from ragplugins.eval.metrics import list_metrics
    from ragplugins_overview import OverviewConfig, OverviewRetriever

    class Fixed(BaseRetriever):
        def __init__(self, results):
            super().__init__()
            self.results = results

        def _retrieve(self, query_bundle):
            return list(self.results)

    paths, gold = bench_corpus(corpus)
    root = Path(cache_dir) if cache_dir else Path.home() / ".cache" / "ragplugins" / "eval"
    rp = ragplugins.load({"enable": ["overview"], "persist_dir": str(root / f"overview-sensitivity-{corpus}")})
    index, _ = rp.index_paths(paths)
    ctx = rp.context(index)
    base = rp.base_retriever(index, top_k=K)
    cases = [(row, base.retrieve(row.query)) for row in gold]

    def score(results, row):
        return list_metrics([n.node.get_content() for n in results], row.expected, row.match)["ndcg@10"]

    off = [score(c, row) for row, c in cases]
    settings = [("boost", {"mode": "boost", "top_documents": n}) for n in (1, 3, 5)]
    settings += [("adaptive", {"outlier_z": z, "min_gap": g}) for z in (2.5, 3.0, 3.5, 4.0) for g in (0.5, 1.0, 1.5)]
    settings += [("adaptive", {"runner_up_depth": d}) for d in (2, 3, 4, 5)]
    out = {"corpus": corpus, "n": len(gold), "off": statistics.fmean(off), "rows": []}
    for name, cfg in settings:
        wrapper = OverviewRetriever(Fixed([]), ctx, OverviewConfig(**cfg))
        values = []
        for row, cands in cases:
            wrapper.inner = Fixed(cands)
            with query_inputs.scope(filters=None):   # run outside rp: the unfiltered index's inputs
                values.append(score(wrapper.retrieve(row.query), row))
        control = [v - o for v, o, (row, _) in zip(values, off, cases) if "control" in row.slices()]
        out["rows"].append({"mode": name, **cfg, "delta": statistics.fmean(values) - out["off"],
                            "improved": sum(v > o + 1e-9 for v, o in zip(values, off)),
                            "regressed": sum(v < o - 1e-9 for v, o in zip(values, off)),
                            "control_delta": statistics.fmean(control) if control else None})
    return out


def sensitivity_table(results: list[dict]) -> str:
    corpora = [r["corpus"] for r in results]
    lines = ["| setting | " + " | ".join(f"`{c}` delta nDCG@10 (+improved / -regressed)" for c in corpora) + " |",
             "|---|" + "---|" * len(corpora)]
    for i, row in enumerate(results[0]["rows"]):
        label = ", ".join([row["mode"]] + [f"{k}={v}" for k, v in row.items()
                                           if k not in ("mode", "delta", "improved", "regressed", "control_delta")])
        cells = []
        for res in results:
            r = res["rows"][i]
            cell = f"{r['delta']:+.4f} (+{r['improved']} / -{r['regressed']})"
            if r["control_delta"] is not None:
                cell += f"; control {r['control_delta']:+.4f}"
            cells.append(cell)
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def overhead(corpus: str, cache_dir: str | None, rounds: int = 3) -> dict:
    """Search time per arm on one index with the query embedding cached (so the embedder's time, which
    dominates and varies with machine load, is left out): what the plugin adds to a search."""
    import ragplugins
    from ragplugins.embeddings import load_embed_model
    from ragplugins.eval import bench_corpus

    paths, gold = bench_corpus(corpus)
    root = Path(cache_dir) if cache_dir else Path.home() / ".cache" / "ragplugins" / "eval"
    persist = str(root / f"overview-sensitivity-{corpus}")
    embed_model = load_embed_model()
    rps = {arm: ragplugins.load({**cfg, "persist_dir": persist}, embed_model=embed_model)
           for arm, cfg in ARMS.items()}
    rps["adaptive"].index_paths(paths)
    for rp in rps.values():
        for row in gold:
            rp.search(row.query, top_k=K)  # warms the embedding cache and the index
    times: dict[str, list[float]] = {arm: [] for arm in rps}
    for _ in range(rounds):
        for row in gold:
            for arm, rp in rps.items():  # interleaved, so every arm sees the same machine load
                start = time.perf_counter()
                rp.search(row.query, top_k=K)
                times[arm].append((time.perf_counter() - start) * 1000)
    return {"corpus": corpus, "load_average": os.getloadavg(),
            **{arm: {"p50": statistics.median(v), "p90": float(np.percentile(v, 90))} for arm, v in times.items()}}


def overhead_table(results: list[dict]) -> str:
    lines = ["| corpus | " + " | ".join(f"{arm} p50 / p90 ms" for arm in ARMS) + " |", "|---|" + "---|" * len(ARMS)]
    for r in results:
        cells = [f"{r[a]['p50']:.1f} / {r[a]['p90']:.1f}" for a in ARMS]
        lines.append(f"| `{r['corpus']}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def scaling(sizes=(1_000, 10_000, 100_000), queries: int = 200, dim: int = 384) -> list[dict]:
    """Per-query scoring cost on synthetic overviews: topical clusters of unit vectors, queries near a document."""
    from ragplugins_overview.scoring import OverviewScorer

    rng = np.random.default_rng(7)
    out = []
    for n in sizes:
        # Topics (cluster centres) plus per-document spread, roughly the cosine structure of real overviews:
        # a document is ~0.7 cosine from its topic, topics are nearly orthogonal.
        centres = rng.standard_normal((max(n // 50, 20), dim)).astype(np.float32)
        centres /= np.linalg.norm(centres, axis=1, keepdims=True)
        noise = rng.standard_normal((n, dim)).astype(np.float32)
        noise /= np.linalg.norm(noise, axis=1, keepdims=True)
        vectors = centres[rng.integers(0, len(centres), n)] + 0.9 * noise
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        picks = rng.integers(0, n, queries)
        qnoise = rng.standard_normal((queries, dim)).astype(np.float32)
        qnoise /= np.linalg.norm(qnoise, axis=1, keepdims=True)
        qs = vectors[picks] + 1.0 * qnoise
        start = time.perf_counter()
        scorer = OverviewScorer(vectors)
        build_ms = (time.perf_counter() - start) * 1000
        exact = OverviewScorer(vectors, exact_limit=n)
        row = {"n": n, "path": "exact" if scorer.exact else "hash preselect + exact rescoring",
               "build_ms": build_ms}
        for name, s in (("default", scorer), ("exact", exact)):
            for q in qs[:5]:
                s.rank(q, 5)
            times = []
            for q in qs:
                t = time.perf_counter()
                s.rank(q, 5)
                times.append((time.perf_counter() - t) * 1000)
            row[f"{name}_ms_p50"] = statistics.median(times)
            row[f"{name}_ms_p90"] = float(np.percentile(times, 90))
        agree = [len(set(scorer.rank(q, 5).positions) & set(exact.rank(q, 5).positions)) / 5 for q in qs]
        row["top5_agreement"] = float(np.mean(agree))
        pairs = [(scorer.rank(q, 1), exact.rank(q, 1)) for q in qs]
        row["best_z_exact_mean"] = float(np.mean([b.z(b.scores[0]) for _, b in pairs]))
        row["best_z_rel_diff_mean"] = float(np.mean([abs(a.z(a.scores[0]) - b.z(b.scores[0])) / b.z(b.scores[0])
                                                     for a, b in pairs]))
        out.append(row)
        print(json.dumps(row), flush=True)
    return out


def scaling_table(rows: list[dict]) -> str:
    lines = ["| documents | path | p50 / p90 ms per query | exact scan p50 / p90 ms | top-5 agreement with exact | "
             "best z: exact mean, relative error | one-off build ms |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['n']:,} | {r['path']} | {r['default_ms_p50']:.2f} / {r['default_ms_p90']:.2f} | "
                     f"{r['exact_ms_p50']:.2f} / {r['exact_ms_p90']:.2f} | {r['top5_agreement']:.3f} | "
                     f"{r['best_z_exact_mean']:.1f}, {100 * r['best_z_rel_diff_mean']:.1f}% | {r['build_ms']:.0f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpora", nargs="*", default=["mixed", "docs", "acq+docs"])
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument("--skip-scaling", action="store_true")
    parser.add_argument("--overhead", action="store_true",
                        help="Also time searches per arm with the query embedding cached.")
    parser.add_argument("--sensitivity", action="store_true",
                        help="Also vary the decision rule's constants (on the plugin-off candidates).")
    parser.add_argument("--pointer", action="store_true",
                        help="Also run every arm on the pointer-only questions (out of sample for this plugin).")
    parser.add_argument("--cache-dir", default=None, help="Index cache (default: the eval's).")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    report = {"load_average_at_start": os.getloadavg()}
    md = []
    if not args.skip_quality:
        report["quality"] = []
        for corpus in args.corpora:
            res = quality(corpus, args.cache_dir)
            report["quality"].append(res)
            table = quality_tables(res)
            md.append(table)
            print(table, flush=True)
    if args.sensitivity:
        results = [sensitivity(corpus, args.cache_dir) for corpus in args.corpora]
        report["sensitivity"] = results
        table = sensitivity_table(results)
        md.append("### Sensitivity of the decision rule (k = 20, first-stage nDCG@10 against off)\n\n" + table + "\n")
        print(table, flush=True)
    if args.overhead:
        results = [overhead(corpus, args.cache_dir) for corpus in args.corpora]
        report["overhead"] = results
        md.append("### Search time per arm, query embedding cached (k = 20)\n\n" + overhead_table(results) + "\n")
        print(overhead_table(results), flush=True)
    if args.pointer:
        rows = pointer_check(args.cache_dir)
        report["pointer"] = rows
        md.append("### Out of sample: the pointer-only questions (k = 20)\n\n" + pointer_table(rows) + "\n")
        print(pointer_table(rows), flush=True)
    if not args.skip_scaling:
        rows = scaling()
        report["scaling"] = rows
        report["load_average_after_scaling"] = os.getloadavg()
        md.append("### Overview scoring cost\n\n" + scaling_table(rows) + "\n")
        print(scaling_table(rows))
    parts = ([] if args.skip_quality else ["quality"]) + (["sensitivity"] if args.sensitivity else []) \
        + (["overhead"] if args.overhead else []) + (["pointer"] if args.pointer else [])
    if parts:
        parts += [c.replace("+", "_plus_") for c in args.corpora]
    suffix = "_".join(parts + ([] if args.skip_scaling else ["scaling"]))
    (OUT / f"summary_{suffix}.json").write_text(json.dumps(report, indent=1, default=str))
    (OUT / f"summary_{suffix}.md").write_text("\n".join(md))


if __name__ == "__main__":
    main()
