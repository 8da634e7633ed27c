"""Benchmark of the verifier backends on the labelled answer sets.

    python bench/bench_verifier.py --set v2 --split dev --backends fidelity   # tune on dev
    python bench/bench_verifier.py --set v2 --split test --backends fidelity  # the one final test run
    python bench/bench_verifier.py --set v1                                   # the 108 cases of issue 7

Torch runs on one thread unless ``--threads`` says otherwise (a shared 2-core machine).

``v2`` (bench/goldsets/verifier_cases_v2.jsonl, issue 18) points into the Debian documentation corpora
(``python bench/debian_corpora.py`` copies them to bench/corpora-debian/): each evidence item names a
corpus, a file, a verbatim anchor and a sentence count, and the passage is cut from the extracted text
here, at run time, so no document text is committed. Every case has a ``kind`` and a ``split`` (dev/test).
``v3`` (bench/goldsets/verifier_cases_v3.jsonl, issue 18's second round) is stored the same way over four
corpora the rules were not developed on, read where Debian installs them (``V3_ROOTS``: nodejs-doc's API
pages, valgrind's HTML manual, the Python 3.11 tutorial/howto/faq sources, PostgreSQL's libpq and PL/pgSQL
pages); its split rule is in the file's header.

    python bench/bench_verifier.py --set v3 --split dev                      # tune on dev
    python bench/bench_verifier.py --set v3 --split test                     # once, at the end

``v4`` (bench/goldsets/verifier_cases_v4.jsonl, issue 18's third round) is stored the same way over three more corpora
(``V4_ROOTS``: sqlite3-doc's HTML pages, bash-doc's reference manual, the gzipped GNU Info manuals of coreutils,
units, grep, gzip and wget). ``--check-only`` cuts a set's passages and prints its counts without verifying anything.
``v5`` (bench/goldsets/verifier_cases_v5.jsonl, issue 18's fourth round) is stored the same way over git-doc's HTML
pages, bzip2-doc's HTML manual and OpenSSH's gzipped roff manual pages (``V5_ROOTS``; ``_roff_text`` reads the roff).

``v1`` points into the benchmark corpora ($RAGPLUGINS_BENCH, default ../shared/bench): a PDF page or a
Markdown section per evidence item; nothing from the corpora is copied. Each case has a ``split``: ``dev``
cases were looked at while the fidelity backend was developed, ``heldout`` ones were not scored until
the final run. Positive class = grounded; TPR = grounded answers accepted, TNR = ungrounded answers rejected.

Backends measured:
- fidelity: the offline default, as shipped (bundled all-MiniLM-L6-v2).
- nli: a local sequence-classification checkpoint given with ``--nli-model DIR`` (``--nli-threshold``,
  ``--nli-max-length``); on this machine the one ``python bench/train_nli.py`` builds (MiniLM fine-tuned on SNLI).
- fidelity+nli: both, rejected if either rejects (the same ``--nli-*`` settings).
  ``--nli-sweep`` also prints, from the same run, what other nli thresholds would have given (the nli verdict's
  score is its weakest sentence's entailment probability, so this is exact for nli; fidelity+nli is decided as
  the combined backend does, from the fidelity and nli verdicts, when both are in ``--backends``). Dev only.

    python bench/bench_verifier.py --set v5 --split dev --backends fidelity,nli \
        --nli-model bench/.cache/nli-minilm-snli --nli-sweep
- llm: plumbing only, with a scripted LLM that calls every sentence supported (accuracy = base rate).
"""

from __future__ import annotations

import argparse
import functools
import gzip
import json
import os
import re
import statistics
import sys
import time
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "bench" / "goldsets" / "verifier_cases.jsonl"
CASES_V2 = ROOT / "bench" / "goldsets" / "verifier_cases_v2.jsonl"
CASES_V3 = ROOT / "bench" / "goldsets" / "verifier_cases_v3.jsonl"
CASES_V4 = ROOT / "bench" / "goldsets" / "verifier_cases_v4.jsonl"
CASES_V5 = ROOT / "bench" / "goldsets" / "verifier_cases_v5.jsonl"
# v3's corpora are read where Debian installs them (nodejs-doc, valgrind, python3.11-doc, postgresql-doc-15).
V3_ROOTS = {"nodejs": "/usr/share/doc/nodejs/api", "valgrind": "/usr/share/doc/valgrind/html",
            "pydocs": "/usr/share/doc/python3.11/html/_sources", "pgclient": "/usr/share/doc/postgresql-doc-15/html"}
