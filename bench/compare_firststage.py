"""Two bench_firststage.py result files, arm against arm, per corpus and split: nDCG@10 / R@10 before and
after, and the questions whose R@10 moved (the per-question changes a first-stage decision reports).

    python bench/compare_firststage.py bench/results/firststage/either_both.json \\
        bench/results/firststage/headings_both.json --extra-dev bench/goldsets/public_dev2 \\
        [--before-extra bench/results/firststage/heldout_nodejs.json] [--arm "ragplugins (plugins off)"]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

ARM = "ragplugins (plugins off)"


def main(argv: list[str] | None = None) -> int:
    from bench_firststage import corpus_with_extra, in_split

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("before", type=Path)
    p.add_argument("after", type=Path)
    p.add_argument("--before-extra", type=Path, nargs="*", default=[],
                   help="more 'before' files for corpora the first one lacks")
    p.add_argument("--arm", default=ARM)
    p.add_argument("--after-arm", help="the arm of the 'after' file (default: --arm)")
    p.add_argument("--extra-dev", type=Path, nargs="+", help="as given to bench_firststage.py")
    args = p.parse_args(argv)
    before = json.loads(args.before.read_text())["results"]
    for extra in args.before_extra:
        for corpus, arms in json.loads(extra.read_text())["results"].items():
            before.setdefault(corpus, arms)
    after = json.loads(args.after.read_text())["results"]
    print("| corpus | split | n | before | after | R@10 gained | R@10 lost |\n|---|---|---|---|---|---|---|")
    for corpus, arms in after.items():
        if corpus not in before:
            continue
        _, gold = corpus_with_extra(corpus, args.extra_dev)
        old, new = before[corpus][args.arm]["per_query"], arms[args.after_arm or args.arm]["per_query"]
        for split in ("dev", "test"):
            ids = [r.id for r in gold if in_split(r, split) and r.id in new and r.id in old]
            if not ids:
                continue

            def mean(d: dict, key: str) -> float:
                return sum(d[i][key] for i in ids) / len(ids)  # noqa: B023

            up = [i for i in ids if new[i]["recall@10"] > old[i]["recall@10"]]
            down = [i for i in ids if new[i]["recall@10"] < old[i]["recall@10"]]
            print(f"| {corpus} | {split} | {len(ids)} | {mean(old, 'ndcg@10'):.3f} / {mean(old, 'recall@10'):.3f} | "
                  f"{mean(new, 'ndcg@10'):.3f} / {mean(new, 'recall@10'):.3f} | {', '.join(up) or 'none'} | "
                  f"{', '.join(down) or 'none'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
