"""Hook implementations of the retry plugin (skeleton: contributes nothing yet)."""

import ragplugins
from ragplugins_retry import __version__


@ragplugins.hookimpl
def ragplugins_plugin_info():
    return ragplugins.PluginInfo(name="retry", version=__version__, description="(skeleton, not implemented yet)")