# v4's corpora, also read where Debian installs them (sqlite3-doc, bash-doc, the GNU info manuals of coreutils,
# units, grep, gzip, sed, wget: gzipped Info text).
V4_ROOTS = {"sqlite": "/usr/share/doc/sqlite3", "bash": "/usr/share/doc/bash-doc", "info": "/usr/share/info"}
# v5's corpora: git-doc's HTML pages, bzip2-doc's HTML manual and gzipped roff manual pages (man5/ssh_config.5.gz,
# man1/ssh-keygen.1.gz, ...) read as text by _roff_text.
V5_ROOTS = {"git-doc": "/usr/share/doc/git-doc", "bzip2": "/usr/share/doc/bzip2", "man": "/usr/share/man"}
OUT = ROOT / "bench" / "results" / "verifier"
sys.path.insert(0, str(ROOT / "bench"))


class _HTMLText(HTMLParser):
    """The visible text of a DocBook HTML page: scripts, styles, <head> and the navigation bars skipped."""

    VOID = {"br", "img", "hr", "meta", "link", "input", "col", "wbr"}
    BLOCKS = {"p", "li", "dt", "dd", "tr", "h1", "h2", "h3", "h4", "pre", "div", "br"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        cls = dict(attrs).get("class") or ""
        if tag in ("script", "style", "head") or (tag == "div" and cls in ("navheader", "navfooter")):
            self.skip += 1
        elif self.skip and tag not in self.VOID:
            self.skip += 1
        if tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag):
        if self.skip and tag not in self.VOID:
            self.skip -= 1

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


@functools.cache
def corpus_text(root: str, corpus: str, file: str) -> str:
    """A corpus file's text with all whitespace collapsed (HTML pages: their visible text)."""
    path = Path(root) / corpus / file
    if not path.is_file():
        if root.startswith("/usr/share"):  # v3-v5 read what Debian's documentation packages install
            raise SystemExit(f"{path} is missing: install the Debian package that ships it (v3: nodejs-doc "
                             "valgrind python3.11-doc postgresql-doc-15; v4: sqlite3-doc bash-doc units; "
                             "v5: git-doc bzip2-doc openssh-client)")
        raise SystemExit(f"{path} is missing: run python bench/debian_corpora.py {corpus}")
    if path.suffix == ".gz":
        raw = gzip.decompress(path.read_bytes()).decode("utf-8", errors="replace")
    else:
        raw = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".html":
        parser = _HTMLText()
        parser.feed(raw)
        raw = "".join(parser.parts)
    if re.fullmatch(r"man\d\w*", path.parent.name):
        raw = _roff_text(raw)
    return re.sub(r"\s+", " ", raw).strip()


_ROFF_ESCAPES = [(re.compile(p), r) for p, r in [
    (r"\\f(\[[^]]*\]|\(..|.)", ""), (r"\\s[-+]?\d", ""), (r"\\\*\((Lq|lq)", "\u201c"), (r"\\\*\((Rq|rq)", "\u201d"),
    (r"\\\(em", "\u2014"), (r"\\\(en", "\u2013"), (r"\\\(aq", "'"), (r"\\\(dq", '"'), (r"\\\(co", "\u00a9"),
    (r"\\\(.." , ""), (r"\\\*\(..", ""), (r"\\\*.", ""), (r"\\[&|^%:]", ""), (r"\\-", "-"), (r"\\e", "\\\\"),
    (r"\\ ", " "), (r"\\~", " "), (r"\\c", "")]]

