"""A Sphinx role naming an object points at the entry that declares it: the hop brings that chunk of the
pointed-at page, not the page's best dense match (issue 14, debian_dev2: python_d05 brought the io page's
overview for a question about TextIOWrapper)."""

from __future__ import annotations

import pytest
from llama_index.core.schema import NodeWithScore, QueryBundle

import ragplugins_crossref.plugin as plugin
from ragplugins.api import ChunkRow, query_scope
from ragplugins.testing import make_rag
from ragplugins_crossref.hop import CrossrefHop, declaring_chunk, object_declarations


def test_declarations_are_read_per_chunk_and_a_role_finds_its_entry():
    rows = [ChunkRow("c1", "ssl.rst.txt", ".. module:: ssl\n\nOverview of TLS.\n", {}),
            ChunkRow("c2", "ssl.rst.txt", ".. class:: SSLContext(protocol)\n\n   A context.\n\n"
                                          "   .. attribute:: check_hostname\n\n      Whether to match.\n", {}),
            ChunkRow("c3", "ssl.rst.txt", ".. attribute:: SSLContext.verify_mode\n\n   Mode.\n", {}),
            ChunkRow("c4", "notes.txt", "No directive here.\n", {})]
    declared = object_declarations(rows)
    assert set(declared) == {"ssl.rst.txt"}
    # Overlapping chunks: a directive ending one chunk starts the next, which holds the entry's body.
    overlap = [ChunkRow("end", "io.rst.txt", "Text streams.\n\n.. class:: TextIOWrapper(buffer)\n", {}),
               ChunkRow("body", "io.rst.txt", ".. class:: TextIOWrapper(buffer)\n\n   A buffered text stream.\n", {})]
    assert object_declarations(overlap)["io.rst.txt"]["textiowrapper"] == "body"
    ssl = declared["ssl.rst.txt"]
    assert ssl["sslcontext"] == "c2" and ssl["sslcontext.check_hostname"] == "c2" and ssl["check_hostname"] == "c2"
    assert declaring_chunk(":attr:`ssl.SSLContext.check_hostname`", ssl, "ssl") == "c2"
    assert declaring_chunk(":attr:`~ssl.SSLContext.verify_mode`", ssl, "ssl") == "c3"
    assert declaring_chunk(":class:`context <ssl.SSLContext>`", ssl, "ssl") == "c2"
    # A module's page is the whole document; an object the page does not declare has no entry.
    assert declaring_chunk(":mod:`ssl`", ssl, "ssl") is None
    assert declaring_chunk(":func:`ssl.wrap_socket`", ssl, "ssl") is None
    assert declaring_chunk("linkgit:git-config[1]", ssl, "ssl") is None


_PAD = "This paragraph talks about streams in general, buffering, encodings and files on disk. " * 6
IO_PAGE = (":mod:`io` --- Core tools for working with streams\n==================================================\n\n"
           ".. module:: io\n\nOverview\n--------\n\nThe io module provides the main facilities for dealing with "
           "a text wrapper, in-memory buffers and files. " + _PAD + "\n\n"
           ".. class:: BytesIO(initial_bytes=b'')\n\n   A binary stream using an in-memory bytes buffer. "
           + _PAD + "\n\n"
           ".. class:: TextIOWrapper(buffer, encoding=None)\n\n   A buffered text stream providing higher-level "
           "access to a buffered binary stream. " + _PAD + "\n")
TEMPFILE_PAGE = (":mod:`tempfile` --- Temporary files\n===================================\n\n.. module:: tempfile\n\n"
                 ".. function:: SpooledTemporaryFile(max_size=0, mode='w+b')\n\n   The returned object's _file "
                 "attribute is either an :class:`io.BytesIO` or :class:`io.TextIOWrapper` object, depending on "
                 "the mode.\n")
QUERY = "A spooled temporary file keeps its data in a text wrapper object in text mode. What is that wrapper?"


def indexed(root, files, corpus_writer, embed_model):
    """(context, document id -> its chunks) of ``files`` indexed with crossref in small chunks."""
    rp = make_rag([plugin], {"crossref": {}, "chunk_size": 128, "chunk_overlap": 0},
                  embed_model=embed_model, persist_dir=root / "idx")
    rp.index_paths([corpus_writer(root / "corpus", files)])
    ctx = rp.context()
    nodes = {}
    for node in ctx.all_nodes():
        nodes.setdefault(node.ref_doc_id, []).append(node)
    return ctx, nodes


