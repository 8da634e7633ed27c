"""Run arms (configs) over a corpus and a gold set; score first-stage and final lists."""

from __future__ import annotations

import copy
import difflib
import fcntl
import functools
import hashlib
import inspect
import json
import math
import random
import re
import shutil
import statistics
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import tomlkit

from ragplugins.app import RagPlugins, checked_config, load, plugin_config_problems
from ragplugins.config import without_nulls
from ragplugins.contributions import CORE_KEYS_KEPT_APART, changed_settings, index_time_settings, short_value
from ragplugins.embeddings import embedder_identity, load_embed_model
from ragplugins.errors import ConfigError, InputError, PluginError
from ragplugins.eval import metrics
from ragplugins.eval.gold import GoldRow, names_document
from ragplugins.plugins import PluginRegistry
from ragplugins.progress import IndexProgress
from ragplugins.resume import ResumableEmbedding, index_vectors
from ragplugins.writes import atomic_write_text

SEED = 20260808
INDEX_HOOKS = ("ragplugins_transformations", "ragplugins_after_index")
METRICS = ("recall@5", "recall@10", "recall@20", "ndcg@10")
DEFAULT_CACHE = Path.home() / ".cache" / "ragplugins" / "eval"


@dataclass
class Arm:
    """One configuration to measure. ``config`` is the ``[ragplugins]`` table; ``base`` an optional
    factory (index, k) -> BaseRetriever replacing the core first stage (to measure any retriever);
    ``budget_of`` names an arm whose mean final-list length sets this arm's k (budget-matched control)."""

    name: str
    config: dict = field(default_factory=dict)
    budget_of: str | None = None
    base: Callable[[Any, int], Any] | None = None


def _seed() -> None:
    random.seed(SEED)
    try:
        import numpy as np

        np.random.seed(SEED)
    except ImportError:  # pragma: no cover
        pass
    try:
        import torch

        torch.manual_seed(SEED)
    except ImportError:  # pragma: no cover
        pass


def files_fingerprint(paths: Sequence[Path]) -> list[list[str]]:
    """(relative path, sha256 of the bytes) of every file under ``paths``: what a cached index was built from."""
    out = []
    for root in paths:
        root = Path(root)
        files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]
        for f in files:
            rel = f.relative_to(root).as_posix() if root.is_dir() else f.name
            out.append([rel, hashlib.sha256(f.read_bytes()).hexdigest()])
    return out


def code_hash(*modules: Any) -> str:
    """Hash of the source files of the packages that hold ``modules``: a code change without a
    version bump must still invalidate cached indexes."""
    digest = hashlib.sha256()
    for module in modules:
        root = Path(inspect.getfile(module)).parent
        for f in sorted(root.rglob("*.py")):
            digest.update(f.relative_to(root).as_posix().encode())
            digest.update(f.read_bytes())
    return digest.hexdigest()[:16]


def index_fingerprint(rp: RagPlugins, paths: Sequence[Path]) -> str:
    """Content of the corpus files, embedder, the core's index-time settings (chunking, windows) and code, and
    every index-time plugin's version, code and config; settings marked QUERY_TIME are left out, so arms that
    differ only in them share an index."""
    return _fingerprint(index_setup(rp, paths))


def _fingerprint(setup: dict) -> str:
    return hashlib.sha256(json.dumps(setup, sort_keys=True).encode()).hexdigest()[:20]


def index_setup(rp: RagPlugins, paths: Sequence[Path]) -> dict:
    """What :func:`index_fingerprint` hashes (kept beside a cached index to say what a rebuild changed)."""
    import ragplugins

    plugins = {}
    for record in rp.enabled:
        if any(h in record.hooks for h in INDEX_HOOKS):
            cfg = rp.config.for_plugin(record.name)
            plugins[record.name] = {"version": record.version, "code": code_hash(inspect.getmodule(record.plugin)),
                                    "config": index_time_settings(cfg) if cfg is not None else None}
    # Where the index lives and which plugins and models it has are keyed apart (or are the cache's own).
    core = {k: v for k, v in index_time_settings(rp.config.core).items() if k not in CORE_KEYS_KEPT_APART}
    payload = {"files": files_fingerprint(paths), "embedder": embedder_identity(rp.embed_model),
               "core": core, "plugins": plugins, "core_code": code_hash(ragplugins)}
    if rp.llm is not None and plugins:
        # Index-time plugins may write with the LLM (overviews): another model is another index.
        payload["llm"] = llm_identity(rp.llm)
    return payload


