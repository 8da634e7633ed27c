"""Index-time extraction and resolution, on text alone (no index, no embedder)."""

from __future__ import annotations

import time

import pytest

from ragplugins_crossref.families import BUILTIN_FAMILIES, family
from ragplugins_crossref.resolve import annotate, cap_refs


def run(docs: dict[str, str], meta: dict | None = None, **kw):
    """Annotate single-chunk documents {doc id: text}; returns {doc id: [records]} and the annotation."""
    chunks = {d: [(f"{d}#0", text)] for d, text in docs.items()}
    metadata = {d: {"file_name": d, **(meta or {}).get(d, {})} for d in docs}
    ann = annotate(chunks, metadata, kw.pop("families", BUILTIN_FAMILIES), **kw)
    return {d: ann.refs[f"{d}#0"] for d in docs}, ann


def targets(records, kind=None):
    return {(r["ref"], r["target"]) for r in records if kind is None or r["kind"] == kind}


def test_document_mentions_by_title_filename_and_alias():
    refs, _ = run({
        "01_due_diligence_report.pdf": "DUE DILIGENCE REPORT\nRevenue grew 45%.",
        "02_nda.pdf": "NON-DISCLOSURE AGREEMENT\nTerms of confidentiality.",
        "03_closing_checklist.pdf": "CLOSING CHECKLIST\nItems.",
        "04_memo.pdf": "MEMO\nSee the Document: Due\nDiligence Report, the Non-Disclosure Agreement, the "
                       "Closing Checklist and the NDA for details.",
    }, aliases={"02_nda.pdf": ["NDA"]})
    got = targets(refs["04_memo.pdf"], "document")
    assert ("due diligence report", "01_due_diligence_report.pdf") in got   # title across a line break
    assert ("non disclosure agreement", "02_nda.pdf") in got                # title with a hyphen
    assert ("closing checklist", "03_closing_checklist.pdf") in got         # numeric prefix stripped
    assert ("nda", "02_nda.pdf") in got                                      # declared alias


def test_a_title_with_a_possessive_is_mentioned_as_it_is_written():
    # Linux-PAM's guides: "see the Linux-PAM System Administrators' Guide"; "the Module Writer's Guide".
    refs, _ = run({
        "Linux-PAM_SAG.html": "# The Linux-PAM System Administrators' Guide\nThis manual documents PAM.",
        "Linux-PAM_MWG.html": "# The Linux-PAM Module Writer's Guide\nHow to write modules.",
        "adg-intro.html": "# Introduction\nFor configuration, see the Linux-PAM System Administrators' Guide; "
                          "modules are described in the Linux-PAM Module Writer’s Guide.",
        # The guides' own pages emphasise the project's name (a new user's walkthrough, walk81).
        "mwg-overview.html": "# Overview\nThe arguments come from the configuration file (see the *Linux-PAM*\n"
                             "System Administrators' Guide).",
    })
    assert targets(refs["adg-intro.html"], "document") == {
        ("the linux pam system administrators guide", "Linux-PAM_SAG.html"),
        ("the linux pam module writer s guide", "Linux-PAM_MWG.html")}
    assert targets(refs["mwg-overview.html"], "document") == {
        ("the linux pam system administrators guide", "Linux-PAM_SAG.html")}


def test_a_name_the_line_before_runs_into_is_mentioned_and_a_name_set_apart_is_not():
    # pypdf 6 breaks the acquisition memo's line after "per Document:", leaving the checklist's name alone on the
    # next line, where a name heads or labels a page; a sentence that runs into it points at the document.
    refs, _ = run({
        "10_closing_checklist.pdf": "CLOSING CHECKLIST\n\nItems to deliver at closing.",
        "09_customer_consents.pdf": "CUSTOMER CONSENTS\n\nThe pending consent is expected before the closing date "
                                    "per Document:\nClosing Checklist.\nATTACHMENTS",
        "11_summary.pdf": "SUMMARY\n\n*Closing Checklist*\n\nA page set apart under the checklist's name.",
    })
    assert targets(refs["09_customer_consents.pdf"], "document") == {("closing checklist", "10_closing_checklist.pdf")}
    assert not targets(refs["11_summary.pdf"], "document")


