"""Hook implementations: what this plugin contributes to ragplugins."""

from __future__ import annotations

from ragplugins import api
from ragplugins_length_filter import __version__
from ragplugins_length_filter.config import LengthFilterConfig
from ragplugins_length_filter.postprocessor import LengthFilterPostprocessor


@api.hookimpl
def ragplugins_plugin_info():
    return api.PluginInfo(name="length_filter", version=__version__, config_model=LengthFilterConfig,
                                 description="Drop too-short chunks from the final list.")


@api.hookimpl
def ragplugins_node_postprocessors(config: LengthFilterConfig, ctx: api.RagContext):
    component = LengthFilterPostprocessor(min_chars=config.min_chars, keep_at_least=config.keep_at_least)
    return [api.Contribution(component, stage="finalize")]
