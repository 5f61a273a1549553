"""Serve at once; load the index and build the web UI behind the open door.

Importing Gradio and building its UI takes seconds, loading the index half a second (FAISS, BM25,
jieba's dictionary). :class:`DeferredApp` is the ASGI app the server runs, listening from the
first second: in a worker thread it loads the engine (:class:`EngineWhenReady`) and builds the full
app (UI included), one after the other, in the order of ``BOT_START_FIRST``: ``api`` (the default)
loads the index first, so the API's first answer comes before Gradio is imported; ``ui`` builds the UI
first and loads the index while the browser renders the page. Until the UI is built a UI page (and
``/healthz``) gets ``503`` with ``Retry-After: 1`` and a page that reloads itself; until the engine is
loaded the API (``/api/*``, ``/v1/*``, ``/source``) gets ``503`` with ``Retry-After: 1`` and says the
index is loading, and a question typed into the chat waits for it. A failure to load the index is
fatal, as it was before the server started listening: ``on_fatal`` gets it (``app.py`` prints it and
stops the server with exit code 2).
"""

from __future__ import annotations

import asyncio
import gc
import html
import json
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from bot.web.raw_response import send_response

if TYPE_CHECKING:
    from bot.engine.answerer import ServingEngine

NO_STORE = (b"cache-control", b"no-store")  # a start-up answer is never cached: it is gone in seconds

# Served before the UI is up. /healthz is not: it means "everything is up", as it did before.
# /v1/ is the OpenAI-compatible API: an API like /api/, so it answers as soon as /api/ask does.
LIGHT_PATHS = ("/api/", "/v1/", "/source")
STARTING_PAGE = (
    b"<!doctype html><meta charset=utf-8><meta http-equiv=refresh content=1>"
    b"<title>Starting</title><p>The assistant is starting; this page reloads in a second. "
    b"\xe5\x8a\xa9\xe6\x89\x8b\xe6\xad\xa3\xe5\x9c\xa8\xe5\x90\xaf\xe5\x8a\xa8\xef\xbc\x8c\xe8\xaf\xb7\xe7\xa8\x8d\xe5\x80\x99\xe3\x80\x82</p>"
)


PAGE_QUIET_S = 0.5  # "ui" order: the page is loaded when no request for it has come for this long ...
PAGE_WAIT_S = 5.0  # ... or after this long, whatever the browser still asks
StartFirst = Literal["ui", "api"]  # what a cold start serves first: the chat page, or the API's first answer
# While the index loads and the UI is built, a young-generation collection runs every 50,000 allocations instead of
# CPython's 700: importing Gradio and building the Blocks allocate millions of objects that all live on, and
# collecting among them cost 0.3 s of the 2.7 s of CPU (12 %). The usual threshold is back once both are done.
START_GC_THRESHOLD = 50_000
ENGINE_WAIT_S = 600.0  # a chat question typed while the index loads waits this long at most (a first build: a minute)


class EngineLoading(RuntimeError):
    """The engine is not loaded yet (or failed to load): what a caller gets instead of waiting forever."""


class EngineWhenReady:
    """Stands in for the engine while it loads: ``settings`` at once, anything else once loaded.

    The UI and the routes are built with it before the index is open (they only keep a reference);
    a request that reaches the engine waits for :meth:`load` to finish.

    >>> from types import SimpleNamespace
    >>> pending = EngineWhenReady(settings="the settings")
    >>> pending.settings, pending.ready
    ('the settings', False)
    >>> pending.sections
    Traceback (most recent call last):
    bot.web.deferred.EngineLoading: engine.sections was used before the index began to load (while the UI was built?); the UI may keep a reference to the engine but not use it until a question comes
    >>> pending.load(lambda: SimpleNamespace(sections=[1, 2, 3]))
    >>> pending.ready, len(pending.sections)
    (True, 3)
    """

    def __init__(self, settings: Any) -> None:
        self.settings = settings  # read on the event loop by /v1 (max_input_chars): never wait for it
        self._loaded = threading.Event()
        self._loading = False
        self._engine: ServingEngine | None = None
        self._error: BaseException | None = None

    @property
    def ready(self) -> bool:
        return self._loaded.is_set() and self._error is None

    @property
    def failed(self) -> BaseException | None:
        return self._error

    def load(self, open_engine: Callable[[], ServingEngine]) -> None:
        """Run ``open_engine`` (in the caller's thread) and hand its engine to everyone waiting."""
        self._loading = True
        try:
            self._engine = open_engine()
        except BaseException as exc:
            self._error = exc
            raise
        finally:
            self._loaded.set()

    def __getattr__(self, name: str) -> Any:  # only for names not set in __init__
        if name.startswith("__"):
            raise AttributeError(name)
        if self._engine is not None:  # loaded: every request's path, no lock
            return getattr(self._engine, name)
        if not self._loading:
            # Asked before the load began: in the "ui" order that is the UI's own build, and waiting would hold
            # the load up behind it for ENGINE_WAIT_S. Say so at once instead.
            raise EngineLoading(
                f"engine.{name} was used before the index began to load (while the UI was built?); "
                "the UI may keep a reference to the engine but not use it until a question comes"
            )
        if not self._loaded.wait(ENGINE_WAIT_S):
            raise EngineLoading(f"the index did not load within {ENGINE_WAIT_S:.0f} s")
        if self._error is not None:
            raise EngineLoading(f"the index failed to load: {self._error}")
        return getattr(self._engine, name)


