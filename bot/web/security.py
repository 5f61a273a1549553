"""One ASGI middleware in front of every route: the door, the closed upload route, JSON hygiene,
forwarded headers and client disconnects.

Installed by ``app.build_app`` inside the CORS and security-header middlewares (so a refusal
still carries CORS and frame-ancestors headers, and CORS preflights never need credentials).

What it uses lives beside it, one thing a module: :mod:`bot.web.credentials` (token comparison, the session
cookie, the lock-out), :mod:`bot.web.door` (the routes' own check, a second lock, and the parsed JSON body),
:mod:`bot.web.signing` (signed ``/source`` links and conversation states) and :mod:`bot.web.json_limits` (what a
JSON body may be). This module is the middleware itself (about 500 lines: one ASGI ``__call__`` and the steps it
takes, in order).

**The door.** When ``BOT_API_TOKEN`` or ``BOT_TRUSTED_HEADER`` is set, every request needs one of

- ``Authorization: Bearer <token>`` (API clients, ``gradio_client`` with ``headers=``),
- the trusted header with a non-empty value (set by the portal's reverse proxy after login),
- the session cookie, which a browser gets by opening any page once with ``?token=<token>``
  (answered with a redirect to the same page without the token, setting an HttpOnly
  ``SameSite=Lax`` cookie that holds its issue time and an HMAC of the token and that time, never
  the token itself; the server refuses it after :data:`COOKIE_MAX_AGE`, whatever the browser keeps).
  The redirect goes to a same-origin path only (``//host``, ``/\\host`` and the like are folded to
  one leading ``/``).
- on ``/admin`` and ``/admin/*`` also ``Authorization: Bearer <BOT_ADMIN_TOKEN>`` (an operator's
  script needs no API token; the admin routes check their own credential behind the door);
- on ``GET /source`` only, a signed link (``exp`` and ``sig`` in the query, :class:`LinkSigner`): the
  citation links of ``/api`` and ``/v1`` replies open in a browser that has no other credential.

Every token comparison goes through :func:`token_matches` (:func:`bearer_matches` for the header).

Behind it every route checks its own realm with the one dependency, :class:`Door` (``/api/*`` and ``/v1/*``:
Bearer or trusted header, not the cookie; ``/admin``: the operator's credential), a second lock kept on purpose. Only static files stay open (:data:`OPEN_PATHS`, :data:`OPEN_PREFIXES`: Gradio's JavaScript,
CSS, fonts and icons, which hold no session data) and ``/healthz`` (for the load balancer).
The page shell (``/``, ``/widget/``), ``/config``, ``/source`` and every Gradio API route
(``queue/join``, ``queue/data``, ``run/*``, ``call/*``, ``file=*`` …) are behind it, with and
without the ``/widget`` prefix: a path is open only when listed, so a route Gradio adds in a
later version is closed by default.

**Closed routes.** The product has no upload feature, so Gradio's upload routes answer 403
whatever the credentials (Gradio would otherwise keep any file it is sent in the temp dir).

**JSON.** ``POST``/``PUT``/``PATCH`` to ``/api/*`` and ``/v1/*`` must be ``application/json``
(415 otherwise: a ``text/plain`` form post from another site needs no CORS preflight) and
valid strict UTF-8 JSON no deeper than :data:`MAX_JSON_DEPTH` (400 with the reason otherwise),
at most ``MAX_BODY_BYTES`` (413) and at most :data:`MAX_JSON_ITEMS` values (413: the cost of parsing
grows with the number of values, not bytes; an 8 MB body of ``[]`` took 5 s of CPU). Bodies over
:data:`INLINE_BYTES` are checked in a worker thread, one at a time, so a large body never holds the
event loop (health checks and small requests go on meanwhile). The checked body is replayed to the
route, and the parsed value is left in ``scope["bot.json"]`` so the route need not parse it again.

Gradio's own routes (``/gradio_api/*``, with and without ``/widget``) get the same size cap and check (any
JSON-ish or missing ``Content-Type``; other bodies only the size cap) before Gradio parses them on the loop.

**Forwarded headers.** ``X-Forwarded-*`` and ``Forwarded`` are honoured only from the peers in
``WebSettings.trusted_proxies`` (uvicorn's proxy-header handling runs inside this middleware,
with that list); from anyone else they are dropped before the app sees them, and so is the trusted
header (``BOT_TRUSTED_HEADER``): only a trusted proxy may open the door with it.

**One throttle.** Every credential the door checks (a Bearer where a token is set, ``?token=``) counts
towards one :class:`LoginThrottle` per client, shared with ``/admin``'s sign-in form: while a client is
locked out, every request of it that presents a credential gets 429.

**Framing.** A request with both ``Content-Length`` and ``Transfer-Encoding`` gets 400 and its connection
is closed (RFC 9112 §6.1: no bytes after its body can be read as another request).

**Disconnects.** A client that goes away mid-request is logged in one line, not a traceback.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

import anyio
import anyio.to_thread
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

if TYPE_CHECKING:
    pass

from bot.web.credentials import (
    COOKIE,
    COOKIE_MAX_AGE,
    COUNTED,
    LoginThrottle,
    bearer,
    bearer_matches,
    cookie_ok,
    cookie_value,
    token_matches,
)
from bot.web.json_limits import JSON_KEY, JSONProblem, load_json
from bot.web.raw_response import send_response
from bot.web.signing import SOURCE_PATH, LinkSigner, LinkVerdict

log = logging.getLogger("bot.web.security")

INLINE_BYTES = 64 * 1024  # smaller bodies are checked on the event loop: cheaper than a thread hop
JSON_PREFIXES = ("/api/", "/v1/")
GRADIO_API = "/gradio_api/"  # Gradio's own routes (queue/join, run/*, call/* …), under each mount
JSON_METHODS = ("POST", "PUT", "PATCH")
MOUNTS = ("", "/widget")  # the full UI at /, the compact widget at /widget/
# Static files of the UI (no session data), open even when the door is locked.
OPEN_PATHS = frozenset({"/healthz", "/gradio.js", "/favicon.ico", "/robots.txt", "/theme.css", "/manifest.json"})
OPEN_PREFIXES = ("/assets/", "/static/", "/svelte/", "/pwa_icon")
CLOSED_SUFFIXES = ("/gradio_api/upload", "/gradio_api/upload/", "/gradio_api/upload_progress")
FORWARDED = (
    b"x-forwarded-host",
    b"x-forwarded-proto",
    b"x-forwarded-for",
    b"x-forwarded-port",
    b"x-forwarded-prefix",
    b"forwarded",
)


def same_origin_path(root: str, path: str, query: str = "") -> str:
    """A redirect target that can only be a path on this origin.

    Browsers read ``//host`` and ``/\\host`` as another site (and drop tabs and newlines first), so
    the path is percent-encoded (``\\`` and controls included) and starts with exactly one ``/``.

    >>> same_origin_path("", "//evil.example/"), same_origin_path("", "/\\evil.example/x\\y"), same_origin_path("/bot", "/widget/", "a=1")
    ('/evil.example/', '/evil.example/x%5Cy', '/bot/widget/?a=1')
    """
    target = "/" + quote(f"{root}{path}".lstrip("/\\"), safe="/:@!$&'()*+,;=-._~")
    target = re.sub(r"^/+", "/", target)
    parts = urlsplit(target)
    if parts.scheme or parts.netloc:  # cannot happen after the quoting; never redirect off-site if it did
        target = "/"
    return target + (f"?{query}" if query else "")


def _headers(scope: Scope) -> dict[bytes, bytes]:
    return {name.lower(): value for name, value in scope.get("headers") or []}


def _media_type(value: bytes) -> str:
    return value.decode("latin-1").split(";", 1)[0].strip().lower()


def _unknown_gradio_event(exc: BaseException) -> bool:
    """True when ``exc`` comes from Gradio looking up the event a request names (unknown api_name or fn_index)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return False
    code = tb.tb_frame.f_code
    return code.co_name == "get_fn" and code.co_filename.replace("\\", "/").endswith("gradio/route_utils.py")


