"""The store: questions, votes and "didn't help" events in a database, written off the answer path.

    store = Store.open(StoreSettings.from_env(os.environ))   # SQLite in BOT_DATA_DIR, or BOT_DATABASE_URL
    store.record(event, session="…", latency_ms=12.5)        # returns at once; a thread writes
    rows = store.rows(since)                                 # for /admin and `python -m bot report`

Embedded SQLite by default (``<data dir>/bot.sqlite3``); any SQLAlchemy URL through
``BOT_DATABASE_URL`` (``postgresql+psycopg://user:password@host:5432/bot``) when several
replicas share one database. The schema is versioned in the table ``bot_meta`` and upgraded
by the app at start-up (:data:`MIGRATIONS`), under a PostgreSQL advisory lock so replicas
starting together do not race.

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
log), ``app`` (rows recorded before origins were told apart).

Privacy: ``BOT_STORE_QUESTION_TEXT=0`` keeps no question text (nor the error signature
cut from a pasted log); session ids are only ever stored as salted hashes; rows older than
``BOT_RETENTION_DAYS`` are deleted by the app (hourly and at start-up, with a log line saying how
many): :meth:`Store.reader` (``python -m bot report``) never deletes or writes anything.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import logging
import os
import queue
import secrets
import threading
import time
import uuid
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from bot.limits import QUESTION_CHARS, SPOOL_BYTES, VOTE_COMMENT_CHARS
from bot.records import EVENT_KINDS, VOTE_REASONS, Event
from bot.records import ORIGINS as EDGE_ORIGINS
from bot.settings import BotSettings, setting
from bot.store import NotSpooled

log = logging.getLogger("bot.store.database")

MAX_QUESTION_CHARS = QUESTION_CHARS  # a pasted log is kept cut; its signature says what it was about
SQLITE_FILE = "bot.sqlite3"
KINDS = EVENT_KINDS
ORIGINS = (*EDGE_ORIGINS, "app", "import")  # the edges', then rows from before schema 2 and the old log
BATCH = 500  # rows per write when all is well
SPOOL_DIR = "spool"  # under BOT_DATA_DIR: acknowledged events not yet in the database
REFUSED_DIR = "refused"  # under the spool: rows the database refused for good, kept for an operator to look at
SPOOL_SEGMENT_BYTES = 1 << 20  # a spool file is replaced by a fresh one past this size (the old one goes once written)
ADMIN_TOKEN_PATTERN = r"^[\x21-\x7e]+$"  # the API token's rule (bot.web.http): printable, no spaces


class StoreError(RuntimeError):
    """The store cannot start; the message names the setting and the fix."""


# ---------------------------------------------------------------- settings


def default_data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_STATE_HOME/gpu-troubleshooter`` (or ``~/.local/state/…``): never the working directory."""
    environ = os.environ if environ is None else environ
    base = environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "gpu-troubleshooter"


class StoreSettings(BotSettings):
    """Settings of the store, /admin and the index watcher; read from ``BOT_*`` variables at the edges only."""

    database_url: str = setting(
        "",
        "SQLAlchemy URL of the store, e.g. "
        "postgresql+psycopg://user:password@host:5432/bot when replicas share one database; "
        "unset: SQLite in the data folder",
        allowed="a SQLAlchemy database URL",
    )
    data_dir: Path = setting(
        default_data_dir,
        "where the SQLite store and the event spool live",
        allowed="a writable folder",
        default_shown="$XDG_STATE_HOME/gpu-troubleshooter",
    )
    retention_days: int = setting(
        180,
        "events older than this many days are deleted by the app",
        allowed="a whole number of days, or 0 to keep everything",
        ge=0,
    )
    store_question_text: bool = setting(
        True,
        "keep question text; 0 keeps none (nor the error signature of a log)",
        allowed="1 to keep question text or 0 to keep none",
    )
    # The API token's rule (8+ printable characters): "a" would fall to a handful of guesses.
    admin_token: str = setting(
        "",
        "operator credential for /admin; unset: /admin refuses everyone",
        allowed="8 to 512 printable characters without spaces, e.g. the output of "
        "python -c 'import secrets; print(secrets.token_urlsafe(24))' "
        "(unset turns /admin off)",
        secret=True,
        max_length=512,
        pattern=r"^(|[\x21-\x7e]{8,})$",
    )
    index_poll_seconds: float = setting(
        5.0,
        "how often replicas look at index/CURRENT for a new index",
        allowed="seconds between checks, or 0 to turn the watcher off",
        ge=0,
    )

    @classmethod
    def env_defaults(cls, environ: Mapping[str, str], given: Mapping[str, object]) -> dict[str, object]:
        """The data folder under the given environment's ``XDG_STATE_HOME`` when ``BOT_DATA_DIR`` is unset.

        >>> StoreSettings.from_env({"BOT_RETENTION_DAYS": "30", "BOT_STORE_QUESTION_TEXT": "0"}).retention_days
        30
        """
        return {} if "data_dir" in given else {"data_dir": default_data_dir(environ)}


