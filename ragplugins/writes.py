"""How ragplugins writes an embedded index so that no crash loses or mixes it.

Three rules, as embedded databases keep them:

- one writer at a time: an OS lock on ``persist_dir/write.lock`` (released by the OS when the
  process dies, so a killed writer never leaves it held); on object storage, where no OS lock reaches
  another machine, a leased lock object created by a conditional PUT (:class:`LeaseLock`);
- every change to the rows of a batch is one LanceDB commit (new rows, replaced rows and removed
  rows together), so a reader sees each document's old chunks or its new ones, never both or neither;
- what is derived from the rows afterwards (the store's derived data, the plugins' after-index state,
  the manifest) is announced first in ``persist_dir/journal.json``: a journal left behind by a
  killed writer is found by the next process that opens the index, which brings the derived data
  in line with the rows and removes it.

Files (manifest, journal) are replaced atomically: written to a temporary file, fsynced, renamed (an
object-store PUT replaces an object in one step by itself). They live in the index's home
(:mod:`ragplugins.home`).
"""

from __future__ import annotations

import json
import os
import socket
import tempfile
import threading
import time
import uuid
from collections.abc import Sequence
from datetime import datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llama_index.core.schema import BaseNode, TransformComponent

from ragplugins.errors import IndexBusyError, StoreError

if TYPE_CHECKING:
    from ragplugins.home import IndexHome, ObjectStoreHome

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

    def confirm(self) -> None:
        """Nothing to check: the OS keeps the lock for as long as this process lives."""

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
    """``journal.json`` in the index's home: the write in progress (or left unfinished by a crash)."""

    def __init__(self, home: IndexHome | Path):
        from ragplugins.home import IndexHome, LocalHome

        self.home = home if isinstance(home, IndexHome) else LocalHome(home)

    def begin(self, op: str, written: dict[str, str | None], deleted: Sequence[str],
              manifest: dict | None = None) -> None:
        """Announce a write: the documents it writes (id -> content hash) and removes, and the manifest keys
        it sets once the rows are written."""
        self.home.write_text(JOURNAL, json.dumps({"op": op, "written": dict(sorted(written.items())),
                                                  "deleted": sorted(deleted), "manifest": manifest or {}}, indent=2))

    def pending(self) -> dict | None:
        """The unfinished write, or None. An unreadable journal (cut short) still counts: its write
        is completed from the rows as they are."""
        text = self.home.read_text(JOURNAL)
        if text is None:
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
        self.home.delete(JOURNAL)


