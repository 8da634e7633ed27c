"""Query side: the host's retriever unchanged with no plugins, the hybrid first stage, filtered
search, traces and events, async paths, and the same plugins on three vector stores."""

import asyncio

import pytest
import ragplugins_length_filter.plugin as length_filter
from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers.base import BaseEventHandler
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.vector_stores import SimpleVectorStore
from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters

from ragplugins import Contribution, query_inputs, trace
from ragplugins.nodes import annotation, dense_cosine, tag, tags
from ragplugins.readers import read_documents
from ragplugins.testing import make_rag


class HopToExhibit(BaseNodePostprocessor):
    """A test 'expand' postprocessor built only on the core's shared search primitive."""

    ctx: object = None

    @classmethod
    def class_name(cls):
        return "tests.HopToExhibit"

    def _postprocess_nodes(self, nodes, query_bundle=None):
        found = self.ctx.search_within_documents(query_bundle.query_str, ["exhibit_a.md"], 1)
        trace.record("hopper", "hop", found=None if found is None else len(found))
        return nodes + [tag(n, "hopper", via="test") for n in (found or [])]


def hop_plugin(plugin_module):
    return plugin_module("hopper", ragplugins_node_postprocessors=lambda ctx: [
        Contribution(HopToExhibit(ctx=ctx), stage="expand")])


def _qdrant():
    qdrant = pytest.importorskip("llama_index.vector_stores.qdrant")
    from qdrant_client import QdrantClient

    return qdrant.QdrantVectorStore(client=QdrantClient(location=":memory:"), collection_name="chunks")


STORES = {"lancedb": lambda: None, "simple": SimpleVectorStore, "qdrant": _qdrant}


@pytest.mark.parametrize("store_name", list(STORES))
def test_same_plugins_on_three_stores(store_name, tiny_corpus, tmp_path, bundled_embed_model, plugin_module):
    rag = make_rag([length_filter, hop_plugin(plugin_module)], {"length_filter": {"min_chars": 10}},
                   embed_model=bundled_embed_model, vector_store=STORES[store_name](), persist_dir=tmp_path / "idx")
    index, report = rag.index_paths([tiny_corpus])
    assert sorted(report.added) == sorted(p.name for p in tiny_corpus.iterdir())
    ctx = rag.context(index)
    assert set(ctx.list_documents()) == set(report.added)
    result = rag.search("When are payments due?")
    assert result.first_stage and all(dense_cosine(n) is not None for n in result.first_stage
                                      if annotation(n).get("dense_rank"))
    hopped = [n for n in result.final if "hopper" in tags(n)]
    assert hopped and hopped[0].node.ref_doc_id == "exhibit_a.md"
    assert result.trace.get("hopper", "hop") == {"found": 1}
    assert "length_filter" in result.trace.plugins
    # A filter that excludes the hop target: the hop must respect it and find nothing.
    excluded = MetadataFilters(filters=[MetadataFilter(key="file_name", value="exhibit_a.md", operator="!=")])
    filtered = rag.search("When are payments due?", filters=excluded)
    assert all(n.node.ref_doc_id != "exhibit_a.md" for n in filtered.final)
    # Metadata updates in place where the store supports them.
    some = next(iter(ctx.list_documents().values())).node_ids[0]
    assert ctx.update_metadata({some: {"reviewed": "yes"}}) == 1
    assert [n for n in ctx.all_nodes() if n.node_id == some][0].metadata["reviewed"] == "yes"


def test_no_plugins_returns_exactly_the_host_retriever(tiny_corpus, tmp_path, bundled_embed_model):
    docs = read_documents([tiny_corpus]).documents
    host_index = VectorStoreIndex.from_documents(docs, embed_model=bundled_embed_model)
    host = host_index.as_retriever(similarity_top_k=3)
    rag = make_rag([length_filter], {"enable": []}, embed_model=bundled_embed_model, persist_dir=tmp_path / "i")
    wrapped = rag.retriever(host_index, base=host)
    for q in ["annual fee", "descale the boiler", "terminate the agreement"]:
        ours, theirs = wrapped.retrieve(q), host.retrieve(q)
        assert [(n.node.node_id, n.score) for n in ours] == [(n.node.node_id, n.score) for n in theirs]
        result = rag.search(q, index=host_index, base=host)
        assert [n.node.node_id for n in result.final] == [n.node.node_id for n in theirs]


