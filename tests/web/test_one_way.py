"""A message goes one way: the edge hands it over once and gets a finished reply back (issue 24).

Traced with :func:`sys.setprofile`: every call into a stage below the edge (``bot.kb``, ``bot.engine``,
``bot.answer``) made from the edge's own code (``bot.web``, ``app``) is a crossing. From the moment the
edge calls :func:`bot.answer.turn.take_turn`, the only crossings allowed are that call and, for a JSON API,
serialising the finished turn. Before, the edge went back down after the turn: ``handoff.finish`` into
``reply.with_scope``/``with_person``, ``events.py`` into ``reply.truncation_notice``, ``app.py`` re-signing
the serialised reply.
"""

from __future__ import annotations

import asyncio
import sys
from types import FrameType

import httpx

from bot.answer.reply import Contact
from bot.engine.retrieve import Engine
from bot.settings import WebSettings
from bot.web.ui import ChatState, Deps, respond, submit

BASE = "http://assistant.test"
BELOW_THE_EDGE = ("kb", "engine", "answer")  # the stages a message is handed down to, in build order
HAND_OVER = "bot.answer.turn.take_turn"


def stage_of(frame: FrameType) -> str:
    """``web`` for the edge (``bot.web.*`` and ``app``), a stage name for ``bot.<stage>.*``, else ""."""
    name = str(frame.f_globals.get("__name__", ""))
    if name == "app":
        return "web"
    parts = name.split(".")
    return parts[1] if parts[0] == "bot" and len(parts) > 2 else ""


class Crossings:
    """The calls the edge makes into the stages below it, in order, as ``module.qualname``."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, frame: FrameType, event: str, arg: object) -> None:
        if event != "call" or stage_of(frame) not in BELOW_THE_EDGE:
            return
        caller = frame.f_back
        while caller is not None and not stage_of(caller):  # through the standard library and dependencies
            caller = caller.f_back
        if caller is not None and stage_of(caller) == "web":
            self.calls.append(f"{frame.f_globals['__name__']}.{frame.f_code.co_qualname}")

    def __enter__(self) -> Crossings:
        sys.setprofile(self)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.setprofile(None)

    def after_hand_over(self) -> list[str]:
        assert HAND_OVER in self.calls, f"the edge never called take_turn: {self.calls}"
        return self.calls[self.calls.index(HAND_OVER) :]


def test_the_recorder_sees_a_crossing_and_not_a_call_inside_a_stage():
    # The check can fail: an edge function calling down is seen, a stage calling itself is not.
    from bot.answer.reply import text
    from bot.web.handoff import Exchange, transcript_text

    with Crossings() as seen:
        transcript_text([Exchange("OOM?")], None)  # web -> web only
        text("en", "empty")  # called from this test module: not the edge
    assert seen.calls == []
    from bot.web.ui.events import ask_person, exchanges

    with Crossings() as seen:
        exchanges(ChatState(), "显存不足")  # web -> web (Exchange is a web record)
        ask_person(Deps(None, None, WebSettings()), ChatState(language="en"))  # web -> answer: format_intent
    assert "bot.answer.reply.format_intent" in seen.calls
    assert not any(".texts." in call for call in seen.calls)  # reply -> texts: inside the answer stage


def test_a_chat_message_is_handed_over_once_and_comes_back_finished(hash_settings):
    engine = Engine.open(hash_settings, auto_build=True)
    deps = Deps(engine, hash_settings, WebSettings(), None, Contact("https://help.example.com", "Support"))
    state, taken = submit(ChatState(), "训练时显存不足怎么办", deps.settings.max_input_chars)
    assert taken
    with Crossings() as seen:
        state = respond(deps, state, BASE)
    assert state.messages[-1]["role"] == "assistant" and state.answers  # a real answer went through
    assert seen.after_hand_over() == [HAND_OVER], seen.calls


def test_a_truncated_message_gets_its_note_inside_the_turn(hash_settings):
    engine = Engine.open(hash_settings, auto_build=True)
    deps = Deps(engine, hash_settings.model_copy(update={"max_input_chars": 2_000}), WebSettings(), None, Contact())
    message = "显存不足\n" + "x " * 5_000 + "\nout of memory"
    state, _ = submit(ChatState(), message, deps.settings.max_input_chars)
    with Crossings() as seen:
        state = respond(deps, state, BASE)
    assert f"{len(message):,}" in state.messages[-1]["content"] and "2,000" in state.messages[-1]["content"]
    assert seen.after_hand_over() == [HAND_OVER], seen.calls  # the note was written in the turn, not by the edge


def test_an_api_request_is_handed_over_once_and_only_serialised_after(hash_settings, monkeypatch):
    import app as app_module

    async def inline(function, *args, **kwargs):  # the worker thread inline: the profile is per thread
        return function(*args, **kwargs)

    monkeypatch.setattr("starlette.concurrency.run_in_threadpool", inline)
    monkeypatch.setattr(app_module, "run_in_threadpool", inline, raising=False)
    engine = Engine.open(hash_settings, auto_build=True)
    web = WebSettings(api_token="api-token-1")  # locked: the reply's /source links get signed, in the turn
    api = app_module.build_app(
        hash_settings,
        engine=engine,
        web=web,
        progress=False,
        ui=False,
        admin=False,
        contact=Contact("mailto:gpu@example.com", "GPU help"),
    )

    async def ask() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=api), base_url=BASE) as client:
            with Crossings() as seen:
                response = await client.post(
                    "/api/ask",
                    headers={"Authorization": "Bearer api-token-1"},
                    json={"question": "训练时显存不足怎么办", "history": ["多卡训练报错"]},
                )
            ask.seen = seen  # type: ignore[attr-defined]
            return response

    response = asyncio.run(ask())
    assert response.status_code == 200, response.text
    data = response.json()
    assert data["hits"] and all("&sig=" in h["url"] for h in data["hits"])  # signed links, made in the turn
    assert ask.seen.after_hand_over() == [HAND_OVER, "bot.answer.turn.Turned.to_json"], ask.seen.calls
