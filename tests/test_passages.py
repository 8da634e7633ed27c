"""Neighbouring hits of one document come back as one passage (ragplugins.passages, core merge_adjacent)."""

from __future__ import annotations

import json

from click.testing import CliRunner
from llama_index.core.schema import NodeRelationship, NodeWithScore, RelatedNodeInfo, TextNode

import ragplugins
from ragplugins.cli import get_cli
from ragplugins.nodes import annotation
from ragplugins.passages import merge_adjacent, passage_members
from ragplugins.stores.base import CHUNK_INDEX_KEY

DOCUMENT = ("The harbour opens at dawn. " * 3 + "Lighthouse keepers trim the lamp wick every evening. "
            "The lamp burns colza oil in winter. Lighthouse keepers log the oil they burn. " + "Fish are sold. " * 3)


def _chunk(doc: str, index: int, start: int, end: int, with_index: bool = True) -> TextNode:
    node = TextNode(id_=f"{doc}-{index}", text=DOCUMENT[start:end], start_char_idx=start, end_char_idx=end,
                    metadata={CHUNK_INDEX_KEY: index} if with_index else {})
    node.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=doc)
    return node


def _ranked(*nodes: TextNode) -> list[NodeWithScore]:
    return [NodeWithScore(node=n, score=1.0 - i / 10) for i, n in enumerate(nodes)]


def test_neighbours_share_a_place_with_their_overlap_read_once_and_lower_hits_fill_the_freed_places():
    a, b, c = _chunk("d", 0, 0, 90), _chunk("d", 1, 70, 160), _chunk("d", 2, 140, len(DOCUMENT))
    other = _chunk("e", 1, 0, 40)
    far = _chunk("d", 5, 0, 20)  # same document, not next to any placed chunk
    out = merge_adjacent(_ranked(b, other, a, far, c), k=3, max_chunks=2)
    assert [passage_members(n) for n in out] == [["d-0", "d-1"], ["e-1"], ["d-5"]]
    assert out[0].node.get_content() == DOCUMENT[0:160]  # in document order, the 20 shared characters once
    assert out[0].node.node_id == "d-1" and out[0].score == 1.0  # the chunk that earned the place
    assert (out[0].node.start_char_idx, out[0].node.end_char_idx) == (0, 160)
    assert b.get_content() == DOCUMENT[70:160]  # the stored chunk is not changed
    # A full place takes no more: the third neighbour starts its own (no place after the k-th).
    out = merge_adjacent(_ranked(a, b, c, other), k=2, max_chunks=2)
    assert [passage_members(n) for n in out] == [["d-0", "d-1"], ["d-2"]]
    assert [passage_members(n) for n in merge_adjacent(_ranked(a, b, c), k=2, max_chunks=3)] == [["d-0", "d-1", "d-2"]]
    # 1: every chunk its own place, as before.
    assert [n.node.node_id for n in merge_adjacent(_ranked(b, other, a), k=3, max_chunks=1)] == ["d-1", "e-1", "d-0"]


def test_the_first_places_are_the_same_whatever_k():
    # Postfix's user: at top_k = 3 the answer sat in the neighbour of a top-3 chunk, ranked below the third place,
    # which joined that place at top_k = 20 but not at 3 (master.5.html#2+3 against #3).
    a, b = _chunk("d", 2, 0, 90), _chunk("d", 3, 70, 160)
    others = [_chunk(doc, 0, 0, 40) for doc in ("e", "f", "g", "h")]
    ranked = _ranked(b, *others, a)
    few, many = merge_adjacent(ranked, k=2, max_chunks=2), merge_adjacent(ranked, k=5, max_chunks=2)
    assert [passage_members(n) for n in few] == [["d-2", "d-3"], ["e-0"]]
    assert [n.node.get_content() for n in few] == [n.node.get_content() for n in many[:2]]


def test_a_chunk_whose_text_a_place_already_holds_joins_it_by_its_id_alone():
    # gnuplot's manual installs its contents page twice (index.html, figures.html): the copy took a place.
    page, copy, other = _chunk("index", 0, 0, 90), _chunk("figures", 0, 0, 90), _chunk("e", 1, 0, 40)
    lower_neighbour_copy = _chunk("figures", 1, 70, 160)
    neighbour = _chunk("index", 1, 70, 160)
    out = merge_adjacent(_ranked(page, copy, other, neighbour, lower_neighbour_copy), k=3, max_chunks=2)
    assert [passage_members(n) for n in out] == [["index-0", "index-1"], ["e-1"]]
    assert annotation(out[0])["copies"] == ["figures-0", "figures-1"]  # a copy of either member
    assert "copies" not in annotation(out[1])
    assert out[0].node.get_content() == DOCUMENT[0:160]  # the copies add no text
    # Whitespace alone does not make a different text; one different character does.
    spaced = TextNode(id_="spaced", text="  ".join(DOCUMENT[0:90].split()))
    differs = TextNode(id_="differs", text=DOCUMENT[0:89] + "!")
    out = merge_adjacent(_ranked(page, spaced, differs), k=3, max_chunks=2)
    assert [n.node.node_id for n in out] == ["index-0", "differs"] and annotation(out[0])["copies"] == ["spaced"]
    # 1: every chunk its own place, copies too.
    assert len(merge_adjacent(_ranked(page, copy), k=2, max_chunks=1)) == 2


