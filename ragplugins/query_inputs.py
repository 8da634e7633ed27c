"""What one query was asked with: the host's metadata filters, whether the core knows them, the
first stage's k, and which nodes the host's base retriever returned.

The trace says what a query did (output); this says what it may do (input) and which version of
the index it reads. RagRetriever,
RagQueryEngine, RagPlugins.search and the guarded postprocessors open it, or join the one already
open, so every component of one query reads the same inputs through the context.

A host's filters are *known* when ragplugins built the base retriever, when the host passed
``filters=`` (``None`` too: "my retriever does not filter"), or when the base is LlamaIndex's
``VectorIndexRetriever`` over ragplugins' own LanceDB store and the store saw the filters it was
queried with. Otherwise the host's retriever may filter in ways the core cannot see, so no plugin
searches the index (it could return what the host's filter excludes) and no node the base did not
return survives the core's check.
"""

from __future__ import annotations

import contextvars
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from llama_index.core.schema import BaseNode, NodeWithScore
from llama_index.core.vector_stores.types import FilterCondition, MetadataFilters
from llama_index.core.vector_stores.utils import build_metadata_filter_fn

from ragplugins import trace

# Recorded in the trace under this plugin name and action when the core refuses or removes.
TRACE_PLUGIN, TRACE_ACTION = "ragplugins", "host_filters"
PASS_FILTERS = "pass filters= to {where}(...) so plugins can search"


class NotGiven:
    """The default of a ``filters=`` argument the caller did not pass (``None`` means "no filter")."""

    def __repr__(self) -> str:
        return "NOT_GIVEN"

    def __bool__(self) -> bool:
        return False


NOT_GIVEN = NotGiven()


def combine(filters: Sequence[MetadataFilters | None]) -> MetadataFilters | None:
    """The AND of ``filters`` (None and empty ones add nothing); None when nothing is left."""
    kept = [f for f in filters if f is not None and f.filters]
    if not kept:
        return None
    if len(kept) == 1:
        return kept[0]
    # Flat when it can be: some stores (SimpleVectorStore) refuse nested filters.
    parts = [item for f in kept for item in
             (f.filters if (f.condition or FilterCondition.AND) == FilterCondition.AND else [f])]
    return MetadataFilters(filters=parts, condition=FilterCondition.AND)


def _matches(metadata: dict[str, Any], filters: MetadataFilters) -> bool:
    """LlamaIndex's in-memory filter semantics (build_metadata_filter_fn), nested groups included."""
    results = []
    for item in filters.filters:
        if isinstance(item, MetadataFilters):
            results.append(_matches(metadata, item))
            continue
        try:
            results.append(build_metadata_filter_fn(lambda _: metadata, MetadataFilters(filters=[item]))(""))
        except (TypeError, ValueError):  # a value the operator cannot compare: not shown to pass
            results.append(False)
    condition = filters.condition or FilterCondition.AND
    if condition == FilterCondition.OR:
        return any(results)
    if condition == FilterCondition.NOT:
        return not any(results)
    return all(results)


def passes(node: BaseNode, filters: MetadataFilters | None) -> bool:
    """Whether a node passes ``filters``, read on its metadata plus its document id (as stores keep it)."""
    if filters is None or not filters.filters:
        return True
    doc = node.ref_doc_id
    return _matches({**node.metadata, "doc_id": doc, "document_id": doc, "ref_doc_id": doc}, filters)


