"""What earlier turns cost: a conversation's 9th turn, and a long history, against the same question alone.

Measured in one run, as ratios of medians (no test asserts on time), through ``POST /api/ask``:

- ``state``: turn 9 sent with the ``state`` of turn 8's reply (the conversation lived turn by turn) against the
  same question alone; target :data:`TARGET_RATIO` (1.3 ×).
- ``last_turn``: turn 9 with the 8 earlier questions as plain history, the server having answered turns 1-8
  (its cache of states rebuilt from history, :class:`bot.answer.turn.HistoryStates`, knows it).
- ``prefix``: turn 9 with the 8 earlier questions as plain history, the server having answered turns 1-7 only (turn
  8 went elsewhere, or was edited): the turn continues from the state after the 7 it saw and replays one
  (:meth:`bot.answer.turn.HistoryStates.longest`); target for it and ``last_turn``: :data:`TARGET_RATIO` (issue 45).
- ``cold``: the same with a wording the server never saw (a replica, a restart): the history is replayed, each
  earlier turn read for a few hundred characters (:func:`bot.answer.turn.replayed`).
- ``long``: a 10,000-character question after 8 turns of 10,000 characters, against one such question alone:
  with the state of the 8th (target :data:`TARGET_LONG_RATIO`, 2 ×), and as plain history never seen
  (``history_ratio``: the replay).
- ``long_plain``: a 100,000-character question after 7 turns of 14,000 characters, the conversation lived turn by
  turn as plain history (what an OpenAI-compatible client sends), against that question alone; target
  :data:`TARGET_LONG_RATIO` (issue 45).

Each round gives every text its own wording (:func:`bench.concurrency.variant`; the engine caches a text's vector),
so no cache answers a measured request but the one the kind is about, and sends the kinds in alternating order so
they see the same load.

    python -m bench.history                   # the hash embedder over the repository's seeds (seconds)
    python -m bench.history --embedder real   # the index in ./index with its model (minutes)
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

from bench.concurrency import ASK_PATH, _check_loopback
from bench.concurrency import variant as wording_of
from bench.measure import percentiles

TARGET_RATIO = 1.3  # turn 9 with its state, against the question alone
TARGET_LONG_RATIO = 2.0  # 8 history turns of 10,000 characters, against one 10,000-character question
HISTORY_TURNS = 8  # turn 9 carries the 8 questions before it
LONG_CHARS = 10_000
PLAIN_TURNS, PLAIN_TURN_CHARS, PLAIN_QUESTION_CHARS = 7, 14_000, 100_000  # issue 45's long plain history

# (name, the 8 earlier questions, the last question). Written as people type in a chat widget.
CONVERSATIONS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    (
        "zh-oom-then-nan",
        (
            "训练时显存不足 out of memory",
            "batch size 已经调到 8 了还是 OOM",
            "用的是 PaddlePaddle 2.5，CUDA 11.7",
            "单卡 V100 32G",
            "FLAGS_fraction_of_gpu_memory_to_use 怎么设？",
            "设了 0.5 还是不行",
            "会不会是显存碎片",
            "nvidia-smi 显示还有别的进程占着显存",
        ),
        "loss 变成 nan 了",
    ),
    (
        "en-tf-gpu-then-memory",
        (
            "TensorFlow does not see my GPU",
            "tf.config.list_physical_devices('GPU') returns an empty list",
            "CUDA 12.2 and cuDNN 8.9 are installed",
            "I'm on Ubuntu 22.04 with driver 535",
            "pip install tensorflow[and-cuda] did not help",
            "still empty after a reboot",
            "now it sees the GPU inside Docker",
            "but training stops with ResourceExhaustedError",
        ),
        "how do I stop TensorFlow from taking all the GPU memory?",
    ),
    (
        "zh-nccl-follow-up",
        (
            "多卡训练报错 libnccl.so 找不到",
            "export LD_LIBRARY_PATH 之后还是报错",
            "nccl 版本是 2.18",
            "单机两卡",
            "ping 是通的",
            "没用",
            "换成 paddle.distributed.launch 启动",
            "现在报 ncclSystemError",
        ),
        "那多机呢？",
    ),
)


def long_text(topic: str, n: int, chars: int = LONG_CHARS) -> str:
    """A pasted log of ``chars`` characters about ``topic``: the user's line, training output, the error."""
    head = f"{topic} ({n})\n"
    error = "\nRuntimeError: (ResourceExhausted) Out of memory error on GPU 0. Cannot allocate 2.0GB memory"
    lines = "".join(
        f"I1126 22:{k % 60:02d}:{k % 57:02d} step {k} loss={1 / (k + 1):.5f} lr=0.001\n" for k in range(chars // 40 + 1)
    )
    return head + lines[: chars - len(head) - len(error)] + error


def _post(client, url: str, body: dict) -> tuple[float, dict | None]:
    started = time.perf_counter()
    response = client.post(url + ASK_PATH, json=body)
    ms = (time.perf_counter() - started) * 1000
    return ms, (response.json() if response.status_code == 200 else None)


def measure(client, url: str, rounds: int, *, wording: int = 0) -> dict:
    """``rounds`` rounds over :data:`CONVERSATIONS` with ``client`` (an httpx or Starlette test client) at ``url``;
    ``wording`` shifts every wording (a warm-up's texts are never measured)."""

    def variant(text: str, k: int) -> str:
        return wording_of(text, wording + k)

    kinds = ("alone", "state", "last_turn", "prefix", "cold")
    samples = {name: {kind: [] for kind in kinds} for name, _, _ in CONVERSATIONS}
    long: dict[str, list[float]] = {"alone": [], "state": [], "history": []}
    plain: dict[str, list[float]] = {"alone": [], "history": []}
    errors = 0
    for n in range(1, rounds + 1):
        for name, history, question in CONVERSATIONS:
            asked = variant(question, n)
            turns = [variant(turn, n) for turn in history]
            state = None
            for k, turn in enumerate(turns):  # the conversation as the client lived it, untimed
                _, data = _post(client, url, {"question": turn, "history": turns[:k]})
                errors += data is None
                state = data and data.get("state")
            seen = [variant(turn, 4 * rounds + n) for turn in history]
            for k in range(len(seen) - 1):  # turns 1-7 of another wording lived here; its turn 8 never was
                _, data = _post(client, url, {"question": seen[k], "history": seen[:k]})
                errors += data is None
            sent = {
                # its own wording: the engine caches a question's vector, and turn 9 asks `asked` too
                "alone": {"question": variant(question, 2 * rounds + n)},
                "state": {"question": asked, "state": state},
                "last_turn": {"question": variant(question, 3 * rounds + n), "history": turns},
                "prefix": {"question": variant(question, 5 * rounds + n), "history": seen},
                # another round's wording, never asked turn by turn: the history is rebuilt from plain texts
                "cold": {
                    "question": variant(question, rounds + n),
                    "history": [variant(turn, rounds + n) for turn in history],
                },
            }
            for kind in kinds if n % 2 else tuple(reversed(kinds)):
                ms, data = _post(client, url, sent[kind])
                if data is None:
                    errors += 1
                    continue
                samples[name][kind].append(ms)
        history = [long_text(f"第 {k} 次：还是 OOM，日志", wording + n) for k in range(HISTORY_TURNS)]
        state = None
        for turn in history:  # lived turn by turn with the state, untimed
            _, data = _post(client, url, {"question": turn, **({"state": state} if state else {})})
            errors += data is None
            state = data and data.get("state")
        bodies = {
            "alone": {},
            "state": {"state": state},
            # never seen in this wording: replayed from plain history
            "history": {
                "history": [long_text(f"第 {k} 次：还是 OOM，日志", wording + rounds + n) for k in range(HISTORY_TURNS)]
            },
        }
        for kind in tuple(bodies) if n % 2 else tuple(reversed(bodies)):
            question = long_text(f"训练到一半显存不足，日志如下 {kind}", wording + n)  # each its own: no cached vector
            ms, data = _post(client, url, {"question": question, **bodies[kind]})
            if data is None:
                errors += 1
                continue
            long[kind].append(ms)
        lived = [long_text(f"第 {k} 次：还是 OOM，完整日志", wording + n, PLAIN_TURN_CHARS) for k in range(PLAIN_TURNS)]
        for k, turn in enumerate(lived):  # lived turn by turn as plain history, untimed
            _, data = _post(client, url, {"question": turn, "history": lived[:k]})
            errors += data is None
        for kind in ("alone", "history") if n % 2 else ("history", "alone"):
            question = long_text(f"训练到一半显存不足，整个日志 {kind}", wording + n, PLAIN_QUESTION_CHARS)
            ms, data = _post(client, url, {"question": question, "history": lived if kind == "history" else []})
            if data is None:
                errors += 1
                continue
            plain[kind].append(ms)

    def median(values: list[float]) -> float | None:
        return statistics.median(values) if values else None

    def ratio(a: float | None, b: float | None) -> float | None:
        return round(a / b, 3) if a and b else None

    conversations = {}
    for name, got in samples.items():
        alone = median(got["alone"])
        conversations[name] = {
            **{f"{kind}_p50_ms": median(got[kind]) and round(median(got[kind]), 2) for kind in kinds},
            "ratio": ratio(median(got["state"]), alone),
            "last_turn_ratio": ratio(median(got["last_turn"]), alone),
            "prefix_ratio": ratio(median(got["prefix"]), alone),
            "cold_ratio": ratio(median(got["cold"]), alone),
        }

    def worst(key: str) -> float | None:
        values = [c[key] for c in conversations.values() if c[key] is not None]
        return max(values) if values else None

    long_ratio = ratio(median(long["state"]), median(long["alone"]))
    state_ratio = worst("ratio")
    return {
        "rounds": rounds,
        "history_turns": HISTORY_TURNS,
        "errors": errors,
        "alone": percentiles([x for got in samples.values() for x in got["alone"]]),
        "state": percentiles([x for got in samples.values() for x in got["state"]]),
        "last_turn": percentiles([x for got in samples.values() for x in got["last_turn"]]),
        "prefix": percentiles([x for got in samples.values() for x in got["prefix"]]),
        "cold": percentiles([x for got in samples.values() for x in got["cold"]]),
        "ratio": state_ratio,  # turn 9 with its state / alone, worst conversation
        "last_turn_ratio": worst("last_turn_ratio"),  # plain history seen whole; target TARGET_RATIO (issue 45)
        "prefix_ratio": worst("prefix_ratio"),  # plain history whose first 7 turns were seen; the same target
        "cold_ratio": worst("cold_ratio"),
        "target_ratio": TARGET_RATIO,
        "status": "n/a" if state_ratio is None else "pass" if state_ratio <= TARGET_RATIO else "MISS",
        "long": {
            "chars": LONG_CHARS,
            **{f"{kind}_p50_ms": median(got) and round(median(got), 2) for kind, got in long.items()},
            "ratio": long_ratio,  # with the state / alone
            "history_ratio": ratio(median(long["history"]), median(long["alone"])),  # plain history, never seen
            "target_ratio": TARGET_LONG_RATIO,
            "status": "n/a" if long_ratio is None else "pass" if long_ratio <= TARGET_LONG_RATIO else "MISS",
        },
        "long_plain": {
            "turns": PLAIN_TURNS,
            "turn_chars": PLAIN_TURN_CHARS,
            "question_chars": PLAIN_QUESTION_CHARS,
            **{f"{kind}_p50_ms": median(got) and round(median(got), 2) for kind, got in plain.items()},
            "ratio": ratio(median(plain["history"]), median(plain["alone"])),
            "target_ratio": TARGET_LONG_RATIO,
        },
        "conversations": conversations,
    }


def run_history(url: str, rounds: int, *, timeout_s: float = 120.0) -> dict:
    """:func:`measure` against the app served at ``url`` (loopback only), as ``bench/run.py`` runs it."""
    import httpx

    _check_loopback(url)
    with httpx.Client(timeout=timeout_s) as client:
        return measure(client, url, rounds)


def in_process(embedder: str, rounds: int) -> dict:
    """:func:`measure` against ``app.build_app`` in this process (the APIs only): ``hash`` over a copy of the
    repository's seeds, or ``real``: the index in ``./index`` with the model it was built with."""
    import shutil
    import tempfile
    from pathlib import Path

    from fastapi.testclient import TestClient

    from app import build_app, open_engine
    from bot.settings import Settings

    repo = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as work:
        if embedder == "hash":
            shutil.copytree(repo / "seeds", Path(work) / "seeds")
            settings = Settings(
                seeds_dir=Path(work) / "seeds",
                index_dir=Path(work) / "index",
                embedder="hash",
            )
        else:
            settings = Settings()
        engine = open_engine(settings, progress=False)
        app = build_app(settings, engine=engine, progress=False, ui=False, admin=False)
        with TestClient(app) as client:
            measure(client, "", 1, wording=1_000_000)  # warm-up: imports, the model's first runs (other wordings)
            return {"embedder": embedder, **measure(client, "", rounds)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--embedder", choices=("hash", "real"), default="hash")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    result = in_process(args.embedder, args.rounds)
    json.dump(result, sys.stdout, indent=1, ensure_ascii=False)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
