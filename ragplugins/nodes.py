"""Per-query annotations on retrieved nodes, kept at one well-defined place.

Annotations live in ``node.metadata["ragplugins"]`` on a *copy* of the node
(stored nodes are never mutated) and that key is excluded from the embedding
and LLM text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from llama_index.core.schema import BaseNode, NodeWithScore

ANNOTATION_KEY = "ragplugins"


# The two lists of metadata keys LlamaIndex leaves out of the text it embeds and gives the LLM.
_HIDING_LISTS = ("excluded_embed_metadata_keys", "excluded_llm_metadata_keys")


def hide_metadata(node: BaseNode, keys: Iterable[str]) -> bool:
    """Keep ``keys`` out of the text LlamaIndex embeds and gives the LLM for ``node`` (by default it
    includes every metadata key, which moves vectors and fills prompts with bookkeeping); whether
    anything was added. The one place ragplugins and its plugins hide keys."""
    added = False
    for attr in _HIDING_LISTS:
        current = list(getattr(node, attr))
        missing = [k for k in dict.fromkeys(keys) if k not in current]
        if missing:
            setattr(node, attr, current + missing)
            added = True
    return added


def annotation(nws: NodeWithScore) -> dict[str, Any]:
    """The node's ragplugins annotations (empty when it has none)."""
    value = nws.node.metadata.get(ANNOTATION_KEY)
    return value if isinstance(value, dict) else {}


def annotate(nws: NodeWithScore, **fields: Any) -> NodeWithScore:
    """Return a copy of ``nws`` whose annotations include ``fields``."""
    node = nws.node.model_copy()
    node.metadata = dict(node.metadata)
    node.metadata[ANNOTATION_KEY] = {**annotation(nws), **fields}
    hide_metadata(node, [ANNOTATION_KEY])
    return NodeWithScore(node=node, score=nws.score)


def tag(nws: NodeWithScore, plugin: str, **info: Any) -> NodeWithScore:
    """Mark ``nws`` as touched by ``plugin`` (e.g. added by the crossref hop)."""
    tags = dict(annotation(nws).get("tags", {}))
    tags[plugin] = info or True
    return annotate(nws, tags=tags)


def tags(nws: NodeWithScore) -> dict[str, Any]:
    return dict(annotation(nws).get("tags", {}))


def cosine(a: Sequence[float] | None, b: Sequence[float] | None) -> float | None:
    """The cosine of two vectors, None when either is missing, empty, of another size or zero."""
    if a is None or b is None or len(a) == 0 or len(a) != len(b):
        return None
    va, vb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    denom = float(np.linalg.norm(va) * np.linalg.norm(vb))
    if denom == 0.0 or math.isnan(denom):
        return None
    return float(va @ vb / denom)


def dense_cosine(nws: NodeWithScore) -> float | None:
    """The dense cosine the core's first stage measured for this node, if any."""
    value = annotation(nws).get("dense_cosine")
    return float(value) if value is not None else None


def query_cosine(nws: NodeWithScore, query_embedding: Sequence[float]) -> float | None:
    """The cosine between a query and a node: from the node's vector when the store returned it, else
    the dense cosine the first stage measured (valid only if it ran for this same query)."""
    value = cosine(query_embedding, nws.node.embedding)
    return value if value is not None else dense_cosine(nws)


def doc_id(nws: NodeWithScore) -> str | None:
    return nws.node.ref_doc_id


_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def document_name(node: Any) -> str:
    """How output names a node's document: its id when that is a path (ragplugins' own indexes), else
    the file name or title a reader recorded (an app's index has random UUIDs), else the id."""
    return document_label(node.ref_doc_id or "", node.metadata or {}) or node.node_id


def result_label(nws: NodeWithScore) -> str:
    """How output names a result: :func:`chunk_label`, and a passage by every chunk it joins ("guide.md#3+4"),
    though its id is its lead's."""
    label = chunk_label(nws.node)
    positions = annotation(nws).get("passage_positions") or []
    if len(positions) > 1 and "#" in label:
        label = label.rpartition("#")[0] + "#" + "+".join(str(i) for i in positions)
    return label


def chunk_label(node: Any) -> str:
    """How output names a chunk for people: its document (:func:`document_name`) and its position in it
    (``CHUNK_INDEX_KEY``, from 0), e.g. ``guide/install.md#3``; the document alone when the index did not
    record positions (a host's own index)."""
    from ragplugins.stores.base import CHUNK_INDEX_KEY  # stores.base imports this module

    position = (node.metadata or {}).get(CHUNK_INDEX_KEY)
    name = document_name(node)
    return f"{name}#{position}" if isinstance(position, int) and name != node.node_id else name


def document_label(doc_id: str, metadata: dict[str, Any]) -> str:
    """:func:`document_name` for a document id and its metadata (``ctx.list_documents()`` gives both)."""
    if doc_id and not _UUID.match(doc_id.split("_part_")[0]):
        return doc_id
    for key in ("file_name", "title", "file_path", "source", "url"):
        if metadata.get(key):
            return str(metadata[key])
    return doc_id
