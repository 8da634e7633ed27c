"""Where overviews live: one ``.npz`` beside the embedded index, or the host's own store (``host_stores``).

Every location records the embedder's identity, the index it belongs to, the number of
documents and that its rows are L2-normalised, so overviews that do not fit the index being
queried are refused with one warning instead of producing wrong scores. Writes replace the
old overviews in one step (a temporary file renamed over the old one here), so a reader sees
the old overviews or the new ones, never half of them.
"""

from __future__ import annotations

import itertools
import json
import os
import tempfile
import threading
import warnings
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ragplugins_overview.scoring import OverviewScorer

FORMAT_VERSION = 1
FIX = ("build the overviews with `ragplugins overview rebuild` or ragplugins_overview.rebuild(rag) (indexing with "
       "the plugin enabled also updates them, but only when a document is added, changed or deleted)")
# Rows are unit vectors up to float32 rounding; anything further off was not normalised.
_NORM_TOLERANCE = 1e-3
# Problems the retriever reports as 'this index was not prepared for overview'.
MISSING = "it does not exist"
OTHER_INDEX = "it belongs to another index"


class SidecarError(Exception):
    """The sidecar exists but cannot be used; the message says why."""


@dataclass
class Overviews:
    """One overview per document, with its L2-normalised embedding."""

    doc_ids: list[str]
    hashes: list[str]
    texts: list[str]
    sources: list[str]
    vectors: np.ndarray
    embedder: str
    index_id: str
    normalized: bool = True
    # OverviewConfig.writer_settings() of the writer that wrote them ({} for sidecars older than the record).
    writer: dict[str, Any] = field(default_factory=dict)
    _scorer: OverviewScorer | None = field(default=None, repr=False, compare=False)

    @classmethod
    def empty(cls, embedder: str, index_id: str) -> "Overviews":
        return cls([], [], [], [], np.zeros((0, 0), dtype=np.float32), embedder, index_id)

    def meta(self, **extra: Any) -> dict[str, Any]:
        """What every location stores beside the rows, and :meth:`stored` checks on the way back."""
        return {"format": FORMAT_VERSION, "embedder": self.embedder, "index_id": self.index_id,
                "normalized": self.normalized, "count": len(self), "writer": self.writer,
                "dim": int(self.vectors.shape[1]) if len(self) else 0, **extra}

    @classmethod
    def stored(cls, meta: dict[str, Any], doc_ids: list, hashes: list, texts: list, sources: list,
               vectors: np.ndarray) -> "Overviews":
        """Overviews read back from a location, refused (SidecarError) unless they match their meta record."""
        if meta.get("format") != FORMAT_VERSION:
            raise SidecarError(f"it has format {meta.get('format')!r}, this plugin reads {FORMAT_VERSION}")
        try:
            overviews = cls(doc_ids=[str(x) for x in doc_ids], hashes=[str(x) for x in hashes],
                            texts=[str(x) for x in texts], sources=[str(x) for x in sources],
                            vectors=np.ascontiguousarray(vectors, dtype=np.float32),
                            embedder=str(meta["embedder"]), index_id=str(meta["index_id"]),
                            normalized=bool(meta.get("normalized")), writer=dict(meta.get("writer") or {}))
        except KeyError as exc:
            raise SidecarError(f"its meta record lacks {exc}") from exc
        overviews.check()
        if int(meta.get("count", -1)) != len(overviews):
            raise SidecarError(f"it declares {meta.get('count')} documents but holds {len(overviews)}")
        return overviews

    def __len__(self) -> int:
        return len(self.doc_ids)

    def entries(self) -> dict[str, tuple[str, str, str, np.ndarray]]:
        """doc id -> (hash, text, source, vector)."""
        return {d: (h, t, s, self.vectors[i]) for i, (d, h, t, s) in
                enumerate(zip(self.doc_ids, self.hashes, self.texts, self.sources))}

    @property
    def scorer(self) -> OverviewScorer:
        if self._scorer is None:
            self._scorer = OverviewScorer(self.vectors)
        return self._scorer

    def check(self) -> None:
        """Raise SidecarError when the arrays do not describe one normalised vector per document."""
        n = len(self.doc_ids)
        if not (len(self.hashes) == len(self.texts) == len(self.sources) == n):
            raise SidecarError(f"its id, hash, text and source lists disagree in length ({n} ids)")
        if len(set(self.doc_ids)) != n:
            raise SidecarError("it lists a document twice")
        if n == 0:
            return
        if self.vectors.ndim != 2 or self.vectors.shape[0] != n:
            raise SidecarError(f"it holds {self.vectors.shape[0] if self.vectors.ndim else 0} vectors for "
                               f"{n} documents")
        if not self.normalized:
            raise SidecarError("its vectors are not marked L2-normalised")
        if not np.all(np.isfinite(self.vectors)):
            raise SidecarError("its vectors contain NaN or infinite values")
        norms = np.linalg.norm(self.vectors, axis=1)
        if np.any(np.abs(norms - 1.0) > _NORM_TOLERANCE):
            raise SidecarError("its vectors are not unit length although marked normalised")

    def problem_for(self, embedder: str, index_id: str) -> str | None:
        """Why these overviews must not be used for the index ``index_id`` embedded by ``embedder``."""
        if self.embedder != embedder:
            return f"it was embedded with '{self.embedder}', but the index uses '{embedder}'"
        if self.index_id != index_id:
            return f"{OTHER_INDEX} ('{self.index_id}', this one is '{index_id}')"
        return None


