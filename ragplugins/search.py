"""Store-agnostic retrieval primitives shared by the plugins.

- :class:`HybridRetriever`: dense + BM25, each leg's scores normalised by their own
  distribution and summed (or reciprocal-rank fusion, k = 60). With ``window_scoring`` "either" (the
  default) or "blend" the dense leg scores chunks by their windows (:func:`window_dense_search`,
  ``ragplugins.windows``).
  The BM25 leg is the store adapter's own keyword search where it has one, else :mod:`ragplugins.sparse`
  (today on every built-in store). Each result keeps its dense cosine and its
  rank in each leg (``ragplugins.nodes.annotation``). Neighbouring chunks that both rank come back as one
  passage (``merge_adjacent``, ``ragplugins.passages``).
- :func:`search_within_documents`: a document-filtered dense search that keeps
  the caller's filters and returns ``None`` when it failed, ``[]`` when it
  matched nothing.
"""

from __future__ import annotations

import functools
import itertools
import logging
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import Any

import numpy as np
from llama_index.core import VectorStoreIndex
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.core.vector_stores.types import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
)

from ragplugins import index_cache, query_inputs, trace
from ragplugins.nodes import annotate, annotation, cosine
from ragplugins.passages import merge_adjacent
from ragplugins.stores import StoreAdapter
from ragplugins.stores.base import CORE_ONLY_KEYS

logger = logging.getLogger(__name__)

RRF_K = 60

EmbedFn = Callable[[str], list[float]]
# The ids of the stored chunks that pass a query's filters, asked of the store at most once per query.
PassingIds = Callable[[], Collection[str] | None]


def _dense_cosine(store: StoreAdapter, query_embedding: Sequence[float], nws: NodeWithScore) -> float | None:
    value = cosine(query_embedding, nws.node.embedding)
    if value is None and store.scores_are_cosines:
        value = nws.score
    return value


def dense_search(store: StoreAdapter, query: str, query_embedding: Sequence[float], k: int,
                 filters: MetadataFilters | None = None) -> list[NodeWithScore]:
    """Dense top-k through the index's own retriever; results carry ``dense_cosine``."""
    retriever = store.index.as_retriever(similarity_top_k=k, filters=filters)
    bundle = QueryBundle(query_str=query, embedding=list(query_embedding))
    results = retriever.retrieve(bundle)
    return [annotate(n, dense_cosine=_dense_cosine(store, query_embedding, n), dense_rank=i + 1)
            for i, n in enumerate(results)]


def window_dense_search(store: StoreAdapter, query: str, query_embedding: Sequence[float], k: int,
                        filters: MetadataFilters | None = None, scoring: str = "either",
                        passing: PassingIds | None = None) -> list[NodeWithScore]:
    """The dense leg by window scoring (``ragplugins.windows``), over the window vectors kept with every
    chunk; filtered like the store's own search. An index written without them: the store's own dense
    search.

    ``blend``: the top k by first window's cosine plus a share of the way to the best window's.
    ``either``: the top k by first window's cosine and the top k by the mean of first and best windows'
    cosines, each normalised by its own distribution; a chunk of both keeps the better part
    (``dense_part``, which ``fuse`` adds as it is), best first: up to 2k chunks."""
    from ragplugins.windows import WindowIndex

    windows = index_cache.cache.get(store, "ragplugins.windows", lambda: WindowIndex.build(store))
    if not windows.complete or not windows.ids:
        # None: an embedder whose windows are unknown (not sentence-transformers) or an index written before
        # window scoring, as documented; some: a mix worth a warning.
        _note_once(store, logging.WARNING if windows.ids else logging.INFO,
                   "ragplugins: %s chunks of this index have window vectors: the dense leg reads first windows "
                   "only; re-index (`ragplugins index PATH --reindex`) to score windows",
                   "some" if windows.ids else "no")
        return dense_search(store, query, query_embedding, k, filters)
    if scoring == "blend":
        scores = windows.scores(query_embedding)
        out = stored_winners(store, _ranked(scores), windows.ids, windows.locators, k, filters, passing=passing)
        return [annotate(nws, dense_cosine=_dense_cosine(store, query_embedding, nws), dense_window_score=nws.score,
                         dense_rank=rank) for rank, nws in enumerate(out, start=1)]
    first, best = windows.first_and_best(query_embedding)
    read: dict[str, Any] = {}  # the two rankings share most of their winners: each node is read once
    by_first, by_windows = (stored_winners(store, _ranked(s), windows.ids, windows.locators, k, filters, read, passing)
                            for s in (first, (first + best) / 2))
    part: dict[str, float] = {}
    chosen: dict[str, NodeWithScore] = {}
    for hits in (by_first, by_windows):
        for nws, value in zip(hits, _distribution_normalised([h.score or 0.0 for h in hits])):
            chosen.setdefault(nws.node.node_id, nws)
            part[nws.node.node_id] = max(part.get(nws.node.node_id, 0.0), value)
    first_rank = {nws.node.node_id: rank for rank, nws in enumerate(by_first)}
    order = sorted(part, key=lambda i: (-part[i], first_rank.get(i, len(first_rank)), i))
    return [annotate(NodeWithScore(node=chosen[i].node, score=part[i]),
                     dense_cosine=_dense_cosine(store, query_embedding, chosen[i]), dense_part=part[i],
                     dense_rank=rank) for rank, i in enumerate(order, start=1)]


