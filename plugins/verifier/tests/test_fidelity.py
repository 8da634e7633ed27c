"""The offline default on evidence written for these tests: what passes, what fails and why."""

import pytest

from ragplugins_verifier import VerifierError

KILN = object()  # stands for the two kiln nodes (texts.evidence)


@pytest.fixture
def check(fidelity, texts):
    def run(answer, evidence=KILN, question=""):
        return fidelity.verify(question, answer, texts.evidence if evidence is KILN else evidence)
    return run


def reasons(verdict):
    return " | ".join(r for s in verdict.sentences for r in s.reasons)


@pytest.mark.parametrize("answer", [
    "During a glaze firing the main chamber reaches 1260 °C.",
    "Replace the door seal, part DS-448, every 18 months.",
    "F31 means a door switch fault: clean the switch contacts, then restart the controller.",
    "The blower motor is rated for 75 W. The preheat chamber is kept at 180 degrees Celsius.",
    "No, thermocouples are not covered by the warranty.",
])
def test_grounded_paraphrases_pass(check, answer):
    v = check(answer)
    assert v.grounded, reasons(v)
    assert v.score >= v.threshold and v.error is None


def test_support_names_the_node_and_span(check, texts):
    v = check("Replace the element, part EL-207, when F12 shows an open circuit.")
    assert v.grounded, reasons(v)
    (s,) = v.sentences
    assert s.node_id == "faults"
    start, end = s.span
    assert texts.faults[start:end] == s.evidence and "F12" in s.evidence


@pytest.mark.parametrize("answer, expected", [
    ("The blower motor is rated for 95 watts.", "'95 watts' does not appear"),
    ("Replace the door seal (part DS-484) every 18 months.", "'DS-484' does not appear"),
    ("Replace the door seal every 18 weeks.", "only with another unit"),
    ("The main chamber reaches 1,260 degrees Fahrenheit.", "only with another unit"),
    ("The main chamber reaches 180 degrees Celsius during a glaze firing, and the preheat chamber is held "
     "at 1,260 degrees Celsius.", "attached to another subject"),
    ("Thermocouples are covered by the warranty.", "negation differs"),
    ("For F31, clean the switch contacts, recalibrate the pyrometer with the vendor's service dongle, "
     "then restart the controller.", "adds content"),
    ("Replace the door seal every 18 months, as the Finance Committee decided.", "'Finance Committee'"),
])
def test_subtle_errors_are_caught_with_a_reason(check, answer, expected):
    v = check(answer)
    assert not v.grounded
    assert v.score == 0.0
    assert expected in reasons(v)


def test_swapped_values_between_two_subjects(check, texts):
    evidence = [texts.travel]
    right = check("Staff below Level 4 get 45 EUR a day; Level 4 and above get 70 EUR.", evidence)
    swapped = check("Staff below Level 4 get 70 EUR a day; Level 4 and above get 45 EUR.", evidence)
    assert right.grounded, reasons(right)
    assert not swapped.grounded and "attached to another subject" in reasons(swapped)


def test_dates_are_normalised_and_checked(check, texts):
    evidence = [texts.travel]
    assert check("The Finance Committee approved the policy on March 3, 2025.", evidence).grounded
    v = check("The Finance Committee approved the policy on 3 May 2025.", evidence)
    assert not v.grounded and "date" in reasons(v)


def test_one_unsupported_sentence_makes_the_answer_ungrounded(check):
    v = check("The blower motor is rated for 75 watts. The door seal is part DS-999.")
    assert not v.grounded
    assert [s.text for s in v.unsupported] == ["The door seal is part DS-999."]
    assert v.sentences[0].supported and v.sentences[0].score > 0
    assert v.score == min(s.score for s in v.sentences)


def test_claim_from_another_document_is_not_supported(check, texts):
    v = check("Flights under 6 hours must be booked in economy class.", [texts.specs])
    assert not v.grounded


def test_answer_particles_are_not_checked(check):
    v = check("Yes. The blower motor is rated for 75 watts.")
    assert v.grounded
    assert v.sentences[0].checked is False and v.sentences[0].score is None


def test_acronyms_match_their_expansion(check, texts):
    v = check("The FC approved policy TP-9 on 3 March 2025.", [texts.travel])
    assert v.grounded, reasons(v)


@pytest.mark.parametrize("answer, evidence, error", [
    ("", KILN, "empty"),
    ("The blower motor is rated for 75 watts.", [], "no evidence"),
    ("Yes.", KILN, "no sentence"),
])
def test_nothing_to_verify_is_not_grounded_and_says_why(check, answer, evidence, error):
    v = check(answer, evidence)
    assert not v.grounded and error in v.error


def test_unit_embeddings_are_cached_between_calls(fidelity, check):
    check("The blower motor is rated for 75 watts.")
    cached = len(fidelity._cache)
    assert cached > 0
    check("The blower motor is rated for 75 watts.")
    assert len(fidelity._cache) == cached


def test_bad_evidence_type_is_a_clear_error(check):
    with pytest.raises(VerifierError, match="evidence item 0 is a int"):
        check("x y z", [42])


class _CountingEmbedder:
    """The bundled embedder, counting the texts it is asked to embed."""

    def __init__(self, inner):
        self.inner, self.texts = inner, []

    def get_text_embedding_batch(self, texts, **kwargs):
        self.texts += texts
        return self.inner.get_text_embedding_batch(texts, **kwargs)


def test_a_sentence_the_evidence_says_word_for_word_skips_the_embedder(bundled_embed_model, texts):
    from ragplugins_verifier.fidelity import FidelityVerifier

    counting = _CountingEmbedder(bundled_embed_model)
    verifier = FidelityVerifier(embed_model=counting)
    v = verifier.verify("", "Vacuum the element grooves every 30 firings.", texts.evidence)
    assert v.grounded and counting.texts == []
    (s,) = v.sentences
    assert s.node_id == "specs" and s.evidence == "Vacuum the element grooves every 30 firings"
    assert s.score == pytest.approx(1.0)
    # A paraphrase sharing few of the unit's words is still judged by the embedder.
    paraphrase = "During a glaze firing the main chamber gets as hot as 1260 °C."
    assert verifier.verify("", paraphrase, texts.evidence).grounded
    assert paraphrase in counting.texts
