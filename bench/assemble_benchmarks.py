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
| first stage at least LlamaIndex's own pipeline on nDCG@10 and R@10 (issue 14) | **met against LlamaIndex's default** (1024/200) on eleven of thirteen corpora (all but python and manpages), and against its 512/50 setting on all but mixed and docs (one R@10 question each); **not met** on python (R@10, 2 questions) and the held-out manpages (both metrics; R@10 3 questions), where ragplugins leads on 28 fresh dev questions each (R@10 python 0.893 against 0.714, manpages 1.000 against 0.786). Pooled over 279 test questions against the default: nDCG@10 +0.117 (standard error 0.020), R@10 +0.057 (0.021). The held-out policy questions as 22 Word files, and the held-out manual pages as groff prints them to text (pages, running headers, hyphens; 0.704 against 0.741): **R@10 one question short** on test. New users' sets: at or above it on fifty (rsyslog's twice, another user's questions; Vim's help files, Erlang/OTP's manuals, cairo's gtk-doc manual, libxml2's site, requests', Jinja's Sphinx pages, GTK 4's gi-docgen reference), dev and test; on Postfix's pages above it on test, on dev **one R@10 question below** the peer whose chunks are stripped of tags without spaces (pf15, at place 16); on Perl's POD pages above it on dev, **below it on test** (R@10 0.833 against 0.917: pl16, its answer at place 13 since POD is read as perldoc shows it; at place 2 read raw, 0.003 below in nDCG@10); on NTPsec's above it at k = 20, **below it at k = 3 on test** (R@3 0.583 against 0.667: one question); on Celery's Sphinx pages **below it on test R@10** (0.750 against 0.833: one paraphrase at place 11) (each set: `bench/sections/core.md`); **below it on dev** on bash's documentation folder (k = 20 nDCG@10 0.668 against 0.670; k = 3 R@3 0.667 against 0.750), on HAProxy's manuals (R@10 0.667 against 0.833: two paraphrases; on test R@3 0.583 against 0.667) and on MkDocs' pages (R@10 0.917 against 1.000: one question, a chunk of six short sections); on Sphinx's own documentation above it at k = 20, **below it at k = 3 on test** (R@3 0.500 against 0.667; the peer's hits mostly in the `_sources` copies it reads beside each page). Per set, and history: the core section |
| overview and retry: no per-query regression (issue 14) | **met** on all thirteen corpora, dev and test, in R@10 and nDCG@10 (crossref too since 2026-12-04 night: its one dev regression, nodejs_q15, is gone). Overview changes 1 dev list (sqlite) and no test list; retry lowers no question (it retried in none of 617 runs since nodejs's Markdown is read as its pages show it (once before), kept none). Overview leaves a list of fewer than four candidates (`top_k = 3`), where it lowered three new users' answers. Retry lowered a new user's Python-Markdown question (pm23, by respelling the "sub" of "sub-items"); a hyphenated word of prose is no longer split, and that set's retry arm equals plugins off. History: the overview and retry sections |
| crossref hop higher on pointer questions (issue 14) | **not met on the test splits**: the first stage already finds the pointer answers the hop used to bring, so pointer R@10 and nDCG@10 are unchanged on every test split; on dev R@10 is higher on five pointer questions (git_d12, git_d20, postgres_h05, python_d13, python_h03); at k = 3 on the public acq pointer questions 0.977 -> 1.000. **Never lower** on any split of the thirteen corpora; of seventy-six new users' sets one question is lower (Django's dj16, k = 20); at k = 20 it raised a test question's R@10 on two of them (libssh's ls20, the Rust Reference's rr24) and a dev question's on cairo's (ca21). History: the crossref section |
| crossref extraction precision >= 0.95, recall >= 0.8 (issue 14) | **met** on every dev and test split of nine corpora: git, postgres, python and the held-out policy, manpages, nodejs, sqlite and exim (precision 1.000 everywhere; lowest recall python dev 0.800, exim test 0.875), and a new user's docutils reStructuredText sources (dev / test precision 0.952 / 0.975, recall 0.909 / 1.000; its test a second look). Per corpus, first runs and fixes: the crossref section |
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
