"""The chat app: Gradio UI, compact widget, source view and JSON API on one port.

    python app.py --host 127.0.0.1 --port 7860

Routes (all under ``--root-path`` when served behind a reverse proxy):

- ``/``            full chat UI
- ``/widget/``     compact chat for a portal side panel (<iframe> or <gradio-app>)
- ``/source``      the cited lines of a knowledge-base document, matched terms highlighted
- ``/api/ask``     POST {"question": str, "history": [...]} -> reply markdown + citations
- ``/api/feedback`` POST {"question", "vote": "up"|"down", "reason", "answer_id", ...} -> recorded in the store
- ``/healthz``     readiness
- ``/v1/chat/completions``, ``/v1/models``  OpenAI-compatible chat API (same auth as ``/api/*``)
- ``/admin``       coverage gaps for operators (``BOT_ADMIN_TOKEN``), from the store

Only this file reads the environment: ``BOT_*`` variables of :class:`bot.settings.Settings`
(index, seeds, embedder, feedback log, input limit), the web settings of
:class:`bot.web.http.WebSettings` (host, port, frame ancestors, CORS origins, API token, ...) and the
store settings of :class:`bot.store.database.StoreSettings` (database, data dir, retention, admin token);
command-line flags override both. :func:`build_app` builds everything without
starting a server, for tests and for other ASGI servers.
"""

from __future__ import annotations

import argparse
import hmac
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse
from starlette.concurrency import run_in_threadpool

from bot.store import feedback
from bot.web.api_models import AskRequest, FeedbackRequest
from bot.web.handoff import api_turn
from bot.answer.turn import take_turn
from bot.records import Event
from bot.web.security import JSON_KEY, JSONProblem, SecurityMiddleware, load_json
from bot.settings import Settings
from bot.answer.reply import Contact
from bot.answer.source_view import render_source
from bot.web.http import (
    MAX_BODY_BYTES, SecurityHeaders, WebSettings, contact_from_env, history_messages, request_base, server_config,
)

__all__ = ["SAMPLE_LOG", "WebSettings", "build_app", "main", "open_engine"]


def __getattr__(name: str) -> Any:
    # Gradio (imported by bot.web.ui) takes seconds to import and only the UI needs it:
    # it is imported when the UI is built, not with this module.
    if name == "SAMPLE_LOG":
        from bot.web.ui import SAMPLE_LOG

        return SAMPLE_LOG
    raise AttributeError(f"module 'app' has no attribute {name!r}")


# ---------------------------------------------------------------- the app

def open_engine(settings: Settings, *, progress: bool = True):
    """Load the index, building it first when it is missing, stale or broken."""
    from bot.kb.embed import make_embedder
    from bot.kb.index import IndexProblem
    from bot.engine.retrieve import Engine

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


