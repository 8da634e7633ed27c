"""Hook implementations: what this plugin contributes to ragplugins."""

import ragplugins
from ragplugins_length_filter import __version__
from ragplugins_length_filter.config import LengthFilterConfig
from ragplugins_length_filter.postprocessor import LengthFilterPostprocessor


@ragplugins.hookimpl
def ragplugins_plugin_info():
    return ragplugins.PluginInfo(name="length_filter", version=__version__, config_model=LengthFilterConfig,
                                 description="Drop too-short chunks from the final list.")


@ragplugins.hookimpl
def ragplugins_node_postprocessors(config: LengthFilterConfig, ctx):
    component = LengthFilterPostprocessor(min_chars=config.min_chars, keep_at_least=config.keep_at_least)
    return [ragplugins.Contribution(component, stage="finalize")]
