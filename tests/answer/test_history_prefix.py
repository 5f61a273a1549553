"""Plain history whose beginning was seen: the turn continues from the state after that beginning, and answers
exactly as a cold replay of the whole history does (issue 45)."""

from __future__ import annotations

import random

import pytest

from bot.answer import turn as turn_module
from bot.answer.conversation import MAX_REPLAY_TURNS
from bot.answer.turn import HistoryStates, replayed, take_turn
from fixtures.engines import count_method_calls, hash_engine, repo_seeds_hash_settings

LOG = (
    "训练到一半显存不足，日志如下\n"
    + "".join(f"I1126 22:{k % 60:02d}:00 step {k} loss={1 / (k + 1):.5f} lr=0.001\n" for k in range(40))
    + "RuntimeError: (ResourceExhausted) Out of memory error on GPU 0. Cannot allocate 2.0GB memory"
)
POOL = [
    "训练时显存不足怎么办",
    "那多机呢？",
    "没用",
    "loss 变成 nan 了",
    "still nan after lowering the learning rate",
    "unrelated: how do I choose CUDA_VISIBLE_DEVICES?",
    "and on Windows?",
    "多卡训练报错 libnccl.so 找不到",
    "还是不行",
    "谢谢",
    "TensorFlow does not see my GPU",
    "CUDA 12.2, driver 535, paddlepaddle-gpu 2.5.2",
    LOG,
]


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    return hash_engine(repo_seeds_hash_settings(tmp_path_factory.mktemp("work")))


def _public(turned) -> dict:
    return {k: v for k, v in turned.to_json().items() if k != "answer_id"}


def _cold(engine, monkeypatch, message, history):
    monkeypatch.setattr(turn_module, "HISTORIES", HistoryStates())
    turned, talk = take_turn(engine, message, history=history)
    return _public(turned), talk.turns


def test_random_histories_continue_from_a_seen_beginning_exactly_as_a_replay(engine, monkeypatch):
    rng = random.Random(45)
    pool = [*POOL, engine.sections[3].key]  # a clicked option too
    asked = count_method_calls(monkeypatch, engine, "ask")
    for case in range(14):
        history = [rng.choice(pool) for _ in range(rng.randint(1, MAX_REPLAY_TURNS + 2))]
        message = rng.choice(pool)
        expected = _cold(engine, monkeypatch, message, history)
        states = HistoryStates()
        monkeypatch.setattr(turn_module, "HISTORIES", states)
        window = history[-MAX_REPLAY_TURNS:]
        seen = rng.randint(1, len(window))
        # The beginning of the history lived here turn by turn (plain history each time), or sent once as history.
        if case % 2:
            for n in range(seen):
                take_turn(engine, window[n], history=window[:n])
        else:
            take_turn(engine, "谢谢", history=window[:seen])
        asked.clear()
        turned, talk = take_turn(engine, message, history=history)
        assert (_public(turned), talk.turns) == expected, (case, history, message)
        # Only what was not seen is replayed: a live turn's state serves a replay when the replay reads it whole.
        lived_whole = case % 2 and replayed(window[seen - 1]) == window[seen - 1]
        known = seen if not case % 2 or lived_whole else seen - 1
        assert len(asked) == len(window) - known + 1, (case, seen, len(asked))


def test_a_long_message_answered_live_is_not_the_state_a_replay_reaches(engine, monkeypatch):
    """A live turn reads a pasted log whole, a replay reads its head and last line: only the replay's state is kept,
    so the next turn is the cold replay's whether this process saw the log or not."""
    assert replayed(LOG) != LOG
    expected = _cold(engine, monkeypatch, "还是不行", [POOL[0], LOG])
    states = HistoryStates()
    monkeypatch.setattr(turn_module, "HISTORIES", states)
    take_turn(engine, POOL[0])
    take_turn(engine, LOG, history=[POOL[0]])
    assert states.get(engine, [POOL[0], LOG]) is None and states.get(engine, [POOL[0]]) is not None
    asked = count_method_calls(monkeypatch, engine, "ask")
    turned, talk = take_turn(engine, "还是不行", history=[POOL[0], LOG])
    assert (_public(turned), talk.turns) == expected
    assert len(asked) == 2  # the log replayed (its head), then the message


def test_every_prefix_has_its_own_key_and_a_state_is_kept_whole(engine, monkeypatch):
    keys = HistoryStates.keys(["ab", "c", "d"])
    assert keys[:2] == HistoryStates.keys(["ab", "c"]) and len(set(keys)) == 3
    assert HistoryStates.key(["ab", "c"]) != HistoryStates.key(["a", "bc"])
    states = HistoryStates()
    monkeypatch.setattr(turn_module, "HISTORIES", states)
    long_search = "显存不足 " * 700  # a search text longer than a state token keeps (2,000 characters)
    _, talk = take_turn(engine, POOL[0])
    talk.turns[-1].search = long_search
    talk.turns[-1].led = [f"k{n}" for n in range(40)]  # more items than a token keeps
    states.put(engine, ["x"], talk.turns)
    assert states.get(engine, ["x"]) == talk.turns
    assert states.longest(engine, ["x", "y", "z"])[0] == 1 and states.longest(engine, ["y", "x"]) == (0, [])
