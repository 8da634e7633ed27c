"""Benchmark of the crossref plugin (issue 4): extraction against the acquisition catalogue, and
the query-time hop A/B through ``ragplugins eval``.

    python bench/bench_crossref.py extraction      # edge P/R vs the catalogue, name-only row, MB/s
    python bench/bench_crossref.py hop             # hop A/B on acq and acq+docs, k = 3, 5, 20
    python bench/bench_crossref.py all

Reads the benchmark data from $RAGPLUGINS_BENCH or /work/shared/bench (never copied here); writes
bench/results/crossref/. Index caches live in $RAGPLUGINS_EVAL_CACHE (default ~/.cache/ragplugins/eval).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

from ragplugins.eval import Arm, bench_corpus, bench_dir, load_gold, run_eval

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "crossref"
POINTER_GOLD = HERE / "goldsets" / "acq_pointer_only.jsonl"
KS = [3, 5, 20]


# -- extraction --------------------------------------------------------------------------------
def _chunks(paths, workdir: Path):
    """Index ``paths`` through ragplugins (crossref on, hop off: the product path) and return the
    stored chunks per document in reading order, their metadata, and the stored references."""
    import ragplugins_crossref.plugin as plugin
    from ragplugins.context import CHUNK_INDEX_KEY
    from ragplugins.testing import make_rag
    from ragplugins_crossref.resolve import REFS_KEY, load_refs

    rp = make_rag([plugin], {"crossref": {"hop": False}}, persist_dir=workdir)
    rp.index_paths(paths)
    nodes = sorted(rp.context().all_nodes(), key=lambda n: (n.ref_doc_id, n.metadata.get(CHUNK_INDEX_KEY, 0)))
    docs, meta, stored = {}, {}, {}
    for n in nodes:
        docs.setdefault(n.ref_doc_id, []).append((n.node_id, n.get_content()))
        meta.setdefault(n.ref_doc_id, dict(n.metadata))
        stored[n.node_id] = load_refs(n.metadata.get(REFS_KEY))
    return docs, meta, stored


def name_only_edges(docs: dict) -> set[tuple[str, str]]:
    """localGPT's resolver (prior art notes 1.3-1.7): normalised file names plus the numeric-prefix
    alias, whole-word search in normalised chunk text, names of >= 6 chars or >= 2 tokens, labels and
    sections first and the 8-reference cap applied after them (document mentions last)."""
    from ragplugins_crossref.families import BUILTIN_FAMILIES

    def norm(s):
        return re.sub(r"[^a-z0-9]+", " ", s.lower()).strip()

    names: dict[str, str] = {}
    for doc_id in docs:
        full = norm(re.sub(r"\.[A-Za-z0-9]{1,5}$", "", doc_id.rsplit("/", 1)[-1]))
        names.setdefault(full, doc_id)
        stripped = re.sub(r"^\d+ ", "", full)
        if stripped != full and (len(stripped) >= 6 or len(stripped.split()) >= 2):
            names.setdefault(stripped, doc_id)
    searchable = {n: d for n, d in names.items() if len(n) >= 6 or len(n.split()) >= 2}
    label, section = BUILTIN_FAMILIES[0], BUILTIN_FAMILIES[1]
    edges = set()
    for doc_id, chunks in docs.items():
        for _, text in chunks:
            refs = []
            for fam in (label, section):
                for m in fam.pattern.finditer(text):
                    key = norm(m.group("word") + " " + m.group("value")) if fam is label else "section"
                    target = names.get(key) or next((d for n, d in sorted(names.items(), key=lambda x: len(x[0]))
                                                     if f" {key} " in f" {n} "), None)
                    refs.append((key, None if target == doc_id else target))
            body = f" {norm(text)} "
            for name, target in sorted(searchable.items(), key=lambda x: -len(x[0])):
                if target != doc_id and f" {name} " in body and all(r[0] != name for r in refs):
                    refs.append((name, target))
            for _, target in list(dict.fromkeys(refs))[:8]:
                if target:
                    edges.add((doc_id, target))
    return edges


def extraction() -> dict:
    from ragplugins_crossref.families import BUILTIN_FAMILIES
    from ragplugins_crossref.resolve import annotate

    bench = bench_dir()
    facts = json.loads((bench / "corpora" / "acquisition.facts.json").read_text())
    catalogue = facts["cross_references"]
    gold = {(x["from"], x["to"]) for x in catalogue if x["to"]}
    sources = {x["from"] for x in catalogue}
    out = {"catalogue_entries": len(catalogue), "catalogued_edges": len(gold),
           "dangling": sum(1 for x in catalogue if not x["to"]), "rows": []}

    def score(label, edges, corpus):
        pred = {e for e in edges if e[0] in sources}
        tp = len(pred & gold)
        row = {"resolver": label, "corpus": corpus, "predicted": len(pred), "correct": tp,
               "precision": tp / len(pred) if pred else 0.0, "recall": tp / len(gold),
               "false_edges": sorted(map(list, pred - gold)), "missed_edges": sorted(map(list, gold - pred))}
        out["rows"].append(row)
        return row

    import tempfile

    tmp = Path(tempfile.mkdtemp(prefix="crossref-bench-"))
    for corpus, paths in (("acq", [bench / "corpora" / "acquisition"]),
                          ("acq+docs", [bench / "corpora" / "acquisition", bench / "corpora" / "docs"])):
        docs, meta, stored = _chunks(paths, tmp / corpus.replace("+", "_"))
        chunk_doc = {c: d for d, cs in docs.items() for c, _ in cs}
        score("ragplugins crossref (stored in LanceDB)", {(chunk_doc[c], r["target"]) for c, rs in stored.items()
                                                          for r in rs if r["target"]}, corpus)
        ann = annotate(docs, meta, BUILTIN_FAMILIES)
        no_content = {(chunk_doc[c], r["target"]) for c, rs in ann.refs.items() for r in rs
                      if r["target"] and r["how"] not in ("restated", "owner", "definition")}
        score("ragplugins crossref, names + qualifiers only (no content resolution)", no_content, corpus)
        score("name-only (localGPT method)", name_only_edges(docs), corpus)
        stats = ann.stats()
        by_how: dict[str, int] = {}
        for rs in ann.refs.values():
            for r in rs:
                by_how[str(r["how"])] = by_how.get(str(r["how"]), 0) + 1
        out[f"stats_{corpus}"] = {**stats, "by_how": by_how}
        # Throughput: extraction + resolution over the corpus text, best of 5 runs.
        size_mb = sum(len(t.encode("utf-8")) for cs in docs.values() for _, t in cs) / 1e6
        best = min(_timed(lambda: annotate(docs, meta, BUILTIN_FAMILIES)) for _ in range(5))  # noqa: B023 - timed now
        out[f"throughput_{corpus}"] = {"mb": round(size_mb, 3), "seconds": round(best, 4),
                                       "mb_per_s": round(size_mb / best, 2)}
    base = _chunks([bench / "corpora" / "docs"], tmp / "docs")[0]
    big = {f"{d}~{i}": cs for i in range(20) for d, cs in base.items()}
    size_mb = sum(len(t.encode("utf-8")) for cs in big.values() for _, t in cs) / 1e6
    secs = _timed(lambda: annotate(big, {}, BUILTIN_FAMILIES))
    out["throughput_docs_x20"] = {"mb": round(size_mb, 3), "documents": len(big), "seconds": round(secs, 3),
                                  "mb_per_s": round(size_mb / secs, 2)}
    return out


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


# -- hop A/B -----------------------------------------------------------------------------------
ARMS = [
    Arm("off", {"enable": []}),
    Arm("on", {"enable": ["crossref"]}),   # default: placement = "swap"
    Arm("on_replace_tail", {"enable": ["crossref"], "crossref": {"placement": "replace_tail"}}),
    Arm("on_append", {"enable": ["crossref"], "crossref": {"placement": "append"}}),
    Arm("control", {"enable": []}, budget_of="on"),
    Arm("control_replace", {"enable": []}, budget_of="on_replace_tail"),
    Arm("control_append", {"enable": []}, budget_of="on_append"),
]


def hop(cache: str | None) -> dict:
    runs = {}
    for corpus in ("acq", "acq+docs"):
        paths, gold = bench_corpus(corpus)
        for goldname, rows in (("gold", gold), ("pointer", load_gold([POINTER_GOLD]))):
            run = run_eval(paths, rows, ARMS, ks=KS, cache_dir=cache, progress=False)
            name = f"{corpus}-{goldname}".replace("+", "_")
            run.write(RESULTS / name)
            runs[name] = run
    return runs


def ceiling_controls(cache: str | None) -> dict:
    """A stricter control than the rounded budget: plugins off with one more chunk than k (k+1),
    which is always at least the hop arm's mean final length at k = 3 and 5."""
    out = {}
    for corpus in ("acq", "acq+docs"):
        paths, gold = bench_corpus(corpus)
        for goldname, rows in (("gold", gold), ("pointer", load_gold([POINTER_GOLD]))):
            run = run_eval(paths, rows, [Arm("off", {"enable": []})], ks=[4, 6], cache_dir=cache, progress=False)
            name = f"{corpus}-{goldname}".replace("+", "_")
            out[name] = {f"off@{k}": {sl: run.summary("off", k, sl) for sl in ("all", "requires_crossref", "control")}
                         for k in (4, 6)}
    (RESULTS / "ceiling_controls.json").write_text(json.dumps(out, indent=1, default=str))
    return out


