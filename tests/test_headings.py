"""The headings a window of a chunk sits under (ragplugins.headings) and the windows that carry them."""

from __future__ import annotations

from llama_index.core.schema import MetadataMode, TextNode

from ragplugins.headings import chunk_headings, heading_path, headings
from ragplugins.windows import embedder_reader, window_texts

MARKDOWN = """# dgram

Intro text.

## Class: dgram.Socket

```js
# not a heading: a comment in a code block
const s = dgram.createSocket('udp4');
```

### socket.bind(port)

Binds the socket.

## Class: dgram.Other
"""

RST = """:mod:`secrets` --- Generate secure random numbers
=================================================

Random numbers
--------------

.. function:: token_hex(nbytes=None)

   Return a random text string, in hexadecimal.

Other functions
---------------
"""

MANPAGE = """NAME
       ip - Linux IPv4 protocol implementation

DESCRIPTION
       This is an implementation of the IP protocol.

   Address format
       An IP socket address is defined as follows:

           struct sockaddr_in {
               sa_family_t    sin_family;
           };
"""


def _path(text: str, marker: str) -> str:
    return heading_path(headings(text), text.index(marker))


def test_markdown_headings_nest_by_their_marks_and_code_fences_hold_none():
    assert _path(MARKDOWN, "Binds the socket") == "dgram > Class: dgram.Socket > socket.bind(port)"
    assert _path(MARKDOWN, "const s") == "dgram > Class: dgram.Socket"
    assert "not a heading" not in " ".join(title for _, _, title in headings(MARKDOWN))
    # A heading closes the ones at its level and deeper.
    assert heading_path(headings(MARKDOWN), len(MARKDOWN)) == "dgram > Class: dgram.Other"


def test_underlined_titles_rank_by_their_underline_and_directives_sit_below_them():
    assert _path(RST, "Return a random") == (":mod:secrets --- Generate secure random numbers > Random numbers > "
                                              ".. function:: token_hex(nbytes=None)")
    assert heading_path(headings(RST), len(RST)) == (":mod:secrets --- Generate secure random numbers > "
                                                     "Other functions")



def test_a_title_underlined_with_tildes_is_no_code_fence():
    # reStructuredText's and AsciiDoc's "~~~~" underline was read as a fence: the titles after it went missing.
    text = ("Guide\n=====\n\nFirst part\n~~~~~~~~~~\n\nSome text.\n\nSecond part\n~~~~~~~~~~~\n\nThe end of it.\n")
    assert [title for _, _, title in headings(text)] == ["Guide", "First part", "Second part"]
    assert _path(text, "The end of it") == "Guide > Second part"


def test_asciidoctor_titles_and_pod_headings_nest_by_their_level():
    adoc = "= Guide\n\n== Install\n\n=== From source\n\nBuild it.\n\n== Use\n\nRun it.\n"
    assert _path(adoc, "Build it") == "Guide > Install > From source"
    assert _path(adoc, "Run it") == "Guide > Use"
    pod = "=head1 DESCRIPTION\n\nText.\n\n=head2 open FILEHANDLE\n\nOpens.\n\n=head1 SEE ALSO\n\nperlop.\n"
    assert _path(pod, "Opens") == "DESCRIPTION > open FILEHANDLE"
    assert _path(pod, "perlop") == "SEE ALSO"


def test_plain_text_outline_lines_count_and_lines_of_code_do_not():
    assert _path(MANPAGE, "This is an") == "DESCRIPTION"
    assert _path(MANPAGE, "sa_family_t") == "DESCRIPTION > Address format"


def test_a_chunk_knows_the_headings_above_its_start_in_its_document():
    cut = MARKDOWN.index("### socket.bind")
    first = TextNode(text=MARKDOWN[:cut], id_="a", start_char_idx=0)
    second = TextNode(text=MARKDOWN[cut - 2:], id_="b", start_char_idx=cut - 2)
    other = TextNode(text="# Unrelated\n\nText.", id_="c", start_char_idx=0)
    for node, doc in ((first, "dgram.md"), (second, "dgram.md"), (other, "other.md")):
        node.relationships = {}
        node.metadata["doc"] = doc
    from llama_index.core.schema import NodeRelationship, RelatedNodeInfo

    for node, doc in ((first, "dgram.md"), (second, "dgram.md"), (other, "other.md")):
        node.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=doc)
    found = chunk_headings([second, other, first])   # any order: a document's chunks are put in order
    assert heading_path(found["b"], 0) == "dgram > Class: dgram.Socket"
    assert heading_path(found["b"], len(second.text)) == "dgram > Class: dgram.Other"
    assert heading_path(found["c"], len(other.text)) == "Unrelated"   # another document's headings stay there


def test_later_windows_carry_the_headings_where_they_start_and_still_cover_the_chunk(bundled_embed_model):
    tokenizer, limit = embedder_reader(bundled_embed_model)
    body = " ".join(f"Option {i} sets buffer {i} to a value the kernel may double." for i in range(60))
    text = f"# sockets\n\n## setRecvBufferSize(size)\n\n{body} The default is 100 kilobytes."
    node = TextNode(text=text, id_="n", start_char_idx=0, metadata={"file_path": "dgram.md"})
    from llama_index.core.schema import NodeRelationship, RelatedNodeInfo

    node.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id="dgram.md")
    plain = window_texts(tokenizer, limit, node)
    titled = window_texts(tokenizer, limit, node, chunk_headings([node])["n"])
    header = node.get_content(MetadataMode.EMBED)[: -len(text)]
    assert plain and all(t.startswith(header) for t in plain + titled)
    assert all(t.startswith(header + "sockets > setRecvBufferSize(size)\n\n") for t in titled)
    # The headings take room, so the windows step by less and there are at least as many; the last one
    # still reaches the chunk's end.
    assert len(titled) >= len(plain) and titled[-1].endswith("100 kilobytes.")


def test_window_headings_is_opt_in_and_changes_only_the_later_windows(bundled_embed_model):
    from llama_index.core.schema import NodeRelationship, RelatedNodeInfo

    from ragplugins.config import CoreSettings
    from ragplugins.stores.base import WINDOWS_KEY
    from ragplugins.windows import WindowedEmbedding, decode_windows

    body = " ".join(f"Option {i} sets buffer {i} to a value the kernel may double." for i in range(60))
    text = f"# sockets\n\n## setRecvBufferSize(size)\n\n{body}"

    def node() -> TextNode:
        n = TextNode(text=text, id_="n", start_char_idx=0, metadata={"file_path": "dgram.md"})
        n.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id="dgram.md")
        return n

    assert CoreSettings().window_headings is False
    plain = WindowedEmbedding(embed_model=bundled_embed_model, mean_vector=False, keep_windows=True)([node()])[0]
    titled = WindowedEmbedding(embed_model=bundled_embed_model, mean_vector=False, keep_windows=True,
                               headings=True)([node()])[0]
    a, b = decode_windows(plain.metadata[WINDOWS_KEY]), decode_windows(titled.metadata[WINDOWS_KEY])
    assert a is not None and b is not None and len(a) >= 2
    assert (a[0] == b[0]).all()                       # the chunk's own vector stays its first window's
    assert not (a[1] == b[1]).all()                   # its later windows read the headings too