def test_a_heading_that_holds_another_document_s_name_heads_a_section_and_points_nowhere():
    refs, _ = run({
        "reverse_proxy.html": "# Reverse Proxy Guide\n\nForwarding requests to a backend.",
        "urlmapping.html": "# Mapping URLs\n\n## Reverse Proxy Guide\n\nMap a URL to another server. For the "
                           "details see the Reverse Proxy Guide.",
        "other.html": "# Other\n\n## **Reverse Proxy Guide**:\n\nNothing else here.",
        # Apache's caching guide: a section on its own subject whose heading ends with another page's title.
        "caching.html": "# Caching Guide\n\n### Caching behind a Reverse Proxy Guide\n\nCached responses skip "
                        "the backend.",
    })
    assert [r["ref"] for r in refs["urlmapping.html"] if r["kind"] == "document"] == ["reverse proxy guide"]
    # (the mention in the sentence; the heading above it is the page's own section)
    assert not [r for r in refs["other.html"] if r["kind"] == "document"]
    assert not [r for r in refs["caching.html"] if r["kind"] == "document"]


def test_guards_short_common_and_lowercase_names():
    refs, _ = run({
        "01_customer_consents.pdf": "CUSTOMER CONSENT LETTERS\nStatus of consents.",
        "02_verifier.md": "# Verifier\nChecks answers.",
        "03_final_report.pdf": "FINAL REPORT\nThe end.",
        "04_plan.pdf": "PLAN\nWe recommend obtaining customer consents. The Verifier runs last. "
                       "See the Final Report.",
    })
    # Prose ("customer consents"), a one-word name ("Verifier") and generic words ("Final Report") never link.
    assert not [r for r in refs["04_plan.pdf"] if r["target"]]


def test_labels_resolve_to_defining_heading_and_never_to_own_document():
    refs, _ = run({
        "master.md": "# Master Services Agreement\nFees are payable as set out in Exhibit A. "
                     "Exhibit Z is attached below.\n\n## Exhibit Z - Contacts\nJane Doe.",
        "exhibit_a.md": "# Exhibit A - Payment Schedule\nPayments are due quarterly.",
    })
    got = targets(refs["master.md"], "label")
    assert ("exhibit a", "exhibit_a.md") in got
    # Exhibit Z is defined inside master.md itself: kept, but with a null target.
    assert ("exhibit z", None) in got
    assert all(r["target"] != "master.md" for r in refs["master.md"])


def test_label_caption_must_agree_with_the_definition():
    refs, _ = run({
        "agreement.pdf": "PURCHASE AGREEMENT\nThe price is detailed in Exhibit A - Financial Terms.",
        "consents.pdf": "CONSENT MEMO\nAttachments:\n- Exhibit A: MegaCorp Consent Letter\n",
    })
    assert targets(refs["agreement.pdf"], "label") == {("exhibit a", None)}


def test_label_owned_elsewhere_and_restated():
    refs, ann = run({
        "01_purchase_agreement.pdf": "PURCHASE AGREEMENT\nThe price is detailed in Exhibit A - Financial Terms.",
        "02_finance_memo.pdf": "FINANCE MEMO\nWe adjust the price set forth in Exhibit A - Financial Terms of the "
                               "Purchase Agreement.",
        "03_checklist.pdf": "CHECKLIST\nWire the amount per Exhibit A - Financial Terms.",
    })
    # The memo says whose Exhibit A it is ...
    assert targets(refs["02_finance_memo.pdf"], "label") == {("exhibit a", "01_purchase_agreement.pdf")}
    assert ann.profiles["02_finance_memo.pdf"].claims == [["exhibit a", "financial terms",
                                                           "01_purchase_agreement.pdf"]]
    # ... so the checklist's unqualified Exhibit A belongs to the agreement (consensus owner),
    assert targets(refs["03_checklist.pdf"], "label") == {("exhibit a", "01_purchase_agreement.pdf")}
    # and the agreement's own Exhibit A resolves to the memo that restates it.
    rec = [r for r in refs["01_purchase_agreement.pdf"] if r["kind"] == "label"]
    assert [(r["target"], r["how"]) for r in rec] == [("02_finance_memo.pdf", "restated")]


