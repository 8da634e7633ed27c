"""Quality table per corpus: plain LlamaIndex peers next to the ragplugins core first stage.

    python bench/bench_quality.py                # all four corpora
    python bench/bench_quality.py --corpus docs  # one
"""

from __future__ import annotations

import json

from common import RESULTS, PeerRetrievers, parser

from ragplugins.eval import Arm, bench_corpus, run_eval
from ragplugins.eval.report import table

KS = {"mixed": [20], "docs": [20], "acq": [3, 5, 20], "acq+docs": [3, 5, 20]}


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--corpus", choices=list(KS), action="append")
    args = p.parse_args()
    peers = PeerRetrievers()
    for name in args.corpus or list(KS):
        paths, gold = bench_corpus(name, args.bench_dir)
        arms = peers.arms() + [Arm("ragplugins dense", {"enable": [], "retrieval": "dense"}),
                               Arm("ragplugins hybrid (core default)", {"enable": []})]
        run = run_eval(paths, gold, arms, ks=KS[name], cache_dir=args.cache_dir)
        out = run.write(RESULTS / "quality" / name.replace("+", "_plus_"))
        print(f"\n## {name} ({len(gold)} queries)\n")
        for k in run.ks:
            print(f"k = {k}\n\n{table(run, k)}\n")
        fusion, core = run.summary("llamaindex QueryFusion RRF", max(run.ks)), run.summary(arms[-1].name, max(run.ks))
        print(json.dumps({"core_minus_fusion_ndcg@10": core["final.ndcg@10"] - fusion["final.ndcg@10"],
                          "coverage_failures": run.coverage_failures, "written": str(out)}))


if __name__ == "__main__":
    main()
