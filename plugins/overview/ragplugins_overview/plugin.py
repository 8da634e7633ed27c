"""Hook implementations of the overview plugin (skeleton: contributes nothing yet)."""

import ragplugins
from ragplugins_overview import __version__


@ragplugins.hookimpl
def ragplugins_plugin_info():
    return ragplugins.PluginInfo(name="overview", version=__version__, description="(skeleton, not implemented yet)")
