"""The crossref hop, off against on with the default config, on the public acquisition sets (the catalogue
and the pointer-only set) at k = 3, 5 and 20: R@10 and nDCG@10, per-query changes and how often the hop
fired. A short form of ``bench_crossref.py hop`` (no other placements or budget controls).

    RAGPLUGINS_BENCH=/work/shared/bench python bench/bench_crossref_hop_public.py [--cache DIR] [--config JSON]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_firststage import split_of  # noqa: E402

from ragplugins.eval import Arm, bench_corpus, load_gold, run_eval  # noqa: E402

POINTER_GOLD = Path(__file__).resolve().parent / "goldsets" / "acq_pointer_only.jsonl"
KS = (3, 5, 20)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cache", default="/tmp/hop-acq-cache")
    p.add_argument("--config", help="a crossref config to compare with the default, e.g. '{\"trigger_depth\": 5}': "
                                    "the questions whose final list it changes, with their split")
    args = p.parse_args(argv)
    arms = [Arm("off", {"enable": []}), Arm("on", {"enable": ["crossref"]})]
    if args.config:
        arms.append(Arm("variant", {"enable": ["crossref"], "crossref": json.loads(args.config)}))
    for corpus in ("acq", "acq+docs"):
        paths, gold = bench_corpus(corpus)
        for name, rows in (("catalogue", gold), ("pointer", load_gold([POINTER_GOLD]))):
            run = run_eval(paths, rows, arms, ks=list(KS), cache_dir=args.cache, progress=False)
            for k in KS:
                off, on = run.summary("off", k, "all"), run.summary("on", k, "all")
                before = {r["id"]: r["final"] for r in run._rows("off", k, "all")}
                after = {r["id"]: r for r in run._rows("on", k, "all")}
                up = [i for i, r in after.items() if r["final"]["recall@10"] > before[i]["recall@10"]]
                down = [i for i, r in after.items() if r["final"]["recall@10"] < before[i]["recall@10"]]
                ndown = [i for i, r in after.items() if r["final"]["ndcg@10"] < before[i]["ndcg@10"] - 1e-9]
                fired = sum(1 for r in after.values() if r["instrument"].get("crossref.fired"))
                print(f"{corpus} {name} k={k} n={on['n']}: R@10 {off['final.recall@10']:.3f} -> "
                      f"{on['final.recall@10']:.3f}; nDCG@10 {off['final.ndcg@10']:.3f} -> {on['final.ndcg@10']:.3f}; "
                      f"fired {fired}; R@10 up {up} down {down}; nDCG@10 down {ndown}", flush=True)
                if args.config:
                    rows_by_id = {r.id: r for r in rows}
                    variant = {r["id"]: r["final"] for r in run._rows("variant", k, "all")}
                    moved = [f"{i} ({split_of(rows_by_id[i])}) R@10 {r['final']['recall@10']:.0f}->"
                             f"{variant[i]['recall@10']:.0f} nDCG@10 {r['final']['ndcg@10']:.3f}->"
                             f"{variant[i]['ndcg@10']:.3f}" for i, r in after.items()
                             if abs(variant[i]["ndcg@10"] - r["final"]["ndcg@10"]) > 1e-9]
                    print(f"  variant {args.config} against the default: {moved or 'no list changed'}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
