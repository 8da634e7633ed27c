"""Issue 18, second round: roles around relation words, restated values, lists, qualifiers and short answers.
Evidence written for these tests (a fictional backup appliance)."""

import pytest

from ragplugins_verifier import polarity
from ragplugins_verifier.facts import extract

APPLIANCE = (
    "VAULT-7 BACKUP APPLIANCE - NOTES\n"
    "The sync tool copies `src` to `dest` every night. "
    "It keeps fast SSD caches (S1 and S2), backed by a large disk pool (D1).\n"
    "The `bus.on()` call registers listeners, while the `bus.emit()` call fires the event.\n"
    "Only alarms of level WARN and above are logged, unless logging is configured otherwise.\n"
    "If no filter is given, the innermost job is stopped and the queue continues.\n"
    "The mirror almost always serves the same page as the origin.\n"
    "For all drives except the D-10, the seal lasts between 2 and 3 years.\n"
    "The cleaning kit can be used to clean filters, valves, and nozzles.\n"
    "The transfer buffer holds `1024 * 1024` bytes. The journal may grow to twenty million bytes.\n"
    "Zero, negative, or not specified means wait forever.\n"
    "Only one operator can open the service panel at a time.\n"
)
TIMEOUT = "The minimum allowed wait is 2 seconds, therefore a value of 1 is interpreted as 2."


@pytest.fixture
def check(fidelity):
    def run(answer, question="", evidence=None):
        return fidelity.verify(question, answer, evidence or [APPLIANCE])
    return run


def reasons(v):
    return " | ".join(r for s in v.sentences for r in s.reasons) or (v.error or "")


def assert_judged(v, grounded, why):
    """``v`` is grounded as expected; a rejection names ``why``."""
    assert v.grounded is grounded, reasons(v)
    if not grounded:
        assert why in reasons(v)


@pytest.mark.parametrize("answer", [
    "The sync tool copies src to dest every night.",
    "The appliance keeps fast SSD caches S1 and S2, backed by a large disk pool D1.",
    "bus.on() registers listeners, while bus.emit() fires the event.",
    "Only alarms of level WARN and above are logged.",
    "Without a filter, the innermost job is stopped.",
    "The mirror almost always serves the same page as the origin.",
    "The cleaning kit cleans filters, valves and nozzles.",
    "The transfer buffer holds 1024 * 1024 bytes, about 1 MiB.",
    "The journal may grow to about 20 MB.",
    "Zero means wait forever.",
])
def test_paraphrases_pass(check, answer):
    v = check(answer)
    assert v.grounded, reasons(v)


@pytest.mark.parametrize("answer, expected", [
    # the two sides of a relation word trade places ("to", "backed by")
    ("The sync tool copies dest to src every night.", "roles are swapped"),
    ("The appliance keeps a large disk pool D1, backed by fast SSD caches S1 and S2.", "roles are swapped"),
    # identifiers are whole roles
    ("bus.emit() registers listeners, while bus.on() fires the event.", "roles are swapped"),
    # an opposite in a clause too short to place on its own
    ("Only alarms of level WARN and below are logged.", "opposite"),
    # a negation elsewhere in the evidence unit does not undo an opposite
    ("Without a filter, the outermost job is stopped.", "opposite"),
    # hedges and exceptions dropped, restrictions widened, exact values for a range
    ("The mirror always serves exactly the same page as the origin.", "opposite"),
    ("All alarms are logged, unless logging is configured otherwise.", "widens"),
    ("For every drive the seal lasts between 2 and 3 years.", "widens"),
    # a list member replaced
    ("The cleaning kit cleans filters, valves and hoses.", "list"),
])
def test_relations_qualifiers_and_lists_are_caught(check, answer, expected):
    v = check(answer)
    assert not v.grounded and expected in reasons(v), reasons(v)


def test_products_and_scaled_number_words_are_values():
    (product,) = extract("holds 1024 * 1024 bytes", claims=False)
    assert product.value == 1024 * 1024 and product.unit == "byte"
    (scaled,) = extract("grows to twenty million bytes")
    assert scaled.value == 20_000_000 and scaled.unit == "byte"


def test_a_bare_number_is_not_a_value_in_any_unit(check):
    assert check("The minimum allowed wait is 2000 milliseconds.", evidence=[TIMEOUT]).grounded
    v = check("The minimum allowed wait is 2 minutes.", evidence=[TIMEOUT])
    assert not v.grounded and "another unit" in reasons(v), reasons(v)


