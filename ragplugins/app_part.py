"""What each part of the app (:mod:`ragplugins.indexing`, :mod:`ragplugins.assembly`) uses of the whole
(:class:`ragplugins.app.RagPlugins`), declared once for type checkers; at run time the class is empty."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from llama_index.core import VectorStoreIndex

    from ragplugins.config import Config
    from ragplugins.context import RagContext
    from ragplugins.contributions import MetadataKey
    from ragplugins.errors import PluginError
    from ragplugins.home import IndexHome
    from ragplugins.plugins import PluginRecord, PluginRegistry
    from ragplugins.writes import LeaseLock, WriterLock


class AppPart:
    """Base of the app's parts: the attributes and methods of RagPlugins they use."""

    if TYPE_CHECKING:
        config: Config
        registry: PluginRegistry
        llm: Any
        _index: VectorStoreIndex | None
        _opening: Any
        _vector_store: Any
        _assembled: dict[tuple, Any]
        _index_uid: str | None
        _settings_checked: bool
        _writer_lock: WriterLock | LeaseLock | None

        @property
        def embed_model(self) -> Any: ...
        @property
        def persist_dir(self) -> Path | None: ...
        @property
        def home(self) -> IndexHome | None: ...
        @property
        def enabled(self) -> list[PluginRecord]: ...

        def context(self, index: VectorStoreIndex | None = None) -> RagContext: ...
        def index(self) -> VectorStoreIndex: ...
        def require_index(self) -> None: ...
        def stale_settings(self, skip: Iterable[str] = (), manifest: dict | None = None) -> list[str]: ...
        def metadata_keys(self) -> dict[str, MetadataKey]: ...
        def hidden_metadata_keys(self) -> frozenset[str]: ...
        def on_plugin_error(self, err: PluginError) -> None: ...
        def _contributions(self, hook: str, ctx: RagContext) -> list: ...
        def _hook_kwargs(self, record: PluginRecord, ctx: RagContext) -> dict: ...