class DeferredApp:
    def __init__(
        self,
        light: Any,
        build_full: Callable[[], Any],
        engine: EngineWhenReady | None = None,
        open_engine: Callable[[], ServingEngine] | None = None,
        on_fatal: Callable[[BaseException], None] | None = None,
        first: StartFirst = "api",
    ) -> None:
        """``light``: the API routes, served at once; ``build_full``: the whole app (UI included), built in a
        worker thread. With ``engine`` and ``open_engine`` the engine is loaded too (the API answers 503 until
        then), after the UI (``first="ui"``) or before it (``"api"``); a failure to load it goes to ``on_fatal``."""
        self.first = first
        self._page_activity = 0.0  # when a UI request last came (monotonic), while the index waits to load
        self.light = light
        self._build_full = build_full
        self.engine = engine
        self._open_engine = open_engine
        self._on_fatal = on_fatal
        self.full: Any = None  # set once built and started
        self.failed: BaseException | None = None
        self._full_lifespan: asyncio.Task | None = None
        self._full_inbox: asyncio.Queue | None = None

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if self.full is not None:
            if scope["type"] == "http" and self.engine is not None and not self.engine.ready:
                if self._route(scope).startswith(LIGHT_PATHS + ("/healthz",)):
                    await self._loading(send)  # the UI is up, the index not yet: the API says so instead of waiting
                    return
                self._page_activity = time.monotonic()  # a browser is loading the page: the index load waits
            await self.full(scope, receive, send)
            return
        path = self._route(scope)
        if scope["type"] == "http" and not path.startswith(LIGHT_PATHS):
            await self._starting(send)
            return
        if self.engine is not None and not self.engine.ready and scope["type"] == "http":
            await self._loading(send)
            return
        await self.light(scope, receive, send)

    @staticmethod
    def _route(scope: dict) -> str:
        path = scope.get("path", "")
        root = scope.get("root_path", "")
        return path[len(root) :] if root and path.startswith(root) else path

    async def _loading(self, send: Callable) -> None:
        failed = self.engine.failed if self.engine is not None else None
        message = (
            f"the index failed to load: {failed}"
            if failed
            else "the knowledge base is still loading; retry in a second"
        )
        body = json.dumps(
            {"detail": message, "error": {"message": message, "type": "server_error", "code": 503}}
        ).encode()
        await send_response(send, 503, body, [(b"content-type", b"application/json"), (b"retry-after", b"1"), NO_STORE])

    async def _starting(self, send: Callable) -> None:
        status = 500 if self.failed else 503
        body = (
            STARTING_PAGE
            if not self.failed
            else f"The web UI failed to start: {html.escape(str(self.failed))}. See the server log.".encode()
        )
        await send_response(
            send, status, body, [(b"content-type", b"text/html; charset=utf-8"), (b"retry-after", b"1"), NO_STORE]
        )

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
            except (TimeoutError, Exception):  # shutting down anyway
                pass
        await send({"type": "lifespan.shutdown.complete"})

    async def _start_full(self) -> None:
        # One after the other: on two busy cores Gradio's import and the index load only slow each other down
        # (both hold the GIL; in threads side by side at load average 5, the index's 0.56 s of CPU took 2.5 s).
        first, second = (
            (self._start_ui, self._load_engine) if self.first == "ui" else (self._load_engine, self._start_ui)
        )
        usual = gc.get_threshold()
        gc.set_threshold(max(usual[0], START_GC_THRESHOLD), *usual[1:])
        try:
            await first()
            if self.first == "ui":
                await self._page_settled()
        finally:
            try:
                await second()
            finally:
                gc.set_threshold(*usual)

    async def _page_settled(self) -> None:
        """Wait until no page request has come for :data:`PAGE_QUIET_S` (at most :data:`PAGE_WAIT_S`).

        The index load holds the GIL (it held it for a second at a time while jieba read its dictionary, 0.2 s
        now): started while a browser fetched the page's scripts, it delayed them (the browser's part grew from
        1.1 s to 2.3 s)."""
        began = time.monotonic()
        while time.monotonic() - began < PAGE_WAIT_S:
            if time.monotonic() - max(self._page_activity, began) >= PAGE_QUIET_S:
                return
            await asyncio.sleep(0.05)

    async def _load_engine(self) -> None:
        if self.engine is None or self._open_engine is None:
            return
        loop = asyncio.get_running_loop()
        try:
            await loop.run_in_executor(None, self.engine.load, self._open_engine)
        except Exception as exc:
            if self._on_fatal is not None:
                self._on_fatal(exc)
            else:
                print(f"error: {exc}", file=sys.stderr, flush=True)

    async def _start_ui(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            full = await loop.run_in_executor(None, self._build_full)
        except Exception as exc:  # the API keeps working; UI pages say what broke
            self.failed = exc
            print(
                f"error: the web UI failed to build ({type(exc).__name__}: {exc}); the API still answers",
                file=sys.stderr,
                flush=True,
            )
            return
        inbox: asyncio.Queue = asyncio.Queue()
        started = loop.create_future()

        async def lifespan_send(message: dict) -> None:
            if message["type"].startswith("lifespan.startup") and not started.done():
                started.set_result(message)

        await inbox.put({"type": "lifespan.startup"})
        self._full_inbox = inbox
        self._full_lifespan = asyncio.create_task(
            full({"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}, inbox.get, lifespan_send)
        )
        message = await started
        if message["type"] != "lifespan.startup.complete":
            self.failed = RuntimeError(message.get("message") or "start-up failed")
            print(
                f"error: the web UI failed to start ({self.failed}); the API still answers", file=sys.stderr, flush=True
            )
            return
        self.full = full
