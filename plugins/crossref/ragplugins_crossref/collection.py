"""Resolving every stored chunk's references again without holding the collection in memory.

When no record vouches for any document (the after-index step of a Ray build, whose workers resolved
each batch alone; the plugin state missing or made with other settings; ``check --repair``) and for
``ragplugins check``, every document is read and resolved again. The chunks are read from the store
twice, a document at a time (its rows are buffered until all of them arrived, in whatever order the
store yields them):

1. each document's profile, its capitalised words, and digests of what its chunks hold;
2. against the registry of every profile: each chunk's raw references (kept for the chunks that have
   any) and each document's claims.

Then each document is resolved, and its chunks whose references or profile differ from what they
hold are patched, in groups of whole documents written as they fill. Held at once: the profiles and
the registry, the raw references, 8 bytes a chunk, one document's rows and one group of patches;
never the collection's text. The steps are ``resolve.Resolution``'s, the ones ``annotate`` takes
over chunks in memory, so the result is the same.

What a chunk holds is compared by digest rather than by a third read of every row: 8 bytes a chunk
(80 MB at ten million chunks) against another pass over the table's text, which on object storage
is the slowest part of the work.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragplugins.api import ChunkRow, anchor_names
from ragplugins_crossref.corpus_state import DocRecord, capitalised_words
from ragplugins_crossref.resolve import DOC_KEY, REFS_KEY, Resolution
from ragplugins_crossref.scan import Profile, RawRef, build_profile
from ragplugins_crossref.transform import CrossrefExtractor, chunk_metadata, doc_hash, doc_record, reading_position

# Chunks one metadata update patches at most (their metadata is read into memory: about 150 MB).
PATCH_GROUP_CHUNKS = 50_000
DIGEST_BYTES = 8
Patches = dict[str, dict[str, str]]


def held_digest(value: Any) -> bytes:
    """A stored metadata value as compared with what it should be (a string): equal strings give equal
    digests; anything else (a missing key) a digest no string gives but by a 2**-64 chance."""
    raw = b"s" + value.encode("utf-8", "surrogatepass") if isinstance(value, str) else b"o" + repr(value).encode()
    return hashlib.blake2b(raw, digest_size=DIGEST_BYTES).digest()


class PatchGroups:
    """Patches in groups of whole documents of up to ``most`` chunks, each written as one metadata update
    once the next document would not fit: a reader sees each document's references all before or all
    after, and a group's metadata fits in memory."""

    def __init__(self, write: Callable[[Patches], Any], most: int | None = None):
        self.write, self.most = write, most if most is not None else PATCH_GROUP_CHUNKS
        self.group: Patches = {}
        self.written = 0

    def add(self, document: Patches) -> None:
        """The patches of one document's chunks."""
        if self.group and len(self.group) + len(document) > self.most:
            self.flush()
        self.group.update(document)

    def flush(self) -> None:
        if self.group:
            self.write(self.group)
            self.written += len(self.group)
            self.group = {}


@dataclass(slots=True)
class _Document:
    """What the passes keep of one document: its chunk ids in reading order, its content hash and
    capitalised words, digests of what its chunks hold (each one's references,
    then the first one's profile) and, once scanned, the raw references of the chunks that have any."""

    ids: tuple[str, ...]
    content_hash: str
    capitals: frozenset[str]
    held: bytes
    raws: dict[str, list[RawRef]] | None = None

    def holds(self, position: int, key: str, value: str) -> bool:
        at = position * DIGEST_BYTES if key == REFS_KEY else len(self.ids) * DIGEST_BYTES
        return self.held[at:at + DIGEST_BYTES] == held_digest(value)


@dataclass
class CollectionResult:
    patched: int = 0                  # chunks whose stored references or profile differed
    documents: int = 0                # documents read
    resolved: int = 0                 # documents read both times and resolved
    never_annotated: int = 0          # documents none of whose chunks holds references (stored without crossref)
    records: dict[str, DocRecord] = field(default_factory=dict)   # with ``watch``


