"""Index time: a TransformComponent that annotates chunks with the references in their text."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any, cast

from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.schema import BaseNode, MetadataMode, TextNode, TransformComponent

from ragplugins import api
from ragplugins_crossref.corpus_state import DocRecord, Extracted, capitalised_words, fingerprint, keep_extracted
from ragplugins_crossref.families import BUILTIN_FAMILIES, ReferenceFamily
from ragplugins_crossref.resolve import DOC_KEY, REFS_KEY, Annotation, annotate, dump_refs
from ragplugins_crossref.scan import Profile

KEYS = (REFS_KEY, DOC_KEY)
# In a profile resolved without the index (a Ray worker's batch): the after-index step resolves the
# document again even when its content hash says it is unchanged (``ragplugins index --reindex``).
PARTIAL = '"partial":true'   # as Profile.to_json(partial=True) writes it


def is_partial(profile_json: Any) -> bool:
    """True for a stored profile its extractor marked as resolved without the index (a JSON string value
    cannot hold this text unescaped, so no title can fake it)."""
    return isinstance(profile_json, str) and PARTIAL in profile_json


def reading_position(metadata: Mapping[str, Any], start_char: int | None = None) -> tuple:
    """Reading order of a chunk in its document: the core's chunk index, else its character offset."""
    index = metadata.get(api.CHUNK_INDEX_KEY)
    return (index if isinstance(index, int) else -1, start_char or 0)


def chunk_position(node: BaseNode) -> tuple:
    return reading_position(node.metadata, cast(TextNode, node).start_char_idx)


def group_by_document(nodes: Sequence[BaseNode]) -> tuple[dict[str, list[BaseNode]], dict[str, dict]]:
    docs: dict[str, list[BaseNode]] = {}
    for node in nodes:
        if isinstance(getattr(node, "text", None), str):
            docs.setdefault(node.ref_doc_id or node.node_id, []).append(node)
    for chunks in docs.values():
        chunks.sort(key=chunk_position)
    return docs, {d: dict(chunks[0].metadata) for d, chunks in docs.items()}


def chunk_texts(docs: dict[str, list[BaseNode]]) -> dict[str, list[tuple[str, str]]]:
    """{doc id: [(chunk id, original text)] in reading order}."""
    return {d: [(n.node_id, n.get_content(metadata_mode=MetadataMode.NONE)) for n in chunks]
            for d, chunks in docs.items()}


def run_annotation(docs: dict[str, list[BaseNode]], metadata: dict[str, dict], families: Sequence[ReferenceFamily],
                   stored: dict[str, Profile], aliases: dict[str, list[str]], max_refs: int,
                   watch: bool = False) -> Annotation:
    anchors = {n.node_id: api.anchor_names(n.metadata) for chunks in docs.values() for n in chunks}
    return annotate(chunk_texts(docs), metadata, families, stored=stored, aliases=aliases, max_refs=max_refs,
                    watch=watch, anchors=anchors)


def doc_hash(first_metadata: Mapping[str, Any]) -> str:
    """A document's content hash, from its first chunk's metadata ("" when it has none)."""
    return str(first_metadata.get(api.DOC_HASH_KEY) or "")


def doc_record(content_hash: str, chunk_ids: Iterable[str], profile: Profile, reads: Iterable[str],
               capitals: frozenset[str]) -> DocRecord:
    """The state record of one annotated document."""
    return DocRecord(content_hash, tuple(sorted(chunk_ids)), profile, frozenset(reads), capitals)


def doc_records(docs: dict[str, list[BaseNode]], ann: Annotation) -> dict[str, DocRecord]:
    """The state records of annotated documents (``ann`` made with ``watch=True``)."""
    texts = chunk_texts(docs)
    return {d: doc_record(doc_hash(chunks[0].metadata), (n.node_id for n in chunks), ann.profiles[d],
                          ann.reads.get(d, ()), capitalised_words(t for _, t in texts[d]))
            for d, chunks in docs.items()}


def chunk_metadata(refs: list[dict[str, Any]], profile: Profile | None) -> dict[str, str]:
    """What a chunk holds after annotation: its references, and on a document's first chunk (``profile``
    given) the document's profile."""
    want = {REFS_KEY: dump_refs(refs)}
    if profile is not None:
        want[DOC_KEY] = profile.to_json()
    return want