def _ranked(scores: np.ndarray) -> Iterator[tuple[int, float]]:
    return ((int(i), float(scores[i])) for i in np.argsort(-scores, kind="stable"))


def stored_winners(store: StoreAdapter, ranked: Iterator[tuple[int, float]], ids: Sequence[str],
                   locators: Sequence[Any], k: int, filters: MetadataFilters | None,
                   read: dict[str, Any] | None = None, passing: PassingIds | None = None) -> list[NodeWithScore]:
    """The first ``k`` of ``ranked`` ((position, score), best first; ``ids[position]`` the chunk) that
    are stored and pass ``filters``, read from the store a growing block at a time: an in-memory leg
    keeps no nodes, and with filters the same in-memory semantics as the core's check of plugin results
    (nested groups included) apply until k pass. ``read``: nodes already read (by id, None for an id the
    store no longer has), added to as this reads more. ``passing``: when the first block leaves fewer than k,
    the ids the store says pass ``filters`` (``StoreAdapter.ids_passing``), so only those are read after it: a
    filter that keeps one tenant's chunks of a large index would otherwise read chunks a block at a time until
    k of theirs turn up, while a filter most chunks pass is done after one block without asking."""
    read = {} if read is None else read
    out: list[NodeWithScore] = []
    block, blocks = k, 0
    while len(out) < k:
        if blocks and passing is not None:   # a block was read and left fewer than k
            allowed, passing = passing(), None
            if allowed is not None:
                ranked = (hit for hit in ranked if ids[hit[0]] in allowed)
        blocks += 1
        hits = list(itertools.islice(ranked, block))
        if not hits:
            break
        missing = [i for i, _ in hits if ids[i] not in read]
        if missing:
            found = {n.node_id: n for n in store.get_nodes([ids[i] for i in missing], [locators[i] for i in missing])}
            read.update({ids[i]: found.get(ids[i]) for i in missing})
        for i, score in hits:
            node = read[ids[i]]
            if node is not None and query_inputs.passes(node, filters) and len(out) < k:
                out.append(NodeWithScore(node=node, score=score))
        block = min(block * 4, 4096)
    return out


_noted: set[str] = set()


def _note_once(store: StoreAdapter, level: int, message: str, *args: Any) -> None:
    if store.index_id not in _noted:
        _noted.add(store.index_id)
        logger.log(level, message, *args)


def invalidate(index: VectorStoreIndex) -> None:
    """Tell the sparse leg and every plugin's index-derived values that ``index`` changed."""
    index_cache.cache.invalidate(index.vector_store)


