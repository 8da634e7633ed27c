"""How index-time and query-time costs grow with corpus size, plugins off and on.

    python bench/bench_scaling.py --sizes 1000,10000,100000 --plugins crossref,overview,retry

Synthetic corpora (bench/synth.py) with references between documents. Embedding dominates
indexing on a CPU and is identical in both arms, so it is measured once per size (a first,
timed build with plugins off) and then shared: the measured `off` and `on` builds embed through a
cache keyed by the exact text, so their difference is what the plugins cost (the `on` arm still
embeds what only it needs, such as the overviews). Builds and queries of the two arms are
interleaved so that a change in the shared machine's load hits both.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import statistics
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np
from common import RESULTS, parser
from llama_index.core.base.embeddings.base import BaseEmbedding
from pydantic import PrivateAttr
from synth import WORDS, make_corpus

from ragplugins import load
from ragplugins.embeddings import load_embed_model
from ragplugins.plugins import PluginRegistry


class CachedEmbedding(BaseEmbedding):
    """The real embedder behind a text -> vector memo, so repeated builds skip the model."""

    _inner: Any = PrivateAttr()
    _memo: dict = PrivateAttr(default_factory=dict)
    _misses: int = PrivateAttr(default=0)

    def __init__(self, inner: BaseEmbedding) -> None:
        super().__init__(model_name=f"cached:{inner.model_name}", embed_batch_size=inner.embed_batch_size)
        self._inner = inner

    @classmethod
    def class_name(cls) -> str:
        return "CachedEmbedding"

    def take_misses(self) -> int:
        n, self._misses = self._misses, 0
        return n

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        todo = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if todo:
            self._misses += len(todo)
            self._memo.update(zip(todo, self._inner.get_text_embedding_batch(todo)))
        return [self._memo[t] for t in texts]

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._get_text_embeddings([text])[0]

    def _get_query_embedding(self, query: str) -> list[float]:
        if query not in self._memo:
            self._misses += 1
            self._memo[query] = self._inner.get_query_embedding(query)
        return self._memo[query]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)


class HashingEmbedding(BaseEmbedding):
    """Signed feature hashing of the words into 384 normalised dimensions (MiniLM's width): a real,
    cheap embedder for sizes where MiniLM on this CPU would take hours. Search and plugin costs
    depend on the vectors' width and count, not on which model made them."""

    dim: int = 384

    @classmethod
    def class_name(cls) -> str:
        return "HashingEmbedding"

    def _get_text_embedding(self, text: str) -> list[float]:
        vec = np.zeros(self.dim, dtype=np.float32)
        for word in re.findall(r"\w+", text.lower()):
            h = zlib.crc32(word.encode())
            vec[h % self.dim] += 1.0 if (h >> 16) & 1 else -1.0
        norm = float(np.linalg.norm(vec)) or 1.0
        return (vec / norm).tolist()

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._get_text_embedding(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_text_embedding(query)


def _dir_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6


def build(corpus: Path, enable: list[str], embed, reg) -> tuple[Any, dict]:
    persist = Path(tempfile.mkdtemp(prefix="scale-"))
    rp = load({"enable": enable, "persist_dir": str(persist), "chunk_size": 128, "chunk_overlap": 16},
              embed_model=embed, registry=reg)
    embed.take_misses()
    start = time.perf_counter()
    _, report = rp.index_paths([corpus])
    index_s = time.perf_counter() - start
    return rp, {"chunks": report.chunks_written, "index_s": index_s, "persist": persist,
                "embedded_texts": embed.take_misses(), "index_mb": _dir_mb(persist)}


def query_latencies(arms: dict[str, Any], queries: list[str], rounds: int) -> dict[str, list[float]]:
    for rp in arms.values():  # warm caches (BM25/FTS, sidecars, query embeddings)
        for q in queries:
            rp.search(q)
    lat: dict[str, list[float]] = {name: [] for name in arms}
    for _ in range(rounds):
        for q in queries:
            for name, rp in arms.items():
                t = time.perf_counter()
                rp.search(q)
                lat[name].append((time.perf_counter() - t) * 1000)
    return lat


def _p(values: list[float], q: float) -> float:
    return sorted(values)[int(q * (len(values) - 1))]


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--sizes", default="1000,10000")
    p.add_argument("--plugins", default="crossref,overview,retry")
    p.add_argument("--rounds", type=int, default=3, help="Interleaved query rounds per arm.")
    p.add_argument("--embedder", choices=["minilm", "hashing"], default="minilm",
                   help="minilm: the bundled model; hashing: feature hashing, for 100,000 chunks on a CPU.")
    p.add_argument("--out", default=str(RESULTS / "scaling"))
    args = p.parse_args()
    plugins = [x for x in args.plugins.split(",") if x]
    inner = load_embed_model() if args.embedder == "minilm" else HashingEmbedding(model_name="hashing-384")
    reg = PluginRegistry.discover()
    queries = [
        f"{WORDS[i % len(WORDS)]} {WORDS[(3 * i + 1) % len(WORDS)]} exhibit {chr(65 + i % 6)}" for i in range(20)
    ]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = []
    for size in [int(s) for s in args.sizes.split(",")]:
        corpus = make_corpus(Path(tempfile.mkdtemp(prefix=f"synth{size}-")), size)
        embed = CachedEmbedding(inner)
        rp, first = build(corpus, [], embed, reg)  # pays the embedding once for both arms
        shutil.rmtree(first["persist"], ignore_errors=True)
        del rp
        row: dict[str, Any] = {
            "size": size,
            "embedder": args.embedder,
            "chunks": first["chunks"],
            "load1": os.getloadavg()[0],
            "embed_build_s": first["index_s"],
            "embedded_texts": first["embedded_texts"],
        }
        arms: dict[str, Any] = {}
        for name, enable in (("off", []), ("on", plugins)):
            arms[name], m = build(corpus, enable, embed, reg)
            row[f"{name}_index_s"], row[f"{name}_index_mb"] = m["index_s"], m["index_mb"]
            row[f"{name}_embedded_texts"] = m["embedded_texts"]
            row[f"{name}_persist"] = str(m["persist"])
        lat = query_latencies(arms, queries, args.rounds)
        for name, values in lat.items():
            row[f"{name}_query_ms_p50"], row[f"{name}_query_ms_p90"] = statistics.median(values), _p(values, 0.9)
        row["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        for name in arms:
            shutil.rmtree(row.pop(f"{name}_persist"), ignore_errors=True)
        arms.clear()
        shutil.rmtree(corpus, ignore_errors=True)
        results.append(row)
        print(json.dumps(row), flush=True)
        (out / "scaling.json").write_text(json.dumps(results, indent=1))
    print("\n| chunks | first build with embedding, s (chunks/s) | index s off / on (embeddings shared) "
          "| plugins' index-time cost | query p50 ms off / on | query p90 ms off / on | index MB off / on |\n"
          "|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['chunks']} | {r['embed_build_s']:.0f} ({r['chunks'] / r['embed_build_s']:.0f}) "
              f"| {r['off_index_s']:.1f} / {r['on_index_s']:.1f} | +{r['on_index_s'] - r['off_index_s']:.1f} s "
              f"| {r['off_query_ms_p50']:.1f} / {r['on_query_ms_p50']:.1f} "
              f"| {r['off_query_ms_p90']:.1f} / {r['on_query_ms_p90']:.1f} "
              f"| {r['off_index_mb']:.1f} / {r['on_index_mb']:.1f} |")


if __name__ == "__main__":
    main()
