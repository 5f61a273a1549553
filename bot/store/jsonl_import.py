"""The one-time import of the old JSON-lines feedback log (``logs/feedback.jsonl``, written by the app before the
store existed) into the store: ``python -m bot store import-jsonl FILE``.

One line per event::

    {"time": "2026-11-21T18:40:00+00:00", "event": "vote", "question": "显存不足",
     "language": "zh", "answered": true, "cited": ["002_....txt#问题-..."], "vote": "down"}

``event`` is ``unanswered`` (a question without a confident match: stored as a ``question`` of tier ``none``),
``vote`` (👍/👎) or ``not_helpful``; imported rows have the origin ``import`` and no session. Unreadable lines are
skipped. Running the import again imports only lines appended since (see :func:`import_jsonl`).
"""

from __future__ import annotations

import hashlib
import json
import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import sqlalchemy as sa
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr
from sqlalchemy import exc as sa_exc

from bot.records import Event, Vote
from bot.store.connection import shown_url
from bot.store.schema import event_row, events_table, meta_table

log = logging.getLogger(__name__)


class _Line(BaseModel):
    """What a line must look like to be imported; anything else (hand edits, other tools) is skipped, as
    ``bot report --log`` skipped it."""

    model_config = ConfigDict(extra="allow")
    event: Literal["unanswered", "vote", "not_helpful"]
    question: StrictStr
    time: StrictStr
    language: StrictStr = ""
    answered: StrictBool = False
    cited: list[StrictStr] = Field(default_factory=list)
    vote: Vote | None = None
    signature: StrictStr | None = None


def import_jsonl(engine: sa.Engine, path: Path | None, *, keep_text: bool = True, where: str = "") -> int:
    """Import an old ``logs/feedback.jsonl`` once; returns rows imported. ``keep_text``: BOT_STORE_QUESTION_TEXT;
    ``where``: the store as log lines name it.

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
        with engine.begin() as conn:
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
            rows = _rows(data, start, end, marker, keep_text)
            value = f"{end} {hashlib.sha256(data[:end]).hexdigest()}"
            if found:
                conn.execute(meta_table.update().where(meta_table.c.key == marker).values(value=value))
            else:
                conn.execute(meta_table.insert().values(key=marker, value=value))
            if rows:
                conn.execute(events_table.insert(), rows)
    except sa_exc.IntegrityError:  # another replica imported the same log at the same moment
        return 0
    log.warning("store: imported %d event(s) from %s into %s", len(rows), path, where or shown_url(engine.url))
    return len(rows)


def _rows(data: bytes, start: int, end: int, marker: str, keep_text: bool) -> list[dict]:
    rows: list[dict] = []
    offset = start
    for raw in data[start:end].split(b"\n"):
        at_offset, offset = offset, offset + len(raw) + 1
        try:
            line = _Line.model_validate(json.loads(raw.decode("utf-8")))
            at = datetime.fromisoformat(line.time).astimezone(UTC).replace(tzinfo=None)
        except (ValueError, UnicodeDecodeError, RecursionError):  # ValidationError is a ValueError
            continue  # unreadable lines were skipped by `bot report --log` too
        kind = {"unanswered": "question", "vote": "vote", "not_helpful": "not_helpful"}[line.event]
        if kind == "vote" and line.vote is None:
            continue
        event = Event(
            kind,
            line.question,
            line.language,
            tier="answer" if line.answered else "none",
            cited=tuple(line.cited),
            signature=line.signature or "",
            vote=line.vote if kind == "vote" else None,
            answer_id=f"import-{marker[-12:]}-{at_offset}" if kind == "vote" else "",
        )
        row = event_row(event, keep_text=keep_text, at=at)
        row["origin"] = "import"
        rows.append(row)
    return rows
