"""One ASGI middleware in front of every route: the door, the closed upload route, JSON hygiene,
forwarded headers and client disconnects.

Installed by ``app.build_app`` inside the CORS and security-header middlewares (so a refusal
still carries CORS and frame-ancestors headers, and CORS preflights never need credentials).

**The door.** When ``BOT_API_TOKEN`` or ``BOT_TRUSTED_HEADER`` is set, every request needs one of

- ``Authorization: Bearer <token>`` (API clients, ``gradio_client`` with ``headers=``),
- the trusted header with a non-empty value (set by the portal's reverse proxy after login),
- the session cookie, which a browser gets by opening any page once with ``?token=<token>``
  (answered with a redirect to the same page without the token, setting an HttpOnly
  ``SameSite=Lax`` cookie that holds an HMAC of the token, never the token itself).

``/api/*`` is also checked by ``app.py`` itself (Bearer or trusted header, not the cookie), a
second lock kept on purpose. Only static files stay open (:data:`OPEN_PATHS`, :data:`OPEN_PREFIXES`: Gradio's JavaScript,
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
at most ``MAX_BODY_BYTES`` (413). The checked body is then replayed to the route.

**Forwarded headers.** ``X-Forwarded-*`` and ``Forwarded`` are honoured only from the peers in
``WebSettings.trusted_proxies`` (uvicorn's proxy-header handling runs inside this middleware,
with that list); from anyone else they are dropped before the app sees them.

**Disconnects.** A client that goes away mid-request is logged in one line, not a traceback.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from typing import Any
from urllib.parse import parse_qsl, urlencode

from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("bot.web.security")

MAX_JSON_DEPTH = 32
COOKIE = "bot_session"
COOKIE_MAX_AGE = 12 * 3600
JSON_PREFIXES = ("/api/", "/v1/")
JSON_METHODS = ("POST", "PUT", "PATCH")
MOUNTS = ("", "/widget")  # the full UI at /, the compact widget at /widget/
# Static files of the UI (no session data), open even when the door is locked.
OPEN_PATHS = frozenset({"/healthz", "/gradio.js", "/favicon.ico", "/robots.txt", "/theme.css", "/manifest.json"})
OPEN_PREFIXES = ("/assets/", "/static/", "/svelte/", "/pwa_icon")
CLOSED_SUFFIXES = ("/gradio_api/upload", "/gradio_api/upload/", "/gradio_api/upload_progress")
FORWARDED = (b"x-forwarded-host", b"x-forwarded-proto", b"x-forwarded-for", b"x-forwarded-port",
             b"x-forwarded-prefix", b"forwarded")


def cookie_value(token: str) -> str:
    """What the session cookie holds: proof of the token without the token (a leaked cookie is not the token)."""
    return hmac.new(token.encode(), b"bot-session-cookie-v1", hashlib.sha256).hexdigest()


def json_depth(value: Any) -> int:
    """Nesting depth of a parsed JSON value, iteratively (no recursion limit to hit).

    >>> json_depth({"a": [1, {"b": []}]}), json_depth(3)
    (4, 0)
    """
    depth, level = 0, [(value, 1)]
    while level:
        item, d = level.pop()
        if isinstance(item, dict):
            depth = max(depth, d)
            level.extend((v, d + 1) for v in item.values())
        elif isinstance(item, list):
            depth = max(depth, d)
            level.extend((v, d + 1) for v in item)
    return depth


def check_json(body: bytes) -> tuple[int, str] | None:
    """(status, message) when ``body`` is not acceptable JSON, else None."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return 400, f"body is not valid UTF-8 (byte {exc.start}); send JSON encoded as UTF-8"
    try:
        data = json.loads(text or "null")
    except RecursionError:
        return 400, f"JSON nested too deeply (at most {MAX_JSON_DEPTH} levels)"
    except ValueError as exc:
        return 400, f'body is not JSON ({exc}); send e.g. {{"question": "...", "history": []}}'
    if json_depth(data) > MAX_JSON_DEPTH:
        return 400, f"JSON nested too deeply (at most {MAX_JSON_DEPTH} levels)"
    return None


