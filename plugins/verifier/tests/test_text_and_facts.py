"""Sentence splitting, evidence units and fact normalisation."""

import pytest

from ragplugins_verifier.facts import extract
from ragplugins_verifier.text import evidence_units, split_sentences


def test_sentences_respect_abbreviations_numbers_and_initials():
    text = ("No. The seal is part No. 17/456 from Acme Inc. in the U.S. market. Signed by James R. Mitchell. "
            "See Exhibit A. The pressure is 9.2 bar.\n- first item\n- second item")
    assert [s.text for s in split_sentences(text)] == [
        "No.", "The seal is part No. 17/456 from Acme Inc. in the U.S. market.", "Signed by James R. Mitchell.",
        "See Exhibit A.", "The pressure is 9.2 bar.", "- first item", "- second item"]
    for s in split_sentences(text):
        assert text[s.start:s.end] == s.text


def test_evidence_units_join_wrapped_lines_and_keep_headings():
    text = ("1. MegaCorp Inc. - OBTAINED\nContract Value: $3.4M annual\n"
            "The group head gasket should be replaced every time the machine has been\nserviced twice.\n")
    units = evidence_units("n", text)
    assert [u.text for u in units] == [
        "1. MegaCorp Inc. - OBTAINED", "Contract Value: $3.4M annual",
        "The group head gasket should be replaced every time the machine has been\nserviced twice."]
    assert units[1].heading == "1. MegaCorp Inc. - OBTAINED"


def value(text, kind="number"):
    return [(f.value, f.unit) for f in extract(text) if f.kind == kind]


@pytest.mark.parametrize("a, b", [
    ("$45 million", "$45,000,000 USD"),
    ("$3.4M", "$3,400,000"),
    ("93.5 °C", "93.5 degrees Celsius"),
    ("five working days", "5 working days"),
    ("28%", "28 percent"),
    ("a 36-month warranty", "36 months"),
    ("75 W", "75 watts"),
    ("45 EUR", "€45"),
])
def test_numbers_normalise_across_spellings(a, b):
    assert value(a) == value(b) and value(a)


@pytest.mark.parametrize("a, b", [("18 months", "18 weeks"), ("4000 tokens", "4000 characters"),
                                  ("93.5 °F", "93.5 °C"), ("$45,000", "$45,000,000")])
def test_different_values_or_units_stay_different(a, b):
    assert value(a) != value(b)


def test_dates_codes_ranges_and_entities():
    facts = extract("On January 28, 2025 (28 January 2025) Morrison & Associates replaced MG-311 and "
                    "TS-71; costs rose 20-30% per qwen3.5:4b at the Head of People Operations' request.")
    kinds = {(f.kind, f.value if f.kind != "number" else (f.value, f.unit)) for f in facts}
    assert ("date", (2025, 1, 28)) in kinds and sum(1 for f in facts if f.kind == "date") == 2
    assert {("code", "mg-311"), ("code", "ts-71"), ("code", "qwen3.5:4b")} <= kinds
    assert {("number", (20.0, "%")), ("number", (30.0, "%"))} <= kinds
    assert {("entity", "morrison & associates"), ("entity", "head of people operations")} <= kinds


def test_list_numbering_and_sentence_openers_are_not_facts():
    facts = extract("Descale the boiler every 60 days.")
    assert [(f.kind, f.text) for f in facts] == [("number", "60 days")]
