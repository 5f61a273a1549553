"""Which database, and an engine for it: ``BOT_DATABASE_URL`` checked, or SQLite in a writable ``BOT_DATA_DIR``.

Every failure is a :class:`~bot.store.StoreError` that names the setting, the value and the fix.

    >>> import tempfile
    >>> from bot.settings import StoreSettings
    >>> resolve_url(StoreSettings(data_dir=tempfile.mkdtemp())).get_backend_name()
    'sqlite'
    >>> resolve_url(StoreSettings(database_url="postgresql://u:p@db/bot")).drivername  # we ship psycopg 3
    'postgresql+psycopg'
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc

from bot.store import StoreError

if TYPE_CHECKING:
    from bot.settings import StoreSettings

SQLITE_FILE = "bot.sqlite3"


def shown_url(url: sa.URL | str) -> str:
    """The URL as logs and errors show it: without its password."""
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
                f"BOT_DATABASE_URL={shown_url(url)!r} names the database kind {url.drivername!r}, which SQLAlchemy "
                "does not know here. Use postgresql+psycopg://… or sqlite:///path/to/file"
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


def open_engine(settings: StoreSettings, busy_timeout: float = 5.0) -> sa.Engine:
    """An engine for the settings' database (not yet connected); a missing driver is a StoreError with the fix."""
    url = resolve_url(settings)
    try:
        return make_engine(url, busy_timeout=busy_timeout)
    except ImportError as exc:
        raise StoreError(
            f"BOT_DATABASE_URL={shown_url(url)!r} needs the Python driver {exc.name or exc}, which is not installed: "
            "pip install it, or use postgresql+psycopg://… (installed with requirements.txt)"
        ) from None


def unusable(settings: StoreSettings, url: sa.URL, exc: Exception) -> StoreError:
    """The error for a database that cannot be reached or read: the setting, the reason, what to check."""
    setting = "BOT_DATABASE_URL" if settings.database_url else "BOT_DATA_DIR"
    reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0][:300]
    return StoreError(
        f"cannot use the database {setting}={shown_url(url) if settings.database_url else str(settings.data_dir)!r}: "
        f"{reason}. Check that the server is running and reachable and that the URL's user, password and "
        f"database are right (or unset BOT_DATABASE_URL for SQLite in BOT_DATA_DIR)"
    )
