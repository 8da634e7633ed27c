"""Says in the query trace that nothing was verified yet, so a search without an answer says so.

Retrieval without an LLM (``ragplugins query`` with no ``llm``, ``rp.search``) runs the
postprocessors but no query engine, so the verifier never sees an answer. This last
postprocessor records ``status: "skipped"`` with the reason; when a query engine does
produce an answer, the verifier's verdict replaces the record.
"""

from __future__ import annotations

from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle

from ragplugins import api

REASON = ("sources only: no LLM wrote an answer, so there was nothing to verify "
          "(configure [ragplugins] llm, or pass llm= to ragplugins.load, to get verified answers)")


class NotYetVerified(BaseNodePostprocessor):
    """Records that the retrieved nodes have not been checked against an answer (yet)."""

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins_verifier.NotYetVerified"

    def _postprocess_nodes(self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
                           ) -> list[NodeWithScore]:
        api.record_decision("verifier", "verdict", before=nodes, after=nodes, reason=REASON, status="skipped",
                            grounded=None)
        return nodes
