"""What the concurrency tests run in child processes: a writer that re-indexes, adds and removes
documents, readers that query in a loop meanwhile, and two writers racing for the same index.

Every chunk of revision k of a document carries the marker ``rev<k>`` (each section repeats it), so a
result that holds chunks of two revisions of one document is seen. Children are forked from a
forkserver that imported this module once (see tests/crash_worker.py).
"""

from __future__ import annotations

import re
import traceback
import warnings
from pathlib import Path
from typing import Any

from crash_worker import HashEmbedding

import ragplugins  # noqa: F401 - preloaded in the forkserver
import ragplugins_crossref  # noqa: F401
import ragplugins_overview  # noqa: F401
import ragplugins_retry  # noqa: F401
from ragplugins.app import load
from ragplugins.errors import RagPluginsError
from ragplugins.plugins import PluginRegistry

PluginRegistry.discover()

# name -> (title, topic words, the title of the document it refers to)
DOCUMENTS = {
    "alpha.md": ("Alpha Handbook", "boiler pressure descaling pump gasket", "Beta Guide"),
    "beta.md": ("Beta Guide", "invoice payment schedule late interest", "Gamma Manual"),
    "gamma.md": ("Gamma Manual", "termination notice period written consent", "Delta Policy"),
    "delta.md": ("Delta Policy", "badge access visitor escort safety shoes", "Alpha Handbook"),
}
QUERIES = [
    "How is boiler pressure and descaling handled in the Alpha Handbook?",
    "When are invoice payments due and what late interest applies?",
    "What notice period does termination need?",
    "Do visitors need an escort and a badge for access?",
    "extra notes",
]
MARKER = re.compile(r"\brev(\d+)\b")


def document_text(name: str, rev: int) -> str:
    """Revision ``rev`` of a document: a title line and three sections, each carrying ``rev<rev>``."""
    title, topic, other = DOCUMENTS[name]
    parts = [f"# {title}\n\nThe {title} at rev{rev} covers {topic}."]
    for i, word in enumerate(topic.split()[:3], start=1):
        parts.append(f"## Part {i} {word}\n\nPart {i} of the {title} rev{rev} explains {word} and {topic}. "
                     f"This rev{rev} text defers to the {other} for details on {word}.")
    return "\n\n".join(parts) + "\n"


def extra_text(rev: int) -> str:
    return (f"# Extra Notes {rev}\n\nExtra notes rev{rev} list what changed in rev{rev}.\n\n"
            f"## Changes\n\nThe extra notes of rev{rev} mention the Alpha Handbook and rev{rev} changes.\n")


def write_revision(corpus: Path, rev: int) -> None:
    """The corpus as revision ``rev``: every document rewritten, ``extra_<rev>.md`` added, older extras removed."""
    corpus.mkdir(parents=True, exist_ok=True)
    for name in DOCUMENTS:
        (corpus / name).write_text(document_text(name, rev), encoding="utf-8")
    for old in corpus.glob("extra_*.md"):
        old.unlink()
    (corpus / f"extra_{rev}.md").write_text(extra_text(rev), encoding="utf-8")


def config(persist_dir: str, **extra: Any) -> dict:
    return {"persist_dir": persist_dir, "enable": ["crossref", "overview", "retry"], "top_k": 8,
            "splitter": "auto", "on_plugin_error": "raise", **extra}


def open_app(persist_dir: str) -> Any:
    return load(config(persist_dir), embed_model=HashEmbedding())


def revisions(nodes: list[Any]) -> dict[str, set[int]]:
    """Document id -> the revisions its chunks in ``nodes`` carry (a chunk without a marker adds -1)."""
    seen: dict[str, set[int]] = {}
    for nws in nodes:
        found = {int(m) for m in MARKER.findall(nws.node.get_content())}
        seen.setdefault(nws.node.ref_doc_id, set()).update(found or {-1})
    return seen


def check_result(result: Any) -> list[str]:
    """What is wrong with one search: a document seen at two revisions, or a chunk without a marker."""
    problems = []
    for where, nodes in (("first stage", result.first_stage), ("final", result.final)):
        for doc, revs in revisions(nodes).items():
            if -1 in revs:
                problems.append(f"{where}: a chunk of {doc} carries no revision marker")
            if len(revs) > 1:
                problems.append(f"{where}: {doc} mixes revisions {sorted(revs)} in one result")
    return problems


# -- one writer, several readers ---------------------------------------------------------------
def writer(persist_dir: str, corpus: str, first: int, last: int, barrier: Any, done: Any) -> dict[str, Any]:
    """Wait for the readers, then write revisions first..last (each: every document re-indexed, one
    added, one removed)."""
    warnings.simplefilter("ignore")
    try:
        rp = open_app(persist_dir)
        rp.index()
        barrier.wait(timeout=300)
        reports = []
        for rev in range(first, last + 1):
            write_revision(Path(corpus), rev)
            _, report = rp.index_paths([corpus])
            reports.append({"updated": len(report.updated), "added": report.added, "deleted": report.deleted})
        return {"ok": True, "reports": reports}
    except Exception:  # noqa: BLE001 - reported to the test, which fails on it
        return {"ok": False, "error": traceback.format_exc()}
    finally:
        done.set()


