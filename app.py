"""The chat app: Gradio UI, compact widget, source view and JSON API on one port.

    python app.py --host 127.0.0.1 --port 7860

Routes (all under ``--root-path`` when served behind a reverse proxy):

- ``/``            full chat UI
- ``/widget/``     compact chat for a portal side panel (<iframe> or <gradio-app>)
- ``/source``      the cited lines of a knowledge-base document, matched terms highlighted
- ``/api/ask``     POST {"question": str, "history": [...]} -> reply markdown + citations
- ``/api/feedback`` POST {"question", "vote": "up"|"down", ...} -> appended to the feedback log
- ``/healthz``     readiness

Only this file reads the environment: ``BOT_*`` variables of :class:`bot.settings.Settings`
(index, seeds, embedder, feedback log, input limit) and the web settings of
:class:`WebSettings` (host, port, frame ancestors, CORS origins, API token, ...);
command-line flags override both. :func:`build_app` builds everything without
starting a server, for tests and for other ASGI servers.
"""

from __future__ import annotations

import argparse
import hmac
import html
import json
import os
import re
import sys
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping
from urllib.parse import urlencode

import gradio as gr
from fastapi import FastAPI, HTTPException, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bot import feedback
from bot.conversation import Conversation, Turn
from bot.reply import text as ui_text
from bot.reply import user_echo
from bot.settings import Settings
from bot.signature import looks_like_log

MAX_BODY_BYTES = 8 * 1024 * 1024  # a JSON body above this is refused with 413 (the text limit is max_input_chars)
MAX_HISTORY = 20

TITLE = "GPU 训练故障助手 · GPU Training Troubleshooter"
INTRO = (
    "用中文或英文提问，或直接粘贴报错日志；每个回答都标明出处。  \n"
    "Ask in Chinese or English, or paste an error log; every answer cites its source."
)
PLACEHOLDER = (
    "### 你好！Hi!\n\n"
    "描述你遇到的问题，或粘贴完整的报错日志。  \n"
    "Describe your problem or paste the full error log.\n\n"
    "试试下面的例子 · Try an example:"
)
INPUT_HINT = "输入问题或粘贴报错日志… · Ask a question or paste an error log…"
SAMPLE_LOG = (
    "I0221 18:48:34.436648 29562 Util.cpp:155] commandline: python train.py --use_gpu=True\n"
    "EnforceNotMet: Failed to find dynamic library: libnccl.so ( libnccl.so: cannot open shared object file: "
    "No such file or directory ) at [/paddle/paddle/fluid/platform/dynload/dynamic_loader.cc:157]\n"
    "PaddlePaddle Call Stacks:\n"
    "0       0x7f19fce44e96p paddle::platform::EnforceNotMet::EnforceNotMet(char const*, int) + 486\n"
    "1       0x7f19fe6ea71ep paddle::platform::dynload::GetNCCLDsoHandle() + 1822"
)
EXAMPLES = [
    {"text": "训练时报错显存不足怎么办？", "display_text": "训练时报错显存不足怎么办？"},
    {"text": "Loss becomes NaN after a few steps", "display_text": "Loss becomes NaN after a few steps"},
    {"text": "How do I stop TensorFlow from grabbing all GPU memory?",
     "display_text": "How do I stop TensorFlow from grabbing all GPU memory?"},
    {"text": SAMPLE_LOG, "display_text": "粘贴日志 · Paste a log: EnforceNotMet … libnccl.so"},
]

