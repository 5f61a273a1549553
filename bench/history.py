"""A conversation's last turn against the same question asked alone, both through ``POST /api/ask``.

Turn 9 of a conversation is a request whose ``history`` holds the 8 questions before it, as a client that keeps
only plain history sends it. Its server time should not grow with that history: the target is turn 9 within
:data:`TARGET_RATIO` × the same question sent with no history, for every conversation below (the figure is the
worst of them).

Each round sends, per conversation, the question alone and the question as turn 9, in alternating order so both
see the same load. Every text of a round (the question and each history turn) gets the round's own wording
(:func:`bench.concurrency.variant`), so no cache answers a measured request and each history turn costs what a
new question costs.
"""

from __future__ import annotations

import statistics
import time

from bench.concurrency import ASK_PATH, _check_loopback, variant
from bench.measure import percentiles

TARGET_RATIO = 1.5
HISTORY_TURNS = 8  # turn 9 carries the 8 questions before it

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


def _post(client, url: str, question: str, history: list[str]) -> tuple[float, int]:
    started = time.perf_counter()
    response = client.post(url + ASK_PATH, json={"question": question, "history": history})
    return (time.perf_counter() - started) * 1000, response.status_code


def run_history(url: str, rounds: int, *, timeout_s: float = 60.0) -> dict:
    """``rounds`` rounds over :data:`CONVERSATIONS` against the app at ``url``: medians, ratios and errors.

    ``last_turn`` is turn 9 as a chat client sends it: turns 1–8 were asked first, one request each with the
    history so far (untimed), so the server has seen the conversation. ``cold`` is the same turn 9 sent to a
    server that never saw it (another wording: a replica, or a restart), which must rebuild the history.
    """
    import httpx

    _check_loopback(url)
    kinds = ("alone", "last_turn", "cold")
    samples = {name: {kind: [] for kind in kinds} for name, _, _ in CONVERSATIONS}
    errors = 0
    with httpx.Client(timeout=timeout_s) as client:
        for n in range(1, rounds + 1):
            for name, history, question in CONVERSATIONS:
                asked = variant(question, n)
                turns = [variant(turn, n) for turn in history]
                for k, turn in enumerate(turns):  # the conversation as the client lived it, untimed
                    _, status = _post(client, url, turn, turns[:k])
                    errors += status != 200
                sent = {
                    "alone": (asked, []),
                    "last_turn": (asked, turns),
                    # another round's wording, never asked turn by turn: the history is rebuilt from plain texts
                    "cold": (variant(question, rounds + n), [variant(turn, rounds + n) for turn in history]),
                }
                for kind in kinds if n % 2 else tuple(reversed(kinds)):
                    ms, status = _post(client, url, *sent[kind])
                    if status != 200:
                        errors += 1
                        continue
                    samples[name][kind].append(ms)
    conversations = {}
    for name, got in samples.items():
        alone = statistics.median(got["alone"]) if got["alone"] else None
        last = statistics.median(got["last_turn"]) if got["last_turn"] else None
        cold = statistics.median(got["cold"]) if got["cold"] else None
        conversations[name] = {
            "alone_p50_ms": alone and round(alone, 2),
            "cold_p50_ms": cold and round(cold, 2),
            "cold_ratio": round(cold / alone, 3) if alone and cold else None,
            "last_turn_p50_ms": last and round(last, 2),
            "ratio": round(last / alone, 3) if alone and last else None,
            "alone_ms": [round(x, 2) for x in got["alone"]],
            "last_turn_ms": [round(x, 2) for x in got["last_turn"]],
        }
    ratios = [c["ratio"] for c in conversations.values() if c["ratio"] is not None]
    worst = max(ratios) if ratios else None
    return {
        "rounds": rounds,
        "history_turns": HISTORY_TURNS,
        "errors": errors,
        "alone": percentiles([x for got in samples.values() for x in got["alone"]]),
        "last_turn": percentiles([x for got in samples.values() for x in got["last_turn"]]),
        "ratio": worst,
        "target_ratio": TARGET_RATIO,
        "status": "n/a" if worst is None else "pass" if worst <= TARGET_RATIO else "MISS",
        "conversations": conversations,
    }