def reader(persist_dir: str, final: int, barrier: Any, done: Any) -> dict[str, Any]:
    """Query in a loop while the writer writes; then check that this process, loaded before the
    writes, sees the last revision everywhere (rows, BM25 leg, retry vocabulary, overviews)."""
    from ragplugins import search as core_search
    from ragplugins_overview import sidecar
    from ragplugins_retry.vocabulary import vocabulary_of

    problems: list[str] = []
    caught: list[str] = []
    queries_during = 0
    newest: dict[str, int] = {}
    try:
        with warnings.catch_warnings(record=True) as seen_warnings:
            warnings.simplefilter("always")
            rp = open_app(persist_dir)
            index = rp.index()
            ctx = rp.context(index)
            for q in QUERIES:  # every cache filled before the first write
                problems += check_result(rp.search(q))
            vocabulary_before = vocabulary_of(ctx)
            barrier.wait(timeout=300)
            i = 0
            while not done.is_set():
                result = rp.search(QUERIES[i % len(QUERIES)])
                i += 1
                queries_during += 1
                problems += check_result(result)
                for doc, revs in revisions(result.final).items():
                    rev = max(revs)
                    if rev < newest.get(doc, 0):
                        problems.append(f"{doc} went back from rev{newest[doc]} to rev{rev}")
                    newest[doc] = max(rev, newest.get(doc, 0))
            # After the last write, without a restart:
            finals = [rp.search(q) for q in QUERIES]
            for result in finals:
                problems += check_result(result)
                for doc, revs in revisions(result.final).items():
                    if revs != {final}:
                        problems.append(f"after the writes, {doc} is seen at {sorted(revs)}, not rev{final}")
            sparse = core_search.sparse_search(ctx.store, f"rev{final}", 50)
            documents = ctx.list_documents()
            overviews, problem = sidecar.usable(ctx)
            vocabulary = vocabulary_of(ctx)
            # Upstream deprecations aside (LlamaIndex's LanceDB store calls table_names()): every warning.
            caught = [f"{w.category.__name__}: {w.message}" for w in seen_warnings
                      if not issubclass(w.category, DeprecationWarning)]
        return {
            "ok": True, "problems": problems, "warnings": caught, "queries_during": queries_during,
            "final_documents": sorted({n.node.ref_doc_id for r in finals for n in r.final}),
            "sparse_documents": sorted({n.node.ref_doc_id for n in sparse}),
            "sparse_revisions": sorted({int(m) for n in sparse for m in MARKER.findall(n.node.get_content())}),
            "indexed": sorted(documents),
            "overview_problem": problem,
            "overviews": None if overviews is None else dict(zip(overviews.doc_ids, overviews.hashes)),
            "hashes": {d: info.doc_hash for d, info in documents.items()},
            "vocabulary_before": sorted(t for t in vocabulary_before.postings if MARKER.fullmatch(t)),
            "vocabulary_after": sorted(t for t in vocabulary.postings if MARKER.fullmatch(t)),
        }
    except Exception:  # noqa: BLE001 - reported to the test, which fails on it
        return {"ok": False, "error": traceback.format_exc(), "problems": problems}


# -- two writers -------------------------------------------------------------------------------
def racing_writer(persist_dir: str, corpus: str, lock_timeout: float, barrier: Any) -> dict[str, Any]:
    """Index ``corpus`` (documents of its own) into the shared index once ``barrier`` lets both go."""
    warnings.simplefilter("ignore")
    try:
        rp = open_app(persist_dir)
        rp.lock_timeout = lock_timeout
        rp.index()  # loaded (and the table opened) before the other writer writes
        if barrier is not None:
            barrier.wait(timeout=300)
        _, report = rp.index_paths([corpus])
        return {"ok": True, "added": report.added}
    except RagPluginsError as exc:
        return {"ok": False, "type": type(exc).__name__, "error": str(exc)}
    except Exception:  # noqa: BLE001
        return {"ok": False, "type": "crash", "error": traceback.format_exc()}


def holding_writer(persist_dir: str, corpus: str, barrier: Any, holding: Any, release: Any) -> dict[str, Any]:
    """A writer that takes the lock, says so (``holding``), and writes ``corpus`` only once ``release``
    is set: the other writer meets a lock it cannot wait out."""
    warnings.simplefilter("ignore")
    try:
        rp = open_app(persist_dir)
        rp.index()
        barrier.wait(timeout=300)
        with rp._writing():  # the same (reentrant) lock index_paths takes
            holding.set()
            release.wait(timeout=300)
            _, report = rp.index_paths([corpus])
        return {"ok": True, "added": report.added}
    except Exception:  # noqa: BLE001
        return {"ok": False, "type": "crash", "error": traceback.format_exc()}


def waiting_loser(persist_dir: str, corpus: str, lock_timeout: float, barrier: Any, holding: Any,
                  release: Any) -> dict[str, Any]:
    """Writes ``corpus`` once the other writer holds the lock, with ``lock_timeout``; then lets it go on."""
    try:
        barrier.wait(timeout=300)
        holding.wait(timeout=300)
        return racing_writer(persist_dir, corpus, lock_timeout, None)
    finally:
        release.set()


def child(queue: Any, tag: str, fn: str, *args: Any) -> None:
    queue.put((tag, globals()[fn](*args)))
