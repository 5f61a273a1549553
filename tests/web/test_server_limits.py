"""Issue 19: what one client can cost the server: large JSON bodies, half-sent requests, idle keep-alive.

The app is the real one (``app.build_app`` without the UI, hash embedder) served by uvicorn with
the configuration ``python app.py`` uses (:func:`bot.web.http.server_config`), in a thread, on a
free loopback port. Slow and half-sent requests are written with raw sockets.
"""

from __future__ import annotations

import json
import socket
import threading

import httpx
import pytest

import bot.web.json_limits as json_limits
import bot.web.security as security
from app import build_app
from bot.settings import WebSettings
from bot.web.http import server_config
from bot.web.json_limits import MAX_JSON_ITEMS
from fixtures.server import ThreadServer
from fixtures.sockets import closed_within, still_open

BIG = "big-body-marker"


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    from fixtures.engines import one_section_engine

    return one_section_engine(tmp_path_factory.mktemp("limits"))


@pytest.fixture(scope="module")
def served(engine):
    web = WebSettings(request_timeout=1.0)  # short, so that the tests can await the close
    with ThreadServer(build_app(engine.settings, engine, web, progress=False, ui=False), web=web) as server:
        yield server


# ---------------------------------------------------------------- large bodies


def test_healthz_and_small_requests_answer_while_a_large_body_is_being_checked(served, monkeypatch):
    # Before: the body check (json.loads + a walk of the value) ran on the event loop, so one 8 MB body held every
    # other request, /healthz included, for 1.3-4.7 s. Here the check of one large body is held open (the depth walk
    # waits on an event) and 20 health checks and 5 small questions must all be answered meanwhile.
    entered, release = threading.Event(), threading.Event()
    real = json_limits.json_depth

    def held_depth(value):
        if isinstance(value, dict) and value.get("session") == BIG:
            entered.set()
            release.wait(60)
        return real(value)

    monkeypatch.setattr(json_limits, "json_depth", held_depth)
    body = json.dumps({"question": "显存不足 " * 200_000, "session": BIG}, ensure_ascii=False).encode()
    assert len(body) > security.INLINE_BYTES
    big: dict = {}

    def post_big() -> None:
        big["status"] = httpx.post(
            served.url + "/api/ask", content=body, timeout=120, headers={"Content-Type": "application/json"}
        ).status_code

    sender = threading.Thread(target=post_big)
    sender.start()
    try:
        assert entered.wait(30), "the large body never reached the JSON check"
        with httpx.Client(timeout=10) as client:
            health = [client.get(served.url + "/healthz").status_code for _ in range(20)]
            small = [client.post(served.url + "/api/ask", json={"question": "显存不足"}).status_code for _ in range(5)]
        still_checking = sender.is_alive() and not release.is_set()
    finally:
        release.set()
        sender.join(120)
    assert health == [200] * 20 and small == [200] * 5
    assert still_checking  # all of them were answered while the large body was still being checked
    assert big["status"] == 200


def test_a_body_of_millions_of_tiny_values_is_refused_before_parsing(served, monkeypatch):
    # Before: 8 MB of "[]," was accepted: 5 s of CPU on the event loop (parse, walk, parse again). Now the values
    # are counted at C speed first and json.loads never runs on such a body.
    parsed: list[int] = []
    real = json_limits.json.loads
    monkeypatch.setattr(
        json_limits.json, "loads", lambda text, *a, **k: parsed.append(len(text)) or real(text, *a, **k)
    )
    body = b'{"question": "q", "pad": [' + b",".join([b"[]"] * 2_000_000) + b"]}"
    response = httpx.post(
        served.url + "/api/ask", content=body, headers={"Content-Type": "application/json"}, timeout=120
    )
    assert response.status_code == 413 and f"{MAX_JSON_ITEMS:,} values" in response.json()["detail"]
    assert not [n for n in parsed if n >= len(body)]  # the big body was never handed to json.loads
    # A long question string is one value: still accepted (the reply cuts it with a notice).
    long_text = json.dumps({"question": "out of memory, batch size, [cuda] " * 30_000}).encode()
    assert (
        httpx.post(
            served.url + "/api/ask", content=long_text, headers={"Content-Type": "application/json"}, timeout=120
        ).status_code
        == 200
    )


