"""The chat app: Gradio UI, compact widget, source view and JSON API on one port.

    python app.py --host 127.0.0.1 --port 7860

Routes (all under ``--root-path`` when served behind a reverse proxy):

- ``/``            full chat UI
- ``/widget/``     compact chat for a portal side panel (<iframe> or <gradio-app>)
- ``/source``      the cited lines of a knowledge-base document, matched terms highlighted
- ``/api/ask``     POST {"question": str, "state": str, "history": [...]} -> reply markdown + citations + state
- ``/api/feedback`` POST {"question", "vote": "up"|"down", "reason", "answer_id", ...} -> recorded in the store
- ``/healthz``     readiness
- ``/v1/chat/completions``, ``/v1/models``  OpenAI-compatible chat API (same auth as ``/api/*``)
- ``/admin``       coverage gaps for operators (``BOT_ADMIN_TOKEN``), from the store

This file has the environment read, once: :class:`bot.web.config.AppConfig` holds every setting
(``engine``: :class:`bot.settings.Settings`, ``web``: :class:`bot.settings.WebSettings`, ``store``:
:class:`bot.store.database.StoreSettings`, ``contact``), from the ``BOT_*`` variables, command-line flags
overriding them, and its sections are passed down. :func:`build_app` builds everything without
starting a server, for tests and for other ASGI servers. :func:`main` listens at once and loads the index
and builds the UI behind it (:mod:`bot.web.deferred`).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import Depends, FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse
from starlette.concurrency import run_in_threadpool

from bot.answer.reply import Contact
from bot.answer.source_view import render_source
from bot.answer.state import StateRefused
from bot.records import Event
from bot.settings import Settings, WebSettings
from bot.store import NotSpooled, feedback
from bot.web.api_models import AskRequest, FeedbackRequest
from bot.web.api_turn import answer as api_answer
from bot.web.config import AppConfig
from bot.web.credentials import LoginThrottle
from bot.web.door import Door, json_object
from bot.web.frame_refused import FrameRefused
from bot.web.http import SecurityHeaders, request_base, server_config
from bot.web.security import SecurityMiddleware
from bot.web.signing import LinkSigner, state_seal

if TYPE_CHECKING:
    from bot.engine.answerer import ServingEngine

__all__ = ["WebSettings", "build_app", "deferred_app", "main", "open_engine"]


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
    from bot.engine.retrieve import Engine
    from bot.kb.domain import serving_domain
    from bot.kb.embed import make_embedder
    from bot.kb.index import IndexProblem

    if progress:
        print(f"Opening the index in {settings.index_dir} …", file=sys.stderr, flush=True)
    # A bad seeds/domain.toml or vocabulary.toml is named now (file and fix), and the shipped domain served meanwhile.
    serving_domain(settings.seeds_dir)
    embedder = make_embedder(settings.embedder, batching=settings.embed_batching)
    try:
        engine = Engine.open(settings, embedder, auto_build=False)
    except IndexProblem as problem:
        if progress:
            print(
                f"{problem}\nBuilding it now from {settings.seeds_dir} (this takes a minute) …",
                file=sys.stderr,
                flush=True,
            )
        engine = Engine.open(settings, embedder, auto_build=True, progress=progress)
    # numpy's and FAISS's BLAS on one thread while serving (set once both are loaded): a question's products are
    # small (its vector against a few thousand precedents or keys), and OpenBLAS's other threads spin after each one
    # on the cores the embedder's next run needs. Measured (issue 45, 2 shared cores): 38 -> 18 ms of CPU and 80 -> 35 ms per question alone, the
    # precedents' vote 4-15 -> 0.1 ms. ONNX Runtime keeps its own threads; the fitting commands are not affected.
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, user_api="blas")
    if progress:
        print(f"Index ready: {len(engine.sections)} sections.", file=sys.stderr, flush=True)
    return engine


def build_app(
    settings: Settings,
    engine: ServingEngine | None = None,
    web: WebSettings | None = None,
    *,
    progress: bool = True,
    store: Any = None,
    ops: Any = None,
    contact: Contact | None = None,
    ui: bool = True,
    admin: bool = True,
) -> FastAPI:
    """UI + widget + source view + JSON API as one FastAPI app, not started (``ui=False, admin=False``: the
    APIs and ``/source`` only, without importing Gradio: what a first answer needs; ``/admin`` imports it, for
    the chat UI's reading of Accept-Language).

    ``store`` (a :class:`bot.store.database.Store`) records questions and votes and feeds ``/admin``; without
    one (tests, benches), events are kept in memory (``app.state.recorder``, a
    :class:`bot.store.feedback.MemoryRecorder`). ``ops`` is the :class:`bot.store.database.StoreSettings` (admin
    token, index polling). ``contact`` is where "talk to a person" leads.
    """
    from bot.store.database import StoreSettings

    web = web or WebSettings()
    ops = ops or (store.settings if store is not None else StoreSettings())
    contact = contact or Contact()
    engine = engine if engine is not None else open_engine(settings, progress=progress)
    # ---- store, live index (issue 12): one recorder for every edge; the engine follows index/CURRENT
    from bot.engine.live import watch_index

    recorder = store if store is not None else feedback.MemoryRecorder()
    engine = watch_index(engine, ops.index_poll_seconds, seeds=settings.watch_seeds)
    app = FastAPI(title="GPU troubleshooting assistant", docs_url=None, redoc_url=None, openapi_url="/api/openapi.json")
    app.state.recorder = recorder  # what records this app's events (a test reads a MemoryRecorder's from here)
    # One door for every route, no uploads, JSON checks; /admin* also opens to the operator's Bearer token.
    # One throttle of wrong credentials per client: the door's (API token, ?token=, Bearer) and /admin's sign-in.
    throttle = LoginThrottle()
    admin_token = getattr(ops, "admin_token", "") or ""
    first_paints: dict = {}  # the chat pages' first screens (bot.web.ui.first_paint), once their Blocks are made
    if ui:  # innermost, behind the door and the headers: the chat's page shells and Gradio's hashed assets, sooner
        from bot.web.ui.shell import PageShell

        app.add_middleware(PageShell, root_path=web.root_path, paints=first_paints)
    app.add_middleware(SecurityMiddleware, web=web, admin_token=admin_token, throttle=throttle)
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
    app.add_middleware(FrameRefused, frame_ancestors=web.frame_ancestors)  # a readable page, not a blank frame

    @app.exception_handler(NotSpooled)  # disk full: nothing acknowledged, the client retries
    async def not_spooled(_request: Request, exc: NotSpooled) -> JSONResponse:
        return JSONResponse({"ok": False, "error": str(exc)}, status_code=503, headers={"Retry-After": "30"})

    # The one credential check of /api/* and /v1/* behind the door (a second lock); /admin has its own realm.
    authorize = Door(web).allows("api")
    links = LinkSigner.from_web(web)  # signs the /source links of API replies (None: nothing to sign with)
    seal = state_seal(web)  # signs the conversation state both APIs return (bot.answer.state), with the same secret

    @app.post("/api/ask", dependencies=[Depends(authorize)])
    async def api_ask(request: Request, data: dict = Depends(json_object)) -> JSONResponse:
        body = AskRequest.parse(data, max_input_chars=settings.max_input_chars)
        base = request_base(request, web)
        session = data.get("session") if isinstance(data.get("session"), str) else ""
        # The browser that opens a cited /source link from here has no cookie or token: the link carries its own.
        sign = links.for_base(base) if links else None
        try:
            done = await run_in_threadpool(
                api_answer,
                engine,
                body.question,
                body.prior(settings.max_input_chars),
                body.state,
                seal=seal,
                recorder=recorder,
                origin="api",
                base_url=base,
                contact=contact,
                sign=sign,
                session=session,
            )
        except StateRefused as refused:
            return JSONResponse({"detail": str(refused), "field": "state"}, status_code=400)
        # answer_id: what a vote on this answer refers to; state: what the next request sends back
        return JSONResponse(done.turned.to_json(), headers=done.headers())

    @app.post("/api/feedback", dependencies=[Depends(authorize)])
    async def api_feedback(data: dict = Depends(json_object)) -> JSONResponse:
        body = FeedbackRequest.parse(data, max_input_chars=settings.max_input_chars)
        recorder.record(
            Event(
                "vote",
                body.question,
                body.lang,
                tier="answer" if body.answered else "none",
                cited=tuple(body.cited),
                vote=body.vote,
                reason=body.reason,
                answer_id=body.answer_id,
                comment=body.comment,
                origin="api",
            ),
            session=body.session,
        )
        return JSONResponse({"ok": True})

    # ---- OpenAI-compatible API and /admin (issue 12); `authorize` is the one check for /api/* and /v1/*
    from bot.web.openai_api import openai_router

    app.include_router(openai_router(engine, recorder, web, authorize, contact=contact, seal=seal))
    if admin:
        from bot.web.admin import mount_admin

        mount_admin(app, store, engine, ops, throttle=throttle)

    @app.get("/source", response_class=HTMLResponse)
    def source(
        key: str = "", terms: str = "", lang: str = "zh", whole: str = "", exp: str = "", sig: str = ""
    ) -> HTMLResponse:
        status, page = render_source(engine, settings, key[:500], terms[:1_000], lang, whole == "1")
        if re.fullmatch(r"\d{1,12}", exp) and re.fullmatch(r"[\w-]{1,64}", sig):
            # Opened by a signed link (checked at the door): the page's "whole file" toggle keeps the signature.
            page = page.replace('href="?', f'href="?exp={exp}&amp;sig={sig}&amp;', 1)
        policy = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
        return HTMLResponse(page, status_code=status, headers={"Content-Security-Policy": policy})

    @app.get("/healthz")
    def healthz() -> dict:
        from bot.engine.live import generation_of, watch_health

        # The generation served: a deployer (or a test) sees a new document's index go live. "ok" is "answers"
        # (a load balancer keeps the replica); "watching": false (the seeds watcher is not running) and "stale":
        # true (seeds/ changed after the generation served was last found to match it) are what a monitor alerts on.
        return {
            "ok": True,
            "sections": len(engine.sections),
            "generation": generation_of(engine),
            **watch_health(engine),
        }

    if not ui:
        return app  # what a first answer needs; no Gradio import
    import gradio as gr

    from bot.web.ui import CSS, THEME, WIDGET_CSS, make_ui, welcome_examples

    @app.get("/gradio.js", include_in_schema=False)
    def web_component_script() -> FileResponse:
        """Gradio's <gradio-app> loader, served here so a portal needs no CDN (it imports /assets/* of this app)."""
        return FileResponse(
            Path(gr.__file__).parent / "templates" / "frontend" / "gradio.js", media_type="text/javascript"
        )

    @app.get("/widget", include_in_schema=False)
    def widget_slash() -> RedirectResponse:
        return RedirectResponse(url=f"{web.root_path}/widget/", status_code=307)

    welcome = welcome_examples(engine, settings)  # once for both: it may parse the documents (ui-first start)
    widget = make_ui(engine, settings, web, compact=True, recorder=recorder, contact=contact, welcome=welcome)
    full = make_ui(engine, settings, web, compact=False, recorder=recorder, contact=contact, welcome=welcome)
    for blocks in (widget, full):
        blocks.queue(default_concurrency_limit=4, max_size=64)
    first_paints.update({"/widget/": widget.first_paint, "/": full.first_paint})
    app = gr.mount_gradio_app(
        app,
        widget,
        path="/widget",
        css=WIDGET_CSS,
        footer_links=[],
        root_path=f"{web.root_path}/widget" if web.root_path else None,
        theme=THEME,
        show_error=False,
    )
    app = gr.mount_gradio_app(
        app, full, path="/", css=CSS, footer_links=[], root_path=web.root_path or None, theme=THEME, show_error=False
    )
    return app


def deferred_app(config: AppConfig, store: Any, on_fatal: Any = None) -> Any:
    """The ASGI app ``python app.py`` serves: listening at once, the index and the UI loaded behind it.

    The server listens at once and loads the index, then builds the UI (``BOT_START_FIRST=api``, the default)
    or the other way round (``ui``), in a worker thread (:mod:`bot.web.deferred`); the API answers 503
    "loading" until the index is in, UI pages 503 "starting" until the UI is. What serves meanwhile is the
    light app: the APIs and ``/source``, without Gradio or ``/admin`` (which imports Gradio: 3 s before the
    server listened). One index watcher for both apps (each would otherwise load every new generation again).
    """
    from bot.engine.live import watch_index
    from bot.web.deferred import DeferredApp, EngineWhenReady
    from bot.web.lean_gradio import lean_gradio_import

    lean_gradio_import()  # the UI's Gradio import in half the CPU: no IDE stubs, doc templates or IPython
    settings, web = config.engine, config.web
    engine = EngineWhenReady(settings)
    parts = dict(store=store, ops=config.store, contact=config.contact)
    light = build_app(settings, engine, web, ui=False, admin=False, **parts)
    return SecurityHeaders(
        DeferredApp(
            light,
            lambda: build_app(settings, engine, web, **parts),
            engine=engine,
            open_engine=lambda: watch_index(
                open_engine(settings), config.store.index_poll_seconds, seeds=settings.watch_seeds
            ),
            on_fatal=on_fatal,
            first=web.start_first,
        ),
        frame_ancestors=web.frame_ancestors,
    )


# ---------------------------------------------------------------- command line


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description="GPU troubleshooting assistant: chat UI, widget and JSON API on one port")
    for flag, field in (
        ("--host", "host"),
        ("--port", "port"),
        ("--root-path", "root_path"),
        ("--public-url", "public_url"),
        ("--frame-ancestors", "frame_ancestors"),
        ("--cors-origins", "cors_origins"),
        ("--trusted-header", "trusted_header"),
    ):
        p.add_argument(flag, type=int if field == "port" else None, help=WebSettings.help(field))
    for flag, field in (("--index", "index_dir"), ("--seeds", "seeds_dir")):
        p.add_argument(flag, type=Path, help=Settings.help(field))
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        # Every setting, once, from the environment and the flags; a bad value stops here with the variable,
        # the value and what is allowed (a bad BOT_CONTACT_URL too: it would inject a link into every reply).
        config = AppConfig.from_env(  # the process environment, read in bot.settings
            engine=dict(index_dir=args.index, seeds_dir=args.seeds),
            web=dict(
                host=args.host,
                port=args.port,
                root_path=args.root_path,
                public_url=args.public_url,
                frame_ancestors=args.frame_ancestors,
                cors_origins=args.cors_origins,
                trusted_header=args.trusted_header,
            ),
        )
        web = config.web
        from bot.store.database import open_store

        store = open_store(config.store)  # before serving: a bad database fails fast
        print(f"Store: {store.describe()}", file=sys.stderr, flush=True)
    except Exception as exc:  # one line with the fix, not a traceback
        from bot.store.database import StoreError

        if isinstance(exc, (ValueError, FileNotFoundError, StoreError)):
            print(f"error: {exc}", file=sys.stderr)
            return 2
        raise
    import uvicorn

    fatal: list[BaseException] = []

    def stop(exc: BaseException) -> None:  # the index cannot load: as before the server listened, exit 2
        from bot.kb.embed import EmbedderUnavailable
        from bot.kb.index import IndexProblem

        fatal.append(exc)
        known = isinstance(exc, (IndexProblem, EmbedderUnavailable, ValueError, FileNotFoundError))
        print(
            f"error: {exc}" if known else f"error: the index failed to load ({type(exc).__name__}: {exc})",
            file=sys.stderr,
            flush=True,
        )
        server.should_exit = True

    app = deferred_app(config, store, on_fatal=stop)
    shown_host = "localhost" if web.host in ("0.0.0.0", "127.0.0.1", "::") else web.host
    print(
        f"Serving on http://{shown_host}:{web.port}{web.root_path}/  (widget: {web.root_path}/widget/, "
        f"API: POST {web.root_path}/api/ask)",
        file=sys.stderr,
        flush=True,
    )
    # Request timeout, half-open cap and keep-alive from web (bot.web.http.server_config); X-Forwarded-* are
    # handled in bot.web.security, from web.trusted_proxies only (BOT_TRUSTED_PROXIES).
    server = uvicorn.Server(server_config(app, web, lifespan="on", log_level="warning"))
    server.run()
    store.close()  # write what is still queued before the process ends
    return 2 if fatal else 0


if __name__ == "__main__":
    sys.exit(main())