def whole_documents(rows: Iterable[ChunkRow], expected: Mapping[str, Sequence[str]],
                    only: set[str] | None = None) -> Iterator[tuple[str, list[ChunkRow]]]:
    """Each document's rows (in the order they came), once as many came as it has ``expected`` chunk ids; the
    rows of a document ``expected`` does not list (or still missing some) at the end. ``only``: the documents
    wanted (the others' rows are skipped); a row of a document already given (written since the store
    listed it) too."""
    waiting: dict[str, list[ChunkRow]] = {}
    given: set[str] = set()
    for row in rows:
        doc_id = row.doc_id or row.id
        if (only is not None and doc_id not in only) or doc_id in given:
            continue
        got = waiting.setdefault(doc_id, [])
        got.append(row)
        if len(got) == len(expected.get(doc_id, ())):
            given.add(doc_id)
            yield doc_id, waiting.pop(doc_id)
    yield from waiting.items()


def resolve_stored(store: Any, listed: Mapping[str, Sequence[str]], extractor: CrossrefExtractor, *, watch: bool,
                   write: Callable[[Patches], Any] | None, only: set[str] | None = None,
                   most: int | None = None) -> CollectionResult:
    """Resolve every stored document (``only`` those, when given) and patch (``write``, None: count only)
    each chunk whose references or profile differ. ``listed``: each document's chunk ids, as the store
    lists them. ``watch``: also make each document's state record."""
    families = extractor.families
    docs: dict[str, _Document] = {}
    profiles: dict[str, Profile] = {}
    never_annotated = 0
    for doc_id, rows in whole_documents(store.iter_chunk_rows(None), listed, only):
        never_annotated += not any(REFS_KEY in r.metadata for r in rows)
        rows.sort(key=lambda r: reading_position(r.metadata))
        # The listed id strings, not the rows' copies: a chunk id is held once however many hold it.
        same = {i: i for i in listed.get(doc_id, ())}
        texts = [(r.id, r.text) for r in rows]
        profiles[doc_id] = build_profile(doc_id, texts, dict(rows[0].metadata), families,
                                         {r.id: anchor_names(r.metadata) for r in rows})
        held = b"".join(held_digest(r.metadata.get(REFS_KEY)) for r in rows)
        held += held_digest(rows[0].metadata.get(DOC_KEY))
        docs[doc_id] = _Document(tuple(same.get(r.id, r.id) for r in rows), doc_hash(rows[0].metadata),
                                 capitalised_words(t for _, t in texts) if watch else frozenset(), held)

    steps = Resolution(profiles, families, aliases=extractor.aliases, max_refs=extractor.max_refs_per_chunk,
                       watch=watch)
    for doc_id, rows in whole_documents(store.iter_chunk_rows(()), {d: doc.ids for d, doc in docs.items()},
                                        set(docs)):
        doc = docs[doc_id]
        text = {r.id: r.text for r in rows}
        scanned = steps.scan(doc_id, [(cid, text[cid]) for cid in doc.ids if cid in text])
        steps.claim(doc_id, scanned)
        doc.raws = {cid: raws for cid, raws in scanned if raws}
    steps.claims_done()

    result = CollectionResult(documents=len(docs), never_annotated=never_annotated)
    groups = PatchGroups(write or (lambda group: None), most)
    for doc_id in list(docs):
        doc = docs.pop(doc_id)   # what is resolved is let go
        if doc.raws is None:
            continue   # its rows were gone by the second read: the next write resolves it again
        refs = steps.resolve(doc_id, doc.raws.items())
        mine: Patches = {}
        for i, cid in enumerate(doc.ids):
            want = chunk_metadata(refs.get(cid, []), profiles[doc_id] if i == 0 else None)
            diff = {k: v for k, v in want.items() if not doc.holds(i, k, v)}
            if diff:
                mine[cid] = diff
        groups.add(mine)
        result.resolved += 1
        if watch:
            result.records[doc_id] = doc_record(doc.content_hash, doc.ids, profiles[doc_id],
                                                steps.noted.get(doc_id, ()), doc.capitals)
    groups.flush()
    result.patched = groups.written
    return result
