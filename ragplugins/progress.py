"""Indexing progress from LlamaIndex's instrumentation: files and chunks embedded, chunks/s, time left.

The core announces each file as it reads it (a ``RagPluginsEvent`` 'core/read'), a batch's chunks once they are
split ('core/split', with each document's chunk count, in order), and the window texts it embeds after them
('core/windows': the text past what the embedder reads, ragplugins.windows); the embedder's
``EmbeddingEndEvent`` says how many texts each call embedded. Nothing in the indexing path knows about the display."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from llama_index.core.instrumentation import get_dispatcher
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events.embedding import EmbeddingEndEvent

from ragplugins.trace import RagPluginsEvent


class IndexProgress(BaseEventHandler):
    """Counts what was embedded of the announced batch; ``on_change(self)`` after each step."""

    on_change: Callable[[IndexProgress], None] | None = None
    per_document: list[int] = []
    read: int = 0      # files read, of
    to_read: int = 0   # the files listed (before any chunk is split)
    total: int = 0     # chunks announced
    windows: int = 0   # window texts announced (embedded after the chunks)
    done: int = 0      # texts embedded: chunks, then windows
    reused: int = 0    # of those, read back from a stopped run's (ragplugins.resume), not embedded now
    after: int = 0     # texts embedded once the chunks and windows were: an index-time plugin's own (overviews)
    started: float | None = None
    reading_started: float | None = None   # time.monotonic() at the first file read

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins.IndexProgress"

    def handle(self, event: Any, **kwargs: Any) -> None:
        if isinstance(event, RagPluginsEvent) and (event.plugin, event.action) == ("core", "read"):
            self.read, self.to_read = int(event.data["files"]), int(event.data["of"])
            self.reading_started = self.reading_started or time.monotonic()
        elif isinstance(event, RagPluginsEvent) and (event.plugin, event.action) == ("core", "split"):
            self.per_document = self.per_document + list(event.data["per_document"])
            self.total += int(event.data["chunks"])
            self.started = self.started or time.perf_counter()
        elif isinstance(event, RagPluginsEvent) and (event.plugin, event.action) == ("core", "windows"):
            self.windows += int(event.data["texts"])
        elif isinstance(event, RagPluginsEvent) and (event.plugin, event.action) == ("core", "reused"):
            self.reused += int(event.data["texts"])
        elif isinstance(event, EmbeddingEndEvent) and self.total:
            room = max(0, self.total + self.windows - self.done)
            self.done += min(room, len(event.chunks))
            self.after += len(event.chunks) - min(room, len(event.chunks))
        elif isinstance(event, RagPluginsEvent) and (event.plugin, event.action) == ("core", "embedded"):
            # Chunks embedded elsewhere (Ray workers: ragplugins.executors), announced as they arrive.
            self.done = min(self.total, self.done + int(event.data["chunks"]))
        else:
            return
        if self.on_change is not None:
            self.on_change(self)

    @property
    def chunks_done(self) -> int:
        return min(self.total, self.done)

    @property
    def files_done(self) -> int:
        seen, files = 0, 0
        for count in self.per_document:
            seen += count
            if seen > self.chunks_done:
                break
            files += 1
        return files

    def due(self, last_said: float | None, now: float, every: float) -> bool:
        """Whether a display that says a line now and then (a log, not a terminal) says one ``now`` (time.monotonic),
        having said the last at ``last_said``: the first once the chunks are announced, then every ``every``
        seconds; while the files are read, only once reading has taken ``every`` seconds (a short run's log keeps
        its one line of chunks, a Sphinx site read for minutes is said to be read)."""
        if last_said is not None and now - last_said < every:
            return False
        return bool(self.total) or (self.reading_started is not None and now - self.reading_started >= every)

    def line(self) -> str:
        if not self.total:
            if self.to_read and self.read < self.to_read:
                return f"reading files {self.read}/{self.to_read}"
            return f"splitting the {self.to_read} files read..." if self.to_read else "reading and splitting files..."
        if self.after and self.done >= self.total + self.windows:
            # Their count is the plugin's to know: "0.0 texts/s, about 0 s left" stood for minutes of overviews.
            return f"{self._counts()}; index-time plugins' own texts: {self.after} embedded so far"
        rate = self._rate()
        left = f"about {(self.total + self.windows - self.done) / rate:.0f} s left" if rate else "estimating time left"
        return f"{self._counts()}, {rate:.1f} texts/s, {left}"

    def summary(self) -> str:
        """What was embedded, said once the build is done."""
        plugins = f"; index-time plugins' own texts: {self.after}" if self.after else ""
        return f"{self._counts()}, {self._rate():.1f} texts/s{plugins}"

    def _counts(self) -> str:
        windows = f", windows {self.done - self.chunks_done}/{self.windows}" if self.windows else ""
        return f"files {self.files_done}/{len(self.per_document)}, chunks {self.chunks_done}/{self.total}{windows}"

    def _rate(self) -> float:
        elapsed = time.perf_counter() - (self.started or time.perf_counter())
        embedded = self.done - self.reused
        return embedded / elapsed if elapsed > 0 and embedded > 0 else 0.0

    def __enter__(self) -> IndexProgress:
        get_dispatcher().add_event_handler(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        handlers = get_dispatcher().event_handlers
        if self in handlers:
            handlers.remove(self)
