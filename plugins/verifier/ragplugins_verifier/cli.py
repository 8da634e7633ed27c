"""``ragplugins verify FILE.jsonl``: batch-check answers; with labels, print accuracy, TPR, TNR."""

from __future__ import annotations

import json

import click
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from ragplugins_verifier.backends import build_verifier
from ragplugins_verifier.base import VerifierError
from ragplugins_verifier.cases import metrics, read_cases, run_cases
from ragplugins_verifier.config import VerifierConfig


@click.command("verify")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--backend", default=None, help="Backend to use (default: [ragplugins.verifier] backend, else "
                                               "fidelity): fidelity, nli, fidelity+nli, llm or a plugin's.")
@click.option("--nli-model", default=None, help="Model name or local path for --backend nli.")
@click.option("--threshold", type=float, default=None, help="Override the backend's threshold.")
@click.option("--root", type=click.Path(file_okay=False), default=None,
              help="Folder that evidence 'path' entries are relative to (default: the file's folder).")
@click.option("--split", default=None, help="Only rows whose 'split' field has this value.")
@click.option("--json", "as_json", is_flag=True, help="Print per-row verdicts and metrics as JSON.")
@click.option("--show", type=click.Choice(["errors", "all", "none"]), default="errors",
              help="Rows to list: misclassified/unlabelled-ungrounded (default), all, or none.")
@click.option("--threads", type=click.IntRange(1, 256), default=1, show_default=True,
              help="torch threads for the embedder and NLI model; more than one is slower on a busy shared machine.")
@click.pass_context
def verify_cmd(ctx: click.Context, file: str, backend: str | None, nli_model: str | None, threshold: float | None,
               root: str | None, split: str | None, as_json: bool, show: str, threads: int) -> None:
    """Verify rows of question, answer and evidence (JSONL). Rows with a 'label' are scored:
    accuracy, TPR (grounded answers accepted), TNR (ungrounded answers rejected), confusion matrix."""
    from ragplugins.api import load_app

    _set_threads(threads)
    rp = load_app(ctx)
    config = rp.config.for_plugin("verifier") or VerifierConfig()
    data = config.model_dump()
    if backend:
        data["backend"] = backend
    if nli_model:
        data["nli"]["model"] = nli_model
    if threshold is not None:
        key = data["backend"] if data["backend"] in ("fidelity", "nli") else None
        if key is None:
            raise click.UsageError(f"--threshold applies to the fidelity and nli backends, not '{data['backend']}'")
        data[key]["threshold"] = threshold
    try:
        config = VerifierConfig.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        message = first["msg"].removeprefix("Value error, ")
        raise VerifierError(f"{where}: {message}" if where else message) from None
    verifier = build_verifier(config, rp.context())
    cases = read_cases(file, root=root)
    if split is not None:
        cases = [c for c in cases if c.fields.get("split") == split]
    results = run_cases(verifier, cases)
    summary = metrics(results)
    summary["backend"] = verifier.name
    if as_json:
        rows = [{"id": r.case.id, "label": r.case.label, **r.verdict.to_dict()} for r in results]
        click.echo(json.dumps({"metrics": summary, "rows": rows}, indent=2))
        return
    _print(results, summary, show)


def _print(results, summary: dict, show: str) -> None:
    console = Console()
    if show != "none":
        table = Table("id", "label", "verdict", "score", "first unsupported sentence / reason")
        for r in results:
            wrong = r.correct is False or (r.case.label is None and not r.verdict.grounded)
            if show == "errors" and not wrong:
                continue
            first = r.verdict.unsupported[0] if r.verdict.unsupported else None
            why = r.verdict.error or (f"{first.text} — {'; '.join(first.reasons)}" if first else "")
            label = "-" if r.case.label is None else ("grounded" if r.case.label else "ungrounded")
            table.add_row(r.case.id, label, "grounded" if r.verdict.grounded else "ungrounded",
                          f"{r.verdict.score:.2f}", why[:160])
        console.print(table)
    click.echo(f"backend {summary['backend']}: {summary['n']} rows, {summary['labelled']} labelled, "
               f"{summary['errors']} not verifiable; latency per answer mean {summary['latency_ms_mean']:.1f} ms, "
               f"p50 {summary['latency_ms_p50']:.1f} ms" if summary["n"] else "no rows")
    if summary["labelled"]:
        c = summary["confusion"]
        click.echo(f"accuracy {summary['accuracy']:.3f}  TPR {_fmt(summary['tpr'])}  TNR {_fmt(summary['tnr'])}  "
                   "(positive = grounded)")
        click.echo("confusion           predicted grounded  predicted ungrounded")
        click.echo(f"  label grounded    {c['tp']:>18}  {c['fn']:>20}")
        click.echo(f"  label ungrounded  {c['fp']:>18}  {c['tn']:>20}")


def _set_threads(threads: int) -> None:
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(threads)


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"
