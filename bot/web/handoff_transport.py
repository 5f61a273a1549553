"""How the hand-off webhook is called: a total deadline, off the request's thread, a few at once, rate limited.

A receiver that drips one byte every 3 s kept ``urllib``'s per-read timeout from ever firing (one hand-off held
its request 45 s), and 60 hand-offs to a receiver that never answers held 60 of the server's worker threads
(``/healthz`` waited 5 s). So each webhook has one :class:`Courier`:

- every POST runs on one of the courier's own :data:`SENDERS` threads and is cut at :data:`DEADLINE` seconds in
  total (connect, send, headers and body together: the socket is shut when the deadline passes);
- the request's thread waits for that answer only when a sender is free, and never longer than the deadline;
  when all are busy it does not wait at all: the hand-off is queued;
- a failed or queued hand-off is logged and retried from a bounded outbox (:data:`OUTBOX`, :data:`ATTEMPTS`
  tries, :data:`RETRY_SECONDS` apart); the user is told it did not go through (the reply offers the contact link);
- at most :data:`BURST` hand-offs at once and :data:`PER_MINUTE` a minute after that reach the receiver (61
  requests posted 61 tickets); the others are refused and logged.

>>> courier = Courier("http://127.0.0.1:9/hook", deadline=0.5)
>>> courier.deliver({"type": "handoff"})  # nothing listens on port 9: refused at once, logged, queued
False
>>> courier.close()
"""

from __future__ import annotations

import http.client
import json
import logging
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from urllib.parse import urlsplit

log = logging.getLogger("bot.web.handoff")

DEADLINE = 5.0  # seconds, in total, for one POST; the user is waiting for the reply that says it worked
SENDERS = 4  # POSTs at once to one webhook; more hand-offs wait in the outbox instead of holding request threads
OUTBOX = 200  # hand-offs kept for a retry (the oldest goes first when full)
ATTEMPTS = 3  # tries per hand-off, the first included
RETRY_SECONDS = 30.0  # between tries
BURST = 10  # hand-offs at once before the rate applies
PER_MINUTE = 10  # hand-offs a minute after the burst
RESPONSE_BYTES = 64 * 1024  # of a receiver's answer read (the status is what counts)