def weak_admin_token(token: str) -> bool:
    """The rule of :attr:`StoreSettings.admin_token`, for settings built without validation (``model_copy``)."""
    import re

    return bool(token) and (len(token) < 8 or len(token) > 512 or not re.fullmatch(ADMIN_TOKEN_PATTERN, token))


# ---------------------------------------------------------------- schema

metadata = sa.MetaData()

# Version 1. A later version adds a migration to MIGRATIONS instead of editing these tables in place.
meta_table = sa.Table(
    "bot_meta",
    metadata,
    sa.Column("key", sa.String(200), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)
events_table = sa.Table(
    "bot_events",
    metadata,
    sa.Column("id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True, autoincrement=True),
    sa.Column("at", sa.DateTime, nullable=False, index=True),  # UTC, naive: the same on SQLite and PostgreSQL
    sa.Column("kind", sa.String(16), nullable=False, index=True),  # question | not_helpful | vote
    sa.Column("session", sa.String(32), nullable=False, default=""),  # salted hash, never the raw id
    sa.Column("question", sa.Text),  # NULL when BOT_STORE_QUESTION_TEXT=0
    sa.Column("language", sa.String(8), nullable=False, default=""),
    sa.Column("tier", sa.String(16), nullable=False, default=""),  # answer | tentative | none
    sa.Column("confidence", sa.Float),
    sa.Column("cited", sa.JSON, nullable=False, default=list),  # section keys, the answer first
    sa.Column("signature", sa.Text),
    sa.Column("vote", sa.String(8)),  # up | down (votes only)
    sa.Column("reason", sa.String(32)),  # bot.records.VoteReason: wrong_section | didnt_help | …
    # The answer an event is about: a question's reply (version 3), a vote's answer (one vote row per answer, the
    # last vote wins: vote_answer_index). Version 1 and 2 kept it on votes only, with a plain UNIQUE.
    sa.Column("answer_id", sa.String(80)),
    sa.Column("latency_ms", sa.Float),
    sa.Column("origin", sa.String(16), nullable=False, default="app"),  # see ORIGINS
    sa.Column("event_id", sa.String(32)),  # version 2: one id per recorded event, so a spool replay writes it once
    sa.Column("comment", sa.Text),  # version 5: a vote's free text (a 👎's "what was wrong"); NULL without one
)
event_id_index = sa.Index("ix_bot_events_event_id", events_table.c.event_id, unique=True)
_is_vote = events_table.c.kind == "vote"
# Version 3: unique among votes only, so a question row and the votes on its reply share the answer_id.
vote_answer_index = sa.Index(
    "ux_bot_events_vote_answer", events_table.c.answer_id, unique=True, sqlite_where=_is_vote, postgresql_where=_is_vote
)


def _v1(conn: sa.Connection) -> None:
    metadata.create_all(conn, checkfirst=True)
    conn.execute(meta_table.insert().values(key="session_salt", value=secrets.token_hex(16)))


def _v2(conn: sa.Connection) -> None:
    """``event_id``: replaying the local spool after a crash must not write a row twice."""
    columns = {c["name"] for c in sa.inspect(conn).get_columns(events_table.name)}
    if "event_id" not in columns:  # a version-1 database (a fresh one got the column from _v1's create_all)
        conn.execute(sa.text(f"ALTER TABLE {events_table.name} ADD COLUMN event_id VARCHAR(32)"))
    event_id_index.create(conn, checkfirst=True)


def _v3(conn: sa.Connection) -> None:
    """``answer_id`` on questions too: a vote is tied to its question by the answer both name, not by session and
    wording. The column stays; its plain UNIQUE (votes only had an answer_id) becomes unique among votes.

    PostgreSQL drops the constraint. SQLite cannot drop a column's UNIQUE, so the table is rebuilt: renamed, its
    indexes dropped (their names are database-wide), created anew and filled with every row, ids kept. Older
    rows keep ``answer_id`` NULL on questions; /admin matches their votes by session and wording, as before.
    """
    old_unique = [
        c for c in sa.inspect(conn).get_unique_constraints(events_table.name) if c["column_names"] == ["answer_id"]
    ]
    if old_unique and conn.dialect.name == "sqlite":
        _rebuild_sqlite_events(conn)
    elif old_unique:
        for constraint in old_unique:
            conn.execute(
                sa.text(
                    f"ALTER TABLE {events_table.name} DROP CONSTRAINT "
                    + conn.dialect.identifier_preparer.quote(constraint["name"])
                )
            )
    vote_answer_index.create(conn, checkfirst=True)


def _rebuild_sqlite_events(conn: sa.Connection) -> None:
    quote = conn.dialect.identifier_preparer.quote
    parked = f"{events_table.name}_v2"
    conn.execute(sa.text(f"ALTER TABLE {events_table.name} RENAME TO {parked}"))
    for index in sa.inspect(conn).get_indexes(parked):
        conn.execute(sa.text(f"DROP INDEX {quote(index['name'])}"))
    events_table.create(conn)  # with its indexes, vote_answer_index included
    # The columns both tables have: every one that exists since version 2 (a later version's column is added by its
    # own migration, after this one).
    had = {c["name"] for c in sa.inspect(conn).get_columns(parked)}
    columns = ", ".join(quote(c.name) for c in events_table.columns if c.name in had)
    conn.execute(sa.text(f"INSERT INTO {events_table.name} ({columns}) SELECT {columns} FROM {parked}"))
    conn.execute(sa.text(f"DROP TABLE {parked}"))


MISREAD = "misread"  # a "didn't help" the user never said (version 4); kept for audit, outside KINDS: never counted
_SAME_TURN = timedelta(seconds=5)  # a turn's events are recorded together


def _v4(conn: sa.Connection) -> None:
    """Before version 4 a turn the engine read as a retry was stored as "didn't help" even when the user asked a new
    question ("Keras model.fit does not use my GPU" after a TensorFlow answer): /admin counted complaints no one made.
    Such a turn was stored as a ``not_helpful`` row followed by a ``question`` row with the message (a bare "没用"
    got no question row); where that message does not say the fix failed (:func:`bot.engine.case.says_failed`)
    the ``not_helpful`` row becomes :data:`MISREAD`: kept, no longer counted. Rows without the text
    (``BOT_STORE_QUESTION_TEXT=0``) cannot be read again and are left as they are.
    """
    from bot.engine.case import says_failed

    t = events_table.c
    complaints = conn.execute(
        sa.select(t.id, t.at, t.session).where(t.kind == "not_helpful").order_by(t.at, t.id)
    ).all()
    misread = []
    for row in complaints:
        said = conn.execute(
            sa.select(t.question)
            .where(
                t.kind == "question",
                t.session == row.session,
                t.id > row.id,
                t.at >= row.at,
                t.at <= row.at + _SAME_TURN,
            )
            .order_by(t.id)
            .limit(1)
        ).scalar()
        if said and not says_failed(said):
            misread.append(row.id)
    for start in range(0, len(misread), BATCH):
        conn.execute(events_table.update().where(t.id.in_(misread[start : start + BATCH])).values(kind=MISREAD))
    if misread:
        log.warning('store: %d stored "didn\'t help" row(s) were new questions; now kind %r', len(misread), MISREAD)


def _v5(conn: sa.Connection) -> None:
    """``comment``: a vote's free text (a 👎 says what was wrong in its own words, issue 35)."""
    columns = {c["name"] for c in sa.inspect(conn).get_columns(events_table.name)}
    if "comment" not in columns:  # a fresh database got the column from _v1's create_all
        conn.execute(sa.text(f"ALTER TABLE {events_table.name} ADD COLUMN comment TEXT"))


MIGRATIONS = [_v1, _v2, _v3, _v4, _v5]  # MIGRATIONS[n] upgrades version n to n + 1
SCHEMA_VERSION = len(MIGRATIONS)
_ADVISORY_LOCK = 0x6275_6773  # any constant shared by all replicas


def _version(conn: sa.Connection) -> int:
    if not sa.inspect(conn).has_table(meta_table.name):
        return 0
    value = conn.execute(sa.select(meta_table.c.value).where(meta_table.c.key == "schema_version")).scalar()
    return int(value or 0)


def upgrade(engine: sa.Engine) -> int:
    """Create or upgrade the schema to :data:`SCHEMA_VERSION`; returns the version found before.

    All steps in one transaction: a crash mid-way leaves the version found, never half of a step.
    """
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":  # replicas starting together: one upgrades, the others wait
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _ADVISORY_LOCK})
        found = _version(conn)
        if found < SCHEMA_VERSION and conn.dialect.name == "sqlite":
            # Python's sqlite3 runs DDL outside any transaction until the first INSERT: begin one ourselves (which
            # also makes a second app on the same file wait here), then look again under the lock.
            conn.exec_driver_sql("BEGIN IMMEDIATE")
            found = _version(conn)
        if found > SCHEMA_VERSION:
            raise StoreError(
                f"the database has schema version {found}, newer than this app's {SCHEMA_VERSION}: "
                "run the newer app version, or point BOT_DATABASE_URL at another database"
            )
        for version in range(found, SCHEMA_VERSION):
            MIGRATIONS[version](conn)
        if found < SCHEMA_VERSION:
            stmt = meta_table.delete().where(meta_table.c.key == "schema_version")
            conn.execute(stmt)
            conn.execute(meta_table.insert().values(key="schema_version", value=str(SCHEMA_VERSION)))
    return found


