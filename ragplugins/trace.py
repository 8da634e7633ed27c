"""A structured record of what plugins did for one query (output only: what a query was asked
with is in ragplugins.query_inputs).

The core opens a trace around each retrieval or query; components anywhere in
the call (retriever wrappers, postprocessors, engine wrappers) record into
the active trace through :func:`record`. Each record is also emitted as a
LlamaIndex instrumentation event so Phoenix/Langfuse-style handlers see it.
"""

from __future__ import annotations

import contextvars
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator

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


@dataclass
class Trace:
    query: str = ""
    first_stage: list[str] = field(default_factory=list)
    final: list[str] = field(default_factory=list)
    plugins: dict[str, dict[str, Any]] = field(default_factory=dict)
    timings_ms: dict[str, float] = field(default_factory=dict)
    # Readable names (file name or title) of the final list's documents, in its order.
    final_documents: list[str] = field(default_factory=list)

    def set_final(self, nodes: Any) -> None:
        from ragplugins.nodes import document_name

        self.final = [n.node.node_id for n in nodes]
        self.final_documents = [document_name(n.node) for n in nodes]

    def record(self, plugin: str, action: str, **data: Any) -> None:
        self.plugins.setdefault(plugin, {})[action] = data

    def get(self, plugin: str, action: str, default: Any = None) -> Any:
        return self.plugins.get(plugin, {}).get(action, default)

    def to_dict(self) -> dict[str, Any]:
        return {"query": self.query, "first_stage": list(self.first_stage), "final": list(self.final),
                "final_documents": list(self.final_documents),
                "plugins": {k: dict(v) for k, v in self.plugins.items()},
                "timings_ms": dict(self.timings_ms)}


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


def decisions(plugins: dict[str, dict[str, Any]]) -> list[tuple[str, bool]]:
    """One line per recorded plugin decision, "<plugin> <action>: acted|no change (<reason>)", and whether
    it changed anything: what ``ragplugins query`` and the demo print under the results."""
    out = []
    for plugin, actions in sorted(plugins.items()):
        for action, data in actions.items():
            if not isinstance(data, dict) or "reason" not in data:
                continue
            did = bool(data.get("fired") or data.get("applied"))
            out.append((f"{plugin} {action}: {'acted' if did else 'no change'} ({data['reason']})", did))
    return out
