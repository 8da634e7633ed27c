"""Fast what-ifs for the first stage: every variant scored in memory on one index's chunks.

Reads the chunks (text, vector) of the ragplugins index that bench_firststage.py built for a
corpus, and scores sparse legs, fusion rules and chunk views without touching the store, so a
variant costs seconds. What it finds is then built into ragplugins.search and confirmed through
the product path with bench_firststage.py. Dev split only unless told otherwise.

    python bench/research_firststage.py --corpus mixed docs acq+docs git python --split dev
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Callable

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_firststage import CACHE, CachedEmbedding, corpus, split_of  # noqa: E402

from ragplugins.eval import metrics  # noqa: E402


def load_chunks(name: str, paths, embed, config: dict):
    import hashlib
    import json

    import ragplugins

    key = hashlib.sha1(json.dumps([name, config], sort_keys=True).encode()).hexdigest()[:12]
    persist = CACHE / "firststage" / f"{name.replace('+', '_')}-{key}"
    rp = ragplugins.load({"ragplugins": {"enable": [], "persist_dir": str(persist), **config}}, embed_model=embed)
    if not (persist / "done").exists():
        rp.index_paths(paths)
        (persist / "done").write_text("ok")
    nodes = rp.context(rp.index()).all_nodes()
    return nodes


WORD = re.compile(r"(?u)\b\w\w+\b")
IDENT = re.compile(r"[A-Za-z_][\w]*(?:[.\-:/][A-Za-z_0-9][\w]*)+|\d+(?:\.\d+)+")


def tokenizer(kind: str) -> Callable[[str], list[str]]:
    import Stemmer

    stem = Stemmer.Stemmer("english")
    import bm25s

    stop = set(bm25s.stopwords.STOPWORDS_EN)

    def plain(text: str) -> list[str]:
        return [t for t in WORD.findall(text.lower()) if t not in stop]

    def stemmed(text: str) -> list[str]:
        return stem.stemWords(plain(text))

    def ident(text: str) -> list[str]:
        # stems of words plus whole identifiers and dotted numbers, and the parts of snake_case
        low = text.lower()
        out = stemmed(low)
        for m in IDENT.findall(low):
            out.append(m)
        for w in WORD.findall(low):
            if "_" in w:
                out += [p for p in w.split("_") if len(p) > 1]
        return out

    return {"plain": plain, "stem": stemmed, "ident": ident}[kind]


class BM25:
    def __init__(self, texts: list[str], tok, k1=1.2, b=0.75):
        import bm25s

        self.tok = tok
        corpus_tokens = [tok(t) for t in texts]
        self.model = bm25s.BM25(k1=k1, b=b)
        vocab: dict[str, int] = {}
        ids = [[vocab.setdefault(w, len(vocab)) for w in doc] for doc in corpus_tokens]
        self.vocab = vocab
        self.model.index(bm25s.tokenization.Tokenized(ids=ids, vocab=vocab), show_progress=False)
        self.n = len(texts)

    def scores(self, query: str) -> np.ndarray:
        q = [self.vocab[w] for w in self.tok(query) if w in self.vocab]
        if not q:
            return np.zeros(self.n)
        return np.asarray(self.model.get_scores(q), dtype=float)


def ranks(scores: np.ndarray, depth: int) -> dict[int, int]:
    order = np.argsort(-scores, kind="stable")[:depth]
    return {int(i): r for r, i in enumerate(order, 1) if scores[int(i)] > 0 or True}


def rrf(lists: list[tuple[dict[int, int], float]], k: int = 60) -> dict[int, float]:
    out: dict[int, float] = defaultdict(float)
    for rk, w in lists:
        for i, r in rk.items():
            out[i] += w / (k + r)
    return out


def _z(x: np.ndarray) -> np.ndarray:
    sd = x.std()
    return (x - x.mean()) / sd if sd > 0 else np.zeros_like(x)


def _top_minmax(x: np.ndarray, depth: int = 50) -> np.ndarray:
    order = np.argsort(-x)[:depth]
    out = np.zeros_like(x)
    lo, hi = x[order].min(), x[order].max()
    if hi > lo:
        out[order] = (x[order] - lo) / (hi - lo)
    return out


def _top_dist(x: np.ndarray, depth: int = 50) -> np.ndarray:
    order = np.argsort(-x)[:depth]
    out = np.zeros_like(x)
    mu, sd = x[order].mean(), x[order].std()
    if sd > 0:
        out[order] = (x[order] - (mu - 3 * sd)) / (6 * sd)
    return out


FUSIONS = {
    "zsum": lambda d, s: _z(d) + _z(s),
    "minmax": lambda d, s: _top_minmax(d) + _top_minmax(s),
    "dist": lambda d, s: _top_dist(d) + _top_dist(s),
}


def evaluate(order: list[int], texts: list[str], row) -> tuple[float, float]:
    got = [texts[i] for i in order[:20]]
    m = metrics.list_metrics(got, row.expected, row.match)
    return m["ndcg@10"], m["recall@10"]


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--corpus", nargs="+", required=True)
    p.add_argument("--split", default="dev")
    p.add_argument("--config", default="{}")
    p.add_argument("--depth", type=int, default=50)
    args = p.parse_args()
    global DEPTH
    DEPTH = args.depth
    import json

    from ragplugins.embeddings import load_embed_model

    embed = CachedEmbedding(load_embed_model(), CACHE / "embeddings.sqlite")
    for name in args.corpus:
        paths, gold = corpus(name)
        rows = [r for r in gold if args.split == "all" or split_of(r) == args.split]
        nodes = load_chunks(name, paths, embed, json.loads(args.config))
        texts = [n.get_content() for n in nodes]
        vecs = np.asarray([n.embedding for n in nodes], dtype=np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True) + 1e-9
        def titled(n):
            name = str(n.metadata.get("file_name") or n.metadata.get("file_path") or "")
            name = re.sub(r"\.(md|txt|rst|html?|pdf)$", "", name.rsplit("/", 1)[-1])
            return re.sub(r"[_\-.]+", " ", name) + "\n" + n.get_content()
        titled_texts = [titled(n) for n in nodes]
        legs = {kind: BM25(texts, tokenizer(kind)) for kind in ("stem", "ident")}
        legs["ident+title"] = BM25(titled_texts, tokenizer("ident"))
        results: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for row in rows:
            q = np.asarray(embed.get_query_embedding(row.query), dtype=np.float32)
            dense = vecs @ (q / (np.linalg.norm(q) + 1e-9))
            d_rank = ranks(dense, DEPTH)
            results["dense"].append(evaluate(list(d_rank), texts, row))
            for kind, leg in legs.items():
                s = leg.scores(row.query)
                s_rank = {i: r for i, r in ranks(s, DEPTH).items() if s[i] > 0}
                results[f"bm25 {kind}"].append(evaluate(list(s_rank), texts, row))
                for fname, fuse in FUSIONS.items():
                    f = fuse(dense, s)
                    order = list(np.argsort(-f, kind="stable")[:20])
                    results[f"{fname} dense+{kind}"].append(evaluate([int(i) for i in order], texts, row))
                for w in (1.0, 1.5):
                    fused = rrf([(d_rank, 1.0), (s_rank, w)])
                    order = sorted(fused, key=lambda i: -fused[i])
                    results[f"rrf dense+{kind} w={w}"].append(evaluate(order, texts, row))
        print(f"\n## {name} ({args.split}, {len(rows)} q, {len(texts)} chunks)")
        for arm, vals in results.items():
            nd = sum(v[0] for v in vals) / len(vals)
            rc = sum(v[1] for v in vals) / len(vals)
            print(f"{arm:32s} nDCG@10 {nd:.3f}  R@10 {rc:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
