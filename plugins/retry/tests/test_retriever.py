import asyncio
from types import SimpleNamespace

from retry_testkit import ScriptedRetriever, ScriptedSignal, node

from ragplugins.api import query_scope, tags
from ragplugins.testing import FakeLLM
from ragplugins_retry import KeywordsStrategy, LLMStrategy, RetryRetriever

Q = "What is the annual fee?"
REWRITE = "annual fee"


def _retriever(values, results=None, strategy=None, llm=None):
    if results is None:
        results = {Q: [node("orig1"), node("orig2")], REWRITE: [node("new1"), node("new2")]}
    inner = ScriptedRetriever(results)
    signal = ScriptedSignal(values=values, seen=[])
    ctx = SimpleNamespace(llm=llm)
    return RetryRetriever(inner, ctx, signal=signal, strategy=strategy or KeywordsStrategy(), threshold=0.5), inner


def _run(retriever, query=Q):
    with query_scope(query, filters=None) as tr:
        out = retriever.retrieve(query)
    return [n.node.node_id for n in out], tr.get("retry", "decision"), out


def test_strong_evidence_is_kept_without_a_retry():
    r, inner = _retriever({"orig1": 0.8})
    ids, decision, _ = _run(r)
    assert ids == ["orig1", "orig2"] and inner.calls == [Q]
    assert decision["fired"] is False and decision["score_before"] == 0.8 and decision["threshold"] == 0.5


def test_weak_evidence_retries_once_and_keeps_a_strictly_better_set():
    r, inner = _retriever({"orig1": 0.2, "new1": 0.6})
    ids, decision, out = _run(r)
    assert ids == ["new1", "new2"]
    assert inner.calls == [Q, REWRITE]
    assert decision.items() >= {"fired": True, "attempted": True, "strategy": "keywords", "reformulated": REWRITE,
                                "score_before": 0.2, "score_after": 0.6, "kept": "retry",
                                "signal": "scripted"}.items()
    assert all(tags(n)["retry"] == {"reformulated": REWRITE} for n in out)
    # Both sets are judged against the user's question; the retry set says what it was retrieved for.
    assert r.signal.seen == [(Q, Q), (Q, REWRITE)]


def test_an_equal_or_worse_retry_keeps_the_original_and_never_merges():
    for after in (0.2, 0.1):
        r, inner = _retriever({"orig1": 0.2, "new1": after})
        ids, decision, out = _run(r)
        assert ids == ["orig1", "orig2"] and len(inner.calls) == 2
        assert decision["kept"] == "original" and decision["score_after"] == after
        assert not any(tags(n) for n in out)


def test_exactly_one_retry_even_when_the_retry_is_weak_too():
    r, inner = _retriever({"orig1": 0.1, "new1": 0.3})
    ids, decision, _ = _run(r)
    assert ids == ["new1", "new2"] and inner.calls == [Q, REWRITE]


def test_no_signal_means_no_retry_and_the_trace_says_why():
    r, inner = _retriever({})
    ids, decision, _ = _run(r)
    assert ids == ["orig1", "orig2"] and inner.calls == [Q]
    assert decision["fired"] is False and decision["score_before"] is None
    assert decision["reason"] == "no signal: scripted: unknown set"


def test_a_retry_set_without_a_signal_is_not_kept():
    r, _ = _retriever({"orig1": 0.2})
    ids, decision, _ = _run(r)
    assert ids == ["orig1", "orig2"] and decision["kept"] == "original"
    assert "no signal on the retry set" in decision["reason"]


def test_no_reformulation_means_no_second_retrieval():
    r, inner = _retriever({"orig1": 0.2}, strategy=LLMStrategy(), llm=FakeLLM(replies=["no idea"], prompts=[]))
    ids, decision, _ = _run(r)
    assert ids == ["orig1", "orig2"] and inner.calls == [Q]
    assert decision["fired"] is True and decision["attempted"] is False and decision["reformulated"] is None
    assert decision["reason"].startswith("no reformulation: the LLM reply is not JSON")


def test_empty_first_stage_is_returned_as_is():
    r, inner = _retriever({}, results={})
    ids, decision, _ = _run(r)
    assert ids == [] and decision["reason"] == "the first stage returned nothing"


def test_async_path_decides_the_same_way():
    llm = FakeLLM(replies=['{"query": "annual fee"}'], prompts=[])
    r, inner = _retriever({"orig1": 0.2, "new1": 0.6}, strategy=LLMStrategy(), llm=llm)

    async def go():
        with query_scope(Q, filters=None) as tr:
            out = await r.aretrieve(Q)
        return out, tr

    out, tr = asyncio.run(go())
    assert [n.node.node_id for n in out] == ["new1", "new2"]
    assert tr.get("retry", "decision")["kept"] == "retry" and inner.calls == [Q, REWRITE]


def test_llm_prompt_is_exposed_through_the_prompt_mixin():
    r, _ = _retriever({}, strategy=LLMStrategy())
    assert "reformulate_prompt" in r.get_prompts()
    from llama_index.core.prompts import PromptTemplate

    r.update_prompts({"reformulate_prompt": PromptTemplate("Q: {query}")})
    assert r.strategy.prompt.template == "Q: {query}"


class _Confirm(ScriptedSignal):
    name = "confirm"


def _confirmed(values, confirm_values):
    r, inner = _retriever(values)
    r.confirm = _Confirm(values=confirm_values, seen=[])
    return r, inner


def test_a_retry_that_one_signal_prefers_and_the_other_rejects_is_not_kept():
    r, _ = _confirmed({"orig1": 0.2, "new1": 0.6}, {"orig1": 0.5, "new1": 0.4})
    ids, decision, _ = _run(r)
    assert ids == ["orig1", "orig2"] and decision["kept"] == "original"
    assert decision["compared"] == {"scripted": [0.2, 0.6], "confirm": [0.5, 0.4]}
    # The confirming signal also judges both sets against the user's question.
    assert r.confirm.seen == [(Q, Q), (Q, REWRITE)]


def test_a_retry_no_worse_on_both_and_better_on_one_is_kept():
    for values, confirm in (({"orig1": 0.2, "new1": 0.2}, {"orig1": 0.5, "new1": 0.6}),
                            ({"orig1": 0.2, "new1": 0.3}, {"orig1": 0.5, "new1": 0.5})):
        r, _ = _confirmed(values, confirm)
        ids, decision, _ = _run(r)
        assert ids == ["new1", "new2"] and decision["kept"] == "retry", (values, confirm)


def test_a_retry_equal_on_both_signals_is_not_kept():
    r, _ = _confirmed({"orig1": 0.2, "new1": 0.2}, {"orig1": 0.5, "new1": 0.5})
    ids, decision, _ = _run(r)
    assert ids == ["orig1", "orig2"] and "equal on both" in decision["reason"]


def test_without_the_confirming_signal_the_single_signal_rule_applies_and_the_trace_says_so():
    for after, kept in ((0.6, "retry"), (0.2, "original")):
        r, _ = _confirmed({"orig1": 0.2, "new1": after}, {})
        _, decision, _ = _run(r)
        assert decision["kept"] == kept and decision["reason"].startswith("confirm unavailable (scripted")
        assert decision["compared"] == {"scripted": [0.2, after]}
