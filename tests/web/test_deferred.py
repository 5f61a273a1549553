"""The app serves its API while the UI is still being built (bot/web/deferred.py), driven as an ASGI server would."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from bot.web.deferred import DeferredApp

REPO = Path(__file__).resolve().parents[2]


def _app(name: str, started: list[str] | None = None):
    """A tiny ASGI app that answers its name and records its lifespan start-up."""

    async def app(scope, receive, send):
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    if started is not None:
                        started.append(name)
                    await send({"type": "lifespan.startup.complete"})
                else:
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        body = f"{name} {scope['path']}".encode()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": body})

    return app


async def _until(condition, polls: int = 500) -> None:
    """Let the app's start-up run (it works in the event loop and its threads) until ``condition()`` holds or
    ``polls`` turns have passed; the caller's assertion says what was expected."""
    for _ in range(polls):
        if condition():
            return
        await asyncio.sleep(0.01)


async def _get(app, path: str) -> tuple[int, str, dict]:
    sent: list[dict] = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    await app({"type": "http", "path": path, "root_path": "", "method": "GET", "headers": []}, receive, send)
    headers = {k.decode(): v.decode() for k, v in sent[0].get("headers", [])}
    return sent[0]["status"], sent[1]["body"].decode(), headers


def test_api_answers_while_the_ui_builds_then_the_full_app_takes_over():
    release = threading.Event()
    started: list[str] = []

    def build_full():
        release.wait(10)  # the UI takes a while to build
        return _app("full", started)

    app = DeferredApp(_app("light"), build_full)

    async def scenario():
        server, inbox, outbox = await _start(app)  # the server starts at once (startup.complete)

        assert await _get(app, "/api/ask") == (200, "light /api/ask", {})
        # the OpenAI-compatible API is an API too: it answers as soon as /api/ask does (it was a 503 page)
        assert await _get(app, "/v1/chat/completions") == (200, "light /v1/chat/completions", {})
        assert await _get(app, "/v1/models") == (200, "light /v1/models", {})
        assert (await _get(app, "/v1x"))[0] == 503  # a prefix of a path, not any path starting with "/v1"
        status, body, headers = await _get(app, "/")
        assert status == 503 and headers["retry-after"] == "1" and "starting" in body
        assert (await _get(app, "/healthz"))[0] == 503  # readiness means the whole app

        release.set()
        await _until(lambda: app.full is not None)
        assert started == ["full"]  # its own start-up (Gradio's queue) ran before it took requests
        assert await _get(app, "/") == (200, "full /", {})
        assert await _get(app, "/api/ask") == (200, "full /api/ask", {})

        await _stop(server, inbox, outbox)

    asyncio.run(scenario())


def test_a_ui_that_fails_to_build_leaves_the_api_working_and_says_why():
    def build_full():
        raise RuntimeError("gradio is broken")

    app = DeferredApp(_app("light"), build_full)

    async def scenario():
        server, inbox, outbox = await _start(app)
        await _until(lambda: app.failed is not None)
        status, body, _ = await _get(app, "/")
        assert status == 500 and "gradio is broken" in body
        assert (await _get(app, "/api/ask"))[0] == 200
        await _stop(server, inbox, outbox)

    asyncio.run(scenario())


# ---------------------------------------------------------------- the index loads behind the UI (cold start)


def test_start_first_ui_serves_the_page_before_the_index_and_the_api_says_it_is_loading():
    # BOT_START_FIRST=ui: the UI is built first and the index loaded behind it; the API answers 503 meanwhile.
    # (Before: no such order; the server listened only once the index was loaded.)
    order, engine, app, index_may_load = _starting_app("ui")

    async def scenario():
        server, inbox, outbox = await _start(app)
        await _until(lambda: app.full is not None and order == ["ui", "index"])
        assert order == ["ui", "index"]  # the UI first, the index after it
        assert await _get(app, "/") == (200, "full /", {})  # the page is up while the index loads
        status, body, headers = await _get(app, "/api/ask")
        assert status == 503 and headers["retry-after"] == "1" and "still loading" in body
        assert (await _get(app, "/v1/models"))[0] == 503 and (await _get(app, "/healthz"))[0] == 503
        index_may_load.set()
        await _until(lambda: engine.ready)
        assert await _get(app, "/api/ask") == (200, "full /api/ask", {})
        assert engine.upper() == "THE ENGINE"  # the stand-in hands every other name to the engine
        await _stop(server, inbox, outbox)

    asyncio.run(scenario())


