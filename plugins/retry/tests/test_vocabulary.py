"""The `vocabulary` strategy: which corpus terms it adds, which it must never add, from which index."""

import pytest
from retry_testkit import node

import ragplugins_retry.plugin as plugin
from ragplugins.api import query_scope
from ragplugins.testing import make_rag
from ragplugins_retry import VocabularyStrategy, vocabulary

CORPUS = [
    "Query embeddings are memoised per retriever with functools lru_cache (maxsize 512) so repeated "
    "queries are not embedded again.",
    "The index is built with IVF-PQ, an ANN index: a vector query probes a few partitions instead of "
    "scanning every row.",
    "Results of the two legs are fused with reciprocal rank fusion (RRF); the constant is 60.",
    "Set data_dir in the config. The UI shows the uploads; the data_dir holds the index files.",
    "The data_dir is created on first start. Logs go to stdout.",
    "Chunks overlap by 64 tokens; data_dir keeps them.",
    "Deployment notes: run the server behind a proxy and mount data_dir.",
    "The cache_warmer script is unrelated to everything else here.",
    "Hybrid search merges both legs by reciprocal rank fusion. The index_builder writes the index to data_dir.",
]


@pytest.fixture(autouse=True)
def unfiltered_query():
    """The strategy runs inside a query; these tests run it in one whose host has no filter."""
    with query_scope("", filters=None):
        yield


def expand(query, nodes=(), corpus=CORPUS, terms=3):
    added, why = VocabularyStrategy(terms=terms).expansions(query, vocabulary.build(corpus), list(nodes))
    return [a["term"] for a in added], why


def test_adds_the_identifier_the_corpus_uses_for_a_question_word():
    added, _ = expand("How large is the cache for embedded queries?")
    assert added == ["lru_cache"]  # cache_warmer also has the part, but never meets the rest of the question


def test_adds_the_acronym_of_consecutive_question_words_and_expands_a_question_acronym():
    assert expand("Does it build an approximate-nearest-neighbour index?")[0] == ["ANN"]
    assert expand("How are the legs fused with RRF?")[0] == ["reciprocal rank fusion"]
    assert expand("How is RRF combined?")[0] == []  # "combined" is not a corpus word: nothing to co-occur with


def test_adds_only_spellings_the_corpus_prefers_to_the_question_s():
    # "index" is a plain corpus word in more chunks than index_builder: nothing is mismatched.
    assert expand("Who writes the index for hybrid search?")[0] == []
    # Written out in one chunk, "RRF" in one: the corpus does not prefer the acronym.
    assert expand("How does reciprocal rank fusion merge the legs?")[0] == []


def test_a_two_letter_acronym_needs_the_corpus_definition():
    # "UI" is a corpus token and "uploads index" has its initials, but nothing in the corpus defines it so.
    assert "UI" not in expand("Where are the uploads index files?")[0]


def test_never_adds_a_stopword_like_token_or_a_question_word():
    # data_dir has the part "data" but sits in half the chunks: BM25 gives it no weight.
    added, why = expand("Where is the data kept?")
    assert added == [] and "no corpus token" in why
    # lru_cache only respells words already asked (without this rule it would be added: it meets the question).
    assert expand("How large is the lru cache for embedded queries?")[0] == []


def test_only_words_the_top_candidates_lack_are_respelt():
    top = [node("t", "The cache of embedded queries has a size limit.")]
    added, why = expand("How large is the cache for embedded queries?", nodes=top)
    assert added == [] and "top candidates lack" in why


def test_reformulation_keeps_every_word_number_and_identifier_of_the_question(tmp_path, bundled_embed_model):
    rag = _indexed(tmp_path / "a", bundled_embed_model, CORPUS)
    q = "Is the cache in v1.2 bounded at 512 embedded queries?"
    out = VocabularyStrategy().reformulate(q, [], rag.context(rag.index()))
    assert out.query == q + " lru_cache"
    assert out.details["added"][0]["via"] == "identifier with the part 'cache'"
    again = VocabularyStrategy().reformulate(q, [], rag.context(rag.index()))
    assert again.query == out.query


