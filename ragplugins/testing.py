"""Test helpers for ragplugins and for third-party plugins (a pytest plugin you opt into).

Installing ragplugins does not load it into every test suite (it imports LlamaIndex, which would
slow an unrelated host's tests). A plugin's tests opt in with ``-p ragplugins.testing`` (in
``[tool.pytest.ini_options] addopts``) or with ``from ragplugins.testing import *`` in a
``conftest.py``. Fixtures:

- ``rag_registry``: a fresh plugin registry with no entry points loaded;
- ``tiny_corpus``: a directory of four small documents that reference each other;
- ``bundled_embed_model``: the bundled all-MiniLM-L6-v2 (session-scoped);
- ``rag_persist_dir``: a temporary directory for an embedded LanceDB index;
- ``fake_llm``: a deterministic LLM (:class:`FakeLLM`).

:func:`make_rag` builds a RagPlugins around plugin objects, :func:`command_group` is the CLI for
``CliRunner``, :func:`current_filters` serves a test double of the context's searches,
:class:`PluginConformance` is a test class any plugin subclasses to check itself against the
contract, and :func:`check_store_adapter` runs the store tests against any store adapter
(ragplugins.stores). Run a plugin component on its own with ``ragplugins.api.query_scope``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.base.llms.types import CompletionResponse, CompletionResponseGen, LLMMetadata
from llama_index.core.llms import CustomLLM
from llama_index.core.llms.callbacks import llm_completion_callback
from pydantic import BaseModel, ConfigDict

from ragplugins.app import RagPlugins, load
from ragplugins.contributions import STAGES, Contribution, PluginInfo
from ragplugins.plugins import PluginRegistry
from ragplugins.stores.base import CORE_ONLY_KEYS

TINY_CORPUS = {
    "master_agreement.md": (
        "# Master Services Agreement\n\n"
        "This Master Services Agreement is made between Acme Corp and Globex Ltd.\n\n"
        "## Section 1 Fees\n\nThe annual fee is 120,000 EUR, payable quarterly as set out in Exhibit A.\n\n"
        "## Section 2 Term\n\nThe agreement runs for three years from 1 March 2024. Termination rights are "
        "described in the Termination Policy.\n"),
    "exhibit_a.md": (
        "# Exhibit A - Payment Schedule\n\n"
        "Payments under the Master Services Agreement are due on 1 January, 1 April, 1 July and 1 October. "
        "Late payments accrue interest at 4 percent per year.\n"),
    "termination_policy.md": (
        "# Termination Policy\n\n"
        "Either party may terminate with 90 days written notice. Section 1 of the Master Services Agreement "
        "still applies to fees owed until termination.\n"),
    "espresso_manual.md": (
        "# Espresso Machine Manual\n\n"
        "Descale the boiler every 200 cycles with citric acid. The pump pressure should read 9 bar. "
        "Replace the gasket with part code GK-4471 when it leaks.\n"),
}


def write_tiny_corpus(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in TINY_CORPUS.items():
        (directory / name).write_text(text, encoding="utf-8")
    return directory


class FakeLLM(CustomLLM):
    """A deterministic LLM: answers with ``responder(prompt)`` or the next scripted reply."""

    replies: list[str] = []
    prompts: list[str] = []
    responder: Callable[[str], str] | None = None

    model_config = ConfigDict(arbitrary_types_allowed=True)

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins.testing.FakeLLM"

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="fake-llm", is_chat_model=False)

    def _reply(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if self.responder is not None:
            return self.responder(prompt)
        if self.replies:
            return self.replies.pop(0)
        return ""

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self._reply(prompt))

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        text = self._reply(prompt)

        def gen() -> CompletionResponseGen:
            yield CompletionResponse(text=text, delta=text)

        return gen()


def command_group():
    """The ``ragplugins`` click group with every installed plugin's commands, for ``CliRunner``."""
    from ragplugins.cli import get_cli, registry

    group = get_cli()
    reg = registry()
    for record in reg.loaded().values():
        reg.call(record, "ragplugins_register_commands", cli=group)
    return group


def current_filters() -> Any:
    """The host's filters known for the query being answered (None: none, or no query open): what a
    test double of ``RagContext.search_within_documents`` searches with."""
    from ragplugins import query_inputs

    inputs = query_inputs.current()
    return inputs.filters if inputs is not None and inputs.filters_known else None


def fake_answering_llm() -> FakeLLM:
    """A zero-argument LLM factory for configs (``llm = "ragplugins.testing:fake_answering_llm"``)."""
    return FakeLLM(responder=lambda prompt: "fake answer (from FakeLLM)")


