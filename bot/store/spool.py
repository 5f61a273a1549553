"""The spool: acknowledged events on local disk (JSON lines, fsync'd) until the database has them.

An event is acknowledged once its line is here; the writer (:mod:`bot.store.writer`) writes it to the database and
tells the spool (:meth:`Spool.done`), and a start after a crash writes what an earlier run left
(:func:`bot.store.writer.Writer._replay`, through :func:`from_json`).
"""

from __future__ import annotations

import errno
import fcntl
import json
import logging
import os
import queue
import threading
import uuid
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from bot.limits import SPOOL_BYTES
from bot.store import NotSpooled
from bot.store.schema import KINDS, events_table

log = logging.getLogger(__name__)

SPOOL_DIR = "spool"  # under BOT_DATA_DIR: acknowledged events not yet in the database
REFUSED_DIR = "refused"  # under the spool: rows the database refused for good, kept for an operator to look at
SPOOL_SEGMENT_BYTES = 1 << 20  # a spool file is replaced by a fresh one past this size (the old one goes once written)


def to_json(row: dict) -> str:
    """A row as one spool line (its time in ISO form)."""
    return json.dumps({**row, "at": row["at"].isoformat()}, ensure_ascii=False)


def from_json(line: bytes) -> dict:
    """A spool line as a row; ValueError (or KeyError, TypeError, UnicodeDecodeError) for a torn or foreign line."""
    row = json.loads(line.decode("utf-8"))
    if not isinstance(row, dict) or row.get("kind") not in KINDS or not row.get("event_id"):
        raise ValueError("not a spooled event")
    row["at"] = datetime.fromisoformat(row["at"])
    return {c.name: row.get(c.name) for c in events_table.columns if c.name != "id"}


def _write_all(fd: int, data: bytes) -> None:
    """Write every byte: ``os.write`` may take fewer (a nearly full disk), and a line counted as spooled must be
    whole. A write that takes nothing is a full disk."""
    view = memoryview(data)
    while view:
        taken = os.write(fd, view)
        if taken <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[taken:]


