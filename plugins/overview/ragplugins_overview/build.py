"""Index time: bring the sidecar in line with the index, rebuilding only what changed.

The sidecar is compared with the documents in the index (id and content hash): overviews of
deleted documents are dropped, new and changed documents get a new overview, and the rest are
kept as they are. The same comparison brings an index built before the plugin was enabled up
to date, and replaces a sidecar that does not fit the index (other embedder, other index).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from llama_index.core.prompts import PromptTemplate
from llama_index.core.schema import BaseNode

from ragplugins import api
from ragplugins.api import CHUNK_INDEX_KEY, RagPluginsError, record
from ragplugins_overview.config import OverviewConfig
from ragplugins_overview.corpus_terms import CorpusTerms, TermsLocation
from ragplugins_overview.documents import DocumentText, TermStatistics, documents_from_nodes, documents_from_rows
from ragplugins_overview.extractive import ExtractiveOverviewWriter
from ragplugins_overview.llm_writer import LLMOverviewWriter
from ragplugins_overview.sidecar import Overviews, SidecarError, location_for

logger = logging.getLogger(__name__)

# Chunk ids per read by id (an IN list of this many stays a short query).
_IDS_PER_READ = 512

LLM_FAILED = "extractive (llm failed)"


@dataclass
class UpdateReport:
    written: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    llm_failed: list[str] = field(default_factory=list)
    replaced_sidecar: str | None = None
    # What changed in OverviewConfig.writer_settings() since the stored overviews were written.
    settings_changed: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    location: str = ""
    # The kept stems of the corpus were unusable or missing, so every document was read and scanned.
    terms_rescanned: bool = False


class OverviewLLMMissing(RagPluginsError, ValueError):
    """overview = 'llm' without an LLM: a config problem the user fixes, said in one line."""


def require_llm(config: OverviewConfig, ctx: api.RagContext) -> None:
    if config.overview == "llm" and ctx.llm is None:
        raise OverviewLLMMissing(
            "[ragplugins.overview] overview = 'llm' needs the host's LLM, and none was given: pass "
            "llm=... to ragplugins.load(), or set overview = 'extractive' (no LLM needed)"
        )


def _writers(config: OverviewConfig) -> tuple[ExtractiveOverviewWriter, LLMOverviewWriter | None]:
    extractive = ExtractiveOverviewWriter(key_terms=config.key_terms)
    if config.overview != "llm":
        return extractive, None
    llm = LLMOverviewWriter(head_chars=config.head_chars)
    if config.llm_prompt is not None:
        llm.update_prompts({"overview_prompt": PromptTemplate(config.llm_prompt)})
    return extractive, llm


def update_overviews(config: OverviewConfig, ctx: api.RagContext, nodes: Sequence[BaseNode] = (),
                     rebuild: bool = False) -> UpdateReport:
    """Write overviews for new and changed documents, drop those of deleted ones (``rebuild``: all)."""
    require_llm(config, ctx)
    location = location_for(ctx)
    report = UpdateReport(location=location.label)
    try:
        current = location.read()
    except SidecarError as exc:
        current, report.replaced_sidecar = None, str(exc)
    if current is not None:
        problem = current.problem_for(ctx.embedder_id, location.index_id)
        if problem:
            current, report.replaced_sidecar = None, problem
    if report.replaced_sidecar:
        warnings.warn(f"ragplugins overview: replacing the sidecar {location.label} ({report.replaced_sidecar}); "
                      "every overview is rebuilt", stacklevel=2)
    settings = config.writer_settings()
    report.settings_changed = {} if current is None else current.writer_changes(settings)
    if report.settings_changed:
        logger.info("overview: the writer settings changed (%s); every overview is rewritten",
                    report.settings_changed)
    indexed = ctx.list_documents()
    batch = documents_from_nodes(nodes)
    stored = {} if current is None else current.entries()
    old = {} if rebuild or report.settings_changed else stored
    # The batch's documents were just (re)written; the others are kept while their content hash matches,
    # except LLM overviews that failed last time, which are tried again.
    keep = {d: e for d, e in old.items()
            if d in indexed and d not in batch and indexed[d].doc_hash and e[0] == indexed[d].doc_hash
            and not (config.overview == "llm" and e[2] == LLM_FAILED)}
    report.kept = sorted(keep)
    report.removed = sorted(set(stored) - set(indexed))
    todo = sorted(set(indexed) - set(keep))
    if not todo and not report.removed and current is not None:
        return report

    # Distinctive terms are relative to the whole corpus: its stems are kept by document (corpus_terms), so
    # only the documents this write touched, and those the kept stems do not cover, are read and scanned.
    terms_location = TermsLocation(ctx)
    corpus = terms_location.read()
    report.terms_rescanned = corpus is None
    if corpus is None:
        corpus = CorpusTerms()
    docs, stats = batch, None
    if todo:
        scan = corpus.stale(indexed) | set(batch)
        docs = {**batch, **_read_documents(ctx, indexed, (scan | set(todo)) - set(batch))}
        corpus.update(indexed, [docs[d] for d in sorted(scan) if d in docs])
        stats = corpus.statistics()
    else:
        corpus.update(indexed, [])
    written = _write(config, ctx, {d: docs[d] for d in todo if d in docs}, stats, report)

    entries = {**keep, **written}
    ids = sorted(entries)
    rows = [entries[d] for d in ids]
    matrix = np.vstack([r[3] for r in rows]).astype(np.float32) if rows else np.zeros((0, 0), dtype=np.float32)
    location.write(Overviews(ids, [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], matrix,
                             ctx.embedder_id, location.index_id, writer=settings))
    if todo or not report.terms_rescanned:
        terms_location.write(corpus)
    report.written = sorted(written)
    record("overview", "index", written=len(report.written), kept=len(report.kept),
           removed=len(report.removed), llm_failed=report.llm_failed,
           settings_changed=sorted(report.settings_changed), location=report.location)
    logger.info("overview: %d written, %d kept, %d removed (%s)", len(report.written), len(report.kept),
                len(report.removed), report.location)
    return report


def stale_overviews(config: OverviewConfig, ctx: api.RagContext) -> list[str]:
    """What is out of line between the stored overviews and the index ([] when every document has its
    overview for its current content)."""
    location = location_for(ctx)
    try:
        current = location.read()
    except SidecarError as exc:
        return [f"the sidecar {location.label} is not usable: {exc}"]
    indexed = ctx.list_documents()
    if current is None:
        return [f"the sidecar {location.label} does not exist"] if indexed else []
    problem = current.problem_for(ctx.embedder_id, location.index_id)
    if problem:
        return [f"the sidecar {location.label} does not fit the index: {problem}"]
    stored = current.entries()
    missing = sorted(d for d, info in indexed.items() if d not in stored or stored[d][0] != info.doc_hash)
    extra = sorted(set(stored) - set(indexed))
    out = []
    changed = current.writer_changes(config.writer_settings())
    if changed:
        # The writer's version is the plugin's, not a setting the config can change back.
        said = [f"the extractive writer's version: {old} in the index, {new} in this version of the plugin"
                if key == "extractive_version" else
                f"overview.{key}: {api.short_value(old)} in the index, {api.short_value(new)} in the config"
                for key, (old, new) in changed.items()]
        out.append(f"the overviews were written with other settings ({'; '.join(said)}); "
                   "'ragplugins check --repair' writes them again")
    if missing:
        out.append(f"{len(missing)} documents have no overview for their current content ({', '.join(missing[:3])})")
    if extra:
        out.append(f"{len(extra)} overviews are of documents no longer indexed ({', '.join(extra[:3])})")
    return out


def rebuild(rag: Any) -> UpdateReport:
    """Write every overview of ``rag``'s index again from its stored chunks."""
    if "overview" not in rag.config.enabled:
        raise ValueError("the overview plugin is not enabled: add \"overview\" to enable = [...] in [ragplugins]")
    return update_overviews(rag.config.for_plugin("overview"), rag.context(rag.index()), rebuild=True)


