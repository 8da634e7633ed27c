"""Fast what-ifs for the first stage: variants scored in memory on one index's chunks (dev split).

Reads the chunks (text, vector) of the ragplugins index that bench_firststage.py built for a corpus
with the given core settings, and scores fusion rules, leg weights and embedding windows without
touching the store, so a variant costs seconds (windows: once embedded, see below). The `current`
arm reproduces the product path's number (same BM25 leg, same fusion). What wins here is built into
the core and confirmed through the product path with bench_firststage.py.

    python bench/research_firststage.py --lever fusion --corpus mixed docs acq acq+docs git postgres python
    python bench/research_firststage.py --lever weights --corpus ...
    python bench/research_firststage.py --lever windows --corpus mixed docs acq acq+docs git
    python bench/research_firststage.py --lever diagnose --corpus mixed docs acq acq+docs git postgres python
    python bench/research_firststage.py --lever impute --corpus ... --extra-dev bench/goldsets/public_dev2 --changes
    python bench/research_firststage.py --lever diagnose --corpus docs --extra-dev bench/goldsets/public_dev2 \
        --split public_dev2    # the extra dev rows alone
    python bench/research_firststage.py --lever structure --corpus ... --extra-dev bench/goldsets/public_dev2 \
        --changes --show python_q06
    python bench/research_firststage.py --lever align --corpus ... --extra-dev bench/goldsets/public_dev2 --changes
    python bench/research_firststage.py --lever context --corpus ... --extra-dev bench/goldsets/public_dev2 --changes
    python bench/research_firststage.py --lever prf --corpus ... --extra-dev bench/goldsets/public_dev2 \
        bench/goldsets/debian_dev3 --changes --out bench/results/firststage/prf_dev.json
    python bench/research_firststage.py --lever headers --corpus ... --split dev --extra-dev \
        bench/goldsets/public_dev2 bench/goldsets/debian_dev3 --changes    # -> headers_dev.txt
    python bench/research_firststage.py --lever doc --corpus ... --split dev --extra-dev \
        bench/goldsets/public_dev2 bench/goldsets/debian_dev3 --changes    # -> doc_leg_dev.txt
    python bench/research_firststage.py --lever merge --corpus ... --split dev --extra-dev \
        bench/goldsets/public_dev2 bench/goldsets/debian_dev3 --changes    # -> merge_lever_dev.txt

The levers are scored on the index built with ``window_scoring = "off"`` (first-window vectors; the window
arms embed the windows here), so ``current`` stays the first stage before window scoring.

Levers:
- fusion: distribution sum (the default), max, reciprocal rank, "complete" (a chunk missing from a
  leg's top 50 gets its real score in that leg instead of 0), each also with at most 2 or 3 chunks
  of one document in the top 10 (does one document crowd the answer out?); each leg ranking 30 or 20
  instead of 50 (the peer's QueryFusionRetriever fuses its legs' top 20); and no chunk ranked below
  2x or 3x its best leg rank (what interleaving the two legs would guarantee a leg's best hits).
- impute: what a chunk missing from one leg's top 50 gets from that leg (today 0 after normalising):
  the leg's lowest listed score (a bound: its score is at most that; BM25 listing fewer than 50 chunks
  means the rest score 0), for both legs, the dense leg only, the BM25 leg only, or the dense leg only
  for chunks longer than the embedder reads; its real score; or each leg as z over the whole index.
- diagnose: no variant; per dev question, the peer (LlamaIndex's own pipeline, 512/50 and 1024/200,
  as bench_firststage.py builds it) against ours: R@10, the rank of the first relevant chunk in each
  leg and fused, the distinct documents and mean characters per chunk in each top 10, and, for the
  questions the peer has in its top 10 and we do not, at which word piece of each pipeline's
  relevant chunk the expected string starts (MiniLM reads the first 256).
- structure: window scores that spare a chunk's first window: (first + best window) / 2; the first window
  alone where the chunk starts with a heading line (Markdown, AsciiDoc, an underlined title), else
  (first + best) / 2; a chunk's dense part the larger of its normalised scores in the first-window list and
  the (first + best) / 2 list (never below today's); (first + best) / 2 only for chunks BM25 lists; and
  first + (best - first) / 4 (what ``window_scoring = "blend"`` ships). ``--show ID``: that question's top 12
  under each arm, with each chunk's first and best window and which window scored.
- align: where a chunk's later windows start, each arm scored as the shipped ``window_scoring = "either"``
  (dense part: the better of the chunk's places in the first-window and (first + best window) / 2 rankings):
  the shipped fixed windows (each starts where the embedder stopped reading the previous one); those plus a
  window at every section start inside the chunk (``ragplugins.splitting.section_starts`` and plain-text outline
  lines: a line after a blank line whose next line is indented deeper, such as a manual page's
  ``DESCRIPTION`` or a definition term); windows as many as the fixed ones, each starting at the last section
  start inside the stretch the previous window read; and the fixed windows plus those section-aligned ones.
- context: the shipped fixed windows against later windows embedded with the headings in force where they
  start in front (``ragplugins.headings``; the opt-in ``window_headings``, rejected on test). The arms
  measured before the product version ("every heading-like line", "no plain-text outline lines", "no code
  lines", each read chunk by chunk) are in bench/results/firststage/NOTES.md.
- prf: pseudo-relevance feedback, a second pass over the same index. The baseline is the shipped first stage
  (window scoring "either" over the shipped fixed windows, as ``context``'s "fixed (shipped)" arm); its top k
  fused chunks are the feedback. Dense Rocchio: q' = unit(q + beta * mean of those chunks' first-window unit
  vectors), the dense leg (both window rankings) re-run with q', fused with the unchanged BM25 leg. Sparse
  RM3-style: the top n terms of those chunks by (sum over them of term frequency / chunk length) x BM25 idf,
  tokens as ``ragplugins.sparse`` makes them (document name in front, as indexed); the BM25 leg scores
  sum_t w_t BM25(t, chunk) with the original query's tokens weighted lambda / |q| each and the expansion terms
  (1 - lambda) x their normalised weight (a term in both gets both), fused with the unchanged dense leg. Both:
  the two at once from the same feedback. Settings from the literature, two each, not fitted. ``--changes``
  compares with the baseline and tags each question's kind; a second table holds the paraphrases alone.
- merge: neighbouring hits as one passage (adopted as ``merge_adjacent``): walking the shipped stage's fused
  list, a chunk next to one already placed from the same document joins that place while it holds fewer than 2,
  3 or any number of chunks; the walk ends when the k-th place is taken. Scored on the passages' text.
- weights: leg weights from signals available at query time: the share of the query's BM25 tokens
  the index knows, how far each leg's best score stands out of its top 50 (z of the first), and
  the fixed 1.5 either way for reference.
- windows: MiniLM reads 256 word pieces of a ~550-piece chunk. Each chunk's later windows (the text
  from where the embedder stopped, with the same metadata header) are embedded (cached by text in
  bench/.cache/embeddings.sqlite: slow the first time), and the dense leg scores a chunk by its
  first window (today), the mean of its windows, its best window, its first window plus the mean
  of the others (the lead weighted as much as the rest), the mean of its first and best windows, or one
  vector halfway between its first window's and the mean of its windows.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_firststage import CACHE, CachedEmbedding, K, corpus_with_extra, in_split, ragplugins_nodes  # noqa: E402

from ragplugins import sparse  # noqa: E402
from ragplugins.eval import metrics  # noqa: E402
from ragplugins.headings import outline_starts  # noqa: E402
from ragplugins.search import _distribution_normalised  # noqa: E402
from ragplugins.windows import embedder_reader, window_texts  # noqa: E402

DEPTH = 50
# The index the levers are scored on: the first stage as it was before window scoring (its chunks and
# first-window vectors; the window arms embed the windows themselves).
FIRST_WINDOW = {"window_scoring": "off"}

# A heading line in the markup the readers give: Markdown ATX (``# Title``), AsciiDoc one-line titles
# (``== Title``), or a title over an underline of one repeated punctuation character at least about as long
# (reStructuredText, AsciiDoc two-line titles, a manual page's ``NAME`` / ``----``), with or without an overline.
_ATX = re.compile(r"(#{1,6}|={1,5})[ \t]+\S")
_RULE = re.compile(r"([=\-~^\"'`#*+:._])\1{2,}[ \t]*")


def starts_with_heading(text: str) -> bool:
    """Whether a chunk's content begins with a heading line (it opens a section)."""
    lines = text.lstrip("\r\n").splitlines()[:3]
    if not lines:
        return False
    first = lines[0].strip()
    if _ATX.match(first):
        return True
    if _RULE.fullmatch(first) and len(lines) == 3 and lines[1].strip() and _RULE.fullmatch(lines[2].strip()):
        return True
    return (bool(first) and len(lines) > 1 and _RULE.fullmatch(lines[1].strip()) is not None
            and len(lines[1].strip()) >= max(3, len(first) - 2))