def test_an_index_ragplugins_did_not_write_is_joined_by_the_splitter_s_links():
    a, b = _chunk("d", 0, 0, 90, with_index=False), _chunk("d", 1, 70, 160, with_index=False)
    unlinked = merge_adjacent(_ranked(a, b), k=2, max_chunks=2)
    assert [passage_members(n) for n in unlinked] == [["d-0"], ["d-1"]]
    a.relationships[NodeRelationship.NEXT] = RelatedNodeInfo(node_id="d-1")
    b.relationships[NodeRelationship.PREVIOUS] = RelatedNodeInfo(node_id="d-0")
    assert [passage_members(n) for n in merge_adjacent(_ranked(b, a), k=2, max_chunks=2)] == [["d-0", "d-1"]]


def test_search_returns_a_passage_of_neighbouring_chunks_that_both_rank(tmp_path, bundled_embed_model):
    docs = tmp_path / "docs"
    docs.mkdir()
    paragraphs = [f"Paragraph {i} is about the {topic} and nothing else at all, written out at some length so that "
                  f"it fills most of a small chunk on its own: the {topic}, again the {topic}."
                  for i, topic in enumerate(["weather", "market prices", "lighthouse lamp oil", "lighthouse lamp wick",
                                             "bridge tolls", "school hours", "river fishing", "town hall"])]
    (docs / "town.txt").write_text("\n\n".join(paragraphs))
    (docs / "other.txt").write_text("The bakery opens at six. " * 20)

    def search(merge: int):
        rp = ragplugins.load({"ragplugins": {"persist_dir": str(tmp_path / "idx"), "chunk_size": 48,
                                             "chunk_overlap": 8, "top_k": 4, "merge_adjacent": merge}},
                             embed_model=bundled_embed_model)
        if merge == 1:
            rp.index_paths([docs])
        return rp.search("lighthouse lamp oil and lamp wick").final

    chunks, passages = search(1), search(2)
    assert len(chunks) == len(passages) == 4  # the freed place is filled
    joined = next(n for n in passages if len(passage_members(n)) == 2)
    # The trace names a passage by every chunk it joins, not by the one whose id it keeps.
    rp = ragplugins.load({"ragplugins": {"persist_dir": str(tmp_path / "idx"), "chunk_size": 48, "chunk_overlap": 8,
                                         "top_k": 4, "merge_adjacent": 2}}, embed_model=bundled_embed_model)
    trace = rp.search("lighthouse lamp oil and lamp wick").trace
    position = {n.node_id: n.metadata[CHUNK_INDEX_KEY] for n in rp.context().all_nodes()}
    first, second = (position[i] for i in passage_members(joined))
    assert second == first + 1 and trace.chunks[joined.node.node_id] == f"town.txt#{first}+{second}"
    # `ragplugins query` names it so too (its text starts with the first chunk's, not the lead's).
    cfg = tmp_path / "ragplugins.toml"
    cfg.write_text(f'[ragplugins]\npersist_dir = "{tmp_path / "idx"}"\nchunk_size = 48\nchunk_overlap = 8\n'
                   'top_k = 4\nmerge_adjacent = 2\n')
    shown = CliRunner().invoke(get_cli(), ["-c", str(cfg), "query", "lighthouse lamp oil and lamp wick", "--json"],
                               catch_exceptions=False).stdout
    assert f"town.txt#{first}+{second}" in [source["chunk"] for source in json.loads(shown)["sources"]]
    members = {n.node.node_id: n.node.get_content() for n in chunks}
    assert "lighthouse lamp oil" in joined.node.get_content() and "lighthouse lamp wick" in joined.node.get_content()
    assert len(joined.node.get_content()) > max(len(t) for t in members.values())
    # One stretch of the document (the whitespace between two chunks that do not overlap is not kept by them).
    assert " ".join(joined.node.get_content().split()) in " ".join((docs / "town.txt").read_text().split())


def test_a_search_for_fewer_places_returns_the_first_places_of_a_longer_one(tmp_path, bundled_embed_model):
    docs = tmp_path / "docs"
    docs.mkdir()
    topics = ["weather", "market prices", "lighthouse lamp oil", "harbour tolls", "lighthouse lamp wick",
              "school hours"]
    (docs / "town.txt").write_text("\n\n".join(
        f"Paragraph {i} is about the {topic} and nothing else at all, written out at some length so that it fills "
        f"most of a small chunk on its own: the {topic}, again the {topic}." for i, topic in enumerate(topics)))
    (docs / "coast.txt").write_text("The lighthouse keepers of the coast trade lamp oil and lamp wicks. " * 4)
    rp = ragplugins.load({"ragplugins": {"persist_dir": str(tmp_path / "idx"), "chunk_size": 48, "chunk_overlap": 8}},
                         embed_model=bundled_embed_model)
    rp.index_paths([docs])
    query = "lighthouse lamp oil"
    longer = [n.node.get_content() for n in rp.search(query, top_k=6).final]
    for k in (1, 2, 3):
        assert [n.node.get_content() for n in rp.search(query, top_k=k).final] == longer[:k]
