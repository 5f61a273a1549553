"""The work per message, counted: a message is read once, ranked once, and a known history is not replayed."""

from __future__ import annotations

import pytest

from bot.answer import turn as turn_module
from bot.answer.conversation import MAX_REPLAY_TURNS
from bot.answer.turn import HISTORIES, HistoryStates, take_turn
from bot.engine import case as case_rules
from bot.engine import retrieve
from bot.engine.answerer import Answerer
from bot.kb import signature, tokenize
from fixtures.engines import count_calls, count_method_calls, hash_engine, repo_seeds_hash_settings

LOG = (
    'Traceback (most recent call last):\n  File "train.py", line 12, in <module>\n    exe.run()\n'
    "RuntimeError: (ResourceExhausted) Out of memory error on GPU 0. Cannot allocate 2.0GB memory"
)
CONVERSATION = [
    "训练时显存不足怎么办",
    "那多机呢？",
    "没用",
    "loss 变成 nan 了",
    "still nan after lowering the learning rate",
    "unrelated: how do I choose CUDA_VISIBLE_DEVICES?",
    "and on Windows?",
    "多卡训练报错 libnccl.so 找不到",
    "还是不行",
]


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    return hash_engine(repo_seeds_hash_settings(tmp_path_factory.mktemp("work")))


@pytest.fixture
def counted(monkeypatch):
    """Counting wrappers around every detector a message could be run through, and the ranking."""
    return {
        name: count_calls(monkeypatch, func)
        for name, func in (
            ("language", tokenize.detect_language),
            ("not_helpful", case_rules.is_not_helpful),
            ("follow_up", case_rules.is_follow_up),
            ("new_topic", case_rules.starts_new_topic),
            ("log", signature.looks_like_log),
            ("rank", retrieve.rank),
        )
    }


def _about(calls: list, message: str) -> list:
    """The calls made on this message's text."""
    return [arg for arg in calls if isinstance(arg, str) and message.strip() in arg]


def test_the_engine_is_an_answerer(engine):
    assert isinstance(engine, Answerer)


@pytest.mark.parametrize(
    "history, message",
    [
        ((), "loss 变成 nan 了"),
        ((), LOG),
        (("训练时显存不足怎么办",), "那多机呢？"),
        (("训练时显存不足怎么办",), "没用"),
        (("loss 变成 nan 了",), "unrelated: how do I choose CUDA_VISIBLE_DEVICES?"),
    ],
)
def test_a_message_is_read_once_and_ranked_once(engine, counted, history, message):
    HISTORIES.clear()
    _, talk = take_turn(engine, history[-1], history=history[:-1]) if history else (None, None)
    for calls in counted.values():
        calls.clear()  # the history's own turn is not counted
    turned, _ = take_turn(engine, message, conversation=talk)
    assert turned.reply.kind != "empty"
    assert len(_about(counted["language"], message)) == 1
    for cue in ("not_helpful", "follow_up", "new_topic"):
        assert len(counted[cue]) == 1, (cue, counted[cue])
    assert len(counted["log"]) == 1
    assert len(counted["rank"]) == 1


def test_a_clicked_option_runs_no_search(engine, counted, monkeypatch):
    HISTORIES.clear()
    first, talk = take_turn(engine, "训练时显存不足怎么办")
    key = first.options[0]["value"] if first.options else first.reply.shown[-1].hit.section.key
    searched = count_method_calls(monkeypatch, engine, "evidence")
    for calls in counted.values():
        calls.clear()
    turned, talk = take_turn(engine, key, conversation=talk)
    assert turned.reply.kind == "section" and turned.reply.shown[0].hit.section.key == key
    assert talk.planned is not None and talk.planned.reply == "section"  # the plan says so; nothing is searched
    assert counted["rank"] == [] and searched == []


def _public(turned) -> dict:
    return {k: v for k, v in turned.to_json().items() if k != "answer_id"}


