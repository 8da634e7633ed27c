"""``ragplugins demo``: the example corpus with plugins off and on, side by side."""

from __future__ import annotations

import json
import os
import tempfile
import tomllib
from pathlib import Path
from typing import Any

from llama_index.core.llms import CompletionResponse, CompletionResponseGen, CustomLLM, LLMMetadata
from llama_index.core.llms.callbacks import llm_completion_callback
from rich.console import Console
from rich.table import Table

from ragplugins.trace import decision_lines

# Package data, so the demo runs from an installed wheel too.
DEMO_DIR = Path(__file__).resolve().parent / "demo_data"


def _hit(texts: list[str], expected: list[str]) -> bool:
    joined = " || ".join(" ".join(t.split()).lower() for t in texts)
    return any(" ".join(e.split()).lower() in joined for e in expected)


def run_demo(console: Console, persist_dir: str | None = None, demo_dir: Path = DEMO_DIR) -> dict:
    from ragplugins.app import load
    from ragplugins.cli import registry
    from ragplugins.embeddings import load_embed_model
    from ragplugins.nodes import tags

    if not (demo_dir / "corpus").is_dir():
        raise FileNotFoundError(f"demo corpus not found at {demo_dir / 'corpus'}; reinstall ragplugins")
    if persist_dir is None:
        with tempfile.TemporaryDirectory(prefix="ragplugins-demo-") as tmp:
            return run_demo(console, tmp, demo_dir)
    reg = registry()
    wanted = tomllib.loads((demo_dir / "ragplugins.toml").read_text())["ragplugins"]
    installed = [n for n in wanted.get("enable", []) if n in reg.loaded()]
    root = Path(persist_dir)
    embed = load_embed_model()
    arms = {}
    for arm, enable in (("off", []), ("on", installed)):
        cfg = {**wanted, "enable": enable, "persist_dir": str(root / arm)}
        rp = load(cfg, registry=reg, embed_model=embed)
        with console.status(f"indexing the demo corpus (plugins {arm})..."):
            rp.index_paths([demo_dir / "corpus"])
        arms[arm] = rp
    console.print(f"plugins on: {', '.join(installed) or 'none installed'}; top_k = {wanted.get('top_k', 20)}")
    missing = [n for n in wanted.get("enable", []) if n not in installed]
    if missing:
        from ragplugins.config import install_hint

        why = _why_missing()
        console.print(f"{why}, so not in this demo: " + "; ".join(f"{n} ({install_hint(n)})" for n in missing),
                      markup=False)
    queries = [json.loads(line) for line in (demo_dir / "queries.jsonl").read_text().splitlines() if line.strip()]
    summary: dict[str, Any] = {"off": 0, "on": 0, "rescued": []}
    acted = considered = 0
    for q in queries:
        table = Table(title=q["query"], show_lines=False)
        table.add_column("#")
        cols = {}
        decisions = []
        hits = {}
        plugins_added: list[str] = []
        for arm, rp in arms.items():
            result = rp.search(q["query"])
            if arm == "on":
                decisions = decision_lines(result.trace.to_dict())
                plugins_added = [f"{n.node.ref_doc_id} by {', '.join(tags(n))}" for n in result.final if tags(n)]
            hits[arm] = hit = _hit([n.node.get_content() for n in result.final], q["expected"])
            summary[arm] += hit
            cols[arm] = [f"{n.node.ref_doc_id}" + (f" (via {', '.join(tags(n))})" if tags(n) else "")
                         for n in result.final]
            table.add_column(f"plugins {arm} ({'answer found' if hit else 'answer missing'})")
        for i in range(max(len(c) for c in cols.values())):
            table.add_row(str(i + 1), *[c[i] if i < len(c) else "" for c in cols.values()])
        console.print(table)
        if hits["on"] and not hits["off"]:
            # The case a plugin exists for: say it in words, not only in the table.
            summary["rescued"].append(q.get("id", q["query"]))
            console.print(f"  rescued: the answer is missing without the plugins and found with them "
                          f"({'; '.join(plugins_added) or 'a reordered list'} brought it in)", markup=False)
        for line, did in decisions:
            console.print(f"  {line}", markup=False)
            acted += did
            considered += 1
    console.print(f"answers found in the final list: off {summary['off']}/{len(queries)}, "
                  f"on {summary['on']}/{len(queries)}; rescued by a plugin: {len(summary['rescued'])}; "
                  f"plugin decisions that changed the list: {acted}, that changed nothing: {considered - acted}")
    console.print("Each plugin acts only when its own test passes (the lines under each table say why or why "
                  "not); measured effects on the bench corpora are in docs/benchmarks.md.")
    summary["decisions"], summary["acted"] = considered, acted
    summary["answers"] = _check_answers(console, demo_dir, {**wanted, "enable": installed,
                                                            "persist_dir": str(root / "on")}, reg, embed)
    return summary


class ScriptedAnswer(CustomLLM):
    """Stands in for an app's LLM in the demo (no LLM runs here): always answers ``text``."""

    text: str = ""

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins.demo.ScriptedAnswer"

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="scripted-answer")

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self.text)

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        yield CompletionResponse(text=self.text, delta=self.text)


def _why_missing() -> str:
    """Why an enabled plugin is not loaded here (the registry imports only what RAGPLUGINS_PLUGINS names)."""
    return "left out by RAGPLUGINS_PLUGINS" if "RAGPLUGINS_PLUGINS" in os.environ else "not installed"


def _nobody_checks(cfg: dict, reg: Any) -> str:
    if "verifier" not in reg.loaded():
        from ragplugins.config import install_hint

        why = _why_missing()
        return f"no plugin checks answers: the verifier is {why} ({install_hint('verifier')})"
    return "no plugin checks answers (enable one, such as verifier)"


def _check_answers(console: Console, demo_dir: Path, cfg: dict, reg: Any, embed: Any) -> int:
    """Answers written into answers.jsonl (one right, one wrong per question) through the plugins that
    check answers, as an app's LLM answer would go; returns how many answers a plugin changed or flagged."""
    from ragplugins.app import load

    path = demo_dir / "answers.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.is_file() else []
    if not rows:
        return 0
    console.print("\nAnswers checked against the retrieved evidence (scripted answers stand in for an LLM):")
    flagged = changed_count = 0
    for row in rows:
        rp = load(cfg, registry=reg, embed_model=embed, llm=ScriptedAnswer(text=row["answer"]))
        response: Any = rp.query_engine().query(row["query"])
        # Only the plugins that wrap the query engine: the retrieval decisions were shown above.
        checkers = {r.name for r in rp.enabled if "ragplugins_query_engine_wrappers" in r.hooks}
        traced = response.metadata["ragplugins"]
        checked = [d for d in traced["decisions"] if d["plugin"] in checkers]
        lines = [line for line, _ in decision_lines({**traced, "decisions": checked})]
        replaced = response.response != row["answer"]
        marked = not replaced and any(d["numbers"].get("grounded") is False for d in checked)
        flagged += replaced or marked
        changed_count += replaced
        console.print(f"  {row['query']}\n    answer ({row['note']}): {row['answer']}", markup=False)
        for line in lines or [_nobody_checks(cfg, reg)]:
            console.print(f"    {line}", markup=False)
    # "no change" above is the answer's text; an answer kept but marked unverified is still flagged.
    console.print(f"answers flagged: {flagged}/{len(rows)} (text replaced: {changed_count}, kept and marked "
                  f"unverified in response.metadata: {flagged - changed_count})")
    return flagged


