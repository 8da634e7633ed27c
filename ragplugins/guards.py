"""Core components that wrap plugin components: metadata hygiene, error policy and the host's filters."""

from __future__ import annotations

import contextvars
import uuid
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.bridge.pydantic import Field, SerializeAsAny
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import BaseNode, NodeRelationship, NodeWithScore, QueryBundle, TransformComponent
from llama_index.core.vector_stores.types import MetadataFilters

from ragplugins import query_inputs, trace
from ragplugins.anchors import place_anchors
from ragplugins.errors import InputError, PluginError, StoreError
from ragplugins.nodes import hide_metadata
from ragplugins.stores.base import ANCHORS_KEY

_CHUNK_NS = uuid.UUID("6f1e3c8e-9b7a-4f0e-8a53-2d7c1b9e4a10")


def chunk_id(doc_id: str, doc_hash: str, position: int) -> str:
    """Deterministic chunk ids, new whenever the document's content changes. UUIDs, because
    some stores (Qdrant) accept nothing else."""
    return str(uuid.uuid5(_CHUNK_NS, f"{doc_id}@{doc_hash}#{position}"))


class ChunkBookkeeping(TransformComponent):
    """Right after splitting: give each chunk a deterministic id, its position in its document and the
    names of the page's anchors that begin in it (``ragplugins.anchors``), and keep the plugins' metadata keys
    out of the embedding and LLM text (LlamaIndex embeds every metadata key by default, which moves vectors).
    Plugin ``post_split`` transformations run after it. Ids are set here rather than through a parser's
    ``id_func`` because stacked parsers call it with a per-node counter (MarkdownNodeParser gives every section
    the same index)."""

    hidden_keys: list[str] = Field(default_factory=list)

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins.ChunkBookkeeping"

    def __call__(self, nodes: Sequence[BaseNode], **kwargs: Any) -> Sequence[BaseNode]:
        from ragplugins.context import CHUNK_INDEX_KEY, DOC_HASH_KEY

        place_anchors(nodes)
        position: dict[str | None, int] = {}
        renamed: dict[str, str] = {}
        for node in nodes:
            doc = node.ref_doc_id
            node.metadata[CHUNK_INDEX_KEY] = position.get(doc, 0)
            position[doc] = position.get(doc, 0) + 1
            new_id = chunk_id(str(doc), str(node.metadata.get(DOC_HASH_KEY, "")), node.metadata[CHUNK_INDEX_KEY])
            renamed[node.node_id] = new_id
            node.id_ = new_id
            hide_metadata(node, [*self.hidden_keys, ANCHORS_KEY])
        # Announced for progress displays (ragplugins.progress): what the embedder will now embed, in order.
        trace.dispatcher.event(trace.RagPluginsEvent(plugin="core", action="split", data={
            "chunks": len(nodes), "per_document": list(position.values())}))
        for node in nodes:  # keep PREVIOUS/NEXT/PARENT/CHILD links pointing at the new ids
            for rel, info in list(node.relationships.items()):
                if isinstance(info, list):
                    for item in info:
                        item.node_id = renamed.get(item.node_id, item.node_id)
                elif rel != NodeRelationship.SOURCE:
                    info.node_id = renamed.get(info.node_id, info.node_id)
        return nodes


def _handle(policy: str, err: PluginError, then: str = "") -> None:
    if isinstance(err.cause, (StoreError, InputError)):
        raise err.cause  # the store is damaged, or the caller's input is wrong: not the plugin's doing
    if policy == "raise":
        raise err
    warnings.warn(f"ragplugins: {err}; continuing without it (on_plugin_error = 'warn'){then}", stacklevel=4)


class GuardedTransformation(TransformComponent):
    """Runs a plugin's index-time transformation; on error raises naming the plugin, or (policy
    'warn') passes the nodes through unchanged, so the batch is indexed without that plugin's step."""

    inner: SerializeAsAny[TransformComponent]
    plugin: str
    policy: str = "raise"
    scope: str = Field("corpus", description="Where it may run: 'chunk' (any batch, in parallel) or 'corpus'.")
    declared: frozenset[str] = Field(frozenset(), description="The metadata keys the plugin declares.")

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins.GuardedTransformation"

    def __call__(self, nodes: Sequence[BaseNode], **kwargs: Any) -> Sequence[BaseNode]:
        try:
            before = {key for node in nodes for key in node.metadata}
            out = self.inner(list(nodes), **kwargs)
            _check_list(out, BaseNode)
            if undeclared := sorted({key for node in out for key in node.metadata} - before - self.declared):
                # Only declared keys are kept out of the embedded and LLM text; the rest would move vectors.
                warnings.warn(f"ragplugins: plugin '{self.plugin}' wrote metadata keys it does not declare "
                              f"({', '.join(undeclared)}): they go into the text that is embedded and given to the "
                              "LLM; declare them in its PluginInfo(metadata_keys=...)", stacklevel=2)
            return out
        except Exception as exc:  # noqa: BLE001
            _handle(self.policy, PluginError(self.plugin, type(self.inner).__name__, exc),
                    then=" (the documents of this batch are indexed without its step: once it is fixed, "
                         "re-index them with `ragplugins index PATH --reindex`)")
            return nodes