def test_filtered_search_tells_failure_from_nothing(tiny_corpus, tmp_path, bundled_embed_model):
    rag = make_rag([], embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
    rag.index_paths([tiny_corpus])
    ctx = rag.context(rag.index())
    with query_inputs.scope(filters=None):
        assert ctx.search_within_documents("fee", ["no_such_doc.md"], 3) == []
        hits = ctx.search_within_documents("fee", ["master_agreement.md"], 3)
    assert hits and {n.node.ref_doc_id for n in hits} == {"master_agreement.md"}
    bad = MetadataFilters(filters=[MetadataFilter(key="not_a_key", value="x")])
    with query_inputs.scope(filters=bad):
        assert ctx.search_within_documents("fee", ["master_agreement.md"], 3) is None
    # Outside a query the host's filters are unknown: refused, and said so.
    with pytest.warns(UserWarning, match="a plugin search outside a query was refused"):
        assert ctx.search_within_documents("fee", ["master_agreement.md"], 3) is None


def test_query_engine_trace_events_and_async(tiny_corpus, tmp_path, bundled_embed_model, plugin_module):
    events = []

    class Collect(BaseEventHandler):
        @classmethod
        def class_name(cls):
            return "Collect"

        def handle(self, event, **kwargs):
            if event.class_name() == "RagPluginsEvent":
                events.append(event)

    handler = Collect()
    root = get_dispatcher()
    root.add_event_handler(handler)
    try:
        rag = make_rag([hop_plugin(plugin_module)], embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
        rag.index_paths([tiny_corpus])
        engine = rag.query_engine()
        response = engine.query("When are payments due?")
        meta = response.metadata["ragplugins"]
        assert meta["first_stage"] and meta["plugins"]["hopper"]["hop"] == {"found": 1}
        assert meta["final"] == [n.node.node_id for n in response.source_nodes]
        assert any(e.plugin == "hopper" and e.action == "hop" for e in events)
        aresponse = asyncio.run(engine.aquery("When are payments due?"))
        assert aresponse.metadata["ragplugins"]["plugins"]["hopper"]["hop"] == {"found": 1}
        anodes = asyncio.run(rag.retriever().aretrieve("descale the boiler"))
        assert anodes[0].node.ref_doc_id == "espresso_manual.md"
    finally:
        root.event_handlers.remove(handler)


def test_query_matching_nothing_is_empty_not_an_error(tiny_corpus, tmp_path, bundled_embed_model):
    rag = make_rag([], embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
    with pytest.warns(UserWarning, match="no index in"):
        assert rag.search("anything").final == []  # empty index
    rag.index_paths([tiny_corpus])
    nothing = MetadataFilters(filters=[MetadataFilter(key="file_name", value="nope.md")])
    assert rag.search("annual fee", filters=nothing).final == []
    response = rag.query_engine(filters=nothing).query("annual fee")
    assert response.source_nodes == []


def test_dense_leg_embeds_custom_embedding_strs_and_bm25_reads_the_query(tiny_corpus, tmp_path, bundled_embed_model):
    """As LlamaIndex's VectorIndexRetriever: custom_embedding_strs (e.g. HyDE) steer the dense leg only."""
    from llama_index.core.schema import QueryBundle

    # Heading split: the agreement's fee section is a chunk of its own, the premise of the first assert.
    rag = make_rag([], {"retrieval": "dense", "top_k": 1, "splitter": "auto"}, embed_model=bundled_embed_model,
                   persist_dir=tmp_path / "idx")
    rag.index_paths([tiny_corpus])
    retriever = rag.retriever()
    plain = retriever.retrieve(QueryBundle("annual fee payable quarterly"))
    steered = retriever.retrieve(QueryBundle("annual fee payable quarterly",
                                             custom_embedding_strs=["descale the boiler with citric acid"]))
    assert plain[0].node.ref_doc_id == "master_agreement.md"
    assert steered[0].node.ref_doc_id == "espresso_manual.md"
    given = retriever.retrieve(QueryBundle("annual fee", embedding=bundled_embed_model.get_query_embedding(
        "replace the gasket part code")))
    assert given[0].node.ref_doc_id == "espresso_manual.md"
    hybrid = make_rag([], {"top_k": 4, "splitter": "auto"}, embed_model=bundled_embed_model,
                      persist_dir=tmp_path / "idx").retriever()
    fused = hybrid.retrieve(QueryBundle("annual fee payable quarterly",
                                        custom_embedding_strs=["descale the boiler with citric acid"]))
    first = {leg: next(n.node.ref_doc_id for n in fused if annotation(n).get(leg) == 1)
             for leg in ("dense_rank", "sparse_rank")}
    assert first == {"dense_rank": "espresso_manual.md", "sparse_rank": "master_agreement.md"}


def test_context_embeds_passages_once_in_batches(tmp_path):
    """ctx.embed_texts: document-side vectors, one batch per call for what is new, cached after."""
    from llama_index.core.embeddings import MockEmbedding

    class Counting(MockEmbedding):
        batches: list = []

        def _get_text_embeddings(self, texts):
            self.batches.append(list(texts))
            return [[float(len(t))] * self.embed_dim for t in texts]

    embed = Counting(embed_dim=4)
    ctx = make_rag([], embed_model=embed, persist_dir=tmp_path / "idx").context()
    first = ctx.embed_texts(["see Exhibit A", "the fee", "see Exhibit A"])
    again = ctx.embed_texts(["the fee", "a new sentence"])
    assert embed.batches == [["see Exhibit A", "the fee"], ["a new sentence"]]
    assert first["see Exhibit A"] == [13.0] * 4 and again["the fee"] == first["the fee"] == [7.0] * 4


def test_context_keeps_index_derived_values_until_the_index_is_written(tiny_corpus, tmp_path,
                                                                       bundled_embed_model):
    """ctx.cached: built once per index state; a write through ragplugins, or straight through the
    LlamaIndex index into the embedded LanceDB table, makes it build again."""
    from llama_index.core.schema import TextNode

    rag = make_rag([], embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
    rag.index_paths([tiny_corpus])
    builds = []

    def count_chunks(ctx):
        builds.append(1)
        return len(ctx.all_nodes())

    ctx = rag.context()
    first = ctx.cached("tests.chunks", count_chunks)
    assert ctx.cached("tests.chunks", count_chunks) == first and len(builds) == 1
    assert rag.context().cached("tests.chunks", count_chunks) == first and len(builds) == 1   # per index, not per ctx
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "note.md").write_text("# Note\n\nThe boiler is descaled monthly.\n")
    rag.index_paths([extra])
    after_ingest = rag.context().cached("tests.chunks", count_chunks)
    assert after_ingest > first and len(builds) == 2
    node = TextNode(text="Written by the host, not by ragplugins.")
    node.embedding = bundled_embed_model.get_text_embedding(node.text)
    rag.index().insert_nodes([node])
    assert rag.context().cached("tests.chunks", count_chunks) == after_ingest + 1 and len(builds) == 3


def test_index_id_of_a_host_store_outlives_the_process(tiny_corpus, tmp_path, bundled_embed_model):
    """What plugins keep per index is keyed by ctx.index_id: for a host's index it must name the same
    index after persist + load_index_from_storage, and tell two indexes apart."""
    from llama_index.core import load_index_from_storage

    rag = make_rag([], embed_model=bundled_embed_model, vector_store=SimpleVectorStore())
    index, _ = rag.index_paths([tiny_corpus])
    index.storage_context.persist(persist_dir=str(tmp_path / "storage"))
    reloaded = load_index_from_storage(StorageContext.from_defaults(persist_dir=str(tmp_path / "storage")),
                                       embed_model=bundled_embed_model)
    again = make_rag([], embed_model=bundled_embed_model, vector_store=reloaded.vector_store)
    assert again.context(reloaded).index_id == rag.context(index).index_id
    other = make_rag([], embed_model=bundled_embed_model, vector_store=SimpleVectorStore())
    assert other.context(other.index_paths([tiny_corpus])[0]).index_id != rag.context(index).index_id
    assert make_rag([], embed_model=bundled_embed_model, vector_store=_qdrant()).context(
        VectorStoreIndex.from_vector_store(_qdrant(), embed_model=bundled_embed_model)).index_id \
        == "QdrantVectorStore:chunks"


def test_query_engine_takes_the_as_query_engine_keywords(tiny_corpus, tmp_path, bundled_embed_model):
    from llama_index.core.postprocessor import SimilarityPostprocessor

    from ragplugins.testing import FakeLLM

    rag = make_rag([], embed_model=bundled_embed_model, persist_dir=tmp_path / "idx")
    rag.index_paths([tiny_corpus])
    with pytest.warns(UserWarning, match=r"query_engine\(\) without an LLM answers nothing.*pass llm="):
        answerless = rag.query_engine(similarity_top_k=3).query("annual fee")
    assert len(answerless.source_nodes) == 3 and str(answerless) == "None"
    # Fused scores are two legs' scores, each normalised to about [0, 1.3]: a cutoff above their sum drops
    # everything (the host's postprocessor did run, last); one below the best keeps the best.
    scores = [n.score for n in rag.query_engine().query("annual fee").source_nodes]
    assert 0 < max(scores) < 3
    cut = rag.query_engine(node_postprocessors=[SimilarityPostprocessor(similarity_cutoff=3.0)])
    assert cut.query("annual fee").source_nodes == []
    kept = rag.query_engine(node_postprocessors=[SimilarityPostprocessor(similarity_cutoff=max(scores) - 1e-6)])
    assert [n.score for n in kept.query("annual fee").source_nodes] == [max(scores)]
    with pytest.raises(TypeError, match="response_mode.*without an LLM"):
        rag.query_engine(response_mode="compact")
    answering = make_rag([], embed_model=bundled_embed_model, persist_dir=tmp_path / "idx",
                         llm=FakeLLM(prompts=[], responder=lambda p: "120,000 EUR"))
    response = answering.query_engine(similarity_top_k=2, response_mode="compact").query("annual fee")
    assert len(response.source_nodes) == 2 and "120,000" in str(response)


def test_searching_where_no_index_was_built_says_so(tmp_path, bundled_embed_model):
    # The CLI said "no index"; the Python API returned nothing without a word. An app may search before its
    # first documents arrive, so it is still an empty result, with the reason.
    import ragplugins

    rp = ragplugins.load({"ragplugins": {"persist_dir": str(tmp_path / "never")}}, embed_model=bundled_embed_model)
    with pytest.warns(UserWarning, match=r"no index in '.*never'.*build one with `ragplugins index PATH`.*"
                                         r"the search returns nothing"):
        assert rp.search("anything").final == []