def test_section_with_owner_after_or_before_resolves_to_its_chunk():
    chunks = {
        "master.pdf": [("m#0", "MASTER AGREEMENT\n1. Scope\nGoods."), ("m#1", "4. Quality\n4.3 Inspection. Lots.")],
        "plan.pdf": [("p#0", "QUALITY PLAN\nThis plan implements Section 4.3(b) of the Master Agreement, "
                             "Article IV, Section 4.1 of the Master Agreement and the Master Agreement's "
                             "Section 1. Section 9 applies.")],
    }
    ann = annotate(chunks, {d: {"file_name": d} for d in chunks}, BUILTIN_FAMILIES)
    recs = {r["ref"]: r for r in ann.refs["p#0"] if r["kind"] == "section"}
    assert recs["section 4.3"]["target"] == "master.pdf" and recs["section 4.3"]["chunk"] == "m#1"
    assert recs["article iv"]["target"] == "master.pdf"          # inherits the chain's owner
    assert recs["section 1"]["target"] == "master.pdf" and recs["section 1"]["chunk"] == "m#0"  # owner before
    assert recs["section 9"]["target"] is None                    # unqualified: internal, kept unresolved


def test_a_section_in_parentheses_after_another_work_is_that_work_s():
    # The Securing Debian Manual (one Publican page per section): "the Debian Reference (Chapter 2 - Debian
    # fundamentals)" went to the manual's own chapter 2, and "[RFC1122](ftp://...), (in the section 3.3.4.2)" to
    # its own section 3.3.4.2. The same parenthesis after a document of this index is a section of that document.
    refs, _ = run({
        "network.html": "# Network\n\nIt is called *weak end host* in [RFC1122](ftp://ftp.isi.edu/rfc1122.txt), "
                        "(in the section 3.3.4.2). Read the boot scripts section of the Debian Reference (Chapter 2 - "
                        "Debian fundamentals). The RFC2119 (section 3) words.",
        "intro.html": "# Introduction\n\nSee Chapter 2 first.",
        "before.html": "# Chapter 2. Before you begin\n\nText.\n",
        "weak.html": "# 3.3.4.2. Weak hosts\n\nText.\n",
        "rfc2119.txt": "Key words for use in RFCs\n\nRFC 2119\n\n3. SHOULD\n\nText.\n",
    }, meta={"rfc2119.txt": {"title": "RFC 2119"}})
    assert targets(refs["network.html"], "section") == {("section 3.3.4.2", None), ("chapter 2", None),
                                                        ("section 3", "rfc2119.txt")}
    assert targets(refs["intro.html"], "section") == {("chapter 2", "before.html")}


