"""Query time: a retriever wrapper that steers the first stage towards the documents whose overviews match.

It runs inside the first stage, so every query that passes through it is scored against the
overviews, including a retry's reformulated one. Nothing is ever dropped by ``boost`` and
``adaptive``; ``restrict`` keeps the unrestricted candidates whenever it cannot do better
safely. Each decision is recorded in the query trace under ``overview``.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle

from ragplugins import api
from ragplugins.api import RRF_K, not_prepared
from ragplugins_overview import gate, sidecar
from ragplugins_overview.config import OverviewConfig
from ragplugins_overview.scoring import DocumentRanking

PLUGIN = "overview"


def _ids(results: list[NodeWithScore]) -> list[str]:
    return [n.node.node_id for n in results]


class OverviewRetriever(BaseRetriever):
    """Wraps any ``BaseRetriever``: scores the query against the document overviews and boosts
    (reciprocal-rank fusion, k = 60) or restricts the candidates to the documents that match."""

    def __init__(self, inner: BaseRetriever, ctx: api.RagContext, config: OverviewConfig | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.inner, self.ctx, self.config = inner, ctx, config or OverviewConfig()

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins_overview.OverviewRetriever"

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        candidates = self.inner.retrieve(query_bundle)
        return _on_the_scale_of(candidates, self.steer(query_bundle.query_str, candidates))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        candidates = await self.inner.aretrieve(query_bundle)
        return _on_the_scale_of(candidates, self.steer(query_bundle.query_str, candidates))

    # -- the document ranking -------------------------------------------
    def rank(self, query: str, candidates: Sequence[NodeWithScore] = ()) -> tuple[sidecar.Overviews | None,
                                                                             DocumentRanking | None, str]:
        """The overviews and this query's ranking of the documents it may search (every document, or
        those the host's filter allows: ``ctx.allowed_documents``), or None and why not."""
        overviews, problem = sidecar.usable(self.ctx)
        if overviews is None:
            if problem == sidecar.MISSING:
                return None, None, not_prepared("overview")
            # the overviews beside it are another index's
            if problem is not None and problem.startswith(sidecar.OTHER_INDEX):
                return None, None, f"{not_prepared('overview')}; {problem}"
            return None, None, f"no usable overviews: {problem}"
        if len(overviews) == 0:
            return None, None, "no document has an overview yet"
        differ = overviews.writer_changes(self.config.writer_settings())
        if differ:
            # Still this index's overviews, so still sound to score against; only their wording is outdated.
            changed = ", ".join(f"{k} = {old!r} -> {new!r}" for k, (old, new) in differ.items())
            location = sidecar.location_for(self.ctx)
            sidecar.cache.notice_once(location, f"the overviews in {location.label} were written with other "
                                                f"settings ({changed}); they are used as they are until the next "
                                                f"write to the index or `ragplugins overview rebuild` rewrites them")
        allowed = self.ctx.allowed_documents(candidates)
        among = None if allowed is None else np.array(
            [p for p, doc in enumerate(overviews.doc_ids) if doc in allowed], dtype=np.int64)
        if among is not None and len(among) == 0:
            return None, None, "no document this query may search has an overview"
        try:
            ranking = overviews.scorer.rank(self.ctx.embed_query(query), self.config.top_documents + 1, among)
        except ValueError as exc:  # a query embedding of another size: never score it
            sidecar.cache.warn_once(sidecar.location_for(self.ctx), str(exc))
            return None, None, f"no usable overviews: {exc}"
        return overviews, ranking, ""

    def asks_for(self, query: str, picked: list[str], candidates: Sequence[NodeWithScore]) -> tuple[bool, str]:
        """Whether the sentence that asks wants the ``picked`` documents too (gate condition 3), and why not."""
        ask = gate.asking_sentence(query)
        if ask is None:
            return True, ""
        overviews, ranking, _ = self.rank(ask, candidates)
        if overviews is None or ranking is None or not ranking.positions:
            return True, ""
        wanted = overviews.doc_ids[ranking.positions[0]]
        if wanted in picked:
            return True, ""
        return False, (f"the question's asking sentence wants another document ({wanted}): the rest of the "
                       "question retells the picked one")

    def select(self, ranking: DocumentRanking, doc_ids: list[str], candidates: list[NodeWithScore],
               query: str = "") -> tuple[list[tuple[int, float, float]], str, float | None]:
        """The documents to steer towards, why, and the margin (largest gap, robust SDs) it was based on."""
        cfg = self.config
        if cfg.mode == "boost":
            chosen = ranking.top(cfg.top_documents)
            return chosen, f"mode 'boost' always fuses the {len(chosen)} best documents", None
        min_gap = gate.noise_gap(ranking.n_documents) if cfg.min_gap is None else cfg.min_gap
        chosen, gap = ranking.decisive(cfg.outlier_z, min_gap, cfg.top_documents)
        if chosen:
            margin = f"z >= {cfg.outlier_z}, gap {gap:.2f} >= {min_gap:.2f}"
            if not cfg.require_runner_up:
                return chosen, f"{len(chosen)} document(s) stand out by a clear margin: {margin}", gap
            picked = [doc_ids[p] for p, _, _ in chosen]
            open_, why = gate.leaves_open(picked, candidates)
            if open_:
                asks, why_not = self.asks_for(query, picked, candidates)
                if asks:
                    return chosen, f"{len(chosen)} document(s) stand out by a clear margin ({margin}); {why}", gap
                why = why_not
            return [], f"{len(chosen)} document(s) stand out by a clear margin ({margin}), but {why}", gap
        # Opt-in (runner_up_depth > 1): the first stage holds the overviews' best document among its
        # runners-up, just below another document's chunk; the overview, which judges whole documents,
        # decides the first place between them. Off by default: it misleads on questions that describe
        # one document to ask about another (the described one ranks first by its overview).
        best = ranking.top(1)
        lead = [n.node.ref_doc_id for n in candidates[: cfg.runner_up_depth]]
        top_doc = doc_ids[best[0][0]] if best else None
        if len(lead) > 1 and lead[0] != top_doc and top_doc in lead[1:]:
            return best, (f"the overviews' best document holds first-stage rank {lead.index(top_doc) + 1}, "
                          "below another document's chunk"), gap
        if ranking.spread <= 0:
            return [], "no document stands out: the overview scores have no spread", gap
        # The rule's own numbers: every document above the largest gap must stand out, so the weakest
        # of them is what fails (the best one may pass on its own).
        above, _ = ranking.decisive(float("-inf"), float("-inf"), cfg.top_documents)
        weakest_z = above[-1][2] if above else 0.0
        z_rule = f"z >= {cfg.outlier_z} (weakest {weakest_z:.2f})"
        gap_rule = f"a gap >= {min_gap:.2f} (gap {gap:.2f})"
        # Only what fails is what they "need"; a rule they meet is said as met, not listed beside it.
        if weakest_z >= cfg.outlier_z and gap < min_gap:
            needs = f"{gap_rule}; {z_rule} is met"
        elif weakest_z < cfg.outlier_z and gap >= min_gap:
            needs = f"{z_rule}; {gap_rule} is met"
        else:
            needs = f"{z_rule} and {gap_rule}"
        return [], f"no clear margin: the {len(above)} document(s) above the largest gap need {needs}", gap

    # -- steering ---------------------------------------------------------
    def steer(self, query: str, candidates: list[NodeWithScore]) -> list[NodeWithScore]:
        start = time.perf_counter()
        overviews, ranking, why_not = self.rank(query, candidates)
        scoring_ms = (time.perf_counter() - start) * 1000
        if ranking is None:
            api.record_decision(PLUGIN, "select", before=candidates, after=candidates, reason=why_not, query=query,
                                mode=self.config.mode, applied=False)
            return candidates
        assert overviews is not None  # a ranking is made from overviews
        chosen, reason, gap = self.select(ranking, overviews.doc_ids, candidates, query)
        documents = [{"doc_id": overviews.doc_ids[p], "score": round(s, 4), "z": round(z, 2)} for p, s, z in chosen]
        best = ranking.top(1)[0]
        select: dict[str, Any] = dict(query=query, mode=self.config.mode, documents=documents, applied=bool(chosen),
                      best={"doc_id": overviews.doc_ids[best[0]], "score": round(best[1], 4), "z": round(best[2], 2)},
                      margin=None if gap is None else round(gap, 3), median=round(ranking.median, 4),
                      spread=round(ranking.spread, 4), n_documents=ranking.n_documents, exact=ranking.exact,
                      scoring_ms=round(scoring_ms, 3))
        if not chosen:
            api.record_decision(PLUGIN, "select", before=candidates, after=candidates, reason=reason,
                                numbers={"best_z": select["best"]["z"], "margin": select["margin"]}, **select)
            return candidates
        # Selected: the step that follows decides whether the list changes, and records it.
        api.record(PLUGIN, "select", reason=reason, **select)
        if self.config.mode == "restrict":
            return self._restrict(query, candidates, documents)
        if self.config.mode == "adaptive":
            return self._add(query, candidates, documents)
        return self._boost(candidates, documents)

    def _boost(self, candidates: list[NodeWithScore], documents: list[dict]) -> list[NodeWithScore]:
        doc_rank = {d["doc_id"]: (r, d) for r, d in enumerate(documents)}
        fused = []
        for p, nws in enumerate(candidates):
            score = 1.0 / (RRF_K + p + 1)
            hit = doc_rank.get(nws.node.ref_doc_id)
            if hit is not None:
                score += 1.0 / (RRF_K + hit[0] + 1)
                nws = api.tag(nws, PLUGIN, doc_rank=hit[0] + 1, doc_score=hit[1]["score"])
            fused.append((score, p, nws))
        fused.sort(key=lambda t: (-t[0], t[1]))
        out = [NodeWithScore(node=n.node, score=s) for s, _, n in fused]
        boosted = sum(1 for _, _, n in fused if PLUGIN in api.tags(n))
        api.record_decision(PLUGIN, "boost", before=candidates, after=out,
                            reason=f"fused the candidates with the ranking of {len(documents)} selected document(s)",
                            numbers={"boosted": boosted}, applied=True)
        return out

    def _search_inside(self, query: str, selected: list[str], k: int) -> tuple[list[NodeWithScore] | None, float]:
        """The dense search inside the selected documents (under the host's filters), and its time in ms."""
        start = time.perf_counter()
        found = self.ctx.search_within_documents(query, selected, k)
        return found, round((time.perf_counter() - start) * 1000, 3)

    @staticmethod
    def _fuse(candidates: list[NodeWithScore], restricted: list[NodeWithScore], k: int) -> list[dict[str, Any]]:
        """Both lists as RRF legs: chunks that are good in both lead, and the best unrestricted candidates
        keep their place against the restricted ones of the same rank."""
        # A chunk the search inside finds within a first-stage passage counts for that passage.
        passage_of = {m: nws.node.node_id for nws in candidates for m in api.passage_members(nws)}
        fused: dict[str, dict[str, Any]] = {}
        for leg, results in (("unrestricted", candidates), ("restricted", restricted)):
            for rank, nws in enumerate(results, start=1):
                key = passage_of.get(nws.node.node_id, nws.node.node_id)
                entry = fused.setdefault(key, {"nws": nws, "score": 0.0, "ranks": {}})
                if leg in entry["ranks"]:  # a passage's second chunk: the passage is ranked already
                    continue
                entry["score"] += 1.0 / (RRF_K + rank)
                entry["ranks"][leg] = rank
        return sorted(fused.values(), key=lambda e: (-e["score"], e["ranks"].get("unrestricted", k + 1),
                                                     e["ranks"].get("restricted", k + 1)))

    @staticmethod
    def _first_stage_order_within(entries: list[dict[str, Any]], selected: set[str]) -> list[dict[str, Any]]:
        """The overviews choose documents, not chunks: the selected documents' candidates keep the places the
        merge gave those documents, in the first stage's order (both its legs ranked them; the search inside
        is dense only, and by itself it once pushed a page's answer chunk from rank 3 to 11)."""
        slots = [i for i, e in enumerate(entries)
                 if "unrestricted" in e["ranks"] and e["nws"].node.ref_doc_id in selected]
        ordered = sorted((entries[i] for i in slots), key=lambda e: e["ranks"]["unrestricted"])
        out = list(entries)
        for slot, entry in zip(slots, ordered):
            out[slot] = {**entry, "score": entries[slot]["score"]}
        return out

    @staticmethod
    def _settle_the_lead(entries: list[dict[str, Any]], candidates: list[NodeWithScore], selected: set[str],
                         window: int) -> list[dict[str, Any]]:
        """The overviews settle which document leads, the contest the gate saw; they know nothing of the other
        documents' chunks. So inside the top ``window`` the selected documents take the first place and keep
        the other places they held, filled in the merge's order (their best chunks, a chunk the search inside
        found among them); every other document's candidate keeps its order there, the first one moved down one
        place. The rest follows in the merge's order. (The merge alone once filled the top 8 with one page and
        pushed the answer, another page's rank-4 chunk, out of the top 10.)"""
        top = candidates[:window]
        held = [i for i, n in enumerate(top) if n.node.ref_doc_id in selected]
        slots = {0, *held[1:]}
        mine = [e for e in entries if e["nws"].node.ref_doc_id in selected]
        by_id = {e["nws"].node.node_id: e for e in entries}
        theirs = [by_id[n.node.node_id] for n in top if n.node.ref_doc_id not in selected and n.node.node_id in by_id]
        head: list[dict[str, Any]] = []
        for i in range(min(window, len(entries))):
            source = mine if (i in slots and mine) or not theirs else theirs
            if not source:
                break
            head.append(source.pop(0))
        placed = {id(e) for e in head}
        return head + [e for e in entries if id(e) not in placed]

    @staticmethod
    def _as_results(entries: list[dict[str, Any]], added_by: str) -> list[NodeWithScore]:
        out = []
        for e in entries:
            nws = e["nws"]
            if "unrestricted" not in e["ranks"]:
                nws = api.tag(nws, PLUGIN, added_by=added_by, restricted_rank=e["ranks"]["restricted"])
            out.append(NodeWithScore(node=nws.node, score=e["score"]))
        return out

    def _add(self, query: str, candidates: list[NodeWithScore], documents: list[dict]) -> list[NodeWithScore]:
        """``adaptive``: the selected documents' best chunks join the candidates by RRF, so chunks the first
        stage ranked too low (or missed) can come up; a new chunk is kept only when it earns a place in the
        first ``k``, and no candidate is ever dropped (those it displaces follow, in their fused order)."""
        selected = [d["doc_id"] for d in documents]
        k = len(candidates) or self.ctx.top_k
        restricted, search_ms = self._search_inside(query, selected, k)
        if not restricted:
            # The documents can still lead through the rank boost; a failed search only loses the additions.
            reason = "the search inside the selected documents failed" if restricted is None else \
                "nothing matched inside the selected documents"
            if restricted is None:
                warnings.warn("ragplugins overview: the search inside the selected documents failed; this query "
                              "gets the document boost without their other chunks", stacklevel=2)
            api.record_decision(PLUGIN, "add", before=candidates, after=candidates, query=query,
                                reason=reason + "; boosted the candidates instead", applied=False,
                                documents=selected, search_ms=search_ms)
            return self._boost(candidates, documents)
        fused = self._fuse(candidates, restricted, k)
        kept = self._first_stage_order_within(fused[:k] + [e for e in fused[k:] if "unrestricted" in e["ranks"]],
                                              set(selected))
        kept = self._settle_the_lead(kept, candidates, set(selected), self.config.window)
        out = self._as_results(kept, "adaptive")
        before, after = _ids(candidates), _ids(out)
        added = [i for i in after if i not in set(before)]
        # Said as it happened: "merged" over a list that only had two chunks swapped misled FRRouting's user.
        reason = (f"merged {len(added)} of the selected documents' best chunks into the candidates" if added else
                  "moved the selected documents' chunks among the candidates (none added)" if after != before else
                  "the selected documents' best chunks were candidates already, in the places the merge gives them")
        api.record_decision(PLUGIN, "add", before=candidates, after=out, query=query, reason=reason,
                            numbers={"chunks_added": len(added)}, applied=True, documents=selected,
                            search_ms=search_ms, added=added)
        return out

    def _restrict(self, query: str, candidates: list[NodeWithScore], documents: list[dict]) -> list[NodeWithScore]:
        selected = [d["doc_id"] for d in documents]
        k = len(candidates) or self.ctx.top_k
        restricted, search_ms = self._search_inside(query, selected, k)

        def keep(reason: str, **data: Any) -> list[NodeWithScore]:
            api.record_decision(PLUGIN, "restrict", before=candidates, after=candidates, query=query, reason=reason,
                                applied=False, documents=selected, search_ms=search_ms, **data)
            return candidates

        if restricted is None:
            warnings.warn("ragplugins overview: the search inside the selected documents failed; this query keeps "
                          "the unrestricted candidates", stacklevel=2)
            return keep("the search inside the selected documents failed; kept the unrestricted candidates")
        if not restricted:
            return keep("nothing matched inside the selected documents; kept the unrestricted candidates")
        chosen = set(selected)
        embedding = self.ctx.embed_query(query)

        def best(results: list[NodeWithScore]) -> float | None:
            return max((c for c in (api.query_cosine(n, embedding) for n in results) if c is not None), default=None)

        inside = best(restricted)
        outside = best([n for n in candidates if n.node.ref_doc_id not in chosen])
        if inside is not None and outside is not None and outside > inside:
            return keep("a chunk outside the selected documents matches the query better; kept the unrestricted "
                        "candidates", inside_best=round(inside, 4), outside_best=round(outside, 4))
        out = self._as_results(self._fuse(candidates, restricted, k)[:k], "restrict")
        before, after = _ids(candidates), _ids(out)
        api.record_decision(PLUGIN, "restrict", before=candidates, after=out, query=query,
                            reason="merged the restricted and unrestricted results", applied=True,
                            documents=selected, search_ms=search_ms,
                            added=[i for i in after if i not in set(before)],
                            dropped=[i for i in before if i not in set(after)],
                            inside_best=None if inside is None else round(inside, 4),
                            outside_best=None if outside is None else round(outside, 4))
        return out


def _on_the_scale_of(candidates: list[NodeWithScore], steered: list[NodeWithScore]) -> list[NodeWithScore]:
    """The steered list with the first stage's scores, in its own order (the i-th chunk gets the i-th best
    score): the merges rank by reciprocal rank (about 0.03), and a host's score cutoff or a later step that
    reads scores should meet the scale the first stage gives every other query."""
    if steered is candidates:
        return steered
    scores = sorted((n.score for n in candidates if n.score is not None), reverse=True)
    if not scores:
        return steered
    for i, nws in enumerate(steered):
        nws.score = scores[min(i, len(scores) - 1)]
    return steered

