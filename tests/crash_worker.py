"""What the crash-injection tests run in a child process: index or delete on an embedded index, with
``$RAGPLUGINS_CRASH_AT`` naming the phase where the child dies (os._exit, like kill -9).

Children are forked from a forkserver that imported this module once, so each run costs a fork, not
a Python start with LlamaIndex, LanceDB and torch imports.
"""

from __future__ import annotations

import hashlib
import os
import re
import traceback
from typing import Any

import numpy as np
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.node_parser import SentenceSplitter

import ragplugins  # noqa: F401 - preloaded in the forkserver
import ragplugins_crossref  # noqa: F401
import ragplugins_overview  # noqa: F401
import ragplugins_retry  # noqa: F401
from ragplugins.app import load
from ragplugins.errors import RagPluginsError
from ragplugins.plugins import PluginRegistry

# Paid once in the forkserver rather than in every child: importing the installed plugins, and the
# sentence splitter's tokenizer.
PluginRegistry.discover()
SentenceSplitter(chunk_size=256, chunk_overlap=20).split_text("Warm up. The tokenizer loads now.")

DIM = 64


class HashEmbedding(BaseEmbedding):
    """Bag of hashed words, L2-normalised: deterministic, instant, and close texts get close vectors.
    The embedder is not what these tests are about; the store (real LanceDB) is."""

    @classmethod
    def class_name(cls) -> str:
        return "tests.HashEmbedding"

    def _vector(self, text: str) -> list[float]:
        v = np.zeros(DIM)
        for word in re.findall(r"\w+", text.lower()):
            v[int(hashlib.md5(word.encode()).hexdigest()[:8], 16) % DIM] += 1.0
        norm = np.linalg.norm(v)
        return list(v / norm) if norm else [1.0] + [0.0] * (DIM - 1)

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)


def config(persist_dir: str) -> dict:
    return {"persist_dir": persist_dir, "enable": ["crossref", "overview", "retry"]}


def run(persist_dir: str, op: str, args: list[str], crash_at: str | None = None,
        lock_timeout: float | None = None) -> dict[str, Any]:
    """``op`` 'index' (args: paths) or 'delete' (args: doc ids), in this (child) process."""
    if crash_at:
        os.environ["RAGPLUGINS_CRASH_AT"] = crash_at
    import warnings

    warnings.simplefilter("ignore")
    try:
        rp = load(config(persist_dir), embed_model=HashEmbedding())
        if lock_timeout is not None:
            rp.lock_timeout = lock_timeout
        if op == "index":
            _, report = rp.index_paths(args)
            return {"ok": True, "added": report.added, "updated": report.updated, "deleted": report.deleted}
        if op == "delete":
            return {"ok": True, "deleted": rp.delete_documents(args)}
        if op == "search":
            result = rp.search(args[0])
            return {"ok": True, "final": [n.node.node_id for n in result.final]}
        raise ValueError(op)
    except RagPluginsError as exc:
        return {"ok": False, "error": str(exc), "type": type(exc).__name__}
    except Exception as exc:  # noqa: BLE001 - reported to the test, which fails on it
        return {"ok": False, "error": traceback.format_exc(), "type": type(exc).__name__}


def child(queue: Any, *args: Any, **kwargs: Any) -> None:
    queue.put(run(*args, **kwargs))