def test_a_nine_turn_conversation_asks_the_engine_once_per_turn_and_replies_as_a_cold_replay(engine, monkeypatch):
    HISTORIES.clear()
    asked = count_method_calls(monkeypatch, engine, "ask")
    warm = []
    for n, message in enumerate(CONVERSATION):
        before = len(asked)
        turned, _ = take_turn(engine, message, history=CONVERSATION[:n])
        assert len(asked) - before == 1, (n, message, asked[before:])
        warm.append(_public(turned))
    assert len(CONVERSATION) == MAX_REPLAY_TURNS + 1

    cold = []
    for n, message in enumerate(CONVERSATION):
        HISTORIES.clear()  # another replica, or an evicted state: the history is replayed
        before = len(asked)
        turned, _ = take_turn(engine, message, history=CONVERSATION[:n])
        assert len(asked) - before == n + 1
        cold.append(_public(turned))
    assert warm == cold


def test_a_cached_state_is_a_copy(engine, monkeypatch):
    states = HistoryStates()
    monkeypatch.setattr(turn_module, "HISTORIES", states)
    first, talk = take_turn(engine, CONVERSATION[0])
    talk.turns[-1].shown.append("changed by the caller")
    talk.turns.append(talk.turns[-1])
    again = states.get(engine, (CONVERSATION[0],))
    assert again is not None and len(again) == 1 and "changed by the caller" not in again[0].shown
    again[0].shown.clear()
    assert states.get(engine, (CONVERSATION[0],))[0].shown == [s.hit.section.key for s in first.reply.shown]


def test_states_are_bounded_by_bytes_and_a_longer_history_is_replayed(engine, monkeypatch):
    # Before: bounded by a count of deep-copied states (256 × ~210 KB); now by the bytes of their compressed JSON.
    measured = HistoryStates()
    monkeypatch.setattr(turn_module, "HISTORIES", measured)
    for message in CONVERSATION[:3]:
        take_turn(engine, message)
    sizes = [len(turn_module._pack(measured.get(engine, (m,)))) for m in CONVERSATION[:3]]
    assert measured.bytes == sum(sizes) and max(sizes) < 2_000  # one turn's state: under 2 KB
    states = HistoryStates(max_bytes=sizes[1] + sizes[2])
    monkeypatch.setattr(turn_module, "HISTORIES", states)
    for message in CONVERSATION[:3]:
        take_turn(engine, message)
    assert states.get(engine, (CONVERSATION[0],)) is None and states.get(engine, (CONVERSATION[2],)) is not None
    assert states.bytes <= sizes[1] + sizes[2] and len(states) == 2
    monkeypatch.setattr(turn_module, "HISTORIES", HistoryStates())
    asked = count_method_calls(monkeypatch, engine, "ask")
    long_history = CONVERSATION + ["训练时显存不足怎么办"]
    for n in range(len(long_history)):  # turn by turn: every state a replay rebuilds exactly is kept
        take_turn(engine, long_history[n], history=long_history[:n])
    asked.clear()
    take_turn(engine, "那多机呢？", history=long_history)
    replayed = len(asked)
    monkeypatch.setattr(turn_module, "HISTORIES", HistoryStates(max_bytes=0))
    asked.clear()
    take_turn(engine, "那多机呢？", history=long_history)
    assert replayed == len(asked) > 1  # a history longer than a replay rebuilds is replayed, as without the cache
    assert states.key(["ab", "c"]) != states.key(["a", "bc"])


@pytest.mark.parametrize("message", ["GPU out of memory during training, what can I do?", "训练时显存不足怎么办"])
def test_a_shown_section_s_language_is_read_from_the_index_not_detected(engine, counted, message):
    """The reply says "original Chinese" or "no English summary" by the language the build stored in the section's
    facts (SectionFacts.language): the only text whose language a turn detects is the message."""
    HISTORIES.clear()
    turned, _ = take_turn(engine, message)
    assert turned.reply.shown, turned.reply.markdown
    assert counted["language"] == _about(counted["language"], message) and len(counted["language"]) == 1
