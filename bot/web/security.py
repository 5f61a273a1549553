"""One ASGI middleware in front of every route: the door, the closed upload route, JSON hygiene,
forwarded headers and client disconnects.

Installed by ``app.build_app`` inside the CORS and security-header middlewares (so a refusal
still carries CORS and frame-ancestors headers, and CORS preflights never need credentials).

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

import base64
import hashlib
import hmac
import json
import logging
import math
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

import anyio
import anyio.to_thread
from starlette.requests import ClientDisconnect, Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

if TYPE_CHECKING:
    from bot.answer.state import StateSeal

log = logging.getLogger("bot.web.security")

MAX_JSON_DEPTH = 32
# A question with 100 history turns, or an OpenAI message list, is a few hundred values; the cap is far above.
MAX_JSON_ITEMS = 10_000
INLINE_BYTES = 64 * 1024  # smaller bodies are checked on the event loop: cheaper than a thread hop
JSON_KEY = "bot.json"  # where the parsed body is left in the ASGI scope for the route
COOKIE = "bot_session"
COOKIE_MAX_AGE = 12 * 3600  # the browser's Max-Age and the server's limit on the issue time in the cookie
JSON_PREFIXES = ("/api/", "/v1/")
GRADIO_API = "/gradio_api/"  # Gradio's own routes (queue/join, run/*, call/* …), under each mount
COUNTED = "bot.credential_judged"  # set in the scope when the door judged (and counted) this request's Bearer
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


def token_matches(given: str | bytes, token: str) -> bool:
    """True when ``given`` is ``token`` (compared in constant time); never for an empty token.

    Every credential check of the app comes here: the door's Bearer and ``?token=``, the API's
    second lock (:func:`api_authorizer`), and signed links (:meth:`LinkSigner.verdict`).

    >>> token_matches("s3cret-token", "s3cret-token"), token_matches("s3cret-tokem", "s3cret-token"), token_matches("", "")
    (True, False, False)
    """
    if not token:
        return False
    given = given if isinstance(given, bytes) else given.encode("utf-8", "surrogateescape")
    return bool(given) and hmac.compare_digest(given, token.encode())


def bearer(authorization: str | bytes) -> str:
    """The credential of an ``Authorization: Bearer <credential>`` header value, else "".

    >>> bearer("Bearer abc "), bearer(b"bearer abc"), bearer("Basic abc")
    ('abc', 'abc', '')
    """
    value = authorization.decode("latin-1") if isinstance(authorization, bytes) else authorization
    return value[7:].strip() if value[:7].lower() == "bearer " else ""


def bearer_matches(authorization: str | bytes, token: str) -> bool:
    """True when the ``Authorization`` header value is ``Bearer <token>`` (the one Bearer check; ``/admin``
    can use it for ``BOT_ADMIN_TOKEN`` too).

    >>> bearer_matches("Bearer s3cret-token", "s3cret-token"), bearer_matches("Bearer s3cret-token", "")
    (True, False)
    """
    return token_matches(bearer(authorization), token)


class LoginThrottle:
    """Failed operator credentials per client: ``free`` failures, then each one locks the client out for twice
    as long as the last (``base`` seconds, doubling, up to ``cap``). While locked out every attempt gets 429,
    right credential or not, so guessing gets no answers; a quiet ``cap`` forgets the client.

    >>> now = [0.0]; t = LoginThrottle(free=2, clock=lambda: now[0])
    >>> t.failed("a"); t.failed("a"); t.retry_after("a")
    0
    >>> t.failed("a"); t.retry_after("a"), t.retry_after("b")
    (1, 0)
    """

    def __init__(
        self,
        free: int = 5,
        base: float = 1.0,
        cap: float = 3600.0,
        clock: Callable[[], float] = time.monotonic,
        max_clients: int = 10_000,
    ) -> None:
        self.free, self.base, self.cap, self.clock, self.max_clients = free, base, cap, clock, max_clients
        self._clients: OrderedDict[str, tuple[int, float, float]] = OrderedDict()  # failures, locked until, last
        self._lock = threading.Lock()

    def retry_after(self, client: str) -> int:
        """Whole seconds this client must wait before its next attempt (0: go ahead)."""
        with self._lock:
            state = self._clients.get(client)
            if state is None:
                return 0
            now = self.clock()
            if now - state[2] > self.cap:
                del self._clients[client]
                return 0
            return math.ceil(state[1] - now) if state[1] > now else 0

    def failed(self, client: str) -> None:
        with self._lock:
            now = self.clock()
            failures, _, last = self._clients.pop(client, (0, 0.0, now))
            failures = 1 if now - last > self.cap else failures + 1
            until = now + min(self.cap, self.base * 2 ** (failures - self.free - 1)) if failures > self.free else 0.0
            self._clients[client] = (failures, until, now)
            while len(self._clients) > self.max_clients:  # many addresses: forget the oldest, keep the memory bounded
                self._clients.popitem(last=False)

    def succeeded(self, client: str) -> None:
        with self._lock:
            self._clients.pop(client, None)


Realm = Literal["api", "operator"]


class Refused(Exception):
    """A route's credential check said no: the status and why (the ``/admin`` routes render their own page)."""

    def __init__(self, realm: Realm, status: int, detail: str, retry_after: int = 0) -> None:
        super().__init__(detail)
        self.realm, self.status, self.detail, self.retry_after = realm, status, detail, retry_after


