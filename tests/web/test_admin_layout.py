"""/admin as an operator sees it, in Debian's headless Chromium: one day and a year of traffic, Chinese
and English, desktop (1280x900) and phone (390x844). Nothing overlaps, nothing scrolls sideways, the
charts are bars with numbers for one day and monthly lines for a year.

Screenshots go to ``$BOT_SCREENSHOT_DIR`` or ``screenshots/``: look at them.
"""

from __future__ import annotations

import pytest
from fixtures.admin_rows import traffic
from fixtures.browser import browser, chromium_missing_reason, shots  # noqa: F401 (browser and shots are fixtures)
from fixtures.engines import repo_seeds_hash_settings
from fixtures.server import ThreadServer

from app import WebSettings, build_app
from bot.engine.retrieve import Engine
from bot.store.database import Store, StoreSettings

_missing = chromium_missing_reason()
pytestmark = [pytest.mark.browser, pytest.mark.skipif(_missing is not None, reason=_missing or "")]

ADMIN = "operator-secret"
SIZES = [(1280, 900), (390, 844)]

# Every box a reader tells apart: headings, links, totals, chart texts and legends, group labels, the
# questions with their context, table cells. A pair overlaps when their boxes share more than 1 px both
# ways and neither contains the other.
BOXES = """(selector) => {
  const picked = [...document.querySelectorAll(selector)];
  const visible = picked.filter(e => { const r = e.getBoundingClientRect(); const s = getComputedStyle(e);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none'; });
  return visible.map((e, i) => { const r = e.getBoundingClientRect();
    const nested = visible.map((o, j) => (o !== e && (o.contains(e) || e.contains(o))) ? j : -1).filter(j => j >= 0);
    return {i, name: (e.className.baseVal ?? e.className ?? '') + ' ' + e.tagName,
            text: (e.textContent || '').trim().slice(0, 30), left: r.left, right: r.right, top: r.top, bottom: r.bottom,
            nested}; });
}"""
SELECTOR = ("h1, h2, header .meta, nav a, header button, .totals > div, svg.chart text, .legend span, .group-label, "
            ".kinds span, li.example .context, li.example .question, li.example .what, td, th, svg.spark, p.meta")
WIDEST = """() => { const w = document.documentElement.clientWidth;
  return [...document.querySelectorAll('body *')].map(e => [e.getBoundingClientRect().right, e.tagName, e.className.baseVal ?? e.className])
    .filter(([right]) => right > w + 1).slice(0, 5); }"""


def overlaps(page, selector: str = SELECTOR) -> list[tuple[dict, dict]]:
    boxes = page.evaluate(BOXES, selector)
    found = []
    for n, a in enumerate(boxes):
        for b in boxes[n + 1:]:
            if b["i"] in a["nested"]:
                continue
            if min(a["right"], b["right"]) - max(a["left"], b["left"]) > 1 and \
                    min(a["bottom"], b["bottom"]) - max(a["top"], b["top"]) > 1:
                found.append((a, b))
    return found


def _site(root, days: int):
    settings = repo_seeds_hash_settings(root)
    engine = Engine.open(settings, auto_build=True)
    oom = next(s.key for s in engine.sections if "显存" in s.breadcrumb)
    nccl = next(s.key for s in engine.sections if "nccl" in s.breadcrumb.lower())
    store = Store.open(StoreSettings(data_dir=root / "data", admin_token=ADMIN))
    traffic(store, days, oom=oom, nccl=nccl)
    app = build_app(settings, engine=engine, web=WebSettings(), progress=False, store=store, ops=store.settings)
    return ThreadServer(app), store


@pytest.fixture(scope="module", params=[1, 365], ids=["1-day", "365-days"])
def admin_site(request, tmp_path_factory):
    server, store = _site(tmp_path_factory.mktemp(f"admin-{request.param}"), request.param)
    with server:
        yield server, request.param
    store.close()


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("width,height", SIZES)
def test_admin_reads_well_at_any_size_language_and_span(admin_site, browser, shots, lang, width, height):  # noqa: F811
    server, days = admin_site
    context = browser.new_context(viewport={"width": width, "height": height},
                                  locale="zh-CN" if lang == "zh" else "en-US",
                                  extra_http_headers={"Authorization": f"Bearer {ADMIN}",
                                                      "Accept-Language": "zh-CN,zh;q=0.9" if lang == "zh" else "en-US"})
    page = context.new_page()
    try:
        response = page.goto(f"{server.url}/admin?days={days}", wait_until="load")
        assert response.status == 200
        page.wait_for_selector("#groups")
        assert page.locator("html").get_attribute("lang") == ("zh-CN" if lang == "zh" else "en")
        assert page.locator("h1").inner_text() == ("知识库缺口" if lang == "zh" else "Coverage gaps")
        labels = page.locator(".group-label").all_inner_texts()
        assert "Jetson" in labels[:4] and "Ascend NPU" in labels and "PaddleOCR" in labels, labels
        # small talk, thanks and the chat front-end's title prompt are counted apart, not listed as gaps
        assert page.locator("#left-out").is_visible() and "谢谢" not in " ".join(page.locator(".question").all_inner_texts())
        follow = page.locator("li.example", has_text="那多机呢？")
        assert "多卡训练报错 libnccl.so" in follow.locator(".context").inner_text()
        questions = page.locator("svg.chart").first
        if days == 1:  # one day: labelled bars, no line
            assert questions.locator("rect.bar").count() == 4 and questions.locator("polyline").count() == 0
            assert questions.locator("text.value").count() == 4
        else:  # a year: one point a month
            points = questions.locator("polyline").first.get_attribute("points").split()
            assert 12 <= len(points) <= 13, points
        page.screenshot(path=str(shots / f"admin-{days}d-{lang}-{width}x{height}.png"), full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth") <= width, page.evaluate(WIDEST)
        assert page.evaluate(WIDEST) == []
        found = overlaps(page)
        assert not found, found[:3]
    finally:
        context.close()
