"""ragplugins crossref: references between documents, resolved at index time, followed at query time."""

__version__ = "0.1.0"

from ragplugins_crossref.families import BUILTIN_FAMILIES, ReferenceFamily, family  # noqa: E402
from ragplugins_crossref.transform import CrossrefExtractor  # noqa: E402

__all__ = ["BUILTIN_FAMILIES", "CrossrefExtractor", "ReferenceFamily", "family"]
