"""The core first stage against plain LlamaIndex's OWN pipeline, per corpus, dev and test apart.

The peer is what a LlamaIndex user gets without ragplugins: ``SimpleDirectoryReader`` over the
corpus folder, its default ``SentenceSplitter()`` (1024 tokens, overlap 200), a
``VectorStoreIndex`` with the same MiniLM embedder, and ``QueryFusionRetriever`` (reciprocal
rank, one query) over the index's retriever and ``BM25Retriever`` (bm25s, English stemmer),
k = 20. Also the peer at 512/50, the setting of the published peer rows. ragplugins is run
through its product path (``ragplugins.load(...).search``) with every plugin off, on its
embedded LanceDB index.

Chunk and query embeddings are cached on disk by text (``bench/.cache/embeddings.sqlite``), so
the peer and ragplugins embed a text once across runs; the cache changes no vector.

    python bench/bench_firststage.py --corpus mixed docs acq acq+docs git postgres python
    python bench/bench_firststage.py --corpus git --split dev          # tuning runs
    python bench/bench_firststage.py --split test --out bench/results/firststage/test.json
    python bench/bench_firststage.py --corpus docs mixed acq+docs --split dev --extra-dev bench/goldsets/public_dev2

Splits: the Debian corpora's rows carry ``dimensions.split``; the public sets have none, so a
row is ``dev`` when the first hex digit of sha1(id) is even (decided before the first run).
``--extra-dev FOLDER [FOLDER ...]`` adds the rows of FOLDER/{docs,atlas7,hr}.jsonl (questions written later
over the public documents) to the dev split of every public corpus that holds those documents: docs rows
count for docs, mixed and acq+docs; atlas7 and hr rows for mixed; and FOLDER/<corpus>.jsonl to a Debian
corpus's dev split (bench/goldsets/debian_dev3). Each such row is marked ``dimensions.set = FOLDER's
name`` so a report can show them apart.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sqlite3
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import debian_corpora  # noqa: E402
from llama_index.core.base.embeddings.base import BaseEmbedding  # noqa: E402
from llama_index.core.bridge.pydantic import PrivateAttr  # noqa: E402

from ragplugins.eval import metrics  # noqa: E402
from ragplugins.eval.corpora import bench_corpus  # noqa: E402
from ragplugins.eval.gold import GoldRow, load_gold  # noqa: E402

CACHE = HERE / ".cache"
DEBIAN = tuple(debian_corpora.CORPORA)  # git, postgres, python; policy and manpages held out since 2026-12-02
PUBLIC = ("mixed", "docs", "acq", "acq+docs")
K = 20


class CachedEmbedding(BaseEmbedding):
    """Another embedder's vectors, kept on disk by text so a corpus is embedded once."""

    _inner: Any = PrivateAttr()
    _db: Any = PrivateAttr()
    _model: Any = PrivateAttr()  # the inner sentence-transformers model: research_firststage.py reads its tokenizer

    def __init__(self, inner: Any, path: Path, **kwargs: Any):
        super().__init__(model_name=f"cached:{getattr(inner, 'model_name', type(inner).__name__)}",
                         embed_batch_size=64, **kwargs)
        self._inner = inner
        self._model = getattr(inner, "_model", None)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), check_same_thread=False)
        self._db.execute("create table if not exists v (k text primary key, vec blob)")

    @classmethod
    def class_name(cls) -> str:
        return "bench.CachedEmbedding"

    @property
    def wrapped_embed_model(self) -> Any:
        """The embedder behind the cache (ragplugins.windows reads its tokenizer to cut windows)."""
        return self._inner

    def _lookup(self, keys: list[str]) -> dict[str, list[float]]:
        out = {}
        for i in range(0, len(keys), 500):
            part = keys[i:i + 500]
            rows = self._db.execute(f"select k, vec from v where k in ({','.join('?' * len(part))})", part)
            out.update({k: np.frombuffer(b, dtype=np.float32).tolist() for k, b in rows})
        return out

    def _many(self, texts: list[str], kind: str) -> list[list[float]]:
        keys = [hashlib.sha1(f"{kind}\0{t}".encode()).hexdigest() for t in texts]
        found = self._lookup(keys)
        missing = [i for i, k in enumerate(keys) if k not in found]
        if missing:
            todo = [texts[i] for i in missing]
            vectors = (self._inner.get_text_embedding_batch(todo) if kind == "doc"
                       else [self._inner.get_query_embedding(t) for t in todo])
            self._db.executemany("insert or replace into v values (?, ?)",
                                 [(keys[i], np.asarray(v, dtype=np.float32).tobytes())
                                  for i, v in zip(missing, vectors)])
            self._db.commit()
            found.update({keys[i]: list(map(float, v)) for i, v in zip(missing, vectors)})
        return [found[k] for k in keys]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._many([query], "query")[0]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._many([text], "doc")[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._many(list(texts), "doc")


# Which public documents each bench corpus holds: the gold files whose extra dev rows it takes.
EXTRA_DEV_PARTS = {"mixed": ("atlas7", "hr", "docs"), "docs": ("docs",), "acq+docs": ("docs",)}


def extra_dev_rows(name: str, folders: Sequence[Path] | None) -> list[GoldRow]:
    """The dev rows of ``folders`` over the documents corpus ``name`` holds: a public corpus's parts
    (EXTRA_DEV_PARTS), a Debian corpus's ``<name>.jsonl``; none where a folder has no such file."""
    rows: list[GoldRow] = []
    for folder in folders or []:
        if not folder.is_dir():
            raise SystemExit(f"--extra-dev: '{folder}' is not a folder; give a folder holding docs.jsonl, "
                             "atlas7.jsonl, hr.jsonl or <debian corpus>.jsonl")
        files = [folder / f"{part}.jsonl" for part in EXTRA_DEV_PARTS.get(name, (name,))]
        for row in load_gold([f for f in files if f.is_file()]):
            if row.dimensions.get("split", "dev") != "dev":
                raise SystemExit(f"--extra-dev: row {row.id} in {folder} says split "
                                 f"'{row.dimensions['split']}'; every row there must be a dev row")
            rows.append(dataclasses.replace(row, dimensions={**row.dimensions, "split": "dev", "set": folder.name}))
    return rows


def corpus_with_extra(name: str, folders: Sequence[Path] | None) -> tuple[list[Path], list[GoldRow]]:
    """``corpus(name)`` with the extra dev rows of ``folders`` added (ids must not repeat)."""
    paths, gold = corpus(name)
    extra = extra_dev_rows(name, folders)
    clash = {r.id for r in gold} & {r.id for r in extra}
    if clash:
        raise SystemExit(f"--extra-dev: ids already in the {name} gold set: {', '.join(sorted(clash)[:5])}")
    return paths, sorted(gold + extra, key=lambda r: r.id)


def split_of(row: GoldRow) -> str:
    split = row.dimensions.get("split")
    if split in ("dev", "test"):
        return split
    return "dev" if int(hashlib.sha1(row.id.encode()).hexdigest()[0], 16) % 2 == 0 else "test"


def corpus(name: str) -> tuple[list[Path], list[GoldRow]]:
    if name in DEBIAN:
        from debian_corpora import DERIVED, corpus_dir

        gold = HERE / "goldsets" / "debian" / f"{DERIVED.get(name, name)}.jsonl"
        # Resolved: SimpleDirectoryReader puts the absolute path in every chunk's embedded text, so the
        # peer's cached embeddings are found only through the same path from every worktree.
        return [corpus_dir(name).resolve()], load_gold([gold])
    return bench_corpus(name)


def peer_retriever(paths: Sequence[Path], embed: BaseEmbedding, chunk_size: int | None, chunk_overlap: int | None):
    from llama_index.core import SimpleDirectoryReader, VectorStoreIndex
    from llama_index.core.llms import MockLLM
    from llama_index.core.node_parser import SentenceSplitter
    from llama_index.core.retrievers import QueryFusionRetriever
    from llama_index.retrievers.bm25 import BM25Retriever

    documents = []
    for path in paths:
        documents += SimpleDirectoryReader(input_dir=str(path), recursive=True).load_data()
    splitter = SentenceSplitter() if chunk_size is None else SentenceSplitter(chunk_size=chunk_size,
                                                                            chunk_overlap=chunk_overlap)
    nodes = splitter(documents)
    index = VectorStoreIndex(nodes, embed_model=embed)
    bm25 = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=min(K, len(nodes)))
    fusion = QueryFusionRetriever([index.as_retriever(similarity_top_k=K), bm25], mode="reciprocal_rerank",
                                  num_queries=1, similarity_top_k=K, use_async=False, llm=MockLLM())
    return (lambda q: [n.node.get_content() for n in fusion.retrieve(q)]), len(nodes)