def test_reads_the_vocabulary_of_its_own_index_and_rebuilds_it_when_the_index_changes(tmp_path,
                                                                                        bundled_embed_model):
    q = "How large is the cache for embedded queries?"
    other = ["The cache_ttl of embedded queries is one hour.", "Deployment notes only.",
             "Nothing else here.", "Logs go to stdout."]
    a = _indexed(tmp_path / "a", bundled_embed_model, CORPUS)
    b = _indexed(tmp_path / "b", bundled_embed_model, other)
    assert VocabularyStrategy().reformulate(q, [], a.context(a.index())).details["added"][0]["term"] == "lru_cache"
    assert VocabularyStrategy().reformulate(q, [], b.context(b.index())).details["added"][0]["term"] == "cache_ttl"
    (tmp_path / "a" / "corpus" / "x.md").write_text("Embedded queries also hit the qcache_entries table "
                                                    "for the cache.\n")
    a.index_paths([tmp_path / "a" / "corpus"])
    assert vocabulary.vocabulary_of(a.context(a.index())).df("qcache_entries") == 1


def test_without_a_mismatch_it_does_not_retry_unless_asked_to_reduce(tmp_path, bundled_embed_model):
    out = VocabularyStrategy().reformulate("What is the annual fee?", [], None)
    assert out.query is None and "no vocabulary mismatch found (no index to read a vocabulary from)" in out.reason
    reduce = VocabularyStrategy(reduce_otherwise=True)
    out = reduce.reformulate("What is the annual fee?", [], None)
    assert out.query == "annual fee" and out.details["no_expansion"] == "no index to read a vocabulary from"
    rag = _indexed(tmp_path / "a", bundled_embed_model, CORPUS)
    out = reduce.reformulate("Where do the logs go?", [], rag.context(rag.index()))
    assert out.query == "logs go" and "no corpus token" in out.details["no_expansion"]
    assert reduce.reformulate("logs go", [], rag.context(rag.index())).query is None
    assert VocabularyStrategy().reformulate("Where do the logs go?", [], rag.context(rag.index())).query is None
    _, strategy, _ = plugin.resolve(plugin.RetryConfig())
    assert strategy.reduce_otherwise is False


def test_selected_by_config():
    from ragplugins_retry.config import RetryConfig

    _, strategy, _ = plugin.resolve(RetryConfig(strategy="vocabulary", vocabulary_terms=1))
    assert isinstance(strategy, VocabularyStrategy) and strategy.terms == 1


def _indexed(root, embed_model, texts):
    corpus = root / "corpus"
    corpus.mkdir(parents=True)
    for i, t in enumerate(texts):
        (corpus / f"d{i}.md").write_text(t + "\n")
    rag = make_rag([plugin], {"enable": []}, embed_model=embed_model, persist_dir=root / "idx")
    rag.index_paths([corpus])
    return rag


def test_the_dense_leg_keeps_the_question_and_only_the_expanded_text_goes_lexical(tmp_path, bundled_embed_model):
    from llama_index.core.base.base_retriever import BaseRetriever
    from retry_testkit import ScriptedSignal

    from ragplugins.api import query_scope
    from ragplugins_retry import RetryRetriever

    class Recording(BaseRetriever):
        def __init__(self):
            super().__init__()
            self.bundles = []

        def _retrieve(self, bundle):
            self.bundles.append(bundle)
            return [node("weak" if len(self.bundles) == 1 else "strong")]

    rag = _indexed(tmp_path / "a", bundled_embed_model, CORPUS)
    inner = Recording()
    q = "How large is the cache for embedded queries?"
    retriever = RetryRetriever(inner, rag.context(rag.index()), signal=ScriptedSignal(values={"weak": 0.1,
                                                                                                 "strong": 0.9}),
                               strategy=VocabularyStrategy(), threshold=0.5)
    with query_scope(q, filters=None) as t:
        out = retriever.retrieve(q)
    assert [n.node.node_id for n in out] == ["strong"]
    assert inner.bundles[1].query_str == q + " lru_cache"
    assert inner.bundles[1].embedding_strs == [q]
    assert t.get("retry", "decision")["embedded"] == q


def test_initials_across_stopwords_are_not_an_acronym_unless_the_corpus_defines_them():
    corpus = ["An HTTP request names an absolute path.", "The HTTP proxy forwards each absolute path.",
              "The server answers HTTP requests.", "Path pieces are joined with a separator.",
              *CORPUS]
    # "happens to the pieces" has the initials of HTTP by chance; the corpus never defines it so.
    assert expand("What happens to the pieces before an absolute path?", corpus=corpus)[0] == []
    # Initials of content words alone still make an acronym.
    assert expand("Does it build an approximate-nearest-neighbour index?")[0] == ["ANN"]


