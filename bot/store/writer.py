"""The writer: the thread that moves spooled events into the database, and what it does when the database
cannot take them (an outage: retry with back-off, fewer rows at a time; a row refused for good: set aside).

:class:`Writer` is the part of :class:`bot.store.database.Store` that writes; the store gives it ``engine``,
``settings``, ``spool`` and the counters in :meth:`Writer._start_writer`. An event is recorded in three steps:
:meth:`Writer.record` spools it (one fsync, the only wait) and puts it on a bounded queue; the thread
(:meth:`Writer._run`) writes batches of :data:`BATCH`; a start after a crash writes what an earlier run left in the
spool (:meth:`Writer._replay`). Rows carry an ``event_id``, so a row written just before a crash is written once.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import queue
import threading
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from bot.limits import SPOOL_BYTES
from bot.records import Event
from bot.store.schema import events_table, is_vote
from bot.store.spool import REFUSED_DIR, SPOOL_DIR, Spool, from_json, to_json

if TYPE_CHECKING:
    from bot.settings import StoreSettings


log = logging.getLogger(__name__)

BATCH = 500  # rows per write when all is well
# An outage, retried; any other error of a write is a row the database will never take.
TRANSIENT = (sa_exc.OperationalError, sa_exc.InterfaceError, sa_exc.DisconnectionError, sa_exc.TimeoutError)


def why(exc: BaseException | None) -> str:
    """The first line of a database error, for a log line."""
    return str(getattr(exc, "orig", None) or exc or "refused").strip().splitlines()[0][:200]


class Writer:
    """Recording and writing: the part of :class:`bot.store.database.Store` that needs the spool and the thread.

    It uses three methods of the store: ``describe()`` (for log lines), ``_row()`` (an event as a row, with the
    session hashed by the store's salt) and ``purge()`` (retention, run hourly by the thread when idle).
    """

    engine: sa.Engine
    settings: StoreSettings
    spool: Spool | None

    def _start_writer(self, *, queue_size: int, retry_seconds: float, max_retry_seconds: float) -> None:
        """The queue, the counters and the back-off; the spool and the thread come after :meth:`_replay`."""
        self._queue: queue.Queue[tuple[Path | None, dict]] = queue.Queue(maxsize=queue_size)
        self._retry = retry_seconds
        self._max_retry = max_retry_seconds
        self._stop = threading.Event()
        self._down = False  # logged once per outage
        self._spilling = False  # a full queue is logged once per outage
        self.spilled = 0  # rows that found the queue full and waited in the spool alone (read back, never lost)
        self._written = threading.Condition()  # notified after each write: flush() waits on it
        self.written = 0
        self.replayed = 0  # rows written at start-up from the spool of an earlier run
        self.refused = 0  # rows the database refused for good, set aside in <spool>/refused/
        self._last_purge = 0.0
        self.spool = None
        self._thread: threading.Thread | None = None

    def _open_spool(self, spool_bytes: int = SPOOL_BYTES) -> None:
        """Write what earlier runs left in ``<data dir>/spool``, open this run's spool file, start the thread."""
        folder = Path(self.settings.data_dir).expanduser() / SPOOL_DIR
        self._replay(folder)
        self.spool = Spool(folder, spool_bytes)
        self._thread = threading.Thread(target=self._run, name="bot-store-writer", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------ the spool of an earlier run

    def _replay(self, folder: Path) -> None:
        """Write the rows spooled by runs that ended before writing them (SIGKILL, or SIGTERM while the
        database was away); files of a live process (locked) are left to it."""
        if not folder.is_dir():
            return
        for path in sorted(folder.glob("*.jsonl")):
            try:
                fd = os.open(path, os.O_RDWR)
            except FileNotFoundError:  # its process finished with it meanwhile
                continue
            try:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # a running replica's spool
                rows, bad = [], 0
                with os.fdopen(os.dup(fd), "rb") as handle:
                    for line in handle:
                        if not line.strip():
                            continue
                        try:
                            rows.append(from_json(line))
                        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
                            bad += 1  # a line torn by a crash mid-write was never acknowledged
                try:
                    refused = []
                    for start in range(0, len(rows), BATCH):
                        refused += self._write_or_refuse(rows[start : start + BATCH])
                except TRANSIENT as exc:
                    log.warning(
                        "store: could not write the %d event(s) left in %s (%s); kept there for the next start",
                        len(rows),
                        path,
                        str(getattr(exc, "orig", exc)).strip()[:200],
                    )
                    continue
                path.unlink()
                self.replayed += len(rows) - len(refused)
                log.warning(
                    "store: wrote %d event(s) left in the spool %s by an earlier run%s",
                    len(rows) - len(refused),
                    path,
                    f"; dropped {bad} unreadable line(s)" if bad else "",
                )
            finally:
                os.close(fd)

    # ------------------------------------------------------------ recording (the edges call this)

    def record(self, event: Event, *, session: str = "", latency_ms: float | None = None) -> None:
        """Spool (one fsync) and queue one event; never waits for the database.

        When the queue is full (a long outage) the event waits in the spool alone and the writer reads it back
        once the queue is empty. Raises :class:`NotSpooled` when the event cannot be kept (disk full, or the
        spool at :data:`bot.limits.SPOOL_BYTES`): the edge refuses the request (503) rather than acknowledge
        what would be lost. A malformed event is logged and skipped."""
        if self.spool is None:
            log.error("store: a read-only store (Store.reader) cannot record events; use Store.open")
            return
        try:
            row = self._row(event, session, latency_ms)
        except Exception:  # a malformed event must not cost the user the answer
            log.exception("store: could not record an event of kind %r", getattr(event, "kind", "?"))
            return
        if self.spool.add(row, self._queue):
            return
        self.spilled += 1
        if not self._spilling:
            self._spilling = True
            log.warning(
                "store: %d events wait for the database %s and the queue is full: new events wait in the spool %s "
                "(up to %d MiB, then they are refused with 503) and are written when it is back",
                self._queue.maxsize,
                self.describe(),
                self.spool.folder,
                self.spool.cap_bytes >> 20,
            )

    # ------------------------------------------------------------ the writer thread

    def _run(self) -> None:
        batch: list[tuple[Path | None, dict]] = []
        limit = BATCH  # halved after a failed write (down to one row), doubled again after each success
        delay = self._retry
        while True:
            if not batch:
                batch = self._next_batch()
                if not batch:
                    if self._stop.is_set():
                        return
                    self._maybe_purge()
                    continue
            chunk = batch[:limit]
            try:
                self._write([row for _, row in chunk])
            except TRANSIENT as exc:
                if not self._down:
                    log.warning(
                        "store: the database %s is unavailable (%s); answers go on, %d event(s) wait in the "
                        "spool and are retried",
                        self.describe(),
                        str(getattr(exc, "orig", exc)).strip()[:200],
                        len(batch) + self._queue.qsize(),
                    )
                    self._down = True
                # All or nothing would keep a nearly full disk stuck until a whole batch fits: try fewer rows
                # at once (soon, while splitting), and back off only once single rows fail.
                if limit > 1:
                    limit = max(1, len(chunk) // 2)
                    wait = self._retry
                else:
                    wait, delay = delay, min(delay * 2, self._max_retry)
                if self._stop.wait(wait):
                    return  # closing while down: the rows stay in the spool for the next start (close() logs it)
                continue
            except Exception as exc:  # a row the database refuses: write the others one by one, set it aside
                try:
                    self._write_or_refuse([row for _, row in chunk], refused_batch=exc)
                except TRANSIENT:
                    continue  # gone again half-way: the whole chunk is retried (rows written meanwhile are skipped)
            if self.spool is not None:
                self.spool.done(where for where, _ in chunk)
            if self._down:
                log.warning(
                    "store: the database %s is back; %d event(s) still wait in the spool and are written now",
                    self.describe(),
                    self.spool.waiting() if self.spool is not None else len(batch) - len(chunk),
                )
                self._down = self._spilling = False
            with self._written:
                self._written.notify_all()
            self.written += len(chunk)
            batch = batch[len(chunk) :]
            limit = min(BATCH, limit * 2)
            delay = self._retry

    def _next_batch(self) -> list[tuple[Path | None, dict]]:
        """Up to :data:`BATCH` rows: the queue's first, then those that waited in the spool beyond it (recorded
        later, while the queue was full), read back only once the queue is empty; waits up to 0.5 s for a row."""
        if self._queue.empty() and self.spool is not None and self.spool.backlog:
            if self._stop.is_set():
                return []  # closing: they stay in the spool for the next start
            return list(self.spool.read_back(BATCH))
        try:
            batch = [self._queue.get(timeout=0.5)]
        except queue.Empty:
            return []
        while len(batch) < BATCH:
            try:
                batch.append(self._queue.get_nowait())
            except queue.Empty:
                break
        return batch

    def _write_or_refuse(self, rows: list[dict], *, refused_batch: Exception | None = None) -> list[dict]:
        """Write ``rows``; when the database refuses the batch (not an outage: a row it will never take, such as
        a NUL in a PostgreSQL text), write them one by one and set the refused ones aside in
        ``<spool>/refused/`` (logged with their event ids), so one poisoned row never holds back the others.
        Returns the refused rows; outages (:data:`TRANSIENT`) are raised for the caller to retry."""
        if refused_batch is None:
            try:
                self._write(rows)
                return []
            except TRANSIENT:
                raise
            except Exception as exc:
                refused_batch = exc
        log.warning("store: a batch of %d event(s) was refused (%s); writing row by row", len(rows), why(refused_batch))
        refused: list[tuple[dict, Exception]] = []
        for row in rows:
            try:
                self._write([row])
            except TRANSIENT:
                raise
            except Exception as exc:
                refused.append((row, exc))
        if refused:
            self._set_aside(refused)
        return [row for row, _ in refused]

    def _set_aside(self, refused: list[tuple[dict, Exception]]) -> None:
        self.refused += len(refused)
        folder = Path(self.settings.data_dir).expanduser() / SPOOL_DIR / REFUSED_DIR
        path = folder / f"{os.getpid()}-{uuid.uuid4().hex[:12]}.jsonl"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            with open(path, "a", encoding="utf-8") as handle:
                for row, exc in refused:
                    handle.write(json.dumps({"refused": why(exc), "row": json.loads(to_json(row))}) + "\n")
        except OSError as exc:
            path = Path(f"(not kept: {exc.strerror or exc})")
        for row, exc in refused:
            log.error(
                "store: the database refused the %s event %s (%s); set aside in %s",
                row.get("kind"),
                row.get("event_id"),
                why(exc),
                path,
            )

    def _write(self, rows: list[dict]) -> None:
        with self.engine.begin() as conn:
            # A row may have been written already: a crash between the commit and the spool's clean-up, or a
            # commit whose acknowledgement the network lost. Its event_id says so.
            ids = [r["event_id"] for r in rows if r.get("event_id")]
            if ids:
                seen = set(
                    conn.execute(sa.select(events_table.c.event_id).where(events_table.c.event_id.in_(ids))).scalars()
                )
                rows = [r for r in rows if r.get("event_id") not in seen]
            plain = [r for r in rows if r["kind"] != "vote"]
            if plain:
                conn.execute(events_table.insert(), plain)
            for row in (r for r in rows if r["kind"] == "vote"):
                self._upsert_vote(conn, row)

    @staticmethod
    def _upsert_vote(conn: sa.Connection, row: dict) -> None:
        """One row per answer, the last vote (by time) kept: a changed vote replaces an earlier one, never a later
        one, so a replay that meets an older vote again (its row replaced, so its event_id no longer found) does
        not revert the change; also when two replicas race."""
        values = {k: v for k, v in row.items() if k != "answer_id"}
        for _ in range(2):
            done = conn.execute(
                events_table.update()
                .where(events_table.c.answer_id == row["answer_id"], is_vote, events_table.c.at <= row["at"])
                .values(values)
            )
            if done.rowcount:
                return
            try:
                with conn.begin_nested():
                    conn.execute(events_table.insert(), [row])
                return
            except sa_exc.IntegrityError:  # a later vote is there, or another replica inserted one meanwhile
                continue

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every event recorded so far is in the database, queued or waiting in the spool (tests,
        shutdown); False on timeout."""
        if self.spool is None:
            return True
        deadline = time.monotonic() + timeout
        with self._written:
            while self.spool.waiting():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._written.wait(left)
        return True

    def _stop_writer(self, timeout: float) -> None:
        """Write what is queued (up to ``timeout``), stop the thread, release the spool (what is left stays for the
        next start)."""
        if self._thread is not None:
            self.flush(timeout)
            self._stop.set()
            self._thread.join(timeout)
        if self.spool is not None:
            left = self.spool.close()
            if left:
                log.warning(
                    "store: the database %s is unavailable; %d event(s) stay in the spool %s and are written "
                    "at the next start",
                    self.describe(),
                    left,
                    self.spool.folder,
                )

    @property
    def healthy(self) -> bool:
        return not self._down

    def _maybe_purge(self) -> None:
        if time.monotonic() - self._last_purge > 3600:
            try:
                self.purge()
            except TRANSIENT:
                pass  # the writer logs outages; try again next hour