def _check_list(value: Any, item_type: type) -> None:
    """A plugin component's result must be a list of ``item_type``: anything else would fail later,
    in LlamaIndex's code, where the plugin can no longer be named."""
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, item_type) for v in value):
        got = type(value).__name__ if not isinstance(value, (list, tuple)) else \
            f"a list holding {sorted({type(v).__name__ for v in value if not isinstance(v, item_type)})}"
        raise TypeError(f"returned {got}, expected a list of {item_type.__name__}")


class GuardedRetriever(BaseRetriever):
    """Runs a plugin's retriever wrapper; on error raises naming the plugin, or
    (policy 'warn') falls back to the retriever it wrapped. Nodes it adds must pass the host's
    filters (ragplugins.query_inputs), or they are removed."""

    def __init__(self, wrapped: BaseRetriever, fallback: BaseRetriever, plugin: str, policy: str):
        super().__init__()
        self.wrapped, self.fallback, self.plugin, self.policy = wrapped, fallback, plugin, policy

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins.GuardedRetriever"

    def _screened(self, nodes: list[NodeWithScore]) -> list[NodeWithScore]:
        inputs = query_inputs.current()
        return nodes if inputs is None else inputs.screen(nodes, after=self.plugin)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        try:
            out = self.wrapped.retrieve(query_bundle)
            _check_list(out, NodeWithScore)
        except Exception as exc:  # noqa: BLE001
            _handle(self.policy, PluginError(self.plugin, type(self.wrapped).__name__, exc))
            return self.fallback.retrieve(QueryBundle(query_str=query_bundle.query_str))
        return self._screened(out)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        try:
            out = await self.wrapped.aretrieve(query_bundle)
            _check_list(out, NodeWithScore)
        except Exception as exc:  # noqa: BLE001
            _handle(self.policy, PluginError(self.plugin, type(self.wrapped).__name__, exc))
            return await self.fallback.aretrieve(QueryBundle(query_str=query_bundle.query_str))
        return self._screened(out)


class GuardedPostprocessor(BaseNodePostprocessor):
    """Runs a plugin's postprocessor; on error raises naming the plugin, or (policy 'warn') passes the
    nodes through unchanged. Then the host's filters: a node the host's base retriever did not return
    must pass them (ragplugins.query_inputs), or it is removed.

    Outside a query ragplugins opened (a host's own engine), it opens the query's inputs itself: the
    nodes it is given are the host's, and ``filters`` are the host's filters when ``filters_given``."""

    inner: SerializeAsAny[BaseNodePostprocessor]
    plugin: str
    policy: str = "raise"
    filters: MetadataFilters | None = Field(None, description="The host retriever's filters (see filters_given).")
    filters_given: bool = Field(False, description="Whether the host passed filters (None: it does not filter).")

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins.GuardedPostprocessor"

    def _open(self, inputs: query_inputs.QueryInputs, nodes: list[NodeWithScore]) -> None:
        inputs.base_node_ids.update(n.node.node_id for n in nodes)
        if self.filters_given:
            inputs.declare(self.filters)
        else:
            inputs.unknown("the host's retriever may filter: "
                           + query_inputs.PASS_FILTERS.format(where="rp.postprocessors"))

    @contextmanager
    def _guarded(self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None) -> Iterator[dict]:
        """Around one call of the plugin's postprocessor (sync or async): the query's inputs and trace
        are open, a failure obeys the error policy, and the result is screened against the host's filters."""
        query = query_bundle.query_str if query_bundle else ""
        with query_inputs.scope() as (inputs, opened), trace.join_last(query) as tr:
            if opened:
                self._open(inputs, nodes)
            result = {"out": nodes}
            try:
                yield result
                _check_list(result["out"], NodeWithScore)
            except Exception as exc:  # noqa: BLE001
                _handle(self.policy, PluginError(self.plugin, type(self.inner).__name__, exc))
                result["out"] = nodes
            result["out"] = inputs.screen(result["out"], after=self.plugin)
            tr.set_final(result["out"])

    def _postprocess_nodes(self, nodes: list[NodeWithScore],
                           query_bundle: QueryBundle | None = None) -> list[NodeWithScore]:
        with self._guarded(nodes, query_bundle) as result:
            result["out"] = self.inner.postprocess_nodes(list(nodes), query_bundle=query_bundle)
        return result["out"]

    async def _apostprocess_nodes(self, nodes: list[NodeWithScore],
                                  query_bundle: QueryBundle | None = None) -> list[NodeWithScore]:
        with self._guarded(nodes, query_bundle) as result:
            result["out"] = await self.inner.apostprocess_nodes(list(nodes), query_bundle=query_bundle)
        return result["out"]