def test_a_section_starts_at_its_heading_not_at_its_table_of_contents_entry():
    # A PDF's contents page comes first (LaTeX's clsguide): entries end with a page number after a dot leader,
    # or, for chapters, a bare one among such entries, and may wrap onto two lines.
    contents = ("Contents\n1 Introduction 2\n1.1 Overview . . . . . . . . . . . . 3\n2 Writing classes 4\n"
                "3 Preconstructing command names\n(or otherwise expanding arguments) 5\n4 Case changing 7\n"
                "4.1 Changing the case of text that is\n    wrapped in an entry . . . . . . . . . 8\n"
                "Abstract\nThis guide is for class writers, and Section 4 says how to change case.\n")
    chunks = {
        "clsguide.pdf": [("c#0", "# Class Writers Guide\n" + contents),
                         ("c#1", "1 Introduction\nClasses.\n1.1 Overview\nThe overview.\n2 Writing classes\n"
                                 "Writing.\n"),
                         ("c#2", "4 Case changing\nUse \\MakeUppercase for upper case.\n"
                                 "4.1 Changing the case of text that is wrapped in an entry\nText.\n")],
        "memo.pdf": [("m#0", "MEMO\nSee Section 1.1 of the Class Writers Guide; Section 4 of the Class Writers "
                             "Guide covers case.")],
    }
    ann = annotate(chunks, {d: {"file_name": d} for d in chunks}, BUILTIN_FAMILIES)
    sections = ann.profiles["clsguide.pdf"].sections
    assert sections["section 1"] == sections["section 1.1"] == sections["section 2"] == "c#1"
    assert sections["section 4"] == "c#2"           # past a wrapped entry ("3 ... names" / "(or ...) 5")
    assert sections["section 4.1"] == "c#2"         # an entry whose first line ends before its dot leader
    recs = {r["ref"]: r for r in ann.refs["m#0"] if r["kind"] == "section"}
    assert recs["section 1.1"]["chunk"] == "c#1" and recs["section 4"]["chunk"] == "c#2"
    # A section no heading starts keeps its contents entry (it still says which document part is meant).
    assert sections["section 3"] == "c#0"


def test_a_date_on_a_line_of_its_own_is_no_section():
    # A PDF's title page: "18 February 2016" under the title was read as section 18 (LaTeX's guides).
    chunks = {"ltnews.pdf": [("n#0", "LaTeX News\nIssue 24, February 2016\n18 February 2016\nContents\n"),
                             ("n#1", "1 Introduction\nNews.\n")]}
    sections = annotate(chunks, {d: {"file_name": d} for d in chunks}, BUILTIN_FAMILIES).profiles["ltnews.pdf"].sections
    assert "section 18" not in sections and sections["section 1"] == "n#1"



def test_a_section_of_manual_pages_is_no_section_of_a_document():
    # The GNU Coding Standards: "installing section 1 man pages" went to its own chapter "1 About the GNU Coding
    # Standards".
    refs, _ = run({"standards.html": "# 1 About the GNU Coding Standards\n\nText.\n\n# 7 Makefile Conventions\n\n"
                                     "Install section 1 man pages and section 12 manpages; see section 7 for more.",
                   "other.html": "# Other\nx"})
    assert {r["ref"] for r in refs["standards.html"] if r["kind"] == "section"} == {"section 7"}

def test_a_section_after_a_standard_s_designator_is_that_standard_s():
    # FFmpeg's manuals: "see H.264 section 7.4.2.1.1" went to the one page with a heading "7" (its nearest
    # enclosing section); a standard nobody indexed owns it. Without a designator the heading rule still holds for
    # a heading that numbers its section as one ("## 7.2 Rules", "## 7. Rules", "## Section 7: Rules"), not for a
    # texinfo chapter's number alone: flex's manual heads its chapter "1 Copyright", and its "section 1 of the flex
    # input" (the input file's first part) went there, 3 of 3 such references.
    refs, _ = run({
        "mailing-list-faq.html": "# Mailing List FAQ\n\n## 7.2 Rules\n\nBe polite.\n",
        "copyright.html": "## 1 Copyright\n\nThe flex manual is placed under the same licence.\n",
        "bitstream-filters.html": "# Bitstream Filters\n\nSizes may not be representable (see H.264 section "
                                  "7.4.2.1.1). Timing follows ETS 300 706, Section 7.1, and XML 1.0, section 7.3. "
                                  "Posting rules: see section 7.2. Code in section 1 of the input is copied.\n",
    })
    got = {(r["text"], r["target"]) for r in refs["bitstream-filters.html"] if r["kind"] == "section"}
    assert got == {("section 7.4.2.1.1", None), ("Section 7.1", None), ("section 7.3", None),
                   ("section 7.2", "mailing-list-faq.html"), ("section 1", None)}


