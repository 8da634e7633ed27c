"""Resuming an index run that stopped before it wrote anything.

A run writes its whole batch in one step at the end (a stopped run leaves the index as it was), so
without help a run stopped after ten minutes of embedding starts again from nothing. While the
embedded index runs its pipeline, every vector the embedder returns is also kept, by embedder and
text, in ``unfinished-embeddings.sqlite`` in persist_dir; the next run embeds only the texts not kept
there, and the file is deleted once a batch is written. The vectors are the embedder's own, so an
index built in two attempts is the one a single run builds.

``ragplugins eval`` keeps one such file for its whole cache (``vectors.sqlite``), never deleted: an arm
whose index-time plugins or settings change no chunk's text (crossref, overview) embeds nothing that
another arm, or an earlier run, embedded.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.bridge.pydantic import PrivateAttr

from ragplugins import trace
from ragplugins.embeddings import embedder_identity

UNFINISHED = "unfinished-embeddings.sqlite"


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
