"""The app: a loaded config and its enabled plugins, ready to build LlamaIndex components.

    rp = ragplugins.load("ragplugins.toml", embed_model=..., llm=...)
    index = rp.build_index(documents)          # or rp.transformations() in your own pipeline
    engine = rp.query_engine(index)            # or rp.retriever(index) / rp.postprocessors(index)

``RagPlugins`` is split by responsibility: what it knows of plugins and models here, index time
in :mod:`ragplugins.indexing`, query time in :mod:`ragplugins.assembly`.
"""

from __future__ import annotations

import logging
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llama_index.core import VectorStoreIndex

from ragplugins.assembly import Assembly, RagQueryEngine, RagRetriever, SearchResult
from ragplugins.config import Config, parse_config, validate_plugins
from ragplugins.context import CHUNK_INDEX_KEY, DOC_HASH_KEY, RagContext
from ragplugins.contributions import MetadataKey
from ragplugins.embeddings import load_embed_model
from ragplugins.errors import ConfigError, PluginError
from ragplugins.home import IndexHome, home_for, is_object_store_uri
from ragplugins.indexing import MANIFEST, Indexing, IndexReport
from ragplugins.models import ModelChoice
from ragplugins.plugins import PluginRecord, PluginRegistry
from ragplugins.writes import WriterLock

__all__ = ["CORE_METADATA", "MANIFEST", "IndexReport", "RagPlugins", "RagQueryEngine", "RagRetriever",
           "SearchResult", "load"]

logger = logging.getLogger(__name__)

CORE_METADATA = {
    DOC_HASH_KEY: MetadataKey(str, description="content hash of the source document"),
    CHUNK_INDEX_KEY: MetadataKey(int, description="position of the chunk in its document, from 0"),
}


class RagPlugins(Indexing, Assembly):
    """A loaded config with its enabled plugins, ready to build LlamaIndex components."""

    def __init__(self, config: Config, registry: PluginRegistry, *, embed_model: Any = None,
                 llm: Any = None, vector_store: Any = None):
        self.config, self.registry, self.llm = config, registry, llm
        self._embed_model = embed_model
        self._vector_store = vector_store
        self._index: VectorStoreIndex | None = None
        # Threads that ask for the index before it is open wait for one of them to open it.
        self._opening = threading.RLock()
        self._contexts: dict[int, RagContext] = {}
        # Query-time components built once per index (and filters/top_k for the retriever),
        # so plugin components keep their caches across queries; cleared after every write.
        self._assembled: dict[tuple, Any] = {}
        self._index_uid: str | None = None
        self._settings_checked = False   # the stored chunks' settings against the config's, once per instance
        self._writer_lock: WriterLock | None = None
        self._home: tuple[str, IndexHome] | None = None  # (persist_dir, its home): credentials are read once
        # Which embedder and LLM load() chose and why (ragplugins.models); None when built directly.
        self.models: ModelChoice | None = None

    # -- plugins ---------------------------------------------------------
    @property
    def enabled(self) -> list[PluginRecord]:
        loaded = self.registry.loaded()
        return [loaded[name] for name in sorted(self.config.enabled) if name in loaded]

    def _hook_kwargs(self, record: PluginRecord, ctx: RagContext) -> dict:
        return {"config": self.config.for_plugin(record.name), "ctx": ctx}

    def on_plugin_error(self, err: PluginError) -> None:
        """Raise ``err``, or warn and let the caller go on without that plugin (on_plugin_error = 'warn')."""
        if self.config.core.on_plugin_error == "raise":
            raise err
        warnings.warn(f"ragplugins: {err}; continuing without it (on_plugin_error = 'warn')", stacklevel=3)

    def _contributions(self, hook: str, ctx: RagContext) -> list:
        return self.registry.contributions(hook, self.enabled, on_error=self.on_plugin_error,
                                           kwargs_for=lambda record: self._hook_kwargs(record, ctx))

    def metadata_keys(self) -> dict[str, MetadataKey]:
        keys = dict(CORE_METADATA)
        for record in self.enabled:
            if record.info is not None:
                keys.update(record.info.metadata_keys)
        return keys

    def hidden_metadata_keys(self) -> frozenset[str]:
        """The metadata keys kept out of embed and LLM text (every key a plugin does not declare searchable)."""
        return frozenset(k for k, v in self.metadata_keys().items() if not v.searchable)

    # -- models and store ------------------------------------------------
    @property
    def embed_model(self) -> Any:
        if self._embed_model is None:
            self._embed_model = load_embed_model(self.config.core.embed_model)
        return self._embed_model

    @property
    def persist_dir(self) -> Path | None:
        """The local folder of the embedded index; None when the app gave its own store or the index is on
        object storage (then see :attr:`home`)."""
        if self._vector_store is not None or is_object_store_uri(self.config.core.persist_dir):
            return None
        return Path(self.config.core.persist_dir)

    @property
    def home(self) -> IndexHome | None:
        """Where the embedded index keeps its files, a local folder or an object-store prefix
        (ragplugins.home); None when the app gave its own store."""
        if self._vector_store is not None:
            return None
        persist_dir = self.config.core.persist_dir
        if self._home is None or self._home[0] != persist_dir:
            self._home = (persist_dir, home_for(persist_dir, self.config.core.storage))
        return self._home[1]

    def context(self, index: VectorStoreIndex | None = None) -> RagContext:
        index = index or self._index
        key = id(index)
        if key not in self._contexts:
            self._contexts[key] = RagContext(config=self.config, embed_model=self.embed_model, llm=self.llm,
                                             index=index, persist_dir=self.persist_dir, home=self.home,
                                             pluginmanager=self.registry.pm, index_uid=self._index_uid,
                                             hidden_keys=self.hidden_metadata_keys())
        return self._contexts[key]