# mdoc macros that may be called inside another macro's line (.It Cm Port): dropped, their arguments kept.
_MDOC_CALLS = {"Ns", "Ar", "Cm", "Fl", "Li", "Pq", "Op", "Dq", "Sq", "Ql", "Em", "Pa", "Va", "Ev", "Nm", "Xo", "Xc",
               "No", "Sy", "Ic", "Aq", "Brq", "Oo", "Oc", "Sx", "Dv", "Er", "Fn", "Fa", "Qq", "Xr"}


def _mdoc_words(args: str) -> str:
    """A macro line's arguments without the nested macro names; the word after Fl gets its dash back (Fl o: -o)."""
    words, dash = [], False
    for word in args.replace('"', "").split():
        if word in _MDOC_CALLS:
            dash = word == "Fl"
            continue
        words.append("-" + word if dash and re.match(r"[A-Za-z0-9]", word) else word)
        dash = False
    return " ".join(words)


def _roff_text(raw: str) -> str:
    """A manual page's words without its formatting: comment and request lines without text are dropped, a macro
    line (.B, .Nm, .Cm, .Fl ...) keeps its arguments (mdoc flags get their dash back: .Fl o is -o), font and
    character escapes are removed or replaced by the character they name. Not groff's layout, but deterministic
    and independent of the installed man/groff versions."""
    lines, page = [], ""
    for line in raw.splitlines():
        if line.startswith((".\\\"", "'\\\"")) or line.strip() in (".", "'"):
            continue
        if line.startswith((".", "'")):
            name, _, rest = line[1:].strip().partition(" ")
            if name in ("TH", "Dd", "Dt", "Os", "de", "ds", "nr", "if", "ie", "el", "so", "ft", "ps", "ll", "in",
                        "ta", "ti", "ne", "na", "nh", "hy", "ad", "bd", "ed", "Bl", "El", "Bd", "Ed", "Pp", "PP",
                        "P", "LP", "br", "sp", "fi", "nf", "RS", "RE", "TP", "IP", "HP", "Sh", "SH", "SS", "Ss",
                        "It", "TS", "TE"):
                if name in ("Sh", "SH", "SS", "Ss", "It", "IP"):  # headings and list items keep their words
                    lines.append(_mdoc_words(rest) + ".")
                continue
            if name == "Nm":  # .Nm without an argument repeats the page's name (the first .Nm's argument)
                if not rest.strip():
                    rest = page
                elif not page:
                    page = rest.split()[0]
            elif name == "Fl":
                rest = "Fl " + rest
            elif name == "Xr":
                parts = rest.split()
                rest = f"{parts[0]}({parts[1]})" + " ".join(parts[2:]) if len(parts) > 1 else rest
            elif name in ("Dq", "Do", "Qq"):
                rest = f"\u201c{rest}\u201d"
            line = _mdoc_words(rest)
        for pattern, replacement in _ROFF_ESCAPES:
            line = pattern.sub(replacement, line)
        lines.append(line)
    return "\n".join(lines)


# A sentence ends at . ! or ? followed by space and something that can start one (AsciiDoc options start with -).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`'\"(*:\[-])")


def passage(root: str, corpus: str, file: str, anchor: str, sentences: int) -> str:
    """The evidence a v2 case means: from its verbatim anchor on, ``sentences`` sentences long."""
    text = corpus_text(root, corpus, file)
    at = text.find(anchor)
    if at < 0:
        raise SystemExit(f"anchor {anchor!r} is not in {corpus}/{file}: is the extracted corpus another version?")
    ends = [m.start() for m in _SENTENCE_END.finditer(text, at)] + [len(text)]
    return text[at:ends[min(sentences, len(ends)) - 1]].strip()


