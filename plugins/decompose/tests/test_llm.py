"""The LLM decomposer: robust parsing, temperature 0, and never a failed query."""

import asyncio
from types import SimpleNamespace

import pytest

from ragplugins.testing import FakeLLM
from ragplugins_decompose import LLMDecomposer
from ragplugins_decompose.decomposers.llm import parse_reply

QUERY = "What is the annual fee, and when does the agreement end?"


class TemperatureLLM(FakeLLM):
    """A FakeLLM with a temperature field that records the temperature each call ran at."""

    temperature: float = 0.8
    seen: list = []

    def _reply(self, prompt):
        self.seen.append(self.temperature)
        return super()._reply(prompt)


def ctx(llm):
    return SimpleNamespace(llm=llm)


@pytest.mark.parametrize("reply", [
    '{"sub_queries": ["What is the annual fee?", "When does the agreement end?"]}',
    '<think>two asks</think>```json\n["What is the annual fee?", "When does the agreement end?"]\n```',
    'Sure! Here they are: {"questions": ["What is the annual fee?", "When does the agreement end?"]} Hope it helps',
    '{"items": [{"sub_question": "What is the annual fee?", "tool_name": "docs"}, '
    '{"sub_question": "When does the agreement end?", "tool_name": "docs"}]}',
    "Sub-questions:\n1. What is the annual fee?\n2) When does the agreement end?",
    "- What is the annual fee?\n- When does the agreement end?",
    "What is the annual fee?\nWhen does the agreement end?",
])
def test_reads_json_and_the_list_shapes_open_models_produce(reply):
    llm = FakeLLM(replies=[reply], prompts=[])
    result = LLMDecomposer().decompose(QUERY, ctx(llm))
    assert result.sub_queries == ["What is the annual fee?", "When does the agreement end?"]
    assert QUERY in llm.prompts[0]


@pytest.mark.parametrize("reply, reason", [
    ("I cannot help with that.", "no list of sub-questions"),
    ('{"sub_queries": "What is the annual fee?"}', "no list of sub-questions"),
    ('{"answer": 42}', "no list of sub-questions"),
    ('["What is the annual fee?", {"oops": 1}]', "no list of sub-questions"),
    ('["The annual fee is 120,000 EUR, payable quarterly as set out in Exhibit A, and the agreement runs for '
     'three years from 1 March 2024 unless terminated earlier under the Termination Policy with notice."]',
     "an answer, not a question"),
    ("- Sure, here you go\n- Let me know if you need more", "shares no word with the question"),
])
def test_junk_means_no_split_with_the_reason(reply, reason):
    result = LLMDecomposer().decompose(QUERY, ctx(FakeLLM(replies=[reply], prompts=[])))
    assert result.sub_queries == []
    assert reason in result.reason
    assert result.details["reply"].startswith(reply[:20])


def test_a_failing_llm_means_no_split():
    def boom(prompt):
        raise TimeoutError("model server did not answer")

    result = LLMDecomposer().decompose(QUERY, ctx(FakeLLM(responder=boom, prompts=[])))
    assert result.sub_queries == [] and "TimeoutError" in result.reason


def test_without_an_llm_nothing_splits():
    result = LLMDecomposer().decompose(QUERY, ctx(None))
    assert result.sub_queries == [] and "ctx.llm is None" in result.reason


def test_runs_at_temperature_zero_on_a_copy():
    llm = TemperatureLLM(replies=['["What is the annual fee?", "When does the agreement end?"]'], prompts=[],
                         seen=[])
    result = LLMDecomposer().decompose(QUERY, ctx(llm))
    assert llm.seen == [0.0] and llm.temperature == 0.8   # the host's LLM is not changed
    assert result.details["temperature"] == 0.0
    plain = LLMDecomposer().decompose(QUERY, ctx(FakeLLM(replies=["[]"], prompts=[])))
    assert plain.details["temperature"] is None          # no such field: used as given


def test_async_path_uses_acomplete_and_the_same_checks():
    llm = TemperatureLLM(replies=['{"sub_queries": ["What is the annual fee?", "When does it end?"]}'],
                         prompts=[], seen=[])
    result = asyncio.run(LLMDecomposer().adecompose(QUERY, ctx(llm)))
    assert result.sub_queries == ["What is the annual fee?", "When does it end?"] and llm.seen == [0.0]


def test_parse_reply_says_how_it_read_the_reply():
    assert parse_reply('["a?", "b?"]')[1] == "json"
    assert parse_reply("1. a?\n2. b?")[1] == "list"
    assert parse_reply("nothing here") == (None, "none")
