"""Hook implementations of the crossref plugin (skeleton: contributes nothing yet)."""

import ragplugins
from ragplugins_crossref import __version__


@ragplugins.hookimpl
def ragplugins_plugin_info():
    return ragplugins.PluginInfo(name="crossref", version=__version__, description="(skeleton, not implemented yet)")