def ragplugins_app(name: str, paths: Sequence[Path], embed: BaseEmbedding, config: dict):
    import ragplugins
    from ragplugins.config import parse_config
    from ragplugins.contributions import index_time_settings
    from ragplugins.eval.runner import code_hash, files_fingerprint

    cfg = {"enable": [], "top_k": K, **config}
    # Keyed by every effective core setting (defaults included), so a changed default is a new index.
    core = index_time_settings(parse_config({"ragplugins": cfg}).core)
    # And by the corpus's bytes and the core's code: a re-extracted corpus (another package version) or a
    # changed chunker is another index (a stale one was reused once, 2026-12-02).
    key = hashlib.sha1(json.dumps([name, core, files_fingerprint(paths), code_hash(ragplugins)],
                                  sort_keys=True).encode()).hexdigest()[:12]
    persist = CACHE / "firststage" / f"{name.replace('+', '_')}-{key}"
    rp = ragplugins.load({"ragplugins": {**cfg, "persist_dir": str(persist)}}, embed_model=embed)
    if not (persist / "done").exists():
        rp.index_paths(paths)
        (persist / "done").write_text("ok")
    return rp


def ragplugins_nodes(name: str, paths: Sequence[Path], embed: BaseEmbedding, config: dict):
    """Every chunk of the index ``ragplugins_app`` built (what research_firststage.py scores in memory)."""
    rp = ragplugins_app(name, paths, embed, config)
    return rp.context(rp.index()).all_nodes()


