"""Synthetic corpora that reference each other, for the scaling benchmark.

    python bench/synth.py --chunks 10000 --out /tmp/synth10k

Each document is a short contract-like Markdown file of ~10 paragraphs; paragraphs cite other
documents by title ("see the Supply Terms 0042"), by label ("Exhibit C") and by section.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

WORDS = ("supplier buyer delivery invoice warranty liability notice term renewal price discount schedule "
         "audit security incident report payment penalty defect inspection shipment storage license fee "
         "quarter annual monthly approval board committee policy procedure exception claim insurance").split()
KINDS = ["Supply Terms", "Service Order", "Quality Plan", "Security Addendum", "Pricing Exhibit", "Board Memo"]


def title(i: int) -> str:
    return f"{KINDS[i % len(KINDS)]} {i:05d}"


def make_corpus(out: Path, chunks: int, paragraphs: int = 10, seed: int = 7) -> Path:
    rng = random.Random(seed)
    docs = max(2, chunks // paragraphs)
    out.mkdir(parents=True, exist_ok=True)
    for i in range(docs):
        lines = [f"# {title(i)}", ""]
        for p in range(paragraphs):
            words = " ".join(rng.choice(WORDS) for _ in range(45))
            ref = rng.randrange(docs)
            cue = rng.choice([f"as set out in the {title(ref)}", f"see Exhibit {chr(65 + ref % 6)}",
                              f"under Section {p + 1}.{rng.randrange(1, 9)}", ""])
            lines += [f"## Section {p + 1}", "", f"{words.capitalize()} {cue}.", ""]
        (out / f"{i:05d}_{title(i).lower().replace(' ', '_')}.md").write_text("\n".join(lines))
    return out


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunks", type=int, required=True)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    print(make_corpus(a.out, a.chunks))