class Door:
    """The one credential check of every route behind the :class:`SecurityMiddleware` (a second lock), as a
    FastAPI dependency: ``Depends(door.allows("api"))`` on ``/api/*`` and ``/v1/*``, ``Depends(door.allows(
    "operator"))`` on ``/admin``'s report routes.

    - ``api``: ``Authorization: Bearer <BOT_API_TOKEN>`` or the trusted header, not the browser cookie; open when
      neither is set. Refused: 401 (``HTTPException``, FastAPI's ``{"detail": …}``).
    - ``operator``: ``Authorization: Bearer <BOT_ADMIN_TOKEN>`` or the ``/admin`` sign-in cookie (its issue time
      signed: it expires on the server too); a wrong credential counts towards the client's lock-out
      (:class:`LoginThrottle`, 429 while it lasts). Refused: :class:`Refused`, which ``/admin`` renders.

    >>> from types import SimpleNamespace
    >>> door = Door(SimpleNamespace(api_token="api-token-1", trusted_header=""))
    >>> door.verdict("api", {"authorization": "Bearer api-token-1"}, {}, "10.0.0.1")
    'ok'
    >>> door.verdict("api", {}, {}, "10.0.0.1"), door.verdict("operator", {}, {}, "10.0.0.1")
    ('unauthorized', 'off')
    """

    def __init__(
        self,
        web: Any,
        *,
        admin_token: str = "",
        throttle: LoginThrottle | None = None,
        operator_cookie: str = "",
        operator_key: Callable[[str], str] = lambda token: token,
    ) -> None:
        self.web, self.admin_token = web, admin_token
        self.throttle = throttle or LoginThrottle()
        self.operator_cookie, self.operator_key = operator_cookie, operator_key

    def verdict(
        self, realm: Realm, headers: Any, cookies: Any, client: str, counted: bool = False
    ) -> Literal["ok", "unauthorized", "locked", "off"]:
        """What the request's credentials are worth for ``realm`` (``headers``/``cookies``: mappings; ``counted``:
        the :class:`SecurityMiddleware` already judged this request's Bearer, and counted it if wrong)."""
        authorization = headers.get("authorization", "")
        if realm == "api":
            web = self.web
            if not web.api_token and not web.trusted_header:
                return "ok"
            if bearer_matches(authorization, web.api_token):
                return "ok"
            if web.trusted_header and headers.get(web.trusted_header, "").strip():
                return "ok"
            return "unauthorized"
        if self.throttle.retry_after(client):
            return "locked"
        token = self.admin_token
        if not token:
            return "off"
        if authorization.lower().startswith("bearer "):
            if bearer_matches(authorization, token):
                self.throttle.succeeded(client)
                return "ok"
            if not counted:
                self.throttle.failed(client)  # a wrong bearer is a guess like a wrong form
        cookie = cookies.get(self.operator_cookie, "") if self.operator_cookie else ""
        ok = bool(cookie) and cookie_ok(cookie, self.operator_key(token), time.time())
        return "ok" if ok else "unauthorized"

    def allows(self, realm: Realm) -> Callable[[Request], None]:
        """The FastAPI dependency for ``realm``: returns when the request may pass, raises otherwise."""

        def check(request: Request) -> None:
            peer = getattr(request, "client", None)
            client = peer.host if peer else "?"  # the real peer: the door resolved trusted proxies
            counted = bool(getattr(request, "scope", {}).get(COUNTED))
            verdict = self.verdict(realm, request.headers, getattr(request, "cookies", {}), client, counted)
            if verdict == "ok":
                return
            if realm == "api":
                from fastapi import HTTPException

                raise HTTPException(
                    status_code=401,
                    headers={"WWW-Authenticate": "Bearer"},
                    detail="missing or wrong credentials: send 'Authorization: Bearer <token>'",
                )
            if verdict == "locked":
                wait = self.throttle.retry_after(client)
                raise Refused(
                    realm,
                    429,
                    f"Too many wrong operator credentials from this address: try again in {wait} s.",
                    retry_after=wait,
                )
            raise Refused(
                realm,
                503 if verdict == "off" else 401,
                "operator credential required: Authorization: Bearer <BOT_ADMIN_TOKEN>",
            )

        return check


