"""The overviews of an index, kept through its store adapter's plugin state (ragplugins.stores).

The overviews record the embedder's identity, the index they belong to, the number of documents
and that their rows are L2-normalised, so overviews that do not fit the index being queried are
refused with one warning instead of producing wrong scores. The adapter replaces them in one
step, so a reader sees the old overviews or the new ones, never half of them; where they live
(a file beside LanceDB, the StorageContext, a Qdrant collection) is the adapter's business.
"""

from __future__ import annotations

import base64
import threading
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragplugins import api
from ragplugins.api import StateError
from ragplugins_overview.scoring import OverviewScorer

PLUGIN = "overview"
NAME = "overviews"

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
    def empty(cls, embedder: str, index_id: str) -> Overviews:
        return cls([], [], [], [], np.zeros((0, 0), dtype=np.float32), embedder, index_id)

    def meta(self, **extra: Any) -> dict[str, Any]:
        """What every location stores beside the rows, and :meth:`stored` checks on the way back."""
        return {"format": FORMAT_VERSION, "embedder": self.embedder, "index_id": self.index_id,
                "normalized": self.normalized, "count": len(self), "writer": self.writer,
                "dim": int(self.vectors.shape[1]) if len(self) else 0, **extra}

    @classmethod
    def stored(cls, meta: dict[str, Any], doc_ids: list, hashes: list, texts: list, sources: list,
               vectors: np.ndarray) -> Overviews:
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

    def writer_changes(self, wanted: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
        """The writer settings that differ from ``wanted`` (``OverviewConfig.writer_settings()``): key ->
        (what they were written with, wanted); none when the record predates ``writer``."""
        return api.changed_settings(self.writer, wanted) if self.writer else {}

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
    """The overviews of one index, kept as the plugin state ``overview/overviews`` of its store adapter
    (ragplugins.stores: wherever that store keeps plugin state, replaced in one step)."""

    def __init__(self, ctx: api.RagContext):
        self.state = ctx.state(PLUGIN)
        self.index_id = ctx.index_id
        self.label = f"{self.state.label}, collection '{NAME}'"

    def signature(self) -> Any:
        """Changes whenever the stored overviews change (decides when a cached read is stale)."""
        return self.state.signature(NAME)

    def read(self) -> Overviews | None:
        """The stored overviews; None when there are none; SidecarError when they are unusable."""
        try:
            stored = self.state.read(NAME)
        except StateError as exc:
            raise SidecarError(str(exc)) from exc
        if stored is None:
            return None
        try:
            rows = stored.records
            doc_ids, hashes, texts, sources = ([r[k] for r in rows] for k in ("doc_id", "hash", "text", "source"))
            dim = int(stored.meta.get("dim", 0))
            vectors = (np.vstack([np.frombuffer(base64.b64decode(r["vector"]), dtype="<f4") for r in rows])
                       if rows else np.zeros((0, dim), dtype=np.float32))
        except Exception as exc:  # noqa: BLE001 - records without our keys, vectors of mixed size
            raise SidecarError(f"it cannot be read ({type(exc).__name__}: {exc})") from exc
        return Overviews.stored(stored.meta, doc_ids, hashes, texts, sources, vectors)

    def write(self, overviews: Overviews) -> None:
        overviews.check()
        # Vectors as base64 of little-endian float32: exact, and 10-30x faster to write and read than JSON floats.
        records = [{"doc_id": d, "hash": h, "text": t, "source": s,
                    "vector": base64.b64encode(np.asarray(overviews.vectors[i], dtype="<f4").tobytes()).decode("ascii")}
                   for i, (d, h, t, s) in enumerate(zip(overviews.doc_ids, overviews.hashes, overviews.texts,
                                                        overviews.sources))]
        self.state.write(NAME, records, overviews.meta())


def location_for(ctx: api.RagContext) -> Location:
    """Where the overviews of the index behind ``ctx`` are kept."""
    return Location(ctx)


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
        # Missing or another index's: the remedy the query's decision gives too (a new user was told `overview
        # rebuild` by this warning and `prepare` by the decision, for one state).
        fix = (api.not_prepared(PLUGIN) if problem == MISSING or problem.startswith(OTHER_INDEX)
               else f"to fix it, {FIX}")
        self.notice_once(location, f"the overviews in {location.label} are not used: {problem}. Retrieval "
                                   f"continues without overviews; {fix}.")

    def notice_once(self, location: Location, message: str) -> None:
        """Warn with ``message`` once per state of the stored overviews."""
        key = (location.label, location.signature(), message)
        with self._lock:
            if key in self._warned:
                return
            self._warned.add(key)
        warnings.warn(f"ragplugins overview: {message}", stacklevel=4)


cache = _Cache()


def usable(ctx: api.RagContext) -> tuple[Overviews | None, str | None]:
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
