"""The hand-off webhook's transport: a total deadline, off the request's thread, a few at once, rate limited,
failures logged and retried (issue 28, finding 6). Real receivers on loopback sockets; conditions are awaited."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time

import pytest

from bot.web import handoff_transport as transport
from bot.web.handoff_transport import Courier, RateLimit, post_json


def _until(condition, seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


class RawReceiver:
    """A webhook on a loopback socket that reads each request, then answers as ``behave(conn)`` says."""

    def __init__(self, behave) -> None:
        self.behave = behave
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}/hook"
        self.open = 0  # connections not yet closed by the client
        self.most_open = 0
        self.bodies: list[dict] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        self.server.settimeout(0.2)
        while not self._stop.is_set():
            try:
                conn, _ = self.server.accept()
            except OSError:
                continue
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with self._lock:
            self.open += 1
            self.most_open = max(self.most_open, self.open)
        try:
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, body = data.split(b"\r\n\r\n", 1)
            length = int([h for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")][0].split(b":")[1])
            while len(body) < length:
                body += conn.recv(65536)
            with self._lock:
                self.bodies.append(json.loads(body))
            self.behave(conn, self)
        except OSError:
            pass
        finally:
            conn.close()
            with self._lock:
                self.open -= 1

    def closed_by_client(self, conn: socket.socket) -> bool:
        """Wait until the client closes (recv returns b"" or fails), or the receiver stops."""
        conn.settimeout(0.05)
        while not self._stop.is_set():
            try:
                if conn.recv(1) == b"":
                    return True
            except TimeoutError:
                continue
            except OSError:
                return True
        return False

    def stop(self) -> None:
        self._stop.set()
        self.server.close()


def drip(conn: socket.socket, receiver: RawReceiver) -> None:
    """One byte of a never-ending status line every 0.1 s: each read's timeout never fires."""
    for byte in b"HTTP/1.1 200 OK" + b" " * 10_000:
        if receiver._stop.is_set():
            return
        conn.sendall(bytes([byte]))
        time.sleep(0.1)


def hang(conn: socket.socket, receiver: RawReceiver) -> None:
    receiver.closed_by_client(conn)


def answer(statuses: list[int]):
    def behave(conn: socket.socket, receiver: RawReceiver) -> None:
        status = statuses.pop(0) if statuses else 200
        conn.sendall(f"HTTP/1.1 {status} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".encode())

    return behave


@pytest.fixture
def receivers():
    made: list[RawReceiver] = []
    yield lambda behave: made.append(RawReceiver(behave)) or made[-1]
    for receiver in made:
        receiver.stop()


def test_a_dripping_receiver_is_cut_at_the_total_deadline(receivers):
    receiver = receivers(drip)
    outcome: list[object] = []

    def call() -> None:
        try:
            outcome.append(post_json(receiver.url, {"type": "handoff"}, deadline=0.6))
        except Exception as exc:
            outcome.append(exc)

    caller = threading.Thread(target=call, daemon=True)
    caller.start()
    caller.join(30)  # a per-read timeout alone would drip on for 1,000 s
    assert not caller.is_alive() and isinstance(outcome[0], TimeoutError), outcome
    assert receiver.bodies == [{"type": "handoff"}] and _until(lambda: receiver.open == 0)


def test_at_most_a_few_sends_at_once_and_the_others_do_not_wait(receivers, caplog):
    receiver = receivers(hang)
    courier = Courier(receiver.url, deadline=30, senders=2, retry_seconds=3600, limit=RateLimit(100, 0))
    caplog.set_level(logging.WARNING, logger="bot.web.handoff")
    results: list[bool] = []
    callers = [
        threading.Thread(target=lambda: results.append(courier.deliver({"n": 1})), daemon=True) for _ in range(8)
    ]
    try:
        for caller in callers:
            caller.start()
        # Six callers came back (not sent, queued) while two sends still hang on the receiver.
        assert _until(lambda: len(results) == 6 and receiver.open == 2), (results, receiver.open)
        assert results == [False] * 6 and courier.waiting() == 6 and receiver.most_open == 2
        assert sum("queued for a retry" in r.getMessage() for r in caplog.records) == 6
    finally:
        receiver.stop()
        courier.close()