def test_identifiers_and_citation_keys():
    refs, _ = run({
        "rfc9000.txt": "RFC 9000: QUIC: A UDP-Based Multiplexed and Secure Transport\nText.",
        "iso.md": "# ISO 27001 Information Security Management\nControls.",
        "paper.md": "# Our Paper\nWe build on RFC 9000 and ISO 27001. As shown in Section 8 of [QUIC21], "
                    "streams are cheap; see also [NOPE1].\n\n## References\n"
                    "[QUIC21] Iyengar and Thomson, RFC 9000, 2021.\n",
    })
    got = targets(refs["paper.md"])
    assert ("rfc9000", "rfc9000.txt") in got and ("iso27001", "iso.md") in got
    assert ("quic21", "rfc9000.txt") in got                        # via the reference list
    assert ("section 8", "rfc9000.txt") in got                     # "Section 8 of [KEY]"
    assert not any(r["ref"] == "nope1" for r in refs["paper.md"])  # brackets no reference list defines


def test_file_names_in_links():
    refs, _ = run({"manual/guide.md": "# Guide\nSee [the verifier](../reference/verifier.md#setup) and `indexing.md`.",
                   "reference/verifier.md": "# Verifier\nx", "indexing.md": "# Indexing\ny"})
    # The link names its file once (as a link, not again as a file name); the bare file name is a document.
    assert targets(refs["manual/guide.md"]) == {("../reference/verifier.md", "reference/verifier.md"),
                                                ("indexing.md", "indexing.md")}


def test_a_link_s_path_names_a_file_of_the_layout_indexed_or_of_the_folders_it_names():
    pages = {
        # Sphinx's tutorial links its own todo.html, which was not indexed; the extension's todo.html was.
        "development/tutorials/recipe.html": "# Recipe\nAs in the [TODO tutorial](todo.html), a directive.",
        "usage/extensions/todo.html": "# sphinx.ext.todo\nx",
        # Docutils' math page links "latex.html#latex-preamble" as if beside it: the one latex page holding the place.
        "ref/rst/mathematics.html": "# Mathematics\nSee the [LaTeX preamble](latex.html#latex-preamble).",
        "user/latex.html": "# LaTeX writer\n\n## LaTeX preamble\n\nPackages.\n",
        # A copy that left out the folders a link names: the one file of that name in the folders both have.
        "spec.html": "# Spec\nThe old version is [here](../doc/go1.17_spec.html); also "
                     "[the memory model](/doc/go_mem.html).",
        "go1.17_spec.html": "# The Go Programming Language Specification (Go 1.17)\ny",
        "go_mem.html": "# The Go Memory Model\nz",
        # Debian's Click pages link Python's own pages where Debian installs them: not Click's exceptions.html.
        "api.html": "# API\nRaises [BaseException](/usr/share/doc/python3-doc/html/library/exceptions.html"
                    "#BaseException) or [an error](exceptions.html#click.ClickException).",
        "exceptions.html": "# Exception Handling\n\n## ClickException\n\nRaised by commands.\n",
    }
    refs, _ = run(pages)
    assert targets(refs["development/tutorials/recipe.html"]) == set()
    assert targets(refs["ref/rst/mathematics.html"]) == {("latex.html", "user/latex.html")}
    # A path from the site's root may name folders above the one indexed ...
    assert targets(refs["spec.html"]) == {("/doc/go_mem.html", "go_mem.html")}
    # ... but one that names two folders or more names none of a page at the top of what was indexed.
    assert targets(refs["api.html"]) == {("exceptions.html", "exceptions.html")}
    # Indexed where the site had it, a root path names the same file; a relative one too.
    refs, _ = run({"doc/spec.html": pages["spec.html"], "doc/go1.17_spec.html": pages["go1.17_spec.html"],
                   "doc/go_mem.html": pages["go_mem.html"]})
    assert targets(refs["doc/spec.html"]) == {("../doc/go1.17_spec.html", "doc/go1.17_spec.html"),
                                             ("/doc/go_mem.html", "doc/go_mem.html")}


