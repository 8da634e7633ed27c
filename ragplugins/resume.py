"""Resuming an index run that stopped before it wrote anything.

A run writes its whole batch in one step at the end (a stopped run leaves the index as it was), so
without help a run stopped after ten minutes of embedding starts again from nothing. While the
embedded index runs its pipeline, every vector the embedder returns is also kept, by embedder and
text, in ``unfinished-embeddings.sqlite`` in persist_dir; the next run embeds only the texts not kept
there, and the file is deleted once a batch is written. The vectors are the embedder's own, so an
index built in two attempts is the one a single run builds.

``ragplugins eval`` keeps one such file for its whole cache (``vectors.sqlite``), never deleted: an arm
whose index-time plugins or settings change no chunk's text (crossref, overview) embeds nothing that
another arm, or an earlier run, embedded. It is first filled from the index ``ragplugins index`` built
(:func:`index_vectors`): the chunks' stored vectors and window vectors, under the texts they were embedded
from, so evaluating the folder just indexed embeds only what the arms' settings change.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.bridge.pydantic import PrivateAttr

from ragplugins import trace
from ragplugins.embeddings import embedder_identity

UNFINISHED = "unfinished-embeddings.sqlite"
# Texts of an index embedded again to check that its stored vectors are this embedder's (ragplugins.check's
# test of a manifest-less index, with its threshold).
CHECKED_TEXTS = 8


class ResumableEmbedding(BaseEmbedding):
    """Another embedder's text vectors, also kept in a SQLite file by embedder and text as they come;
    texts found there are not embedded again. Queries go to the embedder."""

    _inner: Any = PrivateAttr()
    _db: Any = PrivateAttr()
    _identity: str = PrivateAttr()
    _reused: int = PrivateAttr(default=0)
    _asked: int = PrivateAttr(default=0)
    _written: set = PrivateAttr(default_factory=set)  # this run's: a text met twice in one run is not "reused"

    def __init__(self, inner: Any, path: Path, **kwargs: Any):
        super().__init__(model_name=str(getattr(inner, "model_name", "") or type(inner).__name__),
                         embed_batch_size=getattr(inner, "embed_batch_size", 10), **kwargs)
        self._inner = inner
        self._identity = embedder_identity(inner)
        # Two eval runs sharing a cache write the same file: wait for the other's batch, not fail.
        self._db = sqlite3.connect(str(path), check_same_thread=False, timeout=120)
        self._db.execute("create table if not exists vectors (key text primary key, vector blob)")

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins.ResumableEmbedding"

    @property
    def wrapped_embed_model(self) -> Any:
        """The embedder behind this one (ragplugins.windows reads its tokenizer to cut windows)."""
        return self._inner

    @property
    def reused(self) -> int:
        """How many texts were found kept (embedded by a run that stopped) and not embedded again."""
        return self._reused

    @property
    def asked(self) -> int:
        """How many texts were asked for (chunks, windows and any text a plugin embeds at index time)."""
        return self._asked

    def close(self) -> None:
        self._db.close()

    def _key(self, text: str) -> str:
        return hashlib.sha256(f"{self._identity}\0{text}".encode()).hexdigest()

    def keep(self, texts: Sequence[str], vectors: Sequence[Sequence[float]]) -> int:
        """Keep ``vectors`` as this embedder's vectors of ``texts`` (where a text has none kept yet); how
        many were new."""
        rows = [(self._key(t), np.asarray(v, dtype=np.float64).tobytes()) for t, v in zip(texts, vectors)]
        before = self._db.total_changes
        self._db.executemany("insert or ignore into vectors values (?, ?)", rows)
        self._db.commit()
        return self._db.total_changes - before

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        keys = [self._key(t) for t in texts]
        self._asked += len(keys)
        kept: dict[str, list[float]] = {}
        for i in range(0, len(keys), 500):
            part = keys[i:i + 500]
            rows = self._db.execute(f"select key, vector from vectors where key in ({','.join('?' * len(part))})",
                                    part)
            kept.update({k: np.frombuffer(v, dtype=np.float64).tolist() for k, v in rows})
        missing = [i for i, k in enumerate(keys) if k not in kept]
        reused = sum(k in kept and k not in self._written for k in keys)
        if reused:
            self._reused += reused
            # A progress display's rate counts what is embedded now, not what is read back (ragplugins.progress).
            trace.dispatcher.event(trace.RagPluginsEvent(plugin="core", action="reused", data={"texts": reused}))
        if missing:
            vectors = self._inner._get_text_embeddings([texts[i] for i in missing])
            self._db.executemany("insert or replace into vectors values (?, ?)",
                                 [(keys[i], np.asarray(v, dtype=np.float64).tobytes())
                                  for i, v in zip(missing, vectors)])
            self._db.commit()  # each batch lands as it is embedded: a stop loses at most the batch in hand
            kept.update({keys[i]: list(v) for i, v in zip(missing, vectors)})
            self._written.update(keys[i] for i in missing)
        return [kept[k] for k in keys]

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._get_text_embeddings([text])[0]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._inner.get_query_embedding(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return await self._inner.aget_query_embedding(query)


def index_vectors(app: Any, embed_model: Any, paths: Sequence[Path] | None = None
                  ) -> tuple[list[str], list[list[float]], str]:
    """The texts the build of ``app``'s index embedded, with the vectors it stored for them: each chunk's
    text as embedded (its vector, unless ``embed_windows`` replaced it by its windows' mean) and its later
    windows' texts (``ragplugins.windows``; their unit vectors, all that window scoring reads). The third
    value says what was read, or why nothing was: another embedder built the index, or a few of the texts
    embedded again by ``embed_model`` do not give back their stored vectors; it is empty when there is no
    index, or (given ``paths``) when none of its sources is, holds or lies in one of ``paths``."""
    from llama_index.core.schema import MetadataMode

    from ragplugins.app import MANIFEST
    from ragplugins.check import SAME_EMBEDDER_COSINE
    from ragplugins.headings import chunk_headings
    from ragplugins.stores.base import WINDOWS_KEY
    from ragplugins.windows import decode_windows, embedder_reader, window_texts

    home = app.home
    manifest = app._manifest() if home is not None and home.read_text(MANIFEST) is not None else {}
    sources = [Path(source).resolve() for source in manifest.get("sources") or {}]
    if paths is not None:
        wanted = [Path(p).resolve() for p in paths]
        sources = [s for s in sources if any(s == w or s in w.parents or w in s.parents for w in wanted)]
    if not manifest or not sources:
        return [], [], ""
    identity = embedder_identity(embed_model)
    if manifest.get("embedder") != identity:
        return [], [], (f"the index in '{home}' was embedded by '{manifest.get('embedder')}', not '{identity}': "
                        "its vectors are not reused")
    settings = {**app.config.core.model_dump(), **(manifest.get("index_settings") or {}).get("ragplugins", {})}
    nodes = [n for n in app.context(app.index()).store.iter_nodes() if n.embedding is not None]
    reader = embedder_reader(embed_model)
    found = chunk_headings(nodes) if settings.get("window_headings") and reader is not None else {}
    texts: list[str] = []
    vectors: list[list[float]] = []
    for node in nodes:
        windows = decode_windows(node.metadata.get(WINDOWS_KEY))
        # Cut (tokenised) only where their vectors are kept, or where a chunk's vector may be their mean.
        later = window_texts(*reader, node, found.get(node.node_id, ())) \
            if reader is not None and (windows is not None or settings.get("embed_windows")) else []
        if not (settings.get("embed_windows") and later):   # else its vector is a mean, no text's own
            texts.append(node.get_content(MetadataMode.EMBED))
            vectors.append(list(node.embedding))
        if windows is not None and len(windows) == len(later) + 1:
            texts += later
            vectors += windows[1:].tolist()
    # One vector per text: chunks that repeat a text (a licence's boilerplate) are one entry, as kept.
    distinct = dict(zip(texts, vectors))
    texts, vectors = list(distinct), list(distinct.values())
    if not texts:
        return [], [], f"the index in '{home}' holds no vectors"
    sample = sorted({round(i * (len(texts) - 1) / max(1, CHECKED_TEXTS - 1)) for i in range(CHECKED_TEXTS)})
    fresh = np.asarray(embed_model.get_text_embedding_batch([texts[i] for i in sample]), dtype=np.float64)
    stored = np.asarray([vectors[i] for i in sample], dtype=np.float64)
    cosine = float(((fresh * stored).sum(1) / (np.linalg.norm(fresh, axis=1) * np.linalg.norm(stored, axis=1)
                                               + 1e-12)).min()) if fresh.shape == stored.shape else 0.0
    if cosine < SAME_EMBEDDER_COSINE:
        return [], [], (f"the index in '{home}' does not hold the vectors this embedder gives its texts (cosine "
                        f"{cosine:.3f} on {len(sample)} of them): its vectors are not reused")
    return texts, vectors, f"{len(texts)} vectors read from the index in '{home}'"
