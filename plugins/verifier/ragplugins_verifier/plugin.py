"""Hook implementations of the verifier plugin (skeleton: contributes nothing yet)."""

import ragplugins
from ragplugins_verifier import __version__


@ragplugins.hookimpl
def ragplugins_plugin_info():
    return ragplugins.PluginInfo(name="verifier", version=__version__, description="(skeleton, not implemented yet)")
