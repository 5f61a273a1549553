"""The chat's page shell, usable sooner: its first screen in the HTML, Gradio's hashed assets served from memory.

Gradio draws nothing until its ~50 scripts (a chain of imports, four rounds) have loaded and run and the load event
has answered: on a busy machine a person looked at a blank "加载中…" for seconds after the page had loaded (issue 35,
``bench/widget_load.py``). :class:`PageShell` puts the first paint (:mod:`bot.web.ui.first_paint`: the welcome, its
examples and a text box, in the tab's language) into the HTML of ``/`` and ``/widget/``, and serves Gradio's
content-hashed ``/assets/*`` itself, from memory and compressed once (Gradio's route opened, read and compressed
each file on every request: 15 ms a file at load 20 against 2 ms), marked immutable (a new Gradio has new names),
so a second visit asks the server for none of them.

(Naming every script in the page's ``<head>`` as ``<link rel=modulepreload>`` was tried and left out: at load 20 it
moved the ``load`` event later and the first paint from 0.8 to 1.5 s, and Gradio's chat was ready no sooner.)

    >>> with_first_paint(b'<body><gradio-app eager="true"></gradio-app></body>', b"<div>hi</div>")
    b'<body><div>hi</div><gradio-app eager="true"></gradio-app></body>'
"""

from __future__ import annotations

import gzip
import hashlib
import re
from pathlib import Path

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bot.web.ui.first_paint import FirstPaint
from bot.web.ui.strings import ui_language

IMMUTABLE = "public, max-age=31536000, immutable"
_HASHED = re.compile(r"^[\w.-]+-[\w-]{6,}\.(js|css)$")  # Vite's content-hashed names: Index-XJ9wGPKP.js
PAGES = ("/", "/widget/")


def gradio_assets() -> Path:
    import gradio

    return Path(gradio.__file__).parent / "templates" / "frontend" / "assets"


def with_first_paint(html: bytes, paint: bytes, title: bytes = b"") -> bytes:
    """Gradio's page shell with ``paint`` (:class:`~bot.web.ui.first_paint.FirstPaint`'s HTML) before its app, and
    ``title`` in its head when it has none (Gradio's script sets one later: a page without is unnamed till then).

    >>> with_first_paint(b'<head></head><body><gradio-app></gradio-app></body>', b"<p>hi</p>", b"<title>T</title>")
    b'<head><title>T</title></head><body><p>hi</p><gradio-app></gradio-app></body>'
    """
    at = html.find(b"<gradio-app")
    if at < 0:
        return html
    html = html[:at] + paint + html[at:]
    head = html.find(b"</head>")
    if title and head >= 0 and b"<title" not in html[:head]:
        html = html[:head] + title + html[head:]
    return html


class PageShell:
    """ASGI middleware over the app serving the chat (``/`` and ``/widget/`` under ``root_path``): adds the first
    paint to their HTML shell and serves Gradio's hashed assets. Anything else passes untouched."""

    def __init__(
        self,
        app: ASGIApp,
        root_path: str = "",
        assets: Path | None = None,
        paints: dict[str, FirstPaint] | None = None,
    ) -> None:
        self.app = app
        self.root = root_path.rstrip("/")
        self.assets = Assets(gradio_assets() if assets is None else assets)
        self.paints = paints if paints is not None else {}  # per page, filled in once its Blocks are made

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        root = self.root or scope.get("root_path", "")
        local = path[len(root) :] if root and path.startswith(root) else path
        if local in PAGES and scope["method"] == "GET" and local in self.paints:
            await self._shell(scope, receive, send, local)
            return
        mount, _, name = local.rpartition("/assets/")
        if mount in ("", "/widget") and _HASHED.match(name):
            asset = self.assets.get(name)
            if asset is not None:
                await asset.send(scope, send)
                return
        await self.app(scope, receive, send)

    async def _shell(self, scope: Scope, receive: Receive, send: Send, page: str) -> None:
        paint = self.paints[page]
        accept = dict(scope.get("headers", [])).get(b"accept-language", b"").decode("latin-1")
        start: Message | None = None
        body: list[bytes] = []

        async def buffered(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
                return
            if message["type"] != "http.response.body" or start is None:
                await send(message)
                return
            body.append(message.get("body", b""))
            if message.get("more_body"):
                return
            headers = MutableHeaders(scope=start)
            html = b"".join(body)
            plain = start["status"] == 200 and "text/html" in headers.get("content-type", "")
            if plain and not headers.get("content-encoding"):
                html = with_first_paint(html, paint.html(ui_language(accept)), paint.title())
                headers["content-length"] = str(len(html))
            await send(start)
            await send({"type": "http.response.body", "body": html})

        await self.app(scope, receive, buffered)


TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}


class Asset:
    """One of Gradio's hashed files, read and compressed once: sent whole, gzipped when the browser takes it."""

    def __init__(self, body: bytes, content_type: str) -> None:
        self.body, self.zipped = body, gzip.compress(body, 6, mtime=0)
        self.etag = '"' + hashlib.sha1(body).hexdigest()[:20] + '"'
        self.content_type = content_type

    async def send(self, scope: Scope, send: Send) -> None:
        headers = {k.lower(): v for k, v in scope.get("headers", [])}
        common = [
            (b"cache-control", IMMUTABLE.encode()),
            (b"etag", self.etag.encode()),
            (b"vary", b"Accept-Encoding"),
        ]
        if headers.get(b"if-none-match", b"").decode("latin-1").strip() == self.etag:
            await send({"type": "http.response.start", "status": 304, "headers": common})
            await send({"type": "http.response.body", "body": b""})
            return
        zipped = b"gzip" in headers.get(b"accept-encoding", b"") and len(self.zipped) < len(self.body)
        body = self.zipped if zipped else self.body
        out = [*common, (b"content-type", self.content_type.encode()), (b"content-length", str(len(body)).encode())]
        if zipped:
            out.append((b"content-encoding", b"gzip"))
        await send({"type": "http.response.start", "status": 200, "headers": out})
        await send({"type": "http.response.body", "body": b"" if scope.get("method") == "HEAD" else body})


class Assets:
    """Gradio's ``assets/`` folder, its files (scripts and styles only) kept in memory once asked for; a name
    not in the folder is None (Gradio's own route answers it)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.names = {p.name for p in folder.iterdir() if p.suffix in TYPES} if folder.is_dir() else set()
        self.kept: dict[str, Asset] = {}

    def get(self, name: str) -> Asset | None:
        if name not in self.names:
            return None
        if name not in self.kept:
            path = self.folder / name
            self.kept[name] = Asset(path.read_bytes(), TYPES[path.suffix])
        return self.kept[name]
