"""Neighbouring hits of one document returned as one passage.

When two chunks that follow each other in a document both rank among the first stage's candidates, the lower one
adds its text to the higher one's place instead of taking a place of its own (also when it ranks below the k-th
place, so the first k places are the same whatever k), and the k places hold more distinct stretches of text. A
passage holds at most ``max_chunks`` chunks: two 512-token chunks make about LlamaIndex's default chunk size
(1024 tokens), so no passage is longer than the chunks of the pipeline a host would otherwise run. This is
what LlamaIndex's ``AutoMergingRetriever`` does with a hierarchy of chunk sizes, done with a document's own
chunk order, so one index serves it.

A passage is a copy of the chunk that earned its place (its id, metadata and vector), its text the members'
text in document order with their overlap read once; the annotation ``passage`` lists the members' ids in
that order. A chunk whose text a place already holds (a page installed twice) joins that place too, by its id
alone (the annotation ``copies``). A filter never widens: only chunks the first stage returned are joined.
"""

from __future__ import annotations

from llama_index.core.schema import BaseNode, NodeRelationship, NodeWithScore, TextNode

from ragplugins.nodes import annotate, annotation
from ragplugins.stores.base import CHUNK_INDEX_KEY


def merge_adjacent(ranked: list[NodeWithScore], k: int, max_chunks: int) -> list[NodeWithScore]:
    """The first ``k`` places of ``ranked`` (best first): a chunk that follows or precedes one already placed,
    in the same document, joins that place while it holds fewer than ``max_chunks`` chunks. The walk goes on
    past the k-th place, so a neighbour ranked below it still joins: the first k places are the same whatever k
    (an app asking for 3 gets the first 3 of what asking for 20 gives, not places that lack their neighbour)."""
    if max_chunks < 2:
        return ranked[:k]
    places: list[list[NodeWithScore]] = []
    # A page installed twice (a manual's contents page as index.html and figures.html) gives chunks of the same
    # text: the lower one joins the place that holds it, as a neighbour does, and adds its id, not its text.
    place_of_text: dict[str, int] = {}
    copies: dict[int, list[str]] = {}
    for nws in ranked:
        text = " ".join(nws.node.get_content().split())
        if text in place_of_text:
            copies.setdefault(place_of_text[text], []).append(nws.node.node_id)
            continue
        home = next((i for i, members in enumerate(places)
                     if len(members) < max_chunks and any(_adjacent(m.node, nws.node) for m in members)), None)
        if home is not None:
            places[home].append(nws)
        elif len(places) < k:
            home = len(places)
            places.append([nws])
        if home is not None:
            place_of_text[text] = home
    out = [_passage(members) if len(members) > 1 else members[0] for members in places]
    return [annotate(nws, copies=copies[i]) if i in copies else nws for i, nws in enumerate(out)]


def _adjacent(a: BaseNode, b: BaseNode) -> bool:
    if a.ref_doc_id is None or a.ref_doc_id != b.ref_doc_id:
        return False
    ia, ib = a.metadata.get(CHUNK_INDEX_KEY), b.metadata.get(CHUNK_INDEX_KEY)
    if isinstance(ia, int) and isinstance(ib, int):
        return abs(ia - ib) == 1
    # An index ragplugins did not write: the splitter's own links between neighbours.
    return any(getattr(a.relationships.get(rel), "node_id", None) == b.node_id
               for rel in (NodeRelationship.PREVIOUS, NodeRelationship.NEXT))


def _span(node: BaseNode) -> tuple[int | None, int | None]:
    """Where a chunk's text starts and ends in its document's text (a TextNode's), if known."""
    return getattr(node, "start_char_idx", None), getattr(node, "end_char_idx", None)


def _order(node: BaseNode) -> int:
    index = node.metadata.get(CHUNK_INDEX_KEY)
    return index if isinstance(index, int) else (_span(node)[0] or 0)


def _passage(members: list[NodeWithScore]) -> NodeWithScore:
    in_order = sorted((m.node for m in members), key=_order)
    text, end = in_order[0].get_content(), _span(in_order[0])[1]
    for node in in_order[1:]:
        part, (start, _) = node.get_content(), _span(node)
        if end is None or start is None:
            text += "\n\n" + part
        elif start < end:
            text += part[end - start:]  # a chunk's text is its document's [start:end]: the overlap read once
        else:
            text += " " + part  # the whitespace the splitter left out between them
        end = _span(node)[1]
    # The chunk that earned the place, and the positions of all it joins (a trace names "page.html#162+163":
    # the answer may be the other one).
    positions = [n.metadata.get(CHUNK_INDEX_KEY) for n in in_order]
    joined = annotate(members[0], passage=[n.node_id for n in in_order],
                      **({"passage_positions": positions} if all(isinstance(i, int) for i in positions) else {}))
    joined.node.set_content(text)
    if isinstance(joined.node, TextNode):
        joined.node.start_char_idx, joined.node.end_char_idx = _span(in_order[0])[0], _span(in_order[-1])[1]
    return joined


def passage_members(nws: NodeWithScore) -> list[str]:
    """The ids of the chunks a passage joins, in document order; a single chunk's own id."""
    return list(annotation(nws).get("passage") or [nws.node.node_id])
