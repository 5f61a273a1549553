"""Issue 35: a pasted log is read by its last error and causes, and answered in the user's language."""

from __future__ import annotations

import pytest

from bot.answer.turn import take_turn
from bot.diagnose.compat import check, table_for
from bot.diagnose.environment import read_environment
from bot.engine.read import read_message
from bot.engine.subjects import Lexicon
from fixtures.engines import one_section_engine
from fixtures.logs import NCCL_LOG


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    return one_section_engine(tmp_path_factory.mktemp("logs"))


def test_a_library_named_by_trace_and_hint_lines_is_not_a_missing_library():
    env = read_environment(NCCL_LOG)
    assert env.missing_libraries == () and "library_not_found" not in env.signals
    assert "missing_library" not in check(env, table_for(None)).codes


def test_a_bare_log_is_told_apart_from_a_log_with_the_users_words():
    lexicon = Lexicon.load()
    assert read_message(NCCL_LOG, limit=100_000, lexicon=lexicon).bare_log
    assert not read_message("多机训练报错\n" + NCCL_LOG, limit=100_000, lexicon=lexicon).bare_log
    assert not read_message("Why does this fail?\n" + NCCL_LOG, limit=100_000, lexicon=lexicon).bare_log


def test_a_bare_log_in_a_chinese_chat_is_answered_in_chinese(engine):
    first, talk = take_turn(engine, "多机训练报错了，怎么办")
    assert first.reply.language == "zh"
    second, _ = take_turn(engine, NCCL_LOG, conversation=talk)
    assert second.reply.language == "zh"
    alone, _ = take_turn(engine, NCCL_LOG)  # no earlier turn: the log's own language
    assert alone.reply.language == "en"