def test_is_built_in_one_pass_over_a_stream_at_a_few_bytes_per_chunk_and_token():
    """A query process builds it over every chunk of the index: it reads the texts once, as they stream
    from the store, and keeps its postings packed (Python sets of ints took about 60 bytes per pair,
    more than 10 GB at a million chunks)."""
    import tracemalloc

    words = [f"term{i}" for i in range(400)]
    chunks = [" ".join(words[(7 * c + j * 13) % 400] for j in range(60)) for c in range(3000)]
    pairs = sum(len(set(c.split())) for c in chunks)
    read = []

    def stream():
        for chunk in chunks:
            read.append(1)
            yield chunk

    tracemalloc.start()
    vocab = vocabulary.build(stream())
    held, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(read) == len(chunks) and vocab.n_chunks == len(chunks)
    assert vocab.df("term0") == sum("term0" in c.split() for c in chunks) > 0
    assert list(vocab.postings.chunks("term0")) == [i for i, c in enumerate(chunks) if "term0" in c.split()]
    assert held < 12 * 2 * pairs   # token and stem postings of every (token, chunk) pair, plus the 400 keys


def test_an_acronym_is_defined_only_where_a_chunk_writes_it_as_one():
    corpus = ["Fusion is reciprocal rank fusion (RRF) here.", "The RRF constant is 60.",
              "Also reciprocal rank fusion (rrf) in lower case.", "RRF again."]
    vocab = vocabulary.build(corpus)
    assert vocab.expansions["rrf"] == {"reciprocal rank fusion": 1}


def test_a_file_name_the_question_types_names_a_document_and_is_not_respelt():
    from ragplugins_retry.strategies.vocabulary import _linked

    # Vim's help: "usr_21.txt says the :marks command ..." was respelt "usr_toc.txt" (the part "usr"), and the
    # retry set lost the answer's rank.
    vocab = vocabulary.build(["See usr_toc.txt for the list of marks and jumps.", "Marks are kept in viminfo."])
    query = "usr_21.txt says :marks lists marks. Which marks does it leave out?"
    assert "usr_toc.txt" in {term for term, _, _ in _linked(query, vocab)}
    assert "usr_toc.txt" not in {term for term, _, _ in _linked(query, vocab, frozenset({"usr_21.txt"}))}
    added, _ = VocabularyStrategy().expansions(query, vocab, files=frozenset({"usr_21.txt"}))
    assert added == []


def test_an_identifier_the_top_candidates_hold_is_not_respelt_by_its_parts():
    # lighttpd's pages: "mod_scgi" is in the top candidate as asked; its part "mod" linked "mod_extforward".
    corpus = ["mod_scgi hands requests to a backend. With check-local disabled the backend gets every request.",
              "mod_extforward: what happens with mod_scgi to the client address when check-local is disabled for a "
              "backend.",
              "The status page lists every backend.", "Logs go to the error log.", "Nothing else here."]
    top = [node("t", corpus[0])]
    query = "With mod_scgi, what happens when check-local is disabled for a backend?"
    added, why = expand(query, nodes=top, corpus=corpus)
    assert added == [], (added, why)
    # Not held by the top candidates, the same identifier is respelt by its parts as before.
    elsewhere = [node("t", "The status page lists every backend.")]
    assert "mod_extforward" in expand(query, nodes=elsewhere, corpus=corpus)[0]


def test_a_word_of_prose_joined_by_hyphens_is_not_respelt_by_its_parts():
    # A new user's Python-Markdown pages: "sub-items" linked "etree.SubElement" by its part "sub", and the retry set
    # pushed the answer out of the top 3.
    corpus = ["Nested lists: sub-items must be indented by at least four spaces for each level of nesting.",
              "Use etree.SubElement to add a child element; plain text goes in the element's text when you turn "
              "two spaces in front into a tab.",
              "The status page lists every extension.", "Logs go to the error log.", "Nothing else here."]
    query = "Why do the sub-items turn into plain text with two spaces in front of them?"
    top = [node("t", "The status page lists every extension.")]
    from ragplugins_retry.strategies.vocabulary import _linked

    assert "etree.subelement" not in {term for term, _, _ in _linked(query, vocabulary.build(corpus))}
    assert expand(query, nodes=top, corpus=corpus)[0] == []
    # Written as an identifier, the same parts are respelt as before.
    linked = {term for term, _, _ in _linked("Why do sub_items turn into plain text?", vocabulary.build(corpus))}
    assert "etree.subelement" in linked