def test_names_inside_a_link_to_another_site_or_within_the_page_point_at_no_document_here():
    # The Autoconf manual links to the Automake manual on gnu.org; its own Automake page is another page.
    refs, _ = run({
        "Coding-Style.html": "Use the [Automake manual](https://www.gnu.org/software/automake/manual/automake.html"
                             "#Extending-aclocal) and [Gnulib](#gnulib-section); the Automake page is here: "
                             "[Automake](Automake.html).",
        "Automake.html": "# Automake\nAutomake writes Makefile.in files.",
        "Gnulib.html": "# Gnulib\nThe GNU portability library."})
    assert targets(refs["Coding-Style.html"]) == {("Automake.html", "Automake.html")}


def test_unresolved_kept_with_null_target_and_cap_keeps_resolved_first():
    records = [{"kind": "label", "ref": f"exhibit {c}", "target": None} for c in "abcdefgh"]
    records.append({"kind": "document", "ref": "x", "target": "x.pdf"})
    records.append({"kind": "document", "ref": "y", "target": "y.pdf"})
    capped = cap_refs(records, 4)
    assert [r["target"] for r in capped] == ["x.pdf", "y.pdf", None, None]


def test_custom_family_from_config_spec():
    from ragplugins_crossref.config import FamilySpec

    spec = FamilySpec(
        name="doc_cue",
        kind="document",
        pattern=r"Document:\s{1,3}(?P<name>[A-Z][\w-]{0,30}(?:[ \t]{1,3}[A-Z][\w-]{0,30}){0,5})",
    )
    refs, _ = run({"a.pdf": "MEMO\nIntegration kickoff per Document: Integration Plan"},
                  families=[*BUILTIN_FAMILIES, spec.build()])
    assert ("integration plan", None) in targets(refs["a.pdf"], "document")   # dangling, kept


def test_bad_families_are_reported_by_name():
    with pytest.raises(ValueError, match="ticket.*named group.*id"):
        family("ticket", "identifier", r"JIRA-\d+")
    with pytest.raises(ValueError, match="'broken'.*not a valid regular expression"):
        family("broken", "identifier", r"(?P<id>[")


@pytest.mark.parametrize("text", [
    "Section " + "1." * 50_000,
    "[" * 50_000 + "KEY" + "]" * 50_000,
    "x" * 100_000,
    "Exhibit " + "A - " * 25_000,
    ("ab.cd" * 20_000) + ".md",
], ids=["dotted-section", "nested-brackets", "no-spaces", "label-captions", "dotted-filename"])
def test_patterns_are_linear_on_adversarial_input(text):
    docs = {"a.md": [("a#0", text)], "b.md": [("b#0", "# Section Owner Document\n" + text)]}
    start = time.perf_counter()
    annotate(docs, {"a.md": {"file_name": "a.md"}, "b.md": {"file_name": "b.md"}}, BUILTIN_FAMILIES)
    assert time.perf_counter() - start < 3.0


def test_a_reference_after_a_navigation_label_moves_the_reader_and_points_nowhere():
    # Vim's help chapters open and close with bars in plain text: "Next chapter: |usr_12.txt|". What follows such
    # a label is where the reader goes next, not what the text points at; the same name in a sentence is.
    bars = ("Next chapter: [usr_12.txt](usr_12.txt)  Clever tricks\nPrevious chapter: [usr_10.txt](usr_10.txt)\n"
            "Table of contents: [usr_toc.txt](usr_toc.txt)\n\nNext: [usr_12.txt](usr_12.txt), "
            "Prev: [usr_10.txt](usr_10.txt), Up: [usr_toc.txt](usr_toc.txt)\n"
            # Vim writes them so, and the file name inside the bars is read by the file-name family.
            "Previous chapter: |usr_10.txt|  Making big changes\n")
    refs, _ = run({
        "usr_11.txt": bars + "\nRecovering is explained in [usr_12.txt](usr_12.txt).",
        "usr_12.txt": "Clever tricks.", "usr_10.txt": "Making big changes.", "usr_toc.txt": "Contents.",
    })
    assert [(r["ref"], r["target"]) for r in refs["usr_11.txt"]] == [("usr_12.txt", "usr_12.txt")]


