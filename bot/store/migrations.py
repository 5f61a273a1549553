"""The schema's versions: one function per version, in order, each frozen once it has shipped.

    @migration
    def v6_something(conn: sa.Connection) -> None:
        '''What version 6 adds, and why.'''

:func:`migration` appends the function to :data:`MIGRATIONS`, so ``MIGRATIONS[n]`` upgrades version ``n`` to
``n + 1`` and :data:`SCHEMA_VERSION` is their count (the pattern of simonw/llm's ``migrations.py``). The app runs
the missing ones at start-up (:func:`upgrade`): all in one transaction, under a PostgreSQL advisory lock or
SQLite's write lock, so replicas starting together do not race and a crash leaves the version found.

A migration is frozen: once released, its function never changes, and it never imports a rule the app may change
later (a heuristic of :mod:`bot.engine`, a limit of :mod:`bot.limits`): re-running it on a database written at any
version must give the same rows whatever today's engine thinks. A rule a migration needs is copied into it as it
was when the migration was written (see :func:`_v4_says_failed`).

The tables are today's (:mod:`bot.store.schema`): a fresh database gets them whole from :func:`v1_tables`, and each
later step adds only what is missing, so a step that adds a column or an index checks first.

    >>> SCHEMA_VERSION, [m.__name__ for m in MIGRATIONS][:2]
    (5, ['v1_tables', 'v2_event_id'])
"""

from __future__ import annotations

import logging
import re
import secrets
from collections.abc import Callable
from datetime import timedelta

import sqlalchemy as sa

from bot.store import StoreError
from bot.store.schema import MISREAD, event_id_index, events_table, meta_table, metadata, vote_answer_index

log = logging.getLogger(__name__)

Migration = Callable[[sa.Connection], None]
MIGRATIONS: list[Migration] = []  # MIGRATIONS[n] upgrades version n to n + 1
_ADVISORY_LOCK = 0x6275_6773  # any constant shared by all replicas


def migration(step: Migration) -> Migration:
    """Append ``step`` as the next version; the order of the decorated functions in this file is the order."""
    MIGRATIONS.append(step)
    return step


@migration
def v1_tables(conn: sa.Connection) -> None:
    """The tables, and the salt that session ids are hashed with."""
    metadata.create_all(conn, checkfirst=True)
    conn.execute(meta_table.insert().values(key="session_salt", value=secrets.token_hex(16)))


@migration
def v2_event_id(conn: sa.Connection) -> None:
    """``event_id``: replaying the local spool after a crash must not write a row twice."""
    columns = {c["name"] for c in sa.inspect(conn).get_columns(events_table.name)}
    if "event_id" not in columns:  # a version-1 database (a fresh one got the column from v1_tables)
        conn.execute(sa.text(f"ALTER TABLE {events_table.name} ADD COLUMN event_id VARCHAR(32)"))
    event_id_index.create(conn, checkfirst=True)


@migration
def v3_answer_id_on_questions(conn: sa.Connection) -> None:
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


# ---------------------------------------------------------------- version 4 and the rule it froze

_V4_SAME_TURN = timedelta(seconds=5)  # a turn's events are recorded together
_V4_BATCH = 500  # rows per UPDATE
_V4_QUESTION_CHARS = 2_000  # bot.limits.QUESTION_CHARS when version 4 was written

# Frozen copies of bot.engine.case as of commit 5c84ae3 (2026-11-24, "Store schema 4"), where version 4 was written.
# Today's rule has moved on (it reads "我发现好像还是只有一个进程" as a failed fix; the rule of version 4 did not):
# importing it would make re-running version 4 on the same rows give other kinds. Never edit these.
_V4_CJK = re.compile(r"[\u4e00-\u9fff]")
_V4_NOT_HELPFUL_EN = re.compile(
    r"\b(?:did ?n[o']?t|does ?n[o']?t|do ?n[o']?t|not|never|wo ?n[o']?t)\s+(?:really\s+)?"
    r"(?:help|helped|helping|work|worked|working|fix|fixed|solve|solved)\b|"
    r"\bno luck\b|\bnot helpful\b|\bunhelpful\b|\buseless\b|\bsame (?:error|problem|issue)\b|"
    r"\bstill\s+(?:fails|failing|broken|crashes|crashing|the same|happens|there)\b|"
    r"\b(?:something|anything) else\b|\bother (?:options?|solutions?|ideas?|fix(?:es)?|answers?|causes?)\b|"
    r"\bnext (?:one|option|answer|suggestion)\b|^\s*(?:nope|no|wrong|next)\W*$",
    re.IGNORECASE,
)
_V4_FILLER_EN = frozenset(
    "that this it the a an still sorry thanks thank you ok okay please try another one answer suggestion solution "
    "so but and unfortunately really at all for me i tried any have has was is".split()
)
_V4_NOT_HELPFUL_ZH = re.compile(
    r"没用|没有用|不管用|没啥用|不行|没解决|没有解决|无效|不对|不是这个|换一个|其他方法|其它方法|别的方法|"
    r"还有别的|还有其他|试过了|不起作用|没效果|没有效果|还是报错|还是一样|依然报错|仍然报错|未解决|未能解决|没能解决"
)
_V4_FAILED = re.compile(
    r"没用|没有用|不管用|没啥用|不行|没解决|没有解决|未解决|未能解决|没能解决|无效|不起作用|没效果|没有效果|不是这个|"
    r"还是(?:不|没|会|报|一样|有|出现|爆|卡|失败|错|提示|显示|oom|nan|hang)|依然|仍然|仍旧|照样|又出现|又报|"
    r"也一样|试过|试了|"
    r"\b(?:did ?n[o']?t|does ?n[o']?t|do ?n[o']?t|not|never|wo ?n[o']?t)\s+(?:really\s+)?"
    r"(?:help|helped|helping|work|worked|working|fix|fixed|solve|solved|change|changed)\b|"
    r"\bno (?:luck|change|difference)\b|\bnot helpful\b|\bunhelpful\b|\buseless\b|\bnothing changed\b|"
    r"\bsame (?:error|problem|issue|result)\b|\bstill\b(?!\s+(?:want|wish|wonder|need|like|supported|support))|"
    r"\btried\b|\beven (?:after|with)\b",
    re.IGNORECASE,
)