def test_value_count_skips_strings_and_stops_past_the_budget():
    text = json.dumps({"question": "a, b, [c], {d}" * 5_000, "history": ["x"] * 10}).encode()
    assert json_limits.json_items(text) < 30  # commas and brackets inside strings are text, not values
    assert json_limits.json_items(b"[" + b'"s",' * 50_000 + b'"s"]', budget=100) <= 102  # stopped at the budget
    assert json_limits.json_items(b'["' + b"," * 1_000 + b'"]', budget=10) == 2  # '[' and one string
    assert json_limits.json_items(b'["\\"' + b"," * 1_000, budget=10) == 2  # an unterminated string runs to the end


# ---------------------------------------------------------------- half-sent requests


@pytest.mark.parametrize(
    "first_bytes",
    [
        b"",  # connects and sends nothing
        b"GET /healthz HTTP/1.1\r\nHost: x\r\n",  # headers never finished
        b"POST /api/ask HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",  # body never sent
    ],
    ids=["nothing", "headers_unfinished", "body_never_sent"],
)
def test_a_half_sent_request_is_closed_after_the_request_timeout(served, first_bytes):
    # Before: uvicorn has no read timeout; 1,000 such connections stayed open 300 s, no credential needed.
    with socket.create_connection(("127.0.0.1", served.port)) as half:
        half.sendall(first_bytes)
        # A keep-alive connection that finished its request and is idle is not cut by the request timeout.
        with socket.create_connection(("127.0.0.1", served.port)) as idle:
            idle.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            idle.settimeout(10)
            assert idle.recv(65536).startswith(b"HTTP/1.1 200")
            assert closed_within(half, 30)  # request_timeout is 1 s; 30 is only the test's patience
            assert still_open(idle)
            idle.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert idle.recv(65536).startswith(b"HTTP/1.1 200")
    assert httpx.get(served.url + "/healthz", timeout=10).status_code == 200


def test_past_the_cap_the_oldest_half_open_connection_is_closed_and_new_clients_get_in(engine):
    web = WebSettings(request_timeout=600.0, max_half_open=4)  # the timeout is out of the picture here
    with ThreadServer(build_app(engine.settings, engine, web, progress=False, ui=False), web=web) as server:
        socks = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(8)]
        try:
            for sock in socks:
                sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            assert all(closed_within(sock, 30) for sock in socks[:4])  # the four oldest were closed
            assert all(still_open(sock) for sock in socks[4:])
            assert httpx.get(server.url + "/healthz", timeout=10).status_code == 200  # a new client still gets in
        finally:
            for sock in socks:
                sock.close()


# ---------------------------------------------------------------- keep-alive and settings


def test_idle_keep_alive_outlasts_client_and_proxy_pools():
    # Before: uvicorn's default 5 s; clients that reuse a pooled connection after 5 s idle raced the server's close
    # (6 of 1,600 requests reset). The server must close after the clients (nginx/ALB 60 s), not before.
    config = server_config(object(), WebSettings())
    assert config.timeout_keep_alive == 75 and config.timeout_keep_alive > 60
    assert config.http.__name__ == "HalfOpenH11Protocol" and config.proxy_headers is False
    web = WebSettings.from_env(
        {"BOT_KEEP_ALIVE_TIMEOUT": "120", "BOT_REQUEST_TIMEOUT": "2.5", "BOT_MAX_HALF_OPEN": "64"}
    )
    assert (web.keep_alive_timeout, web.request_timeout, web.max_half_open) == (120, 2.5, 64)
    with pytest.raises(ValueError, match="BOT_REQUEST_TIMEOUT='0' is not allowed"):
        WebSettings.from_env({"BOT_REQUEST_TIMEOUT": "0"})
