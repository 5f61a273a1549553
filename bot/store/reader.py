"""Reading the store: the rows /admin and ``python -m bot report`` summarise, and a cheap version for their caches.

Reading never changes the database: a reader checks the schema is the one this code reads and says what to run
when it is not (:func:`require_current`).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

import sqlalchemy as sa

from bot.store import StoreError
from bot.store.connection import shown_url
from bot.store.migrations import SCHEMA_VERSION
from bot.store.schema import KINDS, events_table


def rows(engine: sa.Engine, since: datetime | None = None, kinds: Iterable[str] = KINDS) -> list[dict]:
    """Events since ``since`` (UTC, naive), oldest first; ``kinds`` leaves out the misread ones by default."""
    query = (
        sa.select(events_table)
        .where(events_table.c.kind.in_(list(kinds)))
        .order_by(events_table.c.at, events_table.c.id)
    )
    if since is not None:
        query = query.where(events_table.c.at >= since)
    with engine.connect() as conn:
        return [dict(r._mapping) for r in conn.execute(query)]


def version(engine: sa.Engine) -> tuple[int, int]:
    """(rows, highest id): changes whenever a row is written or removed; cheap, for a reader's cache."""
    with engine.connect() as conn:
        count, top = conn.execute(sa.select(sa.func.count(), sa.func.max(events_table.c.id))).one()
    return int(count or 0), int(top or 0)


def require_current(engine: sa.Engine, found: int) -> None:
    """Raise StoreError (with the command to run) unless the schema ``found`` is the one this code reads."""
    if found == SCHEMA_VERSION:
        return
    fix = (
        "start the app once (python app.py): it creates or upgrades the schema"
        if found < SCHEMA_VERSION
        else "run the newer version of this tool"
    )
    raise StoreError(
        f"the store {shown_url(engine.url)} has schema version {found}, this tool reads version {SCHEMA_VERSION}: {fix}"
    )
