"""ragplugins: retrieval features for LlamaIndex apps, as plugins switched on in a config file.

Names are imported when first used (PEP 562), so ``import ragplugins`` and the CLI's ``--help``
do not pay for LlamaIndex, LanceDB or torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragplugins.hookspecs import hookimpl
from ragplugins.lazy import lazy_exports

__version__ = "0.1.0"

_LAZY = {
    "IndexReport": "ragplugins.app", "RagPlugins": "ragplugins.app", "RagQueryEngine": "ragplugins.app",
    "RagRetriever": "ragplugins.app", "SearchResult": "ragplugins.app", "load": "ragplugins.app",
    "Config": "ragplugins.config", "CoreSettings": "ragplugins.config",
    "DocumentInfo": "ragplugins.context", "RagContext": "ragplugins.context",
    "Contribution": "ragplugins.contributions", "MetadataKey": "ragplugins.contributions",
    "NoConfig": "ragplugins.contributions", "PluginInfo": "ragplugins.contributions",
    "ConfigError": "ragplugins.errors", "EmbedderMismatchError": "ragplugins.errors",
    "IndexBusyError": "ragplugins.errors", "InputError": "ragplugins.errors", "PluginError": "ragplugins.errors",
    "RagPluginsError": "ragplugins.errors", "StoreError": "ragplugins.errors",
}

__all__ = sorted([*_LAZY, "hookimpl"])

if TYPE_CHECKING:
    from ragplugins.app import IndexReport, RagPlugins, RagQueryEngine, RagRetriever, SearchResult, load
    from ragplugins.config import Config, CoreSettings
    from ragplugins.context import DocumentInfo, RagContext
    from ragplugins.contributions import Contribution, MetadataKey, NoConfig, PluginInfo
    from ragplugins.errors import (
        ConfigError,
        EmbedderMismatchError,
        IndexBusyError,
        InputError,
        PluginError,
        RagPluginsError,
        StoreError,
    )


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
