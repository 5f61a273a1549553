"""Issue 28 (round three): the HTTP door, served by uvicorn with the product's own server settings on a free port.

Gradio's JSON routes get the API's size cap and off-loop check; ``/v1`` counts usage off the loop on capped text;
a request body has one total deadline; ``Content-Length`` with ``Transfer-Encoding`` is refused and the connection
closed; every credential at the door counts towards one throttle; the trusted header is believed only from a
trusted proxy. (The idle keep-alive cap, which needs a server with its own descriptor limit:
tests/system/test_door_idle.py.)
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading

import httpx
import pytest

import bot.web.json_limits as json_limits
import bot.web.openai_api as openai_api
import bot.web.security as security
from app import build_app
from bot.settings import WebSettings
from bot.store.database import StoreSettings, open_store
from fixtures.server import ThreadServer
from fixtures.sockets import closed_within, read_until_closed

TOKEN = "s3cret-token"
ADMIN = "0perator-token"
BIG = "big-gradio-body"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    from fixtures.engines import one_section_engine

    return one_section_engine(tmp_path_factory.mktemp("door28"))


@pytest.fixture(scope="module")
def served(engine):
    """The whole app (Gradio UI and widget included) behind the door; request timeout 1 s so tests can await it."""
    web = WebSettings(api_token=TOKEN, request_timeout=1.0)
    with ThreadServer(build_app(engine.settings, engine, web, progress=False), web=web) as server:
        yield server


def serve(engine, tmp_path, web: WebSettings, **options):
    """A fresh API-only app (its own throttle) with an operator token and a store, served on a free port."""
    ops = StoreSettings(data_dir=tmp_path / "data", admin_token=ADMIN, index_poll_seconds=0)
    store = open_store(ops)
    app = build_app(engine.settings, engine, web, progress=False, ui=False, store=store, ops=ops, **options)
    return ThreadServer(app, web=web), store


# ---------------------------------------------------------------- 2. Gradio's JSON routes


@pytest.mark.parametrize("path", ["/gradio_api/queue/join", "/widget/gradio_api/queue/join"])
def test_a_64_mb_body_to_a_gradio_route_is_refused_413_unread(served, path):
    # Before: Gradio's routes had no size cap: a 64 MB body got 200. Now 413 as soon as the head is in, the body
    # never read, the connection closed.
    head = (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {64 * 1024 * 1024}\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", served.port)) as sock:
        sock.sendall(head.encode() + b'{"data": [')
        answer = read_until_closed(sock, 30)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b"over 8 MB" in answer


def test_a_gradio_body_of_many_values_is_refused_before_gradio_parses_it(served):
    # Before: 8 MB of "[]," went to Gradio's json.loads on the event loop (/healthz from 1 ms to 23 s).
    body = b'{"data": [' + b",".join([b"[]"] * 50_000) + b'], "fn_index": 0, "session_hash": "abc"}'
    response = httpx.post(
        served.url + "/gradio_api/queue/join",
        content=body,
        headers={**AUTH, "Content-Type": "application/json"},
        timeout=60,
    )
    assert response.status_code == 413 and "values" in response.json()["detail"]


def test_a_large_gradio_body_is_checked_off_the_event_loop(served, monkeypatch):
    # Before: nothing checked a Gradio body (the hold below was never reached). Now a large body to queue/join is
    # checked in a worker thread: while its check is held, health checks are still answered.
    entered, release = threading.Event(), threading.Event()
    real = json_limits.json_depth

    def held_depth(value):
        if isinstance(value, dict) and value.get("marker") == BIG:
            entered.set()
            release.wait(60)
        return real(value)

    monkeypatch.setattr(json_limits, "json_depth", held_depth)
    body = json.dumps({"data": [], "fn_index": 0, "session_hash": "abc", "marker": BIG, "pad": "x" * 200_000})
    assert len(body) > security.INLINE_BYTES

    def post_big() -> None:
        httpx.post(
            served.url + "/widget/gradio_api/queue/join",
            content=body,
            headers={**AUTH, "Content-Type": "application/json"},
            timeout=120,
        )

    sender = threading.Thread(target=post_big)
    sender.start()
    try:
        assert entered.wait(30), "the large Gradio body never reached the JSON check"
        with httpx.Client(timeout=10) as client:
            health = [client.get(served.url + "/healthz").status_code for _ in range(10)]
        still_checking = sender.is_alive() and not release.is_set()
    finally:
        release.set()
        sender.join(120)
    assert health == [200] * 10 and still_checking


# ---------------------------------------------------------------- 4. a total deadline per body


def test_a_trickled_body_is_closed_at_the_request_timeout(served):
    # Before: every byte restarted the body's clock, so a body trickled slower than the request timeout but faster
    # than each pause's limit kept its connection for good (still open at 65 s with one byte every 10 s).
    head = (
        f"POST /api/ask HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
        "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", served.port)) as sock:
        sock.sendall(head.encode())
        closed = False
        for _ in range(40):  # one byte every 0.25 s: each pause well under the 1 s timeout; 10 s at most
            try:
                sock.sendall(b" ")
            except OSError:
                closed = True
                break
            if closed_within(sock, 0.25):
                closed = True
                break
    assert closed, "a body trickled for 10 s kept its connection (request timeout 1 s)"


# ---------------------------------------------------------------- 7. CL + TE


def test_content_length_with_transfer_encoding_is_refused_and_the_connection_closed(served):
    # Before: framed by Transfer-Encoding and kept open, so the bytes after the chunked end ran as a second request
    # (answered 200): a CL.TE desync behind a proxy that frames by Content-Length.
    body = b'{"question": "q"}'
    smuggled = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    request = (
        b"POST /api/ask HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN.encode() + b"\r\n"
        b"Content-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n"
        + f"{len(body):x}\r\n".encode()
        + body
        + b"\r\n0\r\n\r\n"
        + smuggled
    )
    with socket.create_connection(("127.0.0.1", served.port)) as sock:
        sock.sendall(request)
        answer = read_until_closed(sock, 30)
    assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
    assert answer.count(b"HTTP/1.1 ") == 1, answer  # the smuggled request was never answered
    # An ordinary chunked request still works.
    with httpx.Client(timeout=30) as client:
        chunks = iter([body])
        response = client.post(
            served.url + "/api/ask", content=chunks, headers={**AUTH, "Content-Type": "application/json"}
        )
    assert response.status_code == 200


# ---------------------------------------------------------------- 11. one throttle


def guesses_until_429(send, limit: int = 40) -> tuple[int, httpx.Response]:
    for n in range(1, limit + 1):  # bounded: the throttle allows 5 free failures
        response = send()
        if response.status_code == 429:
            return n, response
        assert response.status_code == 401, response.text
    raise AssertionError(f"{limit} wrong credentials in a row and no 429")


def test_bearer_guesses_on_admin_are_throttled_at_the_door(engine, tmp_path):
    # Before: with BOT_API_TOKEN set, a wrong Bearer on /admin/* was refused 401 by the door before /admin's
    # throttle counted it: 300 guesses at 1,131/s, no 429, then the right token 200.
    server, store = serve(engine, tmp_path, WebSettings(api_token=TOKEN))
    with server, httpx.Client(base_url=server.url, timeout=30) as client:
        n, locked = guesses_until_429(lambda: client.get("/admin/export.csv", headers={"Authorization": "Bearer nope"}))
        assert n <= 10 and int(locked.headers["retry-after"]) >= 1
        # Locked out: the right operator token gets 429 too, so a guess that hits learns nothing.
        right = client.get("/admin/export.csv", headers={"Authorization": f"Bearer {ADMIN}"})
        assert right.status_code == 429
    store.close()


@pytest.mark.parametrize("how", ["bearer", "query"])
def test_api_token_guesses_are_throttled(engine, tmp_path, how):
    # Before: the API token had no throttle at all (Bearer on /api, ?token= on the page).
    server, store = serve(engine, tmp_path, WebSettings(api_token=TOKEN))
    with server, httpx.Client(base_url=server.url, timeout=30) as client:
        if how == "bearer":
            n, _ = guesses_until_429(
                lambda: client.post("/api/ask", json={"question": "q"}, headers={"Authorization": "Bearer guess-1"})
            )
        else:
            n, _ = guesses_until_429(lambda: client.get("/source?key=gpu.md&token=guess-1"))
        assert n <= 10
        assert client.post("/api/ask", json={"question": "q"}, headers=AUTH).status_code == 429
        assert client.get("/healthz").status_code == 200  # a request without a credential is not locked out
    store.close()


def test_open_v1_with_a_dummy_bearer_is_not_throttled(engine, tmp_path):
    # OpenAI clients send "Bearer sk-..." even where no token is needed: with the API open that is no guess.
    server, store = serve(engine, tmp_path, WebSettings())
    with server, httpx.Client(base_url=server.url, timeout=30) as client:
        statuses = {
            client.get("/v1/models", headers={"Authorization": "Bearer sk-dummy"}).status_code for _ in range(12)
        }
    store.close()
    assert statuses == {200}


# ---------------------------------------------------------------- 12. the trusted header


def test_trusted_header_is_believed_only_from_a_trusted_proxy(engine, tmp_path):
    # Before: BOT_TRUSTED_HEADER opened every route from any peer, even with BOT_TRUSTED_PROXIES naming another
    # address (3 of 3 routes from 127.0.0.1 with BOT_TRUSTED_PROXIES=10.9.9.9).
    portal = {"X-Portal-User": "alice"}
    routes = [
        ("POST", "/api/ask", {"question": "显存不足"}),
        ("GET", "/v1/models", None),
        ("GET", "/source?key=gpu.md", None),
    ]
    elsewhere = WebSettings(trusted_header="X-Portal-User", trusted_proxies=("10.9.9.9",))
    server, store = serve(engine, tmp_path / "a", elsewhere)
    with server, httpx.Client(base_url=server.url, timeout=30) as client:
        refused = [client.request(m, p, json=b, headers=portal).status_code for m, p, b in routes]
    store.close()
    assert refused == [401, 401, 401]
    here = WebSettings(trusted_header="X-Portal-User", trusted_proxies=("127.0.0.1",))
    server, store = serve(engine, tmp_path / "b", here)
    with server, httpx.Client(base_url=server.url, timeout=30) as client:
        opened = [client.request(m, p, json=b, headers=portal).status_code for m, p, b in routes]
        without = client.get("/v1/models").status_code
    store.close()
    assert opened == [200, 200, 404] and without == 401  # 404: past the door, no section gpu.md


# ---------------------------------------------------------------- 3. /v1 usage


def test_v1_usage_is_counted_off_the_loop_on_capped_text(engine, tmp_path, monkeypatch):
    # Before: usage listed every CJK character of every message, on the event loop, with system and assistant
    # messages uncapped (7.2 MB system messages: /healthz p95 1.5 s, +307 MB).
    on_loop: list[bool] = []
    real = openai_api.count_tokens

    def watched(text: str) -> int:
        try:
            asyncio.get_running_loop()
            on_loop.append(True)
        except RuntimeError:
            on_loop.append(False)
        return real(text)

    monkeypatch.setattr(openai_api, "count_tokens", watched)
    cap = engine.settings.max_input_chars
    server, store = serve(engine, tmp_path, WebSettings())
    messages = [
        {"role": "system", "content": "显" * (cap * 3)},
        {"role": "assistant", "content": "存" * (cap * 3)},
        {"role": "user", "content": "显存不足"},
    ]
    with server:
        response = httpx.post(
            server.url + "/v1/chat/completions",
            json={"model": "gpu-troubleshooter", "messages": messages},
            timeout=120,
        )
    store.close()
    assert response.status_code == 200, response.text
    usage = response.json()["usage"]
    assert usage["prompt_tokens"] <= cap + len("显存不足")  # the earlier messages share one cap, like the history
    assert on_loop and not any(on_loop)
