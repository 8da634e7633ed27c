"""The config file: ``ragplugins.toml`` or ``[tool.ragplugins]`` in pyproject.toml.

``enable = [...]`` switches plugins on; ``[ragplugins.<plugin>]`` sections are
validated by that plugin's own pydantic model. Errors name the file, section,
key and bad value, list what is allowed and suggest the closest valid key.
"""

from __future__ import annotations

import difflib
import importlib.metadata as md
import re
import tomllib
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ragplugins.contributions import QUERY_TIME
from ragplugins.errors import ConfigError

CONFIG_FILENAME = "ragplugins.toml"


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class StorageSettings(BaseModel):
    """``[ragplugins.storage]``: how to reach persist_dir when it is on object storage (``s3://bucket/prefix``).

    Secrets are never written here: the keys name the environment variables that hold them."""

    model_config = ConfigDict(extra="forbid")

    endpoint: str | None = Field(
        None, description="URL of an S3-compatible server (MinIO, Ceph, a local test server); default: "
                          "$AWS_ENDPOINT_URL_S3, else $AWS_ENDPOINT_URL, else AWS S3.")
    region: str | None = Field(None, description="Default: $AWS_REGION, else $AWS_DEFAULT_REGION, else 'us-east-1'.")
    allow_http: bool | None = Field(None, description="Allow a plain-http endpoint; default: true when endpoint "
                                                      "starts with http://.")
    access_key_id_env: str = Field("AWS_ACCESS_KEY_ID", description="Name of the environment variable holding the "
                                   "access key id (when unset, boto3's chain: ~/.aws profiles, instance roles).",
                                   json_schema_extra={"hide_value": True})
    secret_access_key_env: str = Field("AWS_SECRET_ACCESS_KEY", description="Name of the environment variable "
                                       "holding the secret access key.", json_schema_extra={"hide_value": True})
    session_token_env: str = Field("AWS_SESSION_TOKEN", description="Name of the environment variable holding a "
                                   "session token, if any.", json_schema_extra={"hide_value": True})
    lock_lease: float = Field(60.0, ge=1, le=3600, description="Seconds a writer's lock lasts without renewal (it "
                              "renews every third of it while writing): a stopped writer blocks others this long.")

    @field_validator("access_key_id_env", "secret_access_key_env", "session_token_env")
    @classmethod
    def _names_a_variable(cls, value: str) -> str:
        # Its value is never echoed: a secret pasted here by mistake must not reach an error message.
        if not _ENV_NAME.fullmatch(value):
            raise ValueError("must be the NAME of an environment variable (letters, digits, '_'), not a secret "
                             "itself; put the secret in that variable")
        return value


