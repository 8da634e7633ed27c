"""A host's metadata filters hold for every plugin: no search a plugin makes, and no result, ever
holds a node the host's filter excludes, whichever way the host passed the filter (its own
retriever, its own retriever with ``filters=``, or ragplugins' ``filters=``), on three stores.

The demo corpus's Master Supply Agreement points at Exhibit B (pricing); the filter excludes it.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.indices.vector_store.retrievers import VectorIndexRetriever
from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers.base import BaseEventHandler
from llama_index.core.instrumentation.events.retrieval import RetrievalEndEvent
from llama_index.core.llms import MockLLM
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.response_synthesizers.no_text import NoText
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.core.vector_stores import SimpleVectorStore
from llama_index.core.vector_stores.types import FilterOperator, MetadataFilter, MetadataFilters

import ragplugins_crossref.plugin as crossref
import ragplugins_decompose.plugin as decompose
import ragplugins_overview.plugin as overview
import ragplugins_retry.plugin as retry
from ragplugins import Contribution
from ragplugins.api import query_scope
from ragplugins.testing import make_rag
from ragplugins_retry import vocabulary

DEMO = Path(__file__).resolve().parents[1] / "ragplugins" / "demo_data" / "corpus"
PLUGINS = [crossref, overview, retry, decompose]
DEMO_DOCS = sorted(p.name for p in DEMO.iterdir() if p.is_file())
EXHIBIT, CANTEEN = "02_exhibit_b_pricing.md", "08_canteen_notice.md"
PRICE_Q = "What is the unit price of the servo motor under the Master Supply Agreement?"
EXHIBIT_Q = "What does the pricing exhibit say about price adjustments?"
TWO_PART_Q = "What is the unit price of the servo motor and how fast must security incidents be reported?"
# At k = 1 the first stage holds only the agreement's pricing section, which points at Exhibit B; with
# no gate the hop follows it (test_the_hop_follows_a_known_filter_that_allows_its_target).
HOP_Q = "How are prices adjusted after the first twelve months of the Master Supply Agreement?"
HOP = {"top_k": 1, "fusion_depth": 1, "splitter": "auto", "crossref": {"gate": 0.0, "placement": "append"}}


def excluding(doc_id: str) -> MetadataFilters:
    return MetadataFilters(filters=[MetadataFilter(key="doc_id", value=doc_id, operator=FilterOperator.NE)])


def _qdrant():
    qdrant = pytest.importorskip("llama_index.vector_stores.qdrant")
    from qdrant_client import QdrantClient

    return qdrant.QdrantVectorStore(client=QdrantClient(location=":memory:"), collection_name="chunks")


STORES = {"lancedb": lambda: None, "simple": SimpleVectorStore, "qdrant": _qdrant}
# How the host's filter reaches ragplugins: LlamaIndex's retriever alone (the filters are read off
# ragplugins' LanceDB store, unknown on the others), a retriever of the host's own making (unknown
# everywhere), LlamaIndex's retriever with filters=, or ragplugins' filters=.
WAYS = ["host_retriever", "custom_host_retriever", "host_retriever_and_filters", "ragplugins_filters"]


class TenantRetriever(BaseRetriever):
    """A host's own retriever: whatever it filters, the core cannot see it."""

    def __init__(self, inner: BaseRetriever):
        super().__init__()
        self.inner = inner

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return self.inner.retrieve(query_bundle)


@dataclass
class Indexed:
    store_name: str
    store: Any
    persist_dir: Path
    index: Any


@pytest.fixture(scope="module", params=list(STORES))
def indexed(request, tmp_path_factory, bundled_embed_model) -> Indexed:
    store = STORES[request.param]()
    root = tmp_path_factory.mktemp(request.param)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # host stores keep the overviews in memory and say so
        # Heading split: the hop questions below rely on the agreement's pricing section being a chunk of its own.
        rag = make_rag(PLUGINS, {"enable": ["crossref", "overview"], "splitter": "auto"},
                       embed_model=bundled_embed_model,
                       vector_store=store, persist_dir=root / "idx")
        index, _ = rag.index_paths([DEMO])
    return Indexed(request.param, store, root / "idx", index)