def test_a_heading_s_own_number_is_no_reference_and_the_same_number_in_a_sentence_is():
    # A new user's handbook: "# Chapter 12. Advanced Administration" was stored as a reference of the chapter's page
    # to itself, on every chapter and appendix page.
    refs, _ = run({
        "advanced-administration.html": "# Chapter 12. Advanced Administration\n\nRAID and LVM build on Chapter 9.",
        "unix-services.html": "# Chapter 9. Unix Services\n\nSee Chapter 12 for RAID, and Chapter 9 below.",
    })
    assert targets(refs["advanced-administration.html"]) == {("chapter 9", "unix-services.html")}
    assert targets(refs["unix-services.html"]) == {("chapter 12", "advanced-administration.html"), ("chapter 9", None)}


def test_the_files_a_change_log_entry_lists_as_changed_are_no_references():
    # A new user's gnu-standards folder: 52 of its 70 references between documents were its change logs' entries,
    # each naming a manual's source; a file named in an entry's words is still one.
    refs, _ = run({
        "changelog": "2018-01-15  Richard Stallman  <rms@gnu.org>\n\n\t* standards.texi (Change Log Concepts):\n"
                     "\tEncourage longer explanations.\n\t* maintain.texi, standards.texi: Update.\n\n"
                     "\t* maintain.texi Change http: to https:\n\n"
                     "  * debian/control: bump Standards-Version; see maintain.texi for the rules.\n",
        "maintain.html": "# Information for Maintainers of GNU Software\nx",
        "standards.html": "# GNU Coding Standards\ny",
    })
    assert targets(refs["changelog"]) == {("maintain texi", "maintain.html")}
    assert len(refs["changelog"]) == 1, refs["changelog"]


def test_a_link_whose_words_say_contents_is_a_reference_in_a_sentence_and_navigation_in_a_bar():
    # Python-Markdown's pages: "the [Table of Contents](../extensions/toc.html) extension" names the extension's page
    # (7 such links were read as navigation, one a new user's pointer question followed); in a bar of links it only
    # moves the reader.
    refs, _ = run({
        "extensions/index.html": "# Extensions\n\nSee the [Table of Contents](toc.html) extension for a list of "
                                 "the headings.\n",
        "extensions/abbr.html": "# Abbreviations\n\nText.\n\n[Previous chapter](attr.html) | "
                                "[Table of Contents](toc.html) | [Next chapter](index.html)\n",
        "extensions/toc.html": "# Table of Contents\n\nThe toc extension.\n",
        "extensions/attr.html": "# Attribute Lists\n\nText.\n",
    })
    assert targets(refs["extensions/index.html"], "link") == {("toc.html", "extensions/toc.html")}
    assert targets(refs["extensions/abbr.html"], "link") == set()


def test_a_heading_that_is_a_setting_s_name_declares_it_where_no_entry_does():
    # MkDocs' configuration page heads each setting "### site_name"; a release note's table row naming it was the only
    # definition found, and "the `site_name` setting" went to the release notes. A config file's comment shown as code
    # ("# allow_domain_literals" in Exim's default configuration) is no heading.
    refs, _ = run({
        "user-guide/configuration.md": "# Configuration\n\n## Project information\n\n### site_name\n\nRequired.\n\n"
                                       "### edit_uri\n\nThe path.\n",
        "user-guide/writing.md": "# Writing\n\nSet the `edit_uri` option; the `docs_dir` option moves them.\n",
        "about/notes.md": "# Release notes\n\n| `docs_dir` | renamed |\n\n```\n# allow_domain_literals\n```\n",
        "user-guide/other.md": "# Other\n\nSee the `allow_domain_literals` option.\n",
    })
    assert targets(refs["user-guide/writing.md"], "anchor") == {("term:edit_uri", "user-guide/configuration.md"),
                                                                 ("term:docs_dir", "about/notes.md")}
    assert targets(refs["user-guide/other.md"], "anchor") == {("term:allow_domain_literals", None)}
