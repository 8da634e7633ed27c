"""Start-up cost of the command line and the package (issue 15: --help < 1.5 s, import < 1 s).

    python bench/bench_startup.py --repeats 7        # -> bench/results/startup/startup.json

Each measurement is a fresh interpreter (subprocess), timed from spawn to exit, so it includes
Python's own start-up; the median and the spread of the repeats are reported. Also records which
heavy libraries each command imported, since the time depends on the shared machine's load.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent / "results" / "startup"
HEAVY = ("llama_index.core", "lancedb", "torch", "pandas", "ragplugins_crossref")

CASES = {
    "python -c pass (the floor)": "pass",
    "import ragplugins": "import ragplugins",
    "ragplugins --help": "sys.argv = ['ragplugins', '--help']\ntry:\n    from ragplugins.cli import main; main()\n"
                         "except SystemExit:\n    pass",
    "ragplugins plugins (imports every plugin)": (
        "sys.argv = ['ragplugins', 'plugins']\ntry:\n    from ragplugins.cli import main; main()\n"
        "except SystemExit:\n    pass"
    ),
}


def measure(body: str, repeats: int) -> dict:
    code = f"import sys\n{body}\nprint('\\nHEAVY=' + ','.join(m for m in {HEAVY!r} if m in sys.modules))"
    times, heavy = [], ""
    for _ in range(repeats):
        start = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        times.append(time.perf_counter() - start)
        heavy = out.rsplit("HEAVY=", 1)[-1].strip()
    return {"median_s": round(statistics.median(times), 3), "min_s": round(min(times), 3),
            "max_s": round(max(times), 3), "repeats": repeats, "imported": heavy.split(",") if heavy else []}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    results = {name: measure(body, args.repeats) for name, body in CASES.items()}
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "startup.json").write_text(json.dumps(results, indent=2))
    for name, r in results.items():
        print(f"{name:45s} median {r['median_s']:.2f} s (min {r['min_s']:.2f}, max {r['max_s']:.2f}); "
              f"imported: {', '.join(r['imported']) or 'none of ' + '/'.join(HEAVY)}")


if __name__ == "__main__":
    main()
