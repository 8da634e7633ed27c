"""The hook the decompose plugin publishes so other plugins can add decomposers.

Implement it in any ragplugins plugin (mark the implementation
``@ragplugins.hookimpl(optionalhook=True)`` so your plugin also loads where
the decompose plugin is not installed)::

    @ragplugins.hookimpl(optionalhook=True)
    def ragplugins_decompose_decomposers(config):
        return [MyDecomposer()]      # a ragplugins_decompose.Decomposer with a unique ``name``

and select it by name: ``[ragplugins.decompose] decomposer = "my_name"``.
"""

from ragplugins.api import hookspec


@hookspec
def ragplugins_decompose_decomposers(config):
    """Return Decomposer instances; ``config`` is the decompose plugin's DecomposeConfig."""
