"""How ragplugins writes an embedded index so that no crash loses or mixes it.

Three rules, as embedded databases keep them:

- one writer at a time: an OS lock on ``persist_dir/write.lock`` (released by the OS when the
  process dies, so a killed writer never leaves it held);
- every change to the rows of a batch is one LanceDB commit (new rows, replaced rows and removed
  rows together), so a reader sees each document's old chunks or its new ones, never both or neither;
- what is derived from the rows afterwards (the full-text index, the plugins' after-index state,
  the manifest) is announced first in ``persist_dir/journal.json``: a journal left behind by a
  killed writer is found by the next process that opens the index, which brings the derived data
  in line with the rows and removes it.

Files (manifest, journal) are replaced atomically: written to a temporary file, fsynced, renamed.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llama_index.core.schema import BaseNode, TransformComponent

from ragplugins.errors import IndexBusyError, StoreError

LOCK_FILE = "write.lock"
JOURNAL = "journal.json"
# Read by crash_point(); the crash-injection tests set it to kill the writer at one phase.
CRASH_ENV = "RAGPLUGINS_CRASH_AT"
CRASH_EXIT_CODE = 86


def crash_point(phase: str) -> None:
    """End the process on the spot (no cleanup, like kill -9) when ``$RAGPLUGINS_CRASH_AT`` names ``phase``."""
    if os.environ.get(CRASH_ENV) == phase:
        os._exit(CRASH_EXIT_CODE)


class CrashPoint(TransformComponent):
    """crash_point(phase) between two steps of the ingestion pipeline."""

    phase: str

    @classmethod
    def class_name(cls) -> str:
        return "ragplugins.CrashPoint"

    def __call__(self, nodes: Sequence[BaseNode], **kwargs: Any) -> Sequence[BaseNode]:
        crash_point(self.phase)
        return nodes


def atomic_write_text(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one step: a crash leaves the old file or the new one."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    try:  # the rename itself survives a power cut only once the directory is synced
        dir_fd = os.open(path.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


class WriterLock:
    """The one-writer lock of an embedded index; waits up to ``timeout`` seconds for another writer."""

    def __init__(self, persist_dir: Path, timeout: float):
        from filelock import FileLock

        self.persist_dir = Path(persist_dir)
        self.timeout = timeout
        self._lock = FileLock(str(self.persist_dir / LOCK_FILE))

    def __enter__(self) -> WriterLock:
        from filelock import Timeout

        try:
            self.persist_dir.mkdir(parents=True, exist_ok=True)
            self._lock.acquire(timeout=self.timeout)
        except Timeout:  # before OSError: filelock's Timeout is a TimeoutError
            raise IndexBusyError(
                f"another ragplugins process is writing the index in '{self.persist_dir}' and did not finish "
                f"within {self.timeout:g} s; try again when it is done") from None
        except OSError as exc:
            raise StoreError(f"cannot write the index in '{self.persist_dir}' ({exc.strerror or exc}); point "
                             "persist_dir at a writable directory") from None
        return self

    def __exit__(self, *exc: Any) -> None:
        self._lock.release()

    def is_free(self) -> bool:
        """True when no process writes now (checked by taking the lock for an instant)."""
        from filelock import Timeout

        if not self.persist_dir.is_dir():
            return True
        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            return False
        self._lock.release()
        return True


class Journal:
    """``persist_dir/journal.json``: the write in progress (or left unfinished by a crash)."""

    def __init__(self, persist_dir: Path):
        self.path = Path(persist_dir) / JOURNAL

    def begin(self, op: str, written: dict[str, str | None], deleted: Sequence[str],
              manifest: dict | None = None) -> None:
        """Announce a write: the documents it writes (id -> content hash) and removes, and the manifest keys
        it sets once the rows are written."""
        atomic_write_text(self.path, json.dumps({"op": op, "written": dict(sorted(written.items())),
                                                 "deleted": sorted(deleted), "manifest": manifest or {}}, indent=2))

    def pending(self) -> dict | None:
        """The unfinished write, or None. An unreadable journal (cut short) still counts: its write
        is completed from the rows as they are."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        try:
            entry = json.loads(text)
            if isinstance(entry, dict):
                return {"op": str(entry.get("op", "?")), "written": dict(entry.get("written") or {}),
                        "deleted": list(entry.get("deleted") or []), "manifest": dict(entry.get("manifest") or {})}
        except ValueError:
            pass
        return {"op": "?", "written": {}, "deleted": [], "manifest": {}}

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)