@pytest.fixture(scope="module")
def pages(corpus_writer, tmp_path_factory, bundled_embed_model):
    files = {"io.rst.txt": IO_PAGE, "tempfile.rst.txt": TEMPFILE_PAGE}
    ctx, nodes = indexed(tmp_path_factory.mktemp("declarations"), files, corpus_writer, bundled_embed_model)
    assert len(nodes["io.rst.txt"]) >= 3 and len(nodes["tempfile.rst.txt"]) == 1
    return ctx, nodes


def test_the_hop_brings_the_entries_the_pointer_s_roles_name(pages):
    ctx, nodes = pages
    entry = {name: next(n.node_id for n in nodes["io.rst.txt"] if f".. class:: {name}" in n.get_content())
             for name in ("BytesIO", "TextIOWrapper")}
    candidates = [NodeWithScore(node=nodes["tempfile.rst.txt"][0], score=1.0)]
    with query_scope(QUERY, filters=None) as tr:
        out = CrossrefHop(ctx=ctx, gate=0.0).postprocess_nodes(list(candidates), query_bundle=QueryBundle(QUERY))
    decision = tr.get("crossref", "hop")
    pointer = decision["considered"][0]
    assert pointer["target"] == "io.rst.txt" and pointer["refs"] == [":class:`io.BytesIO`", ":class:`io.TextIOWrapper`"]
    # Both roles of the sentence name an entry of the io page: those two chunks, the one the question
    # asks about (the text wrapper) first, though the sentence names it second.
    assert pointer["declared_chunks"] == [entry["TextIOWrapper"], entry["BytesIO"]]
    # A list shorter than the window takes the lead chunk alone.
    assert [n.node.node_id for n in out[1:]] == [entry["TextIOWrapper"]]


_ENTRY_PAD = "It applies to every message the server accepts, whatever its origin or destination. " * 5
_ECHO = ("For relaying, reject mail for unknown relay users: the lookup tables list the relay users, and mail "
         "for users the tables do not list is rejected when relaying. ")
# As Postfix writes postconf.5.html: a definition list of parameters, each term bold.
POSTCONF_PAGE = ("<html><body><h2>Postfix Configuration Parameters</h2>\n<p>The main.cf configuration file "
                 "specifies the parameters\nthat control the operation of the Postfix mail system. " + _ECHO * 4
                 + "</p>\n<dl>\n"
                 + "".join(f"<dt><b>relay_note_{i} (default: no)</b></dt>\n<dd><p>" + _ECHO * 3 + "</p></dd>\n"
                           for i in range(4))
                 + "<dt><b>mydestination (default: localhost)</b></dt>\n<dd><p>The list of domains delivered\nlocally. "
                 + _ENTRY_PAD + "</p></dd>\n<dt><b><a name=\"relay_recipient_maps\">relay_recipient_maps</a> "
                 "(default: empty)</b></dt>\n<dd><p>Optional lookup tables with all valid\naddresses in the domains "
                 "that match relay_domains. " + _ENTRY_PAD + "</p></dd>\n</dl></body></html>\n")
RELAY_PAGE = ("<html><body><h2>Relaying</h2>\n<p>To reject mail for unknown relay users, list them with\n"
              "<a href=\"postconf.5.html#relay_recipient_maps\">relay_recipient_maps</a>.</p></body></html>\n")
RELAY_QUERY = "For relaying, how do I reject mail for unknown relay users? What must the tables list?"


@pytest.fixture(scope="module")
def reference_page(corpus_writer, tmp_path_factory, bundled_embed_model):
    files = {"postconf.5.html": POSTCONF_PAGE, "relay.html": RELAY_PAGE}
    ctx, nodes = indexed(tmp_path_factory.mktemp("entries"), files, corpus_writer, bundled_embed_model)
    entry = next(n.node_id for n in nodes["postconf.5.html"] if "**relay_recipient_maps" in n.get_content())
    return ctx, nodes, entry


