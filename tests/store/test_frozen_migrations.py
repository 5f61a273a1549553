"""Migrations are frozen: re-running them on a database written at any version gives the same rows, whatever the
engine's rules say today (issue 34). Version 4 reads stored messages with the retry rule of its time, copied into
:mod:`bot.store.migrations`; before, it imported today's ``bot.engine.case.says_failed``, so a change of that rule
changed what an upgrade stored."""

from __future__ import annotations

import ast
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa

import bot.engine.case
from bot.store import migrations
from bot.store.connection import make_engine
from bot.store.schema import MISREAD, events_table, meta_table
from fixtures.source import parse

T0 = datetime(2026, 11, 20, 9, 0)


def _row(n: int, kind: str, question: str | None, session: str, seconds: float) -> dict:
    return {
        "at": T0 + timedelta(seconds=seconds),
        "kind": kind,
        "session": session,
        "question": question,
        "language": "zh",
        "tier": "answer" if kind == "not_helpful" else "tentative",
        "confidence": 0.4 if kind == "question" else None,
        "cited": ["paddle.md#nccl"],
        "origin": "ui",
        "event_id": f"e{n}",
    }


# Turns stored before version 4: a "didn't help" row, then (within the turn) the message as a question row.
ROWS = [
    _row(1, "question", "多卡训练只有一个进程在跑", "procs", 0),
    _row(2, "not_helpful", "多卡训练只有一个进程在跑", "procs", 30),
    # Today's rule reads this as a failed fix; the rule of version 4 did not, so version 4 made row 2 misread.
    _row(3, "question", "我发现好像还是只有一个进程", "procs", 30.1),
    _row(4, "question", "TensorFlow takes all GPU memory", "keras", 0),
    _row(5, "not_helpful", "TensorFlow takes all GPU memory", "keras", 30),
    _row(6, "question", "Keras model.fit does not use my GPU", "keras", 30.2),  # a new question: misread
    _row(7, "question", "训练时显存不足怎么办", "oom", 0),
    _row(8, "not_helpful", "训练时显存不足怎么办", "oom", 40),
    _row(9, "question", "batch_size 改成 1 试了，还是爆显存", "oom", 40.1),  # says it failed: stays
    _row(10, "not_helpful", "loss 变成 nan", "nan", 50),  # a bare "没用": no question row, stays
]
MISREAD_AFTER_V4 = {"e2", "e5"}


def _database_at(folder: Path, version: int) -> sa.Engine:
    """A SQLite database as the app left it at ``version``: its migrations run, the rows written, the version kept."""
    folder.mkdir(parents=True)
    engine = make_engine(sa.URL.create("sqlite", database=str(folder / "bot.sqlite3")))
    with engine.begin() as conn:
        for step in migrations.MIGRATIONS[:version]:
            step(conn)
        conn.execute(events_table.insert(), ROWS)
        conn.execute(meta_table.insert().values(key="schema_version", value=str(version)))
    return engine


def _stored(engine: sa.Engine) -> list[tuple]:
    with engine.connect() as conn:
        rows = conn.execute(sa.select(events_table).order_by(events_table.c.id)).all()
    engine.dispose()
    return [tuple(r) for r in rows]


RULES = {
    "today's": None,
    "every message a failed fix": lambda *args, **kwargs: True,
    "no message a failed fix": lambda *args, **kwargs: False,
}


@pytest.mark.parametrize("version", range(1, migrations.SCHEMA_VERSION))
def test_an_upgrade_stores_the_same_rows_whatever_todays_retry_rule_says(tmp_path, monkeypatch, version):
    stored = {}
    for name, rule in RULES.items():
        if rule is not None:
            monkeypatch.setattr(bot.engine.case, "says_failed", rule)
        engine = _database_at(tmp_path / f"{len(stored)}", version)
        assert migrations.upgrade(engine) == version
        stored[name] = _stored(engine)
        monkeypatch.undo()
    assert stored["every message a failed fix"] == stored["today's"] == stored["no message a failed fix"]
    kind = events_table.c.keys().index("kind")
    event_id = events_table.c.keys().index("event_id")
    misread = {row[event_id] for row in stored["today's"] if row[kind] == MISREAD}
    # Version 4 runs on databases from before it, with its own rule; a version-4 database keeps its rows.
    assert misread == (MISREAD_AFTER_V4 if version < 4 else set())


def test_the_frozen_rule_is_not_todays():
    """The copy matters: today's rule and version 4's disagree on a message stored before version 4."""
    message = "我发现好像还是只有一个进程"
    assert bot.engine.case.says_failed(message) and not migrations._v4_says_failed(message)


def test_migrations_are_a_list_in_order_and_import_no_engine_rule():
    assert [m.__name__ for m in migrations.MIGRATIONS] == [
        "v1_tables",
        "v2_event_id",
        "v3_answer_id_on_questions",
        "v4_misread_retries",
        "v5_vote_comment",
    ]
    assert migrations.SCHEMA_VERSION == len(migrations.MIGRATIONS)
    tree = parse(Path(migrations.__file__))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    # The store's own tables and errors, the standard library and SQLAlchemy: no rule the engine may change.
    assert not {m for m in imported if m and m.startswith("bot.") and not m.startswith("bot.store")}, imported