def build_app(settings: Settings, engine: Any = None, web: WebSettings | None = None, *, progress: bool = True,
              store: Any = None, ops: Any = None, contact: Contact | None = None, ui: bool = True) -> FastAPI:
    """UI + widget + source view + JSON API as one FastAPI app, not started (``ui=False``: without the UI,
    so without importing Gradio: what a first answer needs).

    ``store`` (a :class:`bot.store.database.Store`) records questions and votes and feeds ``/admin``; without
    one, events go to the JSON-lines log. ``ops`` is the :class:`bot.store.database.StoreSettings` (admin
    token, index polling). ``contact`` is where "talk to a person" leads.
    """
    from bot.store.database import StoreSettings

    web = web or WebSettings()
    ops = ops or (store.settings if store is not None else StoreSettings())
    contact = contact or Contact()
    engine = engine if engine is not None else open_engine(settings, progress=progress)
    # ---- store, live index (issue 12): one recorder for every edge; the engine follows index/CURRENT
    from bot.engine.live import watch_index

    recorder = store if store is not None else feedback.JsonlRecorder(settings.feedback_log)
    engine = watch_index(engine, ops.index_poll_seconds)
    app = FastAPI(title="GPU troubleshooting assistant", docs_url=None, redoc_url=None,
                  openapi_url="/api/openapi.json")
    # One door for every route, no uploads, JSON checks; /admin* also opens to the operator's Bearer token.
    app.add_middleware(SecurityMiddleware, web=web, admin_token=getattr(ops, "admin_token", "") or "")
    # CORS: only the configured origins. Gradio leaves CORS to the parent app when it has this middleware,
    # so the UI routes get the same policy (and no blanket grant).
    app.add_middleware(
        CORSMiddleware,
        allow_origins=list(web.cors_origins),
        allow_methods=["GET", "POST", "OPTIONS"],
        allow_headers=["*"],  # the origin list is the boundary; Gradio's client sends its own x-gradio-* headers
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
        if JSON_KEY in request.scope:  # parsed and checked by the SecurityMiddleware, off the event loop
            data = request.scope[JSON_KEY]
            if not isinstance(data, dict):
                raise HTTPException(422, 'body must be a JSON object: {"question": "...", "history": []}')
            return data
        length = request.headers.get("content-length")
        if length and length.isdigit() and int(length) > MAX_BODY_BYTES:
            raise HTTPException(413, f"request body over {MAX_BODY_BYTES // (1024 * 1024)} MB")
        body = bytearray()
        async for chunk in request.stream():
            body.extend(chunk)
            if len(body) > MAX_BODY_BYTES:
                raise HTTPException(413, f"request body over {MAX_BODY_BYTES // (1024 * 1024)} MB")
        try:  # in a worker thread: a large body must not hold the event loop
            data = await run_in_threadpool(load_json, bytes(body))
        except JSONProblem as problem:
            raise HTTPException(problem.status, str(problem)) from None
        if not isinstance(data, dict):
            raise HTTPException(422, 'body must be a JSON object: {"question": "...", "history": []}')
        return data

    @app.post("/api/ask")
    async def api_ask(request: Request) -> JSONResponse:
        authorize(request)
        data = await read_json(request)
        body = AskRequest.parse(data, max_input_chars=settings.max_input_chars)
        question, prior = body.question, body.prior(settings.max_input_chars)
        base = request_base(request, web)

        session = data.get("session") if isinstance(data.get("session"), str) else ""

        def run() -> dict:
            turned, _ = api_turn(engine, question, prior, base_url=base, contact=contact, origin="api",
                                 take=take_turn)
            for event in turned.reply.events:
                recorder.record(replace(event, origin="api", answer_id=turned.answer_id), session=session,
                                latency_ms=turned.latency_ms)
            return turned.to_json()  # answer_id: what a vote on this answer refers to

        from starlette.concurrency import run_in_threadpool

        return JSONResponse(await run_in_threadpool(run))

    @app.post("/api/feedback")
    async def api_feedback(request: Request) -> JSONResponse:
        authorize(request)
        data = await read_json(request)
        body = FeedbackRequest.parse(data, max_input_chars=settings.max_input_chars)
        recorder.record(Event("vote", body.question, body.lang, tier="answer" if body.answered else "none",
                              cited=tuple(body.cited), vote=body.vote, reason=body.reason, answer_id=body.answer_id, origin="api"),
                        session=body.session)
        return JSONResponse({"ok": True})

    # ---- OpenAI-compatible API and /admin (issue 12); `authorize` is the one check for /api/* and /v1/*
    from bot.web.admin import mount_admin
    from bot.web.openai_api import openai_router

    app.include_router(openai_router(engine, recorder, web, authorize, contact=contact))
    mount_admin(app, store, engine, ops)

    @app.get("/source", response_class=HTMLResponse)
    def source(key: str = "", terms: str = "", lang: str = "zh", whole: str = "") -> HTMLResponse:
        status, page = render_source(engine, settings, key[:500], terms[:1_000], lang, whole == "1")
        policy = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
        return HTMLResponse(page, status_code=status, headers={"Content-Security-Policy": policy})

    @app.get("/healthz")
    def healthz() -> dict:
        return {"ok": True, "sections": len(engine.sections)}

    if not ui:
        return app  # what a first answer needs; no Gradio import
    import gradio as gr

    from bot.web.ui import CSS, THEME, WIDGET_CSS, make_ui

    @app.get("/gradio.js", include_in_schema=False)
    def web_component_script() -> FileResponse:
        """Gradio's <gradio-app> loader, served here so a portal needs no CDN (it imports /assets/* of this app)."""
        return FileResponse(Path(gr.__file__).parent / "templates" / "frontend" / "gradio.js",
                            media_type="text/javascript")

    @app.get("/widget", include_in_schema=False)
    def widget_slash() -> RedirectResponse:
        return RedirectResponse(url=f"{web.root_path}/widget/", status_code=307)

    widget = make_ui(engine, settings, web, compact=True, recorder=recorder, contact=contact)
    full = make_ui(engine, settings, web, compact=False, recorder=recorder, contact=contact)
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
        # Where "talk to a person" leads (a chat channel, a ticket form, a mailto: link); a bad URL stops here.
        contact = contact_from_env(os.environ)
        from bot.store.database import StoreSettings, open_store

        ops = StoreSettings.from_env(os.environ)
        store = open_store(ops, legacy_log=settings.feedback_log)  # before the index: a bad database fails fast
        print(f"Store: {store.describe()}", file=sys.stderr, flush=True)
        from bot.engine.live import watch_index

        # One index watcher for both apps below (each would otherwise load every new generation again).
        engine = watch_index(open_engine(settings), ops.index_poll_seconds)
        # The API answers as soon as the index is loaded; the UI (Gradio: seconds to import)
        # is built meanwhile in a worker thread and takes over once started (bot/web/deferred.py).
        from bot.web.deferred import DeferredApp

        parts = dict(store=store, ops=ops, contact=contact)
        app = SecurityHeaders(DeferredApp(build_app(settings, engine, web, ui=False, **parts),
                                          lambda: build_app(settings, engine, web, **parts)),
                              frame_ancestors=web.frame_ancestors)
    except Exception as exc:  # one line with the fix, not a traceback
        from bot.kb.embed import EmbedderUnavailable
        from bot.kb.index import IndexProblem
        from bot.store.database import StoreError

        if isinstance(exc, (IndexProblem, EmbedderUnavailable, ValueError, FileNotFoundError, StoreError)):
            print(f"error: {exc}", file=sys.stderr)
            return 2
        raise
    import uvicorn

    shown_host = "localhost" if web.host in ("0.0.0.0", "127.0.0.1", "::") else web.host
    print(f"Serving on http://{shown_host}:{web.port}{web.root_path}/  (widget: {web.root_path}/widget/, "
          f"API: POST {web.root_path}/api/ask)", file=sys.stderr, flush=True)
    # Request timeout, half-open cap and keep-alive from web (bot.web.http.server_config); X-Forwarded-* are
    # handled in bot.web.security, from web.trusted_proxies only (BOT_TRUSTED_PROXIES).
    uvicorn.Server(server_config(app, web, lifespan="on", log_level="warning")).run()
    store.close()  # write what is still queued before the process ends
    return 0


if __name__ == "__main__":
    sys.exit(main())