def stored_profiles(ctx: api.RagContext | None, exclude: AbstractSet[str] = frozenset()) -> dict[str, Profile]:
    """Profiles of the documents already indexed (a bare one for documents indexed without us)."""
    if ctx is None or ctx.index is None:
        return {}
    out = {}
    for doc_id, info in ctx.list_documents().items():
        if doc_id in exclude:
            continue
        prof = Profile.from_json(doc_id, info.metadata.get(DOC_KEY))
        if prof is None:
            name = str(info.metadata.get("file_name") or info.metadata.get("file_path") or doc_id)
            prof = Profile(doc_id=doc_id, file_name=name.replace("\\", "/").rsplit("/", 1)[-1])
        out[doc_id] = prof
    return out


def exclude_keys(node: BaseNode) -> None:
    """Keep our keys out of the embedding and LLM text even in a pipeline without ragplugins."""
    api.hide_metadata(node, KEYS)


class CrossrefExtractor(TransformComponent):
    """Writes each chunk's references to ``metadata['crossref_refs']`` (a JSON list of
    ``{kind, ref, text, target, how[, chunk]}``, ``[]`` when it has none) and each document's
    profile (names, labels, sections, claims) to ``metadata['crossref_doc']`` on its first chunk.

    Text and vectors are never touched. References resolve against the documents in the batch,
    plus, inside ragplugins, the documents already in the store."""

    max_refs_per_chunk: int = Field(16, description="References kept per chunk (one per target document first).")
    aliases: dict[str, list[str]] = Field(default_factory=dict, description="Extra names, by doc id or file name.")
    family_names: list[str] = Field(
        default_factory=list, description="The reference families in use (for the cache key)."
    )
    _families: tuple[ReferenceFamily, ...] = PrivateAttr(default=BUILTIN_FAMILIES)
    _ctx: api.RagContext | None = PrivateAttr(default=None)

    def __init__(self, families: Sequence[ReferenceFamily] | None = None, ctx: api.RagContext | None = None,
                 **data: Any):
        fams = tuple(families) if families is not None else BUILTIN_FAMILIES
        data.setdefault("family_names", [f"{f.name}:{f.kind}:{f.pattern.pattern}"
                                         + (f":defines:{f.defines.pattern}" if f.defines is not None else "")
                                         for f in fams])
        super().__init__(**data)
        self._families = fams
        self._ctx = ctx

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins_crossref.CrossrefExtractor"

    @property
    def families(self) -> tuple[ReferenceFamily, ...]:
        return self._families

    @property
    def made_with(self) -> str:
        """Names the settings the references depend on (corpus_state keeps records only for the same)."""
        return fingerprint(self.family_names, self.aliases, self.max_refs_per_chunk)

    @property
    def settings(self) -> dict[str, Any]:
        """The settings :attr:`made_with` names, by their config keys: kept with the records, so ``ragplugins
        check`` can say which one the stored references were made with differs from the config."""
        return {"max_refs_per_chunk": self.max_refs_per_chunk, "aliases": dict(sorted(self.aliases.items())),
                "families": list(self.family_names)}

    def _index_id(self) -> str | None:
        if self._ctx is None or self._ctx.index is None:
            return None
        try:
            return str(self._ctx.index_id)
        except Exception:  # noqa: BLE001 - a host store without an id: nothing is kept for its after-index step
            return None

    def __call__(self, nodes: Sequence[BaseNode], **kwargs: Any) -> Sequence[BaseNode]:
        docs, metadata = group_by_document(nodes)
        stored = stored_profiles(self._ctx, set(docs))
        index_id = self._index_id()
        ann = run_annotation(docs, metadata, self._families, stored, self.aliases, self.max_refs_per_chunk,
                             watch=index_id is not None)
        if index_id is not None:
            # Inside ragplugins the after-index step follows in this process: it takes these records instead
            # of reading and resolving the batch again (corpus_state).
            keep_extracted(index_id, self.made_with,
                           Extracted({**stored, **ann.profiles}, doc_records(docs, ann)))
        # Inside ragplugins without the index: what a Ray worker sees (its batch only).
        partial = self._ctx is not None and index_id is None
        for doc_id, chunks in docs.items():
            for node in chunks:
                node.metadata[REFS_KEY] = dump_refs(ann.refs.get(node.node_id, []))
                exclude_keys(node)
            chunks[0].metadata[DOC_KEY] = ann.profiles[doc_id].to_json(partial=partial)
        api.record("crossref", "extract", documents=len(docs), **ann.stats())
        return nodes