def make_rag(plugins: Iterable[Any] = (), config: dict | None = None, *, embed_model: Any = None,
             llm: Any = None, vector_store: Any = None, persist_dir: str | Path | None = None) -> RagPlugins:
    """A RagPlugins over exactly ``plugins`` (no entry points). Every given plugin is enabled
    unless ``config['enable']`` says otherwise."""
    registry = PluginRegistry()
    names = []
    for plugin in plugins:
        record = registry.register(plugin)
        if not record.loaded:
            raise AssertionError(f"plugin failed to register: {record.error}")
        names.append(record.name)
    registry.check_pending()
    cfg = dict(config or {})
    cfg.setdefault("enable", names)
    if persist_dir is not None:
        cfg.setdefault("persist_dir", str(persist_dir))
    return load(cfg, embed_model=embed_model, llm=llm, vector_store=vector_store, registry=registry)


def index_tiny_corpus(root: Path, plugins: Iterable[Any] = (), *, embed_model: Any = None) -> RagPlugins:
    """The tiny corpus written under ``root/corpus`` and indexed into ``root/idx`` with ``plugins``
    registered but disabled, so one index can serve every config a test module tries
    (open it again with ``make_rag(..., persist_dir=root / "idx")``)."""
    corpus = write_tiny_corpus(root / "corpus")
    rag = make_rag(plugins, {"enable": []}, embed_model=embed_model, persist_dir=root / "idx")
    rag.index_paths([corpus])
    return rag


@pytest.fixture
def rag_registry() -> PluginRegistry:
    return PluginRegistry()


@pytest.fixture
def tiny_corpus(tmp_path: Path) -> Path:
    return write_tiny_corpus(tmp_path / "corpus")


@pytest.fixture(scope="session")
def bundled_embed_model():
    from ragplugins.embeddings import load_embed_model

    return load_embed_model()


@pytest.fixture
def rag_persist_dir(tmp_path: Path) -> Path:
    return tmp_path / "index"


@pytest.fixture
def fake_llm() -> FakeLLM:
    return FakeLLM(replies=[], prompts=[])


# What `from ragplugins.testing import *` in a conftest.py brings: the fixtures (the helpers are imported by name).
__all__ = ["bundled_embed_model", "fake_llm", "rag_persist_dir", "rag_registry", "tiny_corpus"]


class PluginConformance:
    """Subclass in your plugin's tests and set ``plugin`` (the module or object
    registered under the ``ragplugins`` entry point) and optionally ``config``
    (its ``[ragplugins.<name>]`` section) to check the plugin against the contract."""

    plugin: Any = None
    config: dict = {}

    def _info(self) -> PluginInfo:
        registry = PluginRegistry()
        record = registry.register(self.plugin)
        assert record.loaded and record.info is not None, record.error
        return record.info

    def test_plugin_info(self):
        info = self._info()
        assert info.name and info.name.replace("_", "").replace("-", "").isalnum()
        assert info.version
        assert issubclass(info.config_model, BaseModel)

    def test_config_model_forbids_unknown_keys(self):
        info = self._info()
        assert info.config_model.model_config.get("extra") == "forbid", \
            "config models must set extra='forbid' so typos are reported"
        info.config_model()  # defaults alone must be valid (registration also checks them against the bounds)
        info.config_model.model_validate(self.config)

    def test_contributions_are_well_formed(self, tmp_path, bundled_embed_model):
        rag = make_rag([self.plugin], {self._info().name: self.config}, embed_model=bundled_embed_model,
                       persist_dir=tmp_path / "idx")
        ctx = rag.context(rag.index())
        for record in rag.enabled:
            for hook in STAGES:
                for contrib in rag.registry.contributions(hook, [record], **rag._hook_kwargs(record, ctx)):
                    assert isinstance(contrib, Contribution)
                    component = contrib.component
                    if hasattr(type(component), "class_name") and isinstance(component, BaseModel):
                        assert component.class_name() not in ("base_component", "BaseNodePostprocessor"), \
                            f"{type(component).__name__} must override class_name()"

    def test_index_and_search_on_tiny_corpus(self, tmp_path, bundled_embed_model):
        corpus = write_tiny_corpus(tmp_path / "corpus")
        on = make_rag([self.plugin], {self._info().name: self.config}, embed_model=bundled_embed_model,
                      persist_dir=tmp_path / "on")
        off = make_rag([self.plugin], {"enable": []}, embed_model=bundled_embed_model,
                       persist_dir=tmp_path / "off")
        on.index_paths([corpus])
        off.index_paths([corpus])
        result = on.search("What is the annual fee?")
        assert result.final, "search on the tiny corpus returned nothing"
        # Every metadata key the plugin writes is declared (undeclared ones are embedded and shown to the LLM).
        keys_on = {k for n in on.context().all_nodes() for k in n.metadata}
        keys_off = {k for n in off.context().all_nodes() for k in n.metadata}
        undeclared = sorted(keys_on - keys_off - set(self._info().metadata_keys))
        assert not undeclared, f"metadata keys written but not declared in PluginInfo.metadata_keys: {undeclared}"
        # Plugin metadata never reaches the embedding: vectors are bit-identical on and off.
        vec_on = {n.node_id: n.embedding for n in on.context().all_nodes()}
        vec_off = {n.node_id: n.embedding for n in off.context().all_nodes()}
        assert vec_on.keys() == vec_off.keys(), "the plugin changed which chunks are indexed"
        assert all(vec_on[k] == vec_off[k] for k in vec_on), "the plugin changed the text that is embedded"
        # Its eval instrument (if any) runs on a real search and returns a dict.
        from ragplugins.eval import GoldRow
        from ragplugins.eval.runner import instrument

        instrument(on, GoldRow(id="conformance", query="What is the annual fee?", expected=("120,000 EUR",)), result)