# ---------------------------------------------------------------- opening


def _shown(url: sa.URL | str) -> str:
    return url.render_as_string(hide_password=True) if isinstance(url, sa.URL) else str(url)


def resolve_url(settings: StoreSettings) -> sa.URL:
    """The database URL: BOT_DATABASE_URL parsed, or SQLite in a writable BOT_DATA_DIR."""
    if settings.database_url:
        try:
            url = sa.make_url(settings.database_url)
        except sa_exc.ArgumentError:
            raise StoreError(
                f"BOT_DATABASE_URL={settings.database_url!r} is not a database URL. Use e.g. "
                "postgresql+psycopg://user:password@host:5432/bot, or unset it for SQLite in BOT_DATA_DIR"
            ) from None
        if url.drivername in (
            "postgresql",
            "postgres",
        ):  # the bare scheme means psycopg2 to SQLAlchemy; we ship psycopg 3
            url = url.set(drivername="postgresql+psycopg")
        try:
            url.get_dialect()
        except sa_exc.NoSuchModuleError:
            raise StoreError(
                f"BOT_DATABASE_URL={_shown(url)!r} names the database kind {url.drivername!r}, which SQLAlchemy does "
                "not know here. Use postgresql+psycopg://… or sqlite:///path/to/file"
            ) from None
        return url
    folder = Path(settings.data_dir).expanduser()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".write-test-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        probe.write_bytes(b"ok")
        probe.unlink()
    except OSError as exc:
        raise StoreError(
            f"BOT_DATA_DIR={str(folder)!r} is not writable ({exc.strerror or exc}); the SQLite store lives there. "
            "Make the folder writable, choose another with BOT_DATA_DIR, or set BOT_DATABASE_URL"
        ) from None
    return sa.URL.create("sqlite", database=str(folder / SQLITE_FILE))


