"""Partial adoption: an index the app built itself, its own RetrieverQueryEngine, readable names."""

import pytest
from llama_index.core import SimpleDirectoryReader, VectorStoreIndex
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine

import ragplugins
from ragplugins.demo import DEMO_DIR
from ragplugins.nodes import document_name

QUESTION = "What is the unit price of the servo motor under the Master Supply Agreement?"


@pytest.fixture
def app_index(bundled_embed_model):
    docs = SimpleDirectoryReader(str(DEMO_DIR / "corpus")).load_data()  # random UUID document ids
    return VectorStoreIndex.from_documents(docs, embed_model=bundled_embed_model)


def _reasons(tr):
    return {p: tr.get(p, a)["reason"] for p, a in (("crossref", "hop"), ("overview", "select"))}


def test_an_apps_index_is_named_unprepared_then_prepared(app_index, bundled_embed_model, tmp_path):
    rp = ragplugins.load({"enable": ["crossref", "overview"], "top_k": 3, "persist_dir": str(tmp_path)},
                         embed_model=bundled_embed_model)
    before = _reasons(rp.search(QUESTION, index=app_index).trace)
    for plugin, reason in before.items():
        assert reason.startswith(f"this index was not prepared for {plugin}: run `ragplugins prepare`"), reason
    rp.prepare(app_index)
    result = rp.search(QUESTION, index=app_index)
    after = _reasons(result.trace)
    assert not any("not prepared" in r for r in after.values()), after
    assert result.trace.get("overview", "select")["n_documents"] == len(list((DEMO_DIR / "corpus").iterdir()))
    # The plugins' keys stay out of what the LLM reads.
    assert "crossref_refs" in result.final[0].node.metadata
    assert "crossref_refs" not in result.final[0].node.get_content(metadata_mode="llm")


def test_postprocessors_in_the_apps_own_engine_record_a_trace(app_index, bundled_embed_model, tmp_path):
    rp = ragplugins.load({"enable": ["crossref"], "top_k": 3, "persist_dir": str(tmp_path)},
                         embed_model=bundled_embed_model)
    engine = RetrieverQueryEngine.from_args(app_index.as_retriever(similarity_top_k=3),
                                            node_postprocessors=rp.postprocessors(app_index), llm=MockLLM())
    response = engine.query(QUESTION)
    tr = rp.last_trace
    assert tr is not None and tr.query == QUESTION and tr.get("crossref", "hop") is not None
    assert tr.final == [n.node.node_id for n in response.source_nodes]
    assert tr.to_dict()["final_documents"] == [n.node.metadata["file_name"] for n in response.source_nodes]
    assert all(name.endswith(".md") for name in tr.final_documents)


def test_document_names(app_index):
    node = next(iter(app_index.docstore.docs.values()))
    assert document_name(node).endswith(".md")  # the app's UUID ids are replaced by the file name
    node.relationships.clear()
    node.metadata = {"title": "Quarterly report"}
    assert document_name(node) == "Quarterly report"


def test_the_hop_scores_candidates_of_the_apps_own_retriever(app_index, bundled_embed_model, tmp_path):
    # index.as_retriever() returns neither vectors nor ragplugins' dense scores; the hop embeds the candidates.
    rp = ragplugins.load({"enable": ["crossref"], "top_k": 3, "persist_dir": str(tmp_path)},
                         embed_model=bundled_embed_model)
    rp.prepare(app_index)
    question = "How long is the standard lead time for deliveries under the Master Supply Agreement?"
    rp.search(question, index=app_index, base=app_index.as_retriever(similarity_top_k=3))
    reason = rp.last_trace.get("crossref", "hop")["reason"]
    assert "no dense scores" not in reason and "not prepared" not in reason, reason
    # Documents are named by file name in the reason, not by the app's UUID ids.
    assert "01_master_supply_agreement.md -> 03_schedule_1_logistics.md" in reason, reason


def test_the_trace_names_the_first_stages_documents_by_file_name(app_index, bundled_embed_model, tmp_path):
    rp = ragplugins.load({"enable": [], "top_k": 3, "persist_dir": str(tmp_path)}, embed_model=bundled_embed_model)
    found = rp.retriever(app_index, base=app_index.as_retriever(similarity_top_k=3), filters=None).retrieve(QUESTION)
    tr = rp.last_trace.to_dict()
    assert tr["first_stage"] == [n.node.node_id for n in found]
    assert tr["first_stage_documents"] == [n.node.metadata["file_name"] for n in found]
    assert all(name.endswith(".md") for name in tr["first_stage_documents"])
