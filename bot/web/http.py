"""HTTP pieces of the app that do not need Gradio: web settings, the server's limits (timeouts,
half-open connections, keep-alive), security headers, public links and API history parsing
(the source view is bot/answer/source_view.py).

:class:`bot.settings.WebSettings` is read from the environment by :class:`bot.web.config.AppConfig` at the edges
(``app.py``, ``python -m bot``); everything here takes it as an argument.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Mapping
from typing import Any

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bot.limits import HISTORY_ITEMS_READ
from bot.settings import WebSettings
from bot.web.raw_response import send_response

MAX_BODY_BYTES = 8 * 1024 * 1024  # a JSON body above this is refused with 413 (the text limit is max_input_chars)
log = logging.getLogger("bot.web.http")

# ---------------------------------------------------------------- middleware


class SecurityHeaders:
    """Adds ``Content-Security-Policy: frame-ancestors ...`` (and nosniff) to every HTTP response, errors included."""

    def __init__(self, app: ASGIApp, frame_ancestors: tuple[str, ...]) -> None:
        self.app = app
        self.policy = "frame-ancestors " + " ".join(frame_ancestors or ("'none'",))

    def _headers(self, message: Message) -> None:
        headers = MutableHeaders(scope=message)
        existing = headers.get("content-security-policy")
        if not existing:
            headers["content-security-policy"] = self.policy
        elif "frame-ancestors" not in existing:
            headers["content-security-policy"] = f"{existing}; {self.policy}"
        if "x-content-type-options" not in headers:
            headers["x-content-type-options"] = "nosniff"
        if "referrer-policy" not in headers:
            headers["referrer-policy"] = "strict-origin-when-cross-origin"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                self._headers(message)
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        except Exception:
            if not started:  # answer the error here so that it, too, carries the headers
                body = b'{"error": "internal server error"}'
                await send_response(send_with_headers, 500, body, [(b"content-type", b"application/json")])
            raise


# ---------------------------------------------------------------- helpers


def public_base(headers: Mapping[str, str], scheme: str, web: WebSettings) -> str:
    """Absolute base URL of the app as the browser sees it (links must work inside a portal page too)."""
    if web.public_url:
        return web.public_url.rstrip("/")
    proto = (headers.get("x-forwarded-proto") or scheme or "http").split(",")[0].strip()
    host = (headers.get("x-forwarded-host") or headers.get("host") or f"{web.host}:{web.port}").split(",")[0].strip()
    if not re.match(r"^[\w.\-:\[\]]+$", host):  # never build links from a malformed Host header
        host = f"{web.host}:{web.port}"
    if proto not in ("http", "https"):
        proto = "http"
    return f"{proto}://{host}{web.root_path}"


def request_base(request: Any, web: WebSettings) -> str:
    try:
        headers = {k.lower(): v for k, v in dict(request.headers).items()}
    except Exception:
        headers = {}
    scheme = "http"
    try:
        scheme = request.url.scheme
    except Exception:
        pass
    return public_base(headers, scheme, web)


def history_messages(history: Any) -> list[str]:
    """API history -> prior user messages. Accepts strings, {"role","content"} and {"question"} items."""
    if history is None:
        return []
    if not isinstance(history, list):
        raise ValueError("history must be a list of prior turns")
    out: list[str] = []
    for item in history[-HISTORY_ITEMS_READ:]:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            if "question" in item and isinstance(item["question"], str):
                out.append(item["question"])
            elif item.get("role") == "user" and isinstance(item.get("content"), str):
                out.append(item["content"])
            elif item.get("role") in ("assistant", "system"):
                continue
            else:
                raise ValueError(
                    'each history item must be a string, {"question": str} or {"role": "user", "content": str}'
                )
        else:
            raise ValueError("each history item must be a string or an object")
    return out


# The source view moved to bot/answer/source_view.py (HTML from bot/answer/templates/source.html).


# ---------------------------------------------------------------- the server's limits


def half_open_protocol(request_timeout: float, max_half_open: int, max_idle: int = 256) -> type:
    """uvicorn's h11 protocol with a request timeout, a cap on half-open connections and one on idle ones.

    uvicorn closes idle keep-alive connections but has no read timeout: a client that connects and
    never finishes its headers, or announces a body and never sends it, held its connection for as
    long as it liked (1,000 such connections stayed open 300 s, no credential needed). Here a
    connection must send a request's line and headers within ``request_timeout`` seconds of its
    first byte (or of connecting), and then its whole body within as long again, however it is
    paced (a body trickled one byte every 10 s used to keep its connection, since each byte restarted
    the clock); time the server itself stopped reading (flow control while the app is busy) does not
    count. At most ``max_half_open`` connections may be in the middle of sending a request, and at
    most ``max_idle`` may sit idle between requests: past either the oldest of them is closed, so new
    clients still get a file descriptor while an attacker refills.

    Each call makes a new class (one per server) holding its own table of half-open connections.
    """
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    half_open: dict[Any, None] = {}  # insertion-ordered: the oldest half-open connection first
    idle: dict[Any, None] = {}  # likewise: connections between requests (uvicorn's keep-alive timer runs)
    evictions = {"count": 0, "logged": 0.0}

    class HalfOpenH11Protocol(H11Protocol):
        _timer: asyncio.TimerHandle | None = None
        _in_body = False  # the body's deadline is set once, when its head is in

        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._start_request()  # a new connection owes its first request within the timeout

        def data_received(self, data: bytes) -> None:
            idle.pop(self, None)
            super().data_received(data)
            self._watch()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._watch()
            if self not in half_open and self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self._idle()

        def connection_lost(self, exc: Exception | None) -> None:
            idle.pop(self, None)
            self._done()
            super().connection_lost(exc)

        def handle_websocket_upgrade(self, event: Any) -> None:
            self._done()  # the websocket protocol owns the connection from here on
            super().handle_websocket_upgrade(event)

        # ---- bookkeeping

        def _watch(self) -> None:
            if self.transport is None or self.transport.is_closing():
                self._done()
                return
            state = self.conn.their_state
            if state is h11.IDLE and self.conn.trailing_data[0]:
                self._start_request()  # part of the next request's headers: the clock runs from its first byte
            elif state is h11.SEND_BODY:
                if not self._in_body:  # one deadline for the whole body, not one per pause
                    self._in_body = True
                    self._arm()
                half_open.setdefault(self, None)
            else:  # idle between requests (the keep-alive timer's job), or the whole request is in
                self._done()

        def _start_request(self) -> None:
            if self in half_open:
                return
            while len(half_open) >= max_half_open:
                oldest = next(iter(half_open))
                half_open.pop(oldest, None)
                oldest._close("too many half-open connections")
                self._evicted("still sending a request", max_half_open, "BOT_MAX_HALF_OPEN")
            half_open[self] = None
            self._arm()

        def _arm(self) -> None:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = self.loop.call_later(request_timeout, self._expired)

        def _idle(self) -> None:
            idle[self] = None
            while len(idle) > max_idle:
                oldest = next(iter(idle))
                idle.pop(oldest, None)
                oldest._close("too many idle connections")
                self._evicted("idle", max_idle, "BOT_MAX_IDLE")

        def _done(self) -> None:
            self._in_body = False
            half_open.pop(self, None)
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

        def _expired(self) -> None:
            self._timer = None
            if self.transport.is_closing():
                return
            if self.conn.their_state is h11.SEND_BODY and self.flow.read_paused:
                self._arm()  # the server stopped reading (the app is busy), not the client
                return
            self._close(f"request not received within {request_timeout:g} s")

        def _close(self, why: str) -> None:
            self._done()
            if not self.transport.is_closing():
                log.debug("closing connection from %s: %s", self.client and self.client[0], why)
                self.transport.close()

        @staticmethod
        def _evicted(what: str, limit: int, variable: str) -> None:
            evictions["count"] += 1
            now = time.monotonic()
            if now - evictions["logged"] > 60:  # one line a minute under a flood, not one per connection
                evictions["logged"] = now
                log.warning(
                    "more than %d connections were %s; closed the oldest (%d so far; %s)",
                    limit,
                    what,
                    evictions["count"],
                    variable,
                )

    HalfOpenH11Protocol.half_open = half_open  # type: ignore[attr-defined]  # for tests and probes
    HalfOpenH11Protocol.idle = idle  # type: ignore[attr-defined]
    return HalfOpenH11Protocol


def server_config(app: Any, web: WebSettings, **options: Any) -> Any:
    """The ``uvicorn.Config`` the app is served with: h11 with the request timeout, half-open and idle caps of
    ``web``, its keep-alive timeout, and X-Forwarded-* left to :mod:`bot.web.security` (``trusted_proxies``)."""
    import uvicorn

    settings = dict(
        host=web.host,
        port=web.port,
        root_path=web.root_path,
        proxy_headers=False,
        timeout_keep_alive=web.keep_alive_timeout,
        http=half_open_protocol(web.request_timeout, web.max_half_open, web.max_idle),
    )
    settings.update(options)
    return uvicorn.Config(app, **settings)
