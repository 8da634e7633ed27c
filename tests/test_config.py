"""The config file: sources, validation messages, plugin sections, generated docs."""

from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict, Field

from ragplugins import ConfigError, PluginInfo, load
from ragplugins.config import config_reference, parse_config
from ragplugins.plugins import PluginRegistry

ROOT = Path(__file__).resolve().parents[1]


class HopConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    max_hops: int = Field(1, ge=0, le=5)
    gate: float = 0.5


@pytest.fixture
def registry(plugin_module):
    reg = PluginRegistry()
    reg.register(plugin_module("hopper", _info=PluginInfo(name="hopper", version="1", config_model=HopConfig)))
    return reg


def test_toml_file_and_pyproject_and_dict(tmp_path, registry, monkeypatch):
    (tmp_path / "ragplugins.toml").write_text('[ragplugins]\nenable = ["hopper"]\n[ragplugins.hopper]\nmax_hops = 2\n')
    rp = load(tmp_path / "ragplugins.toml", registry=registry)
    assert rp.config.enabled == ["hopper"] and rp.config.for_plugin("hopper").max_hops == 2
    (tmp_path / "pyproject.toml").write_text('[tool.ragplugins]\ntop_k = 7\n')
    assert load(tmp_path / "pyproject.toml", registry=registry).config.core.top_k == 7
    monkeypatch.chdir(tmp_path)  # ragplugins.toml is found first
    assert load(registry=registry).config.enabled == ["hopper"]
    assert load({"ragplugins": {"top_k": 3}}, registry=registry).config.core.top_k == 3
    assert load({"enable": ["hopper", "hopper"]}, registry=registry).config.enabled == ["hopper"]  # once


def test_typo_names_file_section_key_and_suggests(tmp_path, registry):
    path = tmp_path / "ragplugins.toml"
    path.write_text('[ragplugins]\nenable = ["hopper"]\n[ragplugins.hopper]\nmax_hopz = 2\n')
    with pytest.raises(ConfigError) as err:
        load(path, registry=registry)
    msg = str(err.value)
    assert str(path) in msg and "[ragplugins.hopper] max_hopz: unknown key (did you mean 'max_hops'?)" in msg
    assert "allowed keys: max_hops, gate" in msg


def test_core_typo_and_wrong_types(registry):
    with pytest.raises(ConfigError, match=r"\[ragplugins\] top_kk: unknown key \(did you mean 'top_k'\?\)"):
        load({"top_kk": 5}, registry=registry)
    with pytest.raises(ConfigError) as err:
        load({"top_k": "many", "hopper": {"max_hops": 9}}, registry=registry)
    msg = str(err.value)
    assert "[ragplugins] top_k = 'many'" in msg and "[ragplugins.hopper] max_hops = 9" in msg
    assert "less than or equal to 5" in msg


def test_unknown_plugin_in_enable_says_how_to_install(registry):
    with pytest.raises(ConfigError) as err:
        load({"enable": ["hoper", "overview"]}, registry=registry)
    msg = str(err.value)
    assert "no plugin named 'hoper' is installed (did you mean 'hopper'?)" in msg
    assert "pip install 'ragplugins[overview]'" in msg


def test_unknown_plugin_section(registry):
    with pytest.raises(ConfigError, match=r"\[ragplugins.crossreff\]: no plugin named 'crossreff'"):
        load({"crossreff": {"max_hops": 1}}, registry=registry)


def test_bad_toml_and_missing_file(tmp_path, registry):
    bad = tmp_path / "ragplugins.toml"
    bad.write_text("[ragplugins\nenable = 1")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load(bad, registry=registry)
    with pytest.raises(ConfigError, match="does not exist"):
        load(tmp_path / "nope.toml", registry=registry)
    (tmp_path / "other.toml").write_text("[something]\na = 1\n")
    with pytest.raises(ConfigError, match=r"no \[ragplugins\] table"):
        load(tmp_path / "other.toml", registry=registry)