def unit(v: np.ndarray) -> np.ndarray:
    return v / (np.linalg.norm(v, axis=-1, keepdims=True) + 1e-9)


def fuse(legs: list[tuple[np.ndarray, float]], how: str = "sum", depth: int = DEPTH,
         floor_for: dict[int, np.ndarray | None] | None = None) -> list[int]:
    """Chunk positions, best first: each leg's top ``depth`` (BM25: score > 0) fused like ragplugins.search.fuse.
    ``floor_for``: leg position -> the chunks (a boolean mask, None: every chunk) that, missing from that leg's
    top, get that leg's floor (as ``how = "floor"``) instead of 0."""
    orders = [[int(i) for i in np.argsort(-scores, kind="stable")[:depth] if n == 0 or scores[i] > 0]
              for n, (scores, _) in enumerate(legs)]
    dense_rank = {i: r for r, i in enumerate(orders[0])}
    candidates = set().union(*orders)
    fused: dict[int, float] = defaultdict(float)
    for leg_no, ((scores, weight), order) in enumerate(zip(legs, orders)):
        if how == "rrf":
            part = {i: 1.0 / (61 + r) for r, i in enumerate(order)}
        else:
            part = dict(zip(order, _distribution_normalised([float(scores[i]) for i in order])))
        if how == "complete" and order:  # a candidate missing from this leg's top: its real score, same scale
            mean, sd = scores[order].mean(), scores[order].std()
            part = {i: part.get(i, (scores[i] - (mean - 3 * sd)) / (6 * sd) if sd > 0 else 0.0) for i in candidates}
        if (how == "floor" or (floor_for and leg_no in floor_for)) and order:
            # missing from this leg's top: the bound on its score, on the same scale
            mean, sd = scores[order].mean(), scores[order].std()
            # The leg listed ``depth`` chunks: the missing one scores at most the last; BM25 listed fewer: it scores 0.
            bound = float(scores[order[-1]]) if len(order) == depth else 0.0
            mask = floor_for.get(leg_no) if floor_for and leg_no in floor_for else None
            part = {i: part.get(i, (bound - (mean - 3 * sd)) / (6 * sd) if sd > 0 and (mask is None or mask[i])
                                else 0.0) for i in candidates}
        if how == "index-z":  # each leg's scores as z over every chunk of the index, not over its own top
            mean, sd = scores.mean(), scores.std()
            part = {i: (float(scores[i]) - mean) / sd if sd > 0 else 0.0 for i in order}
        for i, value in part.items():
            fused[i] = max(fused[i], weight * value) if how == "max" else fused[i] + weight * value
    return sorted(fused, key=lambda i: (-fused[i], dense_rank.get(i, 10**9)))


def doc_cap(order: list[int], docs: list[str], cap: int, k: int = 10) -> list[int]:
    seen: dict[str, int] = defaultdict(int)
    head, rest = [], []
    for i in order:
        if len(head) < k and seen[docs[i]] < cap:
            head.append(i)
            seen[docs[i]] += 1
        else:
            rest.append(i)
    return head + rest


def leg_orders(legs: list[np.ndarray], depth: int = DEPTH) -> list[list[int]]:
    return [[int(i) for i in np.argsort(-scores, kind="stable")[:depth] if n == 0 or scores[i] > 0]
            for n, scores in enumerate(legs)]


def rank_bound(order: list[int], legs: list[list[int]], factor: int) -> list[int]:
    """``order`` with no chunk placed below ``factor`` x its best rank in a leg's top K (earliest deadline
    first; otherwise the fused order)."""
    deadline: dict[int, int] = {}
    for leg in legs:
        for r, i in enumerate(leg[:K], 1):
            deadline[i] = min(deadline.get(i, 10**9), factor * r)
    out: list[int] = []
    placed: set[int] = set()
    rest = iter(order)
    while len(out) < K:
        due = [i for i in deadline if i not in placed and deadline[i] <= len(out) + 1]
        pick = min(due, key=lambda i: deadline[i]) if due else next((i for i in rest if i not in placed), None)
        if pick is None:
            break
        placed.add(pick)
        out.append(pick)
    return out


