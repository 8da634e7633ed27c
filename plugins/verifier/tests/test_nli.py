"""The nli backend end to end with tiny BERT checkers built here (random weights, real transformers)."""

import json
import math

import pytest
import torch
from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

from ragplugins_verifier import NLIVerifier, VerifierModelUnavailable

WORDS = ("the kiln main chamber reaches degrees celsius during a glaze firing replace door seal part every months "
         "blower motor is rated for watts preheat held at vacuum element grooves").split()
WINDOW = 48
NLI_LABELS = {0: "contradiction", 1: "neutral", 2: "entailment"}


def build(path, id2label, num_labels=None):
    path.mkdir(parents=True, exist_ok=True)
    # transformers 5 ignores vocab_file=: without vocab= every word would be [UNK].
    pieces = dict.fromkeys(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS, *map(str, range(10)),
                            *(f"##{d}" for d in range(10)), ".", ","])
    tok = BertTokenizerFast(vocab={w: i for i, w in enumerate(pieces)}, model_max_length=WINDOW)
    assert "[UNK]" not in tok.tokenize("the blower motor is rated for 75 watts .")
    n = num_labels or len(id2label)
    config = BertConfig(vocab_size=tok.vocab_size, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=WINDOW, num_labels=n, id2label=id2label,
                        label2id={v: k for k, v in id2label.items()})
    torch.manual_seed(0)
    BertForSequenceClassification(config).save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="module")
def nli_model(tmp_path_factory):
    return build(tmp_path_factory.mktemp("nli") / "three", NLI_LABELS)


def direct_scores(path, premises, hypothesis, index=None):
    """P(supported) computed straight from transformers, independently of the verifier."""
    tok = BertTokenizerFast.from_pretrained(path)
    model = BertForSequenceClassification.from_pretrained(path).eval()
    with torch.no_grad():
        logits = model(**tok(premises, [hypothesis] * len(premises), padding=True, return_tensors="pt")).logits
    if index is None:
        return torch.sigmoid(logits[:, 0]).tolist()
    return torch.softmax(logits, dim=-1)[:, index].tolist()


LONG = " ".join(f"the blower motor is rated for {i} watts ." for i in range(30)) + \
    " replace the door seal every 18 months ."


def test_end_to_end_verdict_with_entailment_label(nli_model):
    v = NLIVerifier(model=nli_model, threshold=0.0)
    verdict = v.verify(
        "q", "Replace the door seal every 18 months.", [{"id": "n1", "text": "replace the door seal every 18 months ."}]
    )
    (s,) = verdict.sentences
    expected = direct_scores(nli_model, ["replace the door seal every 18 months ."], s.text, index=2)[0]
    assert s.score == pytest.approx(expected, abs=1e-5)
    assert verdict.grounded and verdict.backend == "nli" and s.node_id == "n1"
    assert not NLIVerifier(model=nli_model, threshold=1.0).verify("q", s.text, ["replace the door seal ."]).grounded


def test_long_evidence_is_windowed_and_each_sentence_takes_its_best_window(nli_model):
    v = NLIVerifier(model=nli_model, stride=8)
    hypothesis = "Replace the door seal every 18 months."
    spans = v.windows(LONG, hypothesis)
    tok = BertTokenizerFast.from_pretrained(nli_model)
    assert len(tok(LONG)["input_ids"]) > WINDOW > 0 and len(spans) > 2
    # Nothing is cut: the windows cover the evidence from its first to its last token...
    assert spans[0][0] == 0 and spans[-1][1] == len(LONG.rstrip())
    assert all(b[0] < a[1] for a, b in zip(spans, spans[1:])), "consecutive windows must overlap"
    # ...and every window fits the model beside the sentence.
    assert all(len(tok(LONG[s:e], hypothesis)["input_ids"]) <= WINDOW for s, e in spans)
    verdict = v.verify("", hypothesis, [{"id": "long", "text": LONG}])
    (s,) = verdict.sentences
    scores = direct_scores(nli_model, [LONG[a:b] for a, b in spans], hypothesis, index=2)
    best = max(range(len(scores)), key=scores.__getitem__)
    assert s.score == pytest.approx(scores[best], abs=1e-5)
    assert s.span == spans[best] and s.evidence == LONG[slice(*spans[best])]