def read_v2(path: Path, root: str | dict[str, str]):
    """The v2/v3 cases with their evidence passages cut from the Debian corpora (``root``: one folder holding
    every corpus, or a folder per corpus)."""
    from ragplugins_verifier.base import Evidence
    from ragplugins_verifier.cases import Case

    cases = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("//"):
            continue
        row = json.loads(line)
        evidence = []
        for i, item in enumerate(row["evidence"]):
            if isinstance(root, dict):
                corpus_root, corpus = str(Path(root[item["corpus"]]).parent), Path(root[item["corpus"]]).name
            else:
                corpus_root, corpus = root, item["corpus"]
            text = passage(corpus_root, corpus, item["file"], item["anchor"], item["sentences"])
            if item.get("append"):
                text = f"{text} {item['append']}"
            evidence.append(Evidence(f"{item['corpus']}/{item['file']}#{i}", text))
        cases.append(Case(id=row["id"], question=row["question"], answer=row["answer"], evidence=evidence,
                          label=bool(row["label"]), fields={"kind": row["kind"], "split": row["split"]}))
    return cases


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
                     "sentences": len(verdict.sentences),
                     "wall_ms": (time.perf_counter() - wall) * 1000, "cpu_ms": (time.process_time() - cpu) * 1000,
                     "unsupported": [{"text": s.text, "reasons": [_no_quotes(r) for r in s.reasons]}
                                     for s in verdict.unsupported],
                     "error": verdict.error})
    return rows


def _no_quotes(reason: str) -> str:
    """Reasons quote the evidence; the corpora stay out of the repository, so drop every quotation."""
    return re.sub(r'"[^"]*"', "<quoted>", reason)


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
            "cpu_ms_mean": statistics.fmean(r["cpu_ms"] for r in rows),
            "cpu_ms_p50": statistics.median(r["cpu_ms"] for r in rows)}


def load_set(args):
    from ragplugins_verifier.cases import read_cases

    if args.set == "v1":
        return read_cases(CASES, root=args.bench_dir)
    if args.set == "v2":
        return read_v2(CASES_V2, args.debian_dir)
    if args.set == "v3":
        return read_v2(CASES_V3, V3_ROOTS)
    if args.set == "v4":
        return read_v2(CASES_V4, V4_ROOTS)
    return read_v2(CASES_V5, V5_ROOTS)


def check_only(args) -> None:
    """The mechanics of a set without running any verifier: every evidence passage is cut, non-empty and holds
    its anchor (v2-v4); prints the cases per kind, label and split."""
    cases = load_set(args)
    path = {"v2": CASES_V2, "v3": CASES_V3, "v4": CASES_V4, "v5": CASES_V5}.get(args.set)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("//")] if path else []
    for case, row in zip(cases, rows):
        for evidence, item in zip(case.evidence, row["evidence"]):
            if not evidence.text.strip() or item["anchor"] not in evidence.text:
                raise SystemExit(f"{case.id}: the passage cut from {item['corpus']}/{item['file']} is empty or "
                                 f"lacks its anchor {item['anchor']!r}")
    counts = Counter((c.fields.get("kind"), "grounded" if c.label else "ungrounded", c.fields.get("split"))
                     for c in cases)
    for key in sorted(counts, key=str):
        print(*key, counts[key], sep="\t")
    print(f"{args.set}: {len(cases)} cases, {sum(len(c.evidence) for c in cases)} evidence passages cut, "
          f"splits {dict(Counter(c.fields.get('split') for c in cases))}")