def make_engine(url: sa.URL, *, busy_timeout: float = 5.0, connect_timeout: int = 5) -> sa.Engine:
    if url.get_backend_name() == "sqlite":
        engine = sa.create_engine(url, connect_args={"timeout": busy_timeout, "check_same_thread": False})

        @sa.event.listens_for(engine, "connect")
        def _pragmas(dbapi_connection, _record) -> None:  # readers (admin) never wait for the writer
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.close()

        return engine
    args: dict[str, Any] = {}
    if url.get_backend_name() == "postgresql":
        args["connect_timeout"] = connect_timeout  # an unreachable server fails start-up in seconds, not minutes
    return sa.create_engine(url, pool_pre_ping=True, connect_args=args, pool_size=3, max_overflow=2)


# ---------------------------------------------------------------- the store


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


_TRANSIENT = (sa_exc.OperationalError, sa_exc.InterfaceError, sa_exc.DisconnectionError, sa_exc.TimeoutError)


def _why(exc: BaseException | None) -> str:
    return str(getattr(exc, "orig", None) or exc or "refused").strip().splitlines()[0][:200]


def _to_json(row: dict) -> str:
    return json.dumps({**row, "at": row["at"].isoformat()}, ensure_ascii=False)


def _from_json(line: bytes) -> dict:
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
    when a process dies (SIGKILL included), and the next start replays the file (:meth:`Store._replay`).
    A file goes away once every row in it is written; past :data:`SPOOL_SEGMENT_BYTES` a fresh one is
    started, so the spool of a busy server stays small.

    Each row is handed to the writer's queue as it is added. When the queue is full (a long outage) the row
    waits here, and so does every row after it until the writer, its queue empty, has read them all back
    (:meth:`read_back`), oldest first: a row is never both queued and read back. Past ``cap_bytes``
    (:data:`bot.limits.SPOOL_BYTES`) a row is refused (:class:`NotSpooled`), as on a full disk.

        >>> import tempfile
        >>> spool = Spool(Path(tempfile.mkdtemp()), cap_bytes=200)
        >>> spool.add({"at": _now(), "kind": "vote", "event_id": "e1"})  # no queue given: it waits here
        False
        >>> [row["event_id"] for _, row in spool.read_back(10)], spool.waiting()
        (['e1'], 1)
        >>> try:
        ...     spool.add({"at": _now(), "kind": "vote", "event_id": "e2", "question": "x" * 200})
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
        data = (_to_json(row) + "\n").encode("utf-8")
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
                                rows.append((path, _from_json(line)))
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


