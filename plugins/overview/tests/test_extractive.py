from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode

from ragplugins.api import CHUNK_INDEX_KEY
from ragplugins_overview.documents import DocumentText, TermStatistics, documents_from_nodes
from ragplugins_overview.extractive import ExtractiveOverviewWriter

MANUAL = """# Espresso Machine Manual

The Atlas boiler must be descaled every 60 days. Use citric acid only.

## Descaling

```bash
# not a heading: a shell comment
descale --boiler
```

Run the descaling cycle with the portafilter removed. The boiler pressure drops to zero.

## Gasket replacement

Replace the gasket GK-4471 when it leaks. The gasket sits under the group head.
"""
LEASE = """# Office Lease

The tenant pays rent monthly. The landlord maintains the building.

## Rent

Rent is 4,000 EUR per month, due on the first day of the month.
"""
CONTRACT_PDF = """ACQUISITION AGREEMENT
This Acquisition Agreement is entered into as of January 15, 2025. It is binding on both parties.
ARTICLE I - DEFINITIONS
1.1 "Purchase Price" means $45,000,000 USD.
ARTICLE II - PURCHASE AND SALE
The seller agrees to sell all shares.
"""


def _docs():
    return [DocumentText("manual.md", MANUAL, {"file_name": "manual.md"}),
            DocumentText("lease.md", LEASE, {"file_name": "lease.md"}),
            DocumentText("01_acquisition_agreement.pdf", CONTRACT_PDF,
                         {"file_name": "01_acquisition_agreement.pdf"})]


def test_markdown_overview_has_title_headings_lead_and_distinctive_terms():
    docs = _docs()
    writer = ExtractiveOverviewWriter()
    text = writer.write(docs[0], writer.statistics(d.text for d in docs))
    assert text.startswith("Espresso Machine Manual.")
    assert "Sections: Descaling; Gasket replacement." in text
    assert "The Atlas boiler must be descaled every 60 days. Use citric acid only." in text
    assert "shell comment" not in text  # code blocks are neither headings nor lead text
    terms = text.split("Key terms: ")[1].rstrip(".").split(", ")
    assert "gk-4471" in terms
    assert "boiler" not in terms and "gasket" not in terms  # already in the lead or the headings
    assert len(text) <= writer.max_chars


def test_distinctive_terms_are_relative_to_the_corpus():
    doc = DocumentText("a.md", "apple apple apple zebra zebra", {})
    common = [doc, DocumentText("b.md", "apple pie", {}), DocumentText("c.md", "apple tart", {})]
    rare = [doc, DocumentText("b.md", "zebra crossing", {}), DocumentText("c.md", "zebra stripes", {})]
    assert TermStatistics.of(d.text for d in common).distinctive(doc.text, 1) == ["zebra"]
    assert TermStatistics.of(d.text for d in rare).distinctive(doc.text, 1) == ["apple"]


def test_pdf_style_capital_headings_and_a_file_label():
    docs = _docs()
    writer = ExtractiveOverviewWriter()
    text = writer.write(docs[2], writer.statistics(d.text for d in docs))
    assert text.startswith("ACQUISITION AGREEMENT.")
    assert "ARTICLE I - DEFINITIONS; ARTICLE II - PURCHASE AND SALE" in text
    assert docs[2].file_label == "acquisition agreement"


def test_titles_a_rule_underlines_or_encloses_are_headings_and_listing_delimiters_are_not():
    # lighttpd's pages (reStructuredText in .txt): 24 of 33 titled "==================" before.
    scgi = ("==================\nthe SCGI Interface\n==================\n\n-------------------\nModule: mod_scgi\n"
            "-------------------\n\n:Author: Jan Kneschke\n\nDescription\n===========\n\nThe SCGI module hands "
            "requests to a backend. ::\n\n  scgi.server = ( )\n")
    # git's manual pages (AsciiDoc): titled "NAME" before; a listing's "----" delimiters around code are no rule.
    add = ("git-add(1)\n==========\n\nNAME\n----\ngit-add - Add file contents to the index\n\nEXAMPLES\n--------\n"
           "Run it so:\n----\n}\n----\n\n----\n$ git add Documentation/\n----\n")
    docs = [DocumentText("scgi.txt", scgi, {}), DocumentText("git-add.txt", add, {})]
    writer = ExtractiveOverviewWriter()
    stats = writer.statistics(d.text for d in docs)
    first, second = (writer.write(d, stats) for d in docs)
    assert first.startswith("the SCGI Interface.") and "Sections: Module: mod_scgi; Description." in first, first
    assert second.startswith("git-add(1).") and "Sections: NAME; EXAMPLES." in second, second


def test_a_title_underlined_with_tildes_or_backticks_opens_no_code_block():
    # git's and Python's sources underline titles with "~~~~": each one was read as a code fence that hid the
    # headings and lead text below it until the next (docutils' "restructuredtext" kept 1 of its sections).
    rst = ("Tables\n======\n\nTables are drawn as grids.\n\nGrid Tables\n~~~~~~~~~~~\n\nGrid tables are "
           "complete.\n\nSimple Tables\n~~~~~~~~~~~~~\n\nSimple tables are compact.\n\nQuoted Blocks\n"
           "`````````````\n\nA fenced block:\n\n```\n# a comment\n```\n\nStill prose here.\n")
    doc = DocumentText("tables.txt", rst, {})
    writer = ExtractiveOverviewWriter()
    text = writer.write(doc, writer.statistics([rst]))
    # ... while a real fence still holds code, not a heading ("a comment").
    assert text.startswith("Tables.") and "Sections: Grid Tables; Simple Tables; Quoted Blocks." in text, text


def test_overviews_are_deterministic():
    docs = _docs()
    writer = ExtractiveOverviewWriter()
    first = [writer.write(d, writer.statistics(x.text for x in docs)) for d in docs]
    second = [writer.write(d, writer.statistics(x.text for x in reversed(docs))) for d in docs]
    assert first == second


def _chunk(doc_id, position, text):
    return TextNode(id_=f"{doc_id}-{position}", text=text, metadata={CHUNK_INDEX_KEY: position},
                    relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=doc_id)})


def test_documents_are_rebuilt_from_chunks_in_order_without_the_overlap():
    nodes = [_chunk("d", 1, "second part overlaps here and then goes on."),
             _chunk("d", 0, "The first part of the text, second part overlaps here"),
             _chunk("e", 0, "Another document.")]
    docs = documents_from_nodes(nodes)
    assert docs["d"].text == "The first part of the text, second part overlaps here\n and then goes on."
    assert docs["e"].text == "Another document."


def test_emphasis_goes_and_the_underscores_of_a_name_stay():
    page = DocumentText("dstring.md", "# The *Tcl_DString* functions\n\nCall `Tcl_DStringInit` **first**; build with "
                        "_TCL_MEM_DEBUG_ to trace file_path leaks.\n", {"file_name": "dstring.md"})
    writer = ExtractiveOverviewWriter()
    text = writer.write(page, writer.statistics([page.text]))
    assert text.startswith("The Tcl_DString functions."), text
    assert "Call Tcl_DStringInit first; build with TCL_MEM_DEBUG to trace file_path leaks." in text, text
