"""Write docs/benchmarks.md from the sections each benchmark's write-up lives in.

    python bench/assemble_benchmarks.py
"""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ORDER = [
    "unseen",
    "core",
    "speed",
    "startup",
    "install",
    "scaling",
    "reliability",
    "crossref",
    "overview",
    "retry",
    "verifier",
    "decompose",
]
HEADER = """# Benchmarks

Every number on this page was produced by a script in `bench/` on this repository's code, reading
the public corpora and gold sets from `../shared/bench` (or `$RAGPLUGINS_BENCH`) and the Debian
documentation corpora that `bench/debian_corpora.py` extracts; the command that
reproduces each table stands above it. Metrics are exactly those of `../shared/bench/README.md`
(recall@5/10/20 and nDCG@10 on the first-stage and the final list; one query is about 0.014
nDCG@10 on `mixed` and 0.04 on a 24-query corpus: smaller differences are noise). The machine has
2 shared cores and no GPU: absolute times are noisy, so speed is reported as ratios measured side
by side. Note on nDCG@10 for features that add chunks: the ideal ranking is computed from the same
list, so appending a relevant chunk can lower nDCG while recall rises.
"""


MORE = "<!-- more -->"


def main() -> None:
    """docs/benchmarks.md holds each section down to its ``<!-- more -->`` line; a plugin's whole
    section, history included, goes to plugins/<name>/BENCHMARKS.md."""
    parts = [HEADER]
    for name in ORDER:
        path = ROOT / "bench" / "sections" / f"{name}.md"
        if not path.exists():
            continue
        text = path.read_text().strip() + "\n"
        plugin_dir = ROOT / "plugins" / name
        if MORE in text and plugin_dir.is_dir():
            summary, _ = text.split(MORE, 1)
            (plugin_dir / "BENCHMARKS.md").write_text(text.replace(MORE + "\n", ""))
            text = summary.rstrip() + f"\n\nEvery table and the history: [plugins/{name}/BENCHMARKS.md]" \
                                      f"(../plugins/{name}/BENCHMARKS.md).\n"
        parts.append(text)
    (ROOT / "docs" / "benchmarks.md").write_text("\n".join(parts))


if __name__ == "__main__":
    main()
