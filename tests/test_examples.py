"""The example app adopts ragplugins with a three-line change (plus the import)."""

import difflib
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "examples" / "app"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, APP / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_adoption_diff_is_three_lines_plus_the_import():
    before = (APP / "app_before.py").read_text().splitlines()
    after = (APP / "app_after.py").read_text().splitlines()
    added = [d for d in difflib.ndiff(before, after) if d.startswith("+ ")]
    code = [d for d in added if not d[2:].startswith(('"""', "import ", "from "))]
    assert [d for d in added if d[2:].startswith("import ")] == ["+ import ragplugins"]
    assert len(code) <= 3, code
    # Other import lines may only change by dropping what the app no longer uses: none is left unused.
    body = "\n".join(line for line in after if not line.startswith(("import ", "from ")))
    for line in after:
        if line.startswith("from "):
            for name in line.split(" import ")[1].split(","):
                assert name.strip() in body, f"unused import {name.strip()} in app_after.py"


def test_both_apps_answer_from_the_demo_corpus(tmp_path, monkeypatch):
    (tmp_path / "ragplugins.toml").write_text((APP / "ragplugins.toml").read_text())
    monkeypatch.chdir(tmp_path)
    corpus = str(ROOT / "ragplugins" / "demo_data" / "corpus")
    question = "What is the unit price of the HX-220 servo motor?"
    for name in ("app_before", "app_after"):
        sources = _load(name).build_engine(corpus).query(question).source_nodes
        assert sources and sources[0].node.metadata["file_name"] == "02_exhibit_b_pricing.md", name
    assert (tmp_path / ".ragplugins" / "manifest.json").is_file()  # the after-app used the embedded store
