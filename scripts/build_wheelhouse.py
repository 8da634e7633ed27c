"""Build wheels of ragplugins and every plugin distribution into a local wheelhouse.

The wheelhouse stands in for a package registry: `pip install --find-links wheelhouse
'ragplugins[crossref]'` then installs exactly like it would from PyPI.

    python scripts/build_wheelhouse.py [--out wheelhouse]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DISTRIBUTIONS = [ROOT, *sorted(p.parent for p in (ROOT / "plugins").glob("*/pyproject.toml")),
                 ROOT / "examples" / "plugin-template"]


def build(out: Path) -> list[Path]:
    import importlib.util

    if importlib.util.find_spec("hatchling") is None:
        # Built without isolation (offline), so the build backend must be in this environment.
        sys.exit("build_wheelhouse: the build backend hatchling is not installed here: pip install hatchling")
    out.mkdir(parents=True, exist_ok=True)
    for source in DISTRIBUTIONS:
        # No build isolation: hatchling is already installed, so this works offline.
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                        "-w", str(out), str(source)], check=True)
    return sorted(out.glob("*.whl"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "wheelhouse")
    for wheel in build(parser.parse_args().out):
        print(wheel.name)


if __name__ == "__main__":
    main()