def test_windows_cut_between_words_so_each_fits_when_tokenized_again(tmp_path):
    """A window cut inside a word ("abcd" is ab ##cd) starts with a piece that tokenizes into more tokens on its
    own (cd is c ##d): with the real MiniLM tokenizer and a 128-token window this made v1 raise "does not fit"."""
    path = tmp_path / "pieces"
    pieces = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "seal", "ab", "##cd", "c", "##d", "."]
    tok = BertTokenizerFast(vocab={w: i for i, w in enumerate(pieces)}, model_max_length=WINDOW)
    assert tok.tokenize("abcd cd") == ["ab", "##cd", "c", "##d"]
    config = BertConfig(vocab_size=tok.vocab_size, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=WINDOW, num_labels=3, id2label=NLI_LABELS,
                        label2id={v: k for k, v in NLI_LABELS.items()})
    BertForSequenceClassification(config).save_pretrained(path)
    tok.save_pretrained(path)
    evidence, hypothesis = " ".join(["abcd"] * 60) + " the seal .", "The seal abcd."
    for stride in (5, 6):  # an odd and an even step between window starts: one of them lands on ##cd
        v = NLIVerifier(model=str(path), stride=stride, threshold=0.0)
        budget = WINDOW - len(tok(hypothesis)["input_ids"]) - 1
        spans = v.windows(evidence, hypothesis)
        assert len(spans) > 2 and spans[0][0] == 0 and spans[-1][1] == len(evidence)
        assert all(b[0] < a[1] for a, b in zip(spans, spans[1:])), "consecutive windows must overlap"
        for s, e in spans:
            assert s == 0 or evidence[s - 1] == " ", f"window starts inside a word: {evidence[s - 2:s + 4]!r}"
            assert len(tok(evidence[s:e], add_special_tokens=False)["input_ids"]) <= budget
        assert v.verify("", hypothesis, [evidence]).error is None


def test_answer_score_is_the_weakest_sentence(nli_model):
    v = NLIVerifier(model=nli_model, threshold=0.0)
    verdict = v.verify("", "The blower motor is rated for 75 watts. Replace the door seal every 18 months.",
                       ["the blower motor is rated for 75 watts . replace the door seal every 18 months ."])
    assert verdict.score == min(s.score for s in verdict.sentences)


@pytest.mark.parametrize("labels, num_labels, index", [
    ({0: "LABEL_0", 1: "LABEL_1"}, None, 1),                 # binary checker without names: positive class last
    ({0: "supported", 1: "unsupported"}, None, 0),
    ({0: "0"}, 1, None),                                      # single logit: sigmoid
])
def test_supported_class_from_the_label_map(tmp_path, labels, num_labels, index):
    path = build(tmp_path / "m", labels, num_labels)
    v = NLIVerifier(model=path, threshold=0.0)
    verdict = v.verify("", "The blower motor is rated for 75 watts.", ["the blower motor is rated for 75 watts ."])
    expected = direct_scores(path, ["the blower motor is rated for 75 watts ."], verdict.sentences[0].text, index)[0]
    assert verdict.sentences[0].score == pytest.approx(expected, abs=1e-5)


def test_unclear_labels_need_entailment_label(tmp_path):
    path = build(tmp_path / "m", {0: "a", 1: "b", 2: "c"})
    with pytest.raises(VerifierModelUnavailable, match="entailment_label"):
        NLIVerifier(model=path).verify("", "The blower motor is rated for 75 watts.", ["the blower motor ."])
    v = NLIVerifier(model=path, entailment_label="c", threshold=0.0)
    verdict = v.verify("", "The blower motor is rated for 75 watts.", ["the blower motor ."])
    assert verdict.sentences[0].score == pytest.approx(
        direct_scores(path, ["the blower motor ."], verdict.sentences[0].text, index=2)[0], abs=1e-5)


def test_a_model_that_cannot_load_raises_a_clear_error_lazily(tmp_path):
    missing = tmp_path / "no-such-model"
    v = NLIVerifier(model=str(missing))  # constructing loads nothing
    with pytest.raises(VerifierModelUnavailable) as err:
        v.verify("", "The blower motor is rated for 75 watts.", ["text"])
    message = str(err.value)
    assert str(missing) in message and "fidelity" in message and "No other verifier was used" in message


def test_remote_code_needs_explicit_opt_in(tmp_path):
    path = tmp_path / "custom"
    path.mkdir()
    (path / "config.json").write_text(json.dumps({
        "model_type": "ragplugins-test-custom", "architectures": ["Custom"],
        "auto_map": {"AutoConfig": "modeling.CustomConfig",
                     "AutoModelForSequenceClassification": "modeling.Custom"}}))
    with pytest.raises(VerifierModelUnavailable, match="trust_remote_code"):
        NLIVerifier(model=str(path)).load()