def standout(scores: np.ndarray) -> float:
    top = np.sort(scores)[::-1][:DEPTH]
    return float((top[0] - top.mean()) / top.std()) if len(top) > 1 and top.std() > 0 else 0.0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", nargs="+", required=True)
    p.add_argument("--lever", required=True,
                   choices=["fusion", "impute", "weights", "windows", "structure", "align", "context", "diagnose",
                            "prf", "headers", "doc", "merge"])
    p.add_argument("--split", default="dev", help="dev, test, all, or an --extra-dev folder's name (its rows alone)")
    p.add_argument("--extra-dev", type=Path, metavar="FOLDER", nargs="+",
                   help="add these folders' rows to the dev split (bench_firststage.py's --extra-dev)")
    p.add_argument("--show", action="append", default=[], metavar="ID",
                   help="structure: print question ID's top 12 under each arm (ranks, legs, which window scored)")
    p.add_argument("--changes", action="store_true",
                   help="also list, per arm and corpus, the questions whose R@10 differs from the current arm's")
    p.add_argument("--out", type=Path, help="prf: write per-question nDCG@10 / R@10 of every arm as JSON here")
    args = p.parse_args(argv)

    from ragplugins.embeddings import load_embed_model

    inner = load_embed_model()
    embed = CachedEmbedding(inner, CACHE / "embeddings.sqlite")
    table: dict[str, dict[str, tuple[float, float]]] = defaultdict(dict)
    para_table: dict[str, dict[str, tuple[float, float]]] = defaultdict(dict)
    per_question: dict[str, dict[str, dict]] = defaultdict(dict)
    if args.lever == "diagnose":
        for name in args.corpus:
            diagnose(name, embed, inner._model.tokenizer, args.split, args.extra_dev)
        return 0
    for name in args.corpus:
        paths, gold = corpus_with_extra(name, args.extra_dev)
        rows = [r for r in gold if in_split(r, args.split)]
        nodes = ragplugins_nodes(name, paths, embed, FIRST_WINDOW)
        texts = [n.get_content() for n in nodes]
        docs = [str(n.ref_doc_id) for n in nodes]
        vectors = unit(np.asarray([n.embedding for n in nodes], dtype=np.float32))
        bm25 = sparse.SparseIndex.from_nodes(nodes)
        windows = None
        if args.lever == "impute":  # chunks whose embedded text is longer than MiniLM reads (256 word pieces)
            from llama_index.core.schema import MetadataMode

            tok = inner._model.tokenizer
            unread = np.asarray([len(tok(n.get_content(MetadataMode.EMBED), add_special_tokens=False)["input_ids"])
                                 > inner._model.max_seq_length - 2 for n in nodes])
            print(f"{name}: {unread.mean():.0%} of {len(nodes)} chunks longer than the embedder reads", flush=True)
        if args.lever == "align":
            aligned = align_windows(inner, nodes, vectors, embed)
        if args.lever == "context":
            contexted = context_windows(inner, nodes, vectors, embed)
        if args.lever == "prf":
            feedback = PRF(inner, nodes, vectors, embed, bm25)
        if args.lever == "headers":
            headered = chunk_headers(inner, nodes, vectors, embed)
        if args.lever == "doc":
            doc_leg = DocumentLeg(inner, nodes, vectors, embed)
        if args.lever == "merge":
            merger = AdjacentMerge(inner, nodes, vectors, embed)
        if args.lever in ("windows", "structure"):
            reader = embedder_reader(inner)
            per_chunk = [[v] + [np.asarray(w, dtype=np.float32) for w in
                                embed.get_text_embedding_batch(window_texts(*reader, n))] if window_texts(*reader, n)
                         else [v] for n, v in zip(nodes, vectors)]
            owner, every = stacked_windows(per_chunk)
            mean = unit(np.stack([unit(np.stack(w)).mean(0) for w in per_chunk]))
            # The chunk's lead (its first window) weighted as much as the rest of it together.
            lead = unit(np.stack([unit(w[0]) + (unit(unit(np.stack(w[1:])).mean(0)) if len(w) > 1 else unit(w[0]))
                                  for w in per_chunk]))
            # One vector per chunk halfway between today's (its first window) and embed_windows' (the mean).
            half = unit(np.stack([unit(w[0]) + unit(unit(np.stack(w)).mean(0)) for w in per_chunk]))
            windows = (owner, every, mean, lead, half)
            headed = np.asarray([starts_with_heading(t) for t in texts])
            if args.lever == "structure":
                print(f"{name}: {headed.sum()} of {len(nodes)} chunks start with a heading line", flush=True)
        scored: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for row in rows:
            # Called within this iteration only, so the row it reads is the current one.
            def score(order: list[int]) -> tuple[float, float]:
                m = metrics.list_metrics([texts[i] for i in order[:K]], row.expected, row.match)  # noqa: B023
                return m["ndcg@10"], m["recall@10"]

            q = unit(np.asarray(embed.get_query_embedding(row.query), dtype=np.float32))
            dense = vectors @ q
            bm = np.zeros(len(nodes))
            for i, s in bm25.search(row.query, len(nodes)):
                bm[i] = s
            scored["current (distribution sum)"].append(score(fuse([(dense, 1.0), (bm, 1.0)])))
            if args.lever == "fusion":
                for how in ("max", "rrf", "complete"):
                    scored[how].append(score(fuse([(dense, 1.0), (bm, 1.0)], how)))
                for how in ("sum", "rrf"):
                    for cap in (2, 3):
                        scored[f"{how}, <= {cap} per document in the top 10"].append(
                            score(doc_cap(fuse([(dense, 1.0), (bm, 1.0)], how), docs, cap)))
                for how in ("sum", "rrf"):
                    for depth in (30, 20):
                        scored[f"{how}, each leg ranking {depth}"].append(
                            score(fuse([(dense, 1.0), (bm, 1.0)], how, depth)))
                for factor in (2, 3):
                    scored[f"sum, no chunk below {factor} x its best leg rank"].append(
                        score(rank_bound(fuse([(dense, 1.0), (bm, 1.0)]), leg_orders([dense, bm]), factor)))
            elif args.lever == "impute":
                for how, arm in (("floor", "missing from a leg's top 50: that leg's lowest listed score"),
                                 ("complete", "missing from a leg's top 50: its real score"),
                                 ("index-z", "each leg as z over the whole index, summed")):
                    scored[arm].append(score(fuse([(dense, 1.0), (bm, 1.0)], how)))
                for legs_floor, arm in (({0: None}, "missing from the dense top 50 only: dense floor"),
                                        ({1: None}, "missing from the BM25 top 50 only: BM25 floor"),
                                        ({0: unread}, "missing from the dense top 50 and longer than the "
                                                      "embedder reads: dense floor")):
                    scored[arm].append(score(fuse([(dense, 1.0), (bm, 1.0)], floor_for=legs_floor)))
            elif args.lever == "weights":
                tokens = bm25.tokenize(row.query)
                known = sum(t in bm25.vocab for t in tokens) / max(1, len(tokens))
                d_out, s_out = standout(dense), standout(bm)
                share = d_out / (d_out + s_out) if d_out + s_out > 0 else 0.5
                for arm, (wd, ws) in {"BM25 x share of known query tokens": (1.0, known),
                                      "each leg x how far its best stands out": (share, 1 - share),
                                      "BM25 x 1.5": (1.0, 1.5), "dense x 1.5": (1.5, 1.0)}.items():
                    scored[arm].append(score(fuse([(dense, wd), (bm, ws)])))
            elif args.lever == "align":
                for arm, (owner, every) in aligned.items():
                    best = best_window(owner, every @ q, len(nodes))
                    scored[f"either, {arm}"].append(score(fuse_max_dense([dense, (dense + best) / 2], bm)))
            elif args.lever == "prf":
                for arm, order in feedback.arms(row.query, q, bm).items():
                    scored[arm].append(score(order))
            elif args.lever == "doc":
                for arm, order in doc_leg.arms(row.query, q, bm).items():
                    scored[arm].append(score(order))
            elif args.lever == "merge":
                for arm, passages in merger.arms(q, bm).items():
                    m = metrics.list_metrics(passages[:K], row.expected, row.match)
                    scored[arm].append((m["ndcg@10"], m["recall@10"]))
            elif args.lever == "headers":
                for arm, (firsts, owner, every, index) in headered.items():
                    bm_arm = bm
                    if index is not None:
                        bm_arm = np.zeros(len(nodes))
                        for i, sc in index.search(row.query, len(nodes)):
                            bm_arm[i] = sc
                    first = firsts @ q
                    best = best_window(owner, every @ q, len(nodes))
                    scored[arm].append(score(fuse_max_dense([first, (first + best) / 2], bm_arm)))
            elif args.lever == "context":
                for arm, (firsts, owner, every) in contexted.items():
                    first = firsts @ q
                    best = best_window(owner, every @ q, len(nodes))
                    scored[f"either, {arm}"].append(score(fuse_max_dense([first, (first + best) / 2], bm)))
            elif args.lever == "structure":
                owner, every = windows[0], windows[1]
                per_window = every @ q
                best = best_window(owner, per_window, len(nodes))
                half = (dense + best) / 2
                arms = structure_arms(dense, half, bm, headed)
                for arm, order in arms.items():
                    if arm != "current (distribution sum)":  # scored above
                        scored[arm].append(score(order))
                if row.id in args.show:
                    names = [str(n.metadata.get("file_name", n.ref_doc_id)) for n in nodes]
                    show(row, arms, texts, names, dense, best, bm, headed, owner, per_window)
            else:
                owner, every, mean, lead, half = windows
                best = best_window(owner, every @ q, len(nodes))
                for arm, d in (("windows: mean vector", mean @ q), ("windows: best window", best),
                               ("windows: lead + mean of the rest", lead @ q),
                               ("windows: (first + best window) / 2", (dense + best) / 2),
                               ("windows: one vector, first window + mean vector", half @ q)):
                    scored[f"{arm}, dense alone"].append(score([int(i) for i in np.argsort(-d, kind="stable")]))
                    scored[f"{arm}, fused"].append(score(fuse([(d, 1.0), (bm, 1.0)])))
                scored["first window (current), dense alone"].append(
                    score([int(i) for i in np.argsort(-dense, kind="stable")]))
        base_arm = {"prf": PRF_BASE, "headers": "either (shipped)", "doc": "either (shipped)",
                     "merge": "either (shipped)"}.get(
            args.lever, "current (distribution sum)")
        if args.lever == "prf":
            para = [n for n, row in enumerate(rows) if row.dimensions.get("kind") == "paraphrase"]
            print(f"{name}: {len(rows)} questions, {len(para)} paraphrases", flush=True)
            for arm, values in scored.items():
                if arm == "current (distribution sum)":
                    continue
                sub = [values[n] for n in para]
                para_table[arm][name] = ((float(np.mean([v[0] for v in sub])), float(np.mean([v[1] for v in sub])))
                                         if sub else (float("nan"), float("nan")))
                per_question[name][arm] = {row.id: {"kind": row.dimensions.get("kind"), "ndcg@10": v[0],
                                                    "recall@10": v[1]} for row, v in zip(rows, values)}
        for arm, values in scored.items():
            table[arm][name] = (float(np.mean([v[0] for v in values])), float(np.mean([v[1] for v in values])))
            if args.changes and arm not in ("current (distribution sum)", base_arm):
                now = scored[base_arm]
                moved = [f"{'+' if v[1] > c[1] else '-'}{row.id}"
                         + (f" ({row.dimensions.get('kind', '-')})" if args.lever == "prf" else "")
                         for row, v, c in zip(rows, values, now) if v[1] != c[1]]
                print(f"{name}: {arm}: R@10 changed on {', '.join(moved) or 'none'}", flush=True)
                if args.lever in ("structure", "context", "headers", "doc", "merge"):
                    shifted = [f"{row.id} {c[0]:.2f}->{v[0]:.2f}" for row, v, c in zip(rows, values, now)
                               if abs(v[0] - c[0]) > 1e-9]
                    print(f"{name}: {arm}: nDCG@10 changed on {', '.join(shifted) or 'none'}", flush=True)
    print(f"\n{args.lever}, {args.split} split, nDCG@10 / R@10\n")
    print("| arm | " + " | ".join(args.corpus) + " |")
    print("|---|" + "---|" * len(args.corpus))
    for arm, per in table.items():
        print(f"| {arm} | " + " | ".join(f"{per[n][0]:.3f} / {per[n][1]:.3f}" for n in args.corpus) + " |")
    if args.lever == "prf":
        print(f"\nprf, {args.split} split, paraphrase questions only, nDCG@10 / R@10\n")
        print("| arm | " + " | ".join(args.corpus) + " |")
        print("|---|" + "---|" * len(args.corpus))
        for arm, per in para_table.items():
            print(f"| {arm} | " + " | ".join(f"{per[n][0]:.3f} / {per[n][1]:.3f}" for n in args.corpus) + " |")
        if args.out:
            import json

            args.out.write_text(json.dumps({"split": args.split, "extra_dev": [str(f) for f in args.extra_dev or []],
                                            "settings": PRF_SETTINGS, "per_question": per_question}, indent=1))
    return 0


