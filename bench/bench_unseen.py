"""Every plugin alone and all together against plugins off, per corpus and split, with the
per-query regressions by id and how often each plugin changed the list.

The corpora: the public ``mixed``, ``docs``, ``acq``, ``acq+docs`` (../shared/bench) and the
Debian documentation corpora ``git``, ``postgres``, ``python`` (bench/debian_corpora.py,
questions in bench/goldsets/debian/, each with factoid, pointer and paraphrase rows). Runs
through ``ragplugins.eval.run_eval`` (the product path) at the default top k = 20; chunk and
query vectors come from the on-disk text cache of bench_firststage.py.

    python bench/bench_unseen.py --split dev                       # while designing
    python bench/bench_unseen.py --split test --out bench/results/unseen/test.json   # once, at the end
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_firststage import (  # noqa: E402
    CACHE,
    DEBIAN,
    PUBLIC,
    CachedEmbedding,
    corpus_with_extra,
    in_split,
    split_of,
    write_results,
)

from ragplugins.eval import Arm, run_eval  # noqa: E402

PLUGINS = ("crossref", "overview", "retry")
K = 20


def arms(plugins: list[str]) -> list[Arm]:
    out = [Arm("off", {"enable": []})]
    out += [Arm(p, {"enable": [p]}) for p in plugins]
    if len(plugins) > 1:
        out.append(Arm("all", {"enable": list(plugins)}))
    return out


def fired(rows: dict, arm: str, ids: list[str]) -> dict[str, int]:
    """How many of the questions each plugin acted on, read from its trace: overview selected documents
    to steer towards; retry found the evidence weak, retried with a reformulation, kept the retry set;
    crossref hopped."""
    out: dict[str, int] = {}
    for qid in ids:
        plugins = rows[(arm, qid)]["trace"] or {}
        select = (plugins.get("overview") or {}).get("select")
        if select is not None:
            out["overview"] = out.get("overview", 0) + bool(select.get("applied"))
        decision = (plugins.get("retry") or {}).get("decision")
        if decision is not None:
            out["retry"] = out.get("retry", 0) + bool(decision.get("fired"))
            out["retry retried"] = out.get("retry retried", 0) + bool(decision.get("attempted"))
            out["retry kept"] = out.get("retry kept", 0) + (decision.get("kept") == "retry")
        if "crossref" in plugins:
            hop = plugins["crossref"].get("hop") or {}
            out["crossref"] = out.get("crossref", 0) + bool(hop.get("fired"))
    return out


def report(run: Any, names: list[str], ids: list[str]) -> dict[str, Any]:
    """Per arm over the questions ``ids``: means, per-kind slices, and against 'off' the questions
    whose final list changed, improved, or lost R@10 / nDCG@10."""
    rows = {(r["arm"], r["id"]): r for r in run.rows}
    ids = sorted(ids)

    def mean(arm: str, metric: str, keep=lambda r: True) -> tuple[int, float]:
        vals = [rows[(arm, i)]["final"][metric] for i in ids if keep(rows[(arm, i)])]
        return len(vals), (sum(vals) / len(vals) if vals else 0.0)
    out: dict[str, Any] = {}
    for arm in names:
        n, ndcg = mean(arm, "ndcg@10")
        entry = {"n": n, "ndcg@10": ndcg, "recall@10": mean(arm, "recall@10")[1], "slices": {}}
        for sl in ("kind=factoid", "kind=pointer", "kind=paraphrase"):
            keep = lambda r, sl=sl: sl in r["slices"]  # noqa: E731
            k_n, k_ndcg = mean(arm, "ndcg@10", keep)
            if k_n:
                entry["slices"][sl] = {"n": k_n, "ndcg@10": k_ndcg, "recall@10": mean(arm, "recall@10", keep)[1]}
        if arm != "off":
            changed, worse_recall, worse_ndcg, better = [], [], [], []
            for qid in ids:
                a, b = rows[("off", qid)], rows[(arm, qid)]
                if a["final_ids"] != b["final_ids"]:
                    changed.append(qid)
                if b["final"]["recall@10"] < a["final"]["recall@10"] - 1e-9:
                    worse_recall.append(qid)
                if b["final"]["ndcg@10"] < a["final"]["ndcg@10"] - 1e-9:
                    worse_ndcg.append(f"{qid} ({b['final']['ndcg@10'] - a['final']['ndcg@10']:+.3f})")
                if b["final"]["ndcg@10"] > a["final"]["ndcg@10"] + 1e-9:
                    better.append(qid)
            entry.update(changed=len(changed), improved=better, regressed_recall10=worse_recall,
                         regressed_ndcg10=worse_ndcg, fired=fired(rows, arm, ids))
        out[arm] = entry
    return out


def fires(entry: dict[str, Any]) -> str:
    return ", ".join(f"{name} {n}" for name, n in entry.get("fired", {}).items()) or "-"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", nargs="+", default=[*PUBLIC, *DEBIAN])
    p.add_argument("--split", choices=["dev", "test", "all", "both"], default="dev",
                   help="'both': every question once, dev and test reported apart")
    p.add_argument("--plugins", nargs="+", default=list(PLUGINS))
    p.add_argument("--set", default="{}", help="JSON laid over every arm's [ragplugins] table")
    p.add_argument("--out", type=Path)
    p.add_argument("--rows", type=Path, help="also write every question's row (metrics, plugin trace) as JSONL")
    p.add_argument("--extra-dev", type=Path, nargs="+", metavar="FOLDER",
                   help="extra dev rows (bench_firststage.py's --extra-dev), also reported on their own")
    args = p.parse_args(argv)

    from ragplugins.embeddings import load_embed_model

    embed = CachedEmbedding(load_embed_model(), CACHE / "embeddings.sqlite")
    arm_list = arms(args.plugins)
    names = [a.name for a in arm_list]
    results: dict[str, Any] = {}
    for name in args.corpus:
        paths, gold = corpus_with_extra(name, args.extra_dev)
        rows = [r for r in gold if args.split in ("all", "both") or split_of(r) == args.split]
        run = run_eval(paths, rows, arm_list, ks=(K,), base_config={"top_k": K, **json.loads(args.set)},
                       cache_dir=CACHE / "eval", embed_model=embed, progress=False)
        splits = ("dev", "test") if args.split == "both" else (args.split,)
        splits += tuple(f.name for f in args.extra_dev or [] if any(r.dimensions.get("set") == f.name for r in rows))
        if args.rows:
            args.rows.parent.mkdir(parents=True, exist_ok=True)
            with args.rows.open("a") as fh:
                for r in run.rows:
                    fh.write(json.dumps({"corpus": name, "split": split_of(next(g for g in rows if g.id == r["id"])),
                                         **{k: r[k] for k in ("arm", "id", "query", "slices", "final",
                                                              "final_ids", "final_docs", "trace")}},
                                        default=str) + "\n")
        for sp in splits:
            ids = [r.id for r in rows if in_split(r, sp)]
            results.setdefault(name, {})[sp] = report(run, names, ids)
            print(f"\n## {name}, {sp} ({len(ids)} questions, k = {K})\n")
            print("| arm | nDCG@10 | R@10 | changed | better | fired | R@10 regressions | nDCG@10 regressions |")
            print("|---|---|---|---|---|---|---|---|")
            for arm in names:
                e = results[name][sp][arm]
                if arm == "off":
                    print(f"| off | {e['ndcg@10']:.3f} | {e['recall@10']:.3f} | | | | | |")
                else:
                    print(f"| {arm} | {e['ndcg@10']:.3f} | {e['recall@10']:.3f} | {e['changed']} | "
                          f"{len(e['improved'])} | {fires(e)} | {', '.join(e['regressed_recall10']) or 0} | "
                          f"{', '.join(e['regressed_ndcg10']) or 0} |", flush=True)
        if run.coverage_failures:
            print(f"coverage failures: {[f['id'] for f in run.coverage_failures]}")
    write_results(args.out, args.split, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
