"""Why the crossref hop did not bring a pointer question's answer into the top 10: for each pointer (or
pointer-paraphrase) row of a bench_crossref_debian_hop.py run whose final R@10 is below 1, where the
anchor (pointing) document and the expected source sit in the first stage's list, and each pointer the
hop considered (rank, choice and gate readings, the chunk it would displace, its outcome).

    python bench/diagnose_crossref_hop.py bench/results/crossref/debian-hop-git-dev-dev2-base [--gold FILE]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("run", type=Path)
    p.add_argument("--gold", type=Path, required=True)
    p.add_argument("--all", action="store_true", help="every pointer row, not only the misses")
    args = p.parse_args()
    gold = {r["id"]: r for r in map(json.loads, filter(str.strip, args.gold.read_text().splitlines()))}
    rows = json.loads((args.run / "results.json").read_text())["rows"]
    doc_of = {i: d for r in rows for i, d in zip(r["final_ids"], r["final_docs"])}
    for r in rows:
        g = gold.get(r["id"])
        if not g or not g.get("anchor_doc"):
            continue
        if r["final"]["recall@10"] >= 1 and not args.all:
            continue
        src, anchor = g["expected_sources"][0], g["anchor_doc"]
        hop = r["trace"].get("crossref", {}).get("hop", {})
        first_docs = [doc_of.get(i, "?") for i in r["first_ids"]]
        rank = lambda d, docs: [i + 1 for i, x in enumerate(docs) if x == d]  # noqa: E731
        print(f"== {r['id']} R@10 {r['first']['recall@10']:.0f}->{r['final']['recall@10']:.0f} "
              f"anchor {anchor} first ranks {rank(anchor, first_docs)[:5]}; source {src} first ranks "
              f"{rank(src, first_docs)[:5]} final {rank(src, r['final_docs'])[:5]}; top3 {first_docs[:3]}; "
              f"named {hop.get('named')}")
        for d in r["decisions"]:
            print("   decision:", d.get("reason"))
        for i, c in enumerate(hop.get("considered", [])[:4]):
            mark = "*" if c["target"] == src else " "
            print(f"  {mark}{i + 1}. {c['from_doc']}#{c['from_rank']} -> {c['target']} choice {c.get('choice')} "
                  f"context {c.get('context')} displaces {c.get('displaces')} best {c.get('best')} "
                  f"outcome {c.get('outcome')} | {c.get('sentence', '')[:110]!r}")
        found = [i + 1 for i, c in enumerate(hop.get("considered", [])) if c["target"] == src]
        print(f"   right pointer among considered: {found or 'no'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