def test_start_first_ui_loads_the_index_only_once_the_page_has_stopped_asking(monkeypatch):
    # Before: the index began to load as soon as the UI was up and held the GIL while the browser fetched the
    # page's scripts (its part grew from 1.1 s to 2.3 s). Now it waits until page requests stop (or a cap).
    from bot.web import deferred

    monkeypatch.setattr(deferred, "PAGE_QUIET_S", 3600.0)
    monkeypatch.setattr(deferred, "PAGE_WAIT_S", 3600.0)
    order, engine, app, index_may_load = _starting_app("ui")
    index_may_load.set()

    async def scenario():
        server, inbox, outbox = await _start(app)
        await _until(lambda: app.full is not None)
        assert await _get(app, "/assets/index.js") == (200, "full /assets/index.js", {})  # the browser at work
        await asyncio.sleep(0.1)
        assert order == ["ui"]  # the index waits while the page may still be loading
        monkeypatch.setattr(deferred, "PAGE_WAIT_S", 0.0)  # the cap: it loads whatever the browser still asks
        await _until(lambda: engine.ready)
        assert order == ["ui", "index"] and engine.ready
        await _stop(server, inbox, outbox)

    asyncio.run(scenario())


def test_start_first_api_loads_the_index_before_building_the_ui():
    # BOT_START_FIRST=api (the default): the API's first answer comes before Gradio is even imported.
    order, engine, app, index_may_load = _starting_app("api")

    async def scenario():
        server, inbox, outbox = await _start(app)
        await _until(lambda: order)
        assert order == ["index"] and (await _get(app, "/"))[0] == 503  # no UI while the index loads
        index_may_load.set()
        await _until(lambda: app.full is not None)
        assert order == ["index", "ui"] and engine.ready
        assert await _get(app, "/") == (200, "full /", {})
        await _stop(server, inbox, outbox)

    asyncio.run(scenario())


def _starting_app(first: str):
    """A DeferredApp whose index load waits for the returned event; ``order`` records what ran."""
    from bot.web.deferred import EngineWhenReady

    order: list[str] = []
    index_may_load = threading.Event()

    def build_full():
        order.append("ui")
        return _app("full")

    def open_engine():
        order.append("index")
        index_may_load.wait(10)
        return "the engine"

    engine = EngineWhenReady(settings="settings")
    return (
        order,
        engine,
        DeferredApp(_app("light"), build_full, engine=engine, open_engine=open_engine, first=first),
        index_may_load,
    )


async def _start(app):
    inbox: asyncio.Queue = asyncio.Queue()
    outbox: asyncio.Queue = asyncio.Queue()
    server = asyncio.create_task(app({"type": "lifespan"}, inbox.get, outbox.put))
    await inbox.put({"type": "lifespan.startup"})
    assert (await outbox.get())["type"] == "lifespan.startup.complete"
    return server, inbox, outbox


async def _stop(server, inbox, outbox):
    await inbox.put({"type": "lifespan.shutdown"})
    assert (await outbox.get())["type"] == "lifespan.shutdown.complete"
    await server


def test_an_index_that_cannot_load_is_fatal_and_the_api_says_why():
    from bot.web.deferred import EngineWhenReady

    fatal: list[BaseException] = []

    def open_engine():
        raise FileNotFoundError("no index in /srv/index")

    engine = EngineWhenReady(settings="settings")
    app = DeferredApp(
        _app("light"), lambda: _app("full"), engine=engine, open_engine=open_engine, on_fatal=fatal.append
    )

    async def scenario():
        server, inbox, outbox = await _start(app)
        await _until(lambda: fatal)
        assert [str(e) for e in fatal] == ["no index in /srv/index"]
        status, body, _ = await _get(app, "/api/ask")
        assert status == 503 and "failed to load: no index in /srv/index" in body
        await _stop(server, inbox, outbox)

    asyncio.run(scenario())


