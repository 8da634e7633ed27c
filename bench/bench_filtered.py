"""A host filter on the first stage: the time of a filtered search when the store says which chunks pass the
filter (``StoreAdapter.ids_passing``: one column read) against reading candidates until enough pass, and that
both give the same lists.

    python bench/debian_corpora.py && python bench/bench_filtered.py [--corpus postgres] [--repeats 5]

Indexes the corpus into bench/.cache/filtered/<corpus> (embeddings from bench_firststage's text cache), then
per filter: median ms of ``rp.search`` over the questions of bench/goldsets/debian/<corpus>.jsonl (dev split).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def main(argv: list[str] | None = None) -> int:
    from bench_firststage import CACHE, CachedEmbedding
    from debian_corpora import corpus_dir
    from llama_index.core.vector_stores import FilterOperator, MetadataFilter, MetadataFilters

    import ragplugins
    from ragplugins.embeddings import load_embed_model
    from ragplugins.stores.lancedb import LanceDBAdapter

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", default="postgres")
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args(argv)
    embed = CachedEmbedding(load_embed_model(), CACHE / "embeddings.sqlite")
    rp = ragplugins.load({"enable": [], "persist_dir": str(CACHE / "filtered" / args.corpus)}, embed_model=embed)
    rp.index_paths([corpus_dir(args.corpus)])
    store = rp.context(rp.index()).store
    chunks = list(store.iter_chunk_rows())
    docs = sorted({c.doc_id for c in chunks})
    gold = HERE / "goldsets" / "debian" / f"{args.corpus}.jsonl"
    questions = [json.loads(line)["query"] for line in gold.read_text().splitlines()
                 if line.strip() and json.loads(line)["dimensions"]["split"] == "dev"]
    filters = {
        "none": None,
        "one document": MetadataFilters(filters=[MetadataFilter(key="file_path", value=docs[len(docs) // 2])]),
        "ten documents": MetadataFilters(filters=[MetadataFilter(key="file_path", value=docs[::len(docs) // 10][:10],
                                                                 operator=FilterOperator.IN)]),
        "all but one document": MetadataFilters(filters=[MetadataFilter(key="file_path", value=docs[0],
                                                                        operator=FilterOperator.NE)]),
    }
    passing = LanceDBAdapter.ids_passing

    def timed(f) -> tuple[float, list[list[str]]]:
        lists, times = [], []
        for q in questions:
            rp.search(q, filters=f)  # warm
            runs = []
            for _ in range(args.repeats):
                t = time.perf_counter()
                hits = rp.search(q, filters=f).final
                runs.append(time.perf_counter() - t)
            times.append(statistics.median(runs))
            lists.append([h.node.node_id for h in hits])
        return 1000 * statistics.median(times), lists

    print(f"{args.corpus}: {len(chunks)} chunks, {len(docs)} documents, {len(questions)} dev questions, "
          f"median of {args.repeats} runs each\n")
    print("| filter | ids from the store (ms) | candidates read until enough pass (ms) | same lists |")
    print("|---|---|---|---|")
    for name, f in filters.items():
        LanceDBAdapter.ids_passing = passing
        fast, a = timed(f)
        LanceDBAdapter.ids_passing = lambda self, filters: None  # the legs read candidates until k pass
        slow, b = timed(f)
        print(f"| {name} | {fast:.0f} | {slow:.0f} | {'yes' if a == b else 'NO'} |", flush=True)
    LanceDBAdapter.ids_passing = passing
    return 0


if __name__ == "__main__":
    sys.exit(main())
