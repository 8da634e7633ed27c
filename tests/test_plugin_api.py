"""ragplugins.api is the one module plugins import (their tests may also use ragplugins.testing)."""

import ast
from pathlib import Path

import pytest

from ragplugins import api

ROOT = Path(__file__).resolve().parents[1]
PLUGIN_SOURCES = sorted([*ROOT.glob("plugins/*/**/*.py"), *ROOT.glob("examples/plugin-template/**/*.py")])


def _is_test(path: Path) -> bool:
    return "tests" in path.relative_to(ROOT).parts or path.name == "conftest.py"


def _core_imports(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, dotted name) of every import of the core: ``import ragplugins.x`` gives 'ragplugins.x',
    ``from ragplugins import x`` and ``from ragplugins.x import y`` give 'ragplugins.x'."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "ragplugins"]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.split(".")[0] == "ragplugins":
            if node.module == "ragplugins":
                found += [(node.lineno, f"ragplugins.{a.name}") for a in node.names]
            else:
                found.append((node.lineno, node.module))
    return found


def test_there_are_plugin_sources_to_check():
    names = {p.relative_to(ROOT).parts[1] for p in PLUGIN_SOURCES if p.parts[-3] != "examples"}
    assert {"crossref", "overview", "retry", "verifier", "decompose", "plugin-template"} <= names


@pytest.mark.parametrize("path", PLUGIN_SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_plugins_import_only_the_plugin_api(path):
    allowed = {"ragplugins.api", "ragplugins.testing"} if _is_test(path) else {"ragplugins.api"}
    wrong = [f"line {line}: {name}" for line, name in _core_imports(ast.parse(path.read_text(), str(path)))
             if name not in allowed]
    assert not wrong, f"{path.relative_to(ROOT)} imports the core outside {sorted(allowed)}: {wrong}"


def test_the_import_check_catches_every_form():
    source = ("import ragplugins\nimport ragplugins.trace\nfrom ragplugins import trace, api\n"
              "from ragplugins.context import CHUNK_INDEX_KEY\nfrom ragplugins.api import hookimpl\n"
              "import ragplugins_crossref\n")
    assert [n for _, n in _core_imports(ast.parse(source))] == [
        "ragplugins", "ragplugins.trace", "ragplugins.trace", "ragplugins.api", "ragplugins.context",
        "ragplugins.api"]


def _hookimpls(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                "hookimpl" in ast.unparse(d) for d in node.decorator_list):
            yield node


@pytest.mark.parametrize("path", [p for p in PLUGIN_SOURCES if not _is_test(p)],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_every_hookimpl_types_its_context(path):
    untyped = [f"{f.name} (line {f.lineno})" for f in _hookimpls(ast.parse(path.read_text()))
               for a in f.args.args if a.arg == "ctx"
               and (a.annotation is None or "RagContext" not in ast.unparse(a.annotation))]
    assert not untyped, f"{path.relative_to(ROOT)}: ctx is not typed RagContext in {untyped}"


def test_the_api_names_resolve_and_are_listed():
    for name in api.__all__:
        assert getattr(api, name) is not None, name
    with pytest.raises(AttributeError, match="has no attribute 'cli'"):
        api.cli  # noqa: B018 - the CLI group is not part of the plugin API


def test_the_api_exposes_what_plugins_used_to_reach_into_the_core_for():
    from ragplugins import context, search

    assert api.CHUNK_INDEX_KEY == context.CHUNK_INDEX_KEY and api.DOC_HASH_KEY == context.DOC_HASH_KEY
    assert api.rrf_score(1) == pytest.approx(1 / (search.RRF_K + 1))
    assert api.cosine([1.0, 0.0], [1.0, 0.0]) == pytest.approx(1.0)


def test_the_trace_is_output_only():
    """Per-query inputs (filters, top k, the bundle) travel on the context and the bundle: the API
    offers no way to read the open trace, and no core module but trace.py reads it."""
    assert not {"current", "last", "scope", "join_last"} & set(api.__all__)
    readers = sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("ragplugins/**/*.py")
                     if p.name != "trace.py" and "trace.current(" in p.read_text())
    assert readers == []
    assert {f for f in api.Trace.__dataclass_fields__} == {
        "query", "first_stage", "final", "plugins", "timings_ms", "first_stage_documents", "final_documents",
        "decisions", "chunks"}
