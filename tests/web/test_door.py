"""Issue 19: the door (bot/web/security.py) with BOT_API_TOKEN and BOT_ADMIN_TOKEN set.

The sign-in redirect stays on this site, the session cookie ages on the server, an operator's
Bearer token opens /admin, and a request naming a Gradio event the UI does not have is a
one-line 404. The app is the real one (UI included), served by uvicorn on a free port.
"""

from __future__ import annotations

import logging
import time

import httpx
import pytest

from app import WebSettings, build_app
from bot.store.database import StoreSettings, open_store
from bot.web.credentials import COOKIE, COOKIE_MAX_AGE, cookie_value
from fixtures.server import ThreadServer

TOKEN = "s3cret-token"
ADMIN = "0perator-token"


@pytest.fixture(scope="module")
def door(tmp_path_factory):
    from fixtures.engines import one_section_engine

    root = tmp_path_factory.mktemp("door")
    engine = one_section_engine(root)
    ops = StoreSettings(data_dir=root / "data", admin_token=ADMIN, index_poll_seconds=0)
    store = open_store(ops)
    app = build_app(engine.settings, engine, WebSettings(api_token=TOKEN), progress=False, store=store, ops=ops)
    with ThreadServer(app, log_level="info", log_config=None) as server:
        yield server
    store.close()


@pytest.mark.parametrize(
    "path",
    [
        "//evil.example/",
        "/\\evil.example/",
        "/%2F%2Fevil.example/",
        "/\\/evil.example",
        "//evil.example/%2F..",
        "/%09/evil.example/",
    ],
)
def test_sign_in_redirect_never_leaves_the_site(door, path):
    # Before: GET //evil.example/?token=T -> 303 Location: //evil.example/ (the browser goes to evil.example).
    response = httpx.get(f"{door.url}{path}?token={TOKEN}&lang=en", timeout=30, follow_redirects=False)
    assert response.status_code == 303
    location = response.headers["location"]
    assert location.startswith("/") and not location.startswith(("//", "/\\")), location
    assert "\\" not in location and "\t" not in location
    assert httpx.URL(door.url).join(location).host == "127.0.0.1"  # resolved as a browser would: this site
    assert location.endswith("?lang=en") and TOKEN not in location


def test_sign_in_redirect_keeps_an_ordinary_path(door):
    response = httpx.get(f"{door.url}/widget/?token={TOKEN}&lang=en", timeout=30, follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/widget/?lang=en"


def test_session_cookie_expires_on_the_server(door):
    # Before: the cookie was a fixed HMAC of the token, valid forever on the server (12 h was only the browser's
    # Max-Age), so a copied cookie never stopped working.
    now = int(time.time())
    fresh = cookie_value(TOKEN, now - 60)
    stale = cookie_value(TOKEN, now - COOKIE_MAX_AGE - 60)
    future = cookie_value(TOKEN, now + 3600)  # minted with a clock far ahead: refused too

    def page(value: str) -> int:
        return httpx.get(door.url + "/config", cookies={COOKIE: value}, timeout=30).status_code

    assert page(fresh) == 200
    assert page(stale) == 401 and page(future) == 401
    assert page(fresh.replace(".", ".0", 1)) == 401  # a tampered MAC
    legacy = "0" * 64  # the old fixed format: no issue time
    assert page(legacy) == 401
    # The cookie the sign-in sets carries its issue time and works.
    signed_in = httpx.get(f"{door.url}/?token={TOKEN}", timeout=30, follow_redirects=False)
    value = signed_in.headers["set-cookie"].split(";")[0].split("=", 1)[1]
    assert abs(int(value.split(".")[0]) - now) < 3600 and page(value) == 200


def test_admin_token_as_bearer_opens_admin_through_the_door(door):
    # Before: with BOT_API_TOKEN set, the door answered 401 to "Bearer <BOT_ADMIN_TOKEN>" on /admin and the CSV export.
    admin = {"Authorization": f"Bearer {ADMIN}"}
    page = httpx.get(door.url + "/admin", headers=admin, timeout=30)
    assert page.status_code == 200 and "<html" in page.text.lower()
    export = httpx.get(door.url + "/admin/export.csv", headers=admin, timeout=30)
    assert export.status_code == 200 and "text/csv" in export.headers["content-type"]
    # The admin token opens /admin only, not the rest of the app ...
    for path in ("/config", "/api/openapi.json", "/source?key=gpu.md"):
        assert httpx.get(door.url + path, headers=admin, timeout=30).status_code == 401, path
    assert httpx.post(door.url + "/api/ask", json={"question": "q"}, headers=admin, timeout=30).status_code == 401
    # ... and a wrong token or none gets nowhere.
    assert httpx.get(door.url + "/admin", headers={"Authorization": "Bearer nope-nope"}, timeout=30).status_code == 401
    assert httpx.get(door.url + "/admin/export.csv", timeout=30).status_code == 401
    # The API token passes the door; /admin's own check still wants the operator credential.
    api = httpx.get(door.url + "/admin/export.csv", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
    assert api.status_code == 401 and "text/csv" not in api.headers.get("content-type", "")


@pytest.mark.parametrize(
    "path,body",
    [
        ("/gradio_api/run/predict", {"data": []}),
        ("/gradio_api/call/predict", {"data": []}),
        ("/gradio_api/queue/join", {"data": [], "fn_index": 999, "session_hash": "abc123"}),
    ],
    ids=["run_unknown_name", "call_unknown_name", "join_unknown_fn_index"],
)
def test_unknown_gradio_event_is_one_log_line_and_a_404(door, caplog, path, body):
    # Before: 500 and ~116 lines of traceback in the log per request (anyone could flood the log).
    caplog.set_level(logging.INFO)
    caplog.clear()
    response = httpx.post(door.url + path, json=body, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
    assert response.status_code == 404 and "no such event" in response.json()["detail"]
    server_side = [r for r in caplog.records if not r.name.startswith(("httpx", "httpcore", "uvicorn.access"))]
    lines = [line for r in server_side for line in (r.getMessage() + "\n" + (r.exc_text or "")).strip().splitlines()]
    tracebacks = [r for r in server_side if r.exc_info]
    assert not tracebacks and len(lines) == 1 and "no such Gradio event" in lines[0], lines[:5]
    # A real event still works.
    ok = httpx.post(
        door.url + "/gradio_api/call/add_user",
        json={"data": ["显存不足", []]},
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=30,
    )
    assert ok.status_code == 200
