"""Shared helpers for the benchmark scripts: where results go and the options every script takes."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--bench-dir", default=os.environ.get("RAGPLUGINS_BENCH"),
                   help="Folder with corpora/ and goldset/ (default: $RAGPLUGINS_BENCH or ../shared/bench).")
    p.add_argument("--cache-dir", default=None, help="Index cache (default ~/.cache/ragplugins/eval).")
    return p