CSS = """
.bot-header h1 { font-size: 1.35rem; margin: 0.2rem 0; }
.bot-header p { margin: 0; opacity: 0.8; }
.bot-chat .message-wrap details { margin: 0.35rem 0; border-left: 3px solid var(--border-color-primary); padding-left: 0.6rem; }
.bot-chat .message-wrap summary { cursor: pointer; font-weight: 600; }
.bot-chat .message-wrap h3 { margin-top: 0.2rem; }
.bot-toolbar { gap: 0.5rem; }
#new-chat { white-space: nowrap; }
footer { display: none !important; }
"""
# System fonts only: nothing is fetched from font CDNs (offline installs, strict portal CSPs).
THEME = gr.themes.Soft(
    font=["system-ui", "-apple-system", "Segoe UI", "Noto Sans CJK SC", "Microsoft YaHei", "sans-serif"],
    font_mono=["ui-monospace", "SFMono-Regular", "Menlo", "Noto Sans Mono CJK SC", "monospace"],
)
WIDGET_CSS = CSS + """
.gradio-container { padding: 0.25rem !important; max-width: 100% !important; }
.bot-chat { font-size: 0.92rem; }
.bot-chat .message-wrap h3 { font-size: 1.02rem; }
.bot-widget-title { font-weight: 600; font-size: 0.95rem; margin: 0 0 0.2rem 0.2rem; }
"""


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
    def from_env(cls, environ: Mapping[str, str], **overrides: object) -> "WebSettings":
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


def _request_base(request: Any, web: WebSettings) -> str:
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


def _history_messages(history: Any) -> list[str]:
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


# ---------------------------------------------------------------- source view

_SOURCE_CSS = """
body { font: 15px/1.55 system-ui, -apple-system, "Segoe UI", "Noto Sans CJK SC", sans-serif; margin: 0; color: #1f2328; background: #fff; }
header { position: sticky; top: 0; background: #f6f8fa; border-bottom: 1px solid #d0d7de; padding: 0.7rem 1rem; }
h1 { font-size: 1.05rem; margin: 0 0 0.25rem; }
.meta { color: #57606a; font-size: 0.88rem; }
.meta code { background: #eaeef2; padding: 0 0.3em; border-radius: 4px; }
nav { margin-top: 0.35rem; font-size: 0.88rem; }
main { padding: 0.5rem 0; }
.line { display: flex; white-space: pre-wrap; word-break: break-word; font: 13px/1.5 ui-monospace, "Noto Sans Mono CJK SC", monospace; }
.line .n { flex: 0 0 3.5em; text-align: right; padding-right: 0.8em; color: #8c959f; user-select: none; }
.line .t { flex: 1; padding-right: 1rem; }
.line.in { background: #fff8c5; }
.line:target { outline: 2px solid #0969da; }
mark { background: #ffd33d; padding: 0 1px; border-radius: 2px; }
.empty { padding: 2rem 1rem; }
"""
_SOURCE_TEXT = {
    "zh": {"lines": "第 {a}–{b} 行", "terms": "匹配词", "whole": "显示整个文件", "section": "只显示本章节",
           "missing": "找不到这个章节。它可能已被修改或删除，请重新提问。", "title": "原文"},
    "en": {"lines": "lines {a}–{b}", "terms": "matched terms", "whole": "show the whole file",
           "section": "show only this section",
           "missing": "This section was not found. It may have changed or been removed; please ask again.",
           "title": "Source"},
}


def _highlight(line: str, pattern: re.Pattern[str] | None) -> str:
    if pattern is None:
        return html.escape(line, quote=False)
    out, last = [], 0
    for match in pattern.finditer(line):
        if match.start() == match.end():
            continue
        out.append(html.escape(line[last : match.start()], quote=False))
        out.append(f"<mark>{html.escape(match.group(), quote=False)}</mark>")
        last = match.end()
    out.append(html.escape(line[last:], quote=False))
    return "".join(out)


