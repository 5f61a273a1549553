"""The store's tables, and how an :class:`~bot.records.Event` becomes one of their rows.

Two tables: ``bot_meta`` (key/value: the schema version, the session salt, what was imported) and ``bot_events``
(one row per question, "didn't help" or vote). These are *today's* tables: a fresh database gets them whole from
the first migration, and each later migration (:mod:`bot.store.migrations`) adds only what an older database
lacks. A change to a table here therefore comes with a new migration, never an edit of an old one.

    >>> row = event_row(Event("question", "显存不足", "zh", tier="answer", confidence=0.9), session="h")
    >>> row["kind"], row["question"], row["tier"], row["origin"], row["vote"], len(row["event_id"])
    ('question', '显存不足', 'answer', 'app', None, 32)
    >>> event_row(Event("question", "secret", "en"), keep_text=False)["question"] is None
    True
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import sqlalchemy as sa

from bot.limits import QUESTION_CHARS, VOTE_COMMENT_CHARS
from bot.records import EVENT_KINDS, VOTE_REASONS, Event
from bot.records import ORIGINS as EDGE_ORIGINS

MAX_QUESTION_CHARS = QUESTION_CHARS  # a pasted log is kept cut; its signature says what it was about
KINDS = EVENT_KINDS
ORIGINS = (*EDGE_ORIGINS, "app", "import")  # the edges', then rows from before schema 2 and the old log
MISREAD = "misread"  # a "didn't help" the user never said (version 4); kept for audit, outside KINDS: never counted

metadata = sa.MetaData()

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
    sa.Column("kind", sa.String(16), nullable=False, index=True),  # question | not_helpful | vote (| misread)
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
is_vote = events_table.c.kind == "vote"
# Version 3: unique among votes only, so a question row and the votes on its reply share the answer_id.
vote_answer_index = sa.Index(
    "ux_bot_events_vote_answer", events_table.c.answer_id, unique=True, sqlite_where=is_vote, postgresql_where=is_vote
)


def now() -> datetime:
    """The time as stored: UTC without a zone (the same on SQLite and PostgreSQL)."""
    return datetime.now(UTC).replace(tzinfo=None)


def event_row(
    event: Event,
    *,
    session: str = "",
    keep_text: bool = True,
    latency_ms: float | None = None,
    at: datetime | None = None,
) -> dict:
    """The ``bot_events`` row of ``event``: ``session`` is already hashed (:meth:`bot.store.database.Store.hash_session`);
    ``keep_text=False`` (``BOT_STORE_QUESTION_TEXT=0``) keeps no question, signature or comment.

    Raises ValueError for an unknown kind or a vote that is neither up nor down.
    """
    if event.kind not in KINDS:
        raise ValueError(f"unknown event kind {event.kind!r}; expected one of {', '.join(KINDS)}")
    from bot.engine.read import sanitize  # lone surrogates and control characters from pasted logs

    question = sanitize(event.question or "", MAX_QUESTION_CHARS)[0] if keep_text else None
    signature = sanitize(event.signature, MAX_QUESTION_CHARS)[0] if (keep_text and event.signature) else None
    # A question's: the reply's, which its votes name. No control characters: PostgreSQL refuses a NUL.
    answer_id = sanitize((event.answer_id or "")[:80], 80)[0].strip() or None
    if event.kind == "vote":
        if event.vote not in ("up", "down"):
            raise ValueError(f"vote must be 'up' or 'down', not {event.vote!r}")
        answer_id = answer_id or f"anon-{uuid.uuid4().hex}"
    origin = getattr(event, "origin", "") or "app"
    return {
        "at": at or now(),
        "kind": event.kind,
        "session": session,
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
        if (event.kind == "vote" and keep_text and event.comment)
        else None,
    }
