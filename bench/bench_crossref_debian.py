"""Extraction precision and recall of the crossref plugin on the real Debian documentation corpora
(git AsciiDoc manual pages, PostgreSQL HTML pages, Python Sphinx sources), against the reference
catalogues in bench/goldsets/debian/<corpus>.refs.jsonl (written by other helpers from the documents).

    python bench/debian_corpora.py                  # extract the corpora first (bench/corpora-debian/)
    python bench/bench_crossref_debian.py           # all three
    python bench/bench_crossref_debian.py git --show-misses

The documents go through the product path without the embedder: the core reader (HTML -> Markdown),
the core's splitters and chunk bookkeeping, then the crossref extractor's annotation.

Scoring, per catalogue row (a reference the catalogue's author found at ``line`` of ``from``, written
``cue``, pointing at document ``to`` or outside the corpus when null): the predicted targets of the
row are the targets of the stored references of ``from`` whose text contains the cue. Rows whose
``to`` is ``from`` itself (a page pointing into itself) are not references to another document and are
reported apart. Recall: rows with a ``to`` in the corpus whose predicted targets contain it. Precision:
rows with any predicted target whose predicted targets are exactly {to}. Both with every reference kept
(``uncapped``) and with the default stored cap (``max_refs_per_chunk``, what the hop sees).

Splits (rule written 2026-12-01, after the catalogues were written and after extraction had been tuned
on whole catalogues, so ``test`` is a second look, not an unseen set): a row is ``dev`` when the first
hex digit of sha1(row id) is even, else ``test`` (the rule bench_firststage.py uses for the public sets).
Scores are reported for ``all``, ``dev`` and ``test``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import debian_corpora  # noqa: E402

GOLD = HERE / "goldsets" / "debian"
RESULTS = HERE / "results" / "crossref"
CORPORA = tuple(debian_corpora.CORPORA)


def chunks_of(corpus_dir: Path):
    """{doc id: [(chunk id, text)]}, {doc id: metadata} and {chunk id: the page anchors that begin in it}, split
    as the core splits them."""
    from llama_index.core.ingestion import IngestionPipeline

    from ragplugins.api import anchor_names
    from ragplugins.readers import read_documents
    from ragplugins.testing import make_rag
    from ragplugins_crossref.transform import group_by_document

    with_warnings_off()
    documents = read_documents([corpus_dir]).documents
    rp = make_rag([], {"enable": []})
    parsers = rp.transformations()[:-1]   # everything but the embedder
    nodes = IngestionPipeline(transformations=parsers).run(documents=documents)
    docs, metadata = group_by_document(nodes)
    anchors = {n.node_id: anchor_names(n.metadata) for n in nodes}
    return {d: [(n.node_id, n.get_content()) for n in ns] for d, ns in docs.items()}, metadata, anchors


_WEB_ADDRESS = re.compile(r"(?i)https?://")
_FRAGMENT_LINK = re.compile(r"\]\([^)#\s]*#")


def with_warnings_off() -> None:
    import warnings

    warnings.filterwarnings("ignore")


def split_of(row_id: str) -> str:
    return "dev" if int(hashlib.sha1(row_id.encode()).hexdigest()[0], 16) % 2 == 0 else "test"


def norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def link_text(reference: str) -> str:
    """The words a reader sees of a Markdown or reStructuredText link (``[`fs.open()`](fs.md#...)`` ->
    ``fs.open()``, ```Directives`_`` -> ``Directives``); other
    references as written."""
    shown = re.match(r"\[(.*?)\](?:\(.*\)|\[.*\])$", reference.strip(), re.S)
    # reStructuredText's `Some Name`_, name_ and `text <path>`_.
    shown = shown or re.match(r"`?([^`]*?)(?:\s*<[^<>`]*>)?`?__?$", reference.strip(), re.S)
    return (shown.group(1) if shown else reference).replace("`", "")


def score(rows: list[dict], refs_by_doc: dict[str, list[dict]], docs: set[str]) -> dict:
    def predicted(row):
        # The cue as a whole name inside a reference's text: "session-keyring(7)" is not a reference to
        # "user-session-keyring(7)". Where a link's text is the cue itself, that link is the row's reference:
        # the cue "rowid" is the link [rowid](...), not also [WITHOUT ROWID](withoutrowid.html) beside it.
        cue = re.compile(r"(?<![\w-])" + re.escape(norm(row["cue"])) + r"(?!\w)")
        # (Resolved or not: `reStructuredText`_ to its web site is not the [reStructuredText Markup
        # Specification](...) link beside it.)
        # A web address is one token: "https://docutils.sourceforge.io" (the cue) is not the longer address
        # ".../docs/ref/rst/restructuredtext.html", nor is "reStructuredText" a word of it.
        found = [r for r in refs_by_doc.get(row["from"], [])
                 if norm(link_text(r["text"])) == norm(row["cue"])
                 or (cue.search(norm(r["text"])) and not _WEB_ADDRESS.match(link_text(r["text"]).strip()))]
        exact = [r for r in found if norm(link_text(r["text"])) == norm(row["cue"])]
        return {r["target"] for r in exact or found if r["target"]}

    own = [r for r in rows if r["to"] == r["from"]]
    rows = [r for r in rows if r["to"] != r["from"]]
    in_corpus = [r for r in rows if r["to"] in docs]
    hits = [r for r in in_corpus if r["to"] in predicted(r)]
    claimed = [r for r in rows if predicted(r)]
    right = [r for r in claimed if predicted(r) == {r["to"]}]
    return {
        "rows": len(rows) + len(own), "to_itself": len(own), "to_other_in_corpus": len(in_corpus),
        "outside_corpus": sum(1 for r in rows if r["to"] is None or r["to"] not in docs),
        "recall": round(len(hits) / len(in_corpus), 3) if in_corpus else None,
        "precision": round(len(right) / len(claimed), 3) if claimed else None,
        "found": len(hits), "claimed": len(claimed), "claimed_right": len(right),
        "misses": [{"id": r["id"], "cue": r["cue"], "to": r["to"], "got": sorted(predicted(r))}
                   for r in in_corpus if r["to"] not in predicted(r)],
        "wrong": [{"id": r["id"], "cue": r["cue"], "to": r["to"], "got": sorted(predicted(r))}
                  for r in claimed if predicted(r) != {r["to"]}],
        "to_itself_claimed": [r["id"] for r in own if predicted(r)],
    }


def measure(corpus: str, show: bool) -> dict:
    from debian_corpora import corpus_dir

    from ragplugins_crossref.families import BUILTIN_FAMILIES
    from ragplugins_crossref.resolve import annotate

    rows = [json.loads(line) for line in (GOLD / f"{corpus}.refs.jsonl").read_text().splitlines() if line.strip()]
    chunks, metadata, anchors = chunks_of(corpus_dir(corpus))
    out = {"corpus": corpus, "documents": len(chunks), "chunks": sum(map(len, chunks.values()))}
    from ragplugins_crossref.config import CrossrefConfig

    for label, cap in (("uncapped", 10_000), ("capped", CrossrefConfig().max_refs_per_chunk)):
        start = time.perf_counter()
        ann = annotate(chunks, metadata, BUILTIN_FAMILIES, max_refs=cap, anchors=anchors)
        seconds = time.perf_counter() - start
        refs_by_doc = {d: [r for cid, _ in cs for r in ann.refs[cid]] for d, cs in chunks.items()}
        out[label] = score(rows, refs_by_doc, set(chunks))
        out[label]["seconds"] = round(seconds, 2)
        for split in ("dev", "test"):
            part = score([r for r in rows if split_of(r["id"]) == split], refs_by_doc, set(chunks))
            out[label][split] = {k: v for k, v in part.items() if k not in ("misses", "wrong")} | {
                "misses": [m["id"] for m in part["misses"]], "wrong": [w["id"] for w in part["wrong"]]}
        stats = ann.stats()
        # Resolved links with a #fragment, and those that name the chunk of the target holding that place.
        into = [r for refs in refs_by_doc.values() for r in refs if r["target"] and _FRAGMENT_LINK.search(r["text"])]
        stats["fragment_links"] = len(into)
        stats["fragment_links_naming_a_chunk"] = sum(1 for r in into if r.get("chunk"))
        out[label]["stats"] = stats
    mb = sum(len(t.encode()) for cs in chunks.values() for _, t in cs) / 1e6
    out["chunk_text_mb"] = round(mb, 2)
    u, c = out["uncapped"], out["capped"]
    print(f"{corpus:9} {out['documents']} docs: uncapped P={u['precision']} R={u['recall']} "
          f"({u['found']}/{u['to_other_in_corpus']} found, {u['claimed_right']}/{u['claimed']} right); "
          f"capped P={c['precision']} R={c['recall']}; {u['to_itself']} rows point into their own page "
          f"(claimed {len(u['to_itself_claimed'])}); {u['stats']['resolved']}/{u['stats']['refs']} refs resolved, "
          f"{u['stats']['fragment_links_naming_a_chunk']}/{u['stats']['fragment_links']} links with a #fragment "
          f"name a chunk; {mb:.1f} MB in {u['seconds']} s")
    for split in ("dev", "test"):
        d = u[split]
        print(f"{'':9} {split}: {d['rows']} rows, {d['to_other_in_corpus']} to another document in the corpus: "
              f"P={d['precision']} ({d['claimed_right']}/{d['claimed']}) R={d['recall']} "
              f"({d['found']}/{d['to_other_in_corpus']}); capped P={c[split]['precision']} R={c[split]['recall']}; "
              f"misses {d['misses']} wrong {d['wrong']}")
    if show:
        for kind in ("misses", "wrong"):
            for row in u[kind]:
                print(f"  {kind[:-1] if kind == 'misses' else 'wrong'}: {row}")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("corpora", nargs="*", default=list(CORPORA))
    p.add_argument("--show-misses", action="store_true")
    args = p.parse_args(argv)
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / "debian_extraction.json"
    # Corpora measured before and not named this time keep their rows.
    results = json.loads(out.read_text()) if out.exists() else {}
    results.update({c: measure(c, args.show_misses) for c in args.corpora})
    out.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
