"""The ``ragplugins`` command line."""

from __future__ import annotations

import difflib
import json
import logging
import os
import re
import sys
import textwrap
import time
import traceback
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Column, Table

from ragplugins.errors import ConfigError, PluginError, RagPluginsError, SettingNote
from ragplugins.plugins import ENTRY_POINT_GROUP, ENV_VAR, PluginRegistry

if TYPE_CHECKING:
    from pathlib import Path

    from ragplugins.app import RagPlugins
    from ragplugins.progress import IndexProgress

console = Console()
_registry: PluginRegistry | None = None
_registry_env: str | None = None
_warned: set[str] = set()


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning as one line on stderr, each text once per run (no Python file and line)."""
    text = " ".join(str(message).split())
    if text in _warned:
        return
    _warned.add(text)
    click.echo(f"warning: {text.removeprefix('ragplugins: ')}", err=True)


def registry() -> PluginRegistry:
    """The installed plugins, discovered once per process (again when $RAGPLUGINS_PLUGINS changes,
    as it does between tests)."""
    global _registry, _registry_env
    if _registry is None or _registry_env != os.environ.get(ENV_VAR):
        _registry_env = os.environ.get(ENV_VAR)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _registry = PluginRegistry.discover()
        for w in caught:
            # A plugin that failed to load is listed by `ragplugins plugins` (and named by any config that
            # enables it); a RAGPLUGINS_PLUGINS name that matches nothing would otherwise go unsaid.
            if ENV_VAR in str(w.message):
                _show_warning(w.message, w.category, w.filename, w.lineno)
    return _registry


# Set to see the traceback behind an error (a plugin's own bug shows the plugin's file and line).
DEBUG_VAR = "RAGPLUGINS_DEBUG"


def _quiet_libraries() -> None:
    # The model-loading progress bar of transformers, on every command; read when transformers is imported.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    for name in ("sentence_transformers", "llama_index.vector_stores.lancedb", "httpx", "bm25s"):
        logging.getLogger(name).setLevel(logging.WARNING)
    # pypdf warns of a broken PDF on every read ("EOF marker not found", three times with PDFReader's
    # retries); the index command says once which file it skipped and why.
    logging.getLogger("pypdf").setLevel(logging.ERROR)


def installed_plugin_names() -> list[str]:
    """Entry-point names of the installed plugins, read from package metadata without importing them."""
    import importlib.metadata as md

    return sorted({ep.name for ep in md.entry_points(group=ENTRY_POINT_GROUP)})


class RagGroup(click.Group):
    """Turns ragplugins' own errors into one clear line and exit code 2, and imports the plugins
    (for the commands they add) only when a command that is not a core one is asked for."""

    def get_command(self, ctx: click.Context, cmd_name: str):
        command = super().get_command(ctx, cmd_name)
        if command is None and add_plugin_commands():
            command = super().get_command(ctx, cmd_name)
        return command

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = installed_plugin_names()
        if names:
            formatter.write_paragraph()
            formatter.write_text(f"Installed plugins: {', '.join(names)}. Commands they add are listed by "
                                 "`ragplugins plugins`; `ragplugins COMMAND --help` works for them too.")

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except RagPluginsError as exc:
            if os.environ.get(DEBUG_VAR):
                traceback.print_exception(exc)
            click.echo(f"error: {exc}", err=True)
            if isinstance(exc, PluginError) and not os.environ.get(DEBUG_VAR):
                click.echo(f"(set {DEBUG_VAR}=1 to see where it failed)", err=True)
            sys.exit(2)


@click.group(cls=RagGroup)
@click.version_option(package_name="ragplugins", message="ragplugins %(version)s")
@click.option("--config", "-c", "config_path", type=click.Path(dir_okay=False), default=None,
              help="Config file (default: ragplugins.toml or [tool.ragplugins] in pyproject.toml, in the working "
                   "directory or the nearest parent that has one).")
@click.pass_context
def cli(ctx: click.Context, config_path: str | None) -> None:
    """Retrieval features for LlamaIndex apps, as plugins switched on in a config file."""
    _quiet_libraries()
    ctx.obj = {"config": config_path}


def load_app(ctx: click.Context | None = None, *, without: Sequence[str] = (), **kwargs: Any) -> RagPlugins:
    """The app a ``ragplugins`` command works on, core or plugin: the config named by ``--config``
    (else the one found in the working directory), read as every command reads it (paths relative
    to the file, the config's ``llm`` imported), with the installed plugins. ``without``: plugins to
    leave out (``retry calibrate`` measures the first stage without the retry plugin); other
    keywords go to :func:`ragplugins.load` (``embed_model=``, ``llm=``)."""
    from ragplugins.app import load

    ctx = ctx or click.get_current_context(silent=True)
    root = ctx.find_root() if ctx is not None else None
    config = (root.obj or {}).get("config") if root is not None and isinstance(root.obj, dict) else None
    return load(config, registry=registry(), without=without, **kwargs)


@cli.command("plugins")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def plugins_cmd(ctx: click.Context, as_json: bool) -> None:
    """List installed plugins: version, hooks, enabled, config status, load error."""
    from ragplugins.config import parse_config, validate_plugins

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
    rows: list[dict[str, Any]] = []
    for rec in sorted(reg.all_records(), key=lambda r: r.name):
        problems = [p for p in (config_error or "").splitlines() if f"ragplugins.{rec.name}]" in p
                    or f"'{rec.name}'" in p]
        rows.append(
            {
                "name": rec.name,
                "version": rec.version,
                "distribution": rec.distribution,
                "location": rec.location,
                "hooks": rec.hooks,
                "commands": _commands_of(reg, rec),
                "enabled": rec.name in enabled and rec.loaded,
                "config": "error: " + "; ".join(p.strip(" -") for p in problems) if problems else "ok",
                "error": rec.error,
            }
        )
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    table = Table(*(Column(h, overflow="fold") for h in ("name", "version", "enabled", "config", "hooks",
                                                         "commands", "error")))
    for r in rows:
        # Errors quote TOML tables ('[ragplugins.crossref]'), which rich would read as markup.
        table.add_row(r["name"], r["version"] or "-", "yes" if r["enabled"] else "no", escape(r["config"]),
                      "\n".join(h.removeprefix("ragplugins_") for h in r["hooks"]),
                      "\n".join(f"ragplugins {c}" for c in r["commands"]), escape(r["error"] or ""))
    # Where no terminal sets a width (a pipe, CI), as wide as the table: at rich's 80 columns the hooks read
    # "after_inde…" (a new user's lighttpd walkthrough).
    (console if console.is_terminal else _as_wide_as(table)).print(table)
    if config_error:
        console.print("the config has problems" + (", so no plugin is enabled from it" if not enabled else "")
                      + ": `ragplugins config check` lists them all", markup=False)
    if ENV_VAR in os.environ:
        console.print(f"({ENV_VAR} restricts which plugins load)")


def _as_wide_as(table: Table) -> Console:
    """A console as wide as ``table`` (no wider than 1,000 columns): one with no terminal is 80 wide."""
    return Console(width=console.measure(table, options=console.options.update(width=1000)).maximum)


def _commands_of(reg: PluginRegistry, record) -> list[str]:
    """The subcommands ``record`` adds (registered on a scratch group, so nothing is added twice)."""
    if not record.loaded or "ragplugins_register_commands" not in record.hooks:
        return []
    scratch = click.Group()
    try:
        reg.call(record, "ragplugins_register_commands", cli=scratch)
    except RagPluginsError:
        return []
    return sorted(scratch.commands)


@cli.group("config")
def config_group() -> None:
    """Check and show the config."""


@config_group.command("check")
@click.pass_context
def config_check(ctx: click.Context) -> None:
    """Validate the config against the installed plugins."""
    from ragplugins.check import persist_dir_problems

    rp = load_app(ctx)
    if problems := persist_dir_problems(rp):
        raise ConfigError(problems, rp.config.source)
    click.echo(f"ok: {rp.config.source}; enabled: {', '.join(rp.config.enabled) or 'none'}")


@config_group.command("show")
@click.option("--defaults", is_flag=True, help="Show every key with its default value.")
@click.pass_context
def config_show(ctx: click.Context, defaults: bool) -> None:
    """Print the effective config as TOML."""
    import tomlkit

    from ragplugins.config import without_nulls

    rp = load_app(ctx)
    doc = tomlkit.document()
    table = tomlkit.table()
    core = without_nulls(rp.config.core.model_dump(exclude_unset=not defaults))
    for k, v in core.items():
        table[k] = v
    for name, model in sorted(rp.config.plugins.items()):
        if not defaults and name not in rp.config.raw_sections:
            continue
        data = without_nulls(model.model_dump(mode="json", exclude_unset=not defaults))
        sub = tomlkit.table()
        for k, v in data.items():
            sub[k] = v
        table[name] = sub
    doc["ragplugins"] = table
    click.echo(tomlkit.dumps(doc))


@config_group.command("docs")
def config_docs() -> None:
    """Print the Markdown reference of every config key (core and installed plugins)."""
    from ragplugins.config import config_reference

    click.echo(config_reference({n: r.info for n, r in registry().loaded().items()}))


@cli.command("index")
@click.argument("paths", nargs=-1, required=True)
@click.option("--reindex", is_flag=True,
              help="Re-index and re-embed unchanged files too (after enabling an index-time plugin that "
                   "`ragplugins prepare` cannot bring in: the warning says which).")
@click.option("--no-prune", is_flag=True, help="Keep indexed documents whose files were removed from PATHS.")
@click.option("--executor", type=click.Choice(["serial", "ray"]), default="serial", show_default=True,
              help="ray: read, split, transform and embed on Ray workers (pip install 'ragplugins[ray]').")
@click.option("--workers", type=click.IntRange(min=1), default=None,
              help="Ray workers to start (default: one per CPU of the Ray cluster).")
@click.option("--address", default=None, metavar="ADDRESS",
              help="The Ray cluster to join (default: $RAY_ADDRESS, else a local Ray started for this run).")
@click.pass_context
def index_cmd(ctx: click.Context, paths: tuple[str, ...], reindex: bool, no_prune: bool, executor: str,
              workers: int | None, address: str | None) -> None:
    """Index files and directories: new and changed files are (re)indexed, unchanged ones skipped, and
    documents whose files were removed from PATHS are removed (unless --no-prune)."""
    from ragplugins.progress import IndexProgress
    from ragplugins.readers import skipped_lines

    if executor == "serial" and (workers is not None or address is not None):
        raise click.UsageError("--workers and --address need --executor ray")
    if address is not None:
        os.environ["RAY_ADDRESS"] = address  # what ray.init() reads; this process's own environment
    rp = load_app(ctx)
    said: set[str] = set()
    try:
        with console.status("indexing: reading and splitting files...") as status, \
                IndexProgress(on_change=_progress_display(status)) as progress, warnings.catch_warnings():
            warnings.showwarning = _say_skipped_files(said, warnings.showwarning)
            _, report = rp.index_paths(paths, show_progress=False, reindex=reindex, prune=not no_prune,
                                       executor=executor, workers=workers)
    except KeyboardInterrupt:
        kept = ("the texts it embedded are kept in persist_dir, so running the same command again embeds only "
                "the rest" if rp.resume_file is not None and executor == "serial" else
                "run the same command again to index what it had not written")
        click.echo(f"stopped: {kept}", err=True)
        sys.exit(130)
    if progress.total:
        click.echo(f"indexed: {progress.summary()}", err=True)
    click.echo(f"added {len(report.added)}, updated {len(report.updated)}, unchanged {len(report.unchanged)}, "
               f"removed {len(report.deleted)}, skipped {len(report.skipped)}; {report.chunks_written} chunks "
               f"written to {rp.config.core.persist_dir}")
    click.echo(f"  embedder: {_embedder_said(rp)}")
    if report.vectors_reused:
        click.echo(f"  resumed: {report.vectors_reused} texts embedded by a run that stopped before writing "
                   "were not embedded again")
    for doc_id in report.deleted:
        click.echo(f"  removed {doc_id}: its file is gone")
    for doc_id in report.kept_missing:
        click.echo(f"  kept {doc_id}: its file is gone (--no-prune)")
    if report.unowned:
        click.echo(f"  {len(report.unowned)} indexed documents are from no folder indexed since this version records "
                   f"folders (e.g. {report.unowned[0]}), so they are never pruned; `ragplugins delete ID` removes one")
    for line in skipped_lines(report.skipped):
        if line not in said:
            click.echo(f"  skipped {line}")
    for line in rp.index_summaries():
        click.echo(f"  {line}")


def _say_skipped_files(said: set[str], show: Callable[..., None]) -> Callable[..., None]:
    """The reader's warning about the files it skipped, said as soon as the files are read, in the summary's words
    (a stopped run used to show none: the summary said them when indexing ended); ``said`` collects them, so the
    summary does not say them twice. Other warnings are shown as before."""
    from ragplugins.readers import SKIPPED_WARNING

    def showwarning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                    file: Any = None, line: str | None = None) -> None:
        text = str(message)
        if text.startswith(SKIPPED_WARNING):
            said.add(text.removeprefix(SKIPPED_WARNING))
            click.echo(f"  skipped {text.removeprefix(SKIPPED_WARNING)}")
        else:
            show(message, category, filename, lineno, file, line)
    return showwarning


def _progress_display(status: Any) -> Callable[[IndexProgress], None]:
    """Where indexing progress goes: the live status line on a terminal; else (CI, nohup, a pipe to tee,
    where the status line shows nothing) one line on stderr now and then (IndexProgress.due: every 30 seconds)."""
    if console.is_terminal:
        return lambda progress: status.update(f"indexing: {progress.line()}")
    last_said: list[float] = []

    def say(progress: IndexProgress) -> None:
        now = time.monotonic()
        if progress.due(last_said[-1] if last_said else None, now, every=30):
            last_said.append(now)
            click.echo(f"indexing: {progress.line()}", err=True)
    return say


def _embedder_said(rp: RagPlugins) -> str:
    """The embedder that wrote the vectors and where the choice came from (said once per index run)."""
    from ragplugins.embeddings import embedder_identity

    embed = rp.embed_model
    model = embedder_identity(embed).split(":", 1)[-1]
    source = rp.models.embed_source if rp.models is not None else "argument"
    return f"{type(embed).__name__} {model} ({source})"


@cli.command("read")
@click.argument("paths", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per document and line: id, text.")
@click.pass_context
def read_cmd(ctx: click.Context, paths: tuple[str, ...], as_json: bool) -> None:
    """Print the text `index` reads from files and folders (an HTML page, a Word document or an EPUB book as
    Markdown, a PDF as text), one document after another, before any chunking: the text a gold set's expected
    strings are matched in. Nothing is embedded or written, and no index is needed."""
    from ragplugins.readers import SKIPPED_WARNING, read_documents, skipped_lines

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SettingNote)   # reading uses no plugin
        rp = load_app(ctx)
    with warnings.catch_warnings():
        # Said once below, grouped by why, as `index` says it.
        warnings.filterwarnings("ignore", message=SKIPPED_WARNING)
        report = read_documents(paths, max_file_mb=rp.config.core.max_file_mb, exclude=rp.config.core.exclude)
    for doc in report.documents:
        if as_json:
            click.echo(json.dumps({"id": doc.id_, "text": doc.text}, ensure_ascii=False))
        else:
            click.echo(f"==> {doc.id_} ({len(doc.text):,} characters) <==\n{_visible(doc.text.rstrip())}\n")
    for line in skipped_lines(report.skipped):
        click.echo(f"skipped {line}", err=True)


# A chunk's name as output gives it: its document, "#", its position ("guide.md#3") or a passage's ("guide.md#3+4").
_CHUNK_NAME = re.compile(r"(?P<document>.+)#(?P<positions>\d+(?:\+\d+)*)")


@cli.command("chunks")
@click.argument("names", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per chunk and line: chunk, node_id, text.")
@click.pass_context
def chunks_cmd(ctx: click.Context, names: tuple[str, ...], as_json: bool) -> None:
    """Print stored chunks by the names `query`, `eval` and traces give them: `guide.md#3`, a passage
    `guide.md#3+4`, or `guide.md` for every chunk of that document, in order."""
    from ragplugins.nodes import document_label
    from ragplugins.stores.base import CHUNK_INDEX_KEY

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SettingNote)   # reading the store uses no plugin
        rp = load_app(ctx)
    rp.require_index()
    wanted: dict[str, set[int] | None] = {}
    for name in names:
        named = _CHUNK_NAME.fullmatch(name)
        document = named.group("document") if named else name
        positions = {int(p) for p in named.group("positions").split("+")} if named else None
        previous = wanted.get(document, set())
        wanted[document] = None if positions is None or previous is None else previous | positions
    found: dict[str, dict[int, tuple[str, str]]] = {}
    keys = [CHUNK_INDEX_KEY, "file_name", "title", "file_path", "source", "url"]
    for row in rp.context(rp.index()).store.iter_chunk_rows(keys):
        document = document_label(row.doc_id or "", row.metadata)
        position = row.metadata.get(CHUNK_INDEX_KEY)
        if document in wanted and isinstance(position, int):
            found.setdefault(document, {})[position] = (row.id, row.text)
    for document, positions in wanted.items():
        held = found.get(document)
        if not held:
            raise click.ClickException(f"no document {document!r} in the index {rp.config.core.persist_dir} "
                                       "(names are as `query` prints them: a document's id, then #position)")
        missing = sorted((positions or set()) - set(held))
        if missing:
            raise click.ClickException(f"{document!r} has no chunk #{missing[0]}: its chunks are #0 to "
                                       f"#{max(held)}")
        for position in sorted(positions if positions is not None else held):
            node_id, text = held[position]
            if as_json:
                click.echo(json.dumps({"chunk": f"{document}#{position}", "node_id": node_id, "text": text},
                                      ensure_ascii=False))
            else:
                click.echo(f"==> {document}#{position} ({len(text):,} characters) <==\n{_visible(text.rstrip())}\n")


# Control characters a text holds, which a terminal would act on rather than show (Vim's help writes a terminal's
# escapes as they are, "t_vb=\x1b[?5h$<100>\x1b[?5l": a new user's terminal showed "t_vb=$<100>" and the text seemed
# lost). Shown as `cat -v` shows them, "^[".
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _visible(text: str) -> str:
    return _CONTROL.sub(lambda c: "^?" if c.group() == "\x7f" else "^" + chr(ord(c.group()) + 64), text)


@cli.command("prepare")
@click.pass_context
def prepare_cmd(ctx: click.Context) -> None:
    """Run the enabled index-time plugins (crossref, overview) over the index as it is, after enabling one:
    the chunks are not embedded again (`index --reindex` re-embeds them); overview embeds one overview per
    document."""
    rp = load_app(ctx)
    rp.require_index()
    rp.prepare()
    plugins = rp.preparable_plugins()
    click.echo(f"prepared {rp.config.core.persist_dir} for {', '.join(plugins)}" if plugins else
               "no enabled plugin has an after-index step; nothing to prepare")
    # What each plugin made of the index, as `index` and `eval` say it ("crossref: 495 references ...").
    for line in rp.index_summaries():
        click.echo(f"  {line}")


@cli.command("delete")
@click.argument("doc_ids", nargs=-1, required=True)
@click.pass_context
def delete_cmd(ctx: click.Context, doc_ids: tuple[str, ...]) -> None:
    """Remove documents (by the id `query` shows) and their chunks from the index."""
    rp = load_app(ctx)
    gone = rp.delete_documents(list(doc_ids))
    missing = [d for d in doc_ids if d not in gone]
    click.echo(f"deleted {len(gone)}" + (f"; not in the index: {', '.join(missing)}" if missing else ""))
    for doc_id, (_, path) in rp.files_still_there(gone).items():
        click.echo(f"  {doc_id}: its file '{path}' is still there, so the next `ragplugins index` of that folder "
                   "adds it again (move or remove the file to keep it out)")
    if missing and not gone:
        sys.exit(1)


@cli.command("compact")
@click.option("--keep-days", type=click.FloatRange(min=0), default=7.0, show_default=True,
              help="Keep the files of table versions younger than this (0: only the latest; then no other "
                   "process may be reading).")
@click.pass_context
def compact_cmd(ctx: click.Context, keep_days: float) -> None:
    """Merge the index's small files and delete old table versions' files (LanceDB optimize)."""
    before, after = load_app(ctx).compact(keep_days)
    kept = f" (the files of versions younger than --keep-days {keep_days:g} are kept)" if after > 1 else ""
    click.echo(f"compacted: {before} table versions -> {after}{kept}")


@cli.command("check")
@click.option("--repair", is_flag=True, help="Fix what was found (see docs/architecture.md, 'Crash safety').")
@click.pass_context
def check_cmd(ctx: click.Context, repair: bool) -> None:
    """Verify the index: manifest, rows per document, duplicate ids, embedder, plugin state."""
    from ragplugins.check import check_index

    report = check_index(load_app(ctx), repair=repair)
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
@click.option("--show", type=click.IntRange(min=1), default=None, show_default="8; with --json, every source",
              help="How many of the sources to print.")
@click.option("--full", is_flag=True, help="Print each source's whole text, not a shortened line.")
@click.option("--trace", "show_trace", is_flag=True,
              help="Print the whole trace (what every plugin recorded), chunks named as document#position.")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object: answer, sources, trace (chunk ids, named in its 'chunks').")
@click.pass_context
def query_cmd(ctx: click.Context, question: str, top_k: int | None, show: int | None, full: bool, show_trace: bool,
              as_json: bool) -> None:
    """Ranked sources with plugin tags, one line per plugin decision, and an answer when
    [ragplugins] llm is configured."""
    from ragplugins.nodes import document_name, result_label, tags
    from ragplugins.trace import decision_lines, labelled

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SettingNote)   # said by `config check`, `index` and `eval`
        rp = load_app(ctx)
    rp.require_index()
    answer = None
    if rp.llm is not None:
        response: Any = rp.query_engine(similarity_top_k=top_k).query(question)
        answer, nodes, trace = response.response, response.source_nodes, response.metadata["ragplugins"]
    else:
        result = rp.search(question, top_k=top_k)
        nodes, trace = result.final, result.trace.to_dict()
    # A program reading --json gets the whole list unless it asks for less (a new user's script read the first 8 of
    # 20 as the list); a person reading the table, the first 8.
    show = show or (len(nodes) if as_json else 8)
    if as_json:
        sources = [{"rank": i, "score": n.score, "document": document_name(n.node), "chunk": result_label(n),
                    "node_id": n.node.node_id, "tags": tags(n), "text": n.node.get_content()}
                   for i, n in enumerate(nodes[:show], 1)]
        click.echo(json.dumps({"question": question, "answer": answer, "sources": sources, "trace": trace},
                              indent=2, default=str))
        return
    if answer is not None:
        click.echo(f"answer: {answer}\n")
    if not nodes:
        click.echo("no results (is the index empty? run `ragplugins index PATH` first)")
        return
    if full:
        for i, n in enumerate(nodes[:show], 1):
            score = f"{n.score:.4f}" if n.score is not None else "-"
            label = f"#{i}  {score}  {document_name(n.node)}" + (f"  ({_tags(n)})" if tags(n) else "")
            click.echo(f"{label}\n{n.node.get_content().strip()}\n")
    else:
        table = Table("#", "score", "tags", "text")
        # Named as traces name it (document#position), wrapped rather than cut: long file names are the rule
        # in documentation ("ch04-01-what-is-ownership.html").
        table.add_column("chunk", overflow="fold")
        from ragplugins.sparse import Tokenizer

        tokenize = Tokenizer()
        for i, n in enumerate(nodes[:show], 1):
            table.add_row(str(i), f"{n.score:.4f}" if n.score is not None else "-",
                          escape(_tags(n)), escape(_snippet(n.node.get_content(), question, tokenize)),
                          escape(result_label(n)))
        # Piped, a console is 80 columns wide and would cut every row ("--run-libc-freeres=<yes|n…").
        (console if console.is_terminal else _as_wide_as(table)).print(table)
    if len(nodes) > show:
        # With top_k = 20 the first eight read as the whole list unless the rest is said to be there.
        click.echo(f"{show} of {len(nodes)} sources shown; --show {len(nodes)} prints them all")
    lines = decision_lines(trace)
    if lines:
        click.echo("what each plugin decided:")
        for line, _ in lines:
            click.echo(f"  {line}")
    if show_trace:
        click.echo(json.dumps(labelled(trace), indent=2, default=str))


# A source's row: its width, and how much of its opening (often its heading) stays before a later sentence.
SNIPPET_WIDTH, SNIPPET_LEAD = 90, 30
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n\s*\n")


def _snippet(text: str, question: str, tokenize: Callable[[str], list[str]], width: int = SNIPPET_WIDTH) -> str:
    """A source in one row: its opening, and where that does not reach it, the sentence that shares most words with
    the question after the first words (FRRouting's user read a chunk that held the answer as a miss: its row
    showed "Otherwise, kernel rejects the route ...", the line before the answer)."""
    text = _without_rules(text)
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    asked = set(tokenize(question))
    pieces = [" ".join(p.split()) for p in _SENTENCE_END.split(text)]
    scored = [(len(asked.intersection(tokenize(p))), -i, p) for i, p in enumerate(pieces) if p]
    shared, _, sentence = max(scored, default=(0, 0, ""))
    at = flat.find(sentence)
    if not shared or 0 <= at <= width - SNIPPET_LEAD:   # the opening row shows it
        return textwrap.shorten(flat, width, placeholder=" ...")
    return textwrap.shorten(f"{textwrap.shorten(flat, SNIPPET_LEAD, placeholder='')} ... {sentence}", width,
                            placeholder=" ...")


def _without_rules(text: str) -> str:
    """``text`` without its lines of one repeated mark, the rules over and under a reStructuredText title: a row
    began "================== the SCGI Interface ==================" (a new user's lighttpd pages)."""
    from ragplugins.markup_lines import UNDERLINE

    return "\n".join(line for line in text.splitlines() if not UNDERLINE.fullmatch(line.strip()))


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


def _bare_arm_config(name: str, overrides: dict[str, dict]) -> dict:
    """What an arm given by name alone runs: ``off`` no plugins; ``on``, or a name a ``--set NAME:...``
    configures, the config file (plus those settings); an installed plugin's name, that plugin alone. Any other
    name is a mistake (a misspelt plugin would otherwise run the config file unnoticed)."""
    if name == "off":
        return {"enable": []}
    if name == "on" or name in overrides:
        return {}
    installed = installed_plugin_names()
    if name in installed:
        return {"enable": [name]}
    close = difflib.get_close_matches(name, installed, n=1)
    raise click.BadParameter(
        f"arm '{name}' names no config: give {name}=CONFIG.toml, configure it with --set {name}:enable='[...]', "
        f"use 'on' for the config file or 'off' for no plugins, or an installed plugin's name for that plugin "
        f"alone ({', '.join(installed) or 'none installed'})" + (f"; did you mean '{close[0]}'?" if close else ""),
        param_hint="--arm")


@cli.command("eval")
@click.argument("paths", nargs=-1)
@click.option("--gold", "gold_files", multiple=True, help="Gold JSONL file(s) for PATHS.")
@click.option("--bench", "bench_names", multiple=True,
              help="A named bench corpus: mixed, docs, acq, acq+docs (repeatable: their union).")
@click.option("--bench-dir", help="Folder holding the bench corpora/ and goldset/ (default $RAGPLUGINS_BENCH).")
@click.option("--corpus", "corpus_name", help="A corpus defined in --corpora-file.")
@click.option("--corpora-file", type=click.Path(dir_okay=False), help="TOML with [corpus.<name>] paths and gold.")
@click.option("--arm", "arm_specs", multiple=True,
              help="NAME=CONFIG.toml, off (no plugins), on (the config), a plugin's name (it alone), or a name --set "
                   "configures (repeatable). Default: off and on.")
@click.option("--set", "sets", multiple=True, help="[ARM:]section.key=value override, e.g. on:crossref.max_hops=2.")
@click.option("--budget-control", "budget_of", help="Add a budget-matched control arm for this arm.")
@click.option("--k", "ks", type=int, multiple=True, help="First-stage k (repeatable; default 20).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="ragplugins-eval",
              help="Where results.json, results.md and chart.png go.")
@click.option("--cache-dir", type=click.Path(file_okay=False), help="Index cache (default ~/.cache/ragplugins/eval).")
@click.option("--force-reindex", is_flag=True, help="Rebuild indexes even when the fingerprint matches.")
@click.pass_context
def eval_cmd(ctx: click.Context, paths, gold_files, bench_names, bench_dir, corpus_name, corpora_file, arm_specs,
             sets, budget_of, ks, out_dir, cache_dir, force_reindex) -> None:
    """Measure plugins on your own documents: first-stage and final recall@5/10/20 and nDCG@10 per arm."""
    from ragplugins.config import find_config, read_config_source
    from ragplugins.eval import Arm, bench_corpus, load_gold, named_corpus, run_eval
    from ragplugins.eval.report import chart_missing
    from ragplugins.eval.runner import arm_config_file, merge_config
    from ragplugins.models import import_llm

    no_chart = chart_missing()
    if no_chart:  # said before the work starts, not after it
        click.echo(f"note: {no_chart}", err=True)
    if bench_names:
        corpus_paths: list[Path] = []
        gold: list[Any] = []
        for name in bench_names:  # repeated --bench: the union of the corpora and their gold rows
            more_paths, more_gold = bench_corpus(name, bench_dir)
            corpus_paths += [p for p in more_paths if p not in corpus_paths]
            seen = {row.id for row in gold}
            gold += [row for row in more_gold if row.id not in seen]
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
        cfg = read_config_source(path)[0] if path else _bare_arm_config(name, overrides)
        for target in ("*", name):
            cfg = merge_config(cfg, overrides.get(target, {}))
        arms.append(Arm(name, cfg))
    names = [a.name for a in arms]
    if stray := [t for t in overrides if t != "*" and t not in names]:
        # A setting for an arm that does not run would be dropped unnoticed (often a misspelt arm).
        raise click.BadParameter(f"--set names arm '{stray[0]}', which is not one of the arms run "
                                 f"({', '.join(names)}); add --arm {stray[0]} or correct the name", param_hint="--set")
    if budget_of:
        arms.append(Arm(f"{budget_of}-budget-control", {"enable": []}, budget_of=budget_of))
    # One LLM for every arm, as in the app: the config file's [ragplugins] llm (or a --set *:llm=...).
    llm_spec = merge_config(base, overrides.get("*", {})).get("llm")
    run = run_eval(corpus_paths, gold, arms, ks=ks or (20,), base_config=base, cache_dir=cache_dir,
                   llm=import_llm(llm_spec) if llm_spec else None, force_reindex=force_reindex,
                   # The config's own index (what `ragplugins index` built from these folders) lends its vectors.
                   registry=registry(), reuse_vectors_of=ctx.obj["config"] or find_config() or {})
    out = run.write(out_dir)
    from ragplugins.eval.report import (
        COST,
        INSTRUMENT_MEAN,
        as_indexed_lines,
        changes,
        elsewhere_lines,
        identical_arms_note,
        idle_plugins,
        instrument_keys,
        slice_table,
        table,
        unknown_lines,
    )

    instrument = instrument_keys(run)
    if note := identical_arms_note(run):
        click.echo(f"note: {note}", err=True)
    for k in run.ks:
        click.echo(f"\nk = {k}\n" + table(run, k) + "\n\n" + table(run, k, columns=COST))
        if instrument:
            click.echo(f"\nthe plugins' own measurements ({INSTRUMENT_MEAN})\n"
                       + table(run, k, extra=instrument, metrics=False))
        if sliced := slice_table(run, k):
            click.echo(f"\nk = {k}, per slice of the gold rows' dimensions\n" + sliced)
    if len(run.arms) > 1:
        click.echo(f"\nper question against '{run.arms[0]}' (final nDCG)\n" + "\n".join(changes(run)))
    if idle := idle_plugins(run):
        click.echo("\nplugins that changed nothing (the reason each gave most often)\n" + "\n".join(idle))
    if run.coverage_failures:
        lost = [f["id"] for f in run.coverage_failures if f.get("unreachable", True)]
        click.echo(f"coverage gate: {len(run.coverage_failures)} rows have an expected string in no chunk: "
                   + ", ".join(f["id"] for f in run.coverage_failures)
                   + (f" ({len(lost)} of them can never be found and count as misses: {', '.join(lost)}; "
                      if lost else " (each is still found by its other strings; ")
                   + "expected strings are matched in the chunks' text as indexed, where an HTML, Word or EPUB page is "
                     "Markdown (a string in no chunk also across its `code` and **bold** marks and a link's target, "
                     "[words](page.html)); `ragplugins query QUESTION --full` prints that text, and `ragplugins read "
                     "FILE` a file's text as read: a string its page shows that this text lacks, the reader lost)")
    if lines := as_indexed_lines(run):
        click.echo(f"matched across Markdown marks: {len(run.across_marks)} rows have expected strings that stand in "
                   "the chunks only with `code` or **bold** marks or a link's target inside (a page read as Markdown); "
                   f"each is matched there as a browser shows it: {lines}")
    if run.unknown_documents:
        click.echo(f"unknown documents: {len(run.unknown_documents)} names in expected_sources or anchor_doc are no "
                   "indexed document (a name matches an id equal to it or ending with '/' + it; fix the gold file: "
                   "rows naming them measure nothing about their source): " + unknown_lines(run))
    if run.expected_elsewhere:
        click.echo(f"expected strings found elsewhere: {len(run.expected_elsewhere)} rows have expected strings that "
                   "also stand in documents outside their expected_sources, where a chunk counts as a hit without "
                   "the answer; a longer string from the answer passage tells them apart: " + elsewhere_lines(run))
    click.echo(f"\nwrote {out}/results.json, results.md, chunks.json" + ("" if no_chart else ", chart.png"))
    first = run.arms[0]
    click.echo(f"each arm's settings and index: {out}/arms/ (one question as an arm saw it: "
               f"ragplugins --config {out}/arms/{arm_config_file(first)} query QUESTION --trace)")


@cli.command("demo")
@click.option("--persist-dir", type=click.Path(file_okay=False), default=None,
              help="Where to build the demo index (default: a temporary directory).")
def demo_cmd(persist_dir: str | None) -> None:
    """Index the example corpus and show retrieval with plugins off and on, side by side."""
    from ragplugins.demo import run_demo

    run_demo(console, persist_dir)


_commands_added = False


def add_plugin_commands() -> bool:
    """Let every installed plugin add its subcommands (once); True the first time."""
    global _commands_added
    if _commands_added:
        return False
    _commands_added = True
    reg = registry()
    for record in reg.loaded().values():
        try:
            reg.call(record, "ragplugins_register_commands", cli=cli)
        except RagPluginsError as exc:
            click.echo(f"warning: {exc}", err=True)
    return True


def get_cli() -> click.Group:
    """The command group; plugins' subcommands are added when first asked for."""
    return cli


def main() -> None:
    # Set here, not in the group: a host that invokes the group (CliRunner, pytest.warns) keeps its own.
    warnings.showwarning = _show_warning
    cli()


if __name__ == "__main__":
    main()