def test_trust_remote_code_is_passed_exactly_as_configured(monkeypatch, nli_model):
    import transformers

    seen = []
    real_tok = transformers.AutoTokenizer.from_pretrained
    real_model = transformers.AutoModelForSequenceClassification.from_pretrained
    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained",
                        lambda name, **kw: seen.append(kw["trust_remote_code"]) or real_tok(name, **kw))
    monkeypatch.setattr(transformers.AutoModelForSequenceClassification, "from_pretrained",
                        lambda name, **kw: seen.append(kw["trust_remote_code"]) or real_model(name, **kw))
    NLIVerifier(model=nli_model).load()
    NLIVerifier(model=nli_model, trust_remote_code=True).load()
    assert seen == [False, False, True, True]  # model and tokenizer, per verifier


def test_scores_are_probabilities(nli_model):
    v = NLIVerifier(model=nli_model)
    scores = v.score_pairs([("the kiln .", "the kiln ."), ("the door seal .", "every 18 months .")])
    assert all(0.0 <= s <= 1.0 and not math.isnan(s) for s in scores)


def test_fidelity_plus_nli_rejects_when_either_rejects(nli_model, bundled_embed_model):
    from ragplugins_verifier import FidelityVerifier
    from ragplugins_verifier.combined import CombinedVerifier

    evidence = ["the blower motor is rated for 75 watts ."]
    fidelity = FidelityVerifier(embed_model=bundled_embed_model)
    both = CombinedVerifier(first=fidelity, second=NLIVerifier(model=nli_model, threshold=0.0))
    assert both.verify("", "The blower motor is rated for 75 watts.", evidence).grounded
    wrong = both.verify("", "The blower motor is rated for 95 watts.", evidence)
    assert not wrong.grounded and "95 watts" in " ".join(wrong.sentences[0].reasons)  # fidelity rejects
    strict = CombinedVerifier(first=fidelity, second=NLIVerifier(model=nli_model, threshold=1.0))
    v = strict.verify("", "The blower motor is rated for 75 watts.", evidence)
    assert not v.grounded and v.backend == "fidelity+nli" and "nli: entailment" in v.sentences[0].reasons[0]


def test_fidelity_plus_nli_keeps_fidelitys_verdict_on_a_sentence_only_fidelity_can_check(nli_model, fidelity):
    """"Yes." is checkable only with the question (fidelity reads it as the question's statement); the nli
    backend finds nothing to check in it, which is no reason to reject what fidelity accepted."""
    from ragplugins_verifier.combined import CombinedVerifier

    question, evidence = "Is the blower motor rated for 75 watts?", ["the blower motor is rated for 75 watts ."]
    nli = NLIVerifier(model=nli_model, threshold=0.0)
    assert fidelity.verify(question, "Yes.", evidence).grounded
    assert nli.verify(question, "Yes.", evidence).error  # nothing the nli backend can check
    both = CombinedVerifier(first=fidelity, second=nli)
    verdict = both.verify(question, "Yes.", evidence)
    assert verdict.grounded and verdict.error is None and verdict.sentences[0].checked
    assert not fidelity.verify(question, "No.", evidence).grounded
    assert not both.verify(question, "No.", evidence).grounded
    no_evidence = both.verify(question, "Yes.", [])  # a real failure is still reported
    assert not no_evidence.grounded and no_evidence.error == fidelity.verify(question, "Yes.", []).error


def test_fidelity_plus_nli_is_a_backend_that_needs_a_model(nli_model, bundled_embed_model):
    from types import SimpleNamespace

    from ragplugins_verifier import VerifierConfig, build_verifier

    with pytest.raises(ValueError, match="fidelity\\+nli' needs"):
        VerifierConfig(backend="fidelity+nli")
    config = VerifierConfig(backend="fidelity+nli", nli={"model": nli_model})
    verifier = build_verifier(config, SimpleNamespace(embed_model=bundled_embed_model, pluginmanager=None))
    assert verifier.name == "fidelity+nli"


def test_a_local_path_that_does_not_exist_is_one_clear_line(tmp_path):
    v = NLIVerifier(model=str(tmp_path / "checkpoints" / "minicheck"))
    with pytest.raises(VerifierModelUnavailable) as err:
        v.load()
    assert "is not a directory" in str(err.value) and "\n" not in str(err.value)
    assert "Repo id" not in str(err.value)
