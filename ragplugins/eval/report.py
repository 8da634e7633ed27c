"""Markdown tables and a PNG chart of an EvalRun."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

QUALITY = [("first.recall@10", "1st R@10"), ("first.ndcg@10", "1st nDCG@10"), ("final.recall@5", "R@5"),
           ("final.recall@10", "R@10"), ("final.recall@20", "R@20"), ("final.ndcg@10", "nDCG@10")]
COST = [("final_len", "list length"), ("latency_ms_p50", "p50 ms"), ("latency_ms_p90", "p90 ms")]
SLICE = [("final.recall@10", "R@10"), ("final.ndcg@10", "nDCG@10")]
COLUMNS = QUALITY + COST

# What differs between two instances of one reason: what it quotes, the files it names, its numbers.
_DETAIL = re.compile(r"'[^']*'|\"[^\"]*\"|[\w.~-]*\w[./][\w./~-]*\w|\d+(?:\.\d+)?")


def _fmt(value, key: str = "") -> str:
    """One format per kind of number: ms with one decimal, everything else with three."""
    if value is None:
        return "-"
    if isinstance(value, bool) or not isinstance(value, float):
        return str(value)
    return (
        f"{value:.1f}" if key.endswith(("_ms", "ms_p50", "ms_p90", "ms_mean")) or key == "final_len" else f"{value:.3f}"
    )


def longest_list(run, k: int, stage: str = "final") -> int:
    """The most chunks a ``stage`` list at ``k`` held: k, or more where a plugin adds chunks to the final list
    (crossref's hop appends to a list shorter than its window)."""
    return max([k, *(r[stage].get("len", 0) for r in run.rows if r["k"] == k)])


def at_k(columns: Sequence[tuple[str, str]], k: int, first: int | None = None,
         asked: int | None = None) -> list[tuple[str, str]]:
    """``columns`` labelled for lists of at most ``k`` chunks (the first stage's of at most ``first``, when
    given): a cutoff above the list's length measures the whole list, so R@10 at k = 3 is shown as R@3, once
    (R@5, R@10 and R@20 would be three copies of it). Where a plugin made some final list longer than the
    ``asked`` k, the final list's recall and nDCG at that k come first (R@3 beside the whole list's R@4)."""
    if asked is not None and asked < min(k, 10) and any(key.startswith("final.") for key, _ in columns):
        at = [(f"final.recall@{asked}", f"R@{asked}"), (f"final.ndcg@{asked}", f"nDCG@{asked}")]
        firsts = [c for c in columns if c[0].startswith("first.")]
        columns = [*firsts, *at, *(c for c in columns if not c[0].startswith("first."))]
    out: list[tuple[str, str]] = []
    for key, label in columns:
        cutoff = key.rpartition("@")[2]
        longest = first if first is not None and key.startswith("first.") else k
        if cutoff.isdigit() and int(cutoff) > longest:
            label = label.replace(f"@{cutoff}", f"@{longest}")
        if all(shown != label for _, shown in out):
            out.append((key, label))
    return out


def table(run, k: int, slice: str = "all", arms: Sequence[str] | None = None,
          extra: Sequence[str] = (), metrics: bool = True, columns: Sequence[tuple[str, str]] | None = None) -> str:
    """One row per arm: ``columns`` (default: quality metrics, unless ``metrics`` is false) and the
    ``extra`` summary columns."""
    cols = at_k(columns if columns is not None else QUALITY if metrics else [], longest_list(run, k),
                longest_list(run, k, "first"), asked=k) + [(e, e) for e in extra]
    head = "| arm | n | " + " | ".join(c[1] for c in cols) + " |"
    lines = [head, "|" + "---|" * (len(cols) + 2)]
    for arm in arms or run.arms:
        s = run.summary(arm, k, slice)
        if not s.get("n"):
            continue
        name = arm if s.get("k_used", k) == k else f"{arm} (k={s['k_used']})"
        lines.append(f"| {name} | {s['n']} | " + " | ".join(_cell(s, c[0]) for c in cols) + " |")
    return "\n".join(lines)


def _cell(summary: dict, key: str) -> str:
    """A summary value; a plugin's measurement recorded on fewer questions than the row's n says on how many
    (a mean over the 3 questions where the hop fired is not a mean over all 24)."""
    counted = summary.get(f"{key}.n")
    cell = _fmt(summary.get(key), key)
    return cell if counted is None or counted == summary.get("n") else f"{cell} (of {counted})"


def identical_arms_note(run) -> str | None:
    groups = run.meta.get("identical_arms") or []
    if not groups:
        return None
    return ("arms with identical configs (their numbers differ only by noise): "
            + "; ".join(" = ".join(g) for g in groups))


def instrument_keys(run) -> list[str]:
    """The '<plugin>.<name>' measurements some row of ``run`` carries."""
    return sorted({key for r in run.rows for key in r["instrument"]})


# An instrument value is recorded where the plugin had something to say (``hit_expected_source`` only where it
# hopped), so its mean is over those questions, not all of them.
INSTRUMENT_MEAN = ("each the mean over the questions where the plugin recorded it; \"(of 3)\": recorded on 3 of the "
                   "row's n")


def changes(run) -> list[str]:
    """Per arm after the first and k: the questions whose final nDCG@10 rose or fell against the first arm."""
    out = []
    for k in run.ks:
        for arm in run.arms[1:]:
            c = run.compare(run.arms[0], arm, k)
            said = [f"{what} {len(c[what])} {c[what]}" for what in ("improved", "regressed")]
            if c["appended"]:   # "reordered" misread two new users' lists that only grew
                said.append(f"chunks appended with the same score {len(c['appended'])} {c['appended']}")
            if c["reordered"]:
                said.append(f"reordered with the same score {len(c['reordered'])} {c['reordered']}")
            said.append(f"unchanged {len(c['unchanged'])}")
            line = f"k={k} {arm} ({at_k([('ndcg@10', 'nDCG@10')], longest_list(run, k))[0][1]}): " + ", ".join(said)
            mine, theirs = (run.summary(a, k).get("final_len", 0.0) for a in (arm, run.arms[0]))
            if mine > theirs + 1e-9 and not _budget_matched(run, arm):
                # A plugin that appends chunks is scored on a longer list: part of a gain can be the length.
                line += (f"; its lists are longer ({_mean_length(mine, theirs)} against {_mean_length(theirs, mine)} "
                         f"chunks on average): `--budget-control {arm}` adds plugins off at that length")
            out.append(line)
    return out


def idle_plugins(run) -> list[str]:
    """Per k and plugin of an arm: a plugin that decided on the arm's questions and changed no list, with the reason it
    gave most often ("no resolved references in the top candidates" on a one-document set), so that a column of
    zeros reads as "nothing to do here", not as a plugin that is broken or off."""
    out = []
    for k in run.ks:
        for arm in run.arms:
            rows = [r for r in run.rows if r["arm"] == arm and r["k"] == k]
            by_plugin: dict[str, list[dict]] = {}
            for r in rows:
                for decision in r.get("decisions") or []:
                    by_plugin.setdefault(decision.get("plugin", "?"), []).append(decision)
            for plugin, decisions in sorted(by_plugin.items()):
                if any(d.get("changed") for d in decisions):
                    continue
                # A reason counts with its details masked: "no clear margin (0.031 < 0.05)" and "(0.012 < 0.05)" are
                # one reason (a new user's report counted 1 of 24 where 23 gave it), and so are crossref's "the best
                # pointer, '[VTYSH](vtysh.html#vty-shell)' in setup.html -> vtysh.html: under the gate" and another
                # pointer's (FRRouting's user read "2 of 24" where 9 were under the gate).
                said = [str(d.get("reason") or "no reason recorded") for d in decisions]
                templates = [_DETAIL.sub("#", reason) for reason in said]
                template, times = Counter(templates).most_common(1)[0]
                examples = [reason for reason, shape in zip(said, templates) if shape == template]
                # The most frequent wording shown: the first one, "4 document(s) above the largest gap" where 16 of
                # 21 said "1 document(s)", misled a new user's reading of CMake's results.
                # "(its details vary)" after one pointer read as that pointer weighed on 18 questions (a new user's
                # gnuplot manual): each question's own is another.
                varies = " (each question with its own quotes, files and numbers; the most frequent wording shown)" \
                    if len(set(examples)) > 1 else ""
                out.append(f"k={k} {arm}: {plugin} changed no list of {len(rows)} questions; its reason on "
                           f"{times} of {len(decisions)} decisions: {Counter(examples).most_common(1)[0][0]}{varies}")
    return out


def _mean_length(value: float, other: float) -> str:
    """A mean list length with as many decimals as tell it from ``other`` (3.04 against 3.0, not 3.0 against 3.0)."""
    for places in (1, 2, 3):
        if round(value, places) != round(other, places):
            break
    return f"{value:.{places}f}"


def _budget_matched(run, arm: str) -> bool:
    """Whether ``arm`` is itself a budget-matched control, or has one in this run."""
    configs = run.meta.get("configs", {})
    return bool((configs.get(arm) or {}).get("budget_of")) or \
        any((cfg or {}).get("budget_of") == arm for cfg in configs.values())


def slice_table(run, k: int) -> str | None:
    """One row per slice of the gold rows' ``dimensions`` (a dev / test split, a kind of question), final
    recall and nDCG per arm; None when the rows carry no dimensions."""
    slices = [sl for sl in run.slices() if sl != "all"]
    if not slices:
        return None
    cols = at_k(SLICE, longest_list(run, k), asked=k)
    lines = ["| slice | n | " + " | ".join(f"{arm} {label}" for arm in run.arms for _, label in cols) + " |",
             "|---|---|" + "---|" * (len(cols) * len(run.arms))]
    for sl in slices:
        summaries = [run.summary(arm, k, sl) for arm in run.arms]
        cells = [_fmt(s.get(key)) for s in summaries for key, _ in cols]
        lines.append(f"| {sl} | {summaries[0].get('n', 0)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def markdown(run) -> str:
    out = [f"# ragplugins eval: {', '.join(run.meta.get('corpus', []))}", "",
           f"{run.meta.get('n_queries')} queries; embedder {run.meta.get('embedder')}; random, numpy and torch "
           f"seeded with {run.meta.get('seed')} (an arm that samples nothing gives the same lists whatever the seed).",
           ""]
    note = identical_arms_note(run)
    if note:
        out += [f"**Note:** {note}.", ""]
    instrument = instrument_keys(run)
    for k in run.ks:
        out += [f"## k = {k}", "", "Quality (mean over queries):", "", table(run, k), "",
                f"Cost ({run.meta.get('warmup') or 'no warm-up'}):", "", table(run, k, columns=COST), ""]
        if instrument:
            out += [f"The plugins' own measurements ({INSTRUMENT_MEAN}):", "",
                    table(run, k, extra=instrument, metrics=False), ""]
        if sliced := slice_table(run, k):
            out += [f"### k = {k}: slices (every `dimensions` key, multi_document)", "", sliced, ""]
    if len(run.arms) > 1:
        out += ["## Per-query changes against the first arm (final nDCG)", ""]
        out += [f"- {line}" for line in changes(run)]
        out.append("")
    if idle := idle_plugins(run):
        out += ["## Plugins that changed nothing", ""] + [f"- {line}" for line in idle] + [""]
    out += ["## Checks", "",
            f"- coverage gate: {len(run.coverage_failures)} rows with an expected string in no chunk"
            + (f": {[f['id'] for f in run.coverage_failures]}" if run.coverage_failures else ""),
            f"- {len(run.across_marks)} rows whose expected strings stand in the chunks only with Markdown marks "
            "inside, matched there as a browser shows them"
            + (f": {lines}" if (lines := as_indexed_lines(run)) else ""),
            f"- {len(run.expected_elsewhere)} rows whose expected strings also stand in documents outside their "
            "expected_sources (a chunk of those counts as a hit)"
            + (f": {elsewhere_lines(run)}" if run.expected_elsewhere else ""),
            f"- {len(run.unknown_documents)} document names in expected_sources or anchor_doc that are no indexed "
            "document" + (f": {unknown_lines(run)}" if run.unknown_documents else ""),
            f"- invariant ({run.invariant.get('rule')}): {run.invariant.get('checked')} lists checked, "
            f"offenders: {run.invariant.get('offenders') or 'none'}", ""]
    return "\n".join(out)


def unknown_lines(run) -> str:
    """``run.unknown_documents`` in one line: each row's key and name, with the indexed ids most like it."""
    return "; ".join(f"{f['id']} {f['key']} '{f['name']}'"
                     + (f" (indexed: {', '.join(f['like'])}?)" if f["like"] else "")
                     for f in run.unknown_documents)


def as_indexed_lines(run) -> str:
    """The expected strings the chunks hold only with Markdown marks inside (``across_marks``), in one line: each
    row's string and a chunk's wording."""
    return "; ".join(f"{f['id']} {expected!r} stands in a chunk as {indexed!r}"
                     for f in run.across_marks for expected, indexed in f["as_indexed"].items())


def elsewhere_lines(run) -> str:
    """``run.expected_elsewhere`` in one line: each row's strings with how many other documents hold them."""
    return "; ".join(f"{f['id']} " + ", ".join(f"'{e}' in {v['documents']} ({', '.join(v['e.g.'])}"
                                             f"{', ...' if v['documents'] > len(v['e.g.']) else ''})"
                                             for e, v in f["expected"].items())
                     for f in run.expected_elsewhere)


def chart_missing() -> str | None:
    """Why no chart.png can be drawn (matplotlib is the ``eval`` extra), or None when it can."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return "matplotlib is not installed, so no chart.png is drawn (pip install 'ragplugins[eval]' for it)"
    return None


def chart(run, path: str | Path) -> None:
    """Recall and nDCG at 10 (at k, for a k below 10) of the final list per arm and k: the mean as a dot, the
    per-query spread as a box (quartiles) with whiskers."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = [(arm, k) for k in run.ks for arm in run.arms]
    # At a k below 10 a list is measured at that k, what its top k held (a plugin may have appended below it).
    cut = {k: f"@{k}" if k < 10 and all(f"recall@{k}" in r["final"] for r in run.rows if r["k"] == k) else "@10"
           for k in run.ks}
    at = cut[run.ks[0]] if len(set(cut.values())) == 1 else "@min(k, 10)"
    fig, axes = plt.subplots(1, 2, figsize=(max(6, 1.1 * len(groups) * 2), 3.8), sharey=True)
    for ax, (metric, label) in zip(axes, (("recall", f"final recall{at}"), ("ndcg", f"final nDCG{at}"))):
        values = [[r["final"][metric + cut[k]] for r in run._rows(arm, k)] for arm, k in groups]
        ax.boxplot(values, widths=0.5, showfliers=False)
        means = [sum(v) / len(v) if v else 0 for v in values]
        ax.plot(range(1, len(groups) + 1), means, "o", color="black", label="mean")
        ax.set_xticks(range(1, len(groups) + 1))
        ax.set_xticklabels([arm if len(run.ks) == 1 else f"{arm}\nk={k}" for arm, k in groups], fontsize=8)
        ax.set_title(label)
        ax.set_ylim(-0.05, 1.05)
    axes[0].set_ylabel("per query (box: quartiles)")
    axes[0].legend(fontsize=8, loc="lower left")
    fig.suptitle(", ".join(run.meta.get("corpus", [])))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