class Location:
    """Where one index's overviews are read from and written to."""

    label: str
    # The identity written with the overviews and required of them when read back.
    index_id: str

    def read(self) -> Overviews | None:
        """The stored overviews; None when there are none; SidecarError when they are unusable."""
        raise NotImplementedError

    def write(self, overviews: Overviews) -> None:
        raise NotImplementedError

    def signature(self) -> Any:
        """Changes whenever the stored overviews change (decides when a cached read is stale)."""
        raise NotImplementedError


class FileLocation(Location):
    def __init__(self, path: Path, index_id: str = ""):
        self.path = Path(path)
        self.label = str(self.path)
        self.index_id = index_id

    def signature(self) -> Any:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def read(self) -> Overviews | None:
        if not self.path.exists():
            return None
        try:
            with np.load(self.path, allow_pickle=False) as data:
                meta = json.loads(str(data["meta"]))
                arrays = [data[k] for k in ("doc_ids", "hashes", "texts", "sources", "vectors")]
        except Exception as exc:  # noqa: BLE001 - truncated zip, missing array, bad JSON: all unreadable
            raise SidecarError(f"it cannot be read ({type(exc).__name__}: {exc})") from exc
        return Overviews.stored(meta, *arrays)

    def write(self, overviews: Overviews) -> None:
        overviews.check()
        meta = overviews.meta()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=self.path.name, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                np.savez(f, doc_ids=np.array(overviews.doc_ids, dtype=str),
                         hashes=np.array(overviews.hashes, dtype=str), texts=np.array(overviews.texts, dtype=str),
                         sources=np.array(overviews.sources, dtype=str),
                         vectors=np.asarray(overviews.vectors, dtype=np.float32), meta=np.array(json.dumps(meta)))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


class MemoryLocation(Location):
    """Overviews of an index that has no directory (a vector store given by the host): this process only."""

    _store: dict[str, Overviews] = {}
    _versions: dict[str, int] = {}
    # Process-wide, so a new store under a forgotten key never matches a cached read of the old one.
    _writes = itertools.count(1)

    def __init__(self, key: str, owner: Any = None):
        self.key = self.index_id = key
        self.label = f"memory ({key})"
        if owner is not None and key not in self._versions:
            # Kept only as long as the store lives: the overviews are of that store's chunks.
            weakref.finalize(owner, self._forget, key)
        self._versions.setdefault(key, 0)

    @classmethod
    def _forget(cls, key: str) -> None:
        cls._store.pop(key, None)
        cls._versions.pop(key, None)

    def signature(self) -> Any:
        return self._versions.get(self.key)

    def read(self) -> Overviews | None:
        return self._store.get(self.key)

    def write(self, overviews: Overviews) -> None:
        overviews.check()
        if self.key not in self._store:
            warnings.warn(f"ragplugins overview: the index {self.key} has neither a persist_dir nor a store "
                          "the overviews can be kept in, so they are kept in this process's memory only; after "
                          "a restart, rebuild them with ragplugins_overview.rebuild(rag)", stacklevel=3)
        self._store[self.key] = overviews
        self._versions[self.key] = next(self._writes)


def location_for(ctx: Any) -> Location:
    """The overviews of the index behind ``ctx``: a file per table under the embedded index's sidecar
    directory (its identity is the id in the index's manifest), else the host's store (``host_stores``)."""
    directory = ctx.sidecar_dir("overview")
    if directory is not None:
        return FileLocation(Path(directory) / f"overviews.{ctx.config.core.table}.npz", ctx.index_id)
    from ragplugins_overview.host_stores import host_location

    return host_location(ctx) or MemoryLocation(ctx.index_id, owner=ctx.vector_store)


class _Cache:
    """Reads each sidecar once per change, and warns once per problem."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._read: dict[str, tuple[Any, Overviews | None, str | None]] = {}
        self._warned: set[tuple[str, Any, str]] = set()

    def get(self, location: Location) -> tuple[Overviews | None, str | None]:
        signature = location.signature()
        with self._lock:
            hit = self._read.get(location.label)
            if hit is not None and hit[0] == signature:
                return hit[1], hit[2]
        try:
            overviews, problem = location.read(), None
        except SidecarError as exc:
            overviews, problem = None, str(exc)
        with self._lock:
            self._read[location.label] = (signature, overviews, problem)
        return overviews, problem

    def warn_once(self, location: Location, problem: str) -> None:
        self.notice_once(location, f"the overview sidecar {location.label} is not used: {problem}. Retrieval "
                                   f"continues without overviews; to fix it, {FIX}.")

    def notice_once(self, location: Location, message: str) -> None:
        """Warn with ``message`` once per state of the stored overviews."""
        key = (location.label, location.signature(), message)
        with self._lock:
            if key in self._warned:
                return
            self._warned.add(key)
        warnings.warn(f"ragplugins overview: {message}", stacklevel=4)


cache = _Cache()


def usable(ctx: Any) -> tuple[Overviews | None, str | None]:
    """The overviews to score queries against for ``ctx``'s index, or (None, why not). Warns once per problem."""
    location = location_for(ctx)
    overviews, problem = cache.get(location)
    if overviews is None and problem is None:
        problem = MISSING
    if overviews is not None:
        problem = overviews.problem_for(ctx.embedder_id, location.index_id)
    if problem is not None:
        cache.warn_once(location, problem)
        return None, problem
    return overviews, None