class LeaseLock:
    """The one-writer lock of an index on object storage, where an OS lock reaches no other machine.

    ``write.lock`` is created with a conditional PUT (``If-None-Match: *``): of two writers exactly one
    creates it, the other waits and retries. The lock is a lease: its holder renews it (a PUT conditional
    on its own ETag) every third of ``lease`` seconds while it writes; a lock not renewed for ``lease``
    seconds, by the object store's own clock (its Last-Modified against the Date of the response), was
    left by a stopped writer and is taken over with a PUT conditional on that lock's ETag, so of two
    writers taking over only one succeeds. A holder that could not renew in time (it stalled past its
    lease and another writer took over) finds out in :meth:`confirm`, before it writes any row."""

    def __init__(self, home: ObjectStoreHome, timeout: float, lease: float = 60.0):
        self.home, self.timeout, self.lease = home, timeout, lease
        self._guard = threading.RLock()  # the threads of this process, one at a time
        self._depth = 0
        self._etag: str | None = None
        self._lost = False
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None
        self._body = json.dumps({"owner": uuid.uuid4().hex, "host": socket.gethostname(), "pid": os.getpid(),
                                 "lease_seconds": lease}).encode()

    def _busy(self, holder: dict | None) -> IndexBusyError:
        who = f" (held by pid {holder.get('pid')} on {holder.get('host')})" if holder else ""
        return IndexBusyError(f"another process is writing the index at {self.home.uri}{who} and did not finish "
                              f"within {self.timeout:g} s; retry when it finishes (a stopped writer's lock lapses "
                              f"{self.lease:g} s after its last renewal)")

    def __enter__(self) -> LeaseLock:
        if not self._guard.acquire(timeout=max(self.timeout, 0)):
            raise self._busy(None)
        try:
            if self._depth == 0:
                self._acquire()
        except BaseException:
            self._guard.release()
            raise
        self._depth += 1
        return self

    def __exit__(self, *exc: Any) -> None:
        self._depth -= 1
        try:
            if self._depth == 0:
                self._release()
        finally:
            self._guard.release()

    # -- the lock object ------------------------------------------------------
    def _put(self, **condition: str) -> bool:
        """PUT the lock under ``condition``; False when the condition fails (another writer won)."""
        from botocore.exceptions import ClientError

        try:
            self._etag = self.home.call("put_object", LOCK_FILE, Body=self._body, **condition)["ETag"]
            return True
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("PreconditionFailed", "412",
                                                             "ConditionalRequestConflict", "409"):
                return False
            raise self.home.explain(exc, LOCK_FILE) from None

    def _holder(self) -> dict | None:
        """The lock as stored: its ETag, whether its lease lapsed, who holds it; None when there is none."""
        from botocore.exceptions import ClientError

        try:
            got = self.home.call("get_object", LOCK_FILE)
        except ClientError as exc:
            if self.home.is_missing(exc):
                return None
            raise self.home.explain(exc, LOCK_FILE) from None
        try:
            holder = json.loads(got["Body"].read())
            lease = float(holder.get("lease_seconds", self.lease))
        except (ValueError, TypeError, AttributeError):
            holder, lease = {}, self.lease
        date = got.get("ResponseMetadata", {}).get("HTTPHeaders", {}).get("date")
        now = parsedate_to_datetime(date) if date else datetime.now(got["LastModified"].tzinfo)
        holder["etag"] = got["ETag"]
        holder["lapsed"] = (now - got["LastModified"]).total_seconds() > lease
        return holder

    def _acquire(self) -> None:
        deadline = time.monotonic() + self.timeout
        self._lost = False
        while True:
            if self._put(IfNoneMatch="*"):
                break
            holder = self._holder()
            if holder is not None and holder["lapsed"] and self._put(IfMatch=holder["etag"]):
                break
            if time.monotonic() >= deadline:
                raise self._busy(holder)
            time.sleep(min(0.5, max(deadline - time.monotonic(), 0.01)))
        self._stop.clear()
        self._renewer = threading.Thread(target=self._renew, name="ragplugins-lease", daemon=True)
        self._renewer.start()

    def _renew(self) -> None:
        while not self._stop.wait(self.lease / 3):
            try:
                if not self._put(IfMatch=self._etag or ""):
                    self._lost = True
                    return
            except StoreError:
                continue  # a passing network failure: the next renewal may get through within the lease

    def _release(self) -> None:
        from botocore.exceptions import ClientError

        self._stop.set()
        if self._renewer is not None:
            self._renewer.join()
            self._renewer = None
        if self._lost or self._etag is None:
            return
        try:
            self.home.call("delete_object", LOCK_FILE, IfMatch=self._etag)
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code")
            if code in ("NotImplemented", "InvalidArgument"):  # a store without conditional deletes
                holder = self._holder()
                if holder is not None and holder["etag"] == self._etag:
                    self.home.delete(LOCK_FILE)
        finally:
            self._etag = None

    def confirm(self) -> None:
        """Raise when this process no longer holds the lock (it stalled past its lease and another writer
        took over): called before rows are written, so nothing of this write lands."""
        if self._lost:
            raise IndexBusyError(f"this process lost the writer lock of the index at {self.home.uri}: it did not "
                                 f"renew it within {self.lease:g} s and another writer took over; nothing was "
                                 "written, retry")

    def is_free(self) -> bool:
        """True when no other process writes now (this one may hold it)."""
        if self._depth > 0:
            return True
        holder = self._holder()
        return holder is None or holder["lapsed"]
