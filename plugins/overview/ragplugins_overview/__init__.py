"""ragplugins overview plugin: one overview per document steers the first stage towards the right documents."""

__version__ = "0.1.0"

from ragplugins_overview.build import rebuild, update_overviews  # noqa: E402
from ragplugins_overview.config import OverviewConfig  # noqa: E402
from ragplugins_overview.extractive import ExtractiveOverviewWriter  # noqa: E402
from ragplugins_overview.llm_writer import LLMOverviewWriter  # noqa: E402
from ragplugins_overview.retriever import OverviewRetriever  # noqa: E402

__all__ = ["ExtractiveOverviewWriter", "LLMOverviewWriter", "OverviewConfig", "OverviewRetriever",
           "rebuild", "update_overviews"]
