"""Hook implementations of the decompose plugin (skeleton: contributes nothing yet)."""

import ragplugins
from ragplugins_decompose import __version__


@ragplugins.hookimpl
def ragplugins_plugin_info():
    return ragplugins.PluginInfo(name="decompose", version=__version__, description="(skeleton, not implemented yet)")