def check_store_adapter(open_rag: Callable[[], RagPlugins], corpus: Path,
                        adapter_class: type | None = None,
                        reopen: Callable[[RagPlugins, Any], tuple[RagPlugins, Any]] | None = None) -> None:
    """The store conformance kit: run the store tests against whatever adapter serves the index that
    ``open_rag()`` opens (a RagPlugins with its ``vector_store``, or the embedded default).

    ``corpus``: a folder of at least three documents (``write_tiny_corpus``); it is indexed, one file
    is changed, one document deleted. ``adapter_class``: the adapter that must have been chosen.
    ``reopen(rp, index)``: the same index as a restarted app sees it (persisted and loaded again);
    given, the index id and the plugin state must survive it. Raises AssertionError naming the check."""
    import warnings

    from llama_index.core.schema import NodeWithScore
    from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters

    from ragplugins import search
    from ragplugins.nodes import annotation, cosine
    from ragplugins.stores import CHUNK_INDEX_KEY, StoreAdapter

    rag = open_rag()
    index, _ = rag.index_paths([corpus])
    ctx = rag.context(index)
    adapter = ctx.store
    assert isinstance(adapter, StoreAdapter), f"ctx.store is a {type(adapter).__name__}, not a StoreAdapter"
    if adapter_class is not None:
        assert type(adapter) is adapter_class, f"{type(adapter).__name__} was chosen, not {adapter_class.__name__}"
    assert rag.context(index).store is adapter, "the adapter is chosen once per index, not per call"

    # Listing and iterating agree with the corpus and with each other.
    files = sorted(p.name for p in Path(corpus).iterdir() if p.is_file())
    docs = adapter.list_documents()
    assert sorted(docs) == files, f"list_documents() gave {sorted(docs)}, the corpus holds {files}"
    nodes = list(adapter.iter_nodes())
    assert sorted(n.node_id for n in nodes) == sorted(i for d in docs.values() for i in d.node_ids), \
        "iter_nodes() and list_documents() disagree on the stored chunks"
    for info in docs.values():
        assert info.doc_hash, f"list_documents() lost the content hash of {info.doc_id}"
        chunks = [n.metadata.get(CHUNK_INDEX_KEY) for n in adapter.get_nodes(info.node_ids)]
        assert sorted(chunks) == list(range(len(info.node_ids))), f"{info.doc_id}: chunks {chunks}"
    assert sorted(adapter.iter_texts()) == sorted(n.get_content() for n in nodes), "iter_texts() != the chunk texts"
    chunk_rows = {r.id: r for r in adapter.iter_chunk_rows(["file_name", "no_such_key"])}
    assert {i: (r.doc_id, r.text, r.metadata) for i, r in chunk_rows.items()} == {
        n.node_id: (n.ref_doc_id, n.get_content(), {"file_name": n.metadata["file_name"]}) for n in nodes}, \
        "iter_chunk_rows(keys) != each chunk's id, document id, text and those metadata keys it has"
    own = {n.node_id: {k: v for k, v in n.metadata.items() if k not in CORE_ONLY_KEYS} for n in nodes}
    assert {r.id: r.metadata for r in adapter.iter_chunk_rows(None)} == own, \
        "iter_chunk_rows(None) != each chunk's whole metadata (but the core's own keys, CORE_ONLY_KEYS)"
    some = nodes[0]
    assert [n.node_id for n in adapter.get_nodes([some.node_id])] == [some.node_id], "get_nodes(ids) by id"

    # A metadata update changes the metadata and nothing else.
    stamp_before = adapter.version()
    assert adapter.update_metadata({some.node_id: {"conformance_mark": "marked"}}) == 1
    again = adapter.get_nodes([some.node_id])[0]
    assert again.metadata.get("conformance_mark") == "marked", "update_metadata() did not reach the store"
    assert again.get_content() == some.get_content(), "update_metadata() changed the chunk text"
    if some.embedding is not None and again.embedding is not None:
        assert max(abs(a - b) for a, b in zip(again.embedding, some.embedding)) < 1e-6, (
            "update_metadata() moved a vector"
        )
    if stamp_before is not None:
        assert adapter.version() != stamp_before, "version() did not change after a write"

    # Dense search through the index; scores are cosines when the adapter says so.
    query = "What is the annual fee?"
    embedding = ctx.embed_query(query)
    hits = search.dense_search(adapter, query, embedding, 3)
    assert hits, "dense search over the index returned nothing"
    if adapter.scores_are_cosines:
        for hit in hits:
            vector = hit.node.embedding or adapter.get_nodes([hit.node.node_id])[0].embedding
            if vector is not None:
                similarity = cosine(embedding, vector)
                assert hit.score is not None and similarity is not None, "scores_are_cosines, but a score is missing"
                assert abs(similarity - hit.score) < 1e-3, "scores_are_cosines, but a score is not"
    assert all(annotation(h).get("dense_cosine") is not None for h in hits), "dense results carry no cosine"
    native = adapter.sparse_search(query, 3)
    assert native is None or all(isinstance(n, NodeWithScore) for n in native), "sparse_search(): NodeWithScore or None"
    assert search.sparse_search(adapter, "annual fee", 3), "the sparse leg found nothing for words in the corpus"
    first_name = next(iter(adapter.list_documents().values())).metadata.get("file_name")
    only = MetadataFilters(filters=[MetadataFilter(key="file_name", value=first_name)])
    passing = adapter.ids_passing(only)
    assert passing is None or set(passing) == {n.node_id for n in adapter.iter_nodes()
                                               if n.metadata.get("file_name") == first_name}, \
        "ids_passing() is not the ids of the chunks that pass the filters"

    # Caches built from the contents go stale on a write through ragplugins.
    builds: list[int] = []

    def count(c: Any) -> int:
        builds.append(1)
        return len(list(c.store.iter_nodes()))

    first = ctx.cached("conformance.count", count)
    assert ctx.cached("conformance.count", count) == first and len(builds) == 1, "cached() rebuilt without a write"

    # Plugin state: named collections, per plugin, replaced whole, readable by a fresh adapter.
    state = ctx.state("conformance")
    assert state.read("rows") is None and state.signature("rows") is None, "state of a new index must be empty"
    records = [{"doc_id": d, "n": i, "vector": [0.5, -0.25], "nested": {"k": [1, 2]}} for i, d in enumerate(files)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a store that keeps state in memory only says so once
        state.write("rows", records, {"what": "conformance"})
        first_signature = state.signature("rows")
        stored = state.read("rows")
        assert stored is not None and stored.records == records and stored.meta == {"what": "conformance"}
        assert stored.index_id == adapter.index_id, "state is stamped with the index it belongs to"
        state.write("rows", records[:1])
    assert state.signature("rows") != first_signature, "signature() did not change with a write"
    rows = ctx.state("conformance").read("rows")
    assert rows is not None and rows.records == records[:1], "a write replaces the collection whole"
    assert ctx.state("another").read("rows") is None, "plugins' states are separate"

    # The index changes: a changed document is replaced, a removed one is gone, the caches see it.
    changed, removed = files[0], files[-1]
    old_hash = docs[changed].doc_hash
    (Path(corpus) / changed).write_text("# Changed\n\nThis document was rewritten by the conformance kit.\n",
                                        encoding="utf-8")
    index, report = rag.index_paths([corpus])
    assert report.updated == [changed], f"index_paths() after a change updated {report.updated}, not [{changed}]"
    assert rag.delete_documents([removed]) == [removed]
    docs = adapter.list_documents()
    assert removed not in docs, "a deleted document is still listed"
    assert docs[changed].doc_hash != old_hash, "a changed document kept its old content hash"
    stored_ids = {n.node_id for n in adapter.iter_nodes()}
    assert stored_ids == {i for d in docs.values() for i in d.node_ids}, "stale chunks of a replaced document remain"
    assert not any(n.ref_doc_id == removed for n in adapter.iter_nodes()), "chunks of a removed document remain"
    assert ctx.cached("conformance.count", count) == len(stored_ids) and len(builds) == 2, (
        "cache not stale after a write"
    )
    assert any("rewritten by the conformance kit" in t for t in adapter.iter_texts())

    if reopen is not None:
        index_id = adapter.index_id
        rag2, index2 = reopen(rag, index)
        adapter2 = rag2.context(index2).store
        assert type(adapter2) is type(adapter)
        assert adapter2.index_id == index_id, (
            f"the index id changed across a restart ({index_id} -> {adapter2.index_id})"
        )
        rows = adapter2.state("conformance").read("rows")
        assert rows is not None and rows.records == records[:1], "plugin state lost across a restart"
        assert sorted(adapter2.list_documents()) == sorted(docs)
