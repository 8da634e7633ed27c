"""ragplugins verifier plugin (skeleton: not a working feature yet)."""

__version__ = "0.1.0"
