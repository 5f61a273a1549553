"""The one credential check of every route, as a FastAPI dependency (:class:`Door`, realms ``api`` and
``operator``), and the JSON body of a request parsed once (:func:`json_body`, :func:`json_object`).

The :class:`bot.web.security.SecurityMiddleware` in front of every route is the first lock; this is the second,
kept on purpose (``docs/security.md``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Literal

import anyio
import anyio.to_thread
from starlette.requests import Request

from bot.web.credentials import COUNTED, LoginThrottle, bearer_matches, cookie_ok
from bot.web.json_limits import JSON_KEY, JSONProblem, load_json

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
