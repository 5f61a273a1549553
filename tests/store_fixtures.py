"""A real PostgreSQL server for the store tests, and the store fixture run against it and against SQLite.

The server is Debian's ``postgresql`` (``scripts/test.sh`` installs it): ``initdb`` + ``pg_ctl``
from ``/usr/lib/postgresql/*/bin`` in a temporary folder, on a free port, once per test session.
PostgreSQL refuses to run as root, so as root it runs as the ``postgres`` user (``runuser``)
with the folder handed to that user. Every test gets a database of its own.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest
from browser_helpers import free_port

PG_BIN_GLOB = "/usr/lib/postgresql/*/bin"


def postgres_bin() -> Path | None:
    override = os.environ.get("BOT_PG_BIN")
    if override:
        return Path(override)
    found = sorted(glob.glob(PG_BIN_GLOB), key=lambda p: int(Path(p).parent.name) if Path(p).parent.name.isdigit() else 0)
    return Path(found[-1]) if found else None


class PostgresServer:
    def __init__(self) -> None:
        bin_dir = postgres_bin()
        if bin_dir is None or not (bin_dir / "initdb").exists():
            pytest.fail("PostgreSQL is not installed (no initdb in /usr/lib/postgresql/*/bin): "
                        "run bash scripts/test.sh, or apt-get install -y postgresql")
        self.bin = bin_dir
        self.port = free_port()
        # Not under pytest's tmp_path: that folder is private to root and the server runs as `postgres`.
        self.root = Path(tempfile.mkdtemp(prefix="bot-pg-"))
        self.data = self.root / "data"
        self.as_user: list[str] = []
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
            self.as_user = ["runuser", "-u", "postgres", "--"]
        self._run("initdb", "-D", str(self.data), "--auth=trust", "-U", "postgres", "--encoding=UTF8", "--no-locale")
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "server.log"), "-w", "-t", "60", "-o",
                  f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
                  "-c synchronous_commit=off -c full_page_writes=off -c max_connections=60", "start")

    def _run(self, tool: str, *args: str) -> str:
        done = subprocess.run([*self.as_user, str(self.bin / tool), *args], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            log = (self.root / "server.log")
            raise RuntimeError(f"{tool} failed ({done.returncode}): {done.stdout}\n{done.stderr}\n"
                               f"{log.read_text() if log.exists() else ''}")
        return done.stdout

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def sql(self, statement: str) -> None:
        """Run one statement as the superuser, outside a transaction (CREATE DATABASE needs that)."""
        import sqlalchemy as sa

        engine = sa.create_engine(self.url(), isolation_level="AUTOCOMMIT")
        try:
            with engine.connect() as conn:
                conn.execute(sa.text(statement))
        finally:
            engine.dispose()

    def new_database(self) -> str:
        name = f"t_{uuid.uuid4().hex[:12]}"
        self.sql(f"CREATE DATABASE {name}")
        return name

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres():
    server = PostgresServer()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_settings(request, tmp_path):
    """StoreSettings for a fresh, empty store: SQLite in tmp_path, or a new database on the test PostgreSQL."""
    from bot.store import StoreSettings

    if request.param == "sqlite":
        return StoreSettings(data_dir=tmp_path / "data")
    server = request.getfixturevalue("postgres")
    return StoreSettings(database_url=server.url(server.new_database()), data_dir=tmp_path / "unused")


class Outage:
    """Make the store's database refuse work for real, then let it back: a held SQLite lock, or a closed PostgreSQL database."""

    def __init__(self, settings, request) -> None:
        self.settings = settings
        self.request = request
        self._lock = None

    def __enter__(self) -> Outage:
        if not self.settings.database_url:
            import sqlite3

            self._lock = sqlite3.connect(str(Path(self.settings.data_dir) / "bot.sqlite3"), isolation_level=None)
            self._lock.execute("BEGIN EXCLUSIVE")  # another process holding the write lock: writers time out
        else:
            server = self.request.getfixturevalue("postgres")
            self.name = self.settings.database_url.rsplit("/", 1)[1]
            server.sql(f"ALTER DATABASE {self.name} ALLOW_CONNECTIONS false")
            server.sql(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{self.name}'")
        return self

    def __exit__(self, *exc) -> None:
        if self._lock is not None:
            self._lock.execute("COMMIT")
            self._lock.close()
        else:
            self.request.getfixturevalue("postgres").sql(f"ALTER DATABASE {self.name} ALLOW_CONNECTIONS true")


@pytest.fixture
def outage(store_settings, request):
    return Outage(store_settings, request)


class ThreadServer:
    """uvicorn serving an ASGI app in a background thread, stopped on exit."""

    def __init__(self, asgi_app) -> None:
        import threading

        import uvicorn

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn.Config(asgi_app, host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> ThreadServer:
        from browser_helpers import wait_ready

        self.thread.start()
        wait_ready(self.url + "/healthz", timeout=60)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
