from __future__ import annotations

from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle

from ragplugins import api


class LengthFilterPostprocessor(BaseNodePostprocessor):
    """Drops chunks shorter than ``min_chars`` (keeping at least ``keep_at_least``)."""

    min_chars: int = 40
    keep_at_least: int = 1

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins_length_filter.LengthFilterPostprocessor"

    def _postprocess_nodes(self, nodes: list[NodeWithScore],
                           query_bundle: QueryBundle | None = None) -> list[NodeWithScore]:
        kept = [n for n in nodes if len(n.node.get_content().strip()) >= self.min_chars]
        if len(kept) < self.keep_at_least:
            kept = nodes[: self.keep_at_least]
        dropped = [n.node.node_id for n in nodes if n not in kept]
        api.record_decision("length_filter", "filter", before=nodes, after=kept,
                            reason=f"dropped chunks shorter than {self.min_chars} characters",
                            numbers={"kept": len(kept)}, dropped=dropped)
        return kept