class CoreSettings(BaseModel):
    """Settings of the core itself (the top level of ``[ragplugins]``)."""

    model_config = ConfigDict(extra="forbid")

    enable: list[str] = Field(default_factory=list, description="Plugins to switch on, by name.")
    on_plugin_error: Literal["raise", "warn"] = Field(
        "raise", description="What a failing plugin does: raise its error, or warn and step aside.")
    persist_dir: str = Field(".ragplugins", description="Where the embedded LanceDB index lives: a folder (a "
                                                        "relative path is relative to the config file's folder) or "
                                                        "s3://bucket/prefix on S3-compatible object storage (see "
                                                        "[ragplugins.storage] and docs/stores.md).")
    table: str = Field("chunks", description="LanceDB table name inside persist_dir.")
    embed_model: str = Field(
        "default", description="'default' (the bundled all-MiniLM-L6-v2: on torch when installed, else on ONNX "
                               "Runtime; same vectors, one index), 'bundled-torch', 'bundled-onnx' (no torch), or a "
                               "Hugging Face name or local path.")
    retrieval: Literal["hybrid", "dense"] = Field(
        "hybrid", description="First stage: dense + BM25 fused (see fusion), or dense only.",
        json_schema_extra=QUERY_TIME)
    top_k: int = Field(20, ge=1, le=1000, description="First-stage candidates per query.",
                       json_schema_extra=QUERY_TIME)
    vector_index: Literal["flat", "ivf_flat", "ivf_pq"] = Field(
        "flat", description="The embedded LanceDB index's dense search. 'flat': every vector is compared (exact; "
                            "cost grows with the table). 'ivf_flat' / 'ivf_pq': an approximate LanceDB index that "
                            "reads 20 of about sqrt(rows) partitions per query, built once the table holds 10,000 "
                            "chunks and brought up to date after writes that leave more than a tenth of the rows "
                            "outside it (rows not yet in it are still searched exactly). ivf_flat keeps a copy of "
                            "the vectors (quick to build); ivf_pq compresses them (about 10x slower to build on a "
                            "CPU) and re-ranks 10x top_k by the full vectors. For a million chunks and up.")
    fusion_depth: int = Field(
        50, ge=1, le=1000, description="Hybrid: each leg (dense, BM25) ranks at least this many candidates before "
                                      "RRF fusion cuts to top_k, so agreement between the legs below top_k counts.",
        json_schema_extra=QUERY_TIME)
    fusion: Literal["distribution", "rrf"] = Field(
        "distribution", description="Hybrid: how the dense and BM25 lists become one. 'distribution': each leg's "
                                    "scores normalised by their own mean +- 3 standard deviations and summed, so "
                                    "the leg whose best results stand out leads for this query; 'rrf': reciprocal "
                                    "rank fusion (k = 60), which ignores how far apart the scores are.",
        json_schema_extra=QUERY_TIME)
    splitter: Literal["auto", "sentence", "markdown", "sections"] = Field(
        "sentence", description="Chunking: 'sentence' is SentenceSplitter alone (a chunk may span headings; a "
                                "sentence too long for a chunk is cut where white space follows its punctuation, "
                                "not inside a file name or address); "
                                "'auto' splits Markdown files at every heading first, which leaves many small "
                                "chunks (measured worse on Markdown corpora, docs/benchmarks.md); 'markdown' "
                                "treats every file as Markdown; 'sections' packs whole sections (headings of "
                                "Markdown, reStructuredText, AsciiDoc, numbered headings) into each chunk while "
                                "they fit, and splits a larger section by sentences.")
    chunk_size: int = Field(
        512, ge=32, le=8192,
        description="Chunk size in tokens. The bundled MiniLM embeds only the first 256 word pieces of a chunk "
                    "(the BM25 leg reads all of it); 256 measured better on some bench corpora and worse on "
                    "others (docs/benchmarks.md), so measure yours with `ragplugins eval`.")
    chunk_overlap: int = Field(50, ge=0, le=4096, description="Overlap between chunks in tokens.")
    embed_windows: bool = Field(
        False, description="Embed each chunk as the mean of its windows, so an embedder that reads fewer tokens "
                           "than a chunk holds (the bundled MiniLM reads 256 word pieces) sees all of it "
                           "(ragplugins.windows; sentence-transformers embedders). Costs about twice the embedding "
                           "time. Re-index (`ragplugins index PATH --reindex`) after changing it.")
    window_scoring: Literal["either", "blend", "off"] = Field(
        "either", description="The dense leg's score of a chunk longer than the embedder reads (the bundled MiniLM "
                              "reads 256 word pieces of a ~550-piece chunk; ragplugins.windows). 'either': the better "
                              "of the chunk's places in two rankings, by its first window's cosine and by the mean of "
                              "its first and best windows' cosines, each normalised on its own top. 'blend': its first "
                              "window's cosine plus a quarter of the way to its best window's. Both keep every "
                              "window's vector with its chunk (512-token chunks: 2.4-2.8x the texts to embed, about "
                              "4 kB of store per window) and hold them in memory at query time, like the BM25 leg. "
                              "'off': the first window only (the store's own dense search). Re-index after changing "
                              "'off' to another; an index written without the windows is searched as 'off'. "
                              "Sentence-transformers embedders only.")
    merge_adjacent: int = Field(
        2, ge=1, le=16,
        description="Neighbouring chunks of one document that both rank among the candidates (one of them in the "
                    "top_k places) are returned as one passage of up to this many chunks (ragplugins.passages), so "
                    "the top_k places hold more distinct text and the first places are the same whatever top_k: "
                    "two 512-token chunks make LlamaIndex's default 1024-token chunk, so no passage is longer than "
                    "what that default gives; a chunk whose text a place already holds (a page installed twice) "
                    "joins it by its id alone. 1: every chunk its own place. Query time only; no re-index.",
        json_schema_extra=QUERY_TIME)
    window_headings: bool = Field(
        False, description="With window scoring or embed_windows: embed a window that starts inside a chunk with the "
                           "headings in force where it starts in front of it (\"dgram > Class: dgram.Socket > "
                           "socket.bind()\"; ragplugins.headings). Measured 2026-12-02: higher on the dev questions "
                           "of nine corpora, lower on the test questions of seven (docs/benchmarks.md), so off; "
                           "measure it on yours with `ragplugins eval`. Re-index after changing it.")
    max_file_mb: float = Field(25.0, gt=0, description="Files larger than this are skipped with an error.")
    exclude: list[str] = Field(
        default_factory=list,
        description="Files under the folders given that are not indexed, as patterns matched against each file's "
                    "id (its path below the folder given, as `query` shows it; `*` also crosses folders), as "
                    "LlamaIndex's SimpleDirectoryReader(exclude=...): [\"_modules/*\", \"genindex.html\"]. A file "
                    "indexed before that a pattern now names leaves the index on the next run, as a removed one does.")
    llm: str | None = Field(
        None, description="For the CLI: import path of a zero-argument callable that returns a LlamaIndex "
                          "LLM, e.g. 'myapp.models:make_llm'. The CLI imports and calls it, so it runs that "
                          "code: use only configs you trust. Python callers pass llm= to ragplugins.load().")
    storage: StorageSettings = Field(default_factory=StorageSettings,
                                     description="How to reach an s3:// persist_dir.")

    @field_validator("enable")
    @classmethod
    def _each_once(cls, value: list[str]) -> list[str]:
        return list(dict.fromkeys(value))  # a plugin named twice is switched on once

    @field_validator("persist_dir")
    @classmethod
    def _known_location(cls, value: str) -> str:
        scheme, sep, rest = value.partition("://")
        if sep and scheme.lower() != "s3":
            raise ValueError("only local folders and s3://bucket/prefix (S3-compatible object storage) are supported")
        if sep and not rest.split("/", 1)[0]:
            raise ValueError("name the bucket, as in s3://bucket/prefix")
        return value

    @field_validator("table")
    @classmethod
    def _lancedb_table_name(cls, value: str) -> str:
        # LanceDB's own rule, checked here so `config check` knows before the first index run.
        if not re.fullmatch(r"[A-Za-z0-9_.\-]{1,128}", value):
            raise ValueError(f"table = {value!r}: use 1-128 letters, digits, '_', '-' or '.' (a LanceDB table name)")
        return value

    @field_validator("embed_model")
    @classmethod
    def _local_model_exists(cls, value: str) -> str:
        # A Hub name ('org/model') cannot be told from a relative path; one written as a path can.
        if value.startswith(("/", "./", "../", "~")) and not Path(value).expanduser().exists():
            raise ValueError(f"embed_model = {value!r}: no such file or directory; give the path of a local "
                             "model folder, a Hugging Face name, or 'default'")
        return value


    @model_validator(mode="after")
    def _overlap_below_size(self) -> CoreSettings:
        if self.chunk_overlap >= self.chunk_size:
            raise ValueError(f"chunk_overlap = {self.chunk_overlap} must be smaller than chunk_size = "
                             f"{self.chunk_size}; lower chunk_overlap or raise chunk_size")
        return self