def structure_arms(dense: np.ndarray, half: np.ndarray, bm: np.ndarray, headed: np.ndarray) -> dict[str, list[int]]:
    """The fused orders of the structure lever's arms (``half``: (first + best window) / 2 per chunk)."""
    by_heading = np.where(headed, dense, half)
    blend = dense + (half - dense) / 2
    blend_order = fuse([(blend, 1.0), (bm, 1.0)])
    return {
        "current (distribution sum)": fuse([(dense, 1.0), (bm, 1.0)]),
        "(first + best window) / 2": fuse([(half, 1.0), (bm, 1.0)]),
        "first window where the chunk starts with a heading, else (first + best) / 2": fuse([(by_heading, 1.0),
                                                                                               (bm, 1.0)]),
        "dense part = max(first-window list's, (first + best) / 2 list's), each normalised on its own top 50":
            fuse_max_dense([dense, half], bm),
        "the same with the heading rule for the window list": fuse_max_dense([dense, by_heading], bm),
        # Less of the later windows' evidence: first + w (best - first), w = 0 today, 0.5 the arm above.
        "first + (best - first) / 4": fuse([(dense + (half - dense) / 2, 1.0), (bm, 1.0)]),
        # The leg that read the whole chunk (BM25) must list it before its later windows count.
        "(first + best) / 2 only for chunks in the BM25 top 50, else first window":
            fuse([(np.where(in_top(bm, DEPTH), half, dense), 1.0), (bm, 1.0)]),
        # On top of the shipped blend: a leg's best hits kept near the top, or a chunk missing from the dense
        # top 50 given the dense leg's bound instead of 0 (BM25 top hits the dense leg cannot see).
        "blend, no chunk below 2 x its best leg rank": rank_bound(blend_order, leg_orders([blend, bm]), 2),
        "blend, no chunk below 3 x its best leg rank": rank_bound(blend_order, leg_orders([blend, bm]), 3),
        "blend, missing from the dense top 50: dense floor": fuse([(blend, 1.0), (bm, 1.0)], floor_for={0: None}),
        "blend, reciprocal rank": fuse([(blend, 1.0), (bm, 1.0)], "rrf"),
        "dense part = max(first-window list's, blend list's)": fuse_max_dense([dense, blend], bm),
        "dense part = max(blend list's, (first + best) / 2 list's)": fuse_max_dense([blend, half], bm),
        "dense part = max(first-window, blend, (first + best) / 2 lists')": fuse_max_dense([dense, blend, half], bm),
    }