def checked_config(config: str | Path | dict | None, registry: PluginRegistry, without: Sequence[str] = ()) -> Config:
    """The config as ``load`` reads it, checked against the installed plugins (their own checks too), before
    any model is loaded. Raises ConfigError listing every problem."""
    cfg = parse_config(config, strict=False)
    if without:
        cfg.core.enable = [name for name in cfg.core.enable if name not in set(without)]
    loaded = registry.loaded()
    failed = {r.name: r.error or "" for r in registry.all_records() if not r.loaded}
    validate_plugins(cfg, {n: r.info for n, r in loaded.items()}, failed)
    if problems := plugin_config_problems(cfg, registry):
        raise ConfigError(problems, cfg.source)
    return cfg


def plugin_config_problems(cfg: Config, registry: PluginRegistry) -> list[str]:
    """What the enabled plugins' own checks find in ``cfg`` (they warn of what works but cannot help: eval asks
    again at each k it searches with)."""
    loaded = registry.loaded()
    return [problem for name in cfg.enabled if name in loaded
            for found in registry.call(loaded[name], "ragplugins_check_config", config=cfg.for_plugin(name),
                                       pluginmanager=registry.pm, core=cfg.core)
            for problem in found]


def load(config: str | Path | dict | None = None, *, embed_model: Any = None, llm: Any = None,
         vector_store: Any = None, registry: PluginRegistry | None = None, without: Sequence[str] = ()) -> RagPlugins:
    """Load a config (file path, dict, or the ragplugins.toml found in the working directory)
    and the installed plugins. Raises ConfigError listing every problem.

    The embedder and the LLM are each taken from, in order: the argument, the config
    (``embed_model``/``llm``), what the app set on LlamaIndex's ``Settings``, the bundled default
    (MiniLM; no LLM). ``rp.models`` says which, and the ``ragplugins`` logger says it once.
    ``without``: enabled plugins to leave out this time (the rest of the config as written)."""
    registry = registry or PluginRegistry.discover()
    cfg = checked_config(config, registry, without)
    from ragplugins.models import choose_models

    models = choose_models(cfg.core, embed_model=embed_model, llm=llm)
    rp = RagPlugins(cfg, registry, embed_model=models.embed_model, llm=models.llm, vector_store=vector_store)
    rp.models = models
    return rp
