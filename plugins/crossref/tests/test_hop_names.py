"""How the hop reads a question asked from one end of a reference in code documentation: the names
questions give modules and manual pages, references written in one breath ("the datetime and calendar
modules"), and the sentence of the question that retells what the named document says."""

from __future__ import annotations

import pytest
from llama_index.core.schema import NodeWithScore, QueryBundle

import ragplugins_crossref.plugin as plugin
from ragplugins.api import query_scope
from ragplugins.testing import make_rag
from ragplugins_crossref.hop import (
    CrossrefHop,
    code_names,
    declared_names,
    mention_spans,
    reference_contexts,
    reference_passages,
)
from ragplugins_crossref.scan import Profile


def test_a_question_names_a_module_next_to_the_word_module_or_by_a_dotted_name():
    profiles = {
        "time.rst.txt": Profile("time.rst.txt", scope="time", anchors=["py:time", "py:time.sleep"]),
        "os.path.rst.txt": Profile("os.path.rst.txt", scope="os.path", anchors=["py:os.path", "py:os.path.join"]),
        "imp.rst.txt": Profile("imp.rst.txt", scope="imp", anchors=["py:imp", "py:imp.find_module"]),
        "xml.etree.elementtree.rst.txt": Profile("xml.etree.elementtree.rst.txt", scope="xml.etree.ElementTree",
                                                 anchors=["py:xml.etree.ElementTree"]),
    }
    declared = declared_names(profiles)
    assert code_names("The time module covers time access. How long is a day?", *declared) == {"time.rst.txt"}
    assert code_names("What does module time offer?", *declared) == {"time.rst.txt"}
    # A module name is often an ordinary word: alone it names nothing.
    assert code_names("How much time does a sleep take?", *declared) == set()
    # Dotted names are code: an object a document declares, else its longest declared prefix.
    assert code_names("The old imp.find_module is deprecated.", *declared) == {"imp.rst.txt"}
    assert code_names("Does os.path.join normalise?", *declared) == {"os.path.rst.txt"}
    assert code_names("Does os.path.splitext keep the dot?", *declared) == {"os.path.rst.txt"}
    assert code_names("Is xml.etree.ElementTree safe?", *declared) == {"xml.etree.elementtree.rst.txt"}
    assert code_names("Is e.g. this a name?", *declared) == set()


def test_a_question_names_a_manual_page_by_its_name_of_two_words_or_more():
    profiles = {"git-rm.txt": Profile("git-rm.txt", titles=["git-rm(1)"]),
                "git.txt": Profile("git.txt", titles=["git(1)"]),
                "gitcore-tutorial.txt": Profile("gitcore-tutorial.txt", titles=["gitcore-tutorial(7)"])}
    declared = declared_names(profiles)
    assert code_names("After using git rm on a nested repository, is its data gone?", *declared) == {"git-rm.txt"}
    assert code_names("What does git-rm --cached keep?", *declared) == {"git-rm.txt"}
    # One word is prose in these questions: "git" would name the git(1) page in every question.
    assert code_names("How does git store objects?", *declared) == set()
    # Only a title written as a manual page's (name and section) declares a name.
    assert declared_names({"notes.txt": Profile("notes.txt", titles=["Release notes"])})[2].find("release notes") == []


def test_a_name_is_found_where_it_stands_whole_not_inside_a_longer_one():
    # lighttpd's extforward page: the pointer to mod_access took the sentence about mod_accesslog.
    text = ("In order to see the real ip address in access log, you'll have to load mod_extforward after "
            "mod_accesslog. mod_access: Will match on the real client. See Section 4.3.1, then Section 4.3.")
    found = {s: [text[a:b] for a, b in mention_spans(text, s)] for s in
             ("mod_access", "mod_accesslog", "Section 4.3", "Section 4.3.1")}
    assert found == {"mod_access": ["mod_access"], "mod_accesslog": ["mod_accesslog"],
                     "Section 4.3": ["Section 4.3"], "Section 4.3.1": ["Section 4.3.1"]}
    assert mention_spans(text, "mod_access")[0][0] == text.index("mod_access:")
    assert mention_spans(text, "Section 4.3")[0][0] == text.rindex("Section 4.3")
    assert [sentence.split(",")[0] for sentence in reference_contexts(text, "mod_access")] == [
        "mod_access: Will match on the real client"]