PRF_BASE = "either, fixed (shipped)"
# Two settings per kind of feedback, from the literature's usual ranges (not fitted here): Rocchio with beta
# 0.5 over the top 3 and 1.0 over the top 5; RM3 with 10 terms from the top 3 and original-query weight 0.7,
# and 20 terms from the top 5 with 0.5 (Anserini's default weight).
PRF_SETTINGS = {"rocchio": [{"k": 3, "beta": 0.5}, {"k": 5, "beta": 1.0}],
                "rm3": [{"k": 3, "terms": 10, "lam": 0.7}, {"k": 5, "terms": 20, "lam": 0.5}]}


class PRF:
    """Pseudo-relevance feedback over one corpus's chunks (the ``prf`` lever): the shipped first stage, its
    top k as feedback, and the second pass of each arm."""

    def __init__(self, inner, nodes, vectors, embed, bm25) -> None:
        from collections import Counter

        self.vectors, self.bm25, self.chunks = vectors, bm25, len(nodes)
        reader = embedder_reader(inner)
        per_chunk = [window_texts(*reader, n) for n in nodes]
        flat = [t for texts in per_chunk for t in texts]
        print(f"  fixed (shipped): {len(flat)} later windows for {len(nodes)} chunks", flush=True)
        embedded = iter(np.asarray(embed.get_text_embedding_batch(flat), dtype=np.float32))
        self.owner, self.every = stacked_windows([[v] + [next(embedded) for _ in texts]
                                                  for v, texts in zip(vectors, per_chunk)])
        # Each chunk's tokens as the BM25 leg indexed them (document name in front).
        self.tf: list[Counter] = []
        self.length: list[int] = []
        df: Counter = Counter()
        for n in nodes:
            tokens = bm25.tokenize(f"{sparse.document_name(n.metadata or {}, n.ref_doc_id)}\n{n.get_content()}")
            counts = Counter(tokens)
            self.tf.append(counts)
            self.length.append(max(1, len(tokens)))
            df.update(counts.keys())
        total = len(nodes)
        # BM25's (Lucene's) idf, as bm25s's default method computes it.
        self.idf = {t: float(np.log(1 + (total - d + 0.5) / (d + 0.5))) for t, d in df.items()}
        self.term_scores: dict[int, np.ndarray] = {}

    def either(self, q: np.ndarray, bm: np.ndarray) -> list[int]:
        """The shipped window scoring "either" with dense query vector ``q`` and BM25 scores ``bm``."""
        first = self.vectors @ q
        best = best_window(self.owner, self.every @ q, self.chunks)
        return fuse_max_dense([first, (first + best) / 2], bm)

    def rocchio(self, q: np.ndarray, top: list[int], beta: float) -> np.ndarray:
        return unit(q + beta * self.vectors[top].mean(0))

    def term(self, tid: int) -> np.ndarray:
        if tid not in self.term_scores:
            self.term_scores[tid] = np.asarray(self.bm25.model.get_scores([int(tid)]), dtype=float)
        return self.term_scores[tid]

    def rm3(self, query: str, top: list[int], terms: int, lam: float) -> np.ndarray:
        """BM25 scores of the original query's tokens (lam / |q| each) plus the top ``terms`` feedback terms
        ((1 - lam) x their share of the feedback weight)."""
        vocab = self.bm25.vocab
        original = [vocab[t] for t in self.bm25.tokenize(query) if t in vocab]
        weight: dict[int, float] = defaultdict(float)
        for tid in original:
            weight[tid] += lam / len(original)
        mass: dict[str, float] = defaultdict(float)
        for i in top:
            for t, c in self.tf[i].items():
                mass[t] += c / self.length[i]
        ranked = sorted(((m * self.idf[t], t) for t, m in mass.items() if t in vocab), reverse=True)[:terms]
        total = sum(w for w, _ in ranked)
        for w, t in ranked:
            weight[vocab[t]] += (1 - lam) * w / total if total > 0 else 0.0
        out = np.zeros(self.chunks)
        for tid, w in weight.items():
            out += w * self.term(tid)
        return out

    def arms(self, query: str, q: np.ndarray, bm: np.ndarray) -> dict[str, list[int]]:
        base = self.either(q, bm)
        out = {PRF_BASE: base}
        self.term_scores = {}  # per query (a corpus's vocabulary times its chunks would not fit)
        dense_q = {}
        for s in PRF_SETTINGS["rocchio"]:
            name = f"Rocchio k={s['k']} beta={s['beta']}"
            dense_q[name] = self.rocchio(q, base[: s["k"]], s["beta"])
            out[f"dense {name}"] = self.either(dense_q[name], bm)
        sparse_bm = {}
        for s in PRF_SETTINGS["rm3"]:
            name = f"RM3 k={s['k']} terms={s['terms']} lambda={s['lam']}"
            sparse_bm[name] = self.rm3(query, base[: s["k"]], s["terms"], s["lam"])
            out[f"sparse {name}"] = self.either(q, sparse_bm[name])
        for (d_name, d_q), (s_name, s_bm) in zip(dense_q.items(), sparse_bm.items()):
            out[f"both: {d_name} + {s_name}"] = self.either(d_q, s_bm)
        return out