def _headers(scope: Scope) -> dict[bytes, bytes]:
    return {name.lower(): value for name, value in scope.get("headers") or []}


def _media_type(value: bytes) -> str:
    return value.decode("latin-1").split(";", 1)[0].strip().lower()


class SecurityMiddleware:
    def __init__(self, app: ASGIApp, web: Any, max_body_bytes: int | None = None) -> None:
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
        self.cookie = cookie_value(web.api_token) if web.api_token else ""

    # ------------------------------------------------------------ routing

    def _path(self, scope: Scope) -> str:
        path = scope.get("path") or "/"
        root = scope.get("root_path") or ""
        if root and path.startswith(root):
            path = path[len(root):] or "/"
        return path

    @staticmethod
    def _is_open(path: str) -> bool:
        for mount in MOUNTS:
            if mount and not path.startswith(mount + "/"):
                continue
            rest = path[len(mount):]
            if rest in OPEN_PATHS or rest.startswith(OPEN_PREFIXES):
                return True
        return False

    # ------------------------------------------------------------ credentials

    def _authorized(self, scope: Scope, headers: dict[bytes, bytes]) -> bool:
        web = self.web
        if web.api_token:
            given = headers.get(b"authorization", b"").decode("latin-1")
            if given[:7].lower() == "bearer " and hmac.compare_digest(given[7:].strip().encode(),
                                                                       web.api_token.encode()):
                return True
            for part in headers.get(b"cookie", b"").decode("latin-1").split(";"):
                name, _, value = part.strip().partition("=")
                if name == COOKIE and hmac.compare_digest(value.encode(), self.cookie.encode()):
                    return True
        if web.trusted_header and headers.get(web.trusted_header.lower().encode(), b"").strip():
            return True
        return False

    def _query_token(self, scope: Scope) -> tuple[bool, str]:
        """(token given and right, query string without it)."""
        query = scope.get("query_string", b"").decode("latin-1")
        if not self.web.api_token or "token=" not in query:
            return False, query
        pairs = parse_qsl(query, keep_blank_values=True)
        given = [v for k, v in pairs if k == "token"]
        rest = urlencode([(k, v) for k, v in pairs if k != "token"])
        ok = bool(given) and hmac.compare_digest(given[-1].encode(), self.web.api_token.encode())
        return ok, rest

    def _set_cookie(self, scope: Scope, headers: dict[bytes, bytes]) -> tuple[bytes, bytes]:
        # Forwarded headers from untrusted peers are already gone here, so X-Forwarded-Proto is the proxy's word.
        proto = headers.get(b"x-forwarded-proto", b"").decode("latin-1").split(",")[0].strip()
        secure = "; Secure" if (proto or scope.get("scheme")) in ("https", "wss") else ""
        path = (scope.get("root_path") or "").rstrip("/") or "/"
        return (b"set-cookie", f"{COOKIE}={self.cookie}; Path={path}; Max-Age={COOKIE_MAX_AGE}; "
                               f"HttpOnly; SameSite=Lax{secure}".encode())

    # ------------------------------------------------------------ answers

    @staticmethod
    async def _send(send: Send, status: int, body: dict | str, headers: list[tuple[bytes, bytes]] = ()) -> None:
        if isinstance(body, dict):
            if "detail" in body and "error" not in body:  # OpenAI clients (/v1/*) read error.message
                body = {**body, "error": {"message": body["detail"], "type": "invalid_request_error", "code": status}}
            data, kind = json.dumps(body).encode(), b"application/json"
        else:
            data, kind = body.encode(), b"text/html; charset=utf-8"
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", kind), (b"content-length", str(len(data)).encode()),
                                (b"cache-control", b"no-store"), *headers]})
        await send({"type": "http.response.body", "body": data})

    async def _refuse(self, scope: Scope, send: Send, headers: dict[bytes, bytes]) -> None:
        how = []
        if self.web.api_token:
            how.append("'Authorization: Bearer <token>', or open the page once with ?token=<token>")
        if self.web.trusted_header:
            how.append(f"sign in through the portal (it sets the {self.web.trusted_header} header)")
        message = "missing or wrong credentials: " + "; or ".join(how)
        extra = [(b"www-authenticate", b"Bearer")] if self.web.api_token else []
        if b"text/html" in headers.get(b"accept", b""):
            page = ("<!doctype html><meta charset=utf-8><title>Sign in</title>"
                    f"<p>This assistant needs a login. {message.replace('<', '&lt;').replace('>', '&gt;')}.</p>")
            await self._send(send, 401, page, extra)
        else:
            await self._send(send, 401, {"detail": message}, extra)

    # ------------------------------------------------------------ the middleware

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        if scope.get("headers") and not (client and client[0] in self.proxy.trusted_hosts):
            # Links in answers are built from X-Forwarded-Host: only a configured proxy may set it.
            scope = dict(scope)
            scope["headers"] = [(n, v) for n, v in scope["headers"] if n.lower() not in FORWARDED]
        path = self._path(scope)
        headers = _headers(scope)
        if path.endswith(CLOSED_SUFFIXES):
            if scope["type"] == "http":
                await self._send(send, 403, {"detail": "uploads are disabled: this assistant takes no files"})
            else:
                await send({"type": "websocket.close", "code": 1008})
            return
        if self.locked and not self._is_open(path) and not self._authorized(scope, headers):
            ok, rest = self._query_token(scope)
            if not ok:
                if scope["type"] == "websocket":
                    await send({"type": "websocket.close", "code": 1008})
                else:
                    await self._refuse(scope, send, headers)
                return
            if scope["type"] == "http" and scope.get("method") == "GET":
                # Drop the token from the address bar (history, Referer) and continue with the cookie.
                root = scope.get("root_path") or ""
                location = f"{root}{path}" + (f"?{rest}" if rest else "")
                await self._send(send, 303, {"detail": "signed in"},
                                 [(b"location", location.encode("latin-1", "replace")),
                                  self._set_cookie(scope, headers)])
                return
        if scope["type"] == "http" and scope.get("method") in JSON_METHODS and path.startswith(JSON_PREFIXES):
            await self._json_route(scope, receive, send, headers)
            return
        await self._guarded(scope, receive, send)

    async def _guarded(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self.app(scope, receive, send)
        except ClientDisconnect:
            self._gone(scope)

    def _gone(self, scope: Scope) -> None:
        client = scope.get("client") or ("?", 0)
        log.warning("client %s disconnected during %s %s", client[0], scope.get("method", ""), self._path(scope))

    async def _json_route(self, scope: Scope, receive: Receive, send: Send, headers: dict[bytes, bytes]) -> None:
        kind = _media_type(headers.get(b"content-type", b""))
        if kind != "application/json":
            await self._send(send, 415, {"detail": f"Content-Type must be application/json, not {kind or 'missing'!r}; "
                                                   "send -H 'Content-Type: application/json'"})
            return
        limit = f"request body over {self.max_body // (1024 * 1024)} MB"
        length = headers.get(b"content-length", b"")
        if length.isdigit() and int(length) > self.max_body:
            await self._send(send, 413, {"detail": limit})
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                self._gone(scope)
                return
            body.extend(message.get("body", b""))
            if len(body) > self.max_body:
                await self._send(send, 413, {"detail": limit})
                return
            if not message.get("more_body"):
                break
        problem = check_json(bytes(body))
        if problem:
            await self._send(send, problem[0], {"detail": problem[1]})
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()

        await self._guarded(scope, replay, send)