def test_disabled_plugin_section_is_still_validated(registry):
    with pytest.raises(ConfigError, match="max_hopz"):
        load({"enable": [], "hopper": {"max_hopz": 1}}, registry=registry)
    assert parse_config({"enable": []}).enabled == []


def test_configuration_docs_are_generated_from_the_models():
    """docs/configuration.md must equal `ragplugins config docs` (regenerate it when a model changes)."""
    reg = PluginRegistry.discover(env={})
    expected = config_reference({n: r.info for n, r in reg.loaded().items()})
    assert (ROOT / "docs" / "configuration.md").read_text() == expected + "\n"


def test_keys_valid_alone_but_not_together_are_named(registry):
    with pytest.raises(ConfigError, match="chunk_overlap = 100 must be smaller than chunk_size = 64"):
        load({"chunk_size": 64, "chunk_overlap": 100}, registry=registry)


def test_a_relative_persist_dir_is_relative_to_the_config_file(tmp_path, registry, monkeypatch):
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "ragplugins.toml").write_text('[ragplugins]\npersist_dir = "idx"\n')
    monkeypatch.chdir(tmp_path)
    assert Path(load("app/ragplugins.toml", registry=registry).config.core.persist_dir) == Path("app/idx")
    assert load({"persist_dir": "idx"}, registry=registry).config.core.persist_dir == "idx"  # a dict: the cwd


def test_a_typo_in_a_nested_table_lists_that_tables_keys(plugin_module):
    class Fidelity(BaseModel):
        model_config = ConfigDict(extra="forbid")
        threshold: float = 0.5

    class Checker(BaseModel):
        model_config = ConfigDict(extra="forbid")
        backend: str = "default"
        fidelity: Fidelity = Field(default_factory=Fidelity)

    reg = PluginRegistry()
    reg.register(plugin_module("checker", _info=PluginInfo(name="checker", version="1", config_model=Checker)))
    with pytest.raises(ConfigError, match=r"\[ragplugins.checker\] fidelity.threshhold: unknown key \(did you mean "
                                          r"'threshold'\?\); allowed keys: threshold$"):
        load({"enable": ["checker"], "checker": {"fidelity": {"threshhold": 0.4}}}, registry=reg)
    with pytest.raises(ConfigError, match=r"no plugin named 'chekcer' is installed \(did you mean 'checker'\?\); "
                                          r"installed: checker$"):
        load({"enable": ["chekcer"]}, registry=reg)


def test_a_typo_in_a_list_of_tables_lists_the_item_s_keys(plugin_module):
    class Family(BaseModel):
        model_config = ConfigDict(extra="forbid")
        name: str
        pattern: str

    class Finder(BaseModel):
        model_config = ConfigDict(extra="forbid")
        hop: bool = True
        families: list[Family] = Field(default_factory=list)

    reg = PluginRegistry()
    reg.register(plugin_module("finder", _info=PluginInfo(name="finder", version="1", config_model=Finder)))
    # A new user's crossref family with a "space" key was told crossref's own keys (extract, hop, ...).
    with pytest.raises(ConfigError, match=r"\[ragplugins.finder\] families.0.space: unknown key; "
                                          r"allowed keys: name, pattern$"):
        load({"enable": ["finder"], "finder": {"families": [{"name": "t", "pattern": "x", "space": "s"}]}},
             registry=reg)


def test_problems_in_pyproject_quote_the_tool_table(tmp_path, registry):
    (tmp_path / "pyproject.toml").write_text('[tool.ragplugins]\ntopk = 3\n[tool.ragplugins.hopper]\nmax_hop = 2\n')
    with pytest.raises(ConfigError) as caught:
        load(tmp_path / "pyproject.toml", registry=registry)
    assert caught.value.problems[0].startswith("[tool.ragplugins] topk: unknown key (did you mean 'top_k'?)")
    assert caught.value.problems[1].startswith("[tool.ragplugins.hopper] max_hop: unknown key")


