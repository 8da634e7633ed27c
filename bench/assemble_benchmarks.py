"""Write docs/benchmarks.md from the sections each benchmark's write-up lives in.

    python bench/assemble_benchmarks.py
"""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ORDER = [
    "unseen",
    "core",
    "speed",
    "startup",
    "install",
    "scaling",
    "ingest",
    "reliability",
    "crossref",
    "overview",
    "retry",
    "verifier",
    "decompose",
]
HEADER = """# Benchmarks

Every number was produced by a script in `bench/` on this repository's code, over the public corpora
in `../shared/bench` (or `$RAGPLUGINS_BENCH`) and the Debian documentation corpora `bench/debian_corpora.py`
extracts; the command stands above each table. Metrics are those of `../shared/bench/README.md` (recall@k,
nDCG@10; one query is about 0.014 nDCG@10 on `mixed`, 0.04 on a 24-query corpus: smaller differences are
noise; a feature that adds chunks can lower nDCG@10 while recall rises). 2 shared cores, no GPU: speed is
given as ratios measured side by side. Each plugin's full tables and history: `plugins/<name>/BENCHMARKS.md`.

**Targets (quality on the `test` split, run once after designing on `dev`):**

| target | met on test? |
|---|---|
| first stage at least LlamaIndex's own pipeline on nDCG@10 and R@10 (issue 14) | **met** on acq, acq+docs, git, postgres and the held-out policy and nodejs; **not met** on mixed, docs and python (R@10, 2 questions each; python against LlamaIndex's 1024/200 default, first run 2026-12-02 night), the held-out manpages (both metrics; its 1024-token chunks, R@10 4 questions) and, in nDCG@10 only, the held-out sqlite (0.450 against 0.453; R@10 met since the HTML reader drops site chrome found by what it is: test 0.383 / 0.583 -> 0.450 / 0.625). Pooled over 246 test questions: nDCG@10 +0.058 (standard error 0.022) and R@10 +0.008 (0.025) against LlamaIndex's default (since the HTML reader drops Sphinx's pilcrow permalinks, policy test 0.743 / 1.000 -> 0.811 / 0.963, and site chrome). Test run once with window scoring "either" (a chunk's dense part is the better of its places in the first-window and the windows' rankings), chosen on the dev split of nine corpora |
| overview and retry: no per-query regression (issue 14) | **met** on all eleven corpora, dev and test, R@10 and nDCG@10 (crossref too): overview changes no test list and 2 dev lists (its gate, order and merge changes since issue 14, each designed on dev and run once on test: Overview section); retry lowers no question |
| crossref hop higher on pointer questions (issue 14) | **met on postgres** (test pointer R@10 0.625 -> 0.875); the held-out policy at its ceiling (every pointer answer already in the top 10); **not met** on git, python and the held-out manpages, nodejs and sqlite (unchanged); no question lower on any split. Bringing the place a link's `#fragment` names first: equal on dev, one test question lost: rejected |
| crossref extraction precision >= 0.95, recall >= 0.8 (issue 14) | **met** on the dev and test splits (precision 1.000 on every split; recall dev / test): git 1.000 / 0.964, postgres 1.000 / 1.000, python 0.800 / 0.938, the held-out policy and manpages 1.000 / 1.000 on the first run and nodejs (first run recall 0.129: Markdown reference links were not read; 1.000 / 1.000 with the `md_reference` family) and sqlite (first run precision 0.935 / 0.923: a scorer artefact and a link into a folder not indexed resolved by file name to another page; 1.000 / 1.000 after both fixes, made after that first look) |
| +1 % new documents costs about 1 % of a full build (issue 16) | **met with the bundled MiniLM**: 1.0 % plugins off, 1.2 % on; without model time (hashing embedder) 6.5 % / 10.4 %, the fixed per-file listing and hashing |
| 1,000,000 chunks on S3, 1 and 2 Ray workers (issue 16) | **run**: plugins off 440 / 700 chunks/s with 1 / 2 workers, 3,044 bytes per chunk, hybrid query p50 / p99 5.1 / 5.7 s from 1 process, 15.2 / 20.4 s from 4 (local S3 server); **plugins on** (2 workers) 256 chunks/s, 5,605 bytes per chunk (flat from 10k), query p50 / p99 82 / 117 s from 1 process (2.3 GB read per query by flat dense scans on moto; 4.7 GB per query process), 4 processes not run |
| verifier accuracy and TNR >= 0.92, every kind >= 0.8 (issue 18) | **not met** on the fresh v5 test: accuracy 0.633, TNR 0.826 (v4 test: 0.716 / 0.842); one of nine kinds at 0.8. The only NLI checkpoint obtainable here (MiniLM fine-tuned on SNLI, built by `bench/train_nli.py`) is at chance alone (0.533) and leaves `fidelity+nli` equal to `fidelity`; a real checker (MiniCheck, DeBERTa-v3 MNLI) cannot be downloaded |

Sections: [unseen documents](#unseen-documents-the-first-stage-against-llamaindex-and-every-plugin-issue-14),
[core](#core-the-first-stage-against-llamaindexs-own-pipeline-issue-14), [speed](#speed-and-cost-issues-2-and-3),
[start-up](#start-up-issue-15), [install](#install-size-and-first-query-the-embedder-with-and-without-torch-issue-17),
[scaling](#scaling-issue-3), [reliability](#reliability-issue-19-crash-points-concurrent-writers-large-files),
[crossref](#crossref-references-between-documents-issue-4), [overview](#overview-issue-5-document-overviews-that-steer-the-first-stage),
[retry](#retry-issue-6-evidence-sufficiency-retry), [verifier](#verifier-issues-7-18-answer-verification),
[decompose](#decompose-issue-8-sub-query-scoring-at-the-rerank-stage).
"""


MORE = "<!-- more -->"


def main() -> None:
    """docs/benchmarks.md holds each section down to its ``<!-- more -->`` line; a plugin's whole
    section, history included, goes to plugins/<name>/BENCHMARKS.md, and any other section's stays in
    bench/sections/<name>.md, linked from the page."""
    parts = [HEADER]
    for name in ORDER:
        path = ROOT / "bench" / "sections" / f"{name}.md"
        if not path.exists():
            continue
        text = path.read_text().strip() + "\n"
        plugin_dir = ROOT / "plugins" / name
        if MORE in text:
            summary, _ = text.split(MORE, 1)
            if plugin_dir.is_dir():
                (plugin_dir / "BENCHMARKS.md").write_text(re.sub(r"\n*" + MORE + r"\n*", "\n\n", text))
                where = f"plugins/{name}/BENCHMARKS.md"
            else:
                where = f"bench/sections/{name}.md"
            text = summary.rstrip() + f"\n\nEvery table and the history: [{where}](../{where}).\n"
        parts.append(text)
    (ROOT / "docs" / "benchmarks.md").write_text("\n".join(parts))


if __name__ == "__main__":
    main()
