"""Start-up hygiene: importing ragplugins is light, and its pytest plugin is opt-in.
(Times are measured in bench/bench_startup.py; these tests check what is imported, not how fast.)"""

import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env={**os.environ}).stdout


def test_import_ragplugins_loads_no_llamaindex_lancedb_or_torch():
    out = _run("import sys, ragplugins\n"
               "print(sorted(m for m in ('llama_index.core', 'lancedb', 'torch', 'pandas') if m in sys.modules))\n"
               "ragplugins.RagPlugins, ragplugins.load\n"  # still reachable, imported when first used
               "print('llama_index.core' in sys.modules)")
    assert out.splitlines() == ["[]", "True"]


def test_the_cli_help_imports_no_plugin_and_no_heavy_library():
    code = ("import sys\nfrom click.testing import CliRunner\nfrom ragplugins.cli import get_cli\n"
            "r = CliRunner().invoke(get_cli(), ['--help'])\nassert r.exit_code == 0, r.output\n"
            "print(sorted(m for m in sys.modules if m.startswith(('ragplugins_', 'llama_index.core', 'lancedb', "
            "'torch'))))")
    assert _run(code).strip() == "[]"


def test_the_pytest_plugin_is_opt_in(tmp_path):
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "pytest11" not in data["project"].get("entry-points", {})
    (tmp_path / "test_it.py").write_text("def test_fixture(fake_llm):\n    assert fake_llm.complete('x').text == ''\n")
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}  # as if the entry point were gone
    def pytest(*args):
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args, str(tmp_path)],
                              capture_output=True, text=True, env=env, cwd=tmp_path)
    assert "fixture 'fake_llm' not found" in pytest().stdout
    assert pytest("-p", "ragplugins.testing").returncode == 0
    (tmp_path / "conftest.py").write_text("from ragplugins.testing import *\n")
    assert pytest().returncode == 0
