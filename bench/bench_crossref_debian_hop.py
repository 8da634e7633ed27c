"""The crossref hop on the Debian corpora's pointer questions (kind = pointer), dev split by default:
final recall@10 with the hop against without, per query, at the default top k (20).

    python bench/bench_crossref_debian_hop.py git postgres python [--split dev] [--cache DIR] [--config JSON]

Reads the question sets from bench/goldsets/debian/<corpus>.jsonl (or --gold-dir); writes
bench/results/crossref/debian-hop-<corpus>-<split>/.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
RESULTS = HERE / "results" / "crossref"


def main(argv: list[str] | None = None) -> int:
    from debian_corpora import corpus_dir

    from ragplugins.eval import Arm, load_gold, run_eval

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("corpora", nargs="*", default=["git", "postgres", "python"])
    p.add_argument("--split", default="dev")
    p.add_argument("--k", type=int, default=20)
    p.add_argument("--gold-dir", type=Path, default=HERE / "goldsets" / "debian")
    p.add_argument("--cache", default=None)
    p.add_argument("--config", default="{}", help="crossref config of the main arm, e.g. '{\"gate\": 0.85}'")
    p.add_argument("--arm", action="append", default=[], metavar="NAME=JSON",
                   help="extra crossref arm, e.g. gate9='{\"gate\": 0.9}'")
    args = p.parse_args(argv)
    # One arm: with crossref the only plugin, its first-stage list IS the hop-off list (the hop is the
    # only postprocessor), so first vs final compares off and on on one index (the eval indexes once per
    # plugin config, and a second config would mean embedding the corpus twice).
    arms = [Arm("on", {"enable": ["crossref"], "crossref": json.loads(args.config)})]
    for spec in args.arm:
        name, _, cfg = spec.partition("=")
        arms.append(Arm(name, {"enable": ["crossref"], "crossref": json.loads(cfg)}))
    for corpus in args.corpora:
        rows = [r for r in load_gold([args.gold_dir / f"{corpus}.jsonl"])
                if r.dimensions.get("kind") == "pointer" and r.dimensions.get("split") == args.split]
        run = run_eval([corpus_dir(corpus)], rows, arms, ks=[args.k], cache_dir=args.cache, progress=False)
        run.write(RESULTS / f"debian-hop-{corpus}-{args.split}")
        for arm in [a.name for a in arms]:
            s = run.summary(arm, args.k)
            rows_ = run._rows(arm, args.k)
            better = [r["id"] for r in rows_ if r["final"]["recall@10"] > r["first"]["recall@10"]]
            worse = [r["id"] for r in rows_ if r["final"]["recall@10"] < r["first"]["recall@10"]]
            print(
                f"{corpus} {args.split} n={s['n']} {arm}: R@10 off (first stage) {s['first.recall@10']:.3f} "
                f"-> on (final) {s['final.recall@10']:.3f}; nDCG@10 {s['first.ndcg@10']:.3f} -> "
                f"{s['final.ndcg@10']:.3f}; fired {s.get('crossref.fired')} hit {s.get('crossref.hit_expected_source')}"
                f"; improved {better} regressed {worse}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