class BaseRecorder(BaseRetriever):
    """The first stage's base retriever, recording in the query's inputs which nodes it returned and,
    for a host's ``VectorIndexRetriever`` over ragplugins' own store (``capture_store``), the filters
    that store was queried with. When the host gave no filters and the store cannot show them
    (doc_ids, a raw 'where'), they are unknown."""

    def __init__(self, base: BaseRetriever, capture_store: Any = None, filters_given: bool = False,
                 **kwargs: Any):
        super().__init__(**kwargs)
        self.base, self.capture_store, self.filters_given = base, capture_store, filters_given

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins.BaseRecorder"

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        with query_inputs.capturing(self.capture_store) as capture:
            nodes = self.base.retrieve(query_bundle)
        return self._recorded(nodes, capture)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        with query_inputs.capturing(self.capture_store) as capture:
            nodes = await self.base.aretrieve(query_bundle)
        return self._recorded(nodes, capture)

    def _recorded(self, nodes: list[NodeWithScore], capture: query_inputs.StoreCapture) -> list[NodeWithScore]:
        inputs = query_inputs.current()
        if inputs is None:
            return nodes
        inputs.base_node_ids.update(n.node.node_id for n in nodes)
        if self.capture_store is not None:
            for filters in capture.filters:
                inputs.declare(filters)
            if not self.filters_given and (capture.problem or not capture.filters):
                inputs.unknown(f"{capture.problem or 'the host retriever did not query the index'}: "
                               + query_inputs.PASS_FILTERS.format(where="rp.retriever"))
            inputs.awaiting_capture = False
        return nodes


class RecordingQueryEngine(BaseQueryEngine):
    """The engine a plugin's query-engine wrapper is given: the one below it, keeping (per query) what
    it answered and whether it failed, so a failure can be told apart from the plugin's own."""

    def __init__(self, inner: BaseQueryEngine):
        super().__init__(callback_manager=getattr(inner, "callback_manager", None))
        self.inner = inner
        # Per query in threads and asyncio tasks alike (the tasks of one event loop share a thread-local).
        # A dict set by reset(): a wrapper that runs the engine below in a task of its own (a copy of the
        # context) still writes into the one its query reads.
        self._state: contextvars.ContextVar[dict[str, Any]] = contextvars.ContextVar(f"ragplugins_below_{id(self)}")

    def _get_prompt_modules(self) -> dict:
        return {"inner": self.inner}

    def reset(self) -> None:
        self._state.set({"response": None, "failed": False})

    def outcome(self) -> tuple[Any, bool]:
        state = self._state.get({})
        return state.get("response"), state.get("failed", False)

    def _note(self, **outcome: Any) -> None:
        self._state.get({}).update(outcome)

    def _query(self, query_bundle: QueryBundle) -> Any:
        try:
            response = self.inner.query(query_bundle)
        except Exception:
            self._note(failed=True)
            raise
        self._note(response=response)
        return response

    async def _aquery(self, query_bundle: QueryBundle) -> Any:
        try:
            response = await self.inner.aquery(query_bundle)
        except Exception:
            self._note(failed=True)
            raise
        self._note(response=response)
        return response


class GuardedQueryEngine(BaseQueryEngine):
    """Runs a plugin's query-engine wrapper; when the plugin (not the engine below it) fails, raises
    naming the plugin, or (policy 'warn') returns the answer of the engine below, without the plugin."""

    def __init__(self, wrapped: BaseQueryEngine, below: RecordingQueryEngine, plugin: str, policy: str):
        super().__init__(callback_manager=getattr(wrapped, "callback_manager", None))
        self.wrapped, self.below, self.plugin, self.policy = wrapped, below, plugin, policy

    def _get_prompt_modules(self) -> dict:
        return {"wrapped": self.wrapped}

    def _fallback(self, exc: Exception) -> tuple[Any, bool]:
        response, failed_below = self.below.outcome()
        if failed_below:
            raise exc  # not this plugin's failure
        _handle(self.policy, PluginError(self.plugin, type(self.wrapped).__name__, exc))
        return response, response is not None

    def _query(self, query_bundle: QueryBundle) -> Any:
        self.below.reset()
        try:
            return self.wrapped.query(query_bundle)
        except Exception as exc:  # noqa: BLE001
            response, answered = self._fallback(exc)
            return response if answered else self.below.inner.query(query_bundle)

    async def _aquery(self, query_bundle: QueryBundle) -> Any:
        self.below.reset()
        try:
            return await self.wrapped.aquery(query_bundle)
        except Exception as exc:  # noqa: BLE001
            response, answered = self._fallback(exc)
            return response if answered else await self.below.inner.aquery(query_bundle)
