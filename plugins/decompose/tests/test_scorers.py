"""Scorers: the bundled embedder's cosine, and any LlamaIndex reranker (a tiny cross-encoder built here)."""

import math
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode
from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

from ragplugins.api import ConfigError, PluginError
from ragplugins_decompose import EmbeddingScorer, HybridScorer, PostprocessorScorer, loading

TEXTS = ["The annual fee is 120,000 EUR, payable quarterly.", "Descale the boiler every 200 cycles.",
         "The pump pressure should read 9 bar."]
WORDS = "the annual fee is eur payable quarterly descale boiler every cycles pump pressure should read bar".split()


def nodes(with_embedding=None):
    out = []
    for i, text in enumerate(TEXTS):
        node = TextNode(text=text, id_=f"n{i}", metadata={"file_name": f"doc{i}.md"})
        if with_embedding is not None:
            node.embedding = with_embedding(text)
        out.append(NodeWithScore(node=node, score=1.0 / (i + 1)))
    return out


@pytest.fixture(scope="module")
def ctx(bundled_embed_model):
    return SimpleNamespace(embed_model=bundled_embed_model, embed_query=bundled_embed_model.get_query_embedding)


def cosine(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


def test_embedding_scorer_is_the_cosine_of_query_and_chunk(ctx, bundled_embed_model):
    queries = ["How much is the annual fee?", "How often must the boiler be descaled?"]
    embed = lambda t: bundled_embed_model.get_text_embedding(t)  # noqa: E731
    matrix = EmbeddingScorer().score(queries, nodes(embed), ctx)
    for q, row in zip(queries, matrix):
        expected = [cosine(bundled_embed_model.get_query_embedding(q), embed(t)) for t in TEXTS]
        assert row == pytest.approx(expected, abs=1e-6)
    assert np.argmax(matrix[0]) == 0 and np.argmax(matrix[1]) == 1


def test_embedding_scorer_embeds_candidates_that_carry_no_vector(ctx, bundled_embed_model):
    bare = nodes()
    matrix = EmbeddingScorer().score(["annual fee"], bare, ctx)
    embedded = [bundled_embed_model.get_text_embedding(n.node.get_content(metadata_mode=MetadataMode.EMBED))
                for n in bare]
    q = bundled_embed_model.get_query_embedding("annual fee")
    assert matrix[0] == pytest.approx([cosine(q, e) for e in embedded], abs=1e-6)
    wrong_width = nodes(lambda t: [1.0, 0.0, 0.0])  # a vector from another embedder is not trusted
    assert EmbeddingScorer().score(["annual fee"], wrong_width, ctx)[0] == pytest.approx(matrix[0], abs=1e-6)


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory):
    """A random one-label BERT cross-encoder saved with save_pretrained (nothing is downloaded)."""
    path = tmp_path_factory.mktemp("ce") / "tiny-cross-encoder"
    path.mkdir()
    # transformers 5 ignores vocab_file=: without vocab= every word would be [UNK] and every text score alike.
    pieces = dict.fromkeys(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS, *map(str, range(10)), ".", ","])
    tok = BertTokenizerFast(vocab={w: i for i, w in enumerate(pieces)}, model_max_length=512)
    assert "[UNK]" not in tok.tokenize(" ".join(WORDS[:5]))
    config = BertConfig(vocab_size=tok.vocab_size, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=512, num_labels=1)
    torch.manual_seed(0)
    BertForSequenceClassification(config).save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


def direct_logits(path, query, texts):
    """Relevance logits straight from transformers, independently of LlamaIndex and the plugin."""
    tok = BertTokenizerFast.from_pretrained(path)
    model = BertForSequenceClassification.from_pretrained(path).eval()
    with torch.no_grad():
        return model(**tok([query] * len(texts), texts, padding=True, return_tensors="pt")).logits[:, 0].tolist()


def test_cross_encoder_scores_every_candidate_against_every_query(tiny_cross_encoder):
    scorer = PostprocessorScorer(postprocessor=loading.cross_encoder(tiny_cross_encoder, "cpu"))
    given = nodes()
    queries = ["annual fee", "descale the boiler"]
    matrix = scorer.score(queries, given, None)
    texts = [n.node.get_content(metadata_mode=MetadataMode.EMBED) for n in given]
    for q, row in zip(queries, matrix):
        logits = direct_logits(tiny_cross_encoder, q, texts)
        # Whatever activation the cross-encoder applies is monotonic: the order is the logits' order.
        assert np.argsort(row).tolist() == np.argsort(logits).tolist()
        assert len(set(row)) == len(row)
    # The reranker worked on copies: the caller's nodes keep their scores and metadata.
    assert [n.score for n in given] == [1.0, 0.5, 1.0 / 3]
    assert all("retrieval_score" not in n.node.metadata for n in given)


class ByLength(BaseNodePostprocessor):
    """A reranker that scores by text length and keeps its top_n, like LlamaIndex rerankers."""

    top_n: int = 2

    @classmethod
    def class_name(cls) -> str:
        return "tests.ByLength"

    def _postprocess_nodes(self, nodes, query_bundle=None):
        for n in nodes:
            n.score = float(len(n.node.get_content()))
        return sorted(nodes, key=lambda n: -n.score)[: self.top_n]