def aligned_starts(tok, header: str, content: str, limit: int = 254) -> list[int]:
    """Where a chunk's later windows start when each starts at the last section start inside the stretch the
    previous window read (else where it stopped reading), so windows stay about as many as the fixed ones."""
    full = header + content
    offsets = tok(full, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
    if len(offsets) <= limit:
        return []
    room = limit - len(tok(header, add_special_tokens=False)["input_ids"])
    piece_at = {start: i for i, (start, _) in enumerate(offsets)}
    sections = [len(header) + s for s in outline_starts(content)]
    out, start, stop = [], len(header), limit  # stop: the first piece the current window did not read
    while stop < len(offsets):
        at = offsets[stop][0]
        inside = [s for s in sections if start < s <= at]
        nxt = inside[-1] if inside else at
        piece = piece_at.get(nxt)
        if piece is None:  # a section start inside a piece's whitespace: the next piece at or after it
            piece = next((i for i, (b, _) in enumerate(offsets) if b >= nxt), len(offsets))
            nxt = offsets[piece][0] if piece < len(offsets) else nxt
        if nxt <= start:
            nxt, piece = at, stop
        out.append(nxt - len(header))
        start, stop = nxt, piece + room
    return out


def align_windows(inner, nodes, vectors, embed) -> dict:
    """Per arm, (owner, unit vectors) of every chunk's windows: the first window (its vector) and the later
    windows the arm opens (header + the chunk's text from that offset; the embedder reads its start)."""
    from llama_index.core.schema import MetadataMode

    tok, reader = inner._model.tokenizer, embedder_reader(inner)
    arms: dict[str, list[list[str]]] = {"fixed (shipped)": [], "fixed + section starts": [],
                                         "section-aligned (as many)": [], "fixed + section-aligned": []}
    for n in nodes:
        full, content = n.get_content(MetadataMode.EMBED), n.get_content()
        header = full[: len(full) - len(content)] if full.endswith(content) else ""
        fixed = window_texts(*reader, n)
        arms["fixed (shipped)"].append(fixed)
        arms["fixed + section starts"].append(fixed + [header + content[s:] for s in outline_starts(content)])
        aligned = [header + content[s:] for s in aligned_starts(tok, header, content)]
        arms["section-aligned (as many)"].append(aligned)
        arms["fixed + section-aligned"].append(fixed + [t for t in aligned if t not in fixed])
    out = {}
    for arm, per_chunk in arms.items():
        flat = [t for texts in per_chunk for t in texts]
        print(f"  {arm}: {len(flat)} later windows for {len(nodes)} chunks", flush=True)
        later = iter(np.asarray(embed.get_text_embedding_batch(flat), dtype=np.float32))
        out[arm] = stacked_windows([[v] + [next(later) for _ in texts] for v, texts in zip(vectors, per_chunk)])
    return out


def context_windows(inner, nodes, vectors, embed) -> dict:
    """Per arm, (first-window unit vectors, owner, unit vectors of every window): the windows as shipped, and
    the later windows with the headings in force where they start in front (``ragplugins.headings``, the
    opt-in ``window_headings``), as the product embeds them."""
    from ragplugins.headings import chunk_headings

    reader, found = embedder_reader(inner), chunk_headings(nodes)
    arms = {"fixed (shipped)": [window_texts(*reader, n) for n in nodes],
            "later windows with their headings": [window_texts(*reader, n, found[n.node_id]) for n in nodes]}
    out = {}
    for arm, per_chunk in arms.items():
        flat = [t for texts in per_chunk for t in texts]
        print(f"  {arm}: {len(flat)} later windows for {len(nodes)} chunks", flush=True)
        embedded = iter(np.asarray(embed.get_text_embedding_batch(flat), dtype=np.float32))
        owner, every = stacked_windows([[v] + [next(embedded) for _ in texts] for v, texts in zip(vectors, per_chunk)])
        out[arm] = (vectors, owner, every)
    return out


def embedded_windows(inner, nodes, vectors, embed) -> tuple[np.ndarray, np.ndarray]:
    """Every chunk's windows as the shipped stage scores them: (owner chunk of each window, unit vectors), the
    first window's vector the chunk's own, the later ones embedded here (cached by text)."""
    reader = embedder_reader(inner)
    per_chunk = [window_texts(*reader, n) for n in nodes]
    flat = [t for texts in per_chunk for t in texts]
    embedded = iter(np.asarray(embed.get_text_embedding_batch(flat), dtype=np.float32))
    return stacked_windows([[v] + [next(embedded) for _ in texts] for v, texts in zip(vectors, per_chunk)])


class DocumentLeg:
    """A document-level leg (the ``doc`` lever): BM25 over whole documents (their name and every chunk), its
    top 50 documents' scores normalised as the other legs' are, added with weight w to the fused score of each
    candidate chunk of theirs. Only the shipped stage's candidates are re-ordered; none is added."""

    WEIGHTS = (0.25, 0.5, 1.0)

    def __init__(self, inner, nodes, vectors, embed) -> None:
        self.vectors, self.chunks = vectors, len(nodes)
        self.owner, self.every = embedded_windows(inner, nodes, vectors, embed)
        by_doc: dict[str, list] = defaultdict(list)
        for n in nodes:
            by_doc[str(n.ref_doc_id)].append(n)
        self.doc_ids = list(by_doc)
        position = {d: i for i, d in enumerate(self.doc_ids)}
        self.doc_of = np.asarray([position[str(n.ref_doc_id)] for n in nodes])
        self.docs = sparse.SparseIndex(
            (d, sparse.document_name(members[0].metadata or {}, d),
             "\n".join(m.get_content() for m in sorted(members, key=lambda m: m.start_char_idx or 0)), None)
            for d, members in by_doc.items())

    def arms(self, query: str, q: np.ndarray, bm: np.ndarray) -> dict[str, list[int]]:
        first = self.vectors @ q
        best = best_window(self.owner, self.every @ q, self.chunks)
        fused = fused_scores([first, (first + best) / 2], bm)
        base = sorted(fused, key=lambda i: -fused[i])
        out = {"either (shipped)": fuse_max_dense([first, (first + best) / 2], bm)}
        hits = self.docs.search(query, DEPTH)
        doc_part = dict(zip((i for i, _ in hits), _distribution_normalised([s for _, s in hits])))
        rank = {i: r for r, i in enumerate(out["either (shipped)"])}
        for w in self.WEIGHTS:
            total = {i: v + w * doc_part.get(int(self.doc_of[i]), 0.0) for i, v in fused.items()}
            out[f"document leg, weight {w}"] = sorted(base, key=lambda i: (-total[i], rank[i]))
        return out


class AdjacentMerge:
    """Neighbouring hits as one passage (the ``merge`` lever): walking the shipped stage's fused list, a chunk
    next to one already listed from the same document (consecutive in the document) joins that passage instead
    of taking a place of its own, while the passage holds fewer than ``cap`` chunks (2: LlamaIndex's default
    1024-token chunk; None: any run), so the top 10 hold more distinct passages of the same text. What
    LlamaIndex's AutoMergingRetriever does with a hierarchy, done with a document's chunk order."""

    CAPS = (2, 3, None)

    def __init__(self, inner, nodes, vectors, embed) -> None:
        self.vectors, self.chunks = vectors, len(nodes)
        self.owner, self.every = embedded_windows(inner, nodes, vectors, embed)
        self.nodes = nodes
        self.texts = [n.get_content() for n in nodes]
        by_doc: dict[str, list[int]] = defaultdict(list)
        for i, n in enumerate(nodes):
            by_doc[str(n.ref_doc_id)].append(i)
        self.doc_of = [str(n.ref_doc_id) for n in nodes]
        self.place = {}
        for members in by_doc.values():
            for place, i in enumerate(sorted(members, key=lambda m: nodes[m].start_char_idx or 0)):
                self.place[i] = place

    def passage(self, members: list[int]) -> str:
        members = sorted(members, key=lambda i: self.place[i])
        text, end = self.texts[members[0]], self.nodes[members[0]].end_char_idx
        for i in members[1:]:
            start = self.nodes[i].start_char_idx
            cut = max(0, end - start) if end is not None and start is not None else 0
            text += ("" if cut else "\n") + self.texts[i][cut:]
            end = self.nodes[i].end_char_idx
        return text

    def merged(self, order: list[int], cap: int | None) -> list[str]:
        groups: list[list[int]] = []
        for i in order:
            if len(groups) >= K:
                break
            home = next((g for g in groups if self.doc_of[g[0]] == self.doc_of[i]
                         and (cap is None or len(g) < cap)
                         and any(abs(self.place[i] - self.place[j]) == 1 for j in g)), None)
            if home is None:
                groups.append([i])
            else:
                home.append(i)
        return [self.passage(g) for g in groups]

    def arms(self, q: np.ndarray, bm: np.ndarray) -> dict[str, list[str]]:
        first = self.vectors @ q
        best = best_window(self.owner, self.every @ q, self.chunks)
        order = fuse_max_dense([first, (first + best) / 2], bm)
        out = {"either (shipped)": [self.texts[i] for i in order[:K]]}
        for cap in self.CAPS:
            out[f"adjacent hits merged, up to {cap or 'any'} chunks"] = self.merged(order, cap)
        return out


def fused_scores(denses: list[np.ndarray], bm: np.ndarray) -> dict[int, float]:
    """``fuse_max_dense``'s fused score of every candidate chunk."""
    orders = [[int(i) for i in np.argsort(-d, kind="stable")[:DEPTH]] for d in denses]
    sparse_order = [int(i) for i in np.argsort(-bm, kind="stable")[:DEPTH] if bm[i] > 0]
    fused: dict[int, float] = defaultdict(float)
    for d, order in zip(denses, orders):
        for i, v in zip(order, _distribution_normalised([float(d[i]) for i in order])):
            fused[i] = max(fused[i], v)
    for i, v in zip(sparse_order, _distribution_normalised([float(bm[i]) for i in sparse_order])):
        fused[i] += v
    return dict(fused)


def chunk_headers(inner, nodes, vectors, embed) -> dict:
    """Per arm, (first-window unit vectors, owner, every window's unit vectors, BM25 index or None for the
    shipped one): a chunk's header, the headings in force where it starts ("Routine Vacuuming > Preventing
    Transaction ID Wraparound Failures"), put in front of it for the BM25 leg (after the document's name),
    for its first window's vector, or both; later windows as shipped."""
    from llama_index.core.schema import MetadataMode

    from ragplugins.headings import chunk_headings, heading_path

    reader, found = embedder_reader(inner), chunk_headings(nodes)
    paths = [heading_path(found[n.node_id], 0) for n in nodes]
    print(f"  {sum(bool(p) for p in paths)} of {len(nodes)} chunks start under a heading they do not hold", flush=True)
    per_chunk = [window_texts(*reader, n) for n in nodes]
    flat = [t for texts in per_chunk for t in texts]
    later = np.asarray(embed.get_text_embedding_batch(flat), dtype=np.float32) if flat else np.zeros((0, 1))
    firsts_texts = []
    for n, path in zip(nodes, paths):
        full, content = n.get_content(MetadataMode.EMBED), n.get_content()
        header = full[: len(full) - len(content)] if content and full.endswith(content) else ""
        firsts_texts.append(header + path + "\n\n" + content if path else None)
    todo = [t for t in firsts_texts if t is not None]
    fresh = iter(np.asarray(embed.get_text_embedding_batch(todo), dtype=np.float32)) if todo else iter(())
    headed = unit(np.stack([next(fresh) if t is not None else v for t, v in zip(firsts_texts, vectors)]))
    index = sparse.SparseIndex((n.node_id, f"{sparse.document_name(n.metadata or {}, n.ref_doc_id)}\n{path}",
                                n.get_content(), None) for n, path in zip(nodes, paths))
    out = {}
    for arm, firsts, bm_index in (("either (shipped)", vectors, None),
                                  ("BM25: headings in front", vectors, index),
                                  ("first window: headings in front", headed, None),
                                  ("both", headed, index)):
        it = iter(later)
        owner, every = stacked_windows([[v] + [next(it) for _ in texts] for v, texts in zip(firsts, per_chunk)])
        out[arm] = (firsts, owner, every, bm_index)
    return out


def stacked_windows(per_chunk: list[list[np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Every chunk's window vectors in one matrix of unit rows, with the chunk each row belongs to."""
    owner = np.concatenate([[i] * len(w) for i, w in enumerate(per_chunk)])
    return owner, unit(np.concatenate([np.stack(w) for w in per_chunk]))


def best_window(owner: np.ndarray, cosines: np.ndarray, chunks: int) -> np.ndarray:
    """Each chunk's best window cosine (``cosines``: one per row of ``stacked_windows``)."""
    best = np.full(chunks, -1.0)
    np.maximum.at(best, owner, cosines)
    return best


def in_top(scores: np.ndarray, depth: int) -> np.ndarray:
    """A mask of the chunks a leg lists (its top ``depth`` with a score above 0)."""
    mask = np.zeros(len(scores), dtype=bool)
    order = np.argsort(-scores, kind="stable")[:depth]
    mask[order[scores[order] > 0]] = True
    return mask


def fuse_max_dense(denses: list[np.ndarray], bm: np.ndarray) -> list[int]:
    """Like ``fuse`` (distribution sum), but the dense part of a chunk is the larger of its normalised scores in
    several dense lists (each its own top 50): a chunk's dense part is never below what the first list gives it."""
    orders = [[int(i) for i in np.argsort(-d, kind="stable")[:DEPTH]] for d in denses]
    sparse_order = [int(i) for i in np.argsort(-bm, kind="stable")[:DEPTH] if bm[i] > 0]
    dense_part: dict[int, float] = {}
    for d, order in zip(denses, orders):
        for i, v in zip(order, _distribution_normalised([float(d[i]) for i in order])):
            dense_part[i] = max(dense_part.get(i, 0.0), v)
    fused: dict[int, float] = defaultdict(float, dense_part)
    for i, v in zip(sparse_order, _distribution_normalised([float(bm[i]) for i in sparse_order])):
        fused[i] += v
    first_rank = {i: r for r, i in enumerate(orders[0])}
    return sorted(fused, key=lambda i: (-fused[i], first_rank.get(i, 10**9)))


def show(row, arms: dict[str, list[int]], texts, docs, dense, best, bm, headed, owner, per_window) -> None:
    """One question's top 12 under each arm: rank, relevant?, document, first-window and best-window cosine
    (and which window), BM25, heading, the chunk's opening."""
    dense_rank = {int(i): r for r, i in enumerate(np.argsort(-dense, kind="stable"), 1)}
    half_rank = {int(i): r for r, i in enumerate(np.argsort(-(dense + best) / 2, kind="stable"), 1)}
    bm_rank = {int(i): r for r, i in enumerate(np.argsort(-bm, kind="stable"), 1)}
    print(f"\n{row.id}: {row.query!r} expects {row.expected}")
    for arm, order in arms.items():
        print(f"  {arm}")
        for r, i in enumerate(order[:12], 1):
            windows = per_window[owner == i]
            print(f"    {r:2d} {'*' if metrics.is_relevant(texts[i], row.expected) else ' '} {docs[i][-28:]:28s} "
                  f"first {dense[i]:.3f} (#{dense_rank[i]}) best {best[i]:.3f} (window {int(np.argmax(windows))} "
                  f"of {len(windows)}; half #{half_rank[i]}) bm25 {bm[i]:.2f} (#{bm_rank[i] if bm[i] > 0 else '-'}) "
                  f"{'H' if headed[i] else ' '} {texts[i][:50]!r}")


def gold_word_piece(tokenizer, nodes, row) -> str:
    """Where the expected string starts in the first relevant chunk, in the embedder's word pieces
    (of the text it embeds, metadata header included): 'at / of'."""
    from llama_index.core.schema import MetadataMode

    for node in nodes:
        if metrics.is_relevant(node.get_content(), row.expected):
            text = metrics.norm(node.get_content(MetadataMode.EMBED))
            at = min(text.find(metrics.norm(e)) for e in row.expected if metrics.norm(e) in text)
            count = len(tokenizer(text, add_special_tokens=False)["input_ids"])
            return f"{len(tokenizer(text[:at], add_special_tokens=False)['input_ids'])} / {count}"
    return "-"


def diagnose(name: str, embed, tokenizer, split: str, extra_dev: list[Path] | None = None) -> None:
    """Ours against the peer per question (see the module docstring)."""
    from llama_index.core import SimpleDirectoryReader, VectorStoreIndex
    from llama_index.core.node_parser import SentenceSplitter
    from llama_index.retrievers.bm25 import BM25Retriever

    paths, gold = corpus_with_extra(name, extra_dev)
    rows = [r for r in gold if in_split(r, split)]
    nodes = ragplugins_nodes(name, paths, embed, FIRST_WINDOW)
    texts = [n.get_content() for n in nodes]
    docs = [str(n.ref_doc_id) for n in nodes]
    vectors = unit(np.asarray([n.embedding for n in nodes], dtype=np.float32))
    bm25 = sparse.SparseIndex.from_nodes(nodes)
    documents = [d for path in paths for d in SimpleDirectoryReader(input_dir=str(path), recursive=True).load_data()]
    # The peer's 1024/200 default was never embedded for the two large corpora (MiniLM time).
    sizes = ((512, 50),) if name in ("python", "postgres") else ((512, 50), (1024, 200))
    peers = {}
    for size, overlap in sizes:
        peer_nodes = SentenceSplitter(chunk_size=size, chunk_overlap=overlap)(documents)
        peers[f"peer {size}/{overlap}"] = (peer_nodes, VectorStoreIndex(peer_nodes, embed_model=embed).as_retriever(
            similarity_top_k=100), BM25Retriever.from_defaults(nodes=peer_nodes, similarity_top_k=100))

    def first(found: list[str], row) -> int | None:
        return metrics.first_relevant_rank(found, row.expected)

    report: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        q = unit(np.asarray(embed.get_query_embedding(row.query), dtype=np.float32))
        dense = vectors @ q
        bm = np.zeros(len(nodes))
        for i, s in bm25.search(row.query, len(nodes)):
            bm[i] = s
        order = fuse([(dense, 1.0), (bm, 1.0)])[:K]
        d_leg, s_leg = leg_orders([dense, bm], 100)
        report["ours"].append({
            "fused": first([texts[i] for i in order], row), "dense": first([texts[i] for i in d_leg], row),
            "sparse": first([texts[i] for i in s_leg], row),
            "r10": metrics.recall_at([texts[i] for i in order], row.expected, row.match, 10),
            "docs": len({docs[i] for i in order[:10]}), "chars": float(np.mean([len(texts[i]) for i in order[:10]]))})
        for arm, (peer_nodes, dense_retriever, bm25_retriever) in peers.items():
            dense_hits = [n.node for n in dense_retriever.retrieve(row.query)]
            sparse_hits = [n.node for n in bm25_retriever.retrieve(row.query)]
            # QueryFusionRetriever's reciprocal_rerank over each leg's top K (k = 60, 0-based ranks).
            fused: dict[str, float] = defaultdict(float)
            by_id = {}
            for hits in (dense_hits[:K], sparse_hits[:K]):
                for r, node in enumerate(hits):
                    fused[node.node_id] += 1.0 / (r + 60)
                    by_id.setdefault(node.node_id, node)
            top = [by_id[i] for i in sorted(fused, key=lambda i: -fused[i])[:K]]
            report[arm].append({
                "fused": first([n.get_content() for n in top], row),
                "dense": first([n.get_content() for n in dense_hits], row),
                "sparse": first([n.get_content() for n in sparse_hits], row),
                "r10": metrics.recall_at([n.get_content() for n in top], row.expected, row.match, 10),
                "docs": len({n.ref_doc_id for n in top[:10]}),
                "chars": float(np.mean([len(n.get_content()) for n in top[:10]])), "nodes": peer_nodes})
    print(f"\n{name}, {split} split: R@10, distinct documents and characters per chunk in the top 10 (means)\n")
    print("| pipeline | R@10 | documents in top 10 | characters per chunk in top 10 |")
    print("|---|---|---|---|")
    for arm, per in report.items():
        print(f"| {arm} | {np.mean([p['r10'] for p in per]):.3f} | {np.mean([p['docs'] for p in per]):.2f} | "
              f"{np.mean([p['chars'] for p in per]):.0f} |")
    print("\nPeer has it in its top 10, we do not (ranks: fused / dense / BM25; gold's word piece in the chunk):\n")
    for n, row in enumerate(rows):
        ours = report["ours"][n]
        for arm in peers:
            peer = report[arm][n]
            if peer["r10"] > ours["r10"]:
                print(f"- {row.id} ({row.dimensions.get('kind', '-')}): ours {ours['fused']} / {ours['dense']} / "
                      f"{ours['sparse']}, gold at {gold_word_piece(tokenizer, nodes, row)}; {arm} {peer['fused']} / "
                      f"{peer['dense']} / {peer['sparse']}, gold at {gold_word_piece(tokenizer, peer['nodes'], row)}")


if __name__ == "__main__":
    sys.exit(main())