def sparse_search(store: StoreAdapter, query: str, k: int, filters: MetadataFilters | None = None,
                  passing: PassingIds | None = None) -> list[NodeWithScore]:
    """BM25 top-k: the store's own keyword search where its adapter offers one, else ragplugins.sparse
    over every stored chunk, filtered like the dense leg."""
    native = store.sparse_search(query, k, filters)
    if native is not None:
        return native
    from ragplugins import sparse

    model = index_cache.cache.get(store, "ragplugins.sparse", lambda: sparse.build(store))
    return stored_winners(store, model.ranked(query), model.ids, model.locators, k, filters, passing=passing)


def _leg_scores(results: list[NodeWithScore], leg: str) -> list[float]:
    if leg == "dense_rank":  # the window score where the dense leg scored windows, else the cosine
        return [annotation(n).get("dense_window_score", annotation(n).get("dense_cosine", n.score)) or 0.0
                for n in results]
    return [n.score or 0.0 for n in results]


def _distribution_normalised(scores: list[float]) -> list[float]:
    """Scores mapped by their list's mean +- 3 standard deviations to about [0, 1] (LlamaIndex's
    ``dist_based_score``): a leg whose best results stand out weighs more for this query."""
    if not scores:
        return []
    mean = sum(scores) / len(scores)
    sd = (sum((x - mean) ** 2 for x in scores) / len(scores)) ** 0.5
    if sd == 0:
        return [0.5] * len(scores)
    return [(x - (mean - 3 * sd)) / (6 * sd) for x in scores]


def fuse(dense: list[NodeWithScore], sparse: list[NodeWithScore], k: int | None = None,
         method: str = "distribution", rrf_k: int = RRF_K) -> list[NodeWithScore]:
    """The two legs' lists as one, best first (the first ``k``, or all). ``distribution``: each leg's scores
    normalised by their own distribution and summed (a node missing from a leg adds 0 for it); ``rrf``:
    reciprocal-rank fusion with 1-based ranks. Ties keep the dense order."""
    fused: dict[str, dict[str, Any]] = {}
    for leg, results in (("dense_rank", dense), ("sparse_rank", sparse)):
        if method == "rrf":
            parts = [1.0 / (rrf_k + rank) for rank in range(1, len(results) + 1)]
        elif leg == "dense_rank" and results and all("dense_part" in annotation(n) for n in results):
            parts = [annotation(n)["dense_part"] for n in results]  # already normalised (window scoring "either")
        else:
            parts = _distribution_normalised(_leg_scores(results, leg))
        for rank, (nws, part) in enumerate(zip(results, parts), start=1):
            entry = fused.setdefault(nws.node.node_id, {"nws": nws, "score": 0.0})
            entry["score"] += part
            entry[leg] = rank
    ordered = sorted(fused.values(), key=lambda e: (-e["score"], e.get("dense_rank", 10**9),
                                                     e.get("sparse_rank", 10**9), e["nws"].node.node_id))
    out = []
    for e in ordered[:k]:
        nws = annotate(e["nws"], dense_rank=e.get("dense_rank"), sparse_rank=e.get("sparse_rank"))
        out.append(NodeWithScore(node=nws.node, score=e["score"]))
    return out


