"""The app serves its API while the UI is still being built (bot/web/deferred.py), driven as an ASGI server would."""

from __future__ import annotations

import asyncio
import threading

from bot.web.deferred import DeferredApp


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
        inbox: asyncio.Queue = asyncio.Queue()
        outbox: asyncio.Queue = asyncio.Queue()
        server = asyncio.create_task(app({"type": "lifespan"}, inbox.get, outbox.put))
        await inbox.put({"type": "lifespan.startup"})
        assert (await outbox.get())["type"] == "lifespan.startup.complete"  # the server starts at once

        assert await _get(app, "/api/ask") == (200, "light /api/ask", {})
        # the OpenAI-compatible API is an API too: it answers as soon as /api/ask does (it was a 503 page)
        assert await _get(app, "/v1/chat/completions") == (200, "light /v1/chat/completions", {})
        assert await _get(app, "/v1/models") == (200, "light /v1/models", {})
        assert (await _get(app, "/v1x"))[0] == 503  # a prefix of a path, not any path starting with "/v1"
        status, body, headers = await _get(app, "/")
        assert status == 503 and headers["retry-after"] == "1" and "starting" in body
        assert (await _get(app, "/healthz"))[0] == 503  # readiness means the whole app

        release.set()
        for _ in range(500):
            if app.full is not None:
                break
            await asyncio.sleep(0.01)
        assert started == ["full"]  # its own start-up (Gradio's queue) ran before it took requests
        assert await _get(app, "/") == (200, "full /", {})
        assert await _get(app, "/api/ask") == (200, "full /api/ask", {})

        await inbox.put({"type": "lifespan.shutdown"})
        assert (await outbox.get())["type"] == "lifespan.shutdown.complete"
        await server

    asyncio.run(scenario())


def test_a_ui_that_fails_to_build_leaves_the_api_working_and_says_why():
    def build_full():
        raise RuntimeError("gradio is broken")

    app = DeferredApp(_app("light"), build_full)

    async def scenario():
        inbox: asyncio.Queue = asyncio.Queue()
        outbox: asyncio.Queue = asyncio.Queue()
        server = asyncio.create_task(app({"type": "lifespan"}, inbox.get, outbox.put))
        await inbox.put({"type": "lifespan.startup"})
        await outbox.get()
        for _ in range(500):
            if app.failed is not None:
                break
            await asyncio.sleep(0.01)
        status, body, _ = await _get(app, "/")
        assert status == 500 and "gradio is broken" in body
        assert (await _get(app, "/api/ask"))[0] == 200
        await inbox.put({"type": "lifespan.shutdown"})
        await outbox.get()
        await server

    asyncio.run(scenario())