def open_rag(indexed: Indexed, embed_model, config: dict, extra=()) -> tuple[Any, Any]:
    """A RagPlugins over the module's index with ``config``; (rag, index)."""
    plugins = [*PLUGINS, *extra]
    rag = make_rag(plugins, {"top_k": 3, "splitter": "auto", **config}, embed_model=embed_model,
                   vector_store=indexed.store,
                   persist_dir=indexed.persist_dir)
    # Host stores: the same index object (a SimpleVectorStore's text lives in that index's docstore).
    return rag, rag.index() if indexed.store is None else indexed.index


def search(rag, index, query: str, way: str, filters: MetadataFilters):
    k = rag.config.core.top_k
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a refused search warns; the trace is checked instead
        if way == "ragplugins_filters":
            return rag.search(query, index=index, filters=filters)
        base = index.as_retriever(similarity_top_k=k, filters=filters)
        if way == "custom_host_retriever":
            base = TenantRetriever(base)
        if way == "host_retriever_and_filters":
            return rag.search(query, index=index, base=base, filters=filters)
        return rag.search(query, index=index, base=base)


class Retrievals(BaseEventHandler):
    """Every node any retriever returned (the host's, the core's, each search a plugin made)."""

    docs: list = []

    @classmethod
    def class_name(cls) -> str:
        return "tests.Retrievals"

    def handle(self, event, **kwargs) -> None:
        if isinstance(event, RetrievalEndEvent):
            self.docs.append([n.node.ref_doc_id for n in event.nodes])


@pytest.fixture
def retrievals():
    handler = Retrievals(docs=[])
    root = get_dispatcher()
    root.add_event_handler(handler)
    try:
        yield handler.docs
    finally:
        root.event_handlers.remove(handler)


def assert_excluded_nowhere(result, retrievals: list, doc_id: str = EXHIBIT) -> None:
    """Not returned by any retrieval, not among the results, and not named anywhere in the trace the
    host receives (response.metadata["ragplugins"], `ragplugins query --trace`, eval rows)."""
    assert retrievals, "no retrieval was seen"
    seen = {d for docs in retrievals for d in docs}
    assert doc_id not in seen, f"a retrieval in this query returned {doc_id}"
    assert doc_id not in {n.node.ref_doc_id for n in [*result.first_stage, *result.final]}
    assert doc_id not in json.dumps(result.trace.to_dict(), default=str), f"the trace names {doc_id}"


def known(indexed: Indexed, way: str) -> bool:
    """Whether the core knows the host's filters: given, or read off ragplugins' own store."""
    if way == "custom_host_retriever":
        return False
    return way != "host_retriever" or indexed.store_name == "lancedb"


@pytest.mark.parametrize("way", WAYS)
def test_the_hop_never_adds_what_the_host_filter_excludes(indexed, way, bundled_embed_model, retrievals):
    rag, index = open_rag(indexed, bundled_embed_model, {"enable": ["crossref"], **HOP})
    result = search(rag, index, HOP_Q, way, excluding(EXHIBIT))
    hop = result.trace.get("crossref", "hop")
    assert hop["considered"] == [] and hop["chosen"] == []
    assert hop["pointers_withheld"] == 1   # the pointer was there to follow, and was withheld
    assert_excluded_nowhere(result, retrievals)


@pytest.mark.parametrize("way", WAYS)
def test_the_hop_follows_a_known_filter_that_allows_its_target(indexed, way, bundled_embed_model):
    rag, index = open_rag(indexed, bundled_embed_model, {"enable": ["crossref"], **HOP})
    result = search(rag, index, HOP_Q, way, excluding(CANTEEN))
    hop = result.trace.get("crossref", "hop")
    refusal = result.trace.get("ragplugins", "host_filters")
    # The hop measures the candidates on every store (it embeds those a host's retriever returns
    # without vectors), so only what the core knows of the filters decides.
    if known(indexed, way):
        assert hop["chosen"] == [EXHIBIT] and EXHIBIT in [n.node.ref_doc_id for n in result.final]
        assert refusal is None
    else:
        # The host's retriever may filter on a store the core cannot watch: the hop neither searches nor
        # names a document that retriever did not return.
        assert hop["chosen"] == [] and hop["considered"] == [] and hop["pointers_withheld"] == 1
        assert EXHIBIT not in json.dumps(result.trace.to_dict(), default=str)
        assert refusal["searches_refused"] == 1 and not refusal["known"]
        host = "TenantRetriever" if way == "custom_host_retriever" else "VectorIndexRetriever"
        assert refusal["reason"] == (f"the host's retriever ({host}) may filter: "
                                     "pass filters= to rp.retriever(...) so plugins can search")


