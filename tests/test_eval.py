"""ragplugins eval on a tiny corpus: metrics, coverage gate, invariant, budget control, determinism."""

import json
import re
import sys
from typing import Any

import pytest
from click.testing import CliRunner
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.bridge.pydantic import PrivateAttr

from ragplugins.cli import get_cli
from ragplugins.eval import Arm, load_gold, ndcg_at, recall_at, run_eval
from ragplugins.eval.metrics import hit, norm

GOLD = [
    {"id": "q1", "query": "What is the annual fee?", "expected": ["120,000 EUR"], "match": "any",
     "dimensions": {"requires_crossref": False, "difficulty": "easy"}},
    {"id": "q2", "query": "When are payments due?", "expected": ["1 January, 1 April"], "match": "any",
     "dimensions": {"requires_crossref": True, "difficulty": "hard"}, "expected_sources": ["exhibit_a.md"]},
    {"id": "q3", "query": "How much notice is needed to terminate?", "expected": ["90 days"]},
    {"id": "q4", "query": "Which part code replaces the gasket?", "expected": ["GK-4471", "not in corpus"],
     "match": "all"},
]


@pytest.fixture
def gold_file(tmp_path):
    path = tmp_path / "gold.jsonl"
    path.write_text("// comment\n" + "\n".join(json.dumps(r) for r in GOLD) + "\n\n")
    return path


def test_metrics_follow_the_bench_definitions():
    assert norm("A  b\n\tC") == "a b c"
    assert hit(["foo", "Bar  baz"], ["bar baz"]) and not hit(["foo"], ["x", "foo"], "all")
    assert recall_at(["x", "y", "answer here"], ["ANSWER"], "any", 2) == 0.0
    assert recall_at(["x", "y", "answer here"], ["ANSWER"], "any", 5) == 1.0
    # relevant at ranks 2 and 4 of a 4-list: DCG = 1/log2(3) + 1/log2(5); IDCG = 1 + 1/log2(3)
    assert ndcg_at(["a", "ans", "b", "ans"], ["ans"]) == pytest.approx(
        (1 / 1.58496 + 1 / 2.32193) / (1 + 1 / 1.58496), 1e-4
    )
    assert ndcg_at(["a", "b"], ["ans"]) == 0.0


def _run(tiny_corpus, gold_file, tmp_path, embed, cache="cache"):
    from ragplugins_length_filter import plugin  # noqa: F401 - installed template plugin

    arms = [Arm("off", {"enable": []}), Arm("filter", {"enable": ["length_filter"], "length_filter": {"min_chars": 1}}),
            Arm("dense", {"enable": [], "retrieval": "dense"}), Arm("control", {"enable": []}, budget_of="filter")]
    return run_eval([tiny_corpus], load_gold([gold_file]), arms, ks=[2, 3], cache_dir=tmp_path / cache,
                    embed_model=embed, progress=False)


def test_eval_end_to_end_and_deterministic(tiny_corpus, gold_file, tmp_path, bundled_embed_model):
    run = _run(tiny_corpus, gold_file, tmp_path, bundled_embed_model)
    s = run.summary("off", 3)
    assert s["n"] == 4 and 0 <= s["final.ndcg@10"] <= 1 and s["final_len"] == 3
    assert run.summary("off", 3, "requires_crossref")["n"] == 1 and run.summary("off", 3, "control")["n"] == 1
    assert run.summary("off", 3, "difficulty=hard")["n"] == 1
    # q4's second expected string is nowhere in the corpus: reported, row kept.
    assert [f["id"] for f in run.coverage_failures] == ["q4"]
    assert run.coverage_failures[0]["missing"] == ["not in corpus"] and run.coverage_failures[0]["unreachable"]
    assert len([r for r in run.rows if r["id"] == "q4"]) == 8
    # length_filter only removes; both arms share the first stage -> no invariant offenders,
    # while the dense arm has other core settings and is compared with nobody.
    assert run.invariant["offenders"] == [] and run.invariant["checked"] > 0
    assert run.summary("control", 3)["k_used"] == 3
    assert run.meta["configs"]["control"]["top_k"] == {"2": 2, "3": 3}
    # Each row names its chunks as people read them (document#position) beside the ids.
    row = run.rows[0]
    assert [row["chunks"][i].rsplit("#", 1)[0] for i in row["final_ids"]] == row["final_docs"]
    cmp = run.compare("off", "dense", 3)
    assert sorted(sum(cmp.values(), [])) == ["q1", "q2", "q3", "q4"]
    again = _run(tiny_corpus, gold_file, tmp_path, bundled_embed_model, cache="cache2")
    assert json.dumps(run.to_dict(timings=False), sort_keys=True, default=str) == \
        json.dumps(again.to_dict(timings=False), sort_keys=True, default=str)
    out = run.write(tmp_path / "out")
    assert (out / "chart.png").stat().st_size > 1000
    assert "| off |" in (out / "results.md").read_text()
    # Every place of every list, its text by the name the rows give it, per arm: a rank is read without a search.
    texts = json.loads((out / "chunks.json").read_text())
    assert set(texts) == {"off", "filter", "dense", "control"}
    for r in run.rows:
        assert {r["chunks"][i] for i in r["first_ids"] + r["final_ids"]} <= set(texts[r["arm"]])
    # ... the text the metrics read: scored again from chunks.json, every row scores as it did.
    from ragplugins.eval.metrics import list_metrics

    gold = {g.id: g for g in load_gold([gold_file])}
    for r in run.rows:
        again = list_metrics([texts[r["arm"]][r["chunks"][i]] for i in r["final_ids"]], gold[r["id"]].expected,
                             gold[r["id"]].match, asked=r["k"])
        assert (again["ndcg@10"], again["recall@10"]) == (r["final"]["ndcg@10"], r["final"]["recall@10"])


def test_a_list_reordered_with_the_same_score_is_said_apart_from_an_unchanged_one():
    # overview reordered a new user's jj18 at k = 3 without moving its nDCG, and the report said "unchanged 24".
    from ragplugins.eval.report import changes
    from ragplugins.eval.runner import EvalRun

    def row(arm, qid, ids, ndcg):
        scores = {"recall@5": 1.0, "recall@10": 1.0, "recall@20": 1.0, "ndcg@10": ndcg, "len": len(ids)}
        return {"arm": arm, "k": 3, "id": qid, "slices": ["all"], "k_used": 3, "latency_ms": 1.0, "instrument": {},
                "first": scores, "final": scores, "first_ids": ids, "final_ids": ids}

    run = EvalRun(arms=["off", "overview"], ks=[3], rows=[
        row("off", "q1", ["a", "b", "c"], 1.0), row("overview", "q1", ["a", "c", "b"], 1.0),   # reordered
        row("off", "q2", ["a", "b", "c"], 0.5), row("overview", "q2", ["a", "b", "c"], 0.5),   # the same list
        row("off", "q3", ["a", "b", "c"], 0.5), row("overview", "q3", ["c", "b", "a"], 1.0),   # improved
        row("off", "q4", ["a", "b", "c"], 0.5), row("overview", "q4", ["a", "b", "c", "d"], 0.5)])  # one more after
    assert run.compare("off", "overview", 3) == {"improved": ["q3"], "regressed": [], "appended": ["q4"],
                                                 "reordered": ["q1"], "unchanged": ["q2"]}
    assert changes(run) == ["k=3 overview (nDCG@4): improved 1 ['q3'], regressed 0 [], chunks appended with the "
                            "same score 1 ['q4'], reordered with the same score 1 ['q1'], unchanged 1; its lists are "
                            "longer (3.2 against 3.0 chunks on average): `--budget-control overview` adds plugins off "
                            "at that length"]


