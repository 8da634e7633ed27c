"""Synthetic corpora that reference each other, for the scaling benchmarks.

    python bench/synth.py --chunks 10000 --out /tmp/synth10k

Each document is a short contract-like Markdown file of ~10 paragraphs; paragraphs cite other
documents by title ("see the Supply Terms 0042"), by label ("Exhibit C") and by section.
``iter_documents`` yields the same documents as LlamaIndex Documents, one at a time, so a
million-chunk corpus never has to exist on disk or in memory at once.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Iterator
from pathlib import Path

WORDS = ("supplier buyer delivery invoice warranty liability notice term renewal price discount schedule "
         "audit security incident report payment penalty defect inspection shipment storage license fee "
         "quarter annual monthly approval board committee policy procedure exception claim insurance").split()
KINDS = ["Supply Terms", "Service Order", "Quality Plan", "Security Addendum", "Pricing Exhibit", "Board Memo"]


def title(i: int) -> str:
    return f"{KINDS[i % len(KINDS)]} {i:05d}"


def file_name(i: int) -> str:
    return f"{i:05d}_{title(i).lower().replace(' ', '_')}.md"


def _texts(chunks: int, paragraphs: int, seed: int) -> Iterator[tuple[int, str]]:
    rng = random.Random(seed)
    docs = max(2, chunks // paragraphs)
    for i in range(docs):
        lines = [f"# {title(i)}", ""]
        for p in range(paragraphs):
            words = " ".join(rng.choice(WORDS) for _ in range(45))
            ref = rng.randrange(docs)
            cue = rng.choice([f"as set out in the {title(ref)}", f"see Exhibit {chr(65 + ref % 6)}",
                              f"under Section {p + 1}.{rng.randrange(1, 9)}", ""])
            lines += [f"## Section {p + 1}", "", f"{words.capitalize()} {cue}.", ""]
        yield i, "\n".join(lines)


def make_corpus(out: Path, chunks: int, paragraphs: int = 10, seed: int = 7) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    for i, text in _texts(chunks, paragraphs, seed):
        (out / file_name(i)).write_text(text)
    return out


def iter_documents(chunks: int, paragraphs: int = 10, seed: int = 7) -> Iterator:
    """The documents of ``make_corpus(..., chunks)`` with the ids and file metadata ragplugins'
    reader would give them, generated one at a time."""
    from llama_index.core import Document

    from ragplugins.nodes import hide_metadata

    for i, text in _texts(chunks, paragraphs, seed):
        name = file_name(i)
        # The metadata ragplugins' reader gives a file (readers.read_documents), so chunks come out alike.
        meta = {"file_path": name, "file_name": name, "file_type": "text/markdown", "file_size": len(text.encode()),
                "creation_date": "2026-12-01", "last_modified_date": "2026-12-01"}
        document = Document(text=text, id_=name, metadata=meta)
        hide_metadata(document, ["file_name", "file_type", "file_size", "creation_date", "last_modified_date"])
        yield document


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunks", type=int, required=True)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    print(make_corpus(a.out, a.chunks))