def api_authorizer(web: Any) -> Callable[[Request], None]:
    """The check of ``/api/*`` and ``/v1/*`` (:meth:`Door.allows` ``"api"``): a FastAPI dependency that raises 401."""
    return Door(web).allows("api")


async def json_body(request: Request) -> Any:
    """The request's JSON, parsed once: by the :class:`SecurityMiddleware` (left in ``scope["bot.json"]``), or
    here, with the same checks, when the app runs without it. A FastAPI dependency; 4xx when it is not JSON."""
    if JSON_KEY in request.scope:
        return request.scope[JSON_KEY]
    from fastapi import HTTPException

    from bot.web.http import MAX_BODY_BYTES

    body = bytearray()
    async for chunk in request.stream():
        body.extend(chunk)
        if len(body) > MAX_BODY_BYTES:
            raise HTTPException(413, f"request body over {MAX_BODY_BYTES // (1024 * 1024)} MB")
    try:  # in a worker thread: a large body must not hold the event loop
        data = await anyio.to_thread.run_sync(load_json, bytes(body))
    except JSONProblem as problem:
        raise HTTPException(problem.status, str(problem)) from None
    request.scope[JSON_KEY] = data
    return data


async def json_object(request: Request) -> dict:
    """:func:`json_body` when it is an object (422 otherwise): what ``/api/*`` takes."""
    data = await json_body(request)
    if not isinstance(data, dict):
        from fastapi import HTTPException

        raise HTTPException(422, 'body must be a JSON object: {"question": "...", "history": []}')
    return data


# ---------------------------------------------------------------- the app's signing secret: /source links, states

SOURCE_PATH = "/source"
_PROCESS_KEY = secrets.token_bytes(32)  # signs states when no secret is configured: valid until this process ends


def signing_secret(web: Any) -> str:
    """The one secret the app signs with: ``BOT_LINK_SECRET``, else ``BOT_API_TOKEN``, else "" (nothing configured)."""
    return getattr(web, "link_secret", "") or getattr(web, "api_token", "")


def state_seal(web: Any) -> StateSeal:
    """The sealer of conversation states (:mod:`bot.answer.state`), keyed by :func:`signing_secret` (its own key
    derived from it, and its own MAC prefix: neither kind of signature passes for the other). Without a configured
    secret, a random key of this process: states then work until a restart and not across replicas (set
    ``BOT_LINK_SECRET`` on every replica to share them); a client that also sends ``history`` is answered anyway."""
    from bot.answer.state import StateSeal

    secret = signing_secret(web)
    key = hashlib.sha256(b"bot-state-key\n" + secret.encode()).digest() if secret else _PROCESS_KEY
    return StateSeal(key, token_matches)


LinkVerdict = Literal["ok", "unsigned", "expired", "tampered"]


