import ragplugins_decompose.plugin as plugin
from ragplugins.testing import PluginConformance


class TestConformance(PluginConformance):
    plugin = plugin
    config = {"aggregate": "coverage", "decomposer": "rules", "max_sub_queries": 3}
