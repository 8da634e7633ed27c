"""``ragplugins check [--repair]``: verify an embedded index on disk, and fix what can be fixed.

What is checked, in order (a later check needs the earlier ones to pass):

1. the manifest: readable, ragplugins' own, present when the store holds rows;
2. the table: every row readable (a damaged data file or version record shows here);
3. an unfinished write left by a stopped process (the journal);
4. the rows: no duplicate chunk ids; every document's chunks numbered 0..n-1 with one content hash;
5. the embedder: the manifest's identity is this config's, and it reproduces sampled stored vectors;
6. each plugin's own state (the ``ragplugins_check_index`` hook).

``repair``: a manifest rebuilt after the embedder is verified against the stored vectors; a table that
cannot be read rolled back to its newest readable version; the journal completed; duplicates and
damaged documents removed (the next ``ragplugins index PATH`` adds them back); the plugins' state
rebuilt from the rows. Nothing is repaired by guessing: an embedder that does not
reproduce the stored vectors is reported, never recorded.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ragplugins.errors import RagPluginsError, StoreError
from ragplugins.writes import Journal

# A stored vector and the same text embedded again agree this closely when the embedder is the same.
SAME_EMBEDDER_COSINE = 0.999
SAMPLE_ROWS = 3


@dataclass
class Finding:
    problem: str
    repaired: str | None = None


@dataclass
class CheckReport:
    persist_dir: str
    findings: list[Finding] = field(default_factory=list)
    documents: int = 0
    rows: int = 0

    @property
    def ok(self) -> bool:
        return all(f.repaired for f in self.findings)

    def add(self, problem: str, repaired: str | None = None) -> None:
        self.findings.append(Finding(problem, repaired))


def _table(rp: Any):
    import lancedb

    home = rp.home
    db = lancedb.connect(home.lancedb_uri, storage_options=home.storage_options())
    name = rp.config.core.table
    if name not in db.table_names():
        return db, None
    return db, db.open_table(name)


def _readable_version(table: Any) -> int | None:
    """The newest version of ``table`` whose rows can all be read."""
    versions = [v["version"] if isinstance(v, dict) else v.version for v in table.list_versions()]
    for version in sorted(versions, reverse=True):
        try:
            table.checkout(version)
            table.to_arrow()
            return version
        except Exception:  # noqa: BLE001 - a damaged version: try the one before
            continue
    return None


def _embedder_reproduces(rp: Any, table: Any) -> tuple[bool, float | None]:
    """Whether this config's embedder gives the stored vectors of a few rows again."""
    from llama_index.core.schema import MetadataMode
    from llama_index.core.vector_stores.utils import metadata_dict_to_node

    rows = table.search().limit(SAMPLE_ROWS).to_arrow().to_pylist()
    if not rows:
        return True, None
    texts = [metadata_dict_to_node(r["metadata"]).get_content(metadata_mode=MetadataMode.EMBED) for r in rows]
    fresh = np.asarray(rp.embed_model.get_text_embedding_batch(texts), dtype=np.float64)
    stored = np.asarray([r["vector"] for r in rows], dtype=np.float64)
    if fresh.shape != stored.shape:
        return False, None
    cos = (fresh * stored).sum(1) / (np.linalg.norm(fresh, axis=1) * np.linalg.norm(stored, axis=1) + 1e-12)
    return bool(cos.min() >= SAME_EMBEDDER_COSINE), float(cos.min())


