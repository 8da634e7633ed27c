"""ragplugins: retrieval features for LlamaIndex apps, as plugins switched on in a config file."""

from ragplugins.app import IndexReport, RagPlugins, RagQueryEngine, RagRetriever, SearchResult, load
from ragplugins.config import Config, CoreSettings
from ragplugins.context import DocumentInfo, RagContext
from ragplugins.contributions import Contribution, MetadataKey, NoConfig, PluginInfo
from ragplugins.errors import (ConfigError, EmbedderMismatchError, IndexBusyError, InputError, PluginError,
                               RagPluginsError, StoreError)
from ragplugins.hookspecs import hookimpl

__version__ = "0.1.0"

__all__ = [
    "Config", "ConfigError", "Contribution", "CoreSettings", "DocumentInfo", "EmbedderMismatchError",
    "IndexBusyError", "IndexReport", "InputError", "MetadataKey", "NoConfig", "PluginError", "PluginInfo", "RagContext",
    "RagPlugins", "RagPluginsError", "RagQueryEngine", "RagRetriever", "SearchResult", "StoreError", "hookimpl", "load",
]