def test_references_joined_by_and_or_a_comma_share_their_clause():
    text = ("This module provides time-related functions. For related functionality, see also the "
            ":mod:`datetime` and :mod:`calendar` modules. Use :mod:`os` for the rest, not :mod:`sys`.\n")
    spans = {name: mention_spans(text, f":mod:`{name}`") for name in ("datetime", "calendar", "os", "sys")}

    def others(name):
        return [s for other, found in spans.items() if other != name for s in found]

    shared = "For related functionality, see also the :mod:`datetime` and :mod:`calendar` modules"
    assert reference_contexts(text, ":mod:`datetime`", others=others("datetime")) == [shared]
    assert reference_contexts(text, ":mod:`calendar`", others=others("calendar")) == [shared]
    # A clause separator and more words between two references still cut the sentence between them.
    assert reference_contexts(text, ":mod:`os`", others=others("os")) == ["Use :mod:`os` for the rest"]


def test_every_reference_of_a_list_shares_its_sentence():
    def contexts(text, surfaces):
        spans = {s: mention_spans(text, s) for s in surfaces}
        return [reference_contexts(text, s, others=[x for o in surfaces if o != s for x in spans[o]])
                for s in surfaces]

    # Three or more: the first and the last are listed together through the middle one (the first lost "for
    # dates" and the last "See also" when only neighbours counted).
    text = "See also :mod:`datetime`, :mod:`time` and :mod:`calendar` for dates.\n"
    assert contexts(text, [":mod:`datetime`", ":mod:`time`", ":mod:`calendar`"]) == [[text.strip()]] * 3
    # Each after the same preposition: nginx's "limited by [password](...), by the [result of subrequest](...),
    # or by [JWT](...)" said "limited by" only of the first, and the hop chose it for a question about the second.
    text = ("Delays processing of unauthorized requests with 401 response code\nto prevent timing attacks when "
            "access is limited by\n[password](ngx_http_auth_basic_module.html), by the\n"
            "[result of subrequest](ngx_http_auth_request_module.html),\nor by [JWT](ngx_http_auth_jwt_module.html).\n")
    links = ["[password](ngx_http_auth_basic_module.html)", "[result of subrequest](ngx_http_auth_request_module.html)",
             "[JWT](ngx_http_auth_jwt_module.html)"]
    assert contexts(text, links) == [[" ".join(text.split())]] * 3
    # Another preposition starts another clause: "read from X in Y" names Y for something else.
    text = "The options are read from [Section 4](a.html) in [Chapter 9](b.html), which explains them.\n"
    assert contexts(text, ["[Section 4](a.html)", "[Chapter 9](b.html)"]) == [
        ["The options are read from [Section 4](a.html)"], ["in [Chapter 9](b.html), which explains them."]]


def test_a_passage_that_makes_another_reference_can_be_left_out():
    text = ("Random numbers here are not for security. For cryptographic uses, see :mod:`secrets`.\n\n"
            "Seeds come from :func:`os.urandom`, and :mod:`hashlib` hashes them.\n")
    secrets, urandom = mention_spans(text, ":mod:`secrets`"), mention_spans(text, ":func:`os.urandom`")
    hashlib = mention_spans(text, ":mod:`hashlib`")
    assert reference_passages(text, ":mod:`secrets`", others=urandom + hashlib) == [
        "Random numbers here are not for security. For cryptographic uses, see :mod:`secrets`."]
    assert reference_passages(text, ":func:`os.urandom`", others=secrets + hashlib) == []   # names hashlib too
    assert reference_passages(text, ":func:`os.urandom`") == [
        "Seeds come from :func:`os.urandom`, and :mod:`hashlib` hashes them."]