def _v4_is_not_helpful(message: str) -> bool:
    """``bot.engine.case.is_not_helpful`` as of commit 5c84ae3, frozen for version 4 (see the comment above)."""
    message = message.strip()
    if not message or len(message) > 80 or "\n" in message:
        return False
    if _V4_CJK.search(message):
        if not _V4_NOT_HELPFUL_ZH.search(message):
            return False
        rest = _V4_NOT_HELPFUL_ZH.sub("", message)
        rest = re.sub(
            r"[\s\W]|还是|依然|仍然|好像|似乎|这个|那个|方法|办法|试了|一下|了|啊|呀|吧|的|也|都|还|再|给|我|换",
            "",
            rest,
        )
        return len(rest) <= 2
    match = _V4_NOT_HELPFUL_EN.search(message)
    if not match:
        return False
    rest = (message[: match.start()] + " " + message[match.end() :]).lower()
    words = [w for w in re.findall(r"[a-z0-9_.]+", rest) if w not in _V4_FILLER_EN]
    return len(words) <= 1


def _v4_says_failed(message: str) -> bool:
    """``bot.engine.case.says_failed`` as it was when version 4 was written (commit 5c84ae3), frozen here: version 4
    must reclassify the same rows on every run, and the engine's rule keeps changing (it is tuned on conversations).

    >>> [_v4_says_failed(m) for m in ("没用", "还是不行", "that didn't help", "still OOM after allow_growth")]
    [True, True, True, True]
    >>> [_v4_says_failed(m) for m in ("Keras model.fit does not use my GPU", "我发现好像还是只有一个进程")]
    [False, False]
    """
    text = message[:_V4_QUESTION_CHARS]
    return _v4_is_not_helpful(text) or bool(_V4_FAILED.search(text))


@migration
def v4_misread_retries(conn: sa.Connection) -> None:
    """Before version 4 a turn the engine read as a retry was stored as "didn't help" even when the user asked a new
    question ("Keras model.fit does not use my GPU" after a TensorFlow answer): /admin counted complaints no one made.
    Such a turn was stored as a ``not_helpful`` row followed by a ``question`` row with the message (a bare "没用"
    got no question row); where that message does not say the fix failed (:func:`_v4_says_failed`, the rule of
    the time, frozen) the ``not_helpful`` row becomes :data:`~bot.store.schema.MISREAD`: kept, no longer counted.
    Rows without the text (``BOT_STORE_QUESTION_TEXT=0``) cannot be read again and are left as they are.
    """
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
                t.at <= row.at + _V4_SAME_TURN,
            )
            .order_by(t.id)
            .limit(1)
        ).scalar()
        if said and not _v4_says_failed(said):
            misread.append(row.id)
    for start in range(0, len(misread), _V4_BATCH):
        conn.execute(events_table.update().where(t.id.in_(misread[start : start + _V4_BATCH])).values(kind=MISREAD))
    if misread:
        log.warning('store: %d stored "didn\'t help" row(s) were new questions; now kind %r', len(misread), MISREAD)


@migration
def v5_vote_comment(conn: sa.Connection) -> None:
    """``comment``: a vote's free text (a 👎 says what was wrong in its own words, issue 35)."""
    columns = {c["name"] for c in sa.inspect(conn).get_columns(events_table.name)}
    if "comment" not in columns:  # a fresh database got the column from v1_tables
        conn.execute(sa.text(f"ALTER TABLE {events_table.name} ADD COLUMN comment TEXT"))


SCHEMA_VERSION = len(MIGRATIONS)


def stored_version(conn: sa.Connection) -> int:
    """The schema version the database says it has; 0 for an empty database."""
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
        found = stored_version(conn)
        if found < SCHEMA_VERSION and conn.dialect.name == "sqlite":
            # Python's sqlite3 runs DDL outside any transaction until the first INSERT: begin one ourselves (which
            # also makes a second app on the same file wait here), then look again under the lock.
            conn.exec_driver_sql("BEGIN IMMEDIATE")
            found = stored_version(conn)
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