def test_a_failed_hand_off_is_logged_and_retried(receivers, caplog):
    receiver = receivers(answer([503]))
    courier = Courier(receiver.url, deadline=5, retry_seconds=0.05, limit=RateLimit(100, 0))
    caplog.set_level(logging.WARNING, logger="bot.web.handoff")
    try:
        assert courier.deliver({"type": "handoff", "n": 7}) is False  # the user is told it did not go through
        assert _until(lambda: courier.delivered == 1)  # the retry got through
        assert receiver.bodies == [{"type": "handoff", "n": 7}] * 2
        assert any("failed (it answered with an error status); try 1 of 3" in r.getMessage() for r in caplog.records)
    finally:
        courier.close()


def test_a_receiver_that_never_takes_it_is_given_up_after_the_last_try(receivers, caplog):
    receiver = receivers(answer([500, 500, 500, 500]))
    courier = Courier(receiver.url, deadline=5, attempts=3, retry_seconds=0.02, limit=RateLimit(100, 0))
    caplog.set_level(logging.WARNING, logger="bot.web.handoff")
    try:
        assert courier.deliver({"n": 1}) is False
        assert _until(lambda: any("after 3 tries; given up" in r.getMessage() for r in caplog.records))
        assert len(receiver.bodies) == 3 and courier.waiting() == 0
    finally:
        courier.close()


def test_hand_offs_are_rate_limited(receivers, caplog):
    receiver = receivers(answer([]))
    now = [0.0]
    courier = Courier(receiver.url, deadline=5, limit=RateLimit(3, 60, clock=lambda: now[0]))
    caplog.set_level(logging.WARNING, logger="bot.web.handoff")
    try:
        sent = [courier.deliver({"n": n}) for n in range(5)]
        assert sent == [True, True, True, False, False] and len(receiver.bodies) == 3
        assert sum("this one was not sent" in r.getMessage() for r in caplog.records) == 2
        now[0] += 1.0  # a second later: one more (60 a minute)
        assert courier.deliver({"n": 5}) is True and len(receiver.bodies) == 4
    finally:
        courier.close()


def test_the_edges_send_through_one_courier_per_webhook(receivers, monkeypatch):
    from bot.web.handoff import send

    receiver = receivers(answer([]))
    monkeypatch.setattr(transport, "_couriers", {})
    assert send(receiver.url, {"type": "handoff"}) is True
    assert list(transport._couriers) == [receiver.url] and transport._couriers[receiver.url].delivered == 1
    transport._couriers[receiver.url].close()


# ---------------------------------------------------------------- through the edges' send(), as before issue 28


def test_send_to_a_dripping_receiver_returns_within_the_deadline(receivers, monkeypatch):
    from bot.web.handoff import send

    receiver = receivers(drip)
    monkeypatch.setattr(transport, "_couriers", {})
    outcome: list[bool] = []
    caller = threading.Thread(target=lambda: outcome.append(send(receiver.url, {"type": "handoff"})), daemon=True)
    caller.start()
    caller.join(30)  # before: each byte reset urllib's 5 s read timeout, so the request was held 1,000 s
    assert not caller.is_alive() and outcome == [False]


def test_send_to_hanging_receivers_holds_at_most_a_few_threads(receivers, monkeypatch):
    from bot.web.handoff import send

    receiver = receivers(hang)
    monkeypatch.setattr(transport, "_couriers", {})
    results: list[bool] = []
    for _ in range(12):
        threading.Thread(target=lambda: results.append(send(receiver.url, {"type": "handoff"})), daemon=True).start()
    assert _until(lambda: len(results) >= 12 - transport.SENDERS), (len(results), receiver.open)
    assert receiver.most_open <= transport.SENDERS
    receiver.stop()
    for courier in transport._couriers.values():
        courier.close()