def test_the_setting_asked_about_need_not_be_repeated(check):
    question = "What is the minimum connect_wait?"
    assert check("The minimum connect_wait is 2 seconds.", question, evidence=[TIMEOUT]).grounded
    # ... unless the passage names another setting it could belong to
    other = TIMEOUT + " This applies to retry_wait only."
    v = check("The minimum connect_wait is 2 seconds.", question, evidence=[other])
    assert not v.grounded and "connect_wait" in reasons(v), reasons(v)


@pytest.mark.parametrize("question, answer, grounded", [
    # an opening phrase before the auxiliary
    ("With no filter given, is the innermost job stopped?", "Yes.", True),
    ("With no filter given, is the outermost job stopped?", "Yes.", False),
    # "No, <explanation>": the explanation is the claim; the evidence must not affirm the question
    ("Can two operators open the service panel at the same time?", "No, only one operator can open it at a time.",
     True),
    ("Can one operator open the service panel?", "No, only a technician can open it.", False),
    # "Yes." claims the question's words: they must come from the evidence
    ("Does the sync tool copy src to dest every night?", "Yes.", True),
    ("Does the sync tool encrypt the archive with a hardware key?", "Yes.", False),
])
def test_short_answers_with_phrases_and_explanations(check, question, answer, grounded):
    v = check(answer, question=question)
    assert v.grounded is grounded, reasons(v)


def test_prefixes_need_a_word_of_their_own():
    assert polarity.opposites({"to"}, {"into"}) == []
    assert polarity.opposites({"unpaid"}, {"paid"}) == [("unpaid", "paid")]


# Round three (written for these tests; not benchmark text).
COUNTER = ("Each time the counter is read, it returns a whole number between 0 and 4095. Writing a value to the "
           "counter resets the sequence. The archive mode gives more throughput as readers do not block writers. "
           "If the limit is zero, the scanner stops right away without reading input. "
           "The job timer wraps after 2147483647 milliseconds.")


@pytest.mark.parametrize("answer", [
    # the other end of a range the sentence states is no rival value
    "Reading the counter returns a whole number from 0 to 4095.",
    # a relation word's two sides stay in its clause ("to" of the range is not the "to" of "writing to")
    "Each read of the counter returns a whole number from 0 to 4095, and writing to the counter resets the "
    "sequence.",
    # a negation bears on the words after it: "do not block writers" does not deny "more throughput"
    "The archive mode gives more throughput.",
    "With a zero limit the scanner stops right away.",
    # a hedge with a scale word: "about 2.1 billion" covers the last digit's place, 100 million
    "The job timer wraps after about 2.1 billion milliseconds.",
])
def test_ranges_clauses_negation_scope_and_scaled_hedges(check, answer):
    v = check(answer, evidence=[COUNTER])
    assert v.grounded, reasons(v)


@pytest.mark.parametrize("answer, reason", [
    ("Reading the counter returns a whole number from 0 to 4096.", "does not appear"),
    ("The archive mode gives more throughput as readers block writers.", "negation differs"),
    ("With a zero limit the scanner stops right away after reading input.", "negation differs"),
    ("The job timer wraps after 2.1 billion milliseconds.", "does not appear"),
    ("The job timer wraps after about 2.3 billion milliseconds.", "does not appear"),
])
def test_the_same_mechanisms_still_reject(check, answer, reason):
    v = check(answer, evidence=[COUNTER])
    assert not v.grounded and reason in reasons(v)


BOUNDS = "The relay handles 40,000 or more messages per second. A frame holds at most 512 bytes."


@pytest.mark.parametrize("answer, grounded", [
    ("The relay handles at least 40,000 messages per second.", True),
    ("The relay handles 40,000 messages per second.", True),
    ("The relay handles at most 40,000 messages per second.", False),
    ("The relay handles up to 40,000 messages per second.", False),
    ("A frame holds no more than 512 bytes.", True),
    ("A frame holds 512 bytes or more.", False),
    ("A frame holds not less than 512 bytes.", False),
])
def test_a_bound_on_a_value_must_point_the_way_the_evidence_does(check, answer, grounded):
    assert_judged(check(answer, evidence=[BOUNDS]), grounded, "bound")


CONTRAST = "Inside a sandbox, $ID expands to the session number of the parent console, not the sandbox."


@pytest.mark.parametrize("answer, grounded", [
    ("Inside a sandbox, $ID gives the session number of the parent console rather than that of the sandbox.", True),
    ("Inside a sandbox, $ID gives the session number of the sandbox rather than that of the parent console.", False),
    ("Inside a sandbox, $ID gives the session number of the sandbox instead of the parent console.", False),
])
def test_what_a_contrast_sets_aside_must_not_trade_places(check, answer, grounded):
    assert_judged(check(answer, evidence=[CONTRAST]), grounded, "contrast")
