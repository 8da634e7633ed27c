"""ragplugins.load picks the embedder and the LLM: argument, config, the host's Settings, bundled."""

import logging

import pytest
from llama_index.core import MockEmbedding, Settings
from llama_index.core.llms import MockLLM

import ragplugins
from ragplugins.models import host_settings
from ragplugins.plugins import PluginRegistry


@pytest.fixture
def host_settings_restored():
    saved = (Settings._llm, Settings._embed_model)
    Settings._llm = Settings._embed_model = None
    yield Settings
    Settings._llm, Settings._embed_model = saved


def test_an_apps_settings_are_kept(host_settings_restored, caplog):
    llm, embed = MockLLM(max_tokens=7), MockEmbedding(embed_dim=8)
    Settings.llm, Settings.embed_model = llm, embed
    with caplog.at_level(logging.INFO, logger="ragplugins"):
        rp = ragplugins.load({"enable": []}, registry=PluginRegistry())
    assert rp.llm is llm and rp.embed_model is embed
    said = [r.getMessage() for r in caplog.records if r.name == "ragplugins"]
    assert len(said) == 1 and said[0].count("LlamaIndex Settings") == 2


def test_arguments_then_config_come_before_settings(host_settings_restored, tmp_path):
    Settings.llm, Settings.embed_model = MockLLM(), MockEmbedding(embed_dim=8)
    mine = MockEmbedding(embed_dim=4)
    rp = ragplugins.load({"enable": []}, embed_model=mine, registry=PluginRegistry())
    assert rp.embed_model is mine and rp.models.embed_source == "argument"
    # The config's embed_model names a model: Settings' embedder is not used, the named one is loaded.
    (tmp_path / "a-model").mkdir()  # config check refuses a local path that does not exist
    rp = ragplugins.load({"enable": [], "embed_model": str(tmp_path / "a-model")}, registry=PluginRegistry())
    assert rp._embed_model is None and rp.models.embed_source.startswith("config")


def test_unset_settings_are_not_resolved(host_settings_restored):
    # Reading Settings.llm would resolve LlamaIndex's OpenAI default; load() must not.
    rp = ragplugins.load({"enable": []}, registry=PluginRegistry())
    assert rp.llm is None and rp.models.llm_source == "bundled default"
    assert rp.models.embed_source == "bundled default"
    assert host_settings() == (None, None) and Settings._llm is None


def test_loading_the_bundled_embedder_draws_no_progress_bar_and_keeps_the_app_s_setting():
    import os
    import subprocess
    import sys

    from transformers.utils import logging as transformers_logging

    from ragplugins.embeddings import load_embed_model

    # A fresh process: transformers draws its "Loading weights" bar on stderr at every load.
    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_DISABLE_PROGRESS_BARS"}  # the CLI sets it
    done = subprocess.run([sys.executable, "-c", "from ragplugins.embeddings import load_embed_model; "
                           "load_embed_model(); print('loaded')"], capture_output=True, text=True, timeout=300,
                          env=env)
    assert done.stdout.strip() == "loaded", done.stderr
    assert "Loading weights" not in done.stderr and "%|" not in done.stderr, done.stderr
    # An app that wants transformers' bars keeps them for its own loads.
    transformers_logging.enable_progress_bar()
    load_embed_model()
    assert transformers_logging.is_progress_bar_enabled()
    transformers_logging.disable_progress_bar()
    load_embed_model()
    assert not transformers_logging.is_progress_bar_enabled()
    transformers_logging.enable_progress_bar()
