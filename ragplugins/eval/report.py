"""Markdown tables and a PNG chart of an EvalRun."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

COLUMNS = [("first.ndcg@10", "1st nDCG@10"), ("first.recall@10", "1st R@10"), ("final.recall@5", "R@5"),
           ("final.recall@10", "R@10"), ("final.recall@20", "R@20"), ("final.ndcg@10", "nDCG@10"),
           ("final_len", "len"), ("latency_ms_p50", "p50 ms"), ("latency_ms_p90", "p90 ms")]


def _fmt(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 100 else f"{value:.0f}"
    return str(value)


def table(run, k: int, slice: str = "all", arms: Sequence[str] | None = None,
          extra: Sequence[str] = (), metrics: bool = True) -> str:
    """One row per arm: the metrics (unless ``metrics`` is false) and the ``extra`` summary columns."""
    cols = (list(COLUMNS) if metrics else []) + [(e, e) for e in extra]
    head = "| arm | n | " + " | ".join(c[1] for c in cols) + " |"
    lines = [head, "|" + "---|" * (len(cols) + 2)]
    for arm in arms or run.arms:
        s = run.summary(arm, k, slice)
        if not s.get("n"):
            continue
        name = arm if s.get("k_used", k) == k else f"{arm} (k={s['k_used']})"
        lines.append(f"| {name} | {s['n']} | " + " | ".join(_fmt(s.get(c[0])) for c in cols) + " |")
    return "\n".join(lines)


def instrument_keys(run) -> list[str]:
    """The '<plugin>.<name>' measurements some row of ``run`` carries."""
    return sorted({key for r in run.rows for key in r["instrument"]})


def markdown(run) -> str:
    out = [f"# ragplugins eval: {', '.join(run.meta.get('corpus', []))}", "",
           f"{run.meta.get('n_queries')} queries; embedder {run.meta.get('embedder')}; seed {run.meta.get('seed')}.",
           ""]
    instrument = instrument_keys(run)
    for k in run.ks:
        for sl in run.slices():
            if sl != "all" and not sl.startswith(("requires_crossref", "control", "multi_document")):
                continue
            out += [f"## k = {k}, slice: {sl}", "", table(run, k, sl, extra=instrument), ""]
    if len(run.arms) > 1:
        out += ["## Per-query changes against the first arm (final nDCG@10)", ""]
        for k in run.ks:
            for arm in run.arms[1:]:
                c = run.compare(run.arms[0], arm, k)
                out.append(f"- k={k} {arm}: improved {len(c['improved'])} {c['improved']}, "
                           f"regressed {len(c['regressed'])} {c['regressed']}, unchanged {len(c['unchanged'])}")
        out.append("")
    out += ["## Checks", "",
            f"- coverage gate: {len(run.coverage_failures)} rows with an expected string in no chunk"
            + (f": {[f['id'] for f in run.coverage_failures]}" if run.coverage_failures else ""),
            f"- invariant ({run.invariant.get('rule')}): {run.invariant.get('checked')} lists checked, "
            f"offenders: {run.invariant.get('offenders') or 'none'}", ""]
    return "\n".join(out)


def chart_missing() -> str | None:
    """Why no chart.png can be drawn (matplotlib is the ``eval`` extra), or None when it can."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return "matplotlib is not installed, so no chart.png is drawn (pip install 'ragplugins[eval]' for it)"
    return None


def chart(run, path: str | Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(5, 1.2 * len(run.arms) * len(run.ks)), 3.5))
    width = 0.8 / max(1, len(run.arms))
    for i, arm in enumerate(run.arms):
        xs = [j + i * width for j in range(len(run.ks))]
        ys = [run.summary(arm, k).get("final.ndcg@10") or 0 for k in run.ks]
        ax.bar(xs, ys, width, label=arm)
    ax.set_xticks([j + width * (len(run.arms) - 1) / 2 for j in range(len(run.ks))])
    ax.set_xticklabels([f"k={k}" for k in run.ks])
    ax.set_ylabel("final nDCG@10")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    ax.set_title(", ".join(run.meta.get("corpus", [])))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
