"""Retention: rows older than ``BOT_RETENTION_DAYS`` are deleted by the app (at start-up and hourly), with a log
line saying how many. Only the app's store purges; a reader (``python -m bot report``) never deletes.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

import sqlalchemy as sa

from bot.store.schema import events_table
from bot.store.schema import now as _now

log = logging.getLogger(__name__)


def purge(engine: sa.Engine, retention_days: int, now: datetime | None = None) -> int:
    """Delete rows recorded more than ``retention_days`` before ``now`` (UTC, naive); 0 days keeps everything.
    Returns how many rows went."""
    if not retention_days:
        return 0
    cutoff = (now or _now()) - timedelta(days=retention_days)
    with engine.begin() as conn:
        removed = conn.execute(events_table.delete().where(events_table.c.at < cutoff)).rowcount or 0
    if removed:
        log.warning(
            "store: retention removed %d event(s) recorded before %s (BOT_RETENTION_DAYS=%d)",
            removed,
            cutoff.isoformat(timespec="seconds"),
            retention_days,
        )
    return removed