def _read_documents(ctx: api.RagContext, indexed: dict[str, Any], doc_ids: set[str]) -> dict[str, DocumentText]:
    """The stored text of ``doc_ids``: their chunks by id, or, when they are most of the index, every
    chunk's text and position once (no node or vector: a first build on Ray reads the whole index here)."""
    if not doc_ids:
        return {}
    if 2 * len(doc_ids) > len(indexed):
        return documents_from_rows(ctx.store.iter_chunk_rows([CHUNK_INDEX_KEY]),
                                   {d: indexed[d].metadata for d in doc_ids if d in indexed})
    node_ids = [nid for d in sorted(doc_ids) if d in indexed for nid in indexed[d].node_ids]
    nodes = [n for i in range(0, len(node_ids), _IDS_PER_READ)
             for n in ctx.store.get_nodes(node_ids[i:i + _IDS_PER_READ])]
    return documents_from_nodes(nodes)


def _write(config: OverviewConfig, ctx: api.RagContext, todo: dict[str, DocumentText], stats: TermStatistics | None,
           report: UpdateReport) -> dict[str, tuple[str, str, str, np.ndarray]]:
    if not todo or stats is None:
        return {}
    extractive, llm = _writers(config)
    texts: dict[str, tuple[str, str]] = {}
    for doc_id, doc in todo.items():
        fallback = extractive.write(doc, stats)
        if llm is None:
            texts[doc_id] = (fallback, "extractive")
            continue
        try:
            texts[doc_id] = (llm.write(ctx.llm, doc, title=extractive.title(doc)), "llm")
        except Exception as exc:  # noqa: BLE001 - one failing document must not fail the batch
            report.llm_failed.append(doc_id)
            warnings.warn(f"ragplugins overview: the LLM overview of '{doc_id}' failed ({type(exc).__name__}: "
                          f"{exc}); using the extractive overview for it", stacklevel=3)
            texts[doc_id] = (fallback, LLM_FAILED)
    order = list(texts)
    embeddings: np.ndarray = np.asarray(ctx.embed_model.get_text_embedding_batch([texts[d][0] for d in order]),
                            dtype=np.float32)
    norms = np.linalg.norm(embeddings, axis=1, keepdims=True)
    embeddings = embeddings / np.where(norms > 0, norms, 1.0)
    out = {}
    for doc_id, vector in zip(order, embeddings):
        if not np.any(vector):
            warnings.warn(f"ragplugins overview: the overview of '{doc_id}' embedded to a zero vector; "
                          "that document gets no overview", stacklevel=3)
            continue
        out[doc_id] = (todo[doc_id].doc_hash, texts[doc_id][0], texts[doc_id][1], vector)
    return out
