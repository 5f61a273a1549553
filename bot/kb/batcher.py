"""Dynamic micro-batching of embedding calls: concurrent callers' texts go to the runtime together.

What Hugging Face's text-embeddings-inference and Triton's dynamic batcher do, for one small model on a few CPU
cores. One thread (``bot-embed-batcher``) owns the runtime: a caller queues its texts and waits; the thread takes
the oldest caller's texts and every caller queued behind it, up to a cap on tokens per batch, and makes one
runtime call per role. Nothing waits when the runtime is idle and nobody else is asking (a question alone pays
no window); under load, the batch waits :data:`~bot.limits.EMBED_BATCH_WINDOW_MS` after its first caller
arrived for others to join. So that no caller holds the others hostage, a batch never holds more than
:data:`~bot.limits.EMBED_BATCH_TOKENS` (estimated from characters, an upper bound of what e5 reads), callers are
taken oldest first, and a text as long as :data:`~bot.limits.EMBED_ALONE_TOKENS` goes alone. Callers tokenize
their own texts (:meth:`bot.kb.embed.E5Embedder.embed`): the thread that runs the model then holds the GIL only
briefly, and does not queue behind every request thread for it (a pure-Python tokenizer on that thread made
batching slower than none).

Errors: a runtime call that raises fails every caller in that batch with :class:`EmbeddingFailed` (the runtime's
error as its cause), and the thread goes on with the next batch. Should the thread itself die, it says so on the
log, fails every caller it held and every queued one, and the next call starts a new thread; :meth:`close` fails
whatever is queued. No caller waits for a thread that is gone.

    >>> import numpy as np
    >>> b = MicroBatcher(lambda texts, role: np.ones((len(texts), 2), np.float32))
    >>> b.embed(["a", "bb"], "query").shape, b.batches
    ((2, 2), 1)
    >>> b.close()
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections import deque
from collections.abc import Callable

import numpy as np

from bot.limits import EMBED_ALONE_TOKENS, EMBED_BATCH_TOKENS, EMBED_BATCH_WINDOW_MS

log = logging.getLogger("bot.kb.batcher")

Run = Callable[[list, str], np.ndarray]  # (items, role) -> float32 rows, one per item (a text or its token ids)


class EmbeddingFailed(RuntimeError):
    """An embedding batch this caller's texts were in did not complete; the cause is the runtime's error."""


class _Job:
    __slots__ = ("texts", "role", "tokens", "arrived", "result", "error", "done")

    def __init__(self, texts: list, role: str, tokens: int | None) -> None:
        self.texts, self.role = texts, role
        # a text's characters bound e5's tokens (+2: <s> </s>); token ids count themselves
        self.tokens = tokens if tokens is not None else sum(len(t) + 2 for t in texts)
        self.arrived = time.monotonic()
        self.result: np.ndarray | None = None
        self.error: BaseException | None = None
        self.done = threading.Event()

    def fail(self, error: BaseException) -> None:
        if not self.done.is_set():
            self.error = error
            self.done.set()


class MicroBatcher:
    """``embed(texts, role)`` from any thread; one runtime call at a time, shared by the callers waiting."""

    def __init__(
        self,
        run: Run,
        *,
        window_ms: float = EMBED_BATCH_WINDOW_MS,
        max_tokens: int = EMBED_BATCH_TOKENS,
        alone_tokens: int = EMBED_ALONE_TOKENS,
        name: str = "bot-embed-batcher",
        workers: int = 1,
    ) -> None:
        self._run = run
        self.window_s = window_ms / 1000.0
        self.max_tokens = max_tokens
        self.alone_tokens = alone_tokens
        self.name = name
        self._queue: deque[_Job] = deque()
        self._wake = threading.Condition(threading.Lock())
        self._threads: list[threading.Thread | None] = [None] * max(1, workers)
        self._closed = False
        self._busy_before = False  # the last batch had company: the load is on, so a batch waits the window
        self.batches = 0  # runtime calls made
        self.jobs = 0  # callers served
        self.restarts = 0  # threads started after one died

    # ---------------------------------------------------------------- callers

    def embed(self, texts: list, role: str, tokens: int | None = None) -> np.ndarray:
        """Rows for ``texts`` (whatever ``run`` takes: texts, or token ids the caller computed); ``tokens``: their
        count when known (else estimated from the characters)."""
        job = _Job(list(texts), role, tokens)
        with self._wake:
            if self._closed:
                raise EmbeddingFailed("the embedder is closed (the process is shutting down)")
            self._queue.append(job)
            self._ensure_thread()
            self._wake.notify()
        job.done.wait()
        if job.error is not None:
            raise job.error
        assert job.result is not None
        return job.result

    def close(self) -> None:
        """Stop the thread after the batch in flight; every caller still queued gets :class:`EmbeddingFailed`."""
        with self._wake:
            self._closed = True
            queued, self._queue = list(self._queue), deque()
            self._wake.notify_all()
        for job in queued:
            job.fail(EmbeddingFailed("the embedder was closed before this text was embedded"))

    def _ensure_thread(self) -> None:
        """Start each thread that is not running (the first call) or died (said on the log, counted). Under the lock."""
        for n, thread in enumerate(self._threads):
            if thread is not None and thread.is_alive():
                continue
            if thread is not None:
                self.restarts += 1
                log.warning("%s: restarting the embedding thread (restart %d)", self.name, self.restarts)
            self._threads[n] = threading.Thread(target=self._loop, name=f"{self.name}-{n}", daemon=True)
            self._threads[n].start()

    # ---------------------------------------------------------------- the thread

    def _loop(self) -> None:
        held: list[_Job] = []
        try:
            while True:
                held = self._next_batch()
                if not held:
                    return  # closed
                self._serve(held)
                held = []
        except BaseException as exc:  # the thread is dying: say so loudly, and leave no caller waiting
            message = f"{self.name}: the embedding thread died ({type(exc).__name__}: {exc}); the next call restarts it"
            log.error(message, exc_info=True)
            print(f"error: {message}", file=sys.stderr, flush=True)
            with self._wake:
                queued, self._queue = list(self._queue), deque()
            failure = EmbeddingFailed(f"the embedding thread died ({type(exc).__name__}: {exc}); retry the request")
            failure.__cause__ = exc
            for job in (*held, *queued):
                job.fail(failure)

    def _next_batch(self) -> list[_Job]:
        """The oldest caller and those behind it, within the token cap (a huge text alone); [] once closed."""
        with self._wake:
            while not self._queue and not self._closed:
                self._wake.wait()
            if self._closed:
                return []
            first = self._queue[0]
            if first.tokens < self.alone_tokens and (len(self._queue) > 1 or self._busy_before):
                deadline = first.arrived + self.window_s
                while not self._closed and self._room(first) and (wait := deadline - time.monotonic()) > 0:
                    self._wake.wait(wait)
                if self._closed:
                    return []  # close() failed everything queued
            batch, tokens = [self._queue.popleft()], first.tokens
            if first.tokens < self.alone_tokens:
                while self._queue and self._queue[0].tokens < self.alone_tokens:
                    if tokens + self._queue[0].tokens > self.max_tokens:
                        break
                    tokens += self._queue[0].tokens
                    batch.append(self._queue.popleft())
            self._busy_before = len(batch) > 1 or bool(self._queue)
            return batch

    def _room(self, first: _Job) -> bool:
        """Whether the queue (under the lock) still has room under the cap: else waiting gains nothing."""
        total = 0
        for job in self._queue:
            if job.tokens >= self.alone_tokens and job is not first:
                return False
            total += job.tokens
            if total >= self.max_tokens:
                return False
        return True

    def _serve(self, batch: list[_Job]) -> None:
        for role in dict.fromkeys(job.role for job in batch):
            jobs = [job for job in batch if job.role == role]
            texts = [text for job in jobs for text in job.texts]
            try:
                out = self._run(texts, role)
                if len(out) != len(texts):
                    raise RuntimeError(f"the runtime returned {len(out)} vectors for {len(texts)} texts")
            except Exception as exc:  # every caller of this batch gets the error, then the next batch runs
                failure = EmbeddingFailed(
                    f"embedding a batch of {len(texts)} texts from {len(jobs)} callers failed "
                    f"({type(exc).__name__}: {exc})"
                )
                failure.__cause__ = exc
                for job in jobs:
                    job.fail(failure)
                continue
            self.batches += 1
            self.jobs += len(jobs)
            row = 0
            for job in jobs:
                job.result = out[row : row + len(job.texts)]
                row += len(job.texts)
                job.done.set()
