"""``ragplugins retry calibrate``: the threshold table of each signal on the user's own corpus and questions.

A query is a *miss* when its expected evidence is not in the first
``--miss-at`` candidates of the first stage (the retry plugin switched off);
a threshold *catches* a miss when the signal fires on it, and *false-fires*
on a query the first stage already answered.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import click

from ragplugins_retry.retriever import PLUGIN


@dataclass
class CalibrationRow:
    id: str
    query: str
    miss: bool
    values: dict[str, float | None] = field(default_factory=dict)


def first_stage_rag(source: click.Context | Any = None, **kwargs: Any):
    """The user's pipeline with the retry plugin switched off, and the retry plugin's validated config.
    ``source``: the command's click context (its ``--config``, read as every command reads it), or a
    config for :func:`ragplugins.api.load`."""
    from ragplugins.api import load, load_app

    if source is None or isinstance(source, click.Context):
        rp = load_app(source, without=[PLUGIN], **kwargs)
    else:
        rp = load(source, without=[PLUGIN], **kwargs)
    return rp, rp.config.for_plugin(PLUGIN)


def measure(rp: Any, gold: Sequence[Any], signals: dict[str, Any], miss_at: int,
            top_k: int | None = None) -> list[CalibrationRow]:
    """Every signal's value on every question's first-stage candidates, and whether the question was missed."""
    from ragplugins.api import hit

    ctx = rp.context(rp.index())
    rows = []
    for g in gold:
        first = rp.search(g.query, top_k=top_k).first_stage
        miss = not hit([n.node.get_content() for n in first[:miss_at]], g.expected, g.match)
        values = {name: s.measure(g.query, first, ctx, retrieved_for=g.query).value for name, s in signals.items()}
        rows.append(CalibrationRow(g.id, g.query, miss, values))
    return rows


def threshold_table(rows: Sequence[CalibrationRow], signal: str, thresholds: Sequence[float]) -> list[dict]:
    """Fire rate, misses caught and false fires at each threshold (fires when value < threshold)."""
    scored = [r for r in rows if r.values.get(signal) is not None]
    misses = sum(r.miss for r in scored)
    hits = len(scored) - misses
    out = []
    for t in thresholds:
        fired = [r for r in scored if cast(float, r.values[signal]) < t]
        caught = sum(r.miss for r in fired)
        false = len(fired) - caught
        out.append({"threshold": t, "fires": len(fired), "fire_rate": len(fired) / len(rows) if rows else 0.0,
                    "misses_caught": caught, "misses": misses, "false_fires": false, "successes": hits,
                    "false_fire_rate": false / hits if hits else 0.0})
    return out


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):.3f}" if values else "-"


def print_tables(rows: Sequence[CalibrationRow], signals: dict[str, Any], current: dict[str, float],
                 miss_at: int, echo=click.echo) -> None:
    misses = sum(r.miss for r in rows)
    echo(f"{len(rows)} questions, {misses} missed by the first stage (expected evidence not in the first "
         f"{miss_at} candidates).")
    for name, signal in signals.items():
        values = [r.values[name] for r in rows if r.values.get(name) is not None]
        if not values:
            echo(f"\nsignal {name}: could not be computed on any question (see a query's trace for why)")
            continue
        on_miss = [v for r in rows if r.miss and (v := r.values.get(name)) is not None]
        on_hit = [v for r in rows if not r.miss and (v := r.values.get(name)) is not None]
        echo(f"\nsignal {name}: median {_median(on_miss)} on misses, {_median(on_hit)} on successes; "
             f"no value on {len(rows) - len(values)} questions")
        echo(f"{'threshold':>10} {'fire rate':>10} {'fires':>6} {'misses caught':>14} {'false fires':>12} "
             f"{'false-fire rate':>16}")
        for line in threshold_table(rows, name, signal.calibration_grid):
            mark = "  <- current" if abs(line["threshold"] - current.get(name, -1)) < 1e-9 else ""
            echo(f"{line['threshold']:>10.2f} {line['fire_rate']:>10.1%} {line['fires']:>6} "
                 f"{line['misses_caught']:>8}/{line['misses']:<5} {line['false_fires']:>6}/{line['successes']:<5} "
                 f"{line['false_fire_rate']:>16.1%}{mark}")
    echo("\nRetry fires when the signal is below the threshold. Pick the threshold whose fire rate you can "
         "afford (each fire costs one more retrieval) and set it as [ragplugins.retry] threshold.")


@click.group("retry")
def retry_group() -> None:
    """The evidence-sufficiency retry plugin."""


@retry_group.command("calibrate")
@click.option("--gold", "gold_files", multiple=True, required=True, type=click.Path(dir_okay=False),
              help='Gold questions, JSONL with at least {"query", "expected"} per line (repeatable).')
@click.option("--corpus", "corpus", multiple=True, type=click.Path(exists=True),
              help="Index these files/directories first (new and changed ones; repeatable).")
@click.option("--signal", "signal_names", multiple=True,
              help="Only these signals (default: every registered signal).")
@click.option("--miss-at", type=click.IntRange(1, 1000), default=10, show_default=True,
              help="A question is missed when its evidence is not in this many first candidates.")
@click.option("--k", "top_k", type=click.IntRange(1, 1000), default=None,
              help="First-stage candidates (default: top_k of the config).")
@click.option("--json", "as_json", is_flag=True, help="Print the per-question values and tables as JSON.")
@click.pass_context
def calibrate_cmd(ctx: click.Context, gold_files: tuple[str, ...], corpus: tuple[str, ...],
                  signal_names: tuple[str, ...], miss_at: int, top_k: int | None, as_json: bool) -> None:
    """Print each signal's threshold table on your corpus: fire rate, misses caught, false fires."""
    from ragplugins.api import load_gold
    from ragplugins_retry import plugin

    rp, config = first_stage_rag(ctx)
    available = plugin.signals(config, rp.context(rp.index()).pluginmanager)
    unknown = [s for s in signal_names if s not in available]
    if unknown:
        raise click.BadParameter(f"no signal named {', '.join(map(repr, unknown))}; available: "
                                 f"{', '.join(sorted(available))}", param_hint="--signal")
    chosen = {n: available[n] for n in (signal_names or available)}
    gold = load_gold([Path(g) for g in gold_files])
    if corpus:
        _, report = rp.index_paths(corpus)
        click.echo(f"indexed: added {len(report.added)}, updated {len(report.updated)}, "
                   f"unchanged {len(report.unchanged)}", err=True)
    if not rp.context(rp.index()).list_documents():
        raise click.UsageError(f"the index in '{rp.config.core.persist_dir}' is empty; pass --corpus PATH "
                               f"or run `ragplugins index PATH` first")
    rows = measure(rp, gold, chosen, miss_at, top_k)
    current = {n: (config.threshold if config.threshold is not None and n == config.signal
                   else s.default_threshold) for n, s in chosen.items()}
    if as_json:
        click.echo(json.dumps({
            "miss_at": miss_at, "rows": [r.__dict__ for r in rows],
            "tables": {n: threshold_table(rows, n, s.calibration_grid) for n, s in chosen.items()}}, indent=1))
        return
    print_tables(rows, chosen, current, miss_at)
