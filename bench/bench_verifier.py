"""Benchmark of the verifier backends on the labelled answer set (bench/goldsets/verifier_cases.jsonl).

    python bench/bench_verifier.py                   # fidelity + nli (tiny local model) + llm plumbing
    python bench/bench_verifier.py --threads 1       # pin torch to one thread (a shared 2-core machine)

The cases point into the benchmark corpora ($RAGPLUGINS_BENCH, default ../shared/bench): a PDF page or a
Markdown section per evidence item; nothing from the corpora is copied. Each case has a ``split``: ``dev``
cases were looked at while the fidelity backend was developed, ``heldout`` ones were not scored until
the final run. Positive class = grounded; TPR = grounded answers accepted, TNR = ungrounded answers rejected.

Backends measured:
- fidelity: the offline default, as shipped (bundled all-MiniLM-L6-v2).
- nli: the real backend code with a tiny *random* BERT built here (no NLI checkpoint can be downloaded on
  this machine): its accuracy is meaningless and reported only to show the plumbing runs; latency is real
  for that model size only.
- llm: plumbing only, with a scripted LLM that calls every sentence supported (accuracy = base rate).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "bench" / "goldsets" / "verifier_cases.jsonl"
OUT = ROOT / "bench" / "results" / "verifier"


def tiny_nli_model(directory: Path) -> str:
    """A 1-layer random BERT with an NLI label map and a fast tokenizer over the cases' own words."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    words = sorted({w.lower() for line in CASES.read_text().splitlines() for w in re.findall(r"[A-Za-z]+", line)})
    vocab = directory / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words, *map(str, range(10))]))
    tok = BertTokenizerFast(vocab_file=str(vocab), do_lower_case=True, model_max_length=512)
    config = BertConfig(vocab_size=tok.vocab_size, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=128, max_position_embeddings=512, num_labels=3,
                        id2label={0: "contradiction", 1: "neutral", 2: "entailment"},
                        label2id={"contradiction": 0, "neutral": 1, "entailment": 2})
    torch.manual_seed(0)
    path = directory / "tiny-nli"
    BertForSequenceClassification(config).save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


def all_supported(prompt: str) -> str:
    n = sum(1 for line in prompt.split("<sentences>")[-1].splitlines() if line[:1].isdigit())
    return json.dumps({"sentences": [{"n": i, "supported": True, "evidence_id": ""} for i in range(1, n + 1)]})


def run(verifier, cases):
    """Verify every case; per-answer wall and CPU time around verify()."""
    rows = []
    for case in cases:
        wall, cpu = time.perf_counter(), time.process_time()
        verdict = verifier.verify(case.question, case.answer, case.evidence)
        rows.append({"id": case.id, "label": case.label, "kind": case.fields.get("kind"),
                     "split": case.fields.get("split"), "grounded": verdict.grounded, "score": verdict.score,
                     "wall_ms": (time.perf_counter() - wall) * 1000, "cpu_ms": (time.process_time() - cpu) * 1000,
                     "unsupported": [{"text": s.text, "reasons": [_no_quotes(r) for r in s.reasons]}
                                     for s in verdict.unsupported],
                     "error": verdict.error})
    return rows


def _no_quotes(reason: str) -> str:
    """Reasons quote the evidence; the corpora stay out of the repository, so drop the quotes."""
    return re.sub(r'(vs|in) "[^"]*"', r"\1 <evidence>", reason)


