"""Micro-batching of embedding calls (bot.kb.batcher): each caller its own rows, errors to every caller of a
failed batch, a huge text alone, the token cap, a dead thread restarted, nothing left waiting (issue 45)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from bot.kb.batcher import EmbeddingFailed, MicroBatcher
from bot.kb.embed import HashEmbedder

HASH = HashEmbedder(dim=32)


class Gate:
    """A runtime that records its calls and holds each until released, so callers can queue behind it."""

    def __init__(self, fail_on: str | None = None) -> None:
        self.calls: list[tuple[list[str], str]] = []
        self.started = threading.Semaphore(0)
        self.release = threading.Semaphore(0)
        self.fail_on = fail_on

    def __call__(self, texts: list[str], role: str) -> np.ndarray:
        self.calls.append((list(texts), role))
        self.started.release()
        assert self.release.acquire(timeout=30), "the test never released the runtime"
        if self.fail_on is not None and self.fail_on in texts:
            raise ValueError(f"runtime broke on {self.fail_on!r}")
        return HASH.embed(texts, role)


def _queued(batcher: MicroBatcher, n: int) -> None:
    """Wait (on the batcher's own condition) until ``n`` callers are queued."""
    with batcher._wake:
        assert batcher._wake.wait_for(lambda: len(batcher._queue) >= n, timeout=30)


def _ask(batcher: MicroBatcher, out: dict, key, texts: list[str], role: str = "query") -> threading.Thread:
    def run() -> None:
        try:
            out[key] = batcher.embed(texts, role)
        except BaseException as exc:  # noqa: BLE001 - the test reads what each caller got
            out[key] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_concurrent_callers_share_a_call_and_each_gets_the_vectors_it_would_get_alone():
    gate = Gate()
    batcher = MicroBatcher(gate, window_ms=0)
    out: dict = {}
    texts = {n: [f"显存不足 {n}", f"out of memory {n}"] for n in range(6)}
    first = _ask(batcher, out, 0, texts[0])
    assert gate.started.acquire(timeout=30)  # the first caller's call is running: the others queue behind it
    others = [_ask(batcher, out, n, texts[n], "passage" if n == 5 else "query") for n in range(1, 6)]
    _queued(batcher, 5)
    for _ in range(3):
        gate.release.release()
    for thread in (first, *others):
        thread.join(30)
    # the first alone, then the four queued questions in one call and the passage in another
    assert [len(texts_) for texts_, _ in gate.calls] == [2, 8, 2]
    assert [role for _, role in gate.calls] == ["query", "query", "passage"]
    for n in range(6):
        alone = HASH.embed(texts[n], "passage" if n == 5 else "query")
        assert np.array_equal(out[n], alone), n
    assert batcher.batches == 3 and batcher.jobs == 6
    batcher.close()


def test_a_failed_batch_fails_each_of_its_callers_and_the_next_batch_runs():
    gate = Gate(fail_on="boom")
    batcher = MicroBatcher(gate, window_ms=0)
    out: dict = {}
    first = _ask(batcher, out, "first", ["fine"])
    assert gate.started.acquire(timeout=30)
    victims = [_ask(batcher, out, n, ["boom" if n == 0 else f"q{n}"]) for n in range(3)]
    _queued(batcher, 3)
    gate.release.release()  # the first call
    gate.release.release()  # the batch of three, which raises
    for thread in (first, *victims):
        thread.join(30)
    for n in range(3):
        assert isinstance(out[n], EmbeddingFailed), out[n]
        assert "batch of 3 texts from 3 callers" in str(out[n]) and isinstance(out[n].__cause__, ValueError)
    assert isinstance(out["first"], np.ndarray)
    after = _ask(batcher, out, "after", ["later"])
    gate.release.release()
    after.join(30)
    assert np.array_equal(out["after"], HASH.embed(["later"], "query"))
    batcher.close()


def test_a_huge_text_goes_alone_and_a_batch_keeps_under_the_token_cap():
    gate = Gate()
    batcher = MicroBatcher(gate, window_ms=0, max_tokens=100, alone_tokens=60)
    out: dict = {}
    first = _ask(batcher, out, "first", ["x"])
    assert gate.started.acquire(timeout=30)
    order = [("q1", "a" * 20), ("huge", "h" * 500), ("q2", "b" * 30), ("q3", "c" * 30), ("q4", "d" * 30)]
    threads = []
    for n, (key, text) in enumerate(order):
        threads.append(_ask(batcher, out, key, [text]))
        _queued(batcher, n + 1)  # queued in this order
    for _ in range(5):
        gate.release.release()
    for thread in (first, *threads):
        thread.join(30)
    batches = [texts for texts, _ in gate.calls]
    # oldest first; the huge paste never shares a call; 22 + 32 + 32 characters fit 100, a fourth would not
    assert batches == [["x"], ["a" * 20], ["h" * 500], ["b" * 30, "c" * 30, "d" * 30]]
    assert all(isinstance(out[key], np.ndarray) for key, _ in order)
    batcher.close()


def test_a_question_alone_waits_for_no_window():
    waits: list = []
    batcher = MicroBatcher(lambda texts, role: HASH.embed(texts, role), window_ms=60_000)

    class Recording(threading.Condition):
        def wait(self, timeout=None):
            waits.append(timeout)
            return super().wait(timeout)

    batcher._wake = Recording(threading.Lock())
    for n in range(3):
        batcher.embed([f"q{n}"], "query")  # one at a time: nobody to wait for
    assert all(timeout is None for timeout in waits), waits
    batcher.close()


def test_a_dead_batcher_thread_fails_its_callers_loudly_and_the_next_call_restarts_it(monkeypatch, caplog, capsys):
    batcher = MicroBatcher(lambda texts, role: HASH.embed(texts, role), window_ms=0)
    assert batcher.embed(["before"], "query").shape == (1, 32)
    serve = batcher._serve
    broken = {"on": True}

    class Dying(BaseException):
        pass

    def dying(batch):
        if broken["on"]:
            broken["on"] = False
            raise Dying("a bug in the batcher")
        return serve(batch)

    monkeypatch.setattr(batcher, "_serve", dying)
    with pytest.raises(EmbeddingFailed, match="embedding thread died.*Dying: a bug in the batcher"):
        batcher.embed(["during"], "query")
    assert "embedding thread died" in capsys.readouterr().err
    batcher._threads[0].join(30)
    assert not batcher._threads[0].is_alive()
    assert np.array_equal(batcher.embed(["after"], "query"), HASH.embed(["after"], "query"))
    assert batcher.restarts == 1 and "restarting the embedding thread" in caplog.text
    batcher.close()


def test_close_fails_every_queued_caller_and_later_calls():
    gate = Gate()
    batcher = MicroBatcher(gate, window_ms=0)
    out: dict = {}
    first = _ask(batcher, out, "first", ["running"])
    assert gate.started.acquire(timeout=30)
    waiting = _ask(batcher, out, "queued", ["queued"])
    _queued(batcher, 1)
    batcher.close()
    waiting.join(30)
    assert isinstance(out["queued"], EmbeddingFailed) and "closed" in str(out["queued"])
    gate.release.release()
    first.join(30)
    assert isinstance(out["first"], np.ndarray)  # the batch in flight completes
    with pytest.raises(EmbeddingFailed, match="closed"):
        batcher.embed(["late"], "query")


@pytest.mark.model
def test_e5_batched_gives_the_vectors_of_one_text_at_a_time():
    from bot.kb.embed import E5Embedder

    e5 = E5Embedder(runtime="onnx", batching=True)
    texts = ["训练时显存不足怎么办", "How do I restrict Paddle to one GPU?", "libnccl.so 找不到", "loss nan", "多机"]
    alone = np.stack([e5.embed([t], "query")[0] for t in texts])
    out: dict = {}
    threads = [_ask(e5._batcher, out, n, [t]) for n, t in enumerate(texts)]
    for thread in threads:
        thread.join(60)
    together = e5.embed(texts, "query")  # one call, padded to the longest
    for n in range(len(texts)):
        assert float(out[n][0] @ alone[n]) / float(np.linalg.norm(out[n][0])) > 0.99999
        assert float(together[n] @ alone[n]) > 0.99999