@dataclass(frozen=True)
class LinkSigner:
    """Signs the ``/source`` links of API replies, so that a browser holding no credential can open them.

    An answer read in Open WebUI or another client of ``/v1`` or ``/api`` cites sections by links to
    ``/source``; behind a locked door that browser has neither the cookie nor the Bearer token, and the
    link answered 401. Each such link now carries ``exp`` (Unix seconds) and ``sig`` (an HMAC-SHA256 of the
    section key and ``exp``, keyed by ``BOT_LINK_SECRET`` or else the API token); the door lets a GET of
    ``/source`` with a valid, unexpired signature through, for that section only. Terms, language and the
    whole-file toggle are not signed: they only change what is highlighted and how much is shown.

    >>> signer = LinkSigner("k" * 16, ttl=60)
    >>> url = signer.sign_url("http://h/source?key=a.md%23x&lang=en#L3", now=1000)
    >>> url.replace(signer.signature("a.md#x", 1060), "<sig>")
    'http://h/source?key=a.md%23x&lang=en&exp=1060&sig=<sig>#L3'
    >>> query = url.split("?")[1].split("#")[0]
    >>> signer.verdict(query, now=1059), signer.verdict(query, now=1061), signer.verdict(query.replace("a.md", "b.md"), now=1000)
    ('ok', 'expired', 'tampered')
    """

    secret: str
    ttl: int = 86_400

    @classmethod
    def from_web(cls, web: Any) -> LinkSigner | None:
        """The signer of ``web`` (``BOT_LINK_SECRET``, else ``BOT_API_TOKEN``); None when neither is set (then the
        door is open, or only a proxy's header opens it, which the browser sends anyway)."""
        secret = signing_secret(web)
        return cls(secret, int(getattr(web, "link_ttl", 86_400))) if secret else None

    def signature(self, key: str, expires: int) -> str:
        mac = hmac.new(self.secret.encode(), f"bot-source-link-v1\n{expires}\n{key}".encode(), hashlib.sha256)
        return base64.urlsafe_b64encode(mac.digest()[:18]).decode()  # 144 bits, 24 URL-safe characters

    def sign_url(self, url: str, now: float | None = None) -> str:
        """``url`` (a ``/source`` link) with ``exp`` and ``sig`` added to its query, its ``#L…`` kept."""
        head, hash_mark, fragment = url.partition("#")
        parts = urlsplit(head)
        pairs = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in ("exp", "sig")]
        key = next((v for k, v in pairs if k == "key"), "")
        expires = int(time.time() if now is None else now) + self.ttl
        query = "&".join(
            filter(
                None,
                [
                    parts.query and _without(parts.query, ("exp", "sig")),
                    urlencode({"exp": expires, "sig": self.signature(key, expires)}),
                ],
            )
        )
        return parts._replace(query=query).geturl() + hash_mark + fragment

    def for_base(self, base: str) -> Callable[[str], str]:
        """A signer of the ``<base>/source?…`` links in a text (what :func:`bot.answer.turn.take_turn` takes)."""
        return lambda value: self.sign_all(value, base)

    def sign_all(self, value: Any, base: str, now: float | None = None) -> Any:
        """Every ``<base>/source?…`` link in ``value`` (a reply's markdown, or its JSON: dicts, lists, strings)
        signed; everything else as it was."""
        if isinstance(value, str):
            if f"{base}{SOURCE_PATH}?" not in value:
                return value
            found = re.compile(re.escape(f"{base}{SOURCE_PATH}?") + r"[^\s()<>\"'`\]\[]*")
            return found.sub(lambda m: self.sign_url(m.group(0), now), value)
        if isinstance(value, dict):
            return {k: self.sign_all(v, base, now) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(self.sign_all(v, base, now) for v in value)
        return value

    def verdict(self, query: str, now: float | None = None) -> LinkVerdict:
        """What the ``exp``/``sig`` of a ``/source`` query string are worth."""
        pairs = dict(parse_qsl(query, keep_blank_values=True))
        if "sig" not in pairs and "exp" not in pairs:
            return "unsigned"
        expires = pairs.get("exp", "")
        if (
            not expires.isdigit()
            or len(expires) > 12
            or not token_matches(pairs.get("sig", ""), self.signature(pairs.get("key", ""), int(expires)))
        ):
            return "tampered"
        # A link from the future (beyond this TTL plus a minute of clock skew) was not made by this app.
        left = int(expires) - (time.time() if now is None else now)
        if left > self.ttl + 60:
            return "tampered"
        return "ok" if left >= 0 else "expired"


def _without(query: str, names: tuple[str, ...]) -> str:
    """``query`` without the ``names`` parameters, the rest byte for byte as it was."""
    return "&".join(p for p in query.split("&") if p and p.split("=", 1)[0] not in names)


def cookie_value(token: str, issued: int) -> str:
    """What the session cookie holds: its issue time and an HMAC of the token and that time.

    Proof of the token without the token (a leaked cookie is not the token), and one that ages: the
    server refuses it :data:`COOKIE_MAX_AGE` seconds after ``issued`` (see :func:`cookie_ok`).
    """
    mac = hmac.new(token.encode(), f"bot-session-cookie-v2:{issued}".encode(), hashlib.sha256).hexdigest()
    return f"{issued}.{mac}"


def cookie_ok(value: str, token: str, now: float) -> bool:
    """True when ``value`` is a cookie from :func:`cookie_value` for ``token``, issued at most COOKIE_MAX_AGE ago.

    >>> cookie_ok(cookie_value("t0ken", 1000), "t0ken", 1000 + COOKIE_MAX_AGE), cookie_ok(cookie_value("t0ken", 1000), "t0ken", 1001 + COOKIE_MAX_AGE)
    (True, False)
    """
    issued, _, _mac = value.partition(".")
    if not issued.isdigit() or len(issued) > 12:
        return False
    age = now - int(issued)
    if not -60 <= age <= COOKIE_MAX_AGE:  # a minute of clock skew between replicas; nothing from the future
        return False
    return hmac.compare_digest(value.encode(), cookie_value(token, int(issued)).encode())


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


def json_depth(value: Any) -> int:
    """Nesting depth of a parsed JSON value, level by level (no recursion limit to hit).

    >>> json_depth({"a": [1, {"b": []}]}), json_depth(3), json_depth([])
    (4, 0, 1)
    """
    depth, level = 0, [value]
    while True:
        level = [v for v in level if type(v) is dict or type(v) is list]
        if not level:
            return depth
        depth += 1
        below: list = []
        for item in level:
            below.extend(item.values() if type(item) is dict else item)
        level = below


# A JSON string, or an unterminated one up to the end (so a stray quote never makes the scan quadratic).
_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+(?:"|\\?\Z)', re.S)


def _marks(body: bytes, start: int = 0, end: int | None = None) -> int:
    end = len(body) if end is None else end
    return body.count(b",", start, end) + body.count(b"[", start, end) + body.count(b"{", start, end)


def json_items(body: bytes, budget: int = MAX_JSON_ITEMS) -> int:
    """About how many values a JSON text holds (commas and openers outside strings, plus strings),
    counted just far enough to tell whether it is over ``budget``: an upper bound from a C-speed
    count when that is under budget, else a scan that skips strings and stops once past the budget.

    >>> json_items(b'{"q": "a, b, [c]", "h": [1, 2]}'), json_items(b'[' + b'0,' * 50 + b'0]', budget=10) > 10
    (7, True)
    """
    rough = _marks(body)
    if rough <= budget:
        return rough
    count, pos = 0, 0
    for match in _STRING.finditer(body):
        count += 1 + _marks(body, pos, match.start())
        if count > budget:
            return count
        pos = match.end()
    return count + _marks(body, pos)


class JSONProblem(ValueError):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def load_json(body: bytes) -> Any:
    """The parsed body, or :class:`JSONProblem` (status and message) when it is not acceptable JSON.

    Counting the values first bounds the parse: ``json.loads`` holds the GIL for its whole run,
    so only bodies with few values (strings are cheap to parse) get that far.
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JSONProblem(400, f"body is not valid UTF-8 (byte {exc.start}); send JSON encoded as UTF-8") from None
    if json_items(body) > MAX_JSON_ITEMS:
        raise JSONProblem(
            413,
            f"JSON body with more than {MAX_JSON_ITEMS:,} values; this API takes a question "
            "and a short history (see README, JSON API)",
        )
    try:
        data = json.loads(text or "null")
    except RecursionError:
        raise JSONProblem(400, f"JSON nested too deeply (at most {MAX_JSON_DEPTH} levels)") from None
    except ValueError as exc:
        raise JSONProblem(400, f'body is not JSON ({exc}); send e.g. {{"question": "...", "history": []}}') from None
    if json_depth(data) > MAX_JSON_DEPTH:
        raise JSONProblem(400, f"JSON nested too deeply (at most {MAX_JSON_DEPTH} levels)")
    return data


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
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", kind),
                    (b"content-length", str(len(data)).encode()),
                    (b"cache-control", b"no-store"),
                    *headers,
                ],
            }
        )
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