def setup_changes(old: dict, new: dict) -> list[str]:
    """What differs between two :func:`index_setup` results, as people name it: "crossref.max_refs_per_chunk
    8 -> 4", "chunk_size 512 -> 256", "files: 1 changed (a.md)", "ragplugins code changed"."""
    out = []
    before, after = dict(old.get("files", [])), dict(new.get("files", []))
    files = {"changed": [f for f in after if f in before and before[f] != after[f]],
             "added": [f for f in after if f not in before], "removed": [f for f in before if f not in after]}
    if any(files.values()):
        out.append("files: " + ", ".join(f"{len(names)} {what} ({', '.join(names[:3])}"
                                         f"{', ...' if len(names) > 3 else ''})"
                                         for what, names in files.items() if names))
    plugins_old, plugins_new = old.get("plugins", {}), new.get("plugins", {})
    # A plugin switched on or off is one change, not one per setting of it.
    switched = sorted(plugins_old.keys() ^ plugins_new.keys())
    out.extend(f"{name} {'on' if name in plugins_new else 'off'}" for name in switched)
    flat_old, flat_new = _flat_setup(old), _flat_setup(new)
    for key, (a, b) in changed_settings(flat_old, flat_new).items():
        if any(key.startswith((f"{name}.", f"{name} ")) for name in switched):
            continue
        was, now = (short_value(v, 40) if key in flat else "(unset)" for v, flat in ((a, flat_old), (b, flat_new)))
        # Code is known by its hash, which says nothing to a reader.
        out.append(f"{key} changed" if key.endswith(" code") else f"{key} {was} -> {now}")
    return out


def _flat_setup(setup: dict) -> dict[str, Any]:
    flat: dict[str, Any] = {key: value for key, value in setup.get("core", {}).items()}
    flat.update({"embedder": setup.get("embedder"), "llm": setup.get("llm", "none"),
                 "ragplugins code": setup.get("core_code")})
    for name, plugin in setup.get("plugins", {}).items():
        flat[f"{name} version"], flat[f"{name} code"] = plugin.get("version"), plugin.get("code")
        flat.update({f"{name}.{key}": value for key, value in (plugin.get("config") or {}).items()})
    return flat


# In the cache: which index each arm name used last on the same folders (what its next rebuild is compared with),
# and beside each index the setup it was built with.
ARMS_FILE, SETUP_FILE = "arms.json", "setup.json"
# Every text vector any arm's build embedded, by embedder and text (ragplugins.resume): an arm whose index-time
# plugins change no chunk's text builds its index without the model.
KEPT_VECTORS = "vectors.sqlite"
# How often a build's progress is printed where no live bar can redraw (a log file, a pipe).
PROGRESS_EVERY_S = 30
# Changes named in a rebuild's line; the rest are counted.
MAX_CHANGES_SHOWN = 4


def _rebuild_reason(cache: Path, previous: str | None, setup: dict) -> str:
    """Why an arm's index is being built: what differs from the index the same arm used last time."""
    earlier = _read_json(cache / previous / SETUP_FILE) if previous else {}
    changes = setup_changes(earlier, setup) if earlier else []
    if not changes:
        return "building the index (no earlier index of this arm on these folders to compare with)"
    more = len(changes) - MAX_CHANGES_SHOWN
    return "rebuilding the index: " + ", ".join(changes[:MAX_CHANGES_SHOWN]) + (f" and {more} more" if more > 0 else "")


def _read_json(path: Path) -> dict:
    try:
        value = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def llm_identity(llm: Any) -> str:
    """Class and model name of a LlamaIndex LLM (what decides the text it writes)."""
    try:
        model = str(llm.metadata.model_name)
    except Exception:  # noqa: BLE001 - an LLM without metadata is still identified by its class
        model = ""
    return f"{type(llm).__module__}.{type(llm).__qualname__}:{model}"


