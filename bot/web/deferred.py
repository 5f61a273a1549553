"""Serve the JSON API while the web UI is still being built.

Importing Gradio and building its two UIs takes seconds (more than everything
the first answer needs together), and a portal sends questions to ``/api/ask``,
not to the UI. :class:`DeferredApp` is the ASGI app the server runs: it answers
with a light app (the API routes only) at once, builds the full app (UI
included) in a worker thread, runs the full app's start-up (its lifespan, which
starts Gradio's queue) and from then on hands every request to it. Until then a
UI page (and ``/healthz``) gets ``503`` with ``Retry-After: 1`` and a page that
reloads itself.
"""

from __future__ import annotations

import asyncio
import html
import sys
from typing import Any, Callable

# Served before the UI is up. /healthz is not: it means "everything is up", as it did before.
# /v1/ is the OpenAI-compatible API: an API like /api/, so it answers as soon as /api/ask does.
LIGHT_PATHS = ("/api/", "/v1/", "/source")
STARTING_PAGE = (
    b"<!doctype html><meta charset=utf-8><meta http-equiv=refresh content=1>"
    b"<title>Starting</title><p>The assistant is starting; this page reloads in a second. "
    b"\xe5\x8a\xa9\xe6\x89\x8b\xe6\xad\xa3\xe5\x9c\xa8\xe5\x90\xaf\xe5\x8a\xa8\xef\xbc\x8c\xe8\xaf\xb7\xe7\xa8\x8d\xe5\x80\x99\xe3\x80\x82</p>"
)


class DeferredApp:
    def __init__(self, light: Any, build_full: Callable[[], Any]) -> None:
        self.light = light
        self._build_full = build_full
        self.full: Any = None  # set once built and started
        self.failed: BaseException | None = None
        self._full_lifespan: asyncio.Task | None = None
        self._full_inbox: asyncio.Queue | None = None

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if self.full is not None:
            await self.full(scope, receive, send)
            return
        path = scope.get("path", "")
        root = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root):]
        if scope["type"] == "http" and not path.startswith(LIGHT_PATHS):
            await self._starting(send)
            return
        await self.light(scope, receive, send)

    async def _starting(self, send: Callable) -> None:
        status = 500 if self.failed else 503
        body = STARTING_PAGE if not self.failed else \
            f"The web UI failed to start: {html.escape(str(self.failed))}. See the server log.".encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"text/html; charset=utf-8"), (b"retry-after", b"1"),
                                (b"cache-control", b"no-store"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

    async def _lifespan(self, receive: Callable, send: Callable) -> None:
        message = await receive()
        assert message["type"] == "lifespan.startup"
        await send({"type": "lifespan.startup.complete"})
        starter = asyncio.create_task(self._start_full())
        message = await receive()  # lifespan.shutdown
        starter.cancel()
        if self._full_lifespan is not None and self._full_inbox is not None:
            await self._full_inbox.put({"type": "lifespan.shutdown"})
            try:
                await asyncio.wait_for(self._full_lifespan, timeout=10)
            except (asyncio.TimeoutError, Exception):  # shutting down anyway
                pass
        await send({"type": "lifespan.shutdown.complete"})

    async def _start_full(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            full = await loop.run_in_executor(None, self._build_full)
        except Exception as exc:  # the API keeps working; UI pages say what broke
            self.failed = exc
            print(f"error: the web UI failed to build ({type(exc).__name__}: {exc}); the API still answers",
                  file=sys.stderr, flush=True)
            return
        inbox: asyncio.Queue = asyncio.Queue()
        started = loop.create_future()

        async def lifespan_send(message: dict) -> None:
            if message["type"].startswith("lifespan.startup") and not started.done():
                started.set_result(message)

        await inbox.put({"type": "lifespan.startup"})
        self._full_inbox = inbox
        self._full_lifespan = asyncio.create_task(
            full({"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}, inbox.get, lifespan_send))
        message = await started
        if message["type"] != "lifespan.startup.complete":
            self.failed = RuntimeError(message.get("message") or "start-up failed")
            print(f"error: the web UI failed to start ({self.failed}); the API still answers",
                  file=sys.stderr, flush=True)
            return
        self.full = full