def ragplugins_retriever(name: str, paths: Sequence[Path], embed: BaseEmbedding, config: dict):
    rp = ragplugins_app(name, paths, embed, config)
    rows = len(rp.context(rp.index()).all_nodes())
    return (lambda q: [n.node.get_content() for n in rp.search(q).final]), rows


def score(retrieve, rows: Sequence[GoldRow]) -> dict[str, Any]:
    per_query, times = {}, []
    for row in rows:
        start = time.perf_counter()
        texts = retrieve(row.query)
        times.append((time.perf_counter() - start) * 1000)
        m = metrics.list_metrics(texts, row.expected, row.match)
        # How much text the first 10 hold: a pipeline with longer chunks (or passages) covers more with each place.
        per_query[row.id] = {"ndcg@10": m["ndcg@10"], "recall@10": m["recall@10"], "recall@20": m["recall@20"],
                             "chars@10": sum(len(t) for t in texts[:10])}
    n = len(per_query) or 1
    return {"n": len(per_query),
            "ndcg@10": sum(v["ndcg@10"] for v in per_query.values()) / n,
            "recall@10": sum(v["recall@10"] for v in per_query.values()) / n,
            "recall@20": sum(v["recall@20"] for v in per_query.values()) / n,
            "p50_ms": statistics.median(times) if times else 0.0, "per_query": per_query}


def in_split(row: GoldRow, split: str) -> bool:
    """``split`` is dev, test, all, or the name of an --extra-dev folder (its rows alone)."""
    return split == "all" or split_of(row) == split or row.dimensions.get("set") == split