def merge_config(base: dict, override: dict) -> dict:
    """``override`` laid over ``base``, tables merged key by key (an arm's config over the base config)."""
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge_config(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


WARMUP_QUERY = "ragplugins eval warm-up question"


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    idx = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[idx]


@dataclass
class EvalRun:
    arms: list[str]
    ks: list[int]
    rows: list[dict] = field(default_factory=list)
    coverage_failures: list[dict] = field(default_factory=list)
    across_marks: list[dict] = field(default_factory=list)   # strings matched as a browser shows them
    expected_elsewhere: list[dict] = field(default_factory=list)
    unknown_documents: list[dict] = field(default_factory=list)
    invariant: dict = field(default_factory=dict)
    meta: dict = field(default_factory=dict)
    # The [ragplugins] table each arm built and searched its index with, persist_dir that index: written as
    # arms/<arm>.toml, so `ragplugins --config arms/off.toml query ...` shows one question as that arm saw it.
    arm_configs: dict[str, dict] = field(default_factory=dict)
    # Per arm, the text of every place its lists hold, by the name the rows give it ("guide/install.md#8+9"):
    # written as chunks.json, so a rank can be read without searching again.
    texts: dict[str, dict[str, str]] = field(default_factory=dict)

    def _rows(self, arm: str, k: int, slice: str = "all") -> list[dict]:
        return [r for r in self.rows if r["arm"] == arm and r["k"] == k and slice in r["slices"]]

    def slices(self) -> list[str]:
        return sorted({s for r in self.rows for s in r["slices"]}, key=lambda s: (s != "all", s))

    def summary(self, arm: str, k: int, slice: str = "all") -> dict[str, Any]:
        rows = self._rows(arm, k, slice)
        out: dict[str, Any] = {"n": len(rows)}
        if not rows:
            return out
        for stage in ("first", "final"):
            for m in METRICS:
                out[f"{stage}.{m}"] = statistics.fmean(r[stage][m] for r in rows)
        for m in (f"recall@{k}", f"ndcg@{k}"):   # the final list at the k asked for, where a plugin appended
            if all(m in r["final"] for r in rows):
                out[f"final.{m}"] = statistics.fmean(r["final"][m] for r in rows)
        out["final_len"] = statistics.fmean(r["final"]["len"] for r in rows)
        out["k_used"] = rows[0]["k_used"]
        lat = [r["latency_ms"] for r in rows]
        out["latency_ms_p50"], out["latency_ms_p90"] = _percentile(lat, 0.5), _percentile(lat, 0.9)
        out["latency_ms_mean"] = statistics.fmean(lat)
        keys = sorted({key for r in rows for key in r["instrument"]})
        for key in keys:
            values = [r["instrument"][key] for r in rows if r["instrument"].get(key) is not None]
            if values and all(isinstance(v, (int, float, bool)) for v in values):
                out[key] = statistics.fmean(float(v) for v in values)
                out[key + ".n"] = len(values)
        return out

    def compare(self, a: str, b: str, k: int, metric: str = "final.ndcg@10") -> dict[str, list[str]]:
        """Per query: rows where arm ``b`` is better / worse than arm ``a`` on ``metric``, equal on it with ``a``'s list
        and more after it ("appended": crossref's hop at a small k), equal with another list ("reordered": a plugin
        that moved chunks without moving the metric did act), or the same list."""
        stage, name = metric.split(".", 1)
        left = {r["id"]: r for r in self._rows(a, k)}
        right = {r["id"]: r for r in self._rows(b, k)}
        out: dict[str, list[str]] = {"improved": [], "regressed": [], "appended": [], "reordered": [], "unchanged": []}
        for qid in sorted(left.keys() & right.keys()):
            d = right[qid][stage][name] - left[qid][stage][name]
            if abs(d) > 1e-9:
                out["improved" if d > 0 else "regressed"].append(qid)
                continue
            mine, theirs = right[qid].get(f"{stage}_ids") or [], left[qid].get(f"{stage}_ids") or []
            if mine == theirs:
                out["unchanged"].append(qid)
            else:
                out["appended" if len(mine) > len(theirs) and mine[:len(theirs)] == theirs else "reordered"].append(qid)
        return out

    def to_dict(self, timings: bool = True) -> dict:
        rows = self.rows if timings else [{k: v for k, v in r.items() if k not in ("latency_ms", "timings_ms")}
                                          for r in self.rows]
        summaries = {f"{a}@{k}": {s: self.summary(a, k, s) for s in self.slices()} for a in self.arms
                     for k in self.ks}
        if not timings:
            summaries = {key: {s: {m: v for m, v in d.items() if not m.startswith("latency")}
                               for s, d in sl.items()} for key, sl in summaries.items()}
        return {"arms": self.arms, "ks": self.ks, "meta": self.meta, "coverage_failures": self.coverage_failures,
                "across_marks": self.across_marks, "expected_elsewhere": self.expected_elsewhere,
                "unknown_documents": self.unknown_documents,
                "invariant": self.invariant, "summary": summaries,
                "rows": rows}

    def write(self, out_dir: str | Path) -> Path:
        from ragplugins.eval.report import chart, chart_missing, markdown

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        (out / "results.json").write_text(json.dumps(self.to_dict(), indent=1, sort_keys=True, default=str))
        (out / "results.md").write_text(markdown(self))
        (out / "chunks.json").write_text(json.dumps(self.texts, indent=1, sort_keys=True, ensure_ascii=False))
        if chart_missing() is None:
            chart(self, out / "chart.png")
        if self.arm_configs:
            (out / "arms").mkdir(exist_ok=True)
        for name, table in self.arm_configs.items():
            (out / "arms" / arm_config_file(name)).write_text(
                f"# Arm {name!r} of `ragplugins eval`: the settings it ran with and its index (each pass searched "
                "with its own --k, this file's top_k aside).\n" + tomlkit.dumps({"ragplugins": without_nulls(table)}))
        return out


def arm_config_file(arm: str) -> str:
    """The file name of an arm's config under ``arms/`` (an arm's name may hold any character)."""
    return re.sub(r"[^\w.-]", "_", arm) + ".toml"


@dataclass
class Coverage:
    """What an index's chunks make of a gold set's strings and names (:func:`_coverage`)."""

    failures: list[dict] = field(default_factory=list)
    across_marks: list[dict] = field(default_factory=list)
    elsewhere: list[dict] = field(default_factory=list)
    unknown: list[dict] = field(default_factory=list)

    @functools.cached_property
    def read_as_shown(self) -> dict[str, list[tuple[re.Pattern, str]]]:
        """Per row id, the strings that stand in the chunks only with Markdown marks inside: (pattern, string)."""
        return {f["id"]: [(pattern, e) for e in f["as_indexed"] if (pattern := _across_marks(e)) is not None]
                for f in self.across_marks}


def _coverage(rp: RagPlugins, gold: Sequence[GoldRow]) -> Coverage:
    """Rows with an expected string in no chunk; rows whose strings stand in the chunks only with Markdown marks
    inside (a sentence copied from the page a browser shows, where the index holds "[`g_free()`](memory.html)"),
    which are then matched as shown; rows naming ``expected_sources`` whose expected strings make a chunk of
    another document relevant (``match = "any"``: any one string there; ``"all"``: every string in one chunk), so
    that a hit need not hold the answer; and ``expected_sources`` or ``anchor_doc`` names that are no indexed
    document (a typo, or a path the index's ids do not end with), with the ids most like them."""
    texts = [(n.ref_doc_id or "", n.get_content()) for n in rp.context(rp.index()).all_nodes()]
    chunks = [(doc, metrics.norm(text)) for doc, text in texts]
    documents = sorted({doc for doc, _ in chunks})
    out = Coverage()
    failures, elsewhere, unknown = out.failures, out.elsewhere, out.unknown
    for row in gold:
        for key, names in (("expected_sources", row.expected_sources), ("anchor_doc", [row.anchor_doc])):
            for name in filter(None, names):
                if not any(names_document(doc, [name]) for doc in documents):
                    unknown.append({"id": row.id, "key": key, "name": name,
                                    "like": difflib.get_close_matches(name, documents, n=2, cutoff=0.5)})
        wanted = {e: metrics.norm(e) for e in row.expected}
        missing = [e for e, n in wanted.items() if not any(n in text for _, text in chunks)]
        shown = {e: found for e in missing if (found := as_indexed(e, (text for _, text in texts)))}
        if shown:
            out.across_marks.append({"id": row.id, "as_indexed": shown})
        if missing := [e for e in missing if e not in shown]:
            # With match = "any" the row's other strings can still find it; with "all" it is a miss whatever ranks.
            failures.append({"id": row.id, "missing": missing,
                             "unreachable": row.match == "all" or len(missing) == len(wanted)})
        if not row.expected_sources:
            continue
        others = [(doc, text) for doc, text in chunks if not row.is_source(doc)]
        if row.match == "all":
            holders = {" + ".join(wanted): sorted({doc for doc, text in others
                                                   if all(n in text for n in wanted.values())})}
        else:
            holders = {e: sorted({doc for doc, text in others if n in text}) for e, n in wanted.items()}
        loose = {e: docs for e, docs in holders.items() if docs}
        if loose:
            elsewhere.append({"id": row.id, "expected": {e: {"documents": len(d), "e.g.": d[:3]}
                                                         for e, d in loose.items()}})
    return out


def as_shown(texts: Sequence[str], read_as_shown: Sequence[tuple[re.Pattern, str]]) -> list[str]:
    """``texts`` with each place where an expected string stands with Markdown marks inside written as the string
    itself, so the metrics (a plain substring test) find it there."""
    if not read_as_shown:
        return list(texts)
    out = []
    for text in texts:
        for pattern, expected in read_as_shown:
            # re.sub's template: backslashes are its only marks.
            text = pattern.sub(expected.replace("\\", "\\\\"), text)
        out.append(text)
    return out


# What the reader writes into a sentence a browser shows without it: a link's target and brackets, code and
# emphasis marks, an address's angle brackets ("<http://localhost:5555>", a link whose words are its address);
# between words also white space and a block quote's "> " where a line breaks. Possessive (``*+``): a gap is never
# searched again, so a chunk costs one pass per place where the string could start.
_LINK_TARGET = r"\]\([^()\s]*(?:\([^()\s]*\)[^()\s]*)?\)"
_MARK_CHARACTERS = "`*[]<>"
_MARKS = f"(?:{_LINK_TARGET}|[{re.escape(_MARK_CHARACTERS)}])"
_CLOSING_MARKS = re.compile(f"{_MARKS}*")


def as_indexed(expected: str, texts: Iterable[str]) -> str | None:
    """``expected``, copied from the page a browser shows, as it stands in the first of the chunk ``texts`` that
    holds it once Markdown marks are set aside, white space collapsed: "Note that g_free() frees" -> "Note that
    [`g_free()`](glib-Memory-Allocation.html#g-free) frees", a string the metrics find. None when no text holds
    it either way."""
    pattern = _across_marks(expected)
    if pattern is None:
        return None
    for text in texts:
        if (found := pattern.search(text)) is not None:
            # Whole marks at either end: "**gtester** is", "[zero value](#The_zero_value)", not "gtester** is".
            start = len(text[: found.start()].rstrip("`*[<"))
            closing = _CLOSING_MARKS.match(text, found.end())
            end = closing.end() if closing is not None else found.end()
            return " ".join(text[start:end].split())
    return None


def _across_marks(expected: str) -> re.Pattern | None:
    """``expected`` (white space collapsed, any case) with Markdown marks allowed inside and between its words."""
    chars = metrics.norm(expected).strip()
    if not chars:
        return None
    words = chars.split(" ")
    pattern = ""
    for n, word in enumerate(words):
        if n:
            pattern += f"{_MARKS}*+\\s(?:\\s|{_mark_before(word[0], between_words=True)})*+"
        pattern += "".join((f"{_mark_before(c)}*+" if i else "") + re.escape(c) for i, c in enumerate(word))
    return re.compile(pattern, re.IGNORECASE)


def _mark_before(character: str, between_words: bool = False) -> str:
    """One mark that may stand before ``character`` of a string: not that character itself when it is one (taken
    possessively, the ">" of "path->status" went to the gap and the string was never found), nor a link's target
    before a "]". Between words also a block quote's ">" where a line breaks."""
    kept = _MARK_CHARACTERS.replace(character, "")
    if between_words and character != ">":
        kept += ">"
    marks = f"[{re.escape(kept)}]"
    return f"(?:{_LINK_TARGET}|{marks})" if character != "]" else marks


def instrument(rp: RagPlugins, row: GoldRow, result: Any,
               read_as_shown: Sequence[tuple[re.Pattern, str]] = ()) -> dict:
    """Every enabled plugin's own measurements of one search (``ragplugins_eval_instrument``), keyed
    '<plugin>.<name>'; a plugin whose instrument fails is left out under on_plugin_error = 'warn'. A text is relevant
    as the metrics judge it: with the row's strings that stand in the chunks with marks inside read as shown (a hop
    that brought cairo's ca21 answer was counted as bringing nothing)."""
    out: dict[str, Any] = {}

    def relevant(text: str) -> bool:
        return metrics.is_relevant(as_shown([text], read_as_shown)[0], row.expected)

    for record in rp.enabled:
        if "ragplugins_eval_instrument" not in record.hooks:
            continue
        try:
            for values in rp.registry.call(record, "ragplugins_eval_instrument",
                                           config=rp.config.for_plugin(record.name), trace=result.trace, row=row,
                                           first_stage=result.first_stage, final=result.final,
                                           is_relevant=relevant):
                if not isinstance(values, dict):
                    raise PluginError(record.name, "ragplugins_eval_instrument",
                                      TypeError(f"returned {type(values).__name__}, expected a dict"))
                out.update({f"{record.name}.{key}": value for key, value in values.items()})
        except PluginError as err:
            rp.on_plugin_error(err)
    return out


def run_eval(paths: Sequence[str | Path], gold: Sequence[GoldRow], arms: Sequence[Arm], ks: Iterable[int] = (20,),
             *, base_config: dict | None = None, cache_dir: str | Path | None = None, embed_model: Any = None,
             llm: Any = None, force_reindex: bool = False, progress: bool = True,
             registry: PluginRegistry | None = None, reuse_vectors_of: str | Path | dict | None = None) -> EvalRun:
    """Index ``paths`` once per distinct index-time setup (cached by fingerprint), run every
    gold query through every arm at every k, and score both lists. ``reuse_vectors_of``: a config (as
    :func:`ragplugins.load` takes it) whose embedded index, when it was built with the same embedder, lends
    its vectors to the arms' builds (``ragplugins.resume.index_vectors``; ``ragplugins eval`` passes the config
    it runs with, so the folder ``ragplugins index`` embedded is not embedded again)."""
    from rich.console import Console
    from rich.progress import Progress

    _seed()
    roots = [Path(p) for p in paths]
    ks = sorted(set(ks))
    names = [a.name for a in arms]
    if len(set(names)) != len(names):
        raise ValueError(f"arm names must be unique: {names}")
    order = sorted(arms, key=lambda a: a.budget_of is not None)
    for arm in arms:
        if arm.budget_of is not None and arm.budget_of not in names:
            raise ValueError(f"arm '{arm.name}' is budget-matched to unknown arm '{arm.budget_of}'")
    for root in roots:
        if not root.exists():
            raise InputError(f"path '{root}' does not exist; give the documents' folder or files to evaluate on")
    registry = registry or PluginRegistry.discover()
    for arm in arms:  # every arm's config checked before the embedder loads and the first index builds
        try:
            checked_config(merge_config(base_config or {}, arm.config), registry)
        except ConfigError as exc:
            raise ConfigError(exc.problems, f"arm '{arm.name}'") from None
    embed_model = embed_model or load_embed_model((base_config or {}).get("embed_model", "default"))
    cache = Path(cache_dir) if cache_dir else DEFAULT_CACHE
    cache.mkdir(parents=True, exist_ok=True)
    run = EvalRun(arms=names, ks=ks)
    run.meta = {"corpus": [p.name for p in roots], "n_queries": len(gold), "seed": SEED,
                "embedder": embedder_identity(embed_model), "indexes": {}}
    covered: dict[str, Coverage] = {}
    setups: dict[str, str] = {}
    summarised: dict[str, list[str]] = {}
    first_lists: dict[tuple, dict[str, list[str]]] = {}
    # A terminal gets a live bar; a log file (no terminal to redraw) a line at each step.
    console = Console(stderr=True)
    with Progress(disable=not progress, transient=True, console=console) as bar, ExitStack() as open_files:
        task = bar.add_task("eval", total=len(arms) * len(ks) * len(gold))

        def step(description: str, keep: bool = False) -> None:
            """``keep``: printed on a terminal too, above the bar (which redraws its own line)."""
            bar.update(task, description=description)
            if progress and (keep or not console.is_terminal):
                console.print(f"eval: {description}", markup=False, highlight=False, soft_wrap=True)

        def building(arm: str) -> Callable[[IndexProgress], None]:
            said: list[float] = []

            def show(index_progress: IndexProgress) -> None:
                now = time.monotonic()
                if console.is_terminal or index_progress.due(said[-1] if said else None, now, PROGRESS_EVERY_S):
                    said.append(now)
                    step(f'arm "{arm}": indexing: {index_progress.line()}')
            return show
        built_for = _read_json(cache / ARMS_FILE)
        # Per arm and folders: the default cache is shared by every corpus a user measures, and a rebuild compared
        # with another corpus's index named files never in this one (a new user's Cockpit pages: "FAQ.html").
        folders = json.dumps(sorted(str(root.resolve()) for root in roots))

        def last_of(arm_name: str) -> str:
            return f"{arm_name} {folders}"
        lent: list[str] = []   # read once, and only when an arm has an index to build

        def borrow_index_vectors(into: ResumableEmbedding) -> None:
            if lent or reuse_vectors_of is None:
                return
            try:
                host = load(reuse_vectors_of, embed_model=embed_model, llm=llm, registry=registry)
                texts, vectors, said = index_vectors(host, embed_model, roots)
            except Exception as exc:  # noqa: BLE001 - lending vectors only saves time: the arms embed as usual
                texts, vectors, said = [], [], (f"the config's index could not be read ({type(exc).__name__}: "
                                                f"{str(exc).splitlines()[0][:200]}): its vectors are not reused")
            new = into.keep(texts, vectors) if texts else 0
            lent.append(said + (f", {new} of them new to {KEPT_VECTORS}" if texts else ""))
            if said:
                step(lent[0], keep=True)

        for arm in order:
            cfg = merge_config(base_config or {}, arm.config)
            cfg.pop("persist_dir", None)
            # One per arm, so that what it read back is what earlier arms (or runs) embedded for this one.
            arm_embed = ResumableEmbedding(embed_model, cache / KEPT_VECTORS)
            open_files.callback(arm_embed.close)
            probe = load(cfg, embed_model=arm_embed, llm=llm, registry=registry)
            setup = index_setup(probe, roots)
            fp = _fingerprint(setup)
            cfg["persist_dir"] = str(cache / fp)
            run.arm_configs[arm.name] = {**cfg, "persist_dir": str((cache / fp).resolve())}
            rp = load(cfg, embed_model=arm_embed, llm=llm, registry=registry)
            done = cache / fp / "COMPLETE"
            # A lock per index: concurrent eval runs sharing the cache must not build it twice.
            with open(cache / f"{fp}.lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                why = None
                if force_reindex and fp not in run.meta["indexes"] and (cache / fp).exists():
                    shutil.rmtree(cache / fp)
                    rp = load(cfg, embed_model=arm_embed, llm=llm, registry=registry)
                    why = "rebuilding the index (--force-reindex)"
                if not done.exists():
                    if (cache / fp).exists():  # a build that died half way
                        shutil.rmtree(cache / fp)
                        rp = load(cfg, embed_model=arm_embed, llm=llm, registry=registry)
                        why = "rebuilding the index (its last build did not finish)"
                    borrow_index_vectors(arm_embed)
                    why = why or _rebuild_reason(cache, built_for.get(last_of(arm.name)), setup)
                    step(f'arm "{arm.name}": {why}', keep=True)
                    with IndexProgress(on_change=building(arm.name)):
                        rp.index_paths(roots)
                    if arm_embed.reused:
                        step(f'arm "{arm.name}": {arm_embed.reused} of {arm_embed.asked} texts read '
                             f"back from {KEPT_VECTORS} (embedded by an earlier arm or run, or by ragplugins index), "
                             "not embedded again",
                             keep=True)
                    (cache / fp / SETUP_FILE).write_text(json.dumps(setup, sort_keys=True))
                    done.write_text("ok")
            run.meta["indexes"][arm.name] = fp
            if fp not in summarised:
                # What each index-time plugin made of this index ("crossref: 13 references ..., 0 resolved"),
                # once per index: a plugin with nothing to act on explains an arm that changed nothing.
                summarised[fp] = rp.index_summaries()
                for line in summarised[fp]:
                    step(f'arm "{arm.name}": {line}', keep=True)
            run.meta.setdefault("index_summaries", {})[arm.name] = summarised[fp]
            built_for[last_of(arm.name)] = fp
            # Replaced whole: a concurrent eval run sharing the cache reads the old file or the new, never half
            # of one (a lost update only costs a rebuild line its comparison).
            atomic_write_text(cache / ARMS_FILE, json.dumps(built_for, sort_keys=True))
            setups[arm.name] = json.dumps({"core": rp.config.core.model_dump(exclude={"persist_dir"}),
                                           "plugins": {n: rp.config.plugins[n].model_dump(mode="json")
                                                       for n in sorted(rp.config.enabled)
                                                       if rp.config.for_plugin(n) is not None},
                                           "budget_of": arm.budget_of, "base": repr(arm.base)},
                                          sort_keys=True, default=str)
            # What each arm ran with: the config file's [ragplugins] table (or base_config), its --set on top. The
            # config's top_k is not what ran: each pass searches with its own k (below).
            arm_config = json.loads(setups[arm.name])
            arm_config["core"].pop("top_k", None)
            arm_config["top_k"] = {}
            run.meta.setdefault("configs", {})[arm.name] = arm_config
            if fp not in covered:
                covered[fp] = _coverage(rp, gold)
            read_as_shown = covered[fp].read_as_shown
            wraps_first = bool(rp._contributions("ragplugins_retriever_wrappers", rp.context(rp.index())))
            # Arms that share these core settings and wrap no retriever must share first-stage lists.
            first_stage_setup = json.dumps(rp.config.core.model_dump(exclude={"enable", "persist_dir",
                                                                              "on_plugin_error"}), sort_keys=True)
            for k in ks:
                k_used = k
                if arm.budget_of is not None:
                    ref = run.summary(arm.budget_of, k)
                    # Raised to at least the feature arm's mean final length: never below it.
                    k_used = max(k, math.ceil(ref.get("final_len", k) - 1e-9))
                arm_config["top_k"][str(k)] = k_used
                step(f"arm {arm.name}, k={k}: {len(gold)} questions")
                # The config was checked at its own top_k; a plugin that cannot act at this k says so now, as said
                # of this pass (eval's --k is its top_k: the config's is not used, and "set top_k" read alone sent
                # new users to a setting eval ignores).
                with warnings.catch_warnings(record=True) as said:
                    warnings.simplefilter("always")
                    plugin_config_problems(replace(rp.config, core=rp.config.core.model_copy(
                        update={"top_k": k_used})), rp.registry)
                for warning in said:
                    warnings.warn(f"eval --k {k} runs every arm with top_k = {k_used} (the config's top_k is not "
                                  f"used; raise --k to change it): {warning.message}", warning.category, stacklevel=2)
                # Untimed warm-up: the first search of an arm builds the BM25 index and the plugins'
                # caches, which no later query pays; a question outside the gold set so no gold query
                # finds its own embedding cached.
                rp.search(WARMUP_QUERY, top_k=k_used, base=arm.base(rp.index(), k_used) if arm.base else None)
                # Each pass times the model's work too: the questions an earlier k (or arm) embedded are forgotten.
                rp.context(rp.index()).forget_query_embeddings()
                for row in gold:
                    base = arm.base(rp.index(), k_used) if arm.base else None
                    start = time.perf_counter()
                    result = rp.search(row.query, top_k=k_used, base=base)
                    latency = (time.perf_counter() - start) * 1000
                    first = as_shown([n.node.get_content() for n in result.first_stage], read_as_shown.get(row.id, ()))
                    final = as_shown([n.node.get_content() for n in result.final], read_as_shown.get(row.id, ()))
                    trace_dict = result.trace.to_dict()
                    timings = trace_dict.pop("timings_ms")
                    trace_dict.pop("first_stage"), trace_dict.pop("final")
                    trace_dict.pop("query")
                    rec = {
                        "arm": arm.name, "k": k, "k_used": k_used, "id": row.id, "query": row.query,
                        "slices": row.slices(),
                        "first": metrics.list_metrics(first, row.expected, row.match),
                        "final": metrics.list_metrics(final, row.expected, row.match, asked=k),
                        "first_ids": [n.node.node_id for n in result.first_stage],
                        "final_ids": [n.node.node_id for n in result.final],
                        "final_docs": [n.node.ref_doc_id for n in result.final],
                        "instrument": instrument(rp, row, result, read_as_shown.get(row.id, ())),
                        # What each plugin decided (one schema), then the plugins' free-form details.
                        "decisions": trace_dict["decisions"],
                        "trace": json.loads(json.dumps(trace_dict["plugins"], default=str)),
                        # The ids above and in the trace named as people read them (guide/install.md#3).
                        "chunks": trace_dict["chunks"],
                        "latency_ms": latency, "timings_ms": timings,
                    }
                    run.rows.append(rec)
                    places = run.texts.setdefault(arm.name, {})
                    for n in (*result.first_stage, *result.final):
                        places.setdefault(rec["chunks"].get(n.node.node_id, n.node.node_id), n.node.get_content())
                    if not wraps_first and arm.base is None:
                        first_lists.setdefault((first_stage_setup, k_used, row.id), {})[arm.name] = rec["first_ids"]
                    bar.advance(task)
    run.rows.sort(key=lambda r: (names.index(r["arm"]), r["k"], r["id"]))
    groups: dict[str, list[str]] = {}
    for name in names:
        groups.setdefault(setups[name], []).append(name)
    run.meta["identical_arms"] = [group for group in groups.values() if len(group) > 1]
    run.meta["warmup"] = f"one untimed search per arm and k before the timed ones ({WARMUP_QUERY!r})"
    failures = {f["id"]: f for c in covered.values() for f in c.failures}
    run.coverage_failures = sorted(failures.values(), key=lambda f: f["id"])
    shown = {f["id"]: f for c in covered.values() for f in c.across_marks}
    run.across_marks = sorted(shown.values(), key=lambda f: f["id"])
    loose = {f["id"]: f for c in covered.values() for f in c.elsewhere}
    run.expected_elsewhere = sorted(loose.values(), key=lambda f: f["id"])
    run.unknown_documents = sorted({(f["id"], f["key"], f["name"]): f for c in covered.values()
                                    for f in c.unknown}.values(), key=lambda f: (f["id"], f["key"]))
    offenders = sorted({f"{arm}:{qid}@{k}" for (_, k, qid), lists in first_lists.items()
                        for arm, ids in lists.items() if ids != next(iter(lists.values()))})
    run.invariant = {"checked": sum(len(v) for v in first_lists.values()), "offenders": offenders,
                     "rule": "arms without retriever wrappers have identical first-stage lists"}
    return run