@pytest.mark.parametrize("mode", ["adaptive", "restrict"])
@pytest.mark.parametrize("way", WAYS)
def test_the_overview_adds_nothing_the_host_filter_excludes(indexed, way, mode, bundled_embed_model, retrievals):
    config = {"mode": mode, "outlier_z": 0.5, "min_gap": 0.0, "require_runner_up": False}
    rag, index = open_rag(indexed, bundled_embed_model, {"enable": ["overview"], "overview": config})
    result = search(rag, index, EXHIBIT_Q, way, excluding(EXHIBIT))
    select = result.trace.get("overview", "select")
    assert_excluded_nowhere(result, retrievals)
    if known(indexed, way):
        # It still steers: among the documents the filter allows (all but the excluded one).
        assert select["documents"] and select["n_documents"] == len(DEMO_DOCS) - 1
        step = result.trace.get("overview", "add" if mode == "adaptive" else "restrict")
        assert step["documents"] == [d["doc_id"] for d in select["documents"]]
    else:
        # Only among the documents the host's own retriever returned.
        returned = {n.node.ref_doc_id for n in result.first_stage}
        assert select["n_documents"] == len(returned) and {d["doc_id"] for d in select["documents"]} <= returned


@pytest.mark.parametrize("way", WAYS)
def test_the_retrys_second_retrieval_keeps_the_host_filter(indexed, way, bundled_embed_model, retrievals):
    config = {"signal": "query_coverage", "threshold": 1.0, "confirm_signal": None, "strategy": "keywords"}
    rag, index = open_rag(indexed, bundled_embed_model, {"enable": ["retry"], "retry": config})
    result = search(rag, index, PRICE_Q, way, excluding(EXHIBIT))
    decision = result.trace.get("retry", "decision")
    assert decision["fired"] and decision["attempted"]
    assert_excluded_nowhere(result, retrievals)


@pytest.mark.parametrize("way", WAYS)
def test_decompose_keeps_the_host_filter(indexed, way, bundled_embed_model, retrievals):
    rag, index = open_rag(indexed, bundled_embed_model, {"enable": ["decompose"]})
    result = search(rag, index, TWO_PART_Q, way, excluding(EXHIBIT))
    assert len(result.trace.get("decompose", "split")["sub_queries"]) == 2
    assert_excluded_nowhere(result, retrievals)


# -- the core's own check, for plugins that do not search through the core --------------------------
class AddStored(BaseNodePostprocessor):
    """A careless 'expand' postprocessor: appends stored chunks of ``doc_id`` without any search."""

    ctx: Any = None
    doc_id: str = EXHIBIT

    @classmethod
    def class_name(cls) -> str:
        return "tests.AddStored"

    def _postprocess_nodes(self, nodes, query_bundle=None):
        extra = [NodeWithScore(node=n, score=0.0) for n in self.ctx.all_nodes() if n.ref_doc_id == self.doc_id]
        return nodes + extra


class AddStoredRetriever(BaseRetriever):
    """A careless retriever wrapper: the same, in the first stage."""

    def __init__(self, inner: BaseRetriever, ctx: Any):
        super().__init__()
        self.inner, self.ctx = inner, ctx

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return AddStored(ctx=self.ctx).postprocess_nodes(self.inner.retrieve(query_bundle))


def careless_plugin(plugin_module, hook: str):
    if hook == "postprocessor":
        return plugin_module("careless", ragplugins_node_postprocessors=lambda ctx: [
            Contribution(AddStored(ctx=ctx), stage="expand")])
    return plugin_module("careless", ragplugins_retriever_wrappers=lambda ctx: [
        Contribution(lambda inner: AddStoredRetriever(inner, ctx), stage="first_stage")])


