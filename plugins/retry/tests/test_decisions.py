"""The retry decision records the scores it compared, so its reason agrees with its numbers."""

from types import SimpleNamespace

from retry_testkit import ScriptedRetriever, ScriptedSignal, node

from ragplugins.api import query_scope
from ragplugins_retry import KeywordsStrategy, Measurement, RetryRetriever

Q = "What is the annual fee?"


class RescoringSignal(ScriptedSignal):
    """Gates on one value and compares on another scale (as a signal whose statistics are pooled)."""

    def compare(self, query, original, before, retry, retry_query, ctx):
        return Measurement(0.14), Measurement(0.152)


def test_kept_retry_shows_a_higher_score_after_than_before():
    inner = ScriptedRetriever({Q: [node("orig1")], "annual fee": [node("new1")]})
    signal = RescoringSignal(values={"orig1": 0.160, "new1": 0.152}, seen=[])
    retriever = RetryRetriever(inner, SimpleNamespace(llm=None), signal=signal, strategy=KeywordsStrategy(),
                               threshold=0.5)
    with query_scope(Q, filters=None) as tr:
        out = retriever.retrieve(Q)
    [decision] = [d for d in tr.decisions if d.plugin == "retry"]
    assert [n.node.node_id for n in out] == ["new1"] and decision.changed
    assert "strictly higher" in decision.reason
    numbers = decision.numbers
    assert numbers["score_after"] > numbers["score_before"], numbers
    assert numbers["gate_score"] == 0.16
    details = tr.get("retry", "decision")
    assert details["kept"] == "retry" and details["score_after"] > details["score_before"]
