"""Every stored event says which edge recorded it: ui, widget, api or v1 (it used to say "app" for all)."""

from __future__ import annotations

import csv
import io

import httpx
import pytest

from app import build_app
from bot.engine.retrieve import Engine
from bot.settings import WebSettings
from bot.store.database import Store, StoreSettings
from fixtures.server import ThreadServer

ADMIN = "operator-secret"


def test_api_and_v1_events_carry_their_origin_into_the_store_and_the_export(tmp_path, hash_settings):
    store = Store.open(StoreSettings(data_dir=tmp_path / "data", admin_token=ADMIN))
    app = build_app(
        hash_settings, engine=Engine.open(hash_settings, auto_build=True), progress=False, store=store, ui=False
    )
    try:
        with ThreadServer(app) as server:
            assert (
                httpx.post(server.url + "/api/ask", json={"question": "显存不足怎么办"}, timeout=30).status_code == 200
            )
            assert (
                httpx.post(
                    server.url + "/api/feedback", json={"question": "显存不足怎么办", "vote": "up"}, timeout=30
                ).status_code
                == 200
            )
            assert (
                httpx.post(
                    server.url + "/v1/chat/completions",
                    timeout=30,
                    json={"messages": [{"role": "user", "content": "libnccl.so 报错"}]},
                ).status_code
                == 200
            )
            assert store.flush(10)
            assert [(r["kind"], r["origin"]) for r in store.rows()] == [
                ("question", "api"),
                ("vote", "api"),
                ("question", "v1"),
            ]
            export = httpx.get(
                server.url + "/admin/export.csv?table=events", timeout=30, headers={"Authorization": f"Bearer {ADMIN}"}
            ).text.lstrip("\ufeff")
            assert [e["origin"] for e in csv.DictReader(io.StringIO(export))] == ["api", "api", "v1"]
            page = httpx.get(server.url + "/admin", headers={"Authorization": f"Bearer {ADMIN}"}, timeout=60).text
            assert "Events by origin: api 2 · v1 1" in page
    finally:
        store.close()


class ListRecorder:
    def __init__(self) -> None:
        self.events: list = []

    def record(self, event, *, session: str = "", latency_ms=None) -> None:
        self.events.append(event)


@pytest.mark.parametrize("compact,origin", [(True, "widget"), (False, "ui")])
def test_the_chat_page_and_the_widget_say_which_they_are(hash_settings, compact, origin):
    from bot.web.ui import ChatState, Deps, make_ui, respond, submit

    recorder = ListRecorder()
    blocks = make_ui(
        Engine.open(hash_settings, auto_build=True), hash_settings, WebSettings(), compact=compact, recorder=recorder
    )
    # The handlers' Deps, as make_ui built it (what a browser's turn goes through).
    deps = next(
        cell.cell_contents
        for f in blocks.fns.values()
        for cell in (getattr(f.fn, "__closure__", None) or ())
        if isinstance(cell.cell_contents, Deps)
    )
    state, taken = submit(ChatState(), "显存不足怎么办", hash_settings.max_input_chars)
    assert taken
    respond(deps, state, "http://assistant.test")
    assert recorder.events and {e.origin for e in recorder.events} == {origin}
