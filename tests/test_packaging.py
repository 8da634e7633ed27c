"""`pip install ragplugins[crossref]` from a wheelhouse into a fresh virtual environment."""

import importlib.util
import json
import site
import subprocess
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("build_wheelhouse", ROOT / "scripts" / "build_wheelhouse.py")
build_wheelhouse = importlib.util.module_from_spec(spec)
spec.loader.exec_module(build_wheelhouse)


def _third_party_overlay(target: Path) -> Path:
    """Links to every installed third-party package except ragplugins' own distributions, so the
    venv resolves heavy dependencies offline while ragplugins comes only from the wheelhouse."""
    target.mkdir()
    for sp in site.getsitepackages():
        for entry in Path(sp).iterdir():
            if "ragplugins" in entry.name.lower() or entry.suffix == ".pth" or (target / entry.name).exists():
                continue
            (target / entry.name).symlink_to(entry)
    return target


@pytest.mark.slow
def test_install_crossref_extra_from_wheelhouse(tmp_path):
    wheels = build_wheelhouse.build(tmp_path / "wheelhouse")
    names = {w.name.split("-")[0] for w in wheels}
    assert {"ragplugins", "ragplugins_crossref", "ragplugins_overview", "ragplugins_length_filter"} <= names
    core = next(w for w in wheels if w.name.startswith("ragplugins-"))
    # `ragplugins demo` runs from an installed wheel: its corpus is package data.
    assert "ragplugins/demo_data/corpus/01_master_supply_agreement.md" in zipfile.ZipFile(core).namelist()
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    purelib = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    # The venv's own old setuptools would shadow the newer one llama-index-core requires.
    for entry in Path(purelib).iterdir():
        if entry.name.startswith(("setuptools", "pkg_resources", "_distutils_hack", "distutils-precedence")):
            subprocess.run(["rm", "-rf", str(entry)], check=True)
    (Path(purelib) / "third_party.pth").write_text(str(_third_party_overlay(tmp_path / "deps")) + "\n")
    install = subprocess.run([py, "-m", "pip", "install", "--no-index", "--find-links", str(tmp_path / "wheelhouse"),
                              "ragplugins[crossref]"], capture_output=True, text=True)
    assert install.returncode == 0, install.stdout + install.stderr
    probe = subprocess.run([py, "-c", (
        "import importlib.metadata as md, json\n"
        "def has(d):\n"
        "    try: md.version(d); return True\n"
        "    except md.PackageNotFoundError: return False\n"
        "print(json.dumps({d: has(d) for d in ['ragplugins', 'ragplugins-crossref', 'ragplugins-overview']}))")],
        capture_output=True, text=True, check=True)
    assert json.loads(probe.stdout) == {"ragplugins": True, "ragplugins-crossref": True, "ragplugins-overview": False}
    listed = subprocess.run([env_dir / "bin" / "ragplugins", "plugins", "--json"], capture_output=True, text=True,
                            cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert [p["name"] for p in json.loads(listed.stdout)] == ["crossref"]
