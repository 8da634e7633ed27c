"""Values derived from an index's contents, built once and kept until the index is written.

The sparse leg's BM25 model, the retry plugin's corpus vocabulary and the crossref
plugin's table of document names are all read off every stored chunk: too slow to
rebuild per query, wrong to keep after a write. One cache serves them all, keyed by
the vector store and a name. An entry is stale when the store's stamp changed:

- every write through ragplugins bumps the store's generation (``invalidate``);
- the store adapter's ``version()`` (ragplugins.stores) changes too when the store can tell
  (LanceDB's table version), so a host that writes through the LlamaIndex index directly
  (``index.insert_nodes``) resets it. Other stores written behind ragplugins' back need
  ``invalidate(index.vector_store)``.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

# Values kept per store, least recently used dropped first: a value per host filter ("retry.vocabulary"
# under each tenant's filter) would otherwise grow without end in a long-lived app.
MAX_VALUES = 64


class IndexCache:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        # Keyed by id(): stores are unhashable pydantic models; entries die with the store.
        self._generation: dict[int, int] = {}
        self._built: dict[int, OrderedDict[str, tuple[Any, Any]]] = {}
        # One lock per value being built: the first thread to miss builds it, the others wait for it.
        self._building: dict[tuple, threading.Lock] = {}

    def _watch(self, store: Any) -> int:
        key = id(store)
        if key not in self._generation:
            self._generation[key] = 0
            weakref.finalize(store, self._forget, key)
        return key

    def _forget(self, key: int) -> None:
        with self._lock:
            self._generation.pop(key, None)
            self._built.pop(key, None)

    def invalidate(self, store: Any) -> None:
        """Drop everything derived from ``store``'s contents."""
        with self._lock:
            key = self._watch(store)
            self._generation[key] += 1

    def get(self, adapter: Any, name: str, build: Callable[[], T]) -> T:
        """The value called ``name`` for the current contents of ``adapter``'s store (a StoreAdapter);
        ``build()`` makes it when missing or stale. Threads that miss the same value at once build it
        once: the first builds, the others wait for its result (so ``build`` must not ask for ``name``)."""
        version = adapter.version()
        with self._lock:
            key = self._watch(adapter.vector_store)
            stamp = (self._generation[key], version)
            built = self._built.setdefault(key, OrderedDict())
            cached = built.get(name)
            if cached is not None and cached[0] == stamp:
                built.move_to_end(name)
                return cached[1]
            building = self._building.setdefault((key, name, stamp), threading.Lock())
        with building:
            with self._lock:
                cached = self._built.setdefault(key, OrderedDict()).get(name)
                if cached is not None and cached[0] == stamp:
                    return cached[1]
            try:
                value = build()
                with self._lock:
                    self._keep(self._built.setdefault(key, OrderedDict()), name, stamp, value)
            finally:
                with self._lock:
                    self._building.pop((key, name, stamp), None)
        return value

    @staticmethod
    def _keep(built: OrderedDict[str, tuple[Any, Any]], name: str, stamp: Any, value: Any) -> None:
        """Store ``value``; drop the values of older stamps (never read again) and the least recently used
        beyond MAX_VALUES."""
        for stale in [n for n, (s, _) in built.items() if s != stamp]:
            del built[stale]
        built[name] = (stamp, value)
        built.move_to_end(name)
        while len(built) > MAX_VALUES:
            built.popitem(last=False)


cache = IndexCache()
