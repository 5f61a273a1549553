"""Issue 11: one door for every route, no uploads, JSON hygiene, forwarded headers, disconnects.

The app is the real one (``app.build_app``) over a one-document knowledge base with the
``hash`` embedder, served by uvicorn on a free port in a thread.
"""

from __future__ import annotations

import json
import logging
import socket
import time
from pathlib import Path

import httpx
import pytest

from app import WebSettings, build_app
from bot.engine.retrieve import Engine
from fixtures.engines import one_section_engine
from fixtures.server import ThreadServer
from fixtures.source import parse

TOKEN = "s3cret-token"


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> Engine:
    return one_section_engine(tmp_path_factory.mktemp("security"))


@pytest.fixture(scope="module")
def locked(engine):
    web = WebSettings(api_token=TOKEN, trusted_header="X-Portal-User")
    with ThreadServer(
        build_app(engine.settings, engine, web, progress=False), log_level="info", log_config=None
    ) as server:
        yield server


@pytest.fixture(scope="module")
def open_app(engine):
    app = build_app(engine.settings, engine, WebSettings(), progress=False)
    with ThreadServer(app, log_level="info", log_config=None) as server:
        server.recorder = app.state.recorder  # no store: the events are kept in memory (MemoryRecorder)
        yield server


def join(server: ThreadServer, prefix: str = "", **kw) -> httpx.Response:
    body = {
        "data": ["显存不足", [], None],
        "fn_index": 0,
        "session_hash": "abc123",
        "event_data": None,
        "trigger_id": 1,
    }
    return httpx.post(f"{server.url}{prefix}/gradio_api/queue/join", json=body, timeout=30, **kw)


# ---------------------------------------------------------------- one door


