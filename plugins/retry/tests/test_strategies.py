import asyncio
from types import SimpleNamespace

from llama_index.core.prompts import PromptTemplate
from retry_testkit import node

from ragplugins.testing import FakeLLM
from ragplugins_retry import KeywordsStrategy, LLMStrategy, PseudoRelevanceFeedbackStrategy


def test_keywords_keeps_content_words_identifiers_and_numbers():
    s = KeywordsStrategy()
    assert s.reformulate("What is the annual fee?", [], None).query == "annual fee"
    out = s.reformulate("How many dimensions does the Qwen3-Embedding-4B produce in v1.2?", [], None).query
    assert out == "many dimensions Qwen3-Embedding-4B produce v1.2"


def test_keywords_does_not_retry_the_same_query_or_nothing():
    s = KeywordsStrategy()
    same = s.reformulate("annual fee", [], None)
    assert same.query is None and "already" in same.reason
    empty = s.reformulate("What is it?", [], None)
    assert empty.query is None and "no content words" in empty.reason


def test_prf_appends_terms_that_distinguish_the_top_candidates():
    top = [node(f"t{i}", "Gasket GK-4471 replacement: the gasket seals the boiler") for i in range(2)]
    rest = [node(f"r{i}", "The boiler heats water for the machine") for i in range(4)]
    out = PseudoRelevanceFeedbackStrategy(feedback_docs=2, terms=2).reformulate("How do I fix a leak?",
                                                                                top + rest, None)
    assert out.query.startswith("How do I fix a leak? ")
    assert out.details["added_terms"] == ["Gasket", "GK-4471"]  # 'boiler' is everywhere, so it says nothing
    again = PseudoRelevanceFeedbackStrategy(feedback_docs=2, terms=2).reformulate("How do I fix a leak?",
                                                                                  top + rest, None)
    assert again.query == out.query


def test_prf_needs_more_candidates_than_feedback_documents():
    out = PseudoRelevanceFeedbackStrategy(feedback_docs=3).reformulate("q", [node("a"), node("b")], None)
    assert out.query is None and "too few" in out.reason


def _ctx(llm):
    return SimpleNamespace(llm=llm)


def test_llm_rewrite_is_used_when_faithful():
    llm = FakeLLM(replies=['<think>hmm</think>{"query": "annual fee amount Acme Corp 2024 agreement"}'],
                  prompts=[])
    out = LLMStrategy().reformulate("What annual fee does Acme Corp pay in 2024?", [], _ctx(llm))
    assert out.query == "annual fee amount Acme Corp 2024 agreement"
    assert "Question: What annual fee does Acme Corp pay in 2024?" in llm.prompts[0]
    assert llm.prompts[0].endswith('Reply with JSON only: {"query": "<the rewritten search query>"}\n')


def test_llm_junk_means_no_retry():
    q = "What annual fee does Acme Corp pay in 2024?"
    cases = {
        "Sure! The fee is 120,000 EUR.": "not JSON",
        '{"answer": "x"}': "not JSON",
        '{"query": "  "}': "not JSON",
        '{"query": "what annual fee does acme corp pay in 2024?"}': "unchanged",
        '{"query": "annual fee Acme Corp"}': "dropped '2024'",
        '{"query": "annual fee 2024 corporation"}': "dropped 'Acme', 'Corp'",
        '{"query": "' + "fee Acme Corp 2024 " * 30 + '"}': "characters long",
    }
    for reply, reason in cases.items():
        out = LLMStrategy().reformulate(q, [], _ctx(FakeLLM(replies=[reply], prompts=[])))
        assert out.query is None and reason in out.reason, (reply, out)


def test_llm_absent_or_failing_means_no_retry():
    assert "ctx.llm is None" in LLMStrategy().reformulate("q x", [], _ctx(None)).reason

    def boom(prompt):
        raise TimeoutError("model server down")

    out = LLMStrategy().reformulate("q x", [], _ctx(FakeLLM(responder=boom, prompts=[])))
    assert out.query is None and "TimeoutError: model server down" in out.reason


def test_llm_prompt_is_overridable_and_async_works():
    llm = FakeLLM(responder=lambda p: '{"query": "fee schedule"}', prompts=[])
    s = LLMStrategy(prompt=PromptTemplate("Rewrite for search: {query}\nJSON:"))
    out = asyncio.run(s.areformulate("what fee?", [], _ctx(llm)))
    assert out.query == "fee schedule"
    assert llm.prompts == ["Rewrite for search: what fee?\nJSON:"]
