"""The demo shows the plugins where they matter: a pointer question the crossref hop rescues (the answer's
document missing without the plugins, present with them), an answer the verifier flags, and the count
of plugin decisions that changed nothing."""

import io
import json

import pytest
from rich.console import Console

from ragplugins.demo import DEMO_DIR, run_demo

POINTER_ID = "demo_q7"
ANSWER_DOC = "10_site_access_rules.md"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    buffer = io.StringIO()
    console = Console(file=buffer, width=400, color_system=None)
    summary = run_demo(console, str(tmp_path_factory.mktemp("demo")))
    return summary, buffer.getvalue()


def _table(out: str, query: str) -> list[list[str]]:
    """The rows (#, plugins off, plugins on) of the table titled ``query`` (a long title wraps, so the
    table is found by the question's last sentence)."""
    block = out.split(query.rsplit(". ", 1)[-1], 1)[1].split("\n  ", 1)[0]
    rows = []
    for line in block.splitlines():
        cells = [c.strip() for c in line.strip().strip("│┃").split("│")]
        if len(cells) == 3 and cells[0].isdigit():
            rows.append(cells)
    return rows


def test_the_pointer_question_is_rescued_by_the_hop(demo):
    summary, out = demo
    row = next(json.loads(line) for line in (DEMO_DIR / "queries.jsonl").read_text().splitlines()
               if line.strip() and json.loads(line)["id"] == POINTER_ID)
    rows = _table(out, row["query"])
    off = [r[1] for r in rows if r[1]]
    on = [r[2] for r in rows if r[2]]
    # Without the plugins the pointing document is retrieved but not the one holding the answer.
    assert off and off[0] == "09_plant_visit_guide.md" and ANSWER_DOC not in off
    assert f"{ANSWER_DOC} (via crossref)" in on
    assert POINTER_ID in summary["rescued"] and summary["on"] > summary["off"]
    assert "plugins off (answer missing)" in out.split(row["query"].rsplit(". ", 1)[-1], 1)[1].split("\n", 3)[2]
    after = out.split(row["query"].rsplit(". ", 1)[-1], 1)[1]
    assert f"rescued: the answer is missing without the plugins and found with them ({ANSWER_DOC} by crossref" \
        in after
    assert "crossref hop: acted (the best pointer, 'Site Access Rules' in 09_plant_visit_guide.md -> " \
           f"{ANSWER_DOC}: followed)" in after


def test_the_verifier_flags_the_wrong_answers(demo):
    summary, out = demo
    answers = out.split("Answers checked against the retrieved evidence", 1)[1]
    wrong = answers.split("Security incidents must be reported within 24 hours.", 1)[1].split("\n")[1]
    assert "verifier verdict" in wrong and "ungrounded: 1 unsupported sentence(s); answer kept, marked " \
        "unverified in response.metadata (mode 'annotate')" in wrong
    assert summary["answers"] == 2


def test_decisions_that_changed_nothing_are_counted(demo):
    summary, out = demo
    unchanged = summary["decisions"] - summary["acted"]
    assert summary["acted"] >= 1 and unchanged >= 1
    assert f"plugin decisions that changed the list: {summary['acted']}, that changed nothing: {unchanged}" in out


def test_a_demo_without_the_verifier_says_it_is_not_there_and_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGPLUGINS_PLUGINS", "crossref")
    buffer = io.StringIO()
    summary = run_demo(Console(file=buffer, width=400, color_system=None), str(tmp_path))
    out = buffer.getvalue()
    assert "left out by RAGPLUGINS_PLUGINS, so not in this demo: verifier (pip install 'ragplugins[verifier]')" in out
    assert "no plugin checks answers: the verifier is left out by RAGPLUGINS_PLUGINS" in out
    assert summary["answers"] == 0