def render_source(engine: Any, settings: Settings, key: str, terms: str, language: str, whole: bool) -> tuple[int, str]:
    """(status, HTML page) showing a cited section's lines with matched terms marked; everything escaped."""
    t = _SOURCE_TEXT["zh" if language == "zh" else "en"]
    section = engine.section(key) if key else None
    head = (f'<!doctype html><html lang="{"zh" if language == "zh" else "en"}"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">')
    if section is None:
        return 404, (f"{head}<title>{t['title']}</title><style>{_SOURCE_CSS}</style></head>"
                     f'<body><p class="empty">{html.escape(t["missing"])}</p></body></html>')
    lines: list[str] | None = None
    seeds = Path(settings.seeds_dir).resolve()
    path = (seeds / section.source).resolve()
    if path.is_relative_to(seeds) and path.is_file():
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            lines = None
    if lines is None or len(lines) < section.end_line:  # file gone or changed: show the indexed text
        first = section.start_line
        lines = [""] * (first - 1) + [section.heading] + section.text.splitlines()
    words = sorted({w for w in re.split(r"\s+", terms or "") if 1 <= len(w) <= 60}, key=len, reverse=True)[:20]
    pattern = re.compile("|".join(re.escape(w) for w in words), re.IGNORECASE) if words else None
    start, end = section.start_line, min(section.end_line, len(lines))
    shown = range(1, len(lines) + 1) if whole else range(start, end + 1)
    rows = []
    for n in shown:
        cls = "line in" if start <= n <= end else "line"
        rows.append(f'<div class="{cls}" id="L{n}"><span class="n">{n}</span>'
                    f'<span class="t">{_highlight(lines[n - 1], pattern) or " "}</span></div>')
    toggle = urlencode({"key": key, "terms": terms or "", "lang": language, **({} if whole else {"whole": "1"})})
    term_list = " ".join(f"<mark>{html.escape(w)}</mark>" for w in words)
    page = (
        f"{head}<title>{html.escape(section.heading)} — {t['title']}</title><style>{_SOURCE_CSS}</style></head><body>"
        f"<header><h1>{html.escape(section.breadcrumb)}</h1>"
        f'<div class="meta"><code>{html.escape(section.source)}</code> · '
        f"{t['lines'].format(a=section.start_line, b=section.end_line)}"
        + (f" · {t['terms']}: {term_list}" if words else "")
        + f'</div><nav><a href="?{html.escape(toggle)}#L{start}">{t["section"] if whole else t["whole"]}</a></nav></header>'
        f"<main>{''.join(rows)}</main></body></html>"
    )
    return 200, page


# ---------------------------------------------------------------- chat UI

def _new_state() -> dict:
    return {"turns": [], "votes": {}, "options": {}, "pending": None}


def _state(state: Any) -> dict:
    return state if isinstance(state, dict) and "turns" in state else _new_state()