class Spool:
    """Acknowledged events not yet in the database: append-only JSON-lines files, fsync'd before the caller returns.

    Each process writes files of its own in ``<data dir>/spool``, held with ``flock`` while it runs, so a
    second replica on the same folder never replays a live process's file; the kernel releases the lock
    when a process dies (SIGKILL included), and the next start replays the file (:meth:`bot.store.writer.Writer._replay`).
    A file goes away once every row in it is written; past :data:`SPOOL_SEGMENT_BYTES` a fresh one is
    started, so the spool of a busy server stays small.

    Each row is handed to the writer's queue as it is added. When the queue is full (a long outage) the row
    waits here, and so does every row after it until the writer, its queue empty, has read them all back
    (:meth:`read_back`), oldest first: a row is never both queued and read back. Past ``cap_bytes``
    (:data:`bot.limits.SPOOL_BYTES`) a row is refused (:class:`NotSpooled`), as on a full disk.

        >>> import tempfile
        >>> from bot.store.schema import now
        >>> spool = Spool(Path(tempfile.mkdtemp()), cap_bytes=200)
        >>> spool.add({"at": now(), "kind": "vote", "event_id": "e1"})  # no queue given: it waits here
        False
        >>> [row["event_id"] for _, row in spool.read_back(10)], spool.waiting()
        (['e1'], 1)
        >>> try:
        ...     spool.add({"at": now(), "kind": "vote", "event_id": "e2", "question": "x" * 200})
        ... except NotSpooled as refused:
        ...     print(str(refused).split(", and ")[1].split(" (")[0])
        this event would take it past its cap of 200 bytes
        >>> spool.done([spool.current]), spool.waiting(), spool.close()
        (None, 0, 0)
    """

    def __init__(self, folder: Path, cap_bytes: int = SPOOL_BYTES) -> None:
        self.folder = folder
        self.cap_bytes = cap_bytes
        folder.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._pending: dict[Path, int] = {}  # rows of each file not yet in the database
        self._sizes: dict[Path, int] = {}  # bytes of each file
        self._fds: dict[Path, int] = {}  # oldest first
        self._waiting_from: tuple[Path, int] | None = None  # the first row not handed to the queue, if any
        self.current = self._new_file()
        self.failed = False  # a write to the spool failed (disk full): logged once
        self.full = False  # the cap was reached: logged once

    def _new_file(self) -> Path:
        path = self.folder / f"{os.getpid()}-{uuid.uuid4().hex[:12]}.jsonl"
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        self._fds[path], self._pending[path], self._sizes[path] = fd, 0, 0
        return path

    def add(self, row: dict, hand_over: queue.Queue | None = None) -> bool:
        """Append and fsync one row, then put ``(file, row)`` on ``hand_over`` (the writer's queue); False when
        it waits in the spool instead (the queue is full, or rows wait there already: they go first).

        Raises :class:`NotSpooled` when the row cannot be kept: the spool holds ``cap_bytes`` already, or the disk
        refuses the line (full, or a write that makes no progress; the line is cut off again, so nothing
        half-written glues onto the next one). The caller acknowledges nothing then.
        """
        data = (to_json(row) + "\n").encode("utf-8")
        with self._lock:
            if self._sizes[self.current] > SPOOL_SEGMENT_BYTES:
                old, self.current = self.current, self._new_file()
                self._forget_if_done(old)
            held = sum(self._sizes.values())
            if held + len(data) > self.cap_bytes:
                if not self.full:
                    log.warning(
                        "store: the spool %s holds %d bytes waiting for the database (SPOOL_BYTES): events are "
                        "refused (503) until the database takes them",
                        self.folder,
                        held,
                    )
                    self.full = True
                raise NotSpooled(
                    f"the event could not be kept: the spool {self.folder} holds {held} bytes waiting for the "
                    f"database, and this event would take it past its cap of {self.cap_bytes} bytes "
                    "(SPOOL_BYTES in bot/limits.py); bring the database back"
                )
            fd, start = self._fds[self.current], self._sizes[self.current]
            try:
                _write_all(fd, data)
                os.fsync(fd)
            except OSError as exc:
                if not self.failed:
                    log.warning(
                        "store: cannot write the spool %s (%s): events are refused (503) until it can; "
                        "free space in BOT_DATA_DIR",
                        self.current,
                        exc.strerror or exc,
                    )
                    self.failed = True
                try:  # a half-written line must not glue onto the next one
                    os.ftruncate(fd, start)
                except OSError:
                    pass
                raise NotSpooled(
                    f"the event could not be kept: the spool {self.current} refused the write "
                    f"({exc.strerror or exc}); free space in BOT_DATA_DIR"
                ) from None
            self.failed = self.full = False
            self._sizes[self.current] += len(data)
            self._pending[self.current] += 1
            if self._waiting_from is None and hand_over is not None:
                try:
                    hand_over.put_nowait((self.current, row))
                    return True
                except queue.Full:
                    pass
            if self._waiting_from is None:
                self._waiting_from = (self.current, start)
            return False

    @property
    def backlog(self) -> bool:
        """Rows wait here that were not handed to the queue."""
        return self._waiting_from is not None

    def read_back(self, limit: int) -> list[tuple[Path, dict]]:
        """Up to ``limit`` of the rows that were not handed to the queue, oldest first, each with its file (pass
        it to :meth:`done` once written); handed over now, so never read back twice."""
        rows: list[tuple[Path, dict]] = []
        unreadable: list[Path] = []
        with self._lock:
            while self._waiting_from is not None and len(rows) < limit:
                path, offset = self._waiting_from
                size = self._sizes[path]
                try:
                    with open(path, "rb") as handle:
                        handle.seek(offset)
                        while offset < size and len(rows) < limit:
                            line = handle.readline()
                            offset += len(line)
                            try:
                                rows.append((path, from_json(line)))
                            except (ValueError, KeyError, TypeError, UnicodeDecodeError):
                                unreadable.append(path)
                except OSError as exc:  # gone or unreadable: what it holds stays for the next start's replay
                    log.error("store: cannot read back the spool %s (%s); left for the next start", path, exc)
                    offset = size
                if offset < size:
                    self._waiting_from = (path, offset)
                else:  # this file is handed over: the rows after it are in the files started after it
                    files = list(self._fds)
                    later = files[files.index(path) + 1 :]
                    self._waiting_from = (later[0], 0) if later else None
        if unreadable:  # never expected: this process wrote each line whole under the lock
            log.error("store: %d line(s) of the spool could not be read back; dropped", len(unreadable))
            self.done(unreadable)
        return rows

    def done(self, paths: Iterable[Path | None]) -> None:
        """These rows are in the database (or given up): a file with nothing left goes away."""
        with self._lock:
            for path in paths:
                if path is not None and path in self._pending:
                    self._pending[path] -= 1
            for path in [p for p, n in self._pending.items() if n <= 0]:
                if path == self.current:
                    if self._sizes[path]:
                        os.ftruncate(self._fds[path], 0)  # O_APPEND: the next row starts the file again
                        self._sizes[path] = 0
                else:
                    self._forget_if_done(path)

    def _forget_if_done(self, path: Path) -> None:
        if self._pending.get(path, 0) <= 0:
            path.unlink(missing_ok=True)
            os.close(self._fds.pop(path))
            self._pending.pop(path, None)
            self._sizes.pop(path, None)

    def waiting(self) -> int:
        """Rows not yet in the database: queued, being written, or waiting here."""
        with self._lock:
            return sum(self._pending.values())

    def close(self) -> int:
        """Release the files (left on disk when rows wait: the next start writes them); returns rows left."""
        with self._lock:
            left = sum(self._pending.values())
            for path, fd in list(self._fds.items()):
                if self._pending.get(path, 0) <= 0:
                    path.unlink(missing_ok=True)
                os.close(fd)
            self._fds.clear()
            self._pending.clear()
            self._sizes.clear()
            self._waiting_from = None  # what waited is on disk: the next start writes it
            return left
