"""Where indexing runs: ``"serial"`` (this process, one LlamaIndex IngestionPipeline) or ``"ray"``
(reading, splitting, the parallel-safe plugin transformations and embedding on Ray workers:
:mod:`ragplugins.executors.ray`). Either way one process writes the store (lock, journal, store
adapter) and runs the corpus-wide steps once.

Which transformations may run in parallel is the plugins' declaration (``Contribution.scope``):
``"chunk"`` steps run in the workers on batches of whole documents; a ``"corpus"`` step, the default
for a plugin that says nothing, runs in the indexing process over everything the run indexes at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragplugins.errors import InputError

EXECUTORS = ("serial", "ray")


def check_executor(executor: str, workers: int | None) -> str:
    """``executor`` when it and ``workers`` make sense together, else a one-line InputError."""
    if executor not in EXECUTORS:
        raise InputError(f"executor '{executor}' is not one of: {', '.join(EXECUTORS)}")
    if workers is not None:
        if executor == "serial":
            raise InputError(f"workers = {workers} needs executor='ray' (the serial executor runs in this process)")
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise InputError(f"workers = {workers!r}: give a whole number of at least 1")
    return executor


def corpus_span(steps: Sequence[Any]) -> tuple[int, int]:
    """(first, end) of the pipeline's steps that must run over the whole run at once: from the first plugin
    transformation of scope 'corpus' to the last one (every step between them included, since each may need
    what the one before did to everything); (len, len) when every plugin transformation is per-chunk."""
    from ragplugins.guards import GuardedTransformation

    wide = [i for i, step in enumerate(steps) if isinstance(step, GuardedTransformation) and step.scope != "chunk"]
    return (wide[0], wide[-1] + 1) if wide else (len(steps), len(steps))
