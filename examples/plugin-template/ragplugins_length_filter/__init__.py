"""Template ragplugins plugin: drop too-short chunks from the final list."""

from ragplugins_length_filter.postprocessor import LengthFilterPostprocessor

__all__ = ["LengthFilterPostprocessor"]
__version__ = "0.1.0"
