"""HTTP pieces of the app that do not need Gradio: web settings, security headers,
public links and API history parsing (the source view is bot/source_view.py).

:class:`WebSettings` is built by ``app.py`` (the only place that reads the
environment); everything here takes it as an argument.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

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

    @classmethod
    def from_env(cls, environ: Mapping[str, str], **overrides: object) -> WebSettings:
        values: dict[str, object] = {}
        for name in ("host", "port", "frame_ancestors", "cors_origins", "api_token", "trusted_header",
                     "root_path", "public_url"):
            raw = environ.get("BOT_" + name.upper())
            if raw is not None and raw != "":
                values[name] = raw
        values.update({k: v for k, v in overrides.items() if v is not None})
        if "port" in values:
            try:
                values["port"] = int(values["port"])  # type: ignore[arg-type]
            except ValueError:
                raise ValueError(f"port must be a number, got {values['port']!r}") from None
        for name in ("frame_ancestors", "cors_origins"):
            if isinstance(values.get(name), str):
                values[name] = tuple(v for v in re.split(r"[\s,]+", values[name]) if v)  # type: ignore[arg-type]
        if "root_path" in values:
            root = str(values["root_path"]).strip()
            values["root_path"] = ("/" + root.strip("/")) if root.strip("/") else ""
        web = replace(cls(), **values)
        for origin in web.cors_origins:
            if origin == "*" or not re.match(r"^https?://[^/\s]+$", origin):
                raise ValueError(f"CORS origin {origin!r} must look like https://portal.example.com (no '*', no path)")
        return web


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


# The source view moved to bot/source_view.py (HTML from bot/templates/source.html).