class Store:
    """The recorder the edges call, backed by a database; see the module docstring."""

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
        with engine.connect() as conn:
            salt = conn.execute(sa.select(meta_table.c.value).where(meta_table.c.key == "session_salt")).scalar()
        self._salt = (salt or "").encode()
        self.spool: Spool | None = None
        self._thread: threading.Thread | None = None
        if writer:
            folder = Path(settings.data_dir).expanduser() / SPOOL_DIR
            try:
                self._replay(folder)
                self.spool = Spool(folder, spool_bytes)
            except OSError as exc:
                raise StoreError(
                    f"BOT_DATA_DIR={str(settings.data_dir)!r}: cannot keep the event spool in {folder} "
                    f"({exc.strerror or exc}); make the folder writable or choose another with BOT_DATA_DIR"
                ) from None
            self._thread = threading.Thread(target=self._run, name="bot-store-writer", daemon=True)
            self._thread.start()

    # ------------------------------------------------------------ opening

    @classmethod
    def open(cls, settings: StoreSettings, **kwargs: Any) -> Store:
        """Check the URL, reach the database, create or upgrade the schema, write what an earlier run left in
        the spool, apply retention; StoreError says what to fix. This is the app's store (it writes)."""
        engine = cls._engine(settings, kwargs.pop("busy_timeout", 5.0))
        try:
            upgrade(engine)
        except StoreError:
            engine.dispose()
            raise
        except sa_exc.SQLAlchemyError as exc:
            engine.dispose()
            raise cls._unusable(settings, engine.url, exc) from None
        store = cls(engine, settings, **kwargs)
        store.purge()
        return store

    @classmethod
    def reader(cls, settings: StoreSettings) -> Store:
        """The store for reading only (``python -m bot report``): no schema change, no retention, no spool, no writer.

        Retention belongs to the app alone, so a report never deletes what the servers keep.
        """
        if not settings.database_url:
            path = Path(settings.data_dir).expanduser() / SQLITE_FILE
            if not path.is_file():
                raise StoreError(
                    f"no store at {path} yet (BOT_DATA_DIR={str(settings.data_dir)!r}): the app creates "
                    "it on its first start (python app.py); or set BOT_DATABASE_URL / --database"
                )
        engine = cls._engine(settings, 5.0)
        try:
            with engine.connect() as conn:
                found = _version(conn)
        except sa_exc.SQLAlchemyError as exc:
            engine.dispose()
            raise cls._unusable(settings, engine.url, exc) from None
        if found != SCHEMA_VERSION:
            engine.dispose()
            fix = (
                "start the app once (python app.py): it creates or upgrades the schema"
                if found < SCHEMA_VERSION
                else "run the newer version of this tool"
            )
            raise StoreError(
                f"the store {_shown(engine.url)} has schema version {found}, this tool reads version "
                f"{SCHEMA_VERSION}: {fix}"
            )
        return cls(engine, settings, writer=False)

    @staticmethod
    def _engine(settings: StoreSettings, busy_timeout: float) -> sa.Engine:
        url = resolve_url(settings)
        try:
            return make_engine(url, busy_timeout=busy_timeout)
        except ImportError as exc:
            raise StoreError(
                f"BOT_DATABASE_URL={_shown(url)!r} needs the Python driver {exc.name or exc}, which is not installed: "
                "pip install it, or use postgresql+psycopg://… (installed with requirements.txt)"
            ) from None

    @staticmethod
    def _unusable(settings: StoreSettings, url: sa.URL, exc: Exception) -> StoreError:
        setting = "BOT_DATABASE_URL" if settings.database_url else "BOT_DATA_DIR"
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0][:300]
        return StoreError(
            f"cannot use the database {setting}={_shown(url) if settings.database_url else str(settings.data_dir)!r}: "
            f"{reason}. Check that the server is running and reachable and that the URL's user, password and "
            f"database are right (or unset BOT_DATABASE_URL for SQLite in BOT_DATA_DIR)"
        )

    def describe(self) -> str:
        url = self.engine.url
        return f"SQLite {url.database}" if url.get_backend_name() == "sqlite" else _shown(url)

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
                            rows.append(_from_json(line))
                        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
                            bad += 1  # a line torn by a crash mid-write was never acknowledged
                try:
                    refused = []
                    for start in range(0, len(rows), BATCH):
                        refused += self._write_or_refuse(rows[start : start + BATCH])
                except _TRANSIENT as exc:
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

    def _row(self, event: Event, session: str, latency_ms: float | None, at: datetime | None = None) -> dict:
        if event.kind not in KINDS:
            raise ValueError(f"unknown event kind {event.kind!r}; expected one of {', '.join(KINDS)}")
        from bot.engine.retrieve import sanitize  # lone surrogates and control characters from pasted logs

        question = sanitize(event.question or "", MAX_QUESTION_CHARS)[0] if self.keep_text else None
        signature = sanitize(event.signature, MAX_QUESTION_CHARS)[0] if (self.keep_text and event.signature) else None
        # A question's: the reply's, which its votes name. No control characters: PostgreSQL refuses a NUL.
        answer_id = sanitize((event.answer_id or "")[:80], 80)[0].strip() or None
        if event.kind == "vote":
            if event.vote not in ("up", "down"):
                raise ValueError(f"vote must be 'up' or 'down', not {event.vote!r}")
            answer_id = answer_id or f"anon-{uuid.uuid4().hex}"
        origin = getattr(event, "origin", "") or "app"
        return {
            "at": at or _now(),
            "kind": event.kind,
            "session": self.hash_session(session),
            "question": question,
            "language": (event.language or "")[:8],
            "tier": (event.tier or "")[:16],
            "confidence": float(event.confidence) if event.kind == "question" else None,
            "cited": [str(c)[:300] for c in event.cited][:10],
            "signature": signature,
            "vote": event.vote if event.kind == "vote" else None,
            "reason": (event.reason if event.reason in VOTE_REASONS else ("other" if event.reason else None))
            if event.kind == "vote"
            else None,
            "answer_id": answer_id,
            "latency_ms": float(latency_ms) if latency_ms is not None else None,
            "origin": origin if origin in ORIGINS else "app",
            "event_id": uuid.uuid4().hex,
            # Free text like the question: kept only where question text is (BOT_STORE_QUESTION_TEXT).
            "comment": (sanitize(event.comment[:VOTE_COMMENT_CHARS], VOTE_COMMENT_CHARS)[0].strip() or None)
            if (event.kind == "vote" and self.keep_text and event.comment)
            else None,
        }

    def hash_session(self, session: str) -> str:
        if not session:
            return ""
        return hashlib.sha256(self._salt + session.encode("utf-8", "replace")).hexdigest()[:32]

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
            except _TRANSIENT as exc:
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
                except _TRANSIENT:
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
        Returns the refused rows; outages (:data:`_TRANSIENT`) are raised for the caller to retry."""
        if refused_batch is None:
            try:
                self._write(rows)
                return []
            except _TRANSIENT:
                raise
            except Exception as exc:
                refused_batch = exc
        log.warning(
            "store: a batch of %d event(s) was refused (%s); writing row by row", len(rows), _why(refused_batch)
        )
        refused: list[tuple[dict, Exception]] = []
        for row in rows:
            try:
                self._write([row])
            except _TRANSIENT:
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
                    handle.write(json.dumps({"refused": _why(exc), "row": json.loads(_to_json(row))}) + "\n")
        except OSError as exc:
            path = Path(f"(not kept: {exc.strerror or exc})")
        for row, exc in refused:
            log.error(
                "store: the database refused the %s event %s (%s); set aside in %s",
                row.get("kind"),
                row.get("event_id"),
                _why(exc),
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
                .where(events_table.c.answer_id == row["answer_id"], _is_vote, events_table.c.at <= row["at"])
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

    def close(self, timeout: float = 5.0) -> None:
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
        self.engine.dispose()

    @property
    def healthy(self) -> bool:
        return not self._down

    # ------------------------------------------------------------ retention

    def _maybe_purge(self) -> None:
        if time.monotonic() - self._last_purge > 3600:
            try:
                self.purge()
            except _TRANSIENT:
                pass  # the writer logs outages; try again next hour

    def purge(self, now: datetime | None = None) -> int:
        """Delete rows older than BOT_RETENTION_DAYS (0 keeps everything), logging how many; the app's store only."""
        if self.spool is None:
            raise StoreError("a read-only store (Store.reader) never deletes: retention runs in the app")
        self._last_purge = time.monotonic()
        if not self.settings.retention_days:
            return 0
        cutoff = (now or _now()) - timedelta(days=self.settings.retention_days)
        with self.engine.begin() as conn:
            removed = conn.execute(events_table.delete().where(events_table.c.at < cutoff)).rowcount or 0
        if removed:
            log.warning(
                "store: retention removed %d event(s) recorded before %s (BOT_RETENTION_DAYS=%d)",
                removed,
                cutoff.isoformat(timespec="seconds"),
                self.settings.retention_days,
            )
        return removed

    # ------------------------------------------------------------ reading

    def rows(self, since: datetime | None = None, kinds: Iterable[str] = KINDS) -> list[dict]:
        """Events since ``since`` (UTC, naive), oldest first."""
        query = (
            sa.select(events_table)
            .where(events_table.c.kind.in_(list(kinds)))
            .order_by(events_table.c.at, events_table.c.id)
        )
        if since is not None:
            query = query.where(events_table.c.at >= since)
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(query)]

    def version(self) -> tuple[int, int]:
        """(rows, highest id): changes whenever a row is written or removed; cheap, for a reader's cache."""
        with self.engine.connect() as conn:
            count, top = conn.execute(sa.select(sa.func.count(), sa.func.max(events_table.c.id))).one()
        return int(count or 0), int(top or 0)

    # ------------------------------------------------------------ the old JSON-lines log

    def import_jsonl(self, path: Path | None) -> int:
        """Import ``logs/feedback.jsonl`` (the format of :mod:`bot.store.feedback`) once; returns rows imported.

        A log is known by its first line (every replica had a log of its own, so the path says
        nothing); ``bot_meta`` remembers how many bytes of it were imported, in the same
        transaction as the rows. A restart imports nothing again; lines appended since (an old
        replica still writing during a rolling upgrade) are imported once; a log whose start
        changed is a new log.
        """
        if path is None or not Path(path).is_file():
            return 0
        data = Path(path).read_bytes()
        end = data.rfind(b"\n") + 1  # whole lines only: a writer may be half-way through the last one
        if end == 0:
            return 0
        first = data.split(b"\n", 1)[0]
        marker = f"import:jsonl:{hashlib.sha256(first).hexdigest()[:40]}"
        try:
            with self.engine.begin() as conn:
                found = conn.execute(
                    sa.select(meta_table.c.value).where(meta_table.c.key == marker).with_for_update()
                ).scalar()
                start = 0
                if found:
                    done, _, digest = found.partition(" ")
                    if not done.isdigit() or int(done) > end or hashlib.sha256(data[: int(done)]).hexdigest() != digest:
                        log.warning(
                            "store: %s starts like a log imported before but differs from it; not imported "
                            "again (delete the key %s from bot_meta to force it)",
                            path,
                            marker,
                        )
                        return 0
                    start = int(done)
                if start >= end:
                    return 0
                rows = self._jsonl_rows(data, start, end, marker)
                value = f"{end} {hashlib.sha256(data[:end]).hexdigest()}"
                if found:
                    conn.execute(meta_table.update().where(meta_table.c.key == marker).values(value=value))
                else:
                    conn.execute(meta_table.insert().values(key=marker, value=value))
                if rows:
                    conn.execute(events_table.insert(), rows)
        except sa_exc.IntegrityError:  # another replica imported the same log at the same moment
            return 0
        log.warning("store: imported %d event(s) from %s into %s", len(rows), path, self.describe())
        return len(rows)

    def _jsonl_rows(self, data: bytes, start: int, end: int, marker: str) -> list[dict]:
        rows: list[dict] = []
        offset = start
        for raw in data[start:end].split(b"\n"):
            at_offset, offset = offset, offset + len(raw) + 1
            try:
                line = json.loads(raw.decode("utf-8"))
                if not isinstance(line, dict):
                    continue
                at = datetime.fromisoformat(str(line.get("time"))).astimezone(UTC).replace(tzinfo=None)
            except (ValueError, UnicodeDecodeError, TypeError):
                continue  # unreadable lines were skipped by `bot report` too
            kind = {"unanswered": "question", "vote": "vote", "not_helpful": "not_helpful"}.get(line.get("event"))
            if kind is None or (kind == "vote" and line.get("vote") not in ("up", "down")):
                continue
            answered = bool(line.get("answered"))
            event = Event(
                kind,
                str(line.get("question", "")),
                str(line.get("language", "")),
                tier="answer" if answered else "none",
                cited=tuple(str(c) for c in line.get("cited") or []),
                signature=str(line.get("signature") or ""),
                vote=line.get("vote") if kind == "vote" else None,
                answer_id=f"import-{marker[-12:]}-{at_offset}" if kind == "vote" else "",
            )
            row = self._row(event, "", None, at=at)
            row["origin"] = "import"
            rows.append(row)
        return rows


def open_store(settings: StoreSettings, legacy_log: Path | None = None, **kwargs: Any) -> Store:
    """Open the store and import the old JSON-lines feedback log once."""
    store = Store.open(settings, **kwargs)
    try:
        store.import_jsonl(legacy_log)
    except OSError as exc:
        log.warning(
            "store: could not read %s for the one-time import (%s); set BOT_FEEDBACK_LOG to the old log",
            legacy_log,
            exc,
        )
    return store