def test_the_app_stops_with_exit_code_2_when_the_index_cannot_load(tmp_path, monkeypatch, capsys):
    # As before the server listened first: an unusable embedder or index ends the process with one line.
    import app
    from fixtures.server import free_port

    monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("BOT_EMBEDDER", "no-such-embedder")
    monkeypatch.setenv("BOT_INDEX_DIR", str(tmp_path / "index"))
    monkeypatch.setattr(app, "build_app", _light_only(app.build_app))  # the UI is not what this is about
    assert app.main(["--port", str(free_port())]) == 2
    err = capsys.readouterr().err
    assert "error: " in err and "no-such-embedder" in err


def _light_only(build_app):
    def build(*args, **kwargs):
        kwargs["ui"] = False
        return build_app(*args, **kwargs)

    return build


def test_the_whole_app_builds_before_the_index_is_loaded(hash_settings):
    # The "ui" order builds the UI, the API routes and /admin with a stand-in engine: none of them may use it while
    # being built (the stand-in raises at once if one does, instead of holding the index load up behind it).
    from app import WebSettings, build_app
    from bot.web.deferred import EngineWhenReady

    engine = EngineWhenReady(hash_settings)
    app = build_app(hash_settings, engine, WebSettings(), progress=False)
    assert app is not None and not engine.ready and engine.failed is None


def test_collections_are_rarer_while_starting_and_as_usual_once_started():
    # Importing Gradio and building the UI allocate millions of objects that all live on; CPython's young-generation
    # collection every 700 allocations cost 12 % of that CPU. The start raises the threshold, then puts it back.
    import gc

    from bot.web.deferred import START_GC_THRESHOLD, EngineWhenReady

    usual = gc.get_threshold()
    seen: dict[str, tuple] = {}

    def build_full():
        seen["ui"] = gc.get_threshold()
        return _app("full")

    def open_engine():
        seen["index"] = gc.get_threshold()
        return "the engine"

    app = DeferredApp(_app("light"), build_full, engine=EngineWhenReady(settings="settings"), open_engine=open_engine)

    async def scenario():
        server, inbox, outbox = await _start(app)
        await _until(lambda: app.full is not None)
        assert app.full is not None and app.engine.ready
        await _stop(server, inbox, outbox)

    try:
        asyncio.run(scenario())
        assert seen == {"index": (START_GC_THRESHOLD, *usual[1:]), "ui": (START_GC_THRESHOLD, *usual[1:])}
        assert gc.get_threshold() == usual
    finally:
        gc.set_threshold(*usual)


LISTEN_PROBE = """
import json, os, sys, threading
import uvicorn
import app

never = threading.Event()
app.open_engine = lambda settings, **kw: never.wait()  # the index (and, in the "api" order, the UI after it) waits
real_startup = uvicorn.Server.startup

async def startup(self, *args, **kwargs):
    await real_startup(self, *args, **kwargs)
    heavy = ("gradio", "IPython", "langchain_text_splitters", "langchain_core")
    print(json.dumps(sorted(name for name in heavy if name in sys.modules)), flush=True)
    os._exit(0)  # listening is all this probe is about

uvicorn.Server.startup = startup
sys.exit(app.main(["--host", "127.0.0.1", "--port", sys.argv[1]]))
"""


def test_the_server_listens_before_gradio_is_imported(tmp_path):
    # Before, the API-only app that serves while the rest loads mounted /admin, whose mount imports the chat UI's
    # package and so Gradio: the server listened (and the API answered) only after Gradio's 3 s import.
    # Nor does opening the index import langchain any more (only a build chunks documents).
    import json
    import os
    import subprocess
    import sys

    from fixtures.server import free_port

    env = {k: v for k, v in os.environ.items() if not k.startswith("BOT_")}
    env.update(
        BOT_DATA_DIR=str(tmp_path / "data"),
        BOT_START_FIRST="api",
        BOT_INDEX_POLL_SECONDS="0",
        PYTHONPATH=os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]),
    )
    probe = subprocess.run(
        [sys.executable, "-c", LISTEN_PROBE, str(free_port())],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert probe.returncode == 0, probe.stderr[-2000:]
    assert json.loads(probe.stdout.splitlines()[-1]) == []