@dataclass
class Config:
    """A validated config: core settings plus one validated model per plugin section."""

    core: CoreSettings = field(default_factory=CoreSettings)
    plugins: dict[str, BaseModel] = field(default_factory=dict)
    # Raw plugin sections, validated once the installed plugins are known.
    raw_sections: dict[str, dict] = field(default_factory=dict)
    source: str = "defaults"
    # Problems in the core part, reported together with the plugin sections' problems.
    problems: list[str] = field(default_factory=list)

    @property
    def enabled(self) -> list[str]:
        return list(self.core.enable)

    def for_plugin(self, name: str) -> BaseModel | None:
        return self.plugins.get(name)


def _has_ragplugins_table(pyproject: Path) -> bool:
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError):
        return False
    return "ragplugins" in data.get("tool", {})


def find_config(start: Path | None = None) -> Path | None:
    """The nearest ragplugins.toml, or pyproject.toml with [tool.ragplugins], in ``start`` or a parent
    folder, as pyproject.toml is found. The search stops at the project root: a folder holding .git,
    .hg or a pyproject.toml (after looking in it), so another project's config above is never read."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / CONFIG_FILENAME
        if candidate.is_file():
            return candidate
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file() and _has_ragplugins_table(pyproject):
            return pyproject
        if pyproject.is_file() or (folder / ".git").exists() or (folder / ".hg").exists():
            return None
    return None


def _stray_tables(data: dict, path: Path) -> list[str]:
    """What the file holds outside [ragplugins] and would be ignored, such as a misspelt
    ``[ragplugin.crossref]``. In pyproject.toml only tables close to ``ragplugins`` count."""
    pyproject = path.name == "pyproject.toml"
    names, prefix, top = (data.get("tool", {}), "tool.", "tool.ragplugins") if pyproject else (data, "", "ragplugins")
    problems = []
    for name in sorted(names):
        close = difflib.get_close_matches(name, ["ragplugins"], n=1, cutoff=0.75)
        if name == "ragplugins" or (pyproject and not close):
            continue
        value = names[name]
        if not isinstance(value, dict):
            problems.append(f"{name} = {value!r}: outside [{top}], so not read; move it under [{top}]")
            continue
        first = next((k for k, v in value.items() if isinstance(v, dict)), None)
        sub = f".{first}" if first else ""
        problems.append(f"[{prefix}{name}{sub}]: not read by ragplugins"
                        + (f" (did you mean '[{top}{sub}]'?)" if close else f"; settings go under [{top}]"))
    return problems


def _read_source(source: str | Path | dict | None) -> tuple[dict, str, list[str]]:
    """(the ``[ragplugins]`` table, a label naming where it came from, problems found in the file)."""
    if source is None:
        found = find_config()
        if found is None:
            return {}, "defaults", []
        source = found
    if isinstance(source, dict):
        table = source.get("ragplugins", source)
        return dict(table), "dict", []
    path = Path(source)
    if not path.is_file():
        raise ConfigError([f"config file '{path}' does not exist; create it or pass a dict"], str(path))
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([f"not valid TOML: {exc}"], str(path)) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError([f"cannot read it: {exc}"], str(path)) from exc
    stray = _stray_tables(data, path)
    if path.name == "pyproject.toml":
        table = data.get("tool", {}).get("ragplugins")
        if table is None:
            raise ConfigError(["no [tool.ragplugins] table in it", *stray], str(path))
    elif not data:  # an empty ragplugins.toml (say, one being written by `config show --defaults >`)
        table = {}
    else:
        table = data.get("ragplugins")
        if table is None:
            raise ConfigError([f"no [ragplugins] table in it (found: {sorted(data) or 'nothing'})",
                               *[p for p in stray if "did you mean" in p]], str(path))
    return dict(table), str(path), stray


def read_config_source(source: str | Path | dict | None) -> tuple[dict, str]:
    """Return (the ``[ragplugins]`` table, a label naming where it came from)."""
    table, label, problems = _read_source(source)
    if problems:
        raise ConfigError(problems, label)
    return table, label


def check_prompt_template(value: str | None, required: dict[str, str],
                          optional: tuple[str, ...] = ()) -> str | None:
    """Validate a prompt-template setting: every ``required`` variable (name -> what goes there) is
    present and no variable outside ``required`` and ``optional`` is used. For pydantic validators."""
    if value is None:
        return value
    from llama_index.core.prompts.utils import get_template_vars

    found = set(get_template_vars(value))
    for name, what in required.items():
        if name not in found:
            raise ValueError(f"the prompt must contain the placeholder {{{name}}}; add it where {what} goes")
    allowed = [*required, *optional]
    unknown = sorted(found - set(allowed))
    if unknown:
        raise ValueError(f"the prompt uses unknown variables {unknown}; allowed: "
                         f"{', '.join('{' + v + '}' for v in allowed)}")
    return value


def _nearest(word: str, options: list[str]) -> str | None:
    match = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    return match[0] if match else None


def _closest(word: str, options: list[str]) -> str:
    match = _nearest(word, options)
    return f" (did you mean '{match}'?)" if match else ""


def _table_model(model: type[BaseModel], path: tuple) -> type[BaseModel]:
    """The model of the nested table at ``path`` (a key typo inside it lists that table's keys), through
    lists of tables too (``families.0``: crossref's family keys, not crossref's)."""
    for part in path:
        if isinstance(part, int):
            continue   # an item of a list of tables: the item's model was taken with the list
        field = model.model_fields.get(str(part))
        ann = field.annotation if field is not None else None
        if typing.get_origin(ann) is list and typing.get_args(ann):
            ann = typing.get_args(ann)[0]
        if not (isinstance(ann, type) and issubclass(ann, BaseModel)):
            break
        model = ann
    return model


def _hides_value(model: type[BaseModel], key: str) -> bool:
    """Whether a bad value of ``key`` stays out of messages (a setting where a secret may be pasted by mistake)."""
    extra = getattr(model.model_fields.get(key), "json_schema_extra", None)
    return isinstance(extra, dict) and bool(extra.get("hide_value"))


def pydantic_problems(model: type[BaseModel], data: dict, section: str) -> list[str]:
    """Validate ``data`` with ``model``; return readable problems (empty when valid)."""
    try:
        model.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            key = ".".join(str(p) for p in err["loc"]) or "(section)"
            if err["type"] == "extra_forbidden":
                allowed = list(_table_model(model, err["loc"][:-1]).model_fields)
                last = str(err["loc"][-1])
                problems.append(f"{section} {key}: unknown key{_closest(last, allowed)}; "
                                f"allowed keys: {', '.join(allowed) or 'none'}")
            else:
                value = err.get("input")
                if err["loc"] and _hides_value(_table_model(model, err["loc"][:-1]), str(err["loc"][-1])):
                    value = "<hidden>"
                problems.append(f"{section} {key} = {value!r}: {err['msg']}")
        return problems
    return []


def _plugin_extras() -> list[tuple[str, str]]:
    """(plugin, extra) for every plugin distribution the core's own metadata offers as an extra."""
    try:
        requires = md.requires("ragplugins") or []
    except md.PackageNotFoundError:
        requires = []
    found = []
    for req in requires:
        m = re.match(r"ragplugins[-_]([A-Za-z0-9_.-]+?)\s*[<>=!~;].*extra\s*==\s*['\"]([^'\"]+)['\"]", req)
        if m:
            found.append((m.group(1).replace("-", "_"), m.group(2)))
    return found


def install_hint(plugin: str) -> str:
    """Which ``pip install ragplugins[...]`` brings ``plugin``, from the core's own metadata."""
    extras = [extra for name, extra in _plugin_extras() if name == plugin.replace("-", "_")]
    if extras:
        best = plugin if plugin in extras else sorted(extras, key=lambda e: e == "all")[0]
        return f"pip install 'ragplugins[{best}]'"
    return f"pip install ragplugins-{plugin}"


def _table_name(label: str) -> str:
    """How the config's top table is written where it came from (problems quote it as the user wrote it)."""
    return "tool.ragplugins" if Path(label).name == "pyproject.toml" else "ragplugins"


def parse_config(source: str | Path | dict | None, strict: bool = True) -> Config:
    """Read and validate the core part; plugin sections are kept for :func:`validate_plugins`.
    With ``strict=False`` core problems are kept on the Config to be reported with the plugins'."""
    table, label, stray = _read_source(source)
    core_tables = {k for k, f in CoreSettings.model_fields.items()
                   if isinstance(f.annotation, type) and issubclass(f.annotation, BaseModel)}
    sections = {k: v for k, v in table.items() if isinstance(v, dict) and k not in core_tables}
    core_data = {k: v for k, v in table.items() if not isinstance(v, dict) or k in core_tables}
    problems = stray + pydantic_problems(CoreSettings, core_data, f"[{_table_name(label)}]")
    if problems and strict:
        raise ConfigError(problems, label)
    if problems:
        valid = {k: v for k, v in core_data.items() if not pydantic_problems(CoreSettings, {k: v}, "")}
        try:
            core = CoreSettings.model_validate(valid)
        except ValidationError:  # keys valid one by one but not together: the problems already say so
            core = CoreSettings()
    else:
        core = CoreSettings.model_validate(core_data)
    if label not in ("defaults", "dict") and "://" not in core.persist_dir and not Path(core.persist_dir).is_absolute():
        # Relative to the file, as a path written in a file is read: the same index from any directory.
        core.persist_dir = str(Path(label).parent / core.persist_dir)
    return Config(core=core, raw_sections=sections, source=label, problems=problems)


def validate_plugins(config: Config, infos: dict[str, Any], failed: dict[str, str] | None = None) -> None:
    """Validate enabled names and every plugin section against the installed plugins.

    ``infos`` maps plugin name -> PluginInfo of loaded plugins; ``failed`` maps
    names of plugins that are installed but not loaded -> the reason.
    """
    failed = failed or {}
    top = _table_name(config.source)
    names = sorted(infos)
    problems: list[str] = list(config.problems)
    for name in config.core.enable:
        if name in infos:
            continue
        if name in failed:
            problems.append(f"[{top}] enable: plugin '{name}' is installed but not loaded: {failed[name]}")
        else:
            # A misspelt name is matched against the installed plugins, then against those the core
            # offers as extras (a typo must not become advice to install a package that does not exist).
            offered = sorted({plugin for plugin, _ in _plugin_extras()} - set(names))
            meant = _nearest(name, names) or _nearest(name, offered)
            advice = "" if meant in names else f"; to install it: {install_hint(meant or name)}"
            guess = f" (did you mean '{meant}'?)" if meant else ""
            problems.append(f"[{top}] enable: no plugin named '{name}' is installed{guess}; "
                            f"installed: {', '.join(names) or 'none'}{advice}")
    plugins: dict[str, BaseModel] = {}
    for name, data in config.raw_sections.items():
        if name not in infos:
            if name not in failed:
                problems.append(f"[{top}.{name}]: no plugin named '{name}' is installed"
                                f"{_closest(name, names)}; installed: {', '.join(names) or 'none'}")
            continue
        model = infos[name].config_model
        found = pydantic_problems(model, data, f"[{top}.{name}]")
        if found:
            problems.extend(found)
        else:
            plugins[name] = model.model_validate(data)
    if problems:
        raise ConfigError(problems, config.source)
    for name, info in infos.items():
        plugins.setdefault(name, info.config_model())
    config.plugins = plugins


def config_reference(infos: dict[str, Any]) -> str:
    """Markdown reference of every key, generated from the models (docs cannot drift)."""
    out = ["# Configuration reference", "",
           "Generated by `ragplugins config docs` from the pydantic models; do not edit by hand.", ""]

    def section(model: type[BaseModel], title: str) -> list[str]:
        rows = ["| key | type | default | description |", "|---|---|---|---|"]
        nested: list[str] = []
        for key, f in model.model_fields.items():
            ann = f.annotation
            if isinstance(ann, type) and issubclass(ann, BaseModel):
                rows.append(f"| `{key}` | table | see `[{title[1:-1]}.{key}]` | {f.description or ''} |")
                nested += section(ann, f"[{title[1:-1]}.{key}]")
                continue
            generic = typing.get_origin(ann) is not None  # Literal[...], list[str], X | None: show it whole
            name = str(ann).replace("typing.", "") if generic else getattr(ann, "__name__", str(ann))
            default = f.get_default(call_default_factory=True)
            if isinstance(default, BaseModel):
                default = default.model_dump(mode="json")
            rows.append(f"| `{key}` | `{name}` | `{default!r}` | {(f.description or '').replace('|', '/')} |")
        return [f"### `{title}`", ""] + rows + [""] + nested

    out += section(CoreSettings, "[ragplugins]")
    for name in sorted(infos):
        info = infos[name]
        out += [f"## plugin `{name}`", "", info.description or "", ""]
        if info.config_model.model_fields:
            out += section(info.config_model, f"[ragplugins.{name}]")
        else:
            out += ["No settings.", ""]
    return "\n".join(out)


def without_nulls(value: Any) -> Any:
    """A config's values as TOML can hold them: TOML has no null, so a key set to None is left out, as unset."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value if v is not None]
    return value