class FixedCut(BaseNodePostprocessor):
    """A reranker without a top_n field that always keeps two."""

    @classmethod
    def class_name(cls) -> str:
        return "tests.FixedCut"

    def _postprocess_nodes(self, nodes, query_bundle=None):
        return ByLength(top_n=2).postprocess_nodes(nodes, query_bundle=query_bundle)


def make_by_length():
    return ByLength()


def test_postprocessor_scorer_asks_for_every_candidate_and_ranks_dropped_ones_last():
    given = nodes()
    row = PostprocessorScorer(postprocessor=ByLength()).score(["q"], given, None)[0]
    assert row == [float(len(t)) for t in TEXTS]          # top_n was raised to the candidate count
    cut = PostprocessorScorer(postprocessor=FixedCut()).score(["q"], given, None)[0]
    # Lengths 49, 36, 36: the reranker's stable sort keeps the first two; the third scores lowest.
    assert cut == row[:2] + [-math.inf]


def test_config_builds_the_scorer_by_import_path(rag_with):
    rag = rag_with({"scorer": "postprocessor", "postprocessor": f"{__name__}:make_by_length",
                    "rerank_unsplit": True})
    result = rag.search("annual fee")
    rerank = result.trace.get("decompose", "rerank")
    assert rerank["reranked"] and rerank["scorer"] == "postprocessor:tests.ByLength"
    by_id = {n.node.node_id: n.node.get_content() for n in result.final}
    for c in rerank["candidates"]:
        assert c["scores"] == [float(len(by_id[c["id"]]))]


def test_cross_encoder_through_the_config_reranks_end_to_end(rag_with, tiny_cross_encoder):
    rag = rag_with({"scorer": "cross-encoder", "model": tiny_cross_encoder, "device": "cpu", "fusion": "scores"})
    result = rag.search("What is the annual fee?")
    rerank = result.trace.get("decompose", "rerank")
    # An independent scorer reranks unsplit questions by default; with fusion 'scores' the order is its own.
    assert rerank["reranked"] and rerank["scorer"] == "postprocessor:SentenceTransformerRerank"
    scores = [c["aggregate"] for c in rerank["candidates"]]
    assert scores == sorted(scores, reverse=True)
    assert [n.node.node_id for n in result.final] == [c["id"] for c in rerank["candidates"]]


@pytest.mark.parametrize("section, message", [
    ({"scorer": "cross-encoder"}, "needs model"),
    ({"model": "some/model"}, "only read with scorer = 'cross-encoder'"),
    ({"scorer": "postprocessor", "postprocessor": "no_colon"}, "not an import path"),
    ({"decomposer": "rules", "aggregat": "mean"}, "aggregat"),
    # A name other plugins could add is checked against them when the config is loaded.
    ({"decomposer": "magic"}, "decomposer = 'magic': no such decomposer; available: llm, none, rules"),
])
def test_bad_config_names_the_key(rag_with, section, message):
    with pytest.raises(ConfigError, match=message):
        rag_with(section)


@pytest.mark.parametrize("section, message", [
    ({"scorer": "cross-encoder", "model": "./no/such/dir"}, "model = './no/such/dir': no such directory"),
    ({"scorer": "postprocessor", "postprocessor": "no_such_module_xyz:make"}, "cannot import it"),
    ({"scorer": "postprocessor", "postprocessor": "math:pi"}, "not a LlamaIndex BaseNodePostprocessor"),
])
def test_unusable_scorer_fails_when_the_pipeline_is_built(rag_with, section, message):
    rag = rag_with(section)
    with pytest.raises(PluginError, match=message):
        rag.postprocessors()


def test_hybrid_scorer_fuses_dense_rank_with_bm25_among_the_candidates(ctx, bundled_embed_model):
    embed = lambda t: bundled_embed_model.get_text_embedding(t)  # noqa: E731
    given = nodes(embed)
    dense = EmbeddingScorer().score(["zzz qqq", "pump bar"], given, ctx)
    hybrid = HybridScorer().score(["zzz qqq", "pump bar"], given, ctx)
    # No candidate holds a query term: only the dense rank counts, 1 / (60 + rank).
    dense_rank = np.argsort(np.argsort(-np.asarray(dense[0]))) + 1
    assert hybrid[0] == pytest.approx([1 / (60 + r) for r in dense_rank])
    # Only the pump chunk matches "pump bar" lexically: it alone gets the BM25 term, and ranks first.
    assert np.argmax(hybrid[1]) == 2
    dense_rank = np.argsort(np.argsort(-np.asarray(dense[1]))) + 1
    assert hybrid[1][0] == pytest.approx(1 / (60 + dense_rank[0]))
    assert hybrid[1][2] == pytest.approx(1 / (60 + dense_rank[2]) + 1 / 61)


def test_hybrid_scorer_takes_the_configured_rrf_k(ctx, bundled_embed_model):
    given = nodes(lambda t: bundled_embed_model.get_text_embedding(t))
    scores = HybridScorer(rrf_k=1).score(["zzz"], given, ctx)[0]
    assert sorted(scores, reverse=True) == pytest.approx([1 / 2, 1 / 3, 1 / 4])
