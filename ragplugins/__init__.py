"""ragplugins: retrieval features for LlamaIndex apps, as plugins switched on in a config file."""

from ragplugins.app import IndexReport, RagPlugins, RagQueryEngine, RagRetriever, SearchResult, load
from ragplugins.config import Config, CoreSettings
from ragplugins.context import DocumentInfo, RagContext
from ragplugins.contributions import Contribution, MetadataKey, NoConfig, PluginInfo
from ragplugins.errors import ConfigError, EmbedderMismatchError, InputError, PluginError, RagPluginsError
from ragplugins.hookspecs import hookimpl

__version__ = "0.1.0"

__all__ = [
    "Config", "ConfigError", "Contribution", "CoreSettings", "DocumentInfo", "EmbedderMismatchError",
    "IndexReport", "InputError", "MetadataKey", "NoConfig", "PluginError", "PluginInfo", "RagContext",
    "RagPlugins", "RagPluginsError", "RagQueryEngine", "RagRetriever", "SearchResult", "hookimpl", "load",
]