@pytest.mark.parametrize("hook", ["postprocessor", "retriever_wrapper"])
@pytest.mark.parametrize("way", WAYS)
def test_the_core_removes_added_nodes_the_host_filter_excludes(indexed, way, hook, bundled_embed_model,
                                                               plugin_module):
    rag, index = open_rag(indexed, bundled_embed_model, {"enable": ["careless"], "top_k": 1, "fusion_depth": 1},
                          extra=[careless_plugin(plugin_module, hook)])
    result = search(rag, index, HOP_Q, way, excluding(EXHIBIT))
    assert EXHIBIT not in {n.node.ref_doc_id for n in [*result.first_stage, *result.final]}
    record = result.trace.get("ragplugins", "host_filters")
    exhibit_chunks = {n.node_id for n in rag.context(index).all_nodes() if n.ref_doc_id == EXHIBIT}
    assert record["applied"] and {r["node"] for r in record["removed"]} <= exhibit_chunks and record["removed"]
    assert EXHIBIT not in json.dumps(result.trace.to_dict(), default=str)
    assert {r["after"] for r in record["removed"]} == {"careless"}
    # Nodes the filter allows stay when the filter is known; with unknown filters nothing added survives.
    allowed = search(rag, index, HOP_Q, way, excluding(CANTEEN))
    assert (EXHIBIT in {n.node.ref_doc_id for n in allowed.final}) is known(indexed, way)


@pytest.mark.parametrize("indexed", ["lancedb"], indirect=True)
def test_a_host_engine_with_rp_postprocessors_searches_only_with_their_filters(indexed, bundled_embed_model):
    rag, index = open_rag(indexed, bundled_embed_model, {"enable": ["crossref"], **HOP})

    def run(**filters):
        engine = RetrieverQueryEngine(retriever=index.as_retriever(similarity_top_k=1, filters=excluding(CANTEEN)),
                                      response_synthesizer=NoText(llm=MockLLM()),
                                      node_postprocessors=rag.postprocessors(index, **filters))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return {n.node.ref_doc_id for n in engine.query(HOP_Q).source_nodes}

    assert EXHIBIT in run(filters=excluding(CANTEEN))
    assert EXHIBIT not in run()          # the host's retriever may filter: the hop does not search
    engine = RetrieverQueryEngine(retriever=index.as_retriever(similarity_top_k=1, filters=excluding(EXHIBIT)),
                                  response_synthesizer=NoText(llm=MockLLM()),
                                  node_postprocessors=rag.postprocessors(index, filters=excluding(EXHIBIT)))
    assert EXHIBIT not in {n.node.ref_doc_id for n in engine.query(HOP_Q).source_nodes}


