"""The ``ragplugins`` command line."""

from __future__ import annotations

import json
import logging
import os
import sys
import textwrap
import warnings

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ragplugins.config import config_reference, parse_config, validate_plugins
from ragplugins.errors import ConfigError, InputError, RagPluginsError
from ragplugins.plugins import ENV_VAR, PluginRegistry

console = Console()
_registry: PluginRegistry | None = None


def registry() -> PluginRegistry:
    global _registry
    if _registry is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # failures are listed by `ragplugins plugins`
            _registry = PluginRegistry.discover()
    return _registry


def _quiet_libraries() -> None:
    # The model-loading progress bar of transformers, on every command; read when transformers is imported.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    for name in ("sentence_transformers", "llama_index.vector_stores.lancedb", "httpx", "bm25s"):
        logging.getLogger(name).setLevel(logging.WARNING)


class RagGroup(click.Group):
    """Turns ragplugins' own errors into one clear line and exit code 2."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except RagPluginsError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(2)


@click.group(cls=RagGroup)
@click.option("--config", "-c", "config_path", type=click.Path(dir_okay=False), default=None,
              help="Config file (default: ./ragplugins.toml or [tool.ragplugins] in ./pyproject.toml).")
@click.pass_context
def cli(ctx: click.Context, config_path: str | None) -> None:
    """Retrieval features for LlamaIndex apps, as plugins switched on in a config file."""
    _quiet_libraries()
    ctx.obj = {"config": config_path}


def _load(ctx: click.Context, **kwargs):
    from ragplugins.app import load

    rp = load(ctx.obj["config"], registry=registry(), **kwargs)
    if rp.config.core.llm and rp.llm is None:
        rp.llm = _import_llm(rp.config.core.llm)
    return rp


def _import_llm(path: str):
    import importlib

    module, _, attr = path.partition(":")
    try:
        factory = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError, ValueError) as exc:
        raise RagPluginsError(f"[ragplugins] llm = '{path}': cannot import it ({exc}); give 'package.module:callable'")
    from llama_index.core.llms import LLM

    try:
        llm = factory()
    except Exception as exc:  # noqa: BLE001 - the config names code; its failure is a config problem
        raise RagPluginsError(f"[ragplugins] llm = '{path}': calling it failed ({type(exc).__name__}: {exc}); give "
                              "a zero-argument callable that returns a LlamaIndex LLM") from None
    if not isinstance(llm, LLM):
        raise RagPluginsError(f"[ragplugins] llm = '{path}' returned {type(llm).__name__}, not a LlamaIndex LLM; "
                              "give a zero-argument callable that returns one")
    return llm


@cli.command("plugins")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def plugins_cmd(ctx: click.Context, as_json: bool) -> None:
    """List installed plugins: version, hooks, enabled, config status, load error."""
    reg = registry()
    try:
        cfg = parse_config(ctx.obj["config"])
        enabled, config_error = set(cfg.enabled), None
        try:
            validate_plugins(cfg, {n: r.info for n, r in reg.loaded().items()},
                             {r.name: r.error or "" for r in reg.all_records() if not r.loaded})
        except RagPluginsError as exc:
            config_error = str(exc)
    except RagPluginsError as exc:
        enabled, config_error = set(), str(exc)
    rows = []
    for rec in sorted(reg.all_records(), key=lambda r: r.name):
        problems = [p for p in (config_error or "").splitlines() if f"ragplugins.{rec.name}]" in p
                    or f"'{rec.name}'" in p]
        rows.append({"name": rec.name, "version": rec.version, "distribution": rec.distribution,
                     "hooks": rec.hooks, "enabled": rec.name in enabled and rec.loaded,
                     "config": "error: " + "; ".join(p.strip(" -") for p in problems) if problems else "ok",
                     "error": rec.error})
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    table = Table("name", "version", "enabled", "config", "hooks", "error")
    for r in rows:
        table.add_row(r["name"], r["version"] or "-", "yes" if r["enabled"] else "no", r["config"],
                      ", ".join(h.removeprefix("ragplugins_") for h in r["hooks"]), r["error"] or "")
    console.print(table)
    if ENV_VAR in os.environ:
        console.print(f"({ENV_VAR} restricts which plugins load)")


@cli.group("config")
def config_group() -> None:
    """Check and show the config."""


@config_group.command("check")
@click.pass_context
def config_check(ctx: click.Context) -> None:
    """Validate the config against the installed plugins."""
    from ragplugins.check import persist_dir_problems

    rp = _load(ctx)
    if problems := persist_dir_problems(rp):
        raise ConfigError(problems, rp.config.source)
    click.echo(f"ok: {rp.config.source}; enabled: {', '.join(rp.config.enabled) or 'none'}")


@config_group.command("show")
@click.option("--defaults", is_flag=True, help="Show every key with its default value.")
@click.pass_context
def config_show(ctx: click.Context, defaults: bool) -> None:
    """Print the effective config as TOML."""
    import tomlkit

    def clean(value):  # TOML has no null
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items() if v is not None}
        if isinstance(value, list):
            return [clean(v) for v in value if v is not None]
        return value

    rp = _load(ctx)
    doc = tomlkit.document()
    table = tomlkit.table()
    core = clean(rp.config.core.model_dump(exclude_unset=not defaults))
    for k, v in core.items():
        table[k] = v
    for name, model in sorted(rp.config.plugins.items()):
        if not defaults and name not in rp.config.raw_sections:
            continue
        data = clean(model.model_dump(mode="json", exclude_unset=not defaults))
        sub = tomlkit.table()
        for k, v in data.items():
            sub[k] = v
        table[name] = sub
    doc["ragplugins"] = table
    click.echo(tomlkit.dumps(doc))


@config_group.command("docs")
def config_docs() -> None:
    """Print the Markdown reference of every config key (core and installed plugins)."""
    click.echo(config_reference({n: r.info for n, r in registry().loaded().items()}))


@cli.command("index")
@click.argument("paths", nargs=-1, required=True)
@click.option("--reindex", is_flag=True,
              help="Re-index unchanged files too (after enabling a plugin that works at index time).")
@click.option("--no-prune", is_flag=True, help="Keep indexed documents whose files were removed from PATHS.")
@click.pass_context
def index_cmd(ctx: click.Context, paths: tuple[str, ...], reindex: bool, no_prune: bool) -> None:
    """Index files and directories: new and changed files are (re)indexed, unchanged ones skipped, and
    documents whose files were removed from PATHS are removed (unless --no-prune)."""
    rp = _load(ctx)
    with console.status("indexing..."):
        _, report = rp.index_paths(paths, show_progress=False, reindex=reindex, prune=not no_prune)
    click.echo(f"added {len(report.added)}, updated {len(report.updated)}, unchanged {len(report.unchanged)}, "
               f"removed {len(report.deleted)}, skipped {len(report.skipped)}; {report.chunks_written} chunks "
               f"written to {rp.config.core.persist_dir}")
    for doc_id in report.deleted:
        click.echo(f"  removed {doc_id}: its file is gone")
    for doc_id in report.kept_missing:
        click.echo(f"  kept {doc_id}: its file is gone (--no-prune)")
    if report.unowned:
        click.echo(f"  {len(report.unowned)} indexed documents are from no folder indexed since this version records "
                   f"folders (e.g. {report.unowned[0]}), so they are never pruned; `ragplugins delete ID` removes one")
    for path, why in report.skipped:
        click.echo(f"  skipped {path}: {why}")


@cli.command("delete")
@click.argument("doc_ids", nargs=-1, required=True)
@click.pass_context
def delete_cmd(ctx: click.Context, doc_ids: tuple[str, ...]) -> None:
    """Remove documents (by the id `query` shows) and their chunks from the index."""
    rp = _load(ctx)
    gone = rp.delete_documents(list(doc_ids))
    missing = [d for d in doc_ids if d not in gone]
    click.echo(f"deleted {len(gone)}" + (f"; not in the index: {', '.join(missing)}" if missing else ""))
    if missing and not gone:
        sys.exit(1)


@cli.command("check")
@click.option("--repair", is_flag=True, help="Fix what was found (see docs/architecture.md, 'Crash safety').")
@click.pass_context
def check_cmd(ctx: click.Context, repair: bool) -> None:
    """Verify the index: manifest, rows per document, duplicate ids, embedder, full-text index, plugin state."""
    from ragplugins.check import check_index

    report = check_index(_load(ctx), repair=repair)
    for finding in report.findings:
        click.echo(f"{'repaired' if finding.repaired else 'problem'}: {finding.problem}"
                   + (f" -> {finding.repaired}" if finding.repaired else ""))
    if report.ok:
        click.echo(f"ok: {report.persist_dir}: {report.documents} documents, {report.rows} chunks")
    else:
        click.echo("run `ragplugins check --repair` to fix it" if not repair else "not everything could be repaired")
        sys.exit(1)


def _tags(nws) -> str:
    from ragplugins.nodes import tags

    return ", ".join(tags(nws))


@cli.command("query")
@click.argument("question")
@click.option("--k", "top_k", type=click.IntRange(1, 1000), default=None,
              help="First-stage candidates (default: top_k).")
@click.option("--show", type=int, default=8, help="How many sources to print.")
@click.pass_context
def query_cmd(ctx: click.Context, question: str, top_k: int | None, show: int) -> None:
    """Ranked sources with plugin tags, and an answer when [ragplugins] llm is configured."""
    from ragplugins.app import MANIFEST

    rp = _load(ctx)
    if rp.persist_dir is not None and not (rp.persist_dir / MANIFEST).is_file() \
            and not (rp.persist_dir / "lancedb").is_dir():
        # Asking would create an empty index there; say where none was found instead.
        raise InputError(f"no index in '{rp.persist_dir}' ({rp.config.source}: persist_dir); build one with "
                         "`ragplugins index PATH`, or point persist_dir at an existing one")
    if rp.llm is not None:
        response = rp.query_engine(similarity_top_k=top_k).query(question)
        click.echo(f"answer: {response.response}\n")
        nodes, plugins = response.source_nodes, response.metadata["ragplugins"]["plugins"]
    else:
        result = rp.search(question, top_k=top_k)
        nodes, plugins = result.final, result.trace.plugins
    if not nodes:
        click.echo("no results (is the index empty? run `ragplugins index PATH` first)")
        return
    table = Table("#", "score", "document", "tags", "text")
    for i, n in enumerate(nodes[:show], 1):
        table.add_row(str(i), f"{n.score:.4f}" if n.score is not None else "-", escape(n.node.ref_doc_id or ""),
                      escape(_tags(n)), escape(textwrap.shorten(n.node.get_content(), 90, placeholder=" ...")))
    console.print(table)
    if plugins:
        click.echo(json.dumps(plugins, indent=2, default=str))


def _parse_sets(values: tuple[str, ...]) -> dict[str, dict]:
    """``ARM:section.key=value`` or ``section.key=value`` (all arms) -> {arm or '*': nested dict}."""
    import tomllib

    out: dict[str, dict] = {}
    for item in values:
        target, _, assignment = item.rpartition(":") if ":" in item.split("=", 1)[0] else ("*", "", item)
        key, sep, raw = assignment.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"'{item}': expected [ARM:]key=value, e.g. crossref.max_hops=2")
        try:
            value = tomllib.loads(f"v = {raw}")["v"]
        except tomllib.TOMLDecodeError:
            value = raw
        node = out.setdefault(target or "*", {})
        parts = key.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    return out


@cli.command("eval")
@click.argument("paths", nargs=-1)
@click.option("--gold", "gold_files", multiple=True, help="Gold JSONL file(s) for PATHS.")
@click.option("--bench", "bench_name", help="A named bench corpus: mixed, docs, acq, acq+docs.")
@click.option("--bench-dir", help="Folder holding the bench corpora/ and goldset/ (default $RAGPLUGINS_BENCH).")
@click.option("--corpus", "corpus_name", help="A corpus defined in --corpora-file.")
@click.option("--corpora-file", type=click.Path(dir_okay=False), help="TOML with [corpus.<name>] paths and gold.")
@click.option("--arm", "arm_specs", multiple=True,
              help="NAME or NAME=CONFIG.toml (repeatable). Default: 'off' (no plugins) and 'on' (the config).")
@click.option("--set", "sets", multiple=True, help="[ARM:]section.key=value override, e.g. on:crossref.max_hops=2.")
@click.option("--budget-control", "budget_of", help="Add a budget-matched control arm for this arm.")
@click.option("--k", "ks", type=int, multiple=True, help="First-stage k (repeatable; default 20).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="ragplugins-eval",
              help="Where results.json, results.md and chart.png go.")
@click.option("--cache-dir", type=click.Path(file_okay=False), help="Index cache (default ~/.cache/ragplugins/eval).")
@click.option("--force-reindex", is_flag=True, help="Rebuild indexes even when the fingerprint matches.")
@click.pass_context
def eval_cmd(ctx: click.Context, paths, gold_files, bench_name, bench_dir, corpus_name, corpora_file, arm_specs,
             sets, budget_of, ks, out_dir, cache_dir, force_reindex) -> None:
    """Measure plugins on your own documents: first-stage and final recall@5/10/20 and nDCG@10 per arm."""
    from ragplugins.config import read_config_source
    from ragplugins.eval import Arm, bench_corpus, load_gold, named_corpus, run_eval
    from ragplugins.eval.runner import merge_config

    if bench_name:
        corpus_paths, gold = bench_corpus(bench_name, bench_dir)
    elif corpus_name:
        if not corpora_file:
            raise click.UsageError("--corpus needs --corpora-file")
        corpus_paths, gold = named_corpus(corpus_name, corpora_file)
    else:
        if not paths or not gold_files:
            raise click.UsageError("give PATHS and --gold, or --bench NAME, or --corpus NAME --corpora-file F")
        corpus_paths, gold = list(paths), load_gold(gold_files)
    base, _ = read_config_source(ctx.obj["config"])
    overrides = _parse_sets(sets)
    arms = []
    for spec in arm_specs or ("off", "on"):
        name, _, path = spec.partition("=")
        cfg = read_config_source(path)[0] if path else ({"enable": []} if name == "off" else {})
        for target in ("*", name):
            cfg = merge_config(cfg, overrides.get(target, {}))
        arms.append(Arm(name, cfg))
    if budget_of:
        arms.append(Arm(f"{budget_of}-budget-control", {"enable": []}, budget_of=budget_of))
    # One LLM for every arm, as in the app: the config file's [ragplugins] llm (or a --set *:llm=...).
    llm_spec = merge_config(base, overrides.get("*", {})).get("llm")
    run = run_eval(corpus_paths, gold, arms, ks=ks or (20,), base_config=base, cache_dir=cache_dir,
                   llm=_import_llm(llm_spec) if llm_spec else None, force_reindex=force_reindex,
                   registry=registry())
    out = run.write(out_dir)
    from ragplugins.eval.report import instrument_keys, table

    instrument = instrument_keys(run)
    for k in run.ks:
        click.echo(f"\nk = {k}\n" + table(run, k))
        if instrument:
            click.echo("\nthe plugins' own measurements (mean per query)\n" + table(run, k, extra=instrument,
                                                                                    metrics=False))
    if run.coverage_failures:
        click.echo(f"coverage gate: {len(run.coverage_failures)} rows have an expected string in no chunk: "
                   + ", ".join(f["id"] for f in run.coverage_failures))
    click.echo(f"\nwrote {out}/results.json, results.md, chart.png")


@cli.command("demo")
@click.option("--persist-dir", type=click.Path(file_okay=False), default=None,
              help="Where to build the demo index (default: a temporary directory).")
def demo_cmd(persist_dir: str | None) -> None:
    """Index the example corpus and show retrieval with plugins off and on, side by side."""
    from ragplugins.demo import run_demo

    run_demo(console, persist_dir)


_commands_added = False


def get_cli() -> click.Group:
    """The command group with every installed plugin's subcommands added (once)."""
    global _commands_added
    if not _commands_added:
        _commands_added = True
        reg = registry()
        for record in reg.loaded().values():
            try:
                reg.call(record, "ragplugins_register_commands", cli=cli)
            except RagPluginsError as exc:
                click.echo(f"warning: {exc}", err=True)
    return cli


def main() -> None:
    get_cli()()


if __name__ == "__main__":
    main()
