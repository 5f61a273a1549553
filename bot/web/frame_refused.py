"""A portal that may not frame the app gets a readable page in its frame, not the browser's blank "refused" page.

The browser enforces ``frame-ancestors`` (``BOT_FRAME_ANCESTORS``) and, when it refuses, draws a sad-face page in
the frame; only the portal's console says why. A framed page load says what it is (``Sec-Fetch-Dest: iframe``) and,
under the app's referrer policy, which site frames it (the ``Referer``'s origin). When that origin is not allowed,
this middleware answers with a short page saying so, with a link that opens the chat in its own tab. The page has
no form and no action, so showing it in any frame is harmless (its CSP allows any ancestor); the chat itself is
never served to that frame. Without a ``Referer`` the request goes on, and the browser's own check applies.

    >>> refused_origin({"sec-fetch-dest": "iframe", "referer": "https://other.example/x"}, ("'self'",), "127.0.0.1:7860")
    'https://other.example'
    >>> refused_origin({"sec-fetch-dest": "iframe", "referer": "https://portal.example/p"},
    ...                ("https://portal.example",), "bot.example")
    >>> refused_origin({"sec-fetch-dest": "document", "referer": "https://other.example/"}, ("'self'",), "bot.example")
    >>> refused_origin({"sec-fetch-dest": "iframe", "sec-fetch-site": "same-origin", "referer": "https://bot.example/"},
    ...                ("'self'",), "10.0.0.5:7860")
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from bot.web.raw_response import send_response

TEXT = {
    "zh": (
        "此页面不允许嵌入这个助手",
        "网站 {origin} 不在助手的 BOT_FRAME_ANCESTORS 设置里，所以浏览器不会在这里显示它。"
        "请管理员把这个来源加入 BOT_FRAME_ANCESTORS。",
        "在新标签页中打开助手",
    ),
    "en": (
        "This page may not embed the assistant",
        "{origin} is not in the assistant's BOT_FRAME_ANCESTORS setting, so the browser will not show it here. "
        "Ask the administrator to add this origin to BOT_FRAME_ANCESTORS.",
        "Open the assistant in a new tab",
    ),
}


def refused_origin(headers: Mapping[str, str], allowed: tuple[str, ...], host: str) -> str | None:
    """The origin framing this page load when ``allowed`` (frame-ancestors sources) does not admit it, else None."""
    if headers.get("sec-fetch-dest") not in ("iframe", "frame"):
        return None
    parts = urlsplit(headers.get("referer", ""))
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None  # no referrer: the browser's own check applies
    origin = f"{parts.scheme}://{parts.netloc}"
    if "*" in allowed or origin in allowed:
        return None
    # 'self': the browser says whether the framing page is of this origin (behind a proxy, Host is not the public one)
    if "'self'" in allowed and (headers.get("sec-fetch-site") == "same-origin" or parts.netloc == host):
        return None
    return origin


def refused_page(origin: str, path: str, language: str) -> bytes:
    title, body, link = TEXT["zh" if language == "zh" else "en"]
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{html.escape(title)}</title><style>"
        ":root{color-scheme:light dark}body{font:15px/1.5 system-ui,sans-serif;margin:0;padding:1.2rem}"
        "h1{font-size:1.1rem;margin:0 0 .5rem}p{margin:.4rem 0}</style></head><body>"
        f"<h1 id='frame-refused'>{html.escape(title)}</h1><p>{html.escape(body.format(origin=origin))}</p>"
        f"<p><a href='{html.escape(path)}' target='_blank' rel='noopener'>{html.escape(link)}</a></p>"
        "</body></html>"
    ).encode()


class FrameRefused:
    """Answers a framed page load from a site ``frame_ancestors`` does not admit with :func:`refused_page`."""

    def __init__(self, app: ASGIApp, frame_ancestors: tuple[str, ...]) -> None:
        self.app = app
        self.allowed = tuple(frame_ancestors)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "GET":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        origin = refused_origin(headers, self.allowed, headers.get("host", ""))
        if origin is None:
            await self.app(scope, receive, send)
            return
        language = "zh" if headers.get("accept-language", "").lower().startswith("zh") else "en"
        body = refused_page(origin, scope.get("path", "/"), language)
        await send_response(
            send,
            200,
            body,
            [
                (b"content-type", b"text/html; charset=utf-8"),
                (b"content-security-policy", b"default-src 'none'; style-src 'unsafe-inline'; frame-ancestors *"),
                (b"cache-control", b"no-store"),
            ],
        )