def table(runs: dict) -> str:
    lines = []
    cols = ["first.recall@5", "final.recall@5", "final.recall@10", "final.ndcg@10", "final_len",
            "crossref.fired", "crossref.hit_expected_source", "crossref.hopped_relevant_share", "latency_ms_p50"]
    for name, run in runs.items():
        for sl in ("all", "requires_crossref", "control"):
            if not run.summary("off", KS[0], sl).get("n"):
                continue
            lines.append(f"\n**{name}**, slice `{sl}`\n")
            lines.append("| arm | k (used) | n | " + " | ".join(cols) + " |")
            lines.append("|---|---|---|" + "---|" * len(cols))
            for k in run.ks:
                for arm in run.arms:
                    s = run.summary(arm, k, sl)
                    vals = []
                    for c in cols:
                        v = s.get(c)
                        vals.append("–" if v is None else (f"{v:.0f}" if c.startswith("latency") else f"{v:.3f}"))
                        if c.startswith("crossref.") and v is not None and s.get(c + ".n") is not None:
                            vals[-1] += f" ({s[c + '.n']})"
                    lines.append(f"| {arm} | {k} ({s.get('k_used')}) | {s['n']} | " + " | ".join(vals) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["extraction", "hop", "ceiling", "all"])
    parser.add_argument("--cache", default=os.environ.get("RAGPLUGINS_EVAL_CACHE"),
                        help="index cache directory (clear it after changing extraction code)")
    args = parser.parse_args(argv)
    RESULTS.mkdir(parents=True, exist_ok=True)
    if args.what in ("extraction", "all"):
        result = extraction()
        (RESULTS / "extraction.json").write_text(json.dumps(result, indent=1))
        for row in result["rows"]:
            print(f"{row['corpus']:9} {row['resolver']:70} P={row['precision']:.3f} R={row['recall']:.3f} "
                  f"({row['correct']}/{row['predicted']} predicted, {len(row['missed_edges'])} missed)")
        print({k: v for k, v in result.items() if k.startswith(("throughput", "stats"))})
    if args.what in ("ceiling", "all"):
        for name, arms in ceiling_controls(args.cache).items():
            for arm, slices in arms.items():
                s = slices["all"]
                print(f"{name} {arm}: final R@5 {s['final.recall@5']:.3f} R@10 {s['final.recall@10']:.3f} "
                      f"nDCG@10 {s['final.ndcg@10']:.3f} len {s['final_len']:.2f}")
    if args.what in ("hop", "all"):
        runs = hop(args.cache)
        text = table(runs)
        (RESULTS / "hop_tables.md").write_text(text)
        print(text)
        for name, run in runs.items():
            for k in KS:
                for arm, other in (("on", "off"), ("on", "control"), ("on_replace_tail", "control_replace"),
                                   ("on_append", "control_append")):
                    for metric in ("final.recall@10", "final.ndcg@10"):
                        cmp = run.compare(other, arm, k, metric)
                        print(f"{name} k={k} {arm} vs {other} {metric}: +{len(cmp['improved'])} "
                              f"-{len(cmp['regressed'])} ={len(cmp['unchanged'])} improved={cmp['improved']} "
                              f"regressed={cmp['regressed']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