ARMS = {
    "llamaindex (1024/200, its default)": ("peer", None, None),
    "llamaindex (512/50)": ("peer", 512, 50),
    "ragplugins (plugins off)": ("ours", {}),
}


def main(argv: list[str] | None = None) -> int:
    global K   # the places every retriever of this run returns (--k)
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", nargs="+", default=[*PUBLIC, *DEBIAN])
    p.add_argument("--split", choices=["dev", "test", "all", "both"], default="dev",
                   help="'both': every question once, dev and test reported side by side")
    p.add_argument("--arm", action="append", help="arm names to run (default: all)")
    p.add_argument("--set", action="append", default=[],
                   help="extra ragplugins arm: NAME=JSON config, e.g. 'bm25s={\"sparse\": \"bm25s\"}'")
    p.add_argument("--out", type=Path, help="write the results as JSON here")
    p.add_argument("--k", type=int, default=K, help="places each retriever returns (its top k; default %(default)s)")
    p.add_argument("--extra-dev", type=Path, metavar="FOLDER", nargs="+",
                   help="add FOLDER/{docs,atlas7,hr}.jsonl to the public corpora's dev split and "
                        "FOLDER/<corpus>.jsonl to a Debian corpus's")
    args = p.parse_args(argv)
    K = args.k

    from ragplugins.embeddings import load_embed_model

    embed = CachedEmbedding(load_embed_model(), CACHE / "embeddings.sqlite")
    arms = dict(ARMS)
    for spec in args.set:
        name, _, cfg = spec.partition("=")
        arms[name] = ("ours", json.loads(cfg))
    chosen = [a for a in arms if not args.arm or a in args.arm or a in dict(s.partition("=")[::2] for s in args.set)]
    results: dict[str, Any] = {}
    for name in args.corpus:
        paths, gold = corpus_with_extra(name, args.extra_dev)
        rows = [r for r in gold if args.split in ("all", "both") or split_of(r) == args.split]
        splits = ("dev", "test") if args.split == "both" else (args.split,)
        for folder in args.extra_dev or []:
            if any(r.dimensions.get("set") == folder.name for r in rows):
                splits += (folder.name,)  # the extra dev rows alone, also counted in dev
        counts = ", ".join(f"{sp} {sum(1 for r in rows if in_split(r, sp))}" for sp in splits)
        print(f"\n## {name} ({counts} of {len(gold)} questions)\n")
        print("| arm | chunks | " + " | ".join(f"{sp} nDCG@10 | {sp} R@10" for sp in splits) + " |")
        print("|---|---|" + "---|---|" * len(splits))
        for arm in chosen:
            spec = arms[arm]
            if spec[0] == "peer":
                retrieve, chunks = peer_retriever(paths, embed, spec[1], spec[2])
            else:
                retrieve, chunks = ragplugins_retriever(name, paths, embed, spec[1])
            res = score(retrieve, rows)
            res["chunks"] = chunks
            res["splits"] = {}
            for sp in splits:
                ids = [r.id for r in rows if in_split(r, sp)]
                per = [res["per_query"][i] for i in ids]
                res["splits"][sp] = {"n": len(per), **{m: sum(v[m] for v in per) / max(1, len(per))
                                                       for m in ("ndcg@10", "recall@10", "recall@20", "chars@10")}}
            results.setdefault(name, {})[arm] = res
            cells = " | ".join(f"{res['splits'][sp]['ndcg@10']:.3f} | {res['splits'][sp]['recall@10']:.3f}"
                               for sp in splits)
            print(f"| {arm} | {chunks} | {cells} |", flush=True)
    write_results(args.out, args.split, results)
    return 0


def write_results(out: Path | None, split: str, results: dict) -> None:
    """The results of one run as JSON at ``out`` (what bench/report_unseen.py reads)."""
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"split": split, "k": K, "results": results}, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