def test_a_plugin_checks_what_its_model_cannot_see(plugin_module):
    seen = []

    def check(config, pluginmanager):
        seen.append(pluginmanager)
        return [] if config.gate <= 0.9 else [f"[ragplugins.strict] gate = {config.gate}: no resolver above 0.9"]
    reg = PluginRegistry()
    reg.register(plugin_module("strict", _info=PluginInfo(name="strict", version="1", config_model=HopConfig),
                               ragplugins_check_config=check))
    assert load({"enable": ["strict"], "strict": {"gate": 0.5}}, registry=reg).config.enabled == ["strict"]
    with pytest.raises(ConfigError, match=r"gate = 0.95: no resolver above 0.9"):
        load({"enable": ["strict"], "strict": {"gate": 0.95}}, registry=reg)
    load({"enable": [], "strict": {"gate": 0.95}}, registry=reg)  # only enabled plugins are asked
    assert len(seen) == 2 and seen[0] is reg.pm


def test_an_empty_ragplugins_toml_means_the_defaults_but_a_foreign_one_is_refused(tmp_path, registry):
    (tmp_path / "ragplugins.toml").write_text("\n")
    assert load(tmp_path / "ragplugins.toml", registry=registry).config.core.top_k == 20
    (tmp_path / "ragplugins.toml").write_text('[tool.other]\nx = 1\n')
    with pytest.raises(ConfigError, match=r"no \[ragplugins\] table in it \(found: \['tool'\]\)"):
        load(tmp_path / "ragplugins.toml", registry=registry)


def test_a_misspelt_table_is_an_error_with_a_suggestion_reported_with_the_rest(tmp_path, registry):
    cfg = tmp_path / "ragplugins.toml"
    cfg.write_text(
        '[ragplugins]\ntop_k = "many"\n\n[ragplugin.hopper]\nmax_hops = 2\n\n[ragplugins.hopper]\nmax_hopz = 1\n'
    )
    with pytest.raises(ConfigError) as err:
        load(cfg, registry=registry)
    problems = err.value.problems
    assert "[ragplugin.hopper]: not read by ragplugins (did you mean '[ragplugins.hopper]'?)" in problems
    assert any("top_k" in p for p in problems) and any("max_hopz" in p for p in problems)  # all in one run
    (tmp_path / "pyproject.toml").write_text('[tool.ragplugin]\ntop_k = 3\n[tool.ruff]\nline-length = 1\n')
    with pytest.raises(ConfigError, match=r"did you mean '\[tool.ragplugins\]'") as err:
        load(tmp_path / "pyproject.toml", registry=registry)
    assert "ruff" not in str(err.value)


def test_the_config_is_found_from_a_subdirectory_up_to_the_project_root(tmp_path, monkeypatch, registry):
    from ragplugins.config import find_config

    project = tmp_path / "project"
    (project / "src" / "deep").mkdir(parents=True)
    (project / "ragplugins.toml").write_text('[ragplugins]\ntop_k = 7\npersist_dir = "idx"\n')
    monkeypatch.chdir(project / "src" / "deep")
    rp = load(registry=registry)
    assert rp.config.core.top_k == 7 and Path(rp.config.core.persist_dir).resolve() == (project / "idx").resolve()
    # Another project inside (its own pyproject.toml, no ragplugins table) does not read the outer config.
    inner = project / "src" / "deep" / "other"
    inner.mkdir()
    (inner / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert find_config(inner) is None and find_config(project / "src") == (project / "ragplugins.toml").resolve()


def test_a_misspelt_plugin_name_is_matched_against_installable_plugins_not_turned_into_a_package_name():
    from ragplugins.config import parse_config, validate_plugins
    from ragplugins.errors import ConfigError

    cfg = parse_config({"enable": ["overveiw", "crosref"]}, strict=False)
    with pytest.raises(ConfigError) as err:
        validate_plugins(cfg, {"crossref": None})  # only crossref installed
    message = str(err.value)
    assert ("no plugin named 'overveiw' is installed (did you mean 'overview'?); installed: crossref; "
            "to install it: pip install 'ragplugins[overview]'") in message
    assert "no plugin named 'crosref' is installed (did you mean 'crossref'?); installed: crossref\n" in message + "\n"
    assert "ragplugins-overveiw" not in message
