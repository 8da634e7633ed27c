"""What a plugin hands to the core: its description and its ordered components."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

# Each kind of contribution has a fixed sequence of stages. The core sorts
# contributions by (stage position, order, plugin name).
STAGES: dict[str, tuple[str, ...]] = {
    # Index time: pre_split sees whole Documents, post_split sees chunks.
    "ragplugins_transformations": ("pre_split", "post_split"),
    # Retriever wrappers, innermost first: first_stage reshapes candidates,
    # sufficiency (retry) wraps it so a reformulated query passes through it too.
    "ragplugins_retriever_wrappers": ("first_stage", "sufficiency"),
    "ragplugins_node_postprocessors": ("rerank", "expand", "finalize"),
    "ragplugins_query_engine_wrappers": ("verify",),
}

METADATA_TYPES = (str, int, float, bool)

# Where an index-time transformation may run (Contribution.scope): "chunk" on any batch of whole documents,
# in parallel, in another process (ragplugins.executors); "corpus" once, in the indexing process, over
# everything the run indexes at once. Undeclared means "corpus": a third-party step is never split up
# unless its author said it may be.
SCOPES = ("chunk", "corpus")


def component_problem(hook: str, component: Any) -> str | None:
    """Why ``component`` cannot serve as a contribution to ``hook`` (None when it can)."""
    from llama_index.core.postprocessor.types import BaseNodePostprocessor
    from llama_index.core.schema import TransformComponent

    expected = {"ragplugins_transformations": (TransformComponent, "a LlamaIndex TransformComponent"),
                "ragplugins_node_postprocessors": (BaseNodePostprocessor, "a LlamaIndex BaseNodePostprocessor")}
    if hook in expected:
        cls, what = expected[hook]
        ok = isinstance(component, cls)
    else:  # wrappers: called with the retriever or query engine they wrap
        ok, what = callable(component), "a callable taking the component it wraps"
    return None if ok else f"its component is {type(component).__name__}, expected {what}"


# Mark a config field the index never depends on (read only at query time) with
# ``Field(..., json_schema_extra=QUERY_TIME)``: `ragplugins eval` then reuses one index for arms that differ only in
# such fields. An unmarked field counts as index time, so a forgotten mark costs a rebuild, never a stale index.
QUERY_TIME: dict[str, Any] = {"ragplugins_query_time": True}


# Core settings that say where an index lives and which plugins and models it has: those are recorded and
# checked on their own (the manifest's embedder, index_plugins), not as settings its chunks were made with.
CORE_KEYS_KEPT_APART = ("enable", "persist_dir", "table", "storage", "llm", "embed_model")


def changed_settings(before: dict[str, Any], now: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """Setting -> (what it was, what it is) for every key whose value differs, in key order: what the index
    was made with against the config, for the messages that name a drifted setting."""
    return {k: (before.get(k), now.get(k)) for k in sorted(before.keys() | now.keys()) if before.get(k) != now.get(k)}


def short_value(value: Any, width: int = 60) -> str:
    """A setting's value in one short line (JSON; a string as it is)."""
    import json
    import textwrap

    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return textwrap.shorten(text, width, placeholder="...")


def index_time_settings(config: BaseModel) -> dict[str, Any]:
    """``config`` as JSON without the fields marked QUERY_TIME: what an index built with it depends on."""
    read_at_query_time = {name for name, f in type(config).model_fields.items()
                          if isinstance(f.json_schema_extra, dict) and f.json_schema_extra.get("ragplugins_query_time")}
    return config.model_dump(mode="json", exclude=read_at_query_time)


class NoConfig(BaseModel):
    """Config model for plugins that take no settings."""

    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class MetadataKey:
    """A metadata key a plugin writes on chunks.

    ``type`` is a scalar type so the key fits a fixed store schema (LanceDB);
    keep structures as JSON strings. Keys are excluded from the embedding and
    LLM text unless ``searchable`` is true.
    """

    type: type = str
    searchable: bool = False
    description: str = ""


@dataclass(frozen=True)
class PluginInfo:
    name: str
    version: str
    config_model: type[BaseModel] = NoConfig
    metadata_keys: dict[str, MetadataKey] = field(default_factory=dict)
    description: str = ""


@dataclass(frozen=True)
class Contribution:
    """One component from one plugin, with an explicit place in the pipeline."""

    component: Any
    stage: str
    order: int = 0
    # Filled in by the core with the contributing plugin's name.
    plugin: str = ""
    # Index-time transformations only (SCOPES): "chunk" when the component may run on any batch of whole
    # documents in another process, what it needs from other documents being completed by the plugin's
    # ragplugins_after_index; "corpus" (the default) when it must see everything the run indexes at once.
    scope: str = "corpus"