class HybridRetriever(BaseRetriever):
    """The core first stage: dense, or dense + BM25 fused (``fuse``)."""

    def __init__(self, store: StoreAdapter, embed_query: EmbedFn, top_k: int = 20,
                 mode: str = "hybrid", filters: MetadataFilters | None = None, fusion_depth: int = 50,
                 fusion: str = "distribution", window_scoring: str = "off", merge_adjacent: int = 1, **kwargs: Any):
        super().__init__(**kwargs)
        self.store, self.embed_query, self.top_k, self.mode, self.filters = store, embed_query, top_k, mode, filters
        self.fusion_depth, self.fusion, self.window_scoring = fusion_depth, fusion, window_scoring
        self.merge_adjacent = merge_adjacent

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins.HybridRetriever"

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        query = query_bundle.query_str
        embedding = query_bundle.embedding
        if embedding is None:
            # As LlamaIndex's VectorIndexRetriever does: the dense leg embeds custom_embedding_strs when a
            # caller gives them (HyDE, or a retry that adds keywords but keeps the question's meaning),
            # averaged when there are several; the BM25 leg always reads query_str.
            vectors = [self.embed_query(text) for text in query_bundle.embedding_strs]
            embedding = vectors[0] if len(vectors) == 1 else [sum(v) / len(vectors) for v in zip(*vectors)]
        # Joining neighbours frees places, which the candidates below top_k fill, and a neighbour ranked below the
        # k-th place joins its place (ragplugins.passages): the candidates do not depend on top_k (up to the depth).
        # Dense alone without passages takes the first top_k as they come.
        merging = self.mode != "dense" or self.merge_adjacent > 1
        depth = max(self.top_k, self.fusion_depth) if merging else self.top_k
        passing = None
        if self.filters is not None:
            self.store.check_filters(self.filters)
            passing = functools.cache(functools.partial(self.store.ids_passing, self.filters))
        with trace.timed("dense"):
            if self.window_scoring == "off":
                dense = dense_search(self.store, query, embedding, depth, self.filters)
            else:
                dense = window_dense_search(self.store, query, embedding, depth, self.filters, self.window_scoring,
                                            passing)
        if self.mode == "dense":
            return for_callers(merge_adjacent(dense, self.top_k, self.merge_adjacent))
        with trace.timed("sparse"):
            try:
                sparse = sparse_search(self.store, query, depth, self.filters, passing)
            except Exception as exc:  # noqa: BLE001 - degrade to dense, loudly
                logger.warning("ragplugins: BM25 leg failed, dense only for this query: %s", exc)
                sparse = []
        fused = fuse(dense, sparse, method=self.fusion)
        return for_callers(merge_adjacent(fused, self.top_k, self.merge_adjacent))


def for_callers(results: list[NodeWithScore]) -> list[NodeWithScore]:
    """Results as a host or a plugin receives them: without the core's own data on each chunk (every window's
    vector, about 6 KB a chunk, which the dense leg reads from its own index), which a host that serializes
    its sources would otherwise carry into every response. The nodes are this query's copies
    (``nodes.annotate``), so the stored chunks keep it."""
    for nws in results:
        for key in CORE_ONLY_KEYS.intersection(nws.node.metadata):
            del nws.node.metadata[key]
    return results


def document_filters(doc_ids: Sequence[str], filters: MetadataFilters | None = None) -> MetadataFilters:
    """Restrict to ``doc_ids`` while keeping the caller's own ``filters``."""
    by_doc = MetadataFilter(key="doc_id", value=list(doc_ids), operator=FilterOperator.IN)
    if filters is None or not filters.filters:
        return MetadataFilters(filters=[by_doc])
    if (filters.condition or FilterCondition.AND) == FilterCondition.AND:
        # Flat when it can be: some stores (SimpleVectorStore) refuse nested filters.
        return MetadataFilters(filters=[by_doc, *filters.filters], condition=FilterCondition.AND)
    return MetadataFilters(filters=[by_doc, filters], condition=FilterCondition.AND)


def search_within_documents(store: StoreAdapter, query: str, query_embedding: Sequence[float],
                            doc_ids: Sequence[str], k: int, filters: MetadataFilters | None = None,
                            window_scoring: str = "off") -> list[NodeWithScore] | None:
    """Dense search inside ``doc_ids``, scored as the first stage's dense leg scores (``window_scoring``: a chunk's
    later windows count, so a passage past the embedder's first 256 word pieces is found by what it says).
    ``None``: the search failed; ``[]``: it matched nothing."""
    if not doc_ids or k < 1:
        return []
    within = document_filters(doc_ids, filters)
    try:
        if window_scoring == "off":
            return for_callers(dense_search(store, query, query_embedding, k, within))
        passing = functools.cache(functools.partial(store.ids_passing, within))
        return for_callers(window_dense_search(store, query, query_embedding, k, within, window_scoring, passing)[:k])
    except Exception as exc:  # noqa: BLE001 - callers must see "failed" apart from "empty"
        logger.warning("ragplugins: search within documents %s failed: %s", list(doc_ids)[:5], exc)
        return None