def summarise(rows):
    tp = sum(r["label"] and r["grounded"] for r in rows)
    fn = sum(r["label"] and not r["grounded"] for r in rows)
    tn = sum(not r["label"] and not r["grounded"] for r in rows)
    fp = sum(not r["label"] and r["grounded"] for r in rows)
    wall = sorted(r["wall_ms"] for r in rows)
    return {"n": len(rows), "accuracy": (tp + tn) / len(rows), "tpr": tp / (tp + fn) if tp + fn else None,
            "tnr": tn / (tn + fp) if tn + fp else None, "tp": tp, "fn": fn, "tn": tn, "fp": fp,
            "wall_ms_mean": statistics.fmean(wall), "wall_ms_p50": statistics.median(wall),
            "wall_ms_p90": wall[int(0.9 * (len(wall) - 1))],
            "cpu_ms_mean": statistics.fmean(r["cpu_ms"] for r in rows)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bench-dir", default=os.environ.get("RAGPLUGINS_BENCH", str(ROOT.parent / "shared" / "bench")))
    p.add_argument("--threads", type=int, default=None, help="torch.set_num_threads for this run.")
    p.add_argument("--backends", default="fidelity,nli,llm")
    p.add_argument("--out", default=str(OUT))
    args = p.parse_args()

    import torch

    from ragplugins.embeddings import load_embed_model
    from ragplugins.testing import FakeLLM
    from ragplugins_verifier import FidelityVerifier, LLMVerifier, NLIVerifier
    from ragplugins_verifier.cases import read_cases

    if args.threads:
        torch.set_num_threads(args.threads)
    cases = read_cases(CASES, root=args.bench_dir)
    results = {"cases": len(cases), "labels": dict(Counter(str(c.label) for c in cases)),
               "torch_threads": torch.get_num_threads(), "load_average_at_start": os.getloadavg(), "backends": {}}
    tmp = Path(tempfile.mkdtemp(prefix="verifier-bench-"))
    makers = {
        "fidelity": lambda: FidelityVerifier(embed_model=load_embed_model()),
        "nli": lambda: NLIVerifier(model=tiny_nli_model(tmp)),
        "llm": lambda: LLMVerifier(llm=FakeLLM(responder=all_supported, prompts=[])),
    }
    for name in args.backends.split(","):
        verifier = makers[name]()
        verifier.verify("warm-up", "The pump is rated for 52 watts.", ["The pump is rated for 52 watts."])
        cold = run(verifier, cases)
        warm = run(verifier, cases)  # same verifier: evidence units already embedded / parsed
        entry = {"rows": cold}
        for split in ("dev", "heldout", None):
            subset = [r for r in cold if split is None or r["split"] == split]
            entry[split or "all"] = summarise(subset)
        entry["warm"] = summarise(warm)
        entry["errors_by_kind"] = dict(Counter(r["kind"] for r in cold if r["label"] != r["grounded"]))
        results["backends"][name] = entry
        s = entry["all"]
        print(f"{name:9s} all acc {s['accuracy']:.3f} TPR {s['tpr']:.3f} TNR {s['tnr']:.3f} | "
              f"dev acc {entry['dev']['accuracy']:.3f} TNR {entry['dev']['tnr']:.3f} | heldout acc "
              f"{entry['heldout']['accuracy']:.3f} TPR {entry['heldout']['tpr']:.3f} TNR {entry['heldout']['tnr']:.3f} | "
              f"wall p50 {s['wall_ms_p50']:.1f} ms (warm {entry['warm']['wall_ms_p50']:.1f}) cpu mean {s['cpu_ms_mean']:.1f} ms")
    results["load_average_at_end"] = os.getloadavg()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=2))
    (out / "results.md").write_text(markdown(results))
    print(f"wrote {out / 'results.md'}")


def markdown(results) -> str:
    lines = [f"Cases: {results['cases']} (labels {results['labels']}), torch threads {results['torch_threads']}, "
             f"load average at start {tuple(round(x, 1) for x in results['load_average_at_start'])}, "
             f"at end {tuple(round(x, 1) for x in results['load_average_at_end'])}.", "",
             "| backend | split | n | accuracy | TPR | TNR | TP/FN/TN/FP | wall ms p50 / p90 | CPU ms mean |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, entry in results["backends"].items():
        for split in ("dev", "heldout", "all", "warm"):
            s = entry[split]
            label = "all (warm cache)" if split == "warm" else split
            lines.append(f"| {name} | {label} | {s['n']} | {s['accuracy']:.3f} | {s['tpr']:.3f} | {s['tnr']:.3f} | "
                         f"{s['tp']}/{s['fn']}/{s['tn']}/{s['fp']} | {s['wall_ms_p50']:.1f} / {s['wall_ms_p90']:.1f} | "
                         f"{s['cpu_ms_mean']:.1f} |")
    lines += ["", "Misclassified cases (fidelity):", ""]
    for r in results["backends"].get("fidelity", {}).get("rows", []):
        if r["label"] != r["grounded"]:
            why = "; ".join(x for u in r["unsupported"] for x in u["reasons"]) or "accepted"
            lines.append(f"- `{r['id']}` ({r['split']}, {r['kind']}, label {'grounded' if r['label'] else 'ungrounded'}): {why}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
