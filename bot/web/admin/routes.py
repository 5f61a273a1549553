"""``/admin``: the page, sign-in, JSON and CSV, in the operator's language (``?lang=`` or Accept-Language).

``/admin`` has its own operator credential, ``BOT_ADMIN_TOKEN`` (not the API token, and as
strong: 8+ printable characters): a bearer header for machines (let in by the one door,
:mod:`bot.web.security`, and checked again here), or a sign-in form that sets an HttpOnly,
SameSite=Strict cookie holding an HMAC of the token (never the token). Without
``BOT_ADMIN_TOKEN`` the page refuses everyone. Wrong credentials are throttled per client
(:class:`LoginThrottle`): after a few, 429 with ``Retry-After``, for twice as long each time.
"""

from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from html import escape
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from fastapi import Depends, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from bot.web.admin.charts import PHONE_WIDTH, TEMPLATES, chart, trimmed
from bot.web.admin.clusters import Embeddings
from bot.web.admin.report import EMBED_PER_VIEW, Report, build_report
from bot.web.admin.report_csv import report_csv
from bot.web.admin.shared_reports import SharedReports
from bot.web.admin.texts import group_label, page_language, words
from bot.web.credentials import COOKIE_MAX_AGE, LoginThrottle, cookie_value, token_matches
from bot.web.door import Door, Refused

if TYPE_CHECKING:
    from bot.engine.answerer import ServingEngine
    from bot.engine.subjects import Lexicon

COOKIE = "bot_admin"
CSV_TABLES = ("groups", "gaps", "sections", "days", "events")


def section_titles(engine: ServingEngine | None) -> Callable[[str], str]:
    """A section key's breadcrumb from the engine's index (the key itself when the index does not know it)."""

    def title(key: str) -> str:
        try:
            section = engine.section(key) if engine is not None else None
        except Exception:
            section = None
        return section.breadcrumb if section is not None else key

    return title


def lexicon_of(engine: ServingEngine | None) -> Lexicon | None:
    """The engine's lexicon (its domain's subjects, with their names in each language); None: the shipped one."""
    return getattr(engine, "lexicon", None) if engine is not None else None


def selftest_of(engine: ServingEngine | None) -> dict[str, Any] | None:
    """The knowledge bases' self-test for the page (bot.kb.selftest): their rows, or what is wrong with the file
    and the fix; None when the engine has none to say (still loading, or a stand-in)."""
    try:
        test, problem = getattr(engine, "selftest", (None, ""))
    except Exception:  # an engine still loading, or one without an index
        return None
    if test is None:
        return {"rows": [], "problem": problem} if problem else None
    return {
        "rows": [(k.kb, k.n, f"{k.product:.3f}", f"{k.dense:.3f}", f"{k.bm25:.3f}") for k in test.kbs],
        "problem": "",
    }


def admin_key(token: str) -> str:
    """The admin cookie is signed apart from the door's (even if an operator reused the API token)."""
    return "bot-admin:" + token


def group_labels(report: Report, language: str, lexicon: Lexicon | None = None) -> list[str]:
    """Each group's label in the page's language (subjects by their names in it, from the engine's domain)."""
    return [group_label(g.label, g.subjects, g.section, report.text_kept, language, lexicon) for g in report.groups]


def charts_of(report: Report, t: dict[str, str], labels: list[str] | None = None) -> dict[str, Any]:
    """The page's two charts and one sparkline per group, all starting at the first day with data."""
    start = trimmed(report.days, report.series)
    names = {
        k: t[k]
        for k in (
            "questions",
            "answered",
            "tentative",
            "unanswered",
            "up",
            "down",
            "not_helpful",
            "gaps",
            "per_day",
            "per_week",
            "per_month",
            "no_data",
        )
    }
    questions, feedback = ["questions", "answered", "tentative", "unanswered"], ["up", "down", "not_helpful"]
    return {
        "chart_questions": chart(report.days, report.series, questions, t["chart_questions"], words=names, start=start),
        "chart_feedback": chart(
            report.days, report.series, feedback, t["chart_feedback"], style="stacked", words=names, start=start
        ),
        # Drawn narrow for phones (the page shows one pair or the other): text stays readable, ticks are spaced
        # for the width they are shown at, instead of the wide chart scaled down.
        "phone_questions": chart(
            report.days, report.series, questions, t["chart_questions"], words=names, start=start, width=PHONE_WIDTH
        ),
        "phone_feedback": chart(
            report.days,
            report.series,
            feedback,
            t["chart_feedback"],
            style="stacked",
            words=names,
            start=start,
            width=PHONE_WIDTH,
        ),
        # One day of data has no course over time to draw: no sparkline rather than one solid block.
        "sparks": [
            chart(report.days, {"gaps": list(g.daily)}, ["gaps"], label, small=True, words=names, start=start)
            if len(report.days) - start > 1
            else ""
            for g, label in zip(report.groups, labels or [g.label for g in report.groups])
        ],
    }


