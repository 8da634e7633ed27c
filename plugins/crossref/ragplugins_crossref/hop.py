"""Query time: a node postprocessor that follows references from the top candidates.

For the documents referenced by the top ``trigger_depth`` candidates and not
already among the candidates, it searches each document against the query
(the core's document-filtered dense search, keeping the caller's filters) and
hops only where that document's best chunk clears a gate set by the current
candidates: its cosine with the query must be at least ``gate`` times the best
candidate's. A referenced document rarely looks as much like the question as
the chunk that points at it (else it would have been retrieved), so the gate
asks for "nearly as relevant as the best match", not "more relevant than the
weakest candidate"; the ratio needs no tuning per embedder because cosine has a
natural zero. Targets are ranked by two signals fused by reciprocal rank: how
well the query matches the sentence that makes the reference ("retention
bonuses are recommended per Schedule 3"; a question about a pointer usually
paraphrases it) and how well it matches the target's best chunk. The best
targets go first, up to ``max_hops``; each adds up to ``chunks_per_hop``
chunks that clear the same gate. Which document to follow is decided by the query, not by
the order references appear in the text (localGPT's 0-of-11 trap).
"""

from __future__ import annotations

import re
import weakref
from typing import Any, Literal

from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle

from ragplugins import nodes as rnodes
from ragplugins import trace
from ragplugins.store import cosine
from ragplugins_crossref.resolve import REFS_KEY, load_refs

PLUGIN = "crossref"
RRF_K = 60
_CONTEXT_CHARS = 200
# Reference sentences recur across queries (hub chunks are retrieved again and again), and the
# postprocessor is rebuilt per query: embeddings are cached per context (index + embedder).
# Keyed by id(): contexts are unhashable dataclasses; an entry dies with its context.
_EMBEDDED: dict[int, dict[str, list[float]]] = {}
_CACHE_LIMIT = 20_000


def embed_sentences(ctx: Any, sentences: list[str]) -> dict[str, list[float]]:
    key = id(ctx)
    if key not in _EMBEDDED:
        _EMBEDDED[key] = {}
        weakref.finalize(ctx, _EMBEDDED.pop, key, None)
    cache = _EMBEDDED[key]
    missing = sorted({s for s in sentences if s not in cache})
    if missing:
        if len(cache) + len(missing) > _CACHE_LIMIT:
            cache.clear()
        cache.update(zip(missing, ctx.embed_model.get_text_embedding_batch(missing)))
    return {s: cache[s] for s in sentences}


def reference_context(text: str, surface: str) -> str:
    """The sentence or line of ``text`` that makes the reference written as ``surface``."""
    words = surface.split()
    match = re.search(r"\s+".join(map(re.escape, words)), text) if words else None
    if match is None:
        return surface
    start, end = match.start(), match.end()
    left = max(text.rfind("\n", 0, start), text.rfind(". ", 0, start), start - _CONTEXT_CHARS)
    rights = [i for i in (text.find("\n", end), text.find(". ", end)) if i >= 0]
    right = min(rights + [end + _CONTEXT_CHARS])
    return " ".join(text[left + 1:right].split())


def hopped(nws: NodeWithScore) -> bool:
    return PLUGIN in rnodes.tags(nws)