BACKENDS = ("fidelity", "nli", "fidelity+nli", "llm")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--set", choices=["v1", "v2", "v3", "v4", "v5"], default="v2",
                   help="v1: the 108 cases of issue 7; v2-v5: issue 18 (v3-v5 over corpora earlier rules never saw).")
    p.add_argument("--split", default="all", help="dev, test (v2) / heldout (v1), or all.")
    p.add_argument("--bench-dir", default=os.environ.get("RAGPLUGINS_BENCH", str(ROOT.parent / "shared" / "bench")),
                   help="v1: the benchmark corpora.")
    p.add_argument("--debian-dir", default=str(ROOT / "bench" / "corpora-debian"),
                   help="v2: the extracted Debian documentation (python bench/debian_corpora.py).")
    p.add_argument("--threads", type=int, default=1, help="torch.set_num_threads for this run (default 1).")
    p.add_argument("--backends", default="fidelity", help=f"comma-separated: {', '.join(BACKENDS)}")
    p.add_argument("--nli-model", default=None,
                   help="local directory of an NLI checkpoint (nli, fidelity+nli), e.g. bench/.cache/nli-minilm-snli.")
    p.add_argument("--nli-threshold", type=float, default=0.5, help="nli: minimum entailment of every sentence.")
    p.add_argument("--nli-max-length", type=int, default=None, help="nli: tokens per (evidence window, sentence) "
                                                                    "input; default the model's limit.")
    p.add_argument("--nli-sweep", action="store_true", help="also print accuracy at other nli thresholds (dev only).")
    p.add_argument("--out", default=None, help="default bench/results/verifier/<set>-<split>")
    p.add_argument("--check-only", action="store_true",
                   help="cut every case's evidence and print the counts per kind, label and split; verify nothing.")
    args = p.parse_args()
    if args.check_only:
        check_only(args)
        return

    names = args.backends.split(",")
    unknown = [n for n in names if n not in BACKENDS]
    if unknown:
        p.error(f"--backends: unknown {', '.join(unknown)}; choose from {', '.join(BACKENDS)}")
    if any("nli" in n for n in names):
        if not args.nli_model:
            p.error(f"--backends {args.backends} needs --nli-model DIR (a local NLI checkpoint, e.g. one built by "
                    "python bench/train_nli.py)")
        if not Path(args.nli_model, "config.json").is_file():
            p.error(f"--nli-model {args.nli_model}: no config.json there; give the directory save_pretrained wrote")

    import torch

    from ragplugins.embeddings import load_embed_model
    from ragplugins.testing import FakeLLM
    from ragplugins_verifier import FidelityVerifier, LLMVerifier, NLIVerifier
    from ragplugins_verifier.combined import CombinedVerifier

    torch.set_num_threads(args.threads)
    cases = load_set(args)
    if args.split != "all":
        cases = [c for c in cases if c.fields.get("split") == args.split]
    results = {"set": args.set, "split": args.split, "cases": len(cases),
               "labels": dict(Counter(str(c.label) for c in cases)), "torch_threads": torch.get_num_threads(),
               "load_average_at_start": os.getloadavg(), "backends": {}}
    if any("nli" in n for n in names):
        results["nli"] = {"model": args.nli_model, "threshold": args.nli_threshold, "max_length": args.nli_max_length}
    nli = functools.partial(NLIVerifier, model=args.nli_model, threshold=args.nli_threshold,
                            max_length=args.nli_max_length)
    makers = {
        "fidelity": lambda: FidelityVerifier(embed_model=load_embed_model()),
        "nli": nli,
        "fidelity+nli": lambda: CombinedVerifier(first=FidelityVerifier(embed_model=load_embed_model()), second=nli()),
        "llm": lambda: LLMVerifier(llm=FakeLLM(responder=all_supported, prompts=[])),
    }
    for name in names:
        verifier = makers[name]()
        # Warm-up: the embedder, and pint's unit registry (built once, on first conversion).
        verifier.verify("warm-up", "The boiler holds 2,500 ml.", ["The boiler holds 2.5 litres."])
        rows = run(verifier, cases)
        entry = {"rows": rows, "all": summarise(rows)}
        short = [r for r in rows if r["sentences"] <= 5]
        entry["up_to_5_sentences"] = summarise(short) if short else None
        # Accepted answers are the ones that may reach the embedder: their latency is the one to watch.
        accepted = [r for r in rows if r["grounded"]]
        entry["accepted"] = summarise(accepted) if accepted else None
        entry["by_kind"] = {k: summarise([r for r in rows if r["kind"] == k])
                            for k in sorted({r["kind"] for r in rows}, key=str)}
        results["backends"][name] = entry
        s = entry["all"]
        print(f"{name:9s} {args.set}/{args.split} n={s['n']} acc {s['accuracy']:.3f} TPR {_f(s['tpr'])} "
              f"TNR {_f(s['tnr'])} "
              f"| wall p50 {s['wall_ms_p50']:.1f} ms p90 {s['wall_ms_p90']:.1f} ms, CPU p50 {s['cpu_ms_p50']:.1f} ms")
        for kind, k in entry["by_kind"].items():
            print(f"   {str(kind):16s} n={k['n']:3d} acc {k['accuracy']:.3f} TPR {_f(k['tpr'])} TNR {_f(k['tnr'])}")
    if args.nli_sweep and "nli" in results["backends"]:
        results["nli_sweep"] = sweep(results["backends"])
    results["load_average_at_end"] = os.getloadavg()
    out = Path(args.out or OUT / f"{args.set}-{args.split}")
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=2))
    (out / "results.md").write_text(markdown(results))
    print(f"wrote {out / 'results.md'}")