def mount_admin(app: Any, store: Any, engine: ServingEngine, ops: Any, throttle: LoginThrottle | None = None) -> None:
    """Add ``/admin`` (page, sign-in, JSON, CSV) to a FastAPI app; ValueError for a weak ``BOT_ADMIN_TOKEN``.

    The report routes pass the app's one credential check, :class:`bot.web.door.Door` (realm "operator");
    a refusal is rendered here: the sign-in page, or JSON for ``/admin/data.json``."""
    import jinja2

    from bot.store.database import StoreSettings, weak_admin_token
    from bot.web.ui import ui_language  # the chat UI's reading of Accept-Language (imported here: ui loads Gradio)

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True)
    token = getattr(ops, "admin_token", "") or ""
    if weak_admin_token(token):  # StoreSettings.from_env refuses it too; this covers settings built in code
        raise ValueError(
            f"BOT_ADMIN_TOKEN=<{len(token)} characters, not shown> is too weak for /admin; "
            f"it must be {StoreSettings.allowed('admin_token')}"
        )
    throttle = throttle or LoginThrottle()
    door = Door(web=None, admin_token=token, throttle=throttle, operator_cookie=COOKIE, operator_key=admin_key)
    operator = [Depends(door.allows("operator"))]
    embeddings = Embeddings(engine)
    titles = section_titles(engine)
    policy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; base-uri 'none'"
    headers = {"Content-Security-Policy": policy, "Cache-Control": "no-store", "Vary": "Accept-Language"}

    def client(request: Request) -> str:
        return request.client.host if request.client else "?"  # the real address: bot.web.security resolves proxies

    def language(request: Request) -> str:
        return page_language(request.query_params.get("lang"), request.headers.get("accept-language"), ui_language)

    def throttled(request: Request) -> Response | None:
        """429 while this client is locked out after wrong credentials (bearer or sign-in form)."""
        wait = throttle.retry_after(client(request))
        return locked_page(wait) if wait else None

    def locked_page(wait: int) -> HTMLResponse:
        return HTMLResponse(
            f"<p>Too many wrong operator credentials from this address: try again in {wait} s.</p>",
            status_code=429,
            headers={**headers, "Retry-After": str(wait)},
        )

    async def refusal(request: Request, refused: Refused) -> Response:
        """What a refused ``/admin`` request sees (from :meth:`bot.web.door.Door.allows`)."""
        if refused.status == 429:
            return locked_page(refused.retry_after)
        if request.url.path.endswith("/admin/data.json"):
            return JSONResponse(
                {"detail": refused.detail}, status_code=refused.status, headers={"WWW-Authenticate": "Bearer"}
            )
        return login_page(request, 401)

    app.add_exception_handler(Refused, refusal)

    def login_page(request: Request, status: int, wrong: bool = False) -> HTMLResponse:
        lang = language(request)
        t = words(lang)
        error = t["wrong"] if (wrong and token) else ""
        if not token:
            status, error = 503, t["off"]
        page = env.get_template("admin_login.html").render(
            t=t,
            lang=lang,
            error=error,
            enabled=bool(token),
            action=f"{request.scope.get('root_path', '')}/admin/login?lang={lang}",
        )
        return HTMLResponse(page, status_code=status, headers={**headers, "WWW-Authenticate": "Bearer"})

    def days_of(request: Request) -> int:
        raw = request.query_params.get("days", "30")
        return max(1, min(365, int(raw))) if raw.isdigit() else 30

    def unavailable() -> Response | None:
        if store is None:
            return HTMLResponse(
                "<p>No store configured: /admin reads the store that <code>python app.py</code> opens "
                "(BOT_DATABASE_URL or BOT_DATA_DIR).</p>",
                status_code=503,
                headers=headers,
            )
        return None

    def build(days: int) -> tuple[Report, list[dict]]:
        since = datetime.now(UTC).replace(tzinfo=None) - timedelta(days=days)
        rows = store.rows(since)
        report = build_report(
            rows, embeddings, titles, days=days, max_new_embeddings=EMBED_PER_VIEW, lexicon=lexicon_of(engine)
        )
        return report, rows

    # One build per window shared by concurrent views (memory does not grow with them); reused until a row changes.
    load = SharedReports(build, getattr(store, "version", None)).get

    def store_error(exc: Exception) -> HTMLResponse:
        first = str(getattr(exc, "orig", exc)).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
        return HTMLResponse(
            f"<p>The store {escape(store.describe())} cannot be read right now ({escape(first)}). "
            "Answers go on; reload this page when the database is back.</p>",
            status_code=503,
            headers=headers,
        )

    # Concurrent views of one shared report render its page once: eight threads rendering the same page at once
    # each grew their own allocator arena (bench/admin_memory.py). Keyed by everything the page shows; the
    # report itself is held with its page, so a later report can never be served another's page.
    pages: OrderedDict[tuple, tuple[Report, str]] = OrderedDict()
    render_lock = threading.Lock()

    def rendered(report: Report, days: int, lang: str, root: str) -> str:
        selftest = selftest_of(engine)  # a live reload builds a new one: part of what the page shows
        key = (id(report), days, lang, root, store.describe(), store.healthy, repr(selftest))
        with render_lock:
            held = pages.get(key)
            if held is not None and held[0] is report:
                return held[1]
            t = words(lang)
            labels = group_labels(report, lang, lexicon_of(engine))
            page = env.get_template("admin.html").render(
                report=report,
                days=days,
                where=store.describe(),
                healthy=store.healthy,
                selftest=selftest,
                t=t,
                lang=lang,
                labels=labels,
                other="en" if lang == "zh" else "zh",
                root=root,
                **charts_of(report, t, labels),
            )
            pages[key] = (report, page)
            while len(pages) > 4:
                pages.popitem(last=False)
            return page

    @app.get("/admin", include_in_schema=False, response_model=None, dependencies=operator)
    def admin_page(request: Request) -> Response:
        if (no := unavailable()) is not None:
            return no
        days = days_of(request)
        try:
            report, _ = load(days)
        except Exception as exc:  # the database is away: say so, do not 500
            return store_error(exc)
        page = rendered(report, days, language(request), request.scope.get("root_path", ""))
        return HTMLResponse(page, headers=headers)

    @app.post("/admin/login", include_in_schema=False, response_model=None)
    async def admin_login(request: Request) -> Response:
        if token and (locked := throttled(request)) is not None:
            return locked  # checked before the credential: a locked-out guesser learns nothing
        body = (await request.body())[:4096].decode("utf-8", errors="replace")
        given = (parse_qs(body).get("token") or [""])[0].strip()
        if not token_matches(given, token):
            if token:
                throttle.failed(client(request))
            return login_page(request, 401, wrong=True)
        throttle.succeeded(client(request))
        root = request.scope.get("root_path", "")
        response = RedirectResponse(f"{root}/admin?lang={language(request)}", status_code=303)
        response.set_cookie(
            COOKIE,
            cookie_value(admin_key(token), int(time.time())),
            httponly=True,
            samesite="strict",
            path=f"{root}/admin",
            secure=request.url.scheme == "https",
            max_age=COOKIE_MAX_AGE,
        )
        return response

    @app.post("/admin/logout", include_in_schema=False)
    def admin_logout(request: Request) -> RedirectResponse:
        root = request.scope.get("root_path", "")
        response = RedirectResponse(f"{root}/admin?lang={language(request)}", status_code=303)
        response.delete_cookie(COOKIE, path=f"{root}/admin")
        return response

    @app.get("/admin/data.json", include_in_schema=False, response_model=None, dependencies=operator)
    def admin_data(request: Request) -> Response:
        if (no := unavailable()) is not None:
            return no
        try:
            report, _ = load(days_of(request))
        except Exception as exc:
            return store_error(exc)
        return JSONResponse(report.to_json(), headers={"Cache-Control": "no-store"})

    @app.get("/admin/export.csv", include_in_schema=False, response_model=None, dependencies=operator)
    def admin_export(request: Request, table: str = "groups") -> Response:
        if (no := unavailable()) is not None:
            return no
        if table not in CSV_TABLES:
            return Response(f"table={table[:40]!r} is not a table: use one of {', '.join(CSV_TABLES)}", status_code=422)
        try:
            report, rows = load(days_of(request))
        except Exception as exc:
            return store_error(exc)
        name = re.sub(r"[^a-z]", "", table)
        return Response(
            "\ufeff" + report_csv(report, table, rows),
            media_type="text/csv; charset=utf-8",
            headers={
                "Content-Disposition": f'attachment; filename="coverage-{name}-{report.until}.csv"',
                "Cache-Control": "no-store",
            },
        )