def test_filters_the_store_cannot_show_are_unknown(tmp_path, bundled_embed_model):
    """A host's VectorIndexRetriever restricting by doc_ids (LanceDB ignores them): not a filter the
    plugins could repeat, so they do not search."""
    rag = make_rag(PLUGINS, {"enable": ["crossref"], **HOP}, embed_model=bundled_embed_model,
                   persist_dir=tmp_path / "idx")
    index, _ = rag.index_paths([DEMO])
    base = VectorIndexRetriever(index, similarity_top_k=1, doc_ids=["01_master_supply_agreement.md"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = rag.search(HOP_Q, base=base)
    assert EXHIBIT not in {n.node.ref_doc_id for n in result.final}
    reason = result.trace.get("ragplugins", "host_filters")["reason"]
    assert "doc_ids" in reason and "pass filters= to rp.retriever" in reason
    assert any("a plugin search was refused" in str(w.message) for w in caught)
    # The same retriever with filters given: the hop searches with them.
    assert EXHIBIT in {n.node.ref_doc_id for n in rag.search(HOP_Q, base=base, filters=None).final}


@pytest.mark.parametrize("indexed", ["lancedb"], indirect=True)
async def test_the_async_query_engine_keeps_the_host_filter(indexed, bundled_embed_model):
    rag, index = open_rag(indexed, bundled_embed_model, {"enable": ["crossref"], **HOP})
    allowed = rag.query_engine(index, base=index.as_retriever(similarity_top_k=1, filters=excluding(CANTEEN)))
    assert EXHIBIT in {n.node.ref_doc_id for n in (await allowed.aquery(HOP_Q)).source_nodes}
    engine = rag.query_engine(index, base=index.as_retriever(similarity_top_k=1, filters=excluding(EXHIBIT)))
    response = await engine.aquery(HOP_Q)
    assert EXHIBIT not in {n.node.ref_doc_id for n in response.source_nodes}
    hop = response.metadata["ragplugins"]["plugins"]["crossref"]["hop"]
    assert hop["considered"] == [] and hop["pointers_withheld"] == 1
    assert EXHIBIT not in json.dumps(response.metadata["ragplugins"], default=str)


@pytest.mark.parametrize("indexed", ["lancedb"], indirect=True)
def test_filters_given_cannot_widen_what_the_host_retriever_filters_on_the_embedded_store(indexed,
                                                                                       bundled_embed_model):
    """filters=None beside a base that filters: the store's filters still bind every plugin search."""
    rag, index = open_rag(indexed, bundled_embed_model, {"enable": ["crossref"], **HOP})
    base = index.as_retriever(similarity_top_k=1, filters=excluding(EXHIBIT))
    result = rag.search(HOP_Q, index=index, base=base, filters=None)
    hop = result.trace.get("crossref", "hop")
    assert hop["considered"] == [] and hop["pointers_withheld"] == 1
    assert EXHIBIT not in {n.node.ref_doc_id for n in result.final}
    assert EXHIBIT not in json.dumps(result.trace.to_dict(), default=str)


@pytest.mark.parametrize("way", WAYS)
def test_the_retrys_corpus_statistics_cover_only_what_the_host_filter_allows(indexed, way, bundled_embed_model,
                                                                            retrievals):
    config = {"signal": "corpus_coverage", "confirm_signal": None, "strategy": "vocabulary"}
    rag, index = open_rag(indexed, bundled_embed_model, {"enable": ["retry"], "retry": config})
    result = search(rag, index, EXHIBIT_Q, way, excluding(EXHIBIT))
    decision = result.trace.get("retry", "decision")
    assert_excluded_nowhere(result, retrievals)
    if known(indexed, way):
        assert decision["signal_details"]["terms"]   # measured, over the chunks the filter allows
    else:
        assert not decision["fired"] and "the host's filters are not known" in decision["reason"]
    # The statistics themselves: the allowed chunks only, the whole index without a filter.
    ctx = rag.context(index)
    chunks = ctx.all_nodes()
    with query_scope(EXHIBIT_Q, filters=excluding(EXHIBIT)):
        filtered = vocabulary.vocabulary_for_query(ctx)
    with query_scope(EXHIBIT_Q, filters=None):
        whole = vocabulary.vocabulary_for_query(ctx)
    assert filtered.n_chunks == sum(n.ref_doc_id != EXHIBIT for n in chunks) < whole.n_chunks == len(chunks)


def test_a_misspelt_filter_key_on_the_in_memory_store_is_named_not_blamed_on_a_plugin(tmp_path, bundled_embed_model):
    """LlamaIndex's SimpleVectorStore: a key no chunk has used to match nothing, silently; and a plugin that
    searched with the host's filters was blamed for the host's mistake."""
    from llama_index.core import Document
    from llama_index.core.vector_stores import SimpleVectorStore
    from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters

    from ragplugins.errors import InputError
    from ragplugins.testing import make_rag

    rp = make_rag([], {"enable": []}, embed_model=bundled_embed_model, vector_store=SimpleVectorStore())
    index = rp.build_index([Document(text="Lamps burn colza oil.", metadata={"file_name": "a.txt"})])
    typo = MetadataFilters(filters=[MetadataFilter(key="file_nmae", value="a.txt")])
    with pytest.raises(InputError, match=r"cannot filter on metadata key 'file_nmae': no indexed chunk has it "
                                         r"\(their keys: .*file_name"):
        rp.search("oil", index=index, filters=typo)
    assert rp.search("oil", index=index, filters=MetadataFilters(filters=[
        MetadataFilter(key="file_name", value="a.txt")])).final
