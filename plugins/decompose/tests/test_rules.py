"""The LLM-free splitter: splits only on explicit coordination, leaves everything else alone."""

import pytest

from ragplugins_decompose.decomposers.rules import RuleDecomposer, has_content

rules = RuleDecomposer()


def split(query):
    return rules.decompose(query).sub_queries


@pytest.mark.parametrize("query, expected", [
    ("What is the annual fee and when is it payable?", ["What is the annual fee", "when is it payable"]),
    ("Who signed the agreement, and where are they based?", ["Who signed the agreement", "where are they based"]),
    ("What is the fee, and is it refundable?", ["What is the fee", "is it refundable"]),
    ("What is the fee; when is it due?", ["What is the fee", "when is it due"]),
    ("What is the annual fee? When is it payable?", ["What is the annual fee", "When is it payable"]),
    ("What do I need to qualify for a sabbatical, how much notice must I give, and who signs it off?",
     ["What do I need to qualify for a sabbatical", "how much notice must I give", "who signs it off"]),
    ("What are the fees, the term and the termination rights?",
     ["What are the fees", "What are the term", "What are the termination rights"]),
    ("How do I clean the boiler, the pump, and the gasket?",
     ["How do I clean the boiler", "How do I clean the pump", "How do I clean the gasket"]),
    ("In 2023, what were revenue, costs and profit?",
     ["In 2023, what were revenue", "In 2023, what were costs", "In 2023, what were profit"]),
    ("How is leave handled regarding both the rollover cap and the expiry date?",
     ["How is leave handled regarding the rollover cap", "How is leave handled regarding the expiry date"]),
])
def test_splits_coordinated_questions_and_lists(query, expected):
    assert split(query) == expected


@pytest.mark.parametrize("query", [
    "What are the terms and conditions?",
    "What is the difference between the brew boiler and the steam boiler?",
    "What happens if the tenant leaves and does not pay?",
    "For each affected customer, what is the current consent status?",
    "What is the identifier and revision number of the policy?",
    "Which needs doing more often: descaling, or replacing the gasket?",
    "What is the price of 120,000 units and 5,000 units?",
    "Do both parties sign and date it?",
    "If the pump fails, the light blinks and the alarm sounds, what should I do?",
    "When and where is the closing?",
    "how do I enable pruning",
    "",
])
def test_leaves_single_questions_alone(query):
    result = rules.decompose(query)
    assert result.sub_queries == []
    assert result.reason


def test_a_premise_sentence_is_context_not_a_sub_query():
    query = "The finance team revised the price. What figure did they land on, and does the checklist match it?"
    assert split(query) == ["What figure did they land on", "does the checklist match it"]


def test_a_relative_clause_is_not_a_question_of_its_own():
    assert split("What is the fee, which is due on signing, and when does the term end?") == \
        ["What is the fee, which is due on signing", "when does the term end"]


def test_a_part_without_content_words_cancels_the_split():
    assert split("What and when is it?") == []
    assert not has_content("how is it")
    assert has_content("Exhibit A")


def test_records_the_rules_that_fired():
    result = rules.decompose("What are the fees, the term and the notice? And who signs?")
    assert result.details["rules"] == ["list", "several questions"]
    assert result.sub_queries == ["What are the fees", "What are the term", "What are the notice", "who signs"]
