"""A structured record of what plugins did for one query (output only: what a query was asked
with is in ragplugins.query_inputs).

Two kinds of entries: a plugin's *decisions* (:func:`record_decision`, one schema: plugin, action,
changed, reason, numbers), which ``ragplugins query``, the demo and ``ragplugins eval`` read; and
free-form *details* per plugin and action (:func:`record`), for ``--trace`` and the plugin's own
``ragplugins_eval_instrument``.

The core opens a trace around each retrieval or query; components anywhere in
the call (retriever wrappers, postprocessors, engine wrappers) record into
the active trace through :func:`record`. Each record is also emitted as a
LlamaIndex instrumentation event so Phoenix/Langfuse-style handlers see it.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.events.base import BaseEvent

dispatcher = get_dispatcher("ragplugins")


class RagPluginsEvent(BaseEvent):
    """One plugin action (a hop, a retry decision, a verdict...)."""

    plugin: str
    action: str
    data: dict[str, Any] = {}

    @classmethod
    def class_name(cls) -> str:
        return "RagPluginsEvent"


Number = int | float | bool | None


@dataclass(frozen=True)
class Decision:
    """What one plugin decided in one query: whether it changed the list it was given, why, and the
    numbers the decision rests on. ``query`` is the query it decided on when that is not the trace's
    own (a retry's reformulated question passes through the first-stage plugins again)."""

    plugin: str
    action: str
    changed: bool
    reason: str
    numbers: dict[str, Number] = field(default_factory=dict)
    query: str = ""

    def line(self, trace_query: str = "") -> str:
        on = f" (on {self.query!r})" if self.query and self.query != trace_query else ""
        return f"{self.plugin} {self.action}{on}: {'acted' if self.changed else 'no change'} ({self.reason})"

    def to_dict(self) -> dict[str, Any]:
        return {"plugin": self.plugin, "action": self.action, "changed": self.changed, "reason": self.reason,
                "numbers": dict(self.numbers), "query": self.query}


@dataclass
class Trace:
    query: str = ""
    first_stage: list[str] = field(default_factory=list)
    final: list[str] = field(default_factory=list)
    plugins: dict[str, dict[str, Any]] = field(default_factory=dict)
    timings_ms: dict[str, float] = field(default_factory=dict)
    # Readable names (file name or title) of the first-stage and final lists' documents, in their order.
    first_stage_documents: list[str] = field(default_factory=list)
    final_documents: list[str] = field(default_factory=list)
    # Every decision of every plugin in this query, in the order they were taken.
    decisions: list[Decision] = field(default_factory=list)
    # Chunk id -> what people call the chunk (nodes.chunk_label): the lists above and the plugins' records
    # hold ids, which machines need and people cannot read (see labelled()).
    chunks: dict[str, str] = field(default_factory=dict)

    def set_first_stage(self, nodes: Any) -> None:
        from ragplugins.nodes import document_name

        self.first_stage = [n.node.node_id for n in nodes]
        self.first_stage_documents = [document_name(n.node) for n in nodes]
        self.name_chunks(nodes)

    def set_final(self, nodes: Any) -> None:
        from ragplugins.nodes import document_name

        self.final = [n.node.node_id for n in nodes]
        self.final_documents = [document_name(n.node) for n in nodes]
        self.name_chunks(nodes)

    def name_chunks(self, nodes: Sequence[Any]) -> None:
        """Keep the labels of ``nodes`` (NodeWithScores; ids given as strings have none to keep). Only for
        lists the host's filters were applied to: a label names the document, and a chunk the filters
        screen out must not show its document to the host's users (query_inputs)."""
        from ragplugins.nodes import annotation, result_label

        for n in nodes:
            if isinstance(n, str):
                continue
            if len(annotation(n).get("passage_positions") or []) < 2 and n.node.node_id in self.chunks:
                continue
            self.chunks[n.node.node_id] = result_label(n)

    def record(self, plugin: str, action: str, **data: Any) -> None:
        self.plugins.setdefault(plugin, {})[action] = data

    def get(self, plugin: str, action: str, default: Any = None) -> Any:
        return self.plugins.get(plugin, {}).get(action, default)

    def to_dict(self) -> dict[str, Any]:
        return {"query": self.query, "first_stage": list(self.first_stage), "final": list(self.final),
                "first_stage_documents": list(self.first_stage_documents),
                "final_documents": list(self.final_documents),
                "plugins": {k: dict(v) for k, v in self.plugins.items()},
                "decisions": [d.to_dict() for d in self.decisions],
                "chunks": dict(self.chunks), "timings_ms": dict(self.timings_ms)}


_current: contextvars.ContextVar[Trace | None] = contextvars.ContextVar("ragplugins_trace", default=None)
# The trace of the latest retrieval or query in this context, read by trace.last() / rp.last_trace.
_last: contextvars.ContextVar[Trace | None] = contextvars.ContextVar("ragplugins_last_trace", default=None)


def current() -> Trace | None:
    """The trace of the query being answered, if one is open."""
    return _current.get()


@contextmanager
def scope(query: str = "") -> Iterator[Trace]:
    """Open a trace, or join the one already open (a retriever inside an engine)."""
    existing = _current.get()
    if existing is not None:
        yield existing
        return
    trace = Trace(query=query)
    token = _current.set(trace)
    try:
        yield trace
    finally:
        _current.reset(token)
        _last.set(trace)


def last() -> Trace | None:
    """The trace of the latest query in this context (also when the host's own engine ran it)."""
    return _last.get()


@contextmanager
def join_last(query: str) -> Iterator[Trace]:
    """For plugin components a host runs outside any ragplugins scope (``rp.postprocessors(index)``
    in the app's own RetrieverQueryEngine): record into the trace the retrieval of the same query
    just closed (``rp.retriever``), or into a new one; :func:`last` returns it."""
    existing = _current.get()
    if existing is not None:
        yield existing
        return
    trace = _last.get()
    if trace is None or trace.query != query:
        trace = Trace(query=query)
        _last.set(trace)
    token = _current.set(trace)
    try:
        yield trace
    finally:
        _current.reset(token)


def record(plugin: str, action: str, **data: Any) -> None:
    """Record a plugin action on the open trace (if any) and emit it as an event."""
    trace = _current.get()
    if trace is not None:
        trace.record(plugin, action, **data)
    dispatcher.event(RagPluginsEvent(plugin=plugin, action=action, data=data))


@contextmanager
def timed(name: str) -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    finally:
        trace = _current.get()
        if trace is not None:
            trace.timings_ms[name] = trace.timings_ms.get(name, 0.0) + (time.perf_counter() - start) * 1000


def _node_ids(nodes: Sequence[Any]) -> list[str]:
    return [n if isinstance(n, str) else n.node.node_id for n in nodes]


def record_decision(plugin: str, action: str, *, reason: str, changed: bool | None = None,
                    before: Sequence[Any] | None = None, after: Sequence[Any] | None = None,
                    numbers: dict[str, Number] | None = None, query: str = "", **details: Any) -> Decision:
    """Record what ``plugin`` decided in the query being answered (see :class:`Decision`).

    Give the list the step received and the one it returns (``before``/``after``: NodeWithScores or
    node ids): ``changed`` is then derived from them, never claimed; a ``changed`` that disagrees
    with them is a bug in the plugin and raises ValueError. Give ``changed`` alone only for a decision
    that is not about a list (an answer's verdict). ``numbers``: the scalars the decision rests on.
    ``details``: anything else worth keeping in the trace under ``plugins[plugin][action]``.
    ``query``: the query decided on, when it may differ from the trace's (a first-stage wrapper sees a
    retry's reformulated question too); a later decision of the same plugin, action and query
    replaces the earlier one."""
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError(f"plugin '{plugin}' {action}: a decision needs a reason")
    numbers = dict(numbers or {})
    wrong = sorted(k for k, v in numbers.items() if not isinstance(v, (int, float, bool)) and v is not None)
    if wrong:
        raise TypeError(f"plugin '{plugin}' {action}: numbers must be int, float, bool or None; "
                        f"not {', '.join(wrong)}")
    if (before is None) != (after is None):
        raise TypeError(f"plugin '{plugin}' {action}: give both before= and after=, or neither")
    if before is not None:
        derived = _node_ids(before) != _node_ids(after or [])
        if changed is not None and changed != derived:
            raise ValueError(f"plugin '{plugin}' {action}: says changed={changed}, but the list it returned is "
                             f"{'different from' if derived else 'the same as'} the one it was given")
        changed = derived
    elif changed is None:
        raise TypeError(f"plugin '{plugin}' {action}: give before= and after= (or changed= for a decision that "
                        "is not about a list)")
    decision = Decision(plugin, action, bool(changed), reason, numbers, query)
    trace = _current.get()
    data = {**details, **numbers, "changed": decision.changed, "reason": reason}
    if before is not None:
        data.update(before=_node_ids(before), after=_node_ids(after or []))
    if query:
        data["query"] = query
    if trace is not None:
        # What a step was given has passed the host's filters (each step's output is screened before the
        # next gets it); what it returns has not yet.
        trace.name_chunks(before or [])
        # A later decision of the same step on the same query supersedes the earlier one (a verdict
        # replaces the postprocessor's "not verified yet"); another query's stays (a retry's
        # reformulated question passes through the first-stage plugins again).
        key = (plugin, action, query or trace.query)
        earlier = [i for i, d in enumerate(trace.decisions) if (d.plugin, d.action, d.query or trace.query) == key]
        if earlier:
            trace.decisions[earlier[0]] = decision
        else:
            trace.decisions.append(decision)
        trace.record(plugin, action, **data)
    dispatcher.event(RagPluginsEvent(plugin=plugin, action=action, data=data))
    return decision


def decision_lines(trace: dict[str, Any]) -> list[tuple[str, bool]]:
    """One line per decision in a trace (``Trace.to_dict()``), "<plugin> <action>: acted|no change
    (<reason>)", and whether it changed the list: what ``ragplugins query`` and the demo print."""
    return [(Decision(**d).line(trace.get("query", "")), bool(d["changed"])) for d in trace.get("decisions", [])]


def labelled(trace: dict[str, Any]) -> dict[str, Any]:
    """A trace (``Trace.to_dict()``) for people: every chunk id in it replaced by the chunk's label from
    its ``chunks`` (``guide/install.md#3``), that map left out; an id without a label stays as it is.
    What ``ragplugins query --trace`` prints; the JSON form (``--json``) keeps the ids."""
    names = trace.get("chunks") or {}

    def relabel(value: Any) -> Any:
        if isinstance(value, str):
            return names.get(value, value)
        if isinstance(value, dict):
            return {k: relabel(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [relabel(v) for v in value]
        return value

    return relabel({k: v for k, v in trace.items() if k != "chunks"})