def make_ui(engine: Any, settings: Settings, web: WebSettings, *, compact: bool = False) -> gr.Blocks:
    """The chat as Gradio Blocks; ``compact`` is the portal widget (no header, fills its frame)."""

    def conversation(state: dict, request: gr.Request | None) -> Conversation:
        base = _request_base(request, web) if request is not None else public_base({}, "http", web)
        return Conversation(engine, base_url=base, log_path=settings.feedback_log, turns=list(state["turns"]))

    def add_user(message: str | None, history: list | None, state: Any):
        state = _state(state)
        history = list(history or [])
        message = message if isinstance(message, str) else ""
        if not message.strip():
            last: list[Turn] = state["turns"]
            if last:
                content = ui_text(last[-1].language, "empty")
            else:
                content = ui_text("zh", "empty") + "\n\n" + ui_text("en", "empty")
            history.append({"role": "assistant", "content": content})
            state["pending"] = None
            return "", history, state
        history.append({"role": "user", "content": user_echo(message, looks_like_log(message[:20_000]))})
        state["pending"] = message
        return "", history, state

    def answer(history: list | None, state: Any, request: gr.Request):
        state = _state(state)
        history = list(history or [])
        message = state.get("pending")
        state["pending"] = None
        if message is None:
            return history, state
        talk = conversation(state, request)
        reply = talk.respond(message)
        state["turns"] = talk.turns
        item: dict = {"role": "assistant", "content": reply.markdown}
        if reply.options:
            item["options"] = [{"value": o["value"], "label": o["label"]} for o in reply.options]
        history.append(item)
        turn = talk.turns[-1] if talk.turns and reply.kind != "empty" else None
        state["votes"][str(len(history) - 1)] = {
            "question": turn.question if turn else message[:2_000],
            "language": reply.language,
            "answered": reply.answered,
            "cited": [s.hit.section.key for s in reply.shown],
            "signature": reply.signature,
        }
        state["options"] = {o["value"]: o["label"] for o in reply.options}
        return history, state

    def pick_example(history: list | None, state: Any, evt: gr.SelectData):
        value = evt.value if isinstance(evt.value, dict) else {"text": str(evt.value)}
        return add_user(str(value.get("text", "")), history, state)

    def pick_option(history: list | None, state: Any, evt: gr.SelectData):
        state = _state(state)
        history = list(history or [])
        value = evt.value
        key = value.get("value") if isinstance(value, dict) else str(value)
        label = state["options"].get(key) or (value.get("label") if isinstance(value, dict) else None) or key
        history.append({"role": "user", "content": user_echo(str(label))})
        state["pending"] = key
        return history, state

    def vote(state: Any, evt: gr.LikeData):
        state = _state(state)
        info = state["votes"].get(str(evt.index if not isinstance(evt.index, (list, tuple)) else evt.index[0]))
        if info is None:
            return
        liked = evt.liked
        if liked is True or liked == "Like":
            value = "up"
        elif liked is False or liked == "Dislike":
            value = "down"
        else:
            return  # a vote withdrawn: nothing to record
        feedback.log_event(
            settings.feedback_log, "vote", info["question"], language=info["language"], answered=info["answered"],
            cited=info["cited"], vote=value, signature=info.get("signature", ""),
        )
        gr.Info(ui_text(info["language"], "vote_thanks"), duration=2)

    def new_chat():
        return "", [], _new_state()

    with gr.Blocks(title=TITLE, fill_height=True, analytics_enabled=False) as blocks:
        state = gr.State(_new_state())
        if compact:
            gr.HTML('<div class="bot-widget-title">GPU 训练故障助手 · Troubleshooter</div>')
        else:
            gr.Markdown(f"# {TITLE}\n{INTRO}", elem_classes=["bot-header"])
        chatbot = gr.Chatbot(
            label="对话 · Chat",
            show_label=False,
            elem_id="chat",
            elem_classes=["bot-chat"],
            placeholder=PLACEHOLDER,
            examples=EXAMPLES,
            scale=1,
            height="100%" if compact else 620,
            min_height=320,
            sanitize_html=True,
            allow_tags=False,
            render_markdown=True,
            feedback_options=("Like", "Dislike"),
            buttons=["copy"],
            autoscroll=True,
            layout="bubble",
            latex_delimiters=[],
        )
        with gr.Row(elem_classes=["bot-toolbar"], equal_height=True):
            box = gr.Textbox(
                placeholder=INPUT_HINT,
                show_label=False,
                lines=1,
                max_lines=8,
                submit_btn="发送 · Send",
                elem_id="question",
                scale=8,
                autofocus=not compact,
            )
            new = gr.Button("新对话 · New chat", elem_id="new-chat", scale=0, min_width=170, size="md",
                            variant="secondary")

        box.submit(add_user, [box, chatbot, state], [box, chatbot, state], queue=False, show_progress="hidden").then(
            answer, [chatbot, state], [chatbot, state], show_progress="minimal"
        )
        chatbot.example_select(pick_example, [chatbot, state], [box, chatbot, state], queue=False).then(
            answer, [chatbot, state], [chatbot, state], show_progress="minimal"
        )
        chatbot.option_select(pick_option, [chatbot, state], [chatbot, state], queue=False).then(
            answer, [chatbot, state], [chatbot, state], show_progress="minimal"
        )
        chatbot.like(vote, [state], None, queue=False)
        chatbot.clear(lambda: _new_state(), None, [state], queue=False)
        new.click(new_chat, None, [box, chatbot, state], queue=False)
    return blocks


# ---------------------------------------------------------------- the app

def open_engine(settings: Settings, *, progress: bool = True):
    """Load the index, building it first when it is missing, stale or broken."""
    from bot.embed import make_embedder
    from bot.index import IndexProblem
    from bot.retrieve import Engine

    if progress:
        print(f"Opening the index in {settings.index_dir} …", file=sys.stderr, flush=True)
    embedder = make_embedder(settings.embedder)
    try:
        engine = Engine.open(settings, embedder, auto_build=False)
    except IndexProblem as problem:
        if progress:
            print(f"{problem}\nBuilding it now from {settings.seeds_dir} (this takes a minute) …", file=sys.stderr, flush=True)
        engine = Engine.open(settings, embedder, auto_build=True, progress=progress)
    if progress:
        print(f"Index ready: {len(engine.sections)} sections.", file=sys.stderr, flush=True)
    return engine