def test_cache_is_keyed_by_content(tiny_corpus, gold_file, tmp_path, bundled_embed_model):
    gold = load_gold([gold_file])
    first = run_eval([tiny_corpus], gold, [Arm("off", {"enable": []})], ks=[3], cache_dir=tmp_path / "c",
                     embed_model=bundled_embed_model, progress=False)
    (tiny_corpus / "master_agreement.md").write_text("The annual fee is 99 EUR only.")
    second = run_eval([tiny_corpus], gold, [Arm("off", {"enable": []})], ks=[3], cache_dir=tmp_path / "c",
                      embed_model=bundled_embed_model, progress=False)
    assert first.meta["indexes"]["off"] != second.meta["indexes"]["off"]
    assert "q1" in [f["id"] for f in second.coverage_failures]


def test_an_arm_whose_index_is_built_says_which_index_time_setting_changed(tiny_corpus, gold_file, tmp_path,
                                                                           bundled_embed_model, capsys):
    gold = load_gold([gold_file])

    def run(crossref, chunk_size=512):
        run_eval([tiny_corpus], gold, [Arm("crossref", {"enable": ["crossref"], "chunk_size": chunk_size,
                                                          "crossref": crossref})],
                 ks=[3], cache_dir=tmp_path / "c", embed_model=bundled_embed_model, progress=True)
        return [line for line in capsys.readouterr().err.splitlines() if "the index" in line]

    assert run({"max_refs_per_chunk": 8}) == [
        'eval: arm "crossref": building the index (no earlier index of this arm on these folders to compare with)']
    # What crossref made of the index is said once per index, and kept with the run.
    again = run_eval([tiny_corpus], gold, [Arm("crossref", {"enable": ["crossref"]})], ks=[3],
                     cache_dir=tmp_path / "c", embed_model=bundled_embed_model, progress=True)
    (summary,) = again.meta["index_summaries"]["crossref"]
    assert summary.startswith("crossref: ") and " references in 4 documents" in summary, summary
    assert capsys.readouterr().err.count(f'eval: arm "crossref": {summary}') == 1
    assert run({"max_refs_per_chunk": 8, "max_hops": 2}) == []  # read at query time: the same index
    assert run({"max_refs_per_chunk": 4}) == [
        'eval: arm "crossref": rebuilding the index: crossref.max_refs_per_chunk 8 -> 4']
    assert run({"max_refs_per_chunk": 8}, chunk_size=256) == [
        'eval: arm "crossref": rebuilding the index: chunk_size 512 -> 256, crossref.max_refs_per_chunk 4 -> 8']
    # Another folder in the same cache is compared with nothing of this one's (a new user's Cockpit pages were said
    # to rebuild because "FAQ.html", a file of the Valgrind pages measured before, had gone).
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.md").write_text("# Notes\n\nThe annual fee is 99 EUR.\n")
    run_eval([other], gold, [Arm("crossref", {"enable": ["crossref"]})], ks=[3], cache_dir=tmp_path / "c",
             embed_model=bundled_embed_model, progress=True)
    assert [line for line in capsys.readouterr().err.splitlines() if "the index" in line] == [
        'eval: arm "crossref": building the index (no earlier index of this arm on these folders to compare with)']

    from ragplugins import load
    from ragplugins.eval.runner import index_setup, setup_changes

    def setup(enable):
        return index_setup(load({"enable": enable}, embed_model=bundled_embed_model), [tiny_corpus])

    off, on = setup([]), setup(["crossref"])
    assert setup_changes(off, on) == ["crossref on"]  # not one line per setting of the plugin
    (tiny_corpus / "master_agreement.md").write_text("The annual fee is 99 EUR only.")
    assert setup_changes(on, setup(["crossref"])) == ["files: 1 changed (master_agreement.md)"]


class _CountingEmbedding(BaseEmbedding):
    """Another embedder, counting the texts it is asked to embed (not queries)."""

    _inner: Any = PrivateAttr()
    texts: int = 0

    def __init__(self, inner: Any):
        super().__init__(model_name="counting", embed_batch_size=32)
        self._inner = inner

    @property
    def wrapped_embed_model(self) -> Any:
        return self._inner

    def _get_text_embeddings(self, texts):
        self.texts += len(texts)
        return self._inner.get_text_embedding_batch(texts)

    def _get_text_embedding(self, text):
        return self._get_text_embeddings([text])[0]

    def _get_query_embedding(self, query):
        return self._inner.get_query_embedding(query)

    async def _aget_query_embedding(self, query):
        return self._get_query_embedding(query)


def test_kept_vectors_count_every_text_asked_for_not_only_chunks(tmp_path, bundled_embed_model):
    from ragplugins.resume import ResumableEmbedding

    first = ResumableEmbedding(_CountingEmbedding(bundled_embed_model), tmp_path / "v.sqlite")
    first.get_text_embedding_batch(["a chunk", "a window"])
    first.close()
    # An overview arm also embeds its overviews: the "N of M texts read back" line counted chunks and windows
    # alone for M and said "569 of 539" (a new user's nginx pages).
    again = ResumableEmbedding(_CountingEmbedding(bundled_embed_model), tmp_path / "v.sqlite")
    again.get_text_embedding_batch(["a chunk", "a window", "an overview"])
    assert (again.reused, again.asked) == (2, 3)
    again.close()


def test_an_arm_whose_plugins_change_no_text_builds_its_index_without_embedding_again(
        tiny_corpus, gold_file, tmp_path, bundled_embed_model, capsys):
    gold = load_gold([gold_file])
    from ragplugins.embeddings import embedder_identity
    from ragplugins.resume import ResumableEmbedding

    counting = _CountingEmbedding(bundled_embed_model)
    # A wrapper that keeps vectors is the embedder it wraps: indexes built through one are that embedder's.
    kept = ResumableEmbedding(counting, tmp_path / "v.sqlite")
    assert embedder_identity(kept) == embedder_identity(counting) == embedder_identity(bundled_embed_model)
    kept.close()
    off, crossref = Arm("off", {"enable": []}), Arm("crossref", {"enable": ["crossref"]})
    run_eval([tiny_corpus], gold, [off], ks=[3], cache_dir=tmp_path / "c", embed_model=counting, progress=True)
    embedded_by_off = counting.texts
    assert embedded_by_off > 0
    capsys.readouterr()
    both = run_eval([tiny_corpus], gold, [off, crossref], ks=[3], cache_dir=tmp_path / "c", embed_model=counting,
                    progress=True)
    assert both.meta["indexes"]["off"] != both.meta["indexes"]["crossref"]  # a second index was built...
    with_kept_vectors = counting.texts - embedded_by_off
    said = [line for line in capsys.readouterr().err.splitlines() if "read back" in line]
    assert said == [f'eval: arm "crossref": {embedded_by_off} of {embedded_by_off} texts read back from '
                    'vectors.sqlite (embedded by an earlier arm or run, or by ragplugins index), not embedded again']
    # ...embedding only what crossref embeds at query time; built alone, its index costs every chunk's text.
    fresh = _CountingEmbedding(bundled_embed_model)
    alone = run_eval([tiny_corpus], gold, [crossref], ks=[3], cache_dir=tmp_path / "fresh", embed_model=fresh,
                     progress=False)
    assert fresh.texts == with_kept_vectors + embedded_by_off
    # The same index as the one built by the model itself: the same lists, question by question.
    assert both.meta["indexes"]["crossref"] == alone.meta["indexes"]["crossref"]
    lists = lambda run: [(r["id"], r["first_ids"], r["final_ids"]) for r in run.rows if r["arm"] == "crossref"]  # noqa: E731
    assert lists(both) == lists(alone) and len(lists(alone)) == len(gold)