@pytest.mark.parametrize("prefix", ["", "/widget"])
def test_gradio_routes_are_behind_the_same_door_as_the_api(locked, prefix):
    # Before: BOT_API_TOKEN guarded /api/* only; queue/join answered anyone (200).
    assert join(locked, prefix).status_code == 401
    for method, path in [
        ("GET", "/gradio_api/queue/data?session_hash=abc123"),
        ("POST", "/gradio_api/run/add_user"),
        ("POST", "/gradio_api/call/add_user"),
        ("GET", "/config"),
        ("GET", "/gradio_api/info"),
        ("GET", "/"),
    ]:
        response = httpx.request(
            method, f"{locked.url}{prefix}{path}", json={"data": []} if method == "POST" else None, timeout=30
        )
        assert response.status_code == 401, (prefix, path, response.status_code)
        assert "credentials" in response.text
    assert httpx.get(locked.url + "/source?key=gpu.md", timeout=30).status_code == 401
    # With a credential the same calls work.
    assert join(locked, prefix, headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    assert join(locked, prefix, headers={"X-Portal-User": "alice"}).status_code == 200
    assert join(locked, prefix, headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert join(locked, prefix, headers={"X-Portal-User": ""}).status_code == 401
    # Static files and the health check stay open.
    assert httpx.get(locked.url + "/healthz", timeout=30).status_code == 200


def test_gradio_client_is_refused_without_the_token_and_works_with_it(locked):
    from gradio_client import Client

    with pytest.raises(Exception) as refused:
        Client(locked.url, verbose=False, download_files=False)
    assert "credentials" in str(refused.value).lower() or "401" in str(refused.value)
    client = Client(locked.url, headers={"Authorization": f"Bearer {TOKEN}"}, verbose=False, download_files=False)
    box, chat = client.predict("显存不足怎么办", api_name="/add_user")[:2]  # the session keeps the history
    assert box == "" and "显存不足" in json.dumps(chat, ensure_ascii=False)


def test_browser_gets_in_with_the_token_once_then_a_cookie(locked):
    first = httpx.get(locked.url + "/widget/?token=" + TOKEN + "&lang=en", timeout=30, follow_redirects=False)
    assert first.status_code == 303 and first.headers["location"] == "/widget/?lang=en"  # token gone from the URL
    cookie = first.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and TOKEN not in cookie
    jar = httpx.Cookies()
    jar.set(*cookie.split(";")[0].split("=", 1))
    assert httpx.get(locked.url + "/widget/?lang=en", cookies=jar, timeout=30).status_code == 200
    assert join(locked, "/widget", cookies=jar).status_code == 200
    wrong = httpx.get(locked.url + "/?token=nope", timeout=30, follow_redirects=False)
    assert wrong.status_code == 401
    behind_tls = httpx.get(
        locked.url + "/?token=" + TOKEN, headers={"X-Forwarded-Proto": "https"}, timeout=30, follow_redirects=False
    )  # the proxy (127.0.0.1, trusted by default) terminated TLS
    assert "; Secure" in behind_tls.headers["set-cookie"]


# ---------------------------------------------------------------- uploads


@pytest.mark.parametrize("prefix", ["", "/widget"])
def test_upload_route_is_closed_with_or_without_credentials(locked, open_app, prefix):
    files = {"files": ("big.bin", b"\0" * 100_000, "application/octet-stream")}
    # Before: 200 and the file kept in the temp dir, token or not.
    assert httpx.post(f"{open_app.url}{prefix}/gradio_api/upload", files=files, timeout=30).status_code == 403
    authorized = httpx.post(
        f"{locked.url}{prefix}/gradio_api/upload", files=files, timeout=30, headers={"Authorization": f"Bearer {TOKEN}"}
    )
    assert authorized.status_code == 403 and "upload" in authorized.json()["detail"]


# ---------------------------------------------------------------- JSON endpoints


@pytest.mark.parametrize(
    "path,body", [("/api/ask", {"question": "显存不足"}), ("/api/feedback", {"question": "q", "vote": "up"})]
)
@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", None])
def test_json_endpoints_refuse_other_content_types(open_app, path, body, content_type):
    # text/plain needs no CORS preflight: before, any page could write feedback cross-site.
    headers = {"Content-Type": content_type} if content_type else {}
    response = httpx.post(open_app.url + path, content=json.dumps(body).encode(), headers=headers, timeout=30)
    assert response.status_code == 415, response.text
    assert "application/json" in response.json()["detail"]
    ok = httpx.post(
        open_app.url + path,
        content=json.dumps(body).encode(),
        headers={"Content-Type": "application/json; charset=utf-8"},
        timeout=30,
    )
    assert ok.status_code == 200, ok.text


@pytest.mark.parametrize(
    "payload,status,words",
    [
        (b"[" * 100_000 + b"]" * 100_000, 413, "values"),  # before: 500 RecursionError; now over the value budget
        (b"[" * 1_000 + b"]" * 1_000, 400, "nested"),
        (b'{"question": "q", "history": ' + b"[" * 40 + b"]" * 40 + b"}", 400, "nested"),
        (b'{"question": "\xff\xfe q"}', 400, "UTF-8"),  # before: accepted with U+FFFD
        (b"{not json", 400, "not JSON"),
        (b'{"question": "q", "history": [' + b'"x", ' * 150 + b'"x"]}', 422, "history"),
    ],
    ids=["deep_100k", "deep_1k", "deep_41_in_history", "invalid_utf8", "not_json", "history_151_turns"],
)
def test_malformed_or_deep_json_is_a_client_error_with_a_message(open_app, payload, status, words):
    response = httpx.post(
        open_app.url + "/api/ask", content=payload, headers={"Content-Type": "application/json"}, timeout=30
    )
    assert response.status_code == status, response.text[:300]
    assert words in response.json()["detail"]


@pytest.mark.parametrize(
    "body,words",
    [
        ({"question": "q", "vote": "down", "cited": ["k"] * 11}, "at most 10"),
        ({"question": "q", "vote": "down", "cited": ["k" * 301]}, "at most 300"),
        ({"question": "q", "vote": "down", "cited": [5]}, "string"),
        ({"question": "", "vote": "down"}, "empty"),
    ],
)
def test_feedback_fields_are_capped(open_app, body, words):
    before = open_app.recorder.events
    response = httpx.post(open_app.url + "/api/feedback", json=body, timeout=30)
    assert response.status_code == 422 and words in response.json()["detail"], response.text
    assert open_app.recorder.events == before  # nothing recorded


# ---------------------------------------------------------------- forwarded headers


def test_forwarded_host_is_believed_only_from_configured_proxies(engine):
    from fastapi.testclient import TestClient

    headers = {"X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "https", "Content-Type": "application/json"}
    body = json.dumps({"question": "显存不足怎么办"})
    stranger = TestClient(
        build_app(engine.settings, engine, WebSettings(trusted_proxies=("10.0.0.1",)), progress=False)
    )
    hits = stranger.post("/api/ask", content=body, headers=headers).json()["hits"]
    assert hits and "evil.example" not in hits[0]["url"]  # before: https://evil.example/source?…
    # TestClient's peer is the name "testclient", which no variable could set (they take addresses): a copy, unchecked
    web = WebSettings().model_copy(update={"trusted_proxies": ("testclient",)})
    proxy = TestClient(build_app(engine.settings, engine, web, progress=False))
    assert (
        proxy.post("/api/ask", content=body, headers=headers)
        .json()["hits"][0]["url"]
        .startswith("https://evil.example/source?")
    )


def test_trusted_proxies_from_env():
    assert WebSettings.from_env({"BOT_TRUSTED_PROXIES": "10.0.0.0/8, 192.168.1.5"}).trusted_proxies == (
        "10.0.0.0/8",
        "192.168.1.5",
    )
    assert WebSettings.from_env({"FORWARDED_ALLOW_IPS": "10.1.1.1"}).trusted_proxies == ("10.1.1.1",)
    assert WebSettings.from_env({}).trusted_proxies == ("127.0.0.1",)


# ---------------------------------------------------------------- disconnects


def test_client_disconnect_is_logged_in_one_line(open_app, caplog):
    caplog.set_level(logging.INFO)
    with socket.create_connection(("127.0.0.1", open_app.port), timeout=10) as sock:
        sock.sendall(
            b"POST /api/ask HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100000\r\n\r\n" + b'{"question": "' + b"x" * 1000
        )
        time.sleep(0.3)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not any("disconnected" in r.getMessage() for r in caplog.records):
        time.sleep(0.1)
    gone = [r for r in caplog.records if "disconnected" in r.getMessage()]
    assert len(gone) == 1 and "/api/ask" in gone[0].getMessage()
    assert not [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]
    assert httpx.get(open_app.url + "/healthz", timeout=10).status_code == 200


# ---------------------------------------------------------------- a real browser through the door


@pytest.mark.browser
def test_browser_opens_the_locked_widget_with_the_token_once_and_chats(locked, browser):
    opened = list(browser.contexts)  # the session's Chromium: close only what this test opens
    try:
        page = browser.new_context(locale="zh-CN").new_page()
        refused = page.goto(locked.url + "/widget/", wait_until="load")
        assert refused.status == 401 and "needs a login" in page.content()
        page.goto(locked.url + "/widget/?token=" + TOKEN, wait_until="load")
        assert "token=" not in page.url  # the redirect took it out of the address bar and history
        page.wait_for_selector("#question textarea", timeout=60_000)
        page.fill("#question textarea", "显存不足怎么办")
        page.press("#question textarea", "Enter")
        # The answer comes through Gradio's queue (join + data stream), which now needs the cookie.
        page.wait_for_function(
            "() => [...document.querySelectorAll('[data-testid=bot]')].some(m => m.innerText.includes('batch_size'))",
            timeout=60_000,
        )
    finally:
        for context in browser.contexts:
            if context not in opened:
                context.close()


def test_every_credential_comparison_goes_through_one_function():
    # Before: the door, app.py's /api/* check and the ?token= sign-in each compared tokens with their own
    # hmac.compare_digest. Now they call bot.web.credentials.token_matches (via bearer_matches / api_authorizer).
    # /admin's Bearer and sign-in form call them too.
    import ast

    from fixtures import REPO

    def compares(path: Path) -> list[str]:
        tree = parse(path)
        owners = []
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for inner in ast.walk(node):
                    if isinstance(inner, ast.Attribute) and inner.attr == "compare_digest":
                        owners.append(node.name)
        return owners

    found = {str(p.relative_to(REPO)): compares(p) for p in [*REPO.joinpath("bot").rglob("*.py"), REPO / "app.py"]}
    found = {path: sorted(set(owners)) for path, owners in found.items() if owners}
    assert found == {
        "bot/web/credentials.py": ["cookie_ok", "token_matches"],  # cookie_ok compares a MAC it computed, not a token
    }


def test_bearer_check_is_one_function_for_the_door_and_the_api():
    from bot.web.credentials import bearer_matches
    from bot.web.door import api_authorizer

    assert bearer_matches("Bearer api-token-1", "api-token-1") and bearer_matches("bearer  api-token-1 ", "api-token-1")
    assert not bearer_matches("Bearer api-token-2", "api-token-1") and not bearer_matches("Bearer ", "")
    authorize = api_authorizer(WebSettings(api_token="api-token-1"))
    request = type("R", (), {"headers": {"authorization": "Bearer api-token-1"}})()
    assert authorize(request) is None
    request.headers = {"authorization": "Bearer wrong-token"}
    from fastapi import HTTPException

    with pytest.raises(HTTPException) as refused:
        authorize(request)
    assert refused.value.status_code == 401
