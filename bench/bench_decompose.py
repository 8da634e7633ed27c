"""Benchmark of the decompose plugin (issue 8): sub-query scoring at the rerank stage.

Arms, all at k = 20 (the first stage is the core hybrid in every arm; only the final order differs):
  off                              no rerank stage
  rerank only, <scorer> (rrf)      the stage scores against the question alone (no decomposition), fused with
                                   the first-stage order by reciprocal rank
  rerank only, embedding (scores)  the same, ordered by the scorer alone (a plain reranker)
  mean / max / coverage            the rules decomposer splits the question; candidates are scored against the
                                   question and each sub-query and aggregated (plugin defaults otherwise: hybrid
                                   scorer, rrf fusion, unsplit questions left alone)
  coverage, embedding              coverage with the embedding scorer

Rows are reported for all questions, for those the rules decomposer splits and for those it does not, and for
the `multi_document` slice of the acquisition set. The split is decided per gold row by the plugin's own
RuleDecomposer (the rules were written before looking at which rows they split; see the write-up).

    python bench/bench_decompose.py                    # docs, mixed, acq+docs
    python bench/bench_decompose.py --corpora docs

The bench data is read from $RAGPLUGINS_BENCH or /work/shared/bench (never copied here). Results go to
bench/results/decompose/<corpus>/ (results.json, results.md, chart.png) and summary.json / summary.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "results" / "decompose"
K = 20
CORPORA = ("docs", "mixed", "acq+docs")
METRICS = ("ndcg@10", "recall@5", "recall@10", "recall@20")

ARMS = {
    "off": {"enable": []},
    "rerank only, embedding (rrf)": {"enable": ["decompose"], "decompose": {
        "decomposer": "none", "scorer": "embedding", "rerank_unsplit": True}},
    "rerank only, embedding (scores)": {"enable": ["decompose"], "decompose": {
        "decomposer": "none", "scorer": "embedding", "rerank_unsplit": True, "fusion": "scores"}},
    "rerank only, hybrid (rrf)": {"enable": ["decompose"], "decompose": {
        "decomposer": "none", "scorer": "hybrid", "rerank_unsplit": True}},
    "mean": {"enable": ["decompose"], "decompose": {"aggregate": "mean"}},
    "max": {"enable": ["decompose"], "decompose": {"aggregate": "max"}},
    "coverage": {"enable": ["decompose"], "decompose": {"aggregate": "coverage"}},
    "coverage, embedding": {"enable": ["decompose"], "decompose": {"aggregate": "coverage", "scorer": "embedding"}},
}


def split_ids(gold) -> dict[str, list[str]]:
    from ragplugins_decompose.decomposers.rules import RuleDecomposer

    rules = RuleDecomposer()
    return {row.id: rules.decompose(row.query).sub_queries for row in gold}


def _mean(rows: list[dict], stage: str, metric: str) -> float | None:
    return statistics.fmean(r[stage][metric] for r in rows) if rows else None


def corpus_run(corpus: str, embed_model, cache_dir: str | None) -> dict:
    from ragplugins.eval import Arm, bench_corpus, run_eval

    paths, gold = bench_corpus(corpus)
    splits = split_ids(gold)
    run = run_eval(paths, gold, [Arm(name, cfg) for name, cfg in ARMS.items()], ks=[K], embed_model=embed_model,
                   cache_dir=cache_dir, progress=False)
    run.write(OUT / corpus.replace("+", "_plus_"))
    slices = {
        "all": lambda r: True,
        "split": lambda r: bool(splits[r["id"]]),
        "unsplit": lambda r: not splits[r["id"]],
        "multi_document": lambda r: "multi_document" in r["slices"],
    }
    table: dict[str, dict] = {}
    for arm in ARMS:
        rows = run._rows(arm, K)
        table[arm] = {}
        for name, keep in slices.items():
            chosen = [r for r in rows if keep(r)]
            if not chosen:
                continue
            entry = {"n": len(chosen), "first.ndcg@10": _mean(chosen, "first", "ndcg@10")}
            entry.update({f"final.{m}": _mean(chosen, "final", m) for m in METRICS})
            ms = [r["instrument"].get("decompose.rerank_ms") for r in chosen]
            ms = [m for m in ms if m is not None]
            entry["rerank_ms_mean"] = statistics.fmean(ms) if ms else None
            entry["latency_ms_p50"] = statistics.median(r["latency_ms"] for r in chosen)
            table[arm][name] = entry
    changes = {}
    for arm in ARMS:
        if arm == "off":
            continue
        cmp = run.compare("off", arm, K, "final.ndcg@10")
        changes[arm] = {k: [(i, "split" if splits[i] else "unsplit") for i in v] for k, v in cmp.items()
                        if k != "unchanged"}
        changes[arm]["unchanged"] = len(cmp["unchanged"])
    split_rows = {i: s for i, s in splits.items() if s}
    return {"corpus": corpus, "n": len(gold), "k": K, "table": table, "changes": changes, "splits": split_rows,
            "invariant": run.invariant, "coverage_failures": run.coverage_failures}


def _fmt(x) -> str:
    return "-" if x is None else f"{x:.3f}" if isinstance(x, float) else str(x)


def markdown(results: list[dict]) -> str:
    lines = ["# decompose benchmark (k = 20, final list; first stage identical in every arm)", ""]
    for res in results:
        lines += [f"## {res['corpus']} ({res['n']} questions, {len(res['splits'])} split by the rules)", ""]
        for name in ("all", "split", "unsplit", "multi_document"):
            if not any(name in res["table"][a] for a in res["table"]):
                continue
            n = next(res["table"][a][name]["n"] for a in res["table"] if name in res["table"][a])
            lines += [f"### slice: {name} (n = {n})", "",
                      "| arm | nDCG@10 | R@5 | R@10 | R@20 | 1st nDCG@10 | rerank ms (mean) |",
                      "|---|---|---|---|---|---|---|"]
            for arm, slices in res["table"].items():
                s = slices.get(name)
                if s:
                    lines.append(f"| {arm} | {_fmt(s['final.ndcg@10'])} | {_fmt(s['final.recall@5'])} | "
                                 f"{_fmt(s['final.recall@10'])} | {_fmt(s['final.recall@20'])} | "
                                 f"{_fmt(s['first.ndcg@10'])} | {_fmt(s['rerank_ms_mean'])} |")
            lines.append("")
        lines += ["Per-query final nDCG@10 against `off`:", ""]
        for arm, ch in res["changes"].items():
            lines.append(f"- {arm}: improved {ch['improved']}, regressed {ch['regressed']}, "
                         f"unchanged {ch['unchanged']}")
        lines += ["", "Sub-queries of the split questions:", ""]
        lines += [f"- `{i}`: {subs}" for i, subs in res["splits"].items()]
        lines += ["", f"Checks: invariant offenders {res['invariant'].get('offenders')}, coverage failures "
                      f"{[f['id'] for f in res['coverage_failures']]}", ""]
    return "\n".join(lines)


def main() -> None:
    from ragplugins.embeddings import load_embed_model

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpora", nargs="+", default=list(CORPORA), choices=CORPORA)
    p.add_argument("--cache-dir", default=None, help="Index cache (default ~/.cache/ragplugins/eval).")
    p.add_argument("--threads", type=int, default=1,
                   help="torch threads (default 1: on a shared 2-core machine more threads contend and one "
                        "query embedding takes 0.5 s instead of 30 ms; quality numbers do not depend on it).")
    args = p.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    embed_model = load_embed_model()
    results = []
    for corpus in args.corpora:
        res = corpus_run(corpus, embed_model, args.cache_dir)
        results.append(res)
        print(markdown([res]), flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    suffix = "" if list(args.corpora) == list(CORPORA) else "_" + "_".join(c.replace("+", "_plus_")
                                                                         for c in args.corpora)
    (OUT / f"summary{suffix}.json").write_text(json.dumps(results, indent=1, default=str))
    (OUT / f"summary{suffix}.md").write_text(markdown(results))


if __name__ == "__main__":
    main()
