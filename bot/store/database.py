"""The store: questions, votes and "didn't help" events in a database, written off the answer path.

    store = Store.open(StoreSettings.from_env(environ))   # SQLite in BOT_DATA_DIR, or BOT_DATABASE_URL
    store.record(event, session="…", latency_ms=12.5)        # returns at once; a thread writes
    rows = store.rows(since)                                 # for /admin and `python -m bot report`

Embedded SQLite by default (``<data dir>/bot.sqlite3``); any SQLAlchemy URL through
``BOT_DATABASE_URL`` (``postgresql+psycopg://user:password@host:5432/bot``) when several
replicas share one database. The schema is versioned in the table ``bot_meta`` and upgraded
by the app at start-up (:mod:`bot.store.migrations`), under a PostgreSQL advisory lock so replicas
starting together do not race.

This module holds the store's settings and the :class:`Store` the app uses, put together from small modules:
the tables (:mod:`~bot.store.schema`), the migrations, the database URL (:mod:`~bot.store.connection`), the spool
(:mod:`~bot.store.spool`), the writer thread (:mod:`~bot.store.writer`), retention (:mod:`~bot.store.purge`) and
reading (:mod:`~bot.store.reader`). Its names are also importable from here, as before the split.

Writes never fail an answer: :meth:`Store.record` appends the row to a local spool (a
JSON-lines file in ``<data dir>/spool``, fsync'd: the only wait), puts it on a bounded queue
and returns; a writer thread writes batches. An acknowledged event therefore survives a
database outage *and* a restart (SIGTERM or SIGKILL): the next start writes what the spool
still holds, once (rows carry an ``event_id``, so a row written just before a crash is not
written twice). A database that goes away is logged once and retried with back-off; after a
write error the batch is split (down to one row) so rows go in as soon as there is room
again (a nearly full disk). When the queue is full (a long outage) new rows wait in the spool
alone and the writer reads them back once the queue is empty, so nothing acknowledged is lost;
past :data:`bot.limits.SPOOL_BYTES` waiting there, :meth:`Store.record` raises
:class:`~bot.store.NotSpooled` and the edge answers 503: a vote is refused, never thanked and lost.

``answer_id`` (schema version 3) names the reply an event is about: a question row carries the id of
its reply, a vote the id of the answer voted on (one vote row per answer), so /admin ties a 👎 to its
question whatever the session; questions stored before version 3 have none.

``origin`` says where an event came from: ``ui`` (the full chat page), ``widget`` (the portal
panel), ``api`` (``/api/*``), ``v1`` (the OpenAI-compatible API), ``import`` (the old JSON-lines
log, imported once with ``python -m bot store import-jsonl FILE``: :mod:`~bot.store.jsonl_import`), ``app`` (rows
recorded before origins were told apart).

Privacy: ``BOT_STORE_QUESTION_TEXT=0`` keeps no question text (nor the error signature
cut from a pasted log); session ids are only ever stored as salted hashes; rows older than
``BOT_RETENTION_DAYS`` are deleted by the app (hourly and at start-up, with a log line saying how
many): :meth:`Store.reader` (``python -m bot report``) never deletes, and writes only the rows of the one-time
import it is asked for (``python -m bot store import-jsonl``).
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from bot.limits import SPOOL_BYTES
from bot.records import VOTE_REASONS, Event
from bot.settings import StoreSettings, weak_admin_token
from bot.store import StoreError, jsonl_import, purge, reader
from bot.store.connection import SQLITE_FILE, make_engine, open_engine, resolve_url, shown_url, unusable
from bot.store.migrations import MIGRATIONS, SCHEMA_VERSION, stored_version, upgrade
from bot.store.schema import (
    KINDS,
    MAX_QUESTION_CHARS,
    MISREAD,
    ORIGINS,
    event_row,
    events_table,
    meta_table,
    metadata,
)
from bot.store.schema import now as _now
from bot.store.spool import REFUSED_DIR, SPOOL_DIR, SPOOL_SEGMENT_BYTES, Spool
from bot.store.spool import to_json as _to_json
from bot.store.writer import BATCH, Writer

# The names other modules and tests import from here (``from bot.store.database import …``), kept since the split.
__all__ = [
    "BATCH",
    "KINDS",
    "MAX_QUESTION_CHARS",
    "MIGRATIONS",
    "MISREAD",
    "ORIGINS",
    "REFUSED_DIR",
    "SCHEMA_VERSION",
    "SPOOL_DIR",
    "SPOOL_SEGMENT_BYTES",
    "SQLITE_FILE",
    "VOTE_REASONS",
    "Spool",
    "Store",
    "StoreError",
    "StoreSettings",
    "_now",
    "_to_json",
    "events_table",
    "make_engine",
    "meta_table",
    "metadata",
    "open_store",
    "resolve_url",
    "upgrade",
    "weak_admin_token",
]

log = logging.getLogger(__name__)

# ---------------------------------------------------------------- the store


class Store(Writer):
    """The recorder the edges call, backed by a database; see the module docstring. Recording and the writer
    thread are :class:`~bot.store.writer.Writer`'s; this class opens the database, hashes sessions, purges and reads.
    """

    def __init__(
        self,
        engine: sa.Engine,
        settings: StoreSettings,
        *,
        queue_size: int = 10_000,
        spool_bytes: int = SPOOL_BYTES,
        retry_seconds: float = 1.0,
        max_retry_seconds: float = 30.0,
        writer: bool = True,
    ) -> None:
        self.engine = engine
        self.settings = settings
        self.keep_text = settings.store_question_text
        self._start_writer(queue_size=queue_size, retry_seconds=retry_seconds, max_retry_seconds=max_retry_seconds)
        with engine.connect() as conn:
            salt = conn.execute(sa.select(meta_table.c.value).where(meta_table.c.key == "session_salt")).scalar()
        self._salt = (salt or "").encode()
        if writer:
            try:
                self._open_spool(spool_bytes)
            except OSError as exc:
                folder = Path(settings.data_dir).expanduser() / SPOOL_DIR
                raise StoreError(
                    f"BOT_DATA_DIR={str(settings.data_dir)!r}: cannot keep the event spool in {folder} "
                    f"({exc.strerror or exc}); make the folder writable or choose another with BOT_DATA_DIR"
                ) from None

    # ------------------------------------------------------------ opening

    @classmethod
    def open(cls, settings: StoreSettings, **kwargs: Any) -> Store:
        """Check the URL, reach the database, create or upgrade the schema, write what an earlier run left in
        the spool, apply retention; StoreError says what to fix. This is the app's store (it writes)."""
        engine = open_engine(settings, kwargs.pop("busy_timeout", 5.0))
        try:
            upgrade(engine)
        except StoreError:
            engine.dispose()
            raise
        except sa_exc.SQLAlchemyError as exc:
            engine.dispose()
            raise unusable(settings, engine.url, exc) from None
        store = cls(engine, settings, **kwargs)
        store.purge()
        return store

    @classmethod
    def reader(cls, settings: StoreSettings) -> Store:
        """The store for reading only (``python -m bot report``): no schema change, no retention, no spool, no writer.

        Retention belongs to the app alone, so a report never deletes what the servers keep. The one-time import
        (:meth:`import_jsonl`, ``python -m bot store import-jsonl``) writes through it, straight to the database.
        """
        if not settings.database_url:
            path = Path(settings.data_dir).expanduser() / SQLITE_FILE
            if not path.is_file():
                raise StoreError(
                    f"no store at {path} yet (BOT_DATA_DIR={str(settings.data_dir)!r}): the app creates "
                    "it on its first start (python app.py); or set BOT_DATABASE_URL / --database"
                )
        engine = open_engine(settings, 5.0)
        try:
            with engine.connect() as conn:
                found = stored_version(conn)
        except sa_exc.SQLAlchemyError as exc:
            engine.dispose()
            raise unusable(settings, engine.url, exc) from None
        try:
            reader.require_current(engine, found)
        except StoreError:
            engine.dispose()
            raise
        return cls(engine, settings, writer=False)

    def describe(self) -> str:
        url = self.engine.url
        return f"SQLite {url.database}" if url.get_backend_name() == "sqlite" else shown_url(url)

    def close(self, timeout: float = 5.0) -> None:
        self._stop_writer(timeout)
        self.engine.dispose()

    # ------------------------------------------------------------ rows

    def _row(self, event: Event, session: str, latency_ms: float | None, at: datetime | None = None) -> dict:
        return event_row(
            event, session=self.hash_session(session), keep_text=self.keep_text, latency_ms=latency_ms, at=at
        )

    def hash_session(self, session: str) -> str:
        if not session:
            return ""
        return hashlib.sha256(self._salt + session.encode("utf-8", "replace")).hexdigest()[:32]

    # ------------------------------------------------------------ retention

    def purge(self, now: datetime | None = None) -> int:
        """Delete rows older than BOT_RETENTION_DAYS (0 keeps everything), logging how many; the app's store only."""
        if self.spool is None:
            raise StoreError("a read-only store (Store.reader) never deletes: retention runs in the app")
        self._last_purge = time.monotonic()
        return purge.purge(self.engine, self.settings.retention_days, now)

    # ------------------------------------------------------------ reading

    def rows(self, since: datetime | None = None, kinds: Iterable[str] = KINDS) -> list[dict]:
        """Events since ``since`` (UTC, naive), oldest first."""
        return reader.rows(self.engine, since, kinds)

    def version(self) -> tuple[int, int]:
        """(rows, highest id): changes whenever a row is written or removed; cheap, for a reader's cache."""
        return reader.version(self.engine)

    # ------------------------------------------------------------ the old JSON-lines log

    def import_jsonl(self, path: Path | None) -> int:
        """Import an old ``logs/feedback.jsonl`` once (:func:`bot.store.jsonl_import.import_jsonl`); returns rows
        imported. A file imported before brings only the lines appended since."""
        return jsonl_import.import_jsonl(self.engine, path, keep_text=self.keep_text, where=self.describe())


def open_store(settings: StoreSettings, **kwargs: Any) -> Store:
    """The app's store (:meth:`Store.open`)."""
    return Store.open(settings, **kwargs)
