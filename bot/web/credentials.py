"""Credentials: the one constant-time token check (:func:`token_matches`, :func:`bearer_matches`), the signed
session cookie of the door (:func:`cookie_value`, :func:`cookie_ok`) and the lock-out of a client that guesses
(:class:`LoginThrottle`, shared by the door and ``/admin``'s sign-in form).
"""

from __future__ import annotations

import hashlib
import hmac
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

COOKIE = "bot_session"
COOKIE_MAX_AGE = 12 * 3600  # the browser's Max-Age and the server's limit on the issue time in the cookie
COUNTED = "bot.credential_judged"  # set in the scope when the door judged (and counted) this request's Bearer


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