def build_app(settings: Settings, engine: Any = None, web: WebSettings | None = None, *, progress: bool = True) -> FastAPI:
    """UI + widget + source view + JSON API as one FastAPI app, not started."""
    web = web or WebSettings()
    engine = engine if engine is not None else open_engine(settings, progress=progress)
    app = FastAPI(title="GPU troubleshooting assistant", docs_url=None, redoc_url=None,
                  openapi_url="/api/openapi.json")
    # CORS: only the configured origins. Gradio leaves CORS to the parent app when it has this middleware,
    # so the UI routes get the same policy (and no blanket grant).
    app.add_middleware(
        CORSMiddleware,
        allow_origins=list(web.cors_origins),
        allow_methods=["GET", "POST", "OPTIONS"],
        allow_headers=["Authorization", "Content-Type", *([web.trusted_header] if web.trusted_header else [])],
        allow_credentials=False,
        max_age=600,
    )
    app.add_middleware(SecurityHeaders, frame_ancestors=web.frame_ancestors)

    def authorize(request: Request) -> None:
        if not web.api_token and not web.trusted_header:
            return
        if web.api_token:
            given = request.headers.get("authorization", "")
            if given.lower().startswith("bearer ") and hmac.compare_digest(given[7:].strip().encode(), web.api_token.encode()):
                return
        if web.trusted_header and request.headers.get(web.trusted_header, "").strip():
            return
        raise HTTPException(status_code=401, detail="missing or wrong credentials: send 'Authorization: Bearer <token>'",
                            headers={"WWW-Authenticate": "Bearer"})

    async def read_json(request: Request) -> dict:
        length = request.headers.get("content-length")
        if length and length.isdigit() and int(length) > MAX_BODY_BYTES:
            raise HTTPException(413, f"request body over {MAX_BODY_BYTES // (1024 * 1024)} MB")
        body = bytearray()
        async for chunk in request.stream():
            body.extend(chunk)
            if len(body) > MAX_BODY_BYTES:
                raise HTTPException(413, f"request body over {MAX_BODY_BYTES // (1024 * 1024)} MB")
        try:
            data = json.loads(body.decode("utf-8", errors="replace") or "null")
        except ValueError:
            raise HTTPException(400, 'body must be JSON: {"question": "...", "history": []}') from None
        if not isinstance(data, dict):
            raise HTTPException(422, 'body must be a JSON object: {"question": "...", "history": []}')
        return data

    @app.post("/api/ask")
    async def api_ask(request: Request) -> JSONResponse:
        authorize(request)
        data = await read_json(request)
        question = data.get("question")
        if not isinstance(question, str):
            raise HTTPException(422, '"question" must be a string')
        try:
            prior = _history_messages(data.get("history"))
        except ValueError as exc:
            raise HTTPException(422, str(exc)) from None
        base = _request_base(request, web)

        def run() -> dict:
            talk = Conversation.replay(engine, prior, base_url=base, log_path=settings.feedback_log)
            return talk.respond(question).to_json()

        from starlette.concurrency import run_in_threadpool

        return JSONResponse(await run_in_threadpool(run))

    @app.post("/api/feedback")
    async def api_feedback(request: Request) -> JSONResponse:
        authorize(request)
        data = await read_json(request)
        vote_value = data.get("vote")
        question = data.get("question")
        if vote_value not in ("up", "down") or not isinstance(question, str) or not question.strip():
            raise HTTPException(422, '{"question": str, "vote": "up" | "down"} required')
        cited = data.get("cited") or []
        if not isinstance(cited, list) or not all(isinstance(c, str) for c in cited):
            raise HTTPException(422, '"cited" must be a list of section keys')
        language = data.get("language") if data.get("language") in ("zh", "en") else "en"
        feedback.log_event(settings.feedback_log, "vote", question, language=language,
                           answered=bool(data.get("answered", True)), cited=cited[:10], vote=vote_value)
        return JSONResponse({"ok": True})

    @app.get("/source", response_class=HTMLResponse)
    def source(key: str = "", terms: str = "", lang: str = "zh", whole: str = "") -> HTMLResponse:
        status, page = render_source(engine, settings, key[:500], terms[:1_000], lang, whole == "1")
        policy = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
        return HTMLResponse(page, status_code=status, headers={"Content-Security-Policy": policy})

    @app.get("/healthz")
    def healthz() -> dict:
        return {"ok": True, "sections": len(engine.sections)}

    @app.get("/gradio.js", include_in_schema=False)
    def web_component_script() -> FileResponse:
        """Gradio's <gradio-app> loader, served here so a portal needs no CDN (it imports /assets/* of this app)."""
        return FileResponse(Path(gr.__file__).parent / "templates" / "frontend" / "gradio.js",
                            media_type="text/javascript")

    @app.get("/widget", include_in_schema=False)
    def widget_slash() -> RedirectResponse:
        return RedirectResponse(url=f"{web.root_path}/widget/", status_code=307)

    widget = make_ui(engine, settings, web, compact=True)
    full = make_ui(engine, settings, web, compact=False)
    for blocks in (widget, full):
        blocks.queue(default_concurrency_limit=4, max_size=64)
    app = gr.mount_gradio_app(app, widget, path="/widget", css=WIDGET_CSS, footer_links=[],
                              root_path=f"{web.root_path}/widget" if web.root_path else None,
                              theme=THEME, show_error=False)
    app = gr.mount_gradio_app(app, full, path="/", css=CSS, footer_links=[],
                              root_path=web.root_path or None, theme=THEME, show_error=False)
    return app


