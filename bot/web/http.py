"""HTTP pieces of the app that do not need Gradio: web settings, security headers,
public links and API history parsing (the source view is bot/answer/source_view.py).

:class:`WebSettings` is built by ``app.py`` (the only place that reads the
environment); everything here takes it as an argument.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send


MAX_BODY_BYTES = 8 * 1024 * 1024  # a JSON body above this is refused with 413 (the text limit is max_input_chars)
MAX_HISTORY = 20

# ---------------------------------------------------------------- settings

@dataclass(frozen=True)
class WebSettings:
    """How the app is served; read from ``BOT_*`` variables by :meth:`from_env`, overridden by flags."""

    host: str = "127.0.0.1"
    port: int = 7860
    # Origins allowed to put the app in a frame (CSP frame-ancestors); "'self'" alone forbids other sites.
    frame_ancestors: tuple[str, ...] = ("'self'",)
    # Origins granted CORS (for the JSON API and the <gradio-app> web component); others get no grant.
    cors_origins: tuple[str, ...] = ()
    # When set, /api/* needs "Authorization: Bearer <token>" ...
    api_token: str = ""
    # ... or a non-empty value in this header, set by a trusted reverse proxy (e.g. X-Portal-User).
    trusted_header: str = ""
    # Public path prefix when served behind a reverse proxy, e.g. "/assistant".
    root_path: str = ""
    # Public base URL for links in answers (e.g. "https://portal.example.com/assistant"); default: from the request.
    public_url: str = ""
    # Peers (IPs or CIDR networks, "*" for any) whose X-Forwarded-* headers are believed; everyone else's are
    # dropped. Default: uvicorn's FORWARDED_ALLOW_IPS, else 127.0.0.1 (a proxy on the same host).
    trusted_proxies: tuple[str, ...] = ("127.0.0.1",)

    @classmethod
    def from_env(cls, environ: Mapping[str, str], **overrides: object) -> WebSettings:
        """``BOT_*`` variables, then flags, validated (see :class:`_WebModel`); errors name the variable."""
        from bot.settings import load

        values = load(_WebModel, environ, [f.name for f in fields(cls)], overrides, cls(), allowed=_WEB_ALLOWED)
        if "trusted_proxies" not in values and environ.get("FORWARDED_ALLOW_IPS"):
            values["trusted_proxies"] = _WebModel.model_validate(
                {"trusted_proxies": environ["FORWARDED_ALLOW_IPS"]}).trusted_proxies
        return replace(cls(), **values)


def _words(value: object) -> object:
    return tuple(v for v in re.split(r"[\s,]+", value) if v) if isinstance(value, str) else value


class _WebModel(BaseModel):
    """What each web setting may be; field names are the ``WebSettings`` fields."""

    model_config = ConfigDict(extra="forbid")

    host: Annotated[str, Field(min_length=1, max_length=255, pattern=r"^[\w.:\-\[\]]+$")] | None = None
    port: Annotated[int, Field(ge=1, le=65535)] | None = None
    frame_ancestors: Annotated[tuple[Annotated[str, Field(pattern=r"^(?:'self'|'none'|https?://[^\s/]+)$")], ...],
                               BeforeValidator(_words)] | None = None
    cors_origins: Annotated[tuple[Annotated[str, Field(pattern=r"^https?://[^/\s*]+$")], ...],
                            BeforeValidator(_words)] | None = None
    api_token: Annotated[str, Field(min_length=8, max_length=512, pattern=r"^[\x21-\x7e]+$")] | None = None
    trusted_header: Annotated[str, Field(max_length=100, pattern=r"^[A-Za-z0-9-]+$")] | None = None
    root_path: str | None = None
    public_url: Annotated[str, Field(pattern=r"^https?://[^\s]+$")] | None = None
    trusted_proxies: Annotated[tuple[str, ...], BeforeValidator(_words)] | None = None

    @field_validator("root_path")
    @classmethod
    def _root(cls, value: str | None) -> str | None:
        if value is None:
            return None
        root = value.strip().strip("/")
        if root and not re.fullmatch(r"[\w.\-/~]+", root):
            raise ValueError("a URL path such as /assistant")
        return "/" + root if root else ""

    @field_validator("trusted_proxies")
    @classmethod
    def _proxies(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        for item in value or ():
            if item != "*":
                ipaddress.ip_network(item, strict=False)  # ValueError names the bad address
        return value


_WEB_ALLOWED = {
    "host": "a host name or IP address", "port": "an integer from 1 to 65535",
    "frame_ancestors": "'self', 'none' or origins like https://portal.example.com, space-separated",
    "cors_origins": "origins like https://portal.example.com (no '*', no path), space-separated",
    "api_token": "8 to 512 printable characters without spaces",
    "trusted_header": "a header name such as X-Portal-User", "root_path": "a URL path such as /assistant",
    "public_url": "an http(s):// URL", "trusted_proxies": "IP addresses or networks (10.0.0.0/8), or *",
}


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
                await send_with_headers({
                    "type": "http.response.start", "status": 500,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
                })
                await send({"type": "http.response.body", "body": body})
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
    for item in history[-MAX_HISTORY:]:
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
                raise ValueError('each history item must be a string, {"question": str} or {"role": "user", "content": str}')
        else:
            raise ValueError("each history item must be a string or an object")
    return out


# The source view moved to bot/answer/source_view.py (HTML from bot/answer/templates/source.html).
