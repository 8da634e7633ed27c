"""Query time: the plugins' retriever wrappers, postprocessors and query-engine wrappers assembled
around a first stage, and a retrieval without synthesis (``search``). Part of
:class:`ragplugins.app.RagPlugins`."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from llama_index.core import VectorStoreIndex
from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.indices.vector_store.retrievers import VectorIndexRetriever
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.response_synthesizers import BaseSynthesizer
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.core.vector_stores.types import MetadataFilters

from ragplugins import query_inputs, search, trace
from ragplugins.app_part import AppPart
from ragplugins.errors import InputError, PluginError
from ragplugins.guards import (
    BaseRecorder,
    GuardedPostprocessor,
    GuardedQueryEngine,
    GuardedRetriever,
    RecordingQueryEngine,
)
from ragplugins.nodes import ANNOTATION_KEY
from ragplugins.query_inputs import NOT_GIVEN, NotGiven

if TYPE_CHECKING:
    pass


@dataclass
class SearchResult:
    """One retrieval: the first-stage list, the final list and the trace."""

    first_stage: list[NodeWithScore]
    final: list[NodeWithScore]
    trace: trace.Trace


class RagRetriever(BaseRetriever):
    """The first stage: the base retriever inside the plugins' retriever wrappers.

    It puts the query's inputs (ragplugins.query_inputs) in place before any wrapper runs: the
    filters (``filters``: given or built by ragplugins; ``NOT_GIVEN``: the host's base may filter,
    read off ``capture_store`` when that is possible) and the first stage's k."""

    def __init__(self, inner: BaseRetriever, base: BaseRetriever,
                 filters: MetadataFilters | None | NotGiven = NOT_GIVEN, top_k: int | None = None,
                 capture_store: Any = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.inner, self.base, self.filters, self.top_k = inner, base, filters, top_k
        self.capture_store = capture_store

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins.RagRetriever"

    @staticmethod
    def _fresh(query_bundle: QueryBundle) -> QueryBundle:
        if not query_bundle.query_str.strip() and query_bundle.embedding is None:
            # Refused here, before any plugin: an empty question has no meaning to retrieve by.
            raise InputError("the question is empty; ask something")
        # A copy: LlamaIndex retrievers write the query embedding into the bundle they are given.
        return QueryBundle(query_str=query_bundle.query_str, custom_embedding_strs=query_bundle.custom_embedding_strs,
                           embedding=query_bundle.embedding)

    def _declare(self, inputs: query_inputs.QueryInputs) -> None:
        inputs.top_k = inputs.top_k or self.top_k
        if not isinstance(self.filters, NotGiven):
            inputs.declare(self.filters)
        elif self.capture_store is not None:
            inputs.awaiting_capture = True
        else:
            inputs.unknown(f"the host's retriever ({type(self.base).__name__}) may filter: "
                           + query_inputs.PASS_FILTERS.format(where="rp.retriever"))

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        with query_inputs.scope() as (inputs, _), trace.scope(query_bundle.query_str) as tr:
            self._declare(inputs)
            with trace.timed("first_stage"):
                nodes = self.inner.retrieve(self._fresh(query_bundle))
            nodes = inputs.screen(nodes, after="the retriever wrappers")
            tr.set_first_stage(nodes)
            return nodes

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        with query_inputs.scope() as (inputs, _), trace.scope(query_bundle.query_str) as tr:
            self._declare(inputs)
            with trace.timed("first_stage"):
                nodes = await self.inner.aretrieve(self._fresh(query_bundle))
            nodes = inputs.screen(nodes, after="the retriever wrappers")
            tr.set_first_stage(nodes)
            return nodes


class RagQueryEngine(BaseQueryEngine):
    """Outermost engine: opens the trace and puts it in ``response.metadata['ragplugins']``."""

    def __init__(self, inner: BaseQueryEngine, **kwargs: Any):
        super().__init__(callback_manager=getattr(inner, "callback_manager", None))
        self.inner = inner

    def _get_prompt_modules(self) -> dict:
        return {"inner": self.inner}

    def _attach(self, response: Any, tr: trace.Trace) -> Any:
        tr.set_final(getattr(response, "source_nodes", []))
        if getattr(response, "metadata", None) is None:
            response.metadata = {}
        response.metadata[ANNOTATION_KEY] = {**tr.to_dict(), **response.metadata.get(ANNOTATION_KEY, {})}
        return response

    def _query(self, query_bundle: QueryBundle) -> Any:
        with query_inputs.scope(), trace.scope(query_bundle.query_str) as tr:
            return self._attach(self.inner.query(query_bundle), tr)

    async def _aquery(self, query_bundle: QueryBundle) -> Any:
        with query_inputs.scope(), trace.scope(query_bundle.query_str) as tr:
            return self._attach(await self.inner.aquery(query_bundle), tr)


class Assembly(AppPart):
    """The query-time part of the app: components for the host's pipeline, and ``search``."""

    @property
    def last_trace(self) -> trace.Trace | None:
        """The trace of the latest query in this thread, also when the app's own engine ran
        ``rp.retriever(index)`` / ``rp.postprocessors(index)``."""
        return trace.last()

    # -- query time ------------------------------------------------------
    def base_retriever(self, index: VectorStoreIndex | None = None, filters: MetadataFilters | None = None,
                       top_k: int | None = None) -> BaseRetriever:
        index = index or self.index()
        core, ctx = self.config.core, self.context(index)
        return search.HybridRetriever(ctx.store, ctx.embed_query, top_k=top_k or core.top_k, mode=core.retrieval,
                                      filters=filters, fusion_depth=core.fusion_depth, fusion=core.fusion,
                                      window_scoring=core.window_scoring, merge_adjacent=core.merge_adjacent)

    def retriever(self, index: VectorStoreIndex | None = None, base: BaseRetriever | None = None,
                  filters: MetadataFilters | None | NotGiven = NOT_GIVEN, top_k: int | None = None) -> RagRetriever:
        """The first stage with the plugins' retriever wrappers; ``base`` defaults to the core hybrid,
        filtered by ``filters``. With your own ``base``, pass the filters it applies (None: it applies
        none): plugins search the index only with filters they know (ragplugins.query_inputs)."""
        index = index or self.index()
        if not self._settings_checked:
            self._settings_checked = True
            stale = self.stale_settings()
            if stale:
                warnings.warn(f"ragplugins: the chunks in '{self.home}' were made with other settings than the "
                              f"config's, and queries read them as they are: {'; '.join(stale)}", stacklevel=2)
        capture_store = None
        if base is None:
            filters = None if isinstance(filters, NotGiven) else filters
            base = self.base_retriever(index, filters=filters, top_k=top_k)
        elif type(base) is VectorIndexRetriever and self.context(index).store.reports_filters:
            # Its filters reach a store that reports them while this base runs
            # (ANDed with any given here: a filters= that says less than the base does cannot widen it).
            capture_store = index.vector_store
        ctx = self.context(index)
        retriever: BaseRetriever = BaseRecorder(base, capture_store=capture_store,
                                                filters_given=not isinstance(filters, NotGiven))
        for contrib in self._contributions("ragplugins_retriever_wrappers", ctx):
            wrapped = self._wrap(contrib, retriever, BaseRetriever)
            if wrapped is not None:
                retriever = GuardedRetriever(wrapped, retriever, contrib.plugin, self.config.core.on_plugin_error)
        return RagRetriever(retriever, base, filters=filters, top_k=top_k, capture_store=capture_store)

    def postprocessors(self, index: VectorStoreIndex | None = None,
                       filters: MetadataFilters | None | NotGiven = NOT_GIVEN) -> list:
        """The plugins' node postprocessors in stage order (rerank, expand, finalize). In your own
        engine, pass the filters your retriever applies (None: it applies none) so plugins can search."""
        ctx = self.context(index or self.index())
        given = not isinstance(filters, NotGiven)
        known = None if isinstance(filters, NotGiven) else filters
        return [GuardedPostprocessor(inner=c.component, plugin=c.plugin, policy=self.config.core.on_plugin_error,
                                     filters=known, filters_given=given)
                for c in self._contributions("ragplugins_node_postprocessors", ctx)]

    def query_engine(self, index: VectorStoreIndex | None = None, base: BaseRetriever | None = None,
                     filters: MetadataFilters | None | NotGiven = NOT_GIVEN, similarity_top_k: int | None = None,
                     node_postprocessors: Sequence[BaseNodePostprocessor] = (), **kwargs: Any) -> BaseQueryEngine:
        """Like ``index.as_query_engine``: ``similarity_top_k`` sets the first stage's k, your
        ``node_postprocessors`` run after the plugins', other keywords go to the response synthesizer."""
        from llama_index.core.query_engine import RetrieverQueryEngine
        from llama_index.core.response_synthesizers import get_response_synthesizer

        index = index or self.index()
        if self.llm is None:
            from llama_index.core.llms import MockLLM
            from llama_index.core.response_synthesizers.no_text import NoText

            if kwargs:
                raise TypeError(f"query_engine() got {', '.join(sorted(kwargs))}, which only a response synthesizer "
                                "takes, and without an LLM there is none: pass llm= to ragplugins.load()")
            # No LLM: ranked sources without an answer. NoText never calls the LLM; passing
            # one keeps it from resolving Settings.llm (which would import OpenAI).
            synth: BaseSynthesizer = NoText(llm=MockLLM())
            # LlamaIndex prints an answerless response as 'None', which reads like the answer.
            warnings.warn("ragplugins: query_engine() without an LLM answers nothing: a response holds the ranked "
                          "sources (response.source_nodes) and str(response) is 'None'; pass llm= to "
                          "ragplugins.load() or set [ragplugins] llm in the config for answers", stacklevel=2)
        else:
            synth = get_response_synthesizer(llm=self.llm, **kwargs)
        engine: BaseQueryEngine = RetrieverQueryEngine(
            retriever=self.retriever(index, base=base, filters=filters, top_k=similarity_top_k),
            response_synthesizer=synth,
            node_postprocessors=[*self.postprocessors(index, filters=filters), *node_postprocessors])
        for contrib in self._contributions("ragplugins_query_engine_wrappers", self.context(index)):
            below = RecordingQueryEngine(engine)
            wrapped = self._wrap(contrib, below, BaseQueryEngine)
            if wrapped is not None:
                engine = GuardedQueryEngine(wrapped, below, contrib.plugin, self.config.core.on_plugin_error)
        return RagQueryEngine(engine)

    def _wrap(self, contrib: Any, inner: Any, expected: type) -> Any:
        """``contrib.component(inner)``, or None (policy 'warn') when the plugin's factory fails."""
        try:
            wrapped = contrib.component(inner)
            if not isinstance(wrapped, expected):
                raise TypeError(f"returned {type(wrapped).__name__}, expected a LlamaIndex {expected.__name__}")
            return wrapped
        except Exception as exc:  # noqa: BLE001
            self.on_plugin_error(PluginError(contrib.plugin, f"its {expected.__name__} wrapper", exc))
            return None

    def search(self, query: str, index: VectorStoreIndex | None = None,
               filters: MetadataFilters | None | NotGiven = NOT_GIVEN, top_k: int | None = None,
               base: BaseRetriever | None = None) -> SearchResult:
        """Retrieve without synthesis: first-stage list, final list (after postprocessors), trace."""
        if index is None and self._index is None:  # asked once, before the index is first opened
            try:
                self.require_index()
            except InputError as exc:  # an app may search before its first documents arrive: nothing, and why
                warnings.warn(f"ragplugins: {exc}; the search returns nothing", stacklevel=2)
        index = index or self.index()
        if base is None:
            filters = None if isinstance(filters, NotGiven) else filters
            key = ("retriever", id(index), filters.model_dump_json() if filters else None, top_k)
            # Read once into a local: a write in another thread may clear what was assembled meanwhile.
            retriever = self._assembled.get(key)
            if retriever is None:
                retriever = self._assembled[key] = self.retriever(index, filters=filters, top_k=top_k)
        else:
            retriever = self.retriever(index, base=base, filters=filters, top_k=top_k)
        pp_key = ("postprocessors", id(index))
        postprocessors = self._assembled.get(pp_key)
        if postprocessors is None:
            postprocessors = self._assembled[pp_key] = self.postprocessors(index)
        with query_inputs.scope(top_k=top_k), trace.scope(query) as tr:
            first = retriever.retrieve(query)
            final = list(first)
            bundle = QueryBundle(query_str=query)
            with trace.timed("postprocess"):
                for pp in postprocessors:
                    final = pp.postprocess_nodes(final, query_bundle=bundle)
            tr.set_final(final)
        return SearchResult(first_stage=first, final=final, trace=tr)