# ---------------------------------------------------------------- command line

def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description="GPU troubleshooting assistant: chat UI, widget and JSON API on one port")
    p.add_argument("--host", help="interface to listen on (default 127.0.0.1, env BOT_HOST)")
    p.add_argument("--port", type=int, help="port (default 7860, env BOT_PORT)")
    p.add_argument("--root-path", help="public path prefix behind a reverse proxy, e.g. /assistant (env BOT_ROOT_PATH)")
    p.add_argument("--public-url", help="public base URL used in answer links (env BOT_PUBLIC_URL)")
    p.add_argument("--frame-ancestors", help="origins allowed to frame the app, space-separated (env BOT_FRAME_ANCESTORS)")
    p.add_argument("--cors-origins", help="origins granted CORS, space-separated (env BOT_CORS_ORIGINS)")
    p.add_argument("--trusted-header", help="header set by a trusted proxy that authorises /api/* (env BOT_TRUSTED_HEADER)")
    p.add_argument("--index", type=Path, help="index folder (env BOT_INDEX_DIR)")
    p.add_argument("--seeds", type=Path, help="knowledge-base folder (env BOT_SEEDS_DIR)")
    p.add_argument("--feedback-log", type=Path, help="feedback JSON-lines log (env BOT_FEEDBACK_LOG)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        settings = Settings.from_env(os.environ, index_dir=args.index, seeds_dir=args.seeds,
                                     feedback_log=args.feedback_log)
        web = WebSettings.from_env(
            os.environ, host=args.host, port=args.port, root_path=args.root_path, public_url=args.public_url,
            frame_ancestors=args.frame_ancestors, cors_origins=args.cors_origins, trusted_header=args.trusted_header,
        )
        app = build_app(settings, web=web)
    except Exception as exc:  # one line with the fix, not a traceback
        from bot.embed import EmbedderUnavailable
        from bot.index import IndexProblem

        if isinstance(exc, (IndexProblem, EmbedderUnavailable, ValueError, FileNotFoundError)):
            print(f"error: {exc}", file=sys.stderr)
            return 2
        raise
    import uvicorn

    shown_host = "localhost" if web.host in ("0.0.0.0", "127.0.0.1", "::") else web.host
    print(f"Serving on http://{shown_host}:{web.port}{web.root_path}/  (widget: {web.root_path}/widget/, "
          f"API: POST {web.root_path}/api/ask)", file=sys.stderr, flush=True)
    uvicorn.run(app, host=web.host, port=web.port, root_path=web.root_path, proxy_headers=True,
                forwarded_allow_ips=os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1"), log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())
