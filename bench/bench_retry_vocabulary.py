"""Time and memory of the retry plugin's vocabulary build over real documentation.

    python bench/debian_corpora.py                  # once: the extracted Debian corpora
    python bench/bench_retry_vocabulary.py --copies 5

The `vocabulary` strategy and the `corpus_coverage` gate read every chunk's text once per index
version (per host filter) on the first query that needs them. This builds that vocabulary over the
Debian corpora's files cut into 2,000-character chunks (repeated ``--copies`` times, to reach a size
where the per-chunk cost shows) in this process, and reports seconds and resident memory added.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
CORPORA = ROOT / "corpora-debian"
CHUNK_CHARS = 2000


def chunks(corpora: list[str]) -> list[str]:
    out: list[str] = []
    for name in corpora:
        folder = CORPORA / name
        if not folder.is_dir():
            sys.exit(f"{folder} is missing: run `python bench/debian_corpora.py {name}` first")
        for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.name != "SOURCE.json"):
            text = path.read_text(errors="ignore")
            out += [text[i:i + CHUNK_CHARS] for i in range(0, len(text), CHUNK_CHARS)]
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--corpora", nargs="+", default=["git", "postgres", "python"])
    p.add_argument("--copies", type=int, default=1, help="Build over this many copies of the chunks.")
    args = p.parse_args()
    from ragplugins_retry import vocabulary

    texts = chunks(args.corpora) * args.copies
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    vocab = vocabulary.build(iter(texts))
    seconds = time.perf_counter() - start
    added_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    print(json.dumps({"chunks": len(texts), "tokens": len(vocab.postings), "stems": len(vocab.stem_postings),
                      "seconds": round(seconds, 1), "ms_per_chunk": round(1000 * seconds / len(texts), 2),
                      "rss_added_mb": round(added_mb)}))


if __name__ == "__main__":
    main()