class _SkewedEmbedding(_CountingEmbedding):
    """The same embedder by name (it wraps the bundled one), with vectors of its own: what an index built by
    an older release of a model, or another export of it, holds under the same name."""

    def _get_text_embeddings(self, texts):
        return [list(reversed(v)) for v in super()._get_text_embeddings(texts)]


def _lists(run):
    return [(r["arm"], r["k"], r["id"], r["first_ids"], r["final_ids"]) for r in run.rows]


def test_eval_of_the_folder_just_indexed_embeds_only_the_texts_it_checks(long_corpus, gold_file, tmp_path,
                                                                          bundled_embed_model, capsys):
    from ragplugins.app import load
    from ragplugins.resume import CHECKED_TEXTS

    host = {"persist_dir": str(tmp_path / "host")}
    load(host, embed_model=bundled_embed_model).index_paths([long_corpus])
    gold, off = load_gold([gold_file]), Arm("off", {"enable": []})
    fresh = _CountingEmbedding(bundled_embed_model)
    alone = run_eval([long_corpus], gold, [off], ks=[3], cache_dir=tmp_path / "c1", embed_model=fresh,
                     progress=False)
    capsys.readouterr()
    counting = _CountingEmbedding(bundled_embed_model)
    lent = run_eval([long_corpus], gold, [off], ks=[3], cache_dir=tmp_path / "c2", embed_model=counting,
                    progress=True, reuse_vectors_of=host)
    assert counting.texts == CHECKED_TEXTS < fresh.texts   # the few texts embedded again to check the index
    said = capsys.readouterr().err
    # Windows too (long_corpus has chunks longer than MiniLM reads): every text the build embeds is found.
    read = f"eval: {fresh.texts} vectors read from the index in '{tmp_path / 'host'}', {fresh.texts} of them new"
    assert read in said
    assert f'eval: arm "off": {fresh.texts} of {fresh.texts} texts read back from vectors.sqlite' in said
    assert lent.meta["indexes"] == alone.meta["indexes"] and _lists(lent) == _lists(alone)


def test_eval_embeds_again_when_the_index_is_another_embedders_or_another_folders(
        tiny_corpus, long_corpus, gold_file, tmp_path, bundled_embed_model, capsys):
    from llama_index.core import MockEmbedding

    from ragplugins.app import load

    gold, off = load_gold([gold_file]), Arm("off", {"enable": []})
    other = {"persist_dir": str(tmp_path / "mock")}
    load(other, embed_model=MockEmbedding(embed_dim=384)).index_paths([tiny_corpus])
    skewed = {"persist_dir": str(tmp_path / "skewed")}
    load(skewed, embed_model=_SkewedEmbedding(bundled_embed_model)).index_paths([tiny_corpus])
    elsewhere = {"persist_dir": str(tmp_path / "elsewhere")}
    load(elsewhere, embed_model=bundled_embed_model).index_paths([long_corpus])
    full = None
    for config, line in ((other, "was embedded by 'MockEmbedding:unknown:384', not 'HuggingFaceEmbedding"),
                         (skewed, "does not hold the vectors this embedder gives its texts (cosine"),
                         (elsewhere, None)):   # built from another folder: not read, nothing said
        counting = _CountingEmbedding(bundled_embed_model)
        capsys.readouterr()
        run_eval([tiny_corpus], gold, [off], ks=[3], cache_dir=tmp_path / str(len(config["persist_dir"])),
                 embed_model=counting, progress=True, reuse_vectors_of=config)
        said = capsys.readouterr().err
        assert "read back" not in said and "vectors read from the index" not in said
        assert (line in said) if line else ("its vectors are not reused" not in said), said
        full = full or counting.texts
        assert counting.texts >= full > 0


def test_an_index_build_says_how_far_it_is_in_a_log(tiny_corpus, gold_file, tmp_path, bundled_embed_model, capsys,
                                                     monkeypatch):
    from ragplugins.eval import runner

    monkeypatch.setattr(runner, "PROGRESS_EVERY_S", 0)  # every step, as a long build says one every 30 s
    run_eval([tiny_corpus], load_gold([gold_file]), [Arm("off", {"enable": []})], ks=[3], cache_dir=tmp_path / "c",
             embed_model=bundled_embed_model, progress=True)
    lines = [line for line in capsys.readouterr().err.splitlines() if "indexing:" in line]
    assert lines and lines[-1].startswith('eval: arm "off": indexing: files ')
    assert re.search(r"chunks (\d+)/\1", lines[-1])