def check_index(rp: Any, repair: bool = False) -> CheckReport:
    from ragplugins.app import MANIFEST
    from ragplugins.embeddings import embedder_identity
    from ragplugins.stores.lancedb import recorded_index_uid

    home = rp.home
    if home is None:
        raise RagPluginsError("`check` verifies the embedded index under persist_dir; this app gave its own "
                              "vector store, which ragplugins does not own")
    report = CheckReport(str(home))
    if not home.exists():
        raise StoreError(f"no index in '{home}' (persist_dir); build one with `ragplugins index PATH`")
    with rp._writing():
        # 1-2: manifest and table
        try:
            db, table = _table(rp)
            if table is not None:
                table.to_arrow()
        except Exception as exc:  # noqa: BLE001 - lance reports damage with many types
            problem = f"the table cannot be read ({str(exc).splitlines()[0].split(', /')[0][:200]})"
            if not repair:
                report.add(problem)
                return report
            try:
                db, table = _table(rp)
                version = _readable_version(table) if table is not None else None
            except Exception:  # noqa: BLE001
                version = None
            if version is None:
                report.add(problem, None)
                report.add(f"no readable version of the table is left: remove '{home.location('lancedb')}' and "
                           "index again")
                return report
            table.restore(version)
            report.add(problem, f"rolled back to version {version}, the newest readable one; "
                                "`ragplugins index PATH` adds back what was written after it")
        identity = embedder_identity(rp.embed_model)
        try:
            manifest = rp._manifest()
            manifest_problem = None if manifest or table is None else f"{MANIFEST} is missing"
        except StoreError as exc:
            manifest, manifest_problem = {}, str(exc).split(";")[0]
            if "not a ragplugins manifest" in str(exc):
                report.add(str(exc))  # another program's file: never overwritten
                return report
        if manifest_problem:
            same, cos = _embedder_reproduces(rp, table)
            if not repair:
                report.add(manifest_problem)
            elif not same:
                report.add(manifest_problem, None)
                report.add(f"the embedder '{identity}' does not reproduce the stored vectors (cosine {cos}), so "
                           f"{MANIFEST} is not rebuilt: run check --repair with the config of the embedder that "
                           "built the index")
                return report
            else:
                index_id = recorded_index_uid(home) or str(uuid.uuid4())
                home.write_text(MANIFEST, json.dumps(
                    {"embedder": identity, "table": rp.config.core.table, "index_id": index_id}, indent=2))
                report.add(manifest_problem, f"rebuilt with embedder '{identity}' (it reproduces the stored "
                                             f"vectors, cosine {cos:.4f})" if cos is not None else "rebuilt")
                manifest = rp._manifest()
        if not manifest_problem or repair:
            recorded = manifest.get("embedder")
            if recorded and recorded != identity:
                report.add(f"the index was built with embedder '{recorded}', this config loads '{identity}'")
                return report
        if table is None:
            return report
        if manifest_problem and not repair:
            return report
        # 3: journal
        journal = Journal(home)
        pending = journal.pending()
        index = rp.index()  # opening it completes a pending journal (this process holds the lock)
        if pending is not None:
            if repair or journal.pending() is None:
                report.add(f"a {pending['op']} was left unfinished by a stopped process",
                           "completed" if journal.pending() is None else None)
            else:
                report.add(f"a {pending['op']} was left unfinished by a stopped process")
        store = index.vector_store
        # 4: rows
        rows = store.document_rows({"id": "id", "doc": store.doc_id_key, "chunk": "metadata.ragplugins_chunk_index",
                                    "hash": "metadata.ragplugins_doc_hash"})
        report.rows = len(rows)
        ids: dict[str, int] = {}
        by_doc: dict[str, list[dict]] = {}
        for row in rows:
            ids[row["id"]] = ids.get(row["id"], 0) + 1
            if ids[row["id"]] == 1:  # a duplicate is its own finding, not a damaged document
                by_doc.setdefault(row["doc"], []).append(row)
        report.documents = len(by_doc)
        duplicates = sorted(i for i, n in ids.items() if n > 1)
        damaged = sorted(d for d, rs in by_doc.items()
                         if len({r["hash"] for r in rs}) > 1
                         or sorted(r["chunk"] for r in rs if r["chunk"] is not None) != list(range(len(rs))))
        if duplicates:
            fix = None
            if repair:
                store.deduplicate()
                fix = "kept one row per id"
            report.add(f"{len(duplicates)} chunk ids are stored more than once (e.g. {duplicates[0]})", fix)
        if damaged:
            fix = None
            if repair:
                rp._remove_rows(index, damaged, {})
                fix = "removed their rows; `ragplugins index PATH` adds them back"
            report.add(f"{len(damaged)} documents have missing or mixed chunks ({', '.join(damaged[:3])})", fix)
        # 5: embedder
        same, cos = _embedder_reproduces(rp, store.table)
        if not same:
            report.add(f"the stored vectors were not made by embedder '{identity}' (cosine {cos}); re-index into a "
                       "new persist_dir")
        # 6: the plugins' state
        ctx = rp.context(index)
        plugin_problems: list[str] = []
        for record in rp.enabled:
            for found in rp.registry.call(record, "ragplugins_check_index", config=rp.config.for_plugin(record.name),
                                          ctx=ctx):
                plugin_problems.extend(f"plugin '{record.name}': {p}" for p in found)
        if plugin_problems:
            if repair:
                rp._after_write(index, [], [])
                again = [p for record in rp.enabled
                         for found in rp.registry.call(record, "ragplugins_check_index",
                                                       config=rp.config.for_plugin(record.name), ctx=ctx)
                         for p in found]
            for problem in plugin_problems:
                report.add(problem, ("rebuilt from the rows" if not again else None) if repair else None)
    return report


def persist_dir_problems(rp: Any) -> list[str]:
    """What `config check` can tell without loading a model or opening the index: an embed_model that cannot
    load offline; persist_dir writable and ragplugins' own."""
    import os

    from ragplugins.embeddings import offline_model_problem

    if rp._embed_model is None and (problem := offline_model_problem(rp.config.core.embed_model)):
        return [problem]
    if rp.persist_dir is None:
        return []
    path = Path(rp.persist_dir)
    existing = next(p for p in (path, *path.parents) if p.exists())
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        return [f"persist_dir = '{path}': '{existing}' is not a writable directory; point persist_dir elsewhere "
                "or fix its permissions"]
    try:
        if not rp._manifest():
            rp._refuse_foreign_directory()
    except StoreError as exc:
        return [str(exc)]
    return []