class CrossrefHop(BaseNodePostprocessor):
    """Adds chunks of documents that the top candidates reference, when they are relevant to the query."""

    max_hops: int = Field(1, description="Documents to hop to, at most.")
    chunks_per_hop: int = Field(3, description="Chunks pulled from each document, at most.")
    trigger_depth: int = Field(3, description="References in this many top candidates count.")
    gate: float = Field(0.8, description="A hopped chunk's cosine must reach gate x the best candidate's.")
    placement: Literal["append", "after_referrer"] = Field("append", description="Where hopped chunks go.")
    _ctx: Any = PrivateAttr(default=None)

    def __init__(self, ctx: Any = None, **data: Any):
        super().__init__(**data)
        self._ctx = ctx

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins_crossref.CrossrefHop"

    def _cosines(self, query_embedding: list[float], candidates: list[NodeWithScore]) -> list[float]:
        out = []
        for nws in candidates:
            value = cosine(query_embedding, nws.node.embedding)
            if value is None:
                value = rnodes.dense_cosine(nws)
            if value is not None:
                out.append(value)
        return out

    def _postprocess_nodes(self, nodes: list[NodeWithScore],
                           query_bundle: QueryBundle | None = None) -> list[NodeWithScore]:
        if query_bundle is None or not nodes or self.max_hops < 1 or self._ctx is None:
            return nodes
        query = query_bundle.query_str
        tr = trace.current()
        filters = tr.filters if tr is not None else None
        represented = {n.node.ref_doc_id for n in nodes}
        # Referenced documents not yet among the candidates, with the first reference that named each.
        targets: dict[str, dict[str, Any]] = {}
        for rank, nws in enumerate([n for n in nodes if not hopped(n)][: self.trigger_depth]):
            for ref in load_refs(nws.node.metadata.get(REFS_KEY)):
                target = ref.get("target")
                if not target or target in represented:
                    continue
                sentence = reference_context(nws.node.get_content(), ref.get("text") or "")
                if target in targets:
                    if sentence not in targets[target]["contexts"]:
                        targets[target]["contexts"].append(sentence)
                    continue
                targets[target] = {"target": target, "ref": ref.get("text") or ref.get("ref"),
                                   "kind": ref.get("kind"), "section_chunk": ref.get("chunk"),
                                   "from_chunk": nws.node.node_id, "from_doc": nws.node.ref_doc_id,
                                   "from_rank": rank + 1, "contexts": [sentence]}
        if not targets:
            trace.record(PLUGIN, "hop", fired=False, considered=[], chosen=[], chunks_added=0)
            return nodes
        query_embedding = self._ctx.embed_query(query)
        cosines = self._cosines(query_embedding, nodes)
        if not cosines:
            trace.record(PLUGIN, "hop", fired=False, considered=list(targets.values()), chosen=[], chunks_added=0,
                         reason="no dense scores on the candidates")
            return nodes
        threshold = self.gate * max(cosines)
        found: dict[str, list[tuple[float, NodeWithScore]]] = {}
        sentence_vectors = embed_sentences(self._ctx, [c for info in targets.values() for c in info["contexts"]])
        for target, info in targets.items():
            results = self._ctx.search_within_documents(query, [target], self.chunks_per_hop, filters)
            if results is None:
                info["error"] = "search failed"
                continue
            scored = sorted(((cosine(query_embedding, r.node.embedding) or rnodes.dense_cosine(r) or 0.0, r)
                             for r in results), key=lambda x: -x[0])
            info["best"] = round(scored[0][0], 4) if scored else None
            info["context"] = round(max(cosine(query_embedding, sentence_vectors[c]) or 0.0
                                        for c in info["contexts"]), 4)
            found[target] = [(s, r) for s, r in scored if s >= threshold]
        chosen = self._rank(targets, found)[: self.max_hops]
        added: list[NodeWithScore] = []
        by_referrer: dict[str, list[NodeWithScore]] = {}
        for target in chosen:
            info = targets[target]
            # A section reference names the chunk it means: that chunk goes first when it qualifies.
            picks = sorted(found[target], key=lambda x: (x[1].node.node_id != info["section_chunk"], -x[0]))
            for score, nws in picks[: self.chunks_per_hop]:
                tagged = rnodes.tag(nws, PLUGIN, via_crossref=True, ref=info["ref"], kind=info["kind"],
                                    from_chunk=info["from_chunk"], from_doc=info["from_doc"], target=target,
                                    cosine=round(score, 4))
                tagged.score = score
                added.append(tagged)
                by_referrer.setdefault(info["from_chunk"], []).append(tagged)
        out = self._place(nodes, added, by_referrer)
        trace.record(PLUGIN, "hop", fired=bool(added), considered=list(targets.values()),
                     threshold=round(threshold, 4), chosen=chosen, chunks_added=len(added),
                     added=[n.node.node_id for n in added], placement=self.placement)
        return out

    @staticmethod
    def _rank(targets: dict[str, dict[str, Any]], found: dict[str, list]) -> list[str]:
        """Targets that cleared the gate, by reciprocal-rank fusion of the reference-sentence
        match and the target's best-chunk match (scale-free; ties keep the best chunk first)."""
        passing = [t for t in found if found[t]]
        by_context = sorted(passing, key=lambda t: -targets[t]["context"])
        by_chunk = sorted(passing, key=lambda t: -found[t][0][0])
        fused = {t: 1 / (RRF_K + 1 + by_context.index(t)) + 1 / (RRF_K + 1 + by_chunk.index(t)) for t in passing}
        for t in passing:
            targets[t]["fused"] = round(fused[t], 6)
        return sorted(passing, key=lambda t: (-fused[t], by_chunk.index(t)))

    def _place(self, nodes: list[NodeWithScore], added: list[NodeWithScore],
               by_referrer: dict[str, list[NodeWithScore]]) -> list[NodeWithScore]:
        if self.placement == "append":
            return [*nodes, *added]
        out: list[NodeWithScore] = []
        for nws in nodes:
            out.append(nws)
            out.extend(by_referrer.get(nws.node.node_id, []))
        return out