# A small library reference in Sphinx sources (written for these tests). The os page points at three
# modules in one paragraph; the time page at two in one sentence.
SPHINX = {
    "os.rst.txt": (":mod:`os` --- Operating system interfaces\n=========================================\n\n"
                   ".. module:: os\n\nThis module gives portable access to the operating system. To manipulate "
                   "paths, see the :mod:`os.path` module; for temporary files and folders see the :mod:`tempfile` "
                   "module, and for high-level file and directory handling see the :mod:`shutil` module.\n"),
    "os.path.rst.txt": (":mod:`os.path` --- Pathname manipulations\n=========================================\n\n"
                        ".. module:: os.path\n\nFunctions that split, join and normalise path names.\n"),
    "tempfile.rst.txt": (":mod:`tempfile` --- Temporary files\n===================================\n\n"
                         ".. module:: tempfile\n\nCreates temporary files and directories that remove "
                         "themselves.\n"),
    "shutil.rst.txt": (":mod:`shutil` --- High-level file operations\n============================================"
                       "\n\n.. module:: shutil\n\n.. function:: copytree(src, dst)\n\n   Recursively copy an entire "
                       "directory tree rooted at *src* to a directory named *dst*.\n"),
    "time.rst.txt": (":mod:`time` --- Time access and conversions\n===========================================\n\n"
                     ".. module:: time\n\nThis module provides time-related functions. For related functionality, "
                     "see also the :mod:`datetime` and :mod:`calendar` modules.\n"),
    "datetime.rst.txt": (":mod:`datetime` --- Dates and times\n===================================\n\n"
                         ".. module:: datetime\n\nClasses for dates, times and their arithmetic: a date knows its "
                         "year, month and day.\n"),
    "calendar.rst.txt": (":mod:`calendar` --- Calendar functions\n======================================\n\n"
                         ".. module:: calendar\n\n.. function:: isleap(year)\n\n   Return ``True`` if *year* is "
                         "a leap year, otherwise ``False``.\n"),
}


@pytest.fixture(scope="module")
def library(corpus_writer, tmp_path_factory, bundled_embed_model):
    root = tmp_path_factory.mktemp("sphinx")
    rp = make_rag([plugin], {"crossref": {}}, embed_model=bundled_embed_model, persist_dir=root / "idx")
    rp.index_paths([corpus_writer(root / "corpus", SPHINX)])
    ctx = rp.context()
    chunks = {node.ref_doc_id: node for node in ctx.all_nodes()}
    assert len(chunks) == len(list(ctx.all_nodes())) == len(SPHINX)   # one chunk each: the lists below are exact
    return ctx, chunks


def decide(library, query, docs, **params):
    ctx, chunks = library
    candidates = [NodeWithScore(node=chunks[d], score=1.0) for d in docs]
    with query_scope(query, filters=None) as tr:
        CrossrefHop(ctx=ctx, **params).postprocess_nodes(list(candidates), query_bundle=QueryBundle(query))
    return tr.get("crossref", "hop")


COPY_Q = ("The os module says to look elsewhere for high-level file and directory handling. How do I "
          "duplicate a folder together with everything inside it?")
LEAP_Q = ("The time module covers time access and refers to related modules for other functionality. "
          "How can I check whether a particular year has 366 days?")


def test_the_named_document_s_pointer_is_chosen_by_the_sentence_that_retells_it(library):
    ctx, _ = library
    hop = CrossrefHop(ctx=ctx)
    assert hop.named_documents(COPY_Q) == {"os.rst.txt"}
    decision = decide(library, COPY_Q, ["os.rst.txt", "os.path.rst.txt", "tempfile.rst.txt"])
    assert decision["named"] == ["os.rst.txt"]
    first = decision["considered"][0]
    assert first["claim"] == "The os module says to look elsewhere for high-level file and directory handling."
    assert first["target"] == "shutil.rst.txt"
    # The whole question, which also asks what the other end answers, reads otherwise.
    by_question = max(decision["considered"], key=lambda p: p["sentence_match"])
    assert by_question["target"] != "shutil.rst.txt"


def test_one_sentence_pointing_at_two_modules_goes_to_the_one_the_window_lacks(library):
    decision = decide(library, LEAP_Q, ["time.rst.txt", "datetime.rst.txt", "os.rst.txt"])
    assert decision["named"] == ["time.rst.txt"]
    calendar, datetime_ = sorted((p for p in decision["considered"]), key=lambda p: p["target"])
    assert calendar["sentence"] == datetime_["sentence"] == (
        "For related functionality, see also the :mod:`datetime` and :mod:`calendar` modules.")
    assert decision["considered"][0]["target"] == "calendar.rst.txt"
    assert decision["chosen"] == ["calendar.rst.txt"]