def post_json(url: str, data: dict, *, deadline: float = DEADLINE) -> bool:
    """POST ``data`` as JSON; True on a 2xx answer. Cut at ``deadline`` seconds in total, however slowly the
    receiver answers (each read's timeout alone lets a dripping receiver hold the caller for ever). Raises
    ``OSError`` / ``http.client.HTTPException`` on failure; a non-2xx answer is False."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"the hand-off webhook {url!r} is not an http(s) URL")
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = kind(parts.hostname, parts.port, timeout=deadline)
    cut = threading.Event()

    def cut_off() -> None:
        cut.set()
        sock = conn.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes a recv() blocked in another thread
            except OSError:
                pass

    timer = threading.Timer(deadline, cut_off)
    timer.daemon = True
    timer.start()
    try:
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        body = json.dumps(data, ensure_ascii=False).encode()
        conn.request("POST", path, body, {"Content-Type": "application/json; charset=utf-8"})
        response = conn.getresponse()
        response.read(RESPONSE_BYTES)
        if cut.is_set():
            raise TimeoutError(f"the hand-off webhook took more than {deadline:g} s")
        return 200 <= response.status < 300
    except (OSError, http.client.HTTPException):  # a cut mid-line reads as a torn status line
        if cut.is_set():
            raise TimeoutError(f"the hand-off webhook took more than {deadline:g} s") from None
        raise
    finally:
        timer.cancel()
        conn.close()


class RateLimit:
    """A token bucket: ``burst`` at once, then ``per_minute``; ``clock`` for tests."""

    def __init__(self, burst: int, per_minute: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.burst, self.rate, self.clock = burst, per_minute / 60.0, clock
        self.tokens, self.at = float(burst), clock()
        self._lock = threading.Lock()

    def take(self) -> bool:
        with self._lock:
            now = self.clock()
            self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
            self.at = now
            if self.tokens < 1:
                return False
            self.tokens -= 1
            return True


class Courier:
    """The one way a webhook is called; see the module docstring."""

    def __init__(
        self,
        url: str,
        *,
        deadline: float = DEADLINE,
        senders: int = SENDERS,
        attempts: int = ATTEMPTS,
        retry_seconds: float = RETRY_SECONDS,
        limit: RateLimit | None = None,
        post: Callable[..., bool] = post_json,
    ) -> None:
        self.url, self.deadline, self.attempts, self.retry_seconds = url, deadline, attempts, retry_seconds
        self.limit = limit or RateLimit(BURST, PER_MINUTE)
        self._post = post
        self._free = threading.BoundedSemaphore(senders)
        self._pool = ThreadPoolExecutor(max_workers=senders, thread_name_prefix="bot-handoff")
        self._outbox: deque[tuple[dict, int, float]] = deque(maxlen=OUTBOX)  # data, tries so far, due time
        self._wake = threading.Condition()
        self._closed = False
        self.delivered = self.failed = self.refused = 0
        self._retrier = threading.Thread(target=self._retry_loop, name="bot-handoff-retry", daemon=True)
        self._retrier.start()

    def deliver(self, data: dict) -> bool:
        """Send one hand-off; True when the receiver took it within the deadline. Never raises."""
        if not self.limit.take():
            self.refused += 1
            log.warning("hand-off: more than %d at once or %d a minute; this one was not sent", BURST, PER_MINUTE)
            return False
        if not self._free.acquire(blocking=False):  # every sender is busy: do not hold the request's thread
            log.warning("hand-off: %s is busy (%d sends waiting); queued for a retry", self.url, SENDERS)
            self._queue(data, 0)
            return False
        future = self._pool.submit(self._send, data, 1)
        try:
            return future.result(timeout=self.deadline + 0.25)
        except FutureTimeout:  # the send goes on, cut by its own deadline; a failure is queued by _send
            return False

    def _send(self, data: dict, tries: int) -> bool:
        try:
            ok = self._post(self.url, data, deadline=self.deadline)
            why = "" if ok else "it answered with an error status"
        except Exception as exc:  # the chat must answer even when the ticket system is down
            ok, why = False, f"{type(exc).__name__}: {exc}"
        finally:
            self._free.release()
        if ok:
            self.delivered += 1
            return True
        self.failed += 1
        if tries < self.attempts:
            log.warning("hand-off to %s failed (%s); try %d of %d, retried later", self.url, why, tries, self.attempts)
            self._queue(data, tries)
        else:
            log.error("hand-off to %s failed (%s) after %d tries; given up", self.url, why, tries)
        return False

    def _queue(self, data: dict, tries: int) -> None:
        with self._wake:
            self._outbox.append((data, tries, time.monotonic() + self.retry_seconds))
            self._wake.notify()

    def _retry_loop(self) -> None:
        with self._wake:
            while not self._closed:
                due = self._outbox[0][2] if self._outbox else None
                wait = None if due is None else due - time.monotonic()
                if wait is None or wait > 0:
                    self._wake.wait(wait)
                    continue
                if not self._free.acquire(blocking=False):
                    self._wake.wait(min(1.0, self.retry_seconds))
                    continue
                data, tries, _ = self._outbox.popleft()
                self._pool.submit(self._send, data, tries + 1)

    def waiting(self) -> int:
        with self._wake:
            return len(self._outbox)

    def close(self) -> None:
        with self._wake:
            self._closed = True
            self._wake.notify()
        self._pool.shutdown(wait=False, cancel_futures=True)


_couriers: dict[str, Courier] = {}
_couriers_lock = threading.Lock()


def courier_for(url: str) -> Courier:
    """The process's courier of ``url`` (one per configured webhook, so its limits hold across requests)."""
    with _couriers_lock:
        courier = _couriers.get(url)
        if courier is None:
            courier = _couriers[url] = Courier(url)
        return courier