def test_minimal_gold_form_and_bad_rows(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_text('{"query": "q?", "expected": "a"}\n')
    row = load_gold([path])[0]
    assert row.expected == ("a",) and row.match == "any" and row.id == "g:1"
    # One file, as a path or its name (not the name's characters, each a missing file '/').
    assert load_gold(path) == load_gold(str(path)) == [row]
    path.write_text('{"query": "q?"}\n')
    from ragplugins import InputError

    with pytest.raises(InputError, match="g.jsonl:1: a gold row needs 'query' and 'expected'; this one has no "
                                         "'expected'$"):
        load_gold([path])
    path.write_text('{"question": "q?"}\n')
    with pytest.raises(InputError, match="this one has no 'query' and no 'expected' \\(it has 'question': call it "
                                         "'query'\\)$"):
        load_gold([path])



def test_a_row_names_its_source_by_the_end_of_a_document_s_id(tmp_path):
    # A new user's Cockpit guide, indexed as guide/*.html: the rows said "sso.html", and crossref's
    # hit_expected_source compared ids whole (0 of 11 where the hop had reached sso.html once).
    gold = tmp_path / "g.jsonl"
    gold.write_text('{"id": "q1", "query": "q?", "expected": ["x"], "expected_sources": ["sso.html"]}\n')
    row = load_gold([gold])[0]
    assert row.is_source("guide/sso.html") and row.is_source("sso.html") and row.is_source("guide\\sso.html")
    assert not row.is_source("guide/nosso.html") and not row.is_source("sso.html/index.html")


def test_a_row_names_its_source_as_one_id_or_a_list_and_as_query_shows_it(tmp_path):
    # A new user's SBCL set: `query` names a passage "Linkage_002dtable.html#0+1", which named no document; one
    # id written without a list was read as its characters.
    from ragplugins import InputError

    gold = tmp_path / "g.jsonl"
    gold.write_text('{"id": "q1", "query": "q?", "expected": "x", "expected_sources": "guide/sso.html#0+1", '
                    '"anchor_doc": "guide/index.html#3"}\n'
                    '{"id": "q2", "query": "q?", "expected": "x", "expected_sources": ["C#.html", "a.html#2"]}\n')
    first, second = load_gold([gold])
    assert first.expected_sources == ("guide/sso.html",) and first.anchor_doc == "guide/index.html"
    assert second.expected_sources == ("C#.html", "a.html")
    gold.write_text('{"id": "q3", "query": "q?", "expected": "x", "expected_sources": {"doc": "a.html"}}\n')
    with pytest.raises(InputError, match="g.jsonl:1: 'expected_sources' must be a document id or a list of them"):
        load_gold([gold])


def test_every_problem_of_a_gold_set_is_reported_at_once_with_its_file_and_line(tmp_path):
    from ragplugins import InputError

    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text('{"id": "q1", "query": "q?", "expected": ["x"]}\n'
                     '{"id": "q2", "question": "q?", "expected": ["x"]}\n'
                     '{"id": "q3", "query": "q?", "expected": ["x"], "expected_source": ["a.md"]}\n')
    second.write_text('{"id": "q1", "query": "again?", "expected": ["y"], "match": "every"}\n'
                      '{"id": "q4", "query": "q?", "expected": ["y"], "corpus": "mine", "answer": "a note"}\n')
    with pytest.raises(InputError) as caught:
        load_gold([first, second])
    message = str(caught.value)
    assert f"{first}:2: a gold row needs 'query' and 'expected'; this one has no 'query' (it has 'question'" in message
    # A misspelt key ragplugins reads would be dropped without a word (that row's source measurement lost).
    assert f"{first}:3: unknown key 'expected_source' (did you mean 'expected_sources'?)" in message
    assert f"{second}:1: 'match' must be 'any' or 'all', not 'every'" in message
    # Keys ragplugins does not read and that resemble none of its own are a gold set's business.
    assert "corpus" not in message and "answer" not in message
    # Both rows of a repeated id, each by file and line (the second q1 is also bad, so one q1 row is loaded).
    second.write_text('{"id": "q1", "query": "again?", "expected": ["y"]}\n')
    first.write_text('{"id": "q1", "query": "q?", "expected": ["x"]}\n')
    with pytest.raises(InputError, match=f"duplicate gold id 'q1': {re.escape(str(first))}:1, "
                                         f"{re.escape(str(second))}:1"):
        load_gold([first, second])


def test_eval_cli(tiny_corpus, gold_file, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(get_cli(), ["eval", str(tiny_corpus), "--gold", str(gold_file), "--arm", "off",
                                            "--arm", "dense", "--set", 'dense:retrieval="dense"', "--k", "3",
                                            "--out", str(tmp_path / "o"), "--cache-dir", str(tmp_path / "c")],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "| dense | 4 |" in result.output and "coverage gate: 1 rows" in result.output
    assert "1 of them can never be found and count as misses: q4" in result.output   # q4's match is "all"
    # A list of 3 chunks is measured as what it is: R@10 would be R@3 under another name, three times over.
    assert "| arm | n | 1st R@3 | 1st nDCG@3 | R@3 | nDCG@3 |" in result.output
    # The slices of the gold rows' dimensions (a dev / test split, say) on the console too, not only in results.md.
    assert "k = 3, per slice of the gold rows' dimensions\n| slice | n | off R@3 | off nDCG@3 | dense R@3 |" \
        in result.output
    assert re.search(r"\| difficulty=hard \| 1 \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \|", result.output)
    # Why a row can fail the gate, which questions moved against the first arm, and (no terminal here) a line
    # at each step on stderr.
    assert "expected strings are matched in the chunks' text as indexed" in result.output
    assert re.search(r"per question against 'off' \(final nDCG\)\nk=3 dense \(nDCG@3\): improved \d+ \[.*\], regressed "
                     r"\d+ \[.*\], unchanged \d+", result.output), result.output
    assert 'eval: arm "off": building the index' in result.stderr
    assert "eval: arm dense, k=3: 4 questions\n" in result.stderr
    assert "each the mean over the questions where the plugin recorded it" not in result.output  # no plugin arm
    data = json.loads((tmp_path / "o" / "results.json").read_text())
    assert data["arms"] == ["off", "dense"] and len(data["rows"]) == 8
    # What each arm ran with: the --set value on top of the config.
    configs = data["meta"]["configs"]
    assert configs["dense"]["core"]["retrieval"] == "dense" and configs["off"]["core"]["retrieval"] != "dense"
    # The k each pass searched with, not the config's top_k (20 by default), which an eval does not use.
    assert configs["off"]["top_k"] == {"3": 3} and "top_k" not in configs["off"]["core"]
    # And as a config file per arm, whose persist_dir is the arm's index: a new user looking at one question as an
    # arm saw it wrote one by hand (two walkthroughs running).
    dense = (tmp_path / "o" / "arms" / "dense.toml").read_text()
    assert 'retrieval = "dense"' in dense and str(tmp_path / "c" / data["meta"]["indexes"]["dense"]) in dense, dense
    assert "ragplugins --config " + str(tmp_path / "o") + "/arms/off.toml query QUESTION --trace" in result.output
    asked = CliRunner().invoke(get_cli(), ["--config", str(tmp_path / "o" / "arms" / "off.toml"), "query",
                                           "What is the annual fee?", "--full"], catch_exceptions=False)
    assert asked.exit_code == 0 and "120,000 EUR" in asked.output, asked.output


def test_eval_cli_reads_the_vectors_of_the_index_that_ragplugins_index_built(tiny_corpus, gold_file, tmp_path,
                                                                             monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ragplugins.toml").write_text('[ragplugins]\npersist_dir = "my-index"\n')
    assert CliRunner().invoke(get_cli(), ["index", str(tiny_corpus)], catch_exceptions=False).exit_code == 0
    result = CliRunner().invoke(get_cli(), ["eval", str(tiny_corpus), "--gold", str(gold_file), "--arm", "off",
                                            "--k", "3", "--out", "o", "--cache-dir", "c"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert re.search(r"eval: (\d+) vectors read from the index in '\S+my-index', \1 of them new to vectors.sqlite",
                     result.stderr), result.stderr
    assert re.search(r'eval: arm "off": (\d+) of \1 texts read back', result.stderr), result.stderr


def test_eval_cli_names_a_missing_folder_and_the_arm_of_a_bad_config_before_any_model_loads(tiny_corpus, gold_file,
                                                                                            tmp_path, monkeypatch):
    import ragplugins.eval.runner as runner

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(runner, "load_embed_model", lambda *a, **k: pytest.fail("the embedder was loaded"))
    run = CliRunner().invoke
    out = run(get_cli(), ["eval", "exim-docs", "--gold", str(gold_file), "--arm", "off"]).output
    assert out.startswith("error: path 'exim-docs' does not exist; give the documents' folder"), out
    out = run(get_cli(), ["eval", str(tiny_corpus), "--gold", str(gold_file), "--arm", "off", "--arm", "xref",
                          "--set", 'xref:enable=["crosref"]']).output
    assert out.startswith("error: invalid ragplugins config (arm 'xref'):") and "did you mean 'crossref'" in out, out
    # An arm given by a misspelt plugin's name alone used to run the config file, unnoticed.
    out = run(get_cli(), ["eval", str(tiny_corpus), "--gold", str(gold_file), "--arm", "off",
                          "--arm", "crosref"]).output
    assert "arm 'crosref' names no config" in out and "did you mean 'crossref'?" in out, out
    # A setting for an arm that is not run (a misspelt arm) used to be dropped without a word.
    out = run(get_cli(), ["eval", str(tiny_corpus), "--gold", str(gold_file), "--arm", "off",
                          "--set", "hop:crossref.max_hops=2"]).output
    assert "--set names arm 'hop', which is not one of the arms run (off); add --arm hop" in out, out


def test_an_eval_arm_named_after_an_installed_plugin_runs_that_plugin_alone():
    from ragplugins.cli import _bare_arm_config

    assert _bare_arm_config("crossref", {}) == {"enable": ["crossref"]}
    assert _bare_arm_config("off", {}) == {"enable": []}
    assert _bare_arm_config("on", {}) == {} and _bare_arm_config("hop", {"hop": {"enable": ["crossref"]}}) == {}


def test_arms_that_differ_only_in_query_time_settings_share_an_index(tiny_corpus, bundled_embed_model):
    from ragplugins import load
    from ragplugins.eval.runner import index_fingerprint

    def fingerprint(**settings):
        return index_fingerprint(load({"enable": ["crossref", "overview"], **settings},
                                      embed_model=bundled_embed_model), [tiny_corpus])

    base = fingerprint()
    # Read only at query time (marked QUERY_TIME): the core's first-stage settings, the hop's, overview's gate.
    assert base == fingerprint(top_k=5, merge_adjacent=1, fusion="rrf", retrieval="dense") \
        == fingerprint(crossref={"max_hops": 2, "gate": 0.5}) == fingerprint(overview={"mode": "boost"})
    # What the index is built with: chunking, windows, the references' families, how overviews are written.
    others = {fingerprint(chunk_size=256), fingerprint(window_scoring="off"), fingerprint(embed_windows=True),
              fingerprint(crossref={"max_refs_per_chunk": 4}), fingerprint(overview={"key_terms": 3})}
    assert base not in others and len(others) == 5


def test_cache_is_keyed_by_the_llm_when_an_index_time_plugin_is_on(tiny_corpus, bundled_embed_model):
    from llama_index.core.llms import LLMMetadata

    from ragplugins import load
    from ragplugins.eval.runner import index_fingerprint
    from ragplugins.testing import FakeLLM

    class OtherModel(FakeLLM):
        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata(model_name="other-model", is_chat_model=False)

    def fingerprint(enable, llm=None):
        return index_fingerprint(load({"enable": enable}, embed_model=bundled_embed_model, llm=llm), [tiny_corpus])

    with_overviews = {fingerprint(["overview"]), fingerprint(["overview"], FakeLLM()),
                      fingerprint(["overview"], OtherModel())}
    assert len(with_overviews) == 3
    # Without an index-time plugin the LLM writes nothing into the index: one index serves every model.
    assert fingerprint([]) == fingerprint([], FakeLLM()) == fingerprint([], OtherModel())


def test_eval_cli_gives_the_configured_llm_to_llm_backed_arms(tiny_corpus, gold_file, tmp_path, monkeypatch):
    (tmp_path / "my_llms.py").write_text(
        "from ragplugins.testing import FakeLLM\nMADE = []\n"
        "def make():\n    MADE.append(FakeLLM(prompts=[], responder=lambda p: 'A short overview.'))\n"
        "    return MADE[-1]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ragplugins.toml").write_text('[ragplugins]\nllm = "my_llms:make"\n')
    result = CliRunner().invoke(get_cli(), ["eval", str(tiny_corpus), "--gold", str(gold_file), "--arm", "off",
                                            "--arm", "llm_overviews", "--set", 'llm_overviews:enable=["overview"]',
                                            "--set", 'llm_overviews:overview.overview="llm"', "--k", "3",
                                            "--out", str(tmp_path / "o"), "--cache-dir", str(tmp_path / "c")],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "the plugins' own measurements" in result.output and "overview.applied" in result.output
    import my_llms

    # One overview per document of the tiny corpus, written by that LLM.
    assert len(my_llms.MADE) == 1 and len(my_llms.MADE[0].prompts) == 4


def test_a_failing_instrument_is_named_and_under_warn_left_out(tiny_corpus, gold_file, tmp_path, bundled_embed_model):
    from ragplugins import PluginError, PluginInfo, hookimpl
    from ragplugins.plugins import PluginRegistry

    class Gauge:
        @hookimpl
        def ragplugins_plugin_info(self):
            return PluginInfo(name="gauge", version="1")

        @hookimpl
        def ragplugins_eval_instrument(self, row):
            if row.id == "q2":
                raise RuntimeError("gauge broke")
            return {"seen": row.id}

    registry = PluginRegistry()
    registry.register(Gauge())

    def run(policy):
        return run_eval([tiny_corpus], load_gold([gold_file]), [Arm("on", {"enable": ["gauge"],
                                                                           "on_plugin_error": policy})],
                        ks=[3], cache_dir=tmp_path / "c", embed_model=bundled_embed_model, progress=False,
                        registry=registry)
    with pytest.raises(PluginError, match="plugin 'gauge' failed in ragplugins_eval_instrument: .*gauge broke"):
        run("raise")
    with pytest.warns(UserWarning, match="gauge broke"):
        rows = {r["id"]: r for r in run("warn")._rows("on", 3)}
    assert rows["q1"]["instrument"] == {"gauge.seen": "q1"} and rows["q2"]["instrument"] == {}


def test_a_plugin_that_cannot_act_at_a_k_the_eval_searches_with_says_so(tiny_corpus, gold_file, tmp_path,
                                                                           bundled_embed_model):
    # The config is checked at its own top_k (20); eval --k 3 searched at 3 and only each query's trace said
    # that retry's signal needed 6 (a new user's lighttpd pages).
    import warnings

    from ragplugins import PluginInfo, hookimpl
    from ragplugins.plugins import PluginRegistry

    class Picky:
        @hookimpl
        def ragplugins_plugin_info(self):
            return PluginInfo(name="picky", version="1")

        @hookimpl
        def ragplugins_check_config(self, core):
            if core.top_k < 3:
                warnings.warn(f"picky needs top_k >= 3, not {core.top_k}", stacklevel=2)
            return []

    registry = PluginRegistry()
    registry.register(Picky())
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        run_eval([tiny_corpus], load_gold([gold_file]), [Arm("on", {"enable": ["picky"]})], ks=[2, 3],
                 cache_dir=tmp_path / "c", embed_model=bundled_embed_model, progress=False, registry=registry)
    # Said of the pass (eval's --k, not the config's top_k, is what to change).
    assert [str(w.message) for w in said if "picky" in str(w.message)] == [
        "eval --k 2 runs every arm with top_k = 2 (the config's top_k is not used; raise --k to change it): "
        "picky needs top_k >= 3, not 2"]


def test_a_bench_folder_you_name_must_hold_the_corpora(tmp_path, monkeypatch):
    from ragplugins import InputError
    from ragplugins.eval.corpora import BENCH_ENV, bench_dir

    monkeypatch.delenv(BENCH_ENV, raising=False)
    with pytest.raises(InputError, match=f"--bench-dir = '{tmp_path}' holds no corpora/ folder"):
        bench_dir(tmp_path)
    monkeypatch.setenv(BENCH_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(InputError, match=f"{BENCH_ENV} = .*nowhere' holds no corpora/"):
        bench_dir()


def test_eval_without_matplotlib_says_so_first_and_writes_the_tables(tiny_corpus, gold_file, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    result = CliRunner().invoke(
        get_cli(),
        [
            "eval",
            str(tiny_corpus),
            "--gold",
            str(gold_file),
            "--arm",
            "off",
            "--k",
            "3",
            "--out",
            str(tmp_path / "o"),
            "--cache-dir",
            str(tmp_path / "c"),
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    note = result.output.index("note: matplotlib is not installed")
    assert note < result.output.index("k = 3") and "wrote" in result.output
    assert (tmp_path / "o" / "results.md").is_file() and not (tmp_path / "o" / "chart.png").exists()


def test_repeated_bench_runs_their_union_and_identical_arms_are_flagged(tiny_corpus, gold_file, tmp_path, monkeypatch):
    import shutil

    bench = tmp_path / "bench"
    files = sorted(tiny_corpus.iterdir())
    for folder, part in (("docs", files[:2]), ("acquisition", files[2:])):
        (bench / "corpora" / folder).mkdir(parents=True)
        for f in part:
            shutil.copy(f, bench / "corpora" / folder / f.name)
    (bench / "goldset").mkdir()
    (bench / "goldset" / "docs.jsonl").write_text("\n".join(json.dumps(r) for r in GOLD[:2]))
    (bench / "goldset" / "acquisition.jsonl").write_text("\n".join(json.dumps(r) for r in GOLD[2:]))
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(get_cli(), ["eval", "--bench", "docs", "--bench", "acq", "--bench-dir", str(bench),
                                            "--arm", "off", "--arm", "again=" + str(_write(tmp_path, "enable = []")),
                                            "--k", "3", "--out", "o", "--cache-dir", "c"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "o" / "results.json").read_text())
    assert data["meta"]["corpus"] == ["docs", "acquisition"] and data["meta"]["n_queries"] == 4
    assert data["meta"]["identical_arms"] == [["off", "again"]]
    assert "note: arms with identical configs (their numbers differ only by noise): off = again" in result.output
    md = (tmp_path / "o" / "results.md").read_text()
    assert "off = again" in md and "| difficulty=hard | 1 |" in md  # every dimensions key is a slice


def _write(tmp_path, body):
    path = tmp_path / "arm.toml"
    path.write_text(f"[ragplugins]\n{body}\n")
    return path


def test_latency_excludes_a_warm_up_and_has_one_format(tiny_corpus, gold_file, tmp_path, bundled_embed_model,
                                                        monkeypatch):
    from ragplugins.app import RagPlugins
    from ragplugins.eval.report import markdown
    from ragplugins.eval.runner import WARMUP_QUERY

    asked, embedded = [], []
    original = RagPlugins.search
    monkeypatch.setattr(RagPlugins, "search", lambda self, q, *a, **kw: asked.append(q) or original(self, q, *a, **kw))
    from ragplugins.context import RagContext
    model_embeds = RagContext._embed_uncached   # what the query-embedding cache asks the model for
    monkeypatch.setattr(RagContext, "_embed_uncached",
                        lambda self, text: embedded.append(text) or model_embeds(self, text))
    run = run_eval([tiny_corpus], load_gold([gold_file]), [Arm("off", {"enable": []})], ks=[2, 3],
                   cache_dir=tmp_path / "c", embed_model=bundled_embed_model, progress=False)
    assert asked == [WARMUP_QUERY, *[r["query"] for r in GOLD]] * 2  # untimed first, then the timed ones
    # The second k's pass is timed with the model's work too: its questions are embedded again.
    for r in GOLD:
        assert embedded.count(r["query"]) == 2, embedded
    assert WARMUP_QUERY not in {r["query"] for r in run.rows}
    cost = markdown(run).split("Cost (", 1)[1].split("\n\n", 2)[1]
    row = cost.splitlines()[2].split("|")[3:6]  # list length, p50 ms, p90 ms
    assert all(cell.strip().count(".") == 1 and len(cell.strip().split(".")[1]) == 1 for cell in row), cost


def test_chart_shows_recall_and_ndcg_per_arm_with_spread(tiny_corpus, gold_file, tmp_path, bundled_embed_model,
                                                         monkeypatch):
    import matplotlib.axes

    from ragplugins.eval.report import chart

    run = _run(tiny_corpus, gold_file, tmp_path, bundled_embed_model)
    boxes = []
    original = matplotlib.axes.Axes.boxplot
    monkeypatch.setattr(
        matplotlib.axes.Axes,
        "boxplot",
        lambda self, values, **kw: boxes.append((self.get_title(), values)) or original(self, values, **kw),
    )
    titles: list[str] = []
    title = matplotlib.axes.Axes.set_title
    monkeypatch.setattr(matplotlib.axes.Axes, "set_title",
                        lambda self, label, **kw: titles.append(label) or title(self, label, **kw))
    chart(run, tmp_path / "chart.png")
    assert len(boxes) == 2 and (tmp_path / "chart.png").stat().st_size > 0
    recall, ndcg = boxes[0][1], boxes[1][1]
    assert len(recall) == len(ndcg) == len(run.arms) * len(run.ks) and all(len(v) == 4 for v in recall)
    # Lists asked for at k = 2 and 3 are measured at 2 and 3 (a new user's k = 3 panels said recall@10).
    assert run.ks == [2, 3] and titles == ["final recall@min(k, 10)", "final nDCG@min(k, 10)"]
    assert recall[0] == [r["final"]["recall@2"] for r in run._rows("off", 2)]
    assert recall[len(run.arms)] == [r["final"]["recall@3"] for r in run._rows("off", 3)]


def test_expected_strings_that_also_stand_in_other_documents_are_named(tiny_corpus, tmp_path, bundled_embed_model):
    from ragplugins.eval.report import markdown

    rows = [
        # Stands in exhibit_a.md, master_agreement.md and termination_policy.md: any of them is a hit.
        {"id": "loose", "query": "Which agreement do payments fall under?", "expected": ["Master Services Agreement"],
         "expected_sources": ["exhibit_a.md"]},
        # match = any: one loose string is enough for a chunk elsewhere to count as a hit.
        {"id": "one_loose", "query": "When are payments due?", "expected": ["1 January, 1 April", "Agreement"],
         "expected_sources": ["exhibit_a.md"]},
        # match = all: a hit elsewhere needs every string in one chunk; the dates stand only in exhibit_a.md.
        {"id": "all", "query": "When are payments due?", "expected": ["1 January, 1 April", "Agreement"],
         "match": "all", "expected_sources": ["exhibit_a.md"]},
        {"id": "all_loose", "query": "Who made the agreement?", "expected": ["Master Services", "Agreement"],
         "match": "all", "expected_sources": ["master_agreement.md"]},
        {"id": "no_sources", "query": "What is the annual fee?", "expected": ["Agreement"]},
        # Names that are no indexed document: a typo in expected_sources, a wrong anchor_doc. A name an id ends with
        # ("exhibit_a.md" above, for a corpus in folders) is the document's.
        {"id": "typo", "query": "What interest do late payments accrue?", "expected": ["4 percent per year"],
         "expected_sources": ["exhibit_b.md", "exhibit_a.md"], "anchor_doc": "master-agreement.md"},
    ]
    gold = tmp_path / "gold.jsonl"
    gold.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    run = run_eval([tiny_corpus], load_gold([gold]), [Arm("off", {"enable": []})], ks=[3], cache_dir=tmp_path / "c",
                   embed_model=bundled_embed_model, progress=False)
    assert [f["id"] for f in run.expected_elsewhere] == ["all_loose", "loose", "one_loose"]
    assert run.expected_elsewhere[0]["expected"]["Master Services + Agreement"]["documents"] == 2
    assert list(run.expected_elsewhere[2]["expected"]) == ["Agreement"]
    loose = run.expected_elsewhere[1]["expected"]["Master Services Agreement"]
    assert loose["documents"] == 2 and loose["e.g."] == ["master_agreement.md", "termination_policy.md"]
    assert "3 rows whose expected strings also stand in documents outside their expected_sources" in markdown(run)
    assert "loose 'Master Services Agreement' in 2 (master_agreement.md, termination_policy.md)" in markdown(run)
    assert [(f["id"], f["key"], f["name"]) for f in run.unknown_documents] == [
        ("typo", "anchor_doc", "master-agreement.md"), ("typo", "expected_sources", "exhibit_b.md")]
    assert run.unknown_documents[0]["like"][0] == "master_agreement.md"
    assert ("typo anchor_doc 'master-agreement.md' (indexed: master_agreement.md" in markdown(run))


def test_metric_labels_follow_the_longest_list_a_plugin_left():
    from types import SimpleNamespace

    from ragplugins.eval.report import COST, QUALITY, at_k, longest_list

    # At k = 3 a plugin that appends (crossref's hop under its window) leaves final lists of up to 5 chunks: a
    # hit at rank 4 counts, so the final columns say R@5, not R@3; the first stage's lists stay 3 long.
    rows = [{"k": 3, "first": {"len": 3}, "final": {"len": 3}}, {"k": 3, "first": {"len": 3}, "final": {"len": 5}},
            {"k": 20, "first": {"len": 20}, "final": {"len": 20}}]
    run = SimpleNamespace(rows=rows)
    assert longest_list(run, 3) == 5 and longest_list(run, 20) == 20 and longest_list(run, 3, "first") == 3
    assert [label for _, label in at_k(QUALITY, longest_list(run, 3), longest_list(run, 3, "first"))] == \
        ["1st R@3", "1st nDCG@3", "R@5", "nDCG@5"]
    # ... and the final lists at the k asked for come first: what the top 3 hold, whatever was appended below.
    assert at_k(QUALITY, longest_list(run, 3), longest_list(run, 3, "first"), asked=3) == [
        ("first.recall@10", "1st R@3"), ("first.ndcg@10", "1st nDCG@3"), ("final.recall@3", "R@3"),
        ("final.ndcg@3", "nDCG@3"), ("final.recall@5", "R@5"), ("final.ndcg@10", "nDCG@5")]
    assert [label for _, label in at_k(QUALITY, 3, 3, asked=3)] == ["1st R@3", "1st nDCG@3", "R@3", "nDCG@3"]
    assert at_k(COST, 5, asked=3) == COST
    assert [label for _, label in at_k(QUALITY, 20)] == ["1st R@10", "1st nDCG@10", "R@5", "R@10", "R@20", "nDCG@10"]


def test_a_measurement_recorded_on_fewer_questions_says_on_how_many():
    from ragplugins.eval.report import table
    from ragplugins.eval.runner import METRICS, EvalRun

    def row(qid, instrument):
        scores = {m: 1.0 for m in METRICS}
        return {"arm": "hop", "k": 20, "k_used": 20, "id": qid, "slices": ["all"], "first": dict(scores, len=20),
                "final": dict(scores, len=20), "latency_ms": 1.0, "instrument": instrument}

    # The hop records whether it reached an expected source only where it hopped: 2 of 4 questions here.
    rows = [row("q1", {"crossref.hit": 1.0, "crossref.fired": 1.0}), row("q2", {"crossref.hit": 0.0,
                                                                             "crossref.fired": 1.0}),
            row("q3", {"crossref.fired": 0.0}), row("q4", {"crossref.fired": 0.0})]
    run = EvalRun(arms=["hop"], ks=[20], rows=rows, meta={})
    lines = table(run, 20, extra=["crossref.fired", "crossref.hit"], metrics=False).splitlines()
    assert lines[0] == "| arm | n | crossref.fired | crossref.hit |"
    assert lines[2] == "| hop | 4 | 0.500 | 0.500 (of 2) |"


def test_at_a_k_a_plugin_appends_to_the_table_says_what_the_top_k_held_beside_the_whole_list():
    # Two new users' eval at k = 3 showed every arm under R@4 (crossref's hop appends a fourth chunk): what the top
    # 3 held, the number asked for, was left to be worked out from results.json.
    from ragplugins.eval.metrics import list_metrics
    from ragplugins.eval.report import table
    from ragplugins.eval.runner import EvalRun

    def row(arm, qid, final):
        first = list_metrics(["a", "b", "c"], ["answer"], "any")
        return {"arm": arm, "k": 3, "k_used": 3, "id": qid, "slices": ["all"], "first": first,
                "final": list_metrics(final, ["answer"], "any", asked=3), "latency_ms": 1.0, "instrument": {}}

    rows = [row("off", "q1", ["a", "b", "c"]), row("off", "q2", ["answer", "b", "c"]),
            row("hop", "q1", ["a", "b", "c", "the answer"]), row("hop", "q2", ["answer", "b", "c"])]
    run = EvalRun(arms=["off", "hop"], ks=[3], rows=rows, meta={})
    lines = table(run, 3).splitlines()
    assert lines[0] == "| arm | n | 1st R@3 | 1st nDCG@3 | R@3 | nDCG@3 | R@4 | nDCG@4 |"
    assert lines[2] == "| off | 2 | 0.000 | 0.000 | 0.500 | 0.500 | 0.500 | 0.500 |"
    assert lines[3].startswith("| hop | 2 | 0.000 | 0.000 | 0.500 | 0.500 | 1.000 |")


def test_an_arm_whose_lists_are_longer_is_said_to_be_so_beside_its_gains():
    from ragplugins.eval.report import changes
    from ragplugins.eval.runner import METRICS, EvalRun

    def row(arm, qid, length, ndcg):
        scores = {m: ndcg for m in METRICS}
        return {"arm": arm, "k": 3, "k_used": 3, "id": qid, "slices": ["all"], "first": dict(scores, len=3),
                "final": dict(scores, len=length), "latency_ms": 1.0, "instrument": {}}

    rows = [row("off", "q1", 3, 0.0), row("off", "q2", 3, 1.0), row("hop", "q1", 5, 0.4), row("hop", "q2", 4, 1.0)]
    run = EvalRun(arms=["off", "hop"], ks=[3], rows=rows, meta={"configs": {"off": {}, "hop": {}}})
    [line] = changes(run)
    assert line.startswith("k=3 hop (nDCG@5): improved 1 ['q1']")
    assert line.endswith("its lists are longer (4.5 against 3.0 chunks on average): `--budget-control hop` adds "
                         "plugins off at that length")
    # One list in 25 a chunk longer: as many decimals as tell the two means apart.
    rows = [row("off", f"q{i}", 3, 1.0) for i in range(25)] + [row("hop", f"q{i}", 4 if i == 0 else 3, 1.0)
                                                                for i in range(25)]
    [line] = changes(EvalRun(arms=["off", "hop"], ks=[3], rows=rows, meta={"configs": {"off": {}, "hop": {}}}))
    assert "(3.04 against 3.00 chunks on average)" in line, line
    # Once the run has that control, the line says nothing more.
    run.meta["configs"]["control"] = {"budget_of": "hop"}
    assert "longer" not in changes(run)[0]


def test_a_browser_copied_string_is_matched_where_a_chunk_holds_it_with_marks_inside(tmp_path, monkeypatch):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "strings.html").write_text(
        "<html><head><title>Strings</title></head><body><h1>Strings</h1><p>A string the caller owns. Call "
        '<a href="memory.html#g-free"><code>g_free()</code></a> on the string when it is no longer needed.</p>'
        "</body></html>")
    (docs / "memory.html").write_text("<html><body><h1>Memory</h1><p id='g-free'>g_free() frees memory.</p>"
                                      "</body></html>")
    browser = "Call g_free() on the string when it is no longer needed."
    gold = tmp_path / "gold.jsonl"
    monkeypatch.chdir(tmp_path)

    def run(*expected, match="any"):
        gold.write_text(json.dumps({"id": "s1", "query": "Who frees the string?", "expected": list(expected),
                                    "match": match}) + "\n")
        result = CliRunner().invoke(get_cli(), ["eval", str(docs), "--gold", str(gold), "--arm", "off", "--k", "3",
                                                "--out", str(tmp_path / "o"), "--cache-dir", str(tmp_path / "c")],
                                    catch_exceptions=False)
        assert result.exit_code == 0, result.output
        data = json.loads((tmp_path / "o" / "results.json").read_text())
        return result.output, data, data["rows"][0]["final"]["recall@10"]

    indexed = "Call [`g_free()`](memory.html#g-free) on the string when it is no longer needed."
    output, data, recall = run(browser)
    # Found, and said so with the chunk's wording; not a coverage failure.
    assert recall == 1.0 and "coverage gate" not in output
    assert "matched across Markdown marks: 1 rows" in output and f"s1 {browser!r} stands in a chunk as {indexed!r}" \
        in output
    assert data["across_marks"] == [{"id": "s1", "as_indexed": {browser: indexed}}] and not data["coverage_failures"]
    assert "stands in a chunk as" in (tmp_path / "o" / "results.md").read_text()
    # The chunk's wording in the gold file: matched as written, nothing said.
    output, data, recall = run(indexed)
    assert recall == 1.0 and "matched across" not in output and not data["across_marks"]
    # With "all", a string in no chunk either way still makes the row a miss that can never be found.
    output, data, recall = run(browser, "not in the corpus", match="all")
    assert recall == 0.0 and data["coverage_failures"] == [{"id": "s1", "missing": ["not in the corpus"],
                                                            "unreachable": True}]


def test_a_string_is_found_across_marks_between_and_inside_words_but_not_glued():
    from ragplugins.eval.runner import as_indexed

    chunk = ("A string the caller owns: call [`g_free()`](glib-Memory.html#g-free) on it. Note that\n"
             ">    **any** module may load it.")
    assert as_indexed("call g_free() on it.", [chunk]) == "call [`g_free()`](glib-Memory.html#g-free) on it."
    assert as_indexed("Note that any module", ["other text", chunk]) == "Note that > **any** module"
    assert as_indexed("callg_free() on it", [chunk]) is None     # words run together are other words
    # A link whose words are its address is written as one (Celery's "The default port is http://localhost:5555").
    assert as_indexed("The default port is http://localhost:5555", ["The default port is <http://localhost:5555>."]) \
        == "The default port is <http://localhost:5555>"
    assert as_indexed("not in any chunk", [chunk]) is None
    # A mark character that is the string's own: cairo's "path->status" in code was never found (a new user's ca15).
    assert as_indexed("if path->status is not", ["If `path->status` is not CAIRO_STATUS_SUCCESS"]) == \
        "If `path->status` is not"
    assert as_indexed("so a -> b", ["so a\n> -> b"]) == "so a > -> b"
    assert as_indexed("x[1] = y", ["so [`x[1]`](a.html) = y"]) == "[`x[1]`](a.html) = y"
    # Scored as shown: each place written as the string itself, a backslash in it taken as it stands.
    from ragplugins.eval.runner import _across_marks, as_shown

    read = [(_across_marks(e), e) for e in ("Note that any module", r"C:\Temp\1")]
    assert as_shown([chunk + " Under C:\\`Temp`\\1 too."], read) == [
        "A string the caller owns: call [`g_free()`](glib-Memory.html#g-free) on it. Note that any module may "
        r"load it. Under C:\Temp\1 too."]


def test_a_plugin_s_instrument_judges_a_text_relevant_as_the_metrics_do():
    # A hop that brought cairo's ca21 answer was counted as bringing nothing: the instrument's test missed a string
    # that stands in the chunk with Markdown marks inside, which the metrics find.
    from types import SimpleNamespace

    from ragplugins.eval.runner import _across_marks, instrument

    browser = "Call g_free() on the string"
    chunk = "Call [`g_free()`](memory.html#g-free) on the string when done."

    def call(record, hook, *, is_relevant, **_):
        return [{"relevant": is_relevant(chunk)}]

    rp = SimpleNamespace(enabled=[SimpleNamespace(name="probe", hooks={"ragplugins_eval_instrument"})],
                         registry=SimpleNamespace(call=call), config=SimpleNamespace(for_plugin=lambda name: None))
    row = SimpleNamespace(expected=(browser,))
    result = SimpleNamespace(trace=None, first_stage=[], final=[])
    assert instrument(rp, row, result, [(_across_marks(browser), browser)]) == {"probe.relevant": True}
    assert instrument(rp, row, result) == {"probe.relevant": False}     # as written, the string is not there


def test_a_plugin_that_changed_nothing_is_named_with_the_reason_it_gave_most_often():
    # A one-document set: crossref finds nothing to follow and overview nothing to choose between. A column of
    # zeros must read as "nothing to do here", and a plugin that changed one list is not listed.
    from types import SimpleNamespace

    from ragplugins.eval.report import idle_plugins

    def row(qid: str, arm: str, *decisions: tuple[str, bool, str]) -> dict[str, Any]:
        return {"id": qid, "arm": arm, "k": 3,
                "decisions": [{"plugin": p, "action": "x", "changed": c, "reason": why} for p, c, why in decisions]}

    nothing = "no resolved references in the top candidates"
    run = SimpleNamespace(ks=[3], arms=["off", "on"], rows=[
        row("q1", "off"), row("q2", "off"),
        row("q1", "on", ("crossref", False, nothing), ("overview", False, "1 document: nothing to choose")),
        row("q2", "on", ("crossref", False, "no pointer left to follow"), ("overview", True, "steered"))])
    assert idle_plugins(run) == [f"k=3 on: crossref changed no list of 2 questions; its reason on 1 of 2 decisions: "
                                 f"{nothing}"]
    # The same reason with other numbers is one reason.
    margin = SimpleNamespace(ks=[3], arms=["on"], rows=[
        row(f"q{i}", "on", ("overview", False, f"no clear margin ({m} < 0.05)"))
        for i, m in enumerate(("0.012", "0.031", "0.031"))] + [row("q9", "on", ("overview", False, "1 document"))])
    assert idle_plugins(margin) == ["k=3 on: overview changed no list of 4 questions; its reason on 3 of 4 decisions: "
                                    "no clear margin (0.031 < 0.05) (each question with its own quotes, files and "
                                    "numbers; the most frequent wording shown)"]
    # ... and with the pointer it quotes and the files it names.
    pointer = "the best pointer, '[{0}]({1}.html#{0})' in {2}.html -> {1}.html: {3}"
    said = [("VTYSH", "vtysh", "setup", "under the gate"), ("Route Maps", "routemap", "ripd", "under the gate"),
            ("Kernel", "kernel", "installation", "under the gate"), ("FRR-RELOAD", "frr-reload", "setup", "covered"),
            ("FRR-RELOAD", "frr-reload", "setup", "covered")]
    pointers = SimpleNamespace(ks=[3], arms=["on"], rows=[row(f"q{i}", "on", ("crossref", False, pointer.format(*p)))
                                                          for i, p in enumerate(said)])
    assert idle_plugins(pointers) == ["k=3 on: crossref changed no list of 5 questions; its reason on 3 of 5 "
                                      f"decisions: {pointer.format(*said[0])} (each question with its own quotes, "
                                      "files and numbers; the most frequent wording shown)"]
