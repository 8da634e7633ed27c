"""The overview's decisions say what happened: the reason quotes the number that fails, and each
query through the wrapper (a retry's reformulated one too) gets its own decision."""

import sys
from pathlib import Path

from ragplugins.api import query_scope
from ragplugins_overview import OverviewConfig, OverviewRetriever
from ragplugins_overview.scoring import DocumentRanking

# The wrapper's test doubles (pytest runs with --import-mode=importlib).
sys.path.insert(0, str(Path(__file__).parent))
from test_retriever import DOCS, _setup, chunk  # noqa: E402


def test_no_clear_margin_quotes_the_number_that_fails():
    # Median 0, spread 1: z = score. The largest gap (2.5) lies below the second document, whose
    # z of 3.0 misses outlier_z 3.5, though the best document (z 5.0) and the gap both pass.
    ranking = DocumentRanking(positions=[0, 1, 2, 3, 4, 5], scores=[5.0, 3.0, 0.5, 0.4, 0.3, 0.2], median=0.0,
                              spread=1.0, n_documents=6, exact=True)
    config = OverviewConfig(mode="adaptive", outlier_z=3.5, min_gap=1.0, top_documents=3)
    chosen, reason, gap = OverviewRetriever(None, None, config).select(ranking, list("abcdef"), [])
    assert chosen == [] and gap == 2.5
    assert reason.startswith("no clear margin") and "3.00" in reason and "3.5" in reason
    assert reason.endswith("need z >= 3.5 (weakest 3.00); a gap >= 1.00 (gap 2.50) is met"), reason
    # The gap alone short: the z rule is said as met (a new user's rsyslog set read both as unmet).
    ranking = DocumentRanking(positions=[0, 1, 2, 3, 4, 5], scores=[5.0, 4.5, 0.5, 0.4, 0.3, 0.2], median=0.0,
                              spread=1.0, n_documents=6, exact=True)
    config = OverviewConfig(mode="adaptive", outlier_z=3.5, min_gap=5.0, top_documents=3)
    _, reason, _ = OverviewRetriever(None, None, config).select(ranking, list("abcdef"), [])
    assert reason.endswith("need a gap >= 5.00 (gap 4.00); z >= 3.5 (weakest 4.50) is met"), reason


def test_each_query_through_the_wrapper_gets_its_own_decision():
    restricted = [chunk("n6", "a", DOCS["a"]), chunk("n5", "a", DOCS["a"]), chunk("n3", "a", DOCS["a"])]
    _, retriever = _setup(restricted=restricted)
    with query_scope("fees", filters=None) as tr:
        grown = retriever.retrieve("fees")
        same = retriever.retrieve("vague")  # as a retry's reformulated question would pass through
    decisions = [(d.action, d.changed, d.query) for d in tr.decisions if d.plugin == "overview"]
    assert decisions == [("add", True, "fees"), ("select", False, "vague")]
    assert [n.node.node_id for n in grown] != [n.node.node_id for n in same]
    lines = [d.line(tr.query) for d in tr.decisions]
    assert any(line.startswith("overview select (on 'vague'): no change (no clear margin") for line in lines)
