"""The crossref hop on the Debian corpora (git, postgres, python), dev split by default: final recall@10
with the hop against without, per query, at the default top k (20), on the pointer questions (kind =
pointer, where the answer sits in a document the question's document points to) and on every other
question of the split (where the hop must not lower anything).

    python bench/bench_crossref_debian_hop.py git postgres python [--split dev] [--kinds pointer] [--config JSON]
    python bench/bench_crossref_debian_hop.py git python --gold-dir bench/goldsets/debian_dev2 --tag=-dev2

Reads the question sets from bench/goldsets/debian/<corpus>.jsonl (or --gold-dir: the extra dev pointer
questions of bench/goldsets/debian_dev2/); writes
bench/results/crossref/debian-hop-<corpus>-<split>/. Chunk and query vectors come from the on-disk text
cache of bench_firststage.py (bench/.cache/embeddings.sqlite), indexes from bench/.cache/eval.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
RESULTS = HERE / "results" / "crossref"
KINDS = ("pointer", "factoid", "paraphrase")


def changes(rows: list[dict], metric: str = "recall@10") -> tuple[list[str], list[str]]:
    better = [r["id"] for r in rows if r["final"][metric] > r["first"][metric]]
    worse = [r["id"] for r in rows if r["final"][metric] < r["first"][metric]]
    return better, worse


def main(argv: list[str] | None = None) -> int:
    from bench_firststage import CACHE, CachedEmbedding
    from debian_corpora import corpus_dir

    from ragplugins.embeddings import load_embed_model
    from ragplugins.eval import Arm, load_gold, run_eval

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("corpora", nargs="*", default=["git", "postgres", "python"])
    p.add_argument("--split", default="dev")
    p.add_argument("--kinds", nargs="*", default=list(KINDS))
    p.add_argument("--k", type=int, default=20)
    p.add_argument("--gold-dir", type=Path, default=HERE / "goldsets" / "debian")
    p.add_argument("--cache", default=str(CACHE / "eval"))
    p.add_argument("--config", default="{}", help="crossref config of the main arm, e.g. '{\"gate\": 0.85}'")
    p.add_argument("--tag", default="", help="suffix of the results directory")
    args = p.parse_args(argv)
    embed = CachedEmbedding(load_embed_model(), CACHE / "embeddings.sqlite")
    # One arm: with crossref the only plugin, its first-stage list IS the hop-off list (the hop is the
    # only postprocessor), so first vs final compares off and on on one index.
    arms = [Arm("on", {"enable": ["crossref"], "crossref": json.loads(args.config)})]
    for corpus in args.corpora:
        rows = [r for r in load_gold([args.gold_dir / f"{corpus}.jsonl"])
                if r.dimensions.get("kind") in args.kinds and r.dimensions.get("split") == args.split]
        run = run_eval([corpus_dir(corpus)], rows, arms, ks=[args.k], base_config={"top_k": args.k},
                       cache_dir=args.cache, embed_model=embed, progress=False)
        run.write(RESULTS / f"debian-hop-{corpus}-{args.split}{args.tag}")
        for kind in ["all"] + [f"kind={k}" for k in args.kinds]:
            s = run.summary("on", args.k, kind)
            if not s.get("n"):
                continue
            rows_ = run._rows("on", args.k, kind)
            better, worse = changes(rows_)
            nbetter, nworse = changes(rows_, "ndcg@10")
            fired = [r["id"] for r in rows_ if r["instrument"].get("crossref.fired")]
            print(f"{corpus} {args.split} {kind} n={s['n']}: R@10 off {s['first.recall@10']:.3f} -> on "
                  f"{s['final.recall@10']:.3f}; nDCG@10 {s['first.ndcg@10']:.3f} -> {s['final.ndcg@10']:.3f}; "
                  f"fired {len(fired)} {fired}; R@10 improved {better} regressed {worse}; "
                  f"nDCG@10 improved {nbetter} regressed {nworse}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