@dataclass
class QueryInputs:
    top_k: int | None = None
    # Filters ragplugins applied, the host declared, or its store was seen to be queried with.
    declared: list[MetadataFilters] = field(default_factory=list)
    # Why the host's filters are not known (the first reason found); None while they are.
    unknown_reason: str | None = None
    # The base retriever has not run yet and its filters are read off the store when it does.
    awaiting_capture: bool = False
    base_node_ids: set[str] = field(default_factory=set)
    searches_refused: int = 0
    removed: list[dict[str, str]] = field(default_factory=list)
    # What a store pinned for this query (id(store) -> its snapshot), so every read of one query sees
    # one version of the index (ragplugins.store.RagLanceDBVectorStore._reading).
    pinned: dict[int, Any] = field(default_factory=dict)

    @property
    def filters_known(self) -> bool:
        return self.unknown_reason is None and not self.awaiting_capture

    @property
    def filters(self) -> MetadataFilters | None:
        """Every known filter of this query, ANDed (None: no filter). Read ``filters_known`` first."""
        return combine(self.declared)

    def declare(self, filters: MetadataFilters | None) -> None:
        if filters is not None and filters.filters and filters not in self.declared:
            self.declared.append(filters)

    def unknown(self, reason: str) -> None:
        self.unknown_reason = self.unknown_reason or reason

    def refuse_search(self) -> None:
        """A plugin asked to search while the host's filters are unknown: say why, and what to do."""
        self.searches_refused += 1
        reason = self.unknown_reason or "the host's filters are not known before its retriever has run"
        warnings.warn(f"ragplugins: a plugin search was refused: {reason}", stacklevel=3)
        self._record()

    def screen(self, nodes: list[NodeWithScore], after: str) -> list[NodeWithScore]:
        """Drop every node the host's base retriever did not return in this query and that does not
        pass the known filters (every such node while they are unknown); ``after`` names the step."""
        known = self.filters_known
        filters = self.filters
        kept: list[Any] = []
        dropped: list[Any] = []
        for nws in nodes:
            ok = nws.node.node_id in self.base_node_ids or (known and passes(nws.node, filters))
            (kept if ok else dropped).append(nws)
        if dropped:
            # Not the document's id: the trace reaches the host's users, and the filter excludes it.
            self.removed.extend({"node": n.node.node_id, "after": after} for n in dropped)
            self._record()
        return kept

    def _record(self) -> None:
        """The core's decision in this query so far (one per query: each screen or refusal updates it)."""
        if self.filters_known:
            reason = "removed nodes the host's retriever did not return and its filters exclude"
        else:
            reason = self.unknown_reason or "the host's filters are not known"
        trace.record_decision(TRACE_PLUGIN, TRACE_ACTION, reason=reason, changed=bool(self.removed),
                              numbers={"searches_refused": self.searches_refused, "nodes_removed": len(self.removed)},
                              applied=bool(self.removed), known=self.filters_known, removed=list(self.removed))


_current: contextvars.ContextVar[QueryInputs | None] = contextvars.ContextVar("ragplugins_query_inputs",
                                                                              default=None)


def current() -> QueryInputs | None:
    """The inputs of the query being answered, if one is open."""
    return _current.get()


@contextmanager
def scope(top_k: int | None = None,
          filters: MetadataFilters | None | NotGiven = NOT_GIVEN) -> Iterator[tuple[QueryInputs, bool]]:
    """Open the query's inputs, or join the ones already open; yields (inputs, opened_here).

    Whoever opens them states the filters: ragplugins' components do so themselves; to run a plugin
    component on your own, open them with the filters your retriever applied (None: none)."""
    existing = _current.get()
    if existing is not None:
        yield existing, False
        return
    inputs = QueryInputs(top_k=top_k)
    if not isinstance(filters, NotGiven):
        inputs.declare(filters)
    token = _current.set(inputs)
    try:
        yield inputs, True
    finally:
        _current.reset(token)


# -- filters read off ragplugins' own store while a host's VectorIndexRetriever runs ------------
@dataclass
class StoreCapture:
    store: Any
    filters: list[MetadataFilters | None] = field(default_factory=list)
    problem: str | None = None


_capture: contextvars.ContextVar[StoreCapture | None] = contextvars.ContextVar("ragplugins_store_capture",
                                                                               default=None)


@contextmanager
def capturing(store: Any) -> Iterator[StoreCapture]:
    """Collect what ``store`` is queried with while the block runs (see :func:`store_queried`)."""
    capture = StoreCapture(store)
    token = _capture.set(capture)
    try:
        yield capture
    finally:
        _capture.reset(token)


def store_queried(store: Any, query: Any, kwargs: dict[str, Any]) -> None:
    """Called by ragplugins' store at the start of every ``query()``: inside :func:`capturing`, note
    the filters, or that the query restricts in a way plugins cannot repeat."""
    capture = _capture.get()
    if capture is None or capture.store is not store:
        return
    if getattr(query, "doc_ids", None) or getattr(query, "node_ids", None):
        capture.problem = capture.problem or "the host's retriever restricts by doc_ids or node_ids"
    elif kwargs.get("where"):
        capture.problem = capture.problem or "the host's retriever passes a raw 'where' clause to LanceDB"
    capture.filters.append(query.filters)