def test_a_link_into_an_entry_of_a_reference_page_brings_that_entry(reference_page):
    ctx, nodes, entry = reference_page
    candidates = [NodeWithScore(node=nodes["relay.html"][0], score=1.0)]
    with query_scope(RELAY_QUERY, filters=None):
        best = ctx.search_within_documents(RELAY_QUERY, ["postconf.5.html"], 4)
    assert best and entry not in [n.node.node_id for n in best]   # the page's best matches are elsewhere
    with query_scope(RELAY_QUERY, filters=None) as tr:
        hop = CrossrefHop(ctx=ctx, gate=0.0, chunks_per_hop=1)
        out = hop.postprocess_nodes(list(candidates), query_bundle=QueryBundle(RELAY_QUERY))
    pointer = tr.get("crossref", "hop")["considered"][0]
    assert pointer["target"] == "postconf.5.html" and pointer["section_chunk"] == entry
    # The entry, though the page's opening chunk matches the question better (it is not among the page's
    # best dense matches the hop would otherwise take).
    assert [n.node.node_id for n in out[1:]] == [entry]


def test_an_entry_a_host_filter_hides_is_not_brought(reference_page):
    from llama_index.core.vector_stores import FilterOperator, MetadataFilter, MetadataFilters

    from ragplugins.api import CHUNK_INDEX_KEY

    ctx, nodes, entry = reference_page
    position = next(n.metadata[CHUNK_INDEX_KEY] for n in nodes["postconf.5.html"] if n.node_id == entry)
    hide = MetadataFilters(filters=[MetadataFilter(key=CHUNK_INDEX_KEY, value=position, operator=FilterOperator.NE)])
    candidates = [NodeWithScore(node=nodes["relay.html"][0], score=1.0)]
    with query_scope(RELAY_QUERY, filters=hide):
        out = CrossrefHop(ctx=ctx, gate=0.0, chunks_per_hop=1).postprocess_nodes(
            list(candidates), query_bundle=QueryBundle(RELAY_QUERY))
    assert entry not in [n.node.node_id for n in out]


TWO_ENTRIES_PAGE = ("<html><body><h2>Relaying</h2>\n<p>To reject mail for unknown relay users, see\n"
                    "<a href=\"postconf.5.html#mydestination\">mydestination</a> and\n"
                    "<a href=\"postconf.5.html#relay_recipient_maps\">relay_recipient_maps</a>.</p></body></html>\n")


@pytest.fixture(scope="module")
def two_entries(corpus_writer, tmp_path_factory, bundled_embed_model):
    files = {"postconf.5.html": POSTCONF_PAGE, "relay.html": TWO_ENTRIES_PAGE}
    ctx, nodes = indexed(tmp_path_factory.mktemp("two_entries"), files, corpus_writer, bundled_embed_model)
    chunk_of = {name: next(n.node_id for n in nodes["postconf.5.html"] if f"**{name}" in n.get_content())
                for name in ("mydestination", "relay_recipient_maps")}
    return ctx, nodes, chunk_of


def test_one_sentence_linking_two_entries_of_a_page_brings_the_one_the_question_asks_about(two_entries):
    # CMake's "[IMPORTED](...#imported-targets) or [ALIAS](...#alias-targets)" for "What is an ALIAS target?":
    # both links share their sentence, so it matches the question equally for each; the link whose words the
    # question uses names the entry to bring, though it comes second.
    ctx, nodes, chunk_of = two_entries
    assert chunk_of["mydestination"] != chunk_of["relay_recipient_maps"]
    query = "For relaying, what must the relay recipient tables list?"
    candidates = [NodeWithScore(node=nodes["relay.html"][0], score=1.0)]
    with query_scope(query, filters=None) as tr:
        hop = CrossrefHop(ctx=ctx, gate=0.0, chunks_per_hop=1)
        out = hop.postprocess_nodes(list(candidates), query_bundle=QueryBundle(query))
    pointer = tr.get("crossref", "hop")["considered"][0]
    assert pointer["section_chunk"] == chunk_of["relay_recipient_maps"]
    assert [n.node.node_id for n in out[1:]] == [chunk_of["relay_recipient_maps"]]