class SecurityMiddleware:
    def __init__(
        self,
        app: ASGIApp,
        web: Any,
        max_body_bytes: int | None = None,
        admin_token: str = "",
        clock: Callable[[], float] = time.time,
        throttle: LoginThrottle | None = None,
    ) -> None:
        from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

        from bot.web.http import MAX_BODY_BYTES

        self.web = web
        self.max_body = max_body_bytes or MAX_BODY_BYTES
        proxies = list(getattr(web, "trusted_proxies", ()) or ())
        # uvicorn rewrites client and scheme from X-Forwarded-For/-Proto of trusted peers; it runs *inside* this
        # middleware so that the peer check below still sees the real peer.
        self.proxy = ProxyHeadersMiddleware(app, trusted_hosts=proxies)
        self.app = self.proxy if proxies else app
        self.locked = bool(web.api_token or web.trusted_header)
        self.admin_token = admin_token
        # One count of wrong credentials per client for the whole app (share it with /admin's sign-in form).
        self.throttle = throttle or LoginThrottle()
        # Only a trusted proxy may set the trusted header, like X-Forwarded-*: from anyone else it is dropped.
        self.strip = FORWARDED + ((web.trusted_header.lower().encode(),) if web.trusted_header else ())
        self.clock = clock
        self.links = LinkSigner.from_web(web)  # signed /source links open that page without other credentials
        self._big_json: anyio.CapacityLimiter | None = None  # made on first use: it needs the running loop

    # ------------------------------------------------------------ routing

    def _path(self, scope: Scope) -> str:
        path = scope.get("path") or "/"
        root = scope.get("root_path") or ""
        if root and path.startswith(root):
            path = path[len(root) :] or "/"
        return path

    @staticmethod
    def _is_open(path: str) -> bool:
        for mount in MOUNTS:
            if mount and not path.startswith(mount + "/"):
                continue
            rest = path[len(mount) :]
            if rest in OPEN_PATHS or rest.startswith(OPEN_PREFIXES):
                return True
        return False

    # ------------------------------------------------------------ credentials

    def _authorized(self, scope: Scope, headers: dict[bytes, bytes], path: str) -> bool:
        web = self.web
        given = headers.get(b"authorization", b"")
        if (path == "/admin" or path.startswith("/admin/")) and bearer_matches(given, self.admin_token):
            return True  # an operator's script; the admin routes check this credential again themselves
        if web.api_token:
            if bearer_matches(given, web.api_token):
                return True
            now = self.clock()
            for part in headers.get(b"cookie", b"").decode("latin-1").split(";"):
                name, _, value = part.strip().partition("=")
                if name == COOKIE and cookie_ok(value, web.api_token, now):
                    return True
        if web.trusted_header and headers.get(web.trusted_header.lower().encode(), b"").strip():
            return True
        return False

    def _query_token(self, scope: Scope) -> tuple[bool, bool, str]:
        """(a token given, it is right, the query string without it)."""
        query = scope.get("query_string", b"").decode("latin-1")
        if not self.web.api_token or "token=" not in query:
            return False, False, query
        pairs = parse_qsl(query, keep_blank_values=True)
        given = [v for k, v in pairs if k == "token"]
        rest = urlencode([(k, v) for k, v in pairs if k != "token"])
        ok = bool(given) and token_matches(given[-1], self.web.api_token)
        return bool(given), ok, rest

    def _peer(self, scope: Scope, headers: dict[bytes, bytes], trusted: bool) -> str:
        """The client the throttle counts: the real peer, or the client a trusted proxy names (as uvicorn resolves
        ``X-Forwarded-For``), so that users behind one proxy are not locked out together."""
        client = scope.get("client")
        peer = client[0] if client else "?"
        forwarded = headers.get(b"x-forwarded-for", b"")
        if trusted and forwarded:
            return self.proxy.trusted_hosts.get_trusted_client_address(forwarded.decode("latin-1")) or peer
        return peer

    def _wrong_credential(self, headers: dict[bytes, bytes], path: str, query: tuple[bool, bool, str]) -> bool | None:
        """None when the request presents no credential the door checks; else whether what it presents is wrong.

        A Bearer counts where the door checks one: everywhere with ``BOT_API_TOKEN``, on ``/admin*`` with
        ``BOT_ADMIN_TOKEN`` (OpenAI clients send ``Bearer sk-…`` to an open ``/v1``: not a guess). Either token
        is no guess wherever it is sent, even where it does not open (the API token on ``/admin``).
        """
        given = bearer(headers.get(b"authorization", b""))
        admin = (path == "/admin" or path.startswith("/admin/")) and bool(self.admin_token)
        presented, wrong = False, False
        if given and (self.web.api_token or admin):
            presented = True
            wrong = not (token_matches(given, self.web.api_token) or token_matches(given, self.admin_token))
        if query[0]:
            presented, wrong = True, wrong or not query[1]
        return wrong if presented else None

    def _set_cookie(self, scope: Scope, headers: dict[bytes, bytes]) -> tuple[bytes, bytes]:
        # Forwarded headers from untrusted peers are already gone here, so X-Forwarded-Proto is the proxy's word.
        proto = headers.get(b"x-forwarded-proto", b"").decode("latin-1").split(",")[0].strip()
        secure = "; Secure" if (proto or scope.get("scheme")) in ("https", "wss") else ""
        path = (scope.get("root_path") or "").rstrip("/") or "/"
        value = cookie_value(self.web.api_token, int(self.clock()))
        return (
            b"set-cookie",
            f"{COOKIE}={value}; Path={path}; Max-Age={COOKIE_MAX_AGE}; HttpOnly; SameSite=Lax{secure}".encode(),
        )

    # ------------------------------------------------------------ answers

    @staticmethod
    async def _send(send: Send, status: int, body: dict | str, headers: list[tuple[bytes, bytes]] = ()) -> None:
        if isinstance(body, dict):
            if "detail" in body and "error" not in body:  # OpenAI clients (/v1/*) read error.message
                body = {**body, "error": {"message": body["detail"], "type": "invalid_request_error", "code": status}}
            data, kind = json.dumps(body).encode(), b"application/json"
        else:
            data, kind = body.encode(), b"text/html; charset=utf-8"
        await send_response(send, status, data, [(b"content-type", kind), (b"cache-control", b"no-store"), *headers])

    async def _refuse(self, scope: Scope, send: Send, headers: dict[bytes, bytes]) -> None:
        how = []
        if self.web.api_token:
            how.append("'Authorization: Bearer <token>', or open the page once with ?token=<token>")
        if self.web.trusted_header:
            how.append(f"sign in through the portal (it sets the {self.web.trusted_header} header)")
        message = "missing or wrong credentials: " + "; or ".join(how)
        extra = [(b"www-authenticate", b"Bearer")] if self.web.api_token else []
        if b"text/html" in headers.get(b"accept", b""):
            page = (
                "<!doctype html><meta charset=utf-8><title>Sign in</title>"
                f"<p>This assistant needs a login. {message.replace('<', '&lt;').replace('>', '&gt;')}.</p>"
            )
            await self._send(send, 401, page, extra)
        else:
            await self._send(send, 401, {"detail": message}, extra)

    def _signed_link(self, scope: Scope, path: str) -> LinkVerdict:
        if (
            self.links is None
            or path != SOURCE_PATH
            or scope["type"] != "http"
            or scope.get("method") not in ("GET", "HEAD")
        ):
            return "unsigned"
        return self.links.verdict(scope.get("query_string", b"").decode("latin-1"), self.clock())

    async def _refuse_link(self, send: Send, headers: dict[bytes, bytes], verdict: LinkVerdict) -> None:
        hours = max(1, round(self.links.ttl / 3600)) if self.links else 24
        if verdict == "expired":
            status, message = (
                401,
                (
                    f"This source link has expired (links in answers are valid for {hours} h). "
                    "Ask the question again for a fresh link, or sign in."
                ),
            )
        else:
            status, message = (
                403,
                (
                    "This source link's signature does not match: the link was changed, or made by "
                    "another server. Open the link from the answer as it was given, or ask again."
                ),
            )
        if b"text/html" in headers.get(b"accept", b""):
            await self._send(
                send, status, f"<!doctype html><meta charset=utf-8><title>Link not valid</title><p>{message}</p>"
            )
        else:
            await self._send(send, status, {"detail": message})

    # ------------------------------------------------------------ the middleware

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        if scope["type"] == "http" and b"transfer-encoding" in headers and b"content-length" in headers:
            # RFC 9112 §6.1: framed by both, a proxy and this server may split the bytes differently (request
            # smuggling); refuse and close, so nothing after the body is read as another request.
            await self._send(
                send,
                400,
                {"detail": "Content-Length and Transfer-Encoding together; send one of them"},
                [(b"connection", b"close")],
            )
            return
        client = scope.get("client")
        trusted = bool(client) and client[0] in self.proxy.trusted_hosts
        if scope.get("headers") and not trusted:
            # Links in answers are built from X-Forwarded-Host, and the trusted header opens the door: only a
            # configured proxy may set them.
            scope = dict(scope)
            scope["headers"] = [(n, v) for n, v in scope["headers"] if n.lower() not in self.strip]
            headers = _headers(scope)
        path = self._path(scope)
        if path.endswith(CLOSED_SUFFIXES):
            if scope["type"] == "http":
                await self._send(send, 403, {"detail": "uploads are disabled: this assistant takes no files"})
            else:
                await send({"type": "websocket.close", "code": 1008})
            return
        query = self._query_token(scope)
        wrong = self._wrong_credential(headers, path, query)
        if wrong is not None:  # one throttle for every credential: API token, ?token=, operator Bearer
            peer = self._peer(scope, headers, trusted)
            wait = self.throttle.retry_after(peer)
            if wait:  # right or wrong, a locked-out client learns nothing
                if scope["type"] == "websocket":
                    await send({"type": "websocket.close", "code": 1008})
                else:
                    await self._send(
                        send,
                        429,
                        {"detail": f"too many wrong credentials from this address: try again in {wait} s"},
                        [(b"retry-after", str(wait).encode())],
                    )
                return
            if wrong:
                self.throttle.failed(peer)
            scope = dict(scope)
            scope[COUNTED] = True  # judged here: /admin's own check must not count it (again)
        if self.locked and not self._is_open(path) and not self._authorized(scope, headers, path):
            link = self._signed_link(scope, path)
            if link == "ok":
                await self._guarded(scope, receive, send)
                return
            if link in ("expired", "tampered"):
                await self._refuse_link(send, headers, link)
                return
            _, ok, rest = query
            if not ok:
                if scope["type"] == "websocket":
                    await send({"type": "websocket.close", "code": 1008})
                else:
                    await self._refuse(scope, send, headers)
                return
            if scope["type"] == "http" and scope.get("method") == "GET":
                # Drop the token from the address bar (history, Referer) and continue with the cookie, on
                # this site only: GET //evil.example/?token=... must not send the browser to evil.example.
                location = same_origin_path(scope.get("root_path") or "", path, rest)
                await self._send(
                    send,
                    303,
                    {"detail": "signed in"},
                    [(b"location", location.encode("ascii")), self._set_cookie(scope, headers)],
                )
                return
        if scope["type"] == "http" and scope.get("method") in JSON_METHODS:
            if path.startswith(JSON_PREFIXES):
                await self._json_route(scope, receive, send, headers)
                return
            if path.removeprefix("/widget").startswith(GRADIO_API):
                # Gradio's routes parse JSON on the event loop with no size limit: the same cap and check first.
                await self._json_route(scope, receive, send, headers, strict=False)
                return
        await self._guarded(scope, receive, send)

    async def _guarded(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            try:
                await self.app(scope, receive, send)
            except ClientDisconnect:
                self._gone(scope)
            return
        held: list[Message] = []  # a 500 from inside (Starlette's error page), sent once we know its cause
        passed = False

        async def holding_send(message: Message) -> None:
            nonlocal passed
            if held or (message["type"] == "http.response.start" and message.get("status") == 500):
                held.append(message)
                return
            passed = True
            await send(message)

        try:
            await self.app(scope, receive, holding_send)
        except ClientDisconnect:
            self._gone(scope)
            return
        except Exception as exc:
            if not passed and _unknown_gradio_event(exc):
                # A client naming an event the UI does not have (POST run/predict, a stale fn_index): one
                # line and a 404, not a 500 with a hundred lines of traceback per request.
                log.warning(
                    "%s %s: no such Gradio event (%s: %s)",
                    scope.get("method", ""),
                    self._path(scope),
                    type(exc).__name__,
                    str(exc)[:200],
                )
                await self._send(
                    send, 404, {"detail": "no such event in this UI; see GET /gradio_api/info for the API names"}
                )
                return
            for message in held:
                await send(message)
            raise
        for message in held:
            await send(message)

    def _gone(self, scope: Scope) -> None:
        client = scope.get("client") or ("?", 0)
        log.warning("client %s disconnected during %s %s", client[0], scope.get("method", ""), self._path(scope))

    async def _json_route(
        self, scope: Scope, receive: Receive, send: Send, headers: dict[bytes, bytes], strict: bool = True
    ) -> None:
        """Read the body (at most ``max_body``), check it as JSON (off the loop when large) and replay it.
        ``strict``: only ``application/json`` (the API); else (Gradio) a body FastAPI would not parse as JSON
        is only size-capped."""
        kind = _media_type(headers.get(b"content-type", b""))
        as_json = kind in ("", "application/json") or kind.endswith("+json")
        if strict and kind != "application/json":
            await self._send(
                send,
                415,
                {
                    "detail": f"Content-Type must be application/json, not {kind or 'missing'!r}; "
                    "send -H 'Content-Type: application/json'"
                },
            )
            return
        limit = f"request body over {self.max_body // (1024 * 1024)} MB"
        close = [(b"connection", b"close")]  # the rest of the body is never read
        length = headers.get(b"content-length", b"")
        if length.isdigit() and int(length) > self.max_body:
            await self._send(send, 413, {"detail": limit}, close)
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                self._gone(scope)
                return
            body.extend(message.get("body", b""))
            if len(body) > self.max_body:
                await self._send(send, 413, {"detail": limit}, close)
                return
            if not message.get("more_body"):
                break
        try:
            if not as_json:
                data = None
            elif len(body) <= INLINE_BYTES:
                data = load_json(bytes(body))
            else:  # off the event loop, one at a time: the loop keeps serving while a large body is checked
                if self._big_json is None:
                    self._big_json = anyio.CapacityLimiter(1)
                data = await anyio.to_thread.run_sync(load_json, bytes(body), limiter=self._big_json)
        except JSONProblem as problem:
            await self._send(send, problem.status, {"detail": str(problem)})
            return
        if as_json:
            scope[JSON_KEY] = data
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()

        await self._guarded(scope, replay, send)