def sweep(backends) -> list[str]:
    """Accuracy at other nli thresholds from one run: an nli verdict is grounded when its score (the weakest
    sentence's entailment probability) reaches the threshold and it has no error; fidelity+nli as the combined
    backend decides, from the fidelity and nli verdicts of the same case (when fidelity ran too): both accept,
    a backend that found nothing to check leaves the case to the other, neither finding anything rejects."""
    from ragplugins_verifier.base import NOTHING_CHECKABLE

    nli = backends["nli"]["rows"]
    fidelity = backends.get("fidelity", {}).get("rows")
    lines = []
    for t in (0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
        alone = [r | {"grounded": not r["error"] and r["score"] >= t} for r in nli]
        line = f"sweep nli >= {t:.3f}: {_short(summarise(alone))}"
        if fidelity:
            both = []
            for f, a in zip(fidelity, alone):
                idle = [r["error"] == NOTHING_CHECKABLE for r in (f, a)]
                grounded = (f["grounded"] or idle[0]) and (a["grounded"] or idle[1]) and not all(idle)
                both.append(f | {"grounded": grounded})
            line += f" | fidelity+nli: {_short(summarise(both))}"
        print(line)
        lines.append(line)
    return lines


def _short(s) -> str:
    return f"acc {s['accuracy']:.3f} TPR {_f(s['tpr'])} TNR {_f(s['tnr'])}"


def _f(value) -> str:
    return "-" if value is None else f"{value:.3f}"


def markdown(results) -> str:
    lines = [f"Set {results['set']}, split {results['split']}: {results['cases']} cases (labels {results['labels']}), "
             f"torch threads {results['torch_threads']}, load average at start "
             f"{tuple(round(x, 1) for x in results['load_average_at_start'])}, at end "
             f"{tuple(round(x, 1) for x in results['load_average_at_end'])}.", "",
             "| backend | kind | n | accuracy | TPR | TNR | TP/FN/TN/FP | wall ms p50 / p90 | CPU ms p50 |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, entry in results["backends"].items():
        rows = [("**all**", entry["all"])] + list(entry["by_kind"].items())
        if entry.get("up_to_5_sentences"):
            rows.append(("answers of <= 5 sentences", entry["up_to_5_sentences"]))
        if entry.get("accepted"):
            rows.append(("answers accepted (latency)", entry["accepted"]))
        for kind, s in rows:
            lines.append(f"| {name} | {kind} | {s['n']} | {s['accuracy']:.3f} | {_f(s['tpr'])} | {_f(s['tnr'])} | "
                         f"{s['tp']}/{s['fn']}/{s['tn']}/{s['fp']} | {s['wall_ms_p50']:.1f} / {s['wall_ms_p90']:.1f} | "
                         f"{s['cpu_ms_p50']:.1f} |")
    if results.get("nli"):
        lines += ["", f"NLI settings: {results['nli']}"]
    if results.get("nli_sweep"):
        lines += ["", "Other nli thresholds, from the same run (`--nli-sweep`, dev only):", ""]
        lines += [f"- {line}" for line in results["nli_sweep"]]
    for name, entry in results["backends"].items():
        lines += ["", f"Misclassified ({name}):", ""]
        for r in entry["rows"]:
            if r["label"] != r["grounded"]:
                why = "; ".join(x for u in r["unsupported"] for x in u["reasons"]) or r["error"] or "accepted"
                lines.append(f"- `{r['id']}` ({r['split']}, {r['kind']}, label "
                             f"{'grounded' if r['label'] else 'ungrounded'}): {why}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
