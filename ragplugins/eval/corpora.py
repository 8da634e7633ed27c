"""Named corpora: the bench's four, or your own in a small TOML file.

    [corpus.contracts]
    paths = ["docs/contracts"]
    gold = ["eval/contracts.jsonl"]
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from ragplugins.errors import InputError

BENCH_ENV = "RAGPLUGINS_BENCH"
BENCH_CORPORA = {
    "mixed": (["atlas7", "hr", "docs"], ["atlas7.jsonl", "hr.jsonl", "docs.jsonl"]),
    "docs": (["docs"], ["docs.jsonl"]),
    "acq": (["acquisition"], ["acquisition.jsonl"]),
    "acq+docs": (["acquisition", "docs"], ["acquisition.jsonl", "docs.jsonl"]),
}


def bench_dir(path: str | Path | None = None) -> Path:
    """The shared bench directory: ``path``, $RAGPLUGINS_BENCH, or ../shared/bench beside the repo."""
    for given, name in ((path, "--bench-dir"), (os.environ.get(BENCH_ENV), BENCH_ENV)):
        if given and not (Path(given) / "corpora").is_dir():  # a folder you named is never second-guessed
            raise InputError(f"{name} = '{given}' holds no corpora/ folder; point it at the bench folder")
    candidates = [path, os.environ.get(BENCH_ENV), Path(__file__).resolve().parents[3] / "shared" / "bench",
                  Path.cwd().parent / "shared" / "bench"]
    for c in candidates:
        if c and (Path(c) / "corpora").is_dir():
            return Path(c)
    raise InputError(f"bench data not found; pass --bench-dir or set {BENCH_ENV} to the folder holding corpora/")


def bench_corpus(name: str, bench: str | Path | None = None) -> tuple[list[Path], list]:
    """(corpus paths, gold rows) of a named bench corpus: mixed, docs, acq or acq+docs."""
    from ragplugins.eval.gold import load_gold

    if name not in BENCH_CORPORA:
        raise InputError(f"unknown bench corpus '{name}'; known: {', '.join(BENCH_CORPORA)}")
    root = bench_dir(bench)
    dirs, golds = BENCH_CORPORA[name]
    return [root / "corpora" / d for d in dirs], load_gold(root / "goldset" / g for g in golds)


def named_corpus(name: str, corpora_file: str | Path) -> tuple[list[Path], list]:
    """(paths, gold rows) of ``[corpus.<name>]`` in a TOML file; paths are relative to that file."""
    from ragplugins.eval.gold import load_gold

    path = Path(corpora_file)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"cannot read corpora file '{path}': {exc}") from exc
    corpora = data.get("corpus", {})
    if name not in corpora:
        raise InputError(f"'{path}' has no [corpus.{name}]; it defines: {', '.join(corpora) or 'none'}")
    entry = corpora[name]
    base = path.parent
    return [base / p for p in entry.get("paths", [])], load_gold(base / g for g in entry.get("gold", []))
