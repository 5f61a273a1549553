"""The chat in Debian's headless Chromium: the portal widget, inert HTML, examples, options, votes.

``python app.py`` runs as a subprocess over the session's built index; the
portal page (portal/example.html, with the app's address put in) is served
from another origin, as a real portal would be. Screenshots go to
``$BOT_SCREENSHOT_DIR`` when it is set (e.g. screenshots/), else to a temp folder.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import shutil
import threading
import time
from pathlib import Path

import pytest
from browser_helpers import (
    CHROMIUM,
    REPO,
    chromium_missing_reason,
    free_port,
    launch,
    start_app,
    stop,
    wait_ready,
)

from bot.ui import SAMPLE_LOG

_missing = chromium_missing_reason()
pytestmark = [
    pytest.mark.browser,
    pytest.mark.model,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=_missing or f"{CHROMIUM} is absent"),
]

TRACE = "多卡训练的时候报下面的错，怎么解决？\n" + SAMPLE_LOG
XSS = '<img src=x onerror="window.__pwned=1;alert(1)"> <script>window.__pwned=2</script> 显存不足'


# ---------------------------------------------------------------- fixtures


class _Portal(http.server.ThreadingHTTPServer):
    daemon_threads = True


WEB_COMPONENT_PAGE = """<!doctype html><html><head><meta charset="utf-8">
<script type="module" src="APP/gradio.js"></script></head>
<body style="margin:0;display:flex;height:100vh"><main style="flex:1;padding:1rem">Portal</main>
<aside style="width:420px;height:100vh;border-left:1px solid #ccc;overflow:auto">
<gradio-app src="APP/widget/" container="false" info="false"></gradio-app></aside></body></html>"""


def serve_portal(port: int, app_url: str) -> _Portal:
    """Serve portal/example.html (iframe) at / and a <gradio-app> page at /web-component, pointed at the app."""
    page = (REPO / "portal" / "example.html").read_text(encoding="utf-8").replace("http://localhost:7860", app_url)
    component = WEB_COMPONENT_PAGE.replace("APP", app_url)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = (component if self.path.startswith("/web-component") else page).encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = _Portal(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    folder = os.environ.get("BOT_SCREENSHOT_DIR")
    path = Path(folder) if folder else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def site(seeds_engine, tmp_path_factory):
    """The app (subprocess) plus two portal origins: one allowed to frame it, one not."""
    root = tmp_path_factory.mktemp("browser")
    index = root / "index"
    shutil.copytree(seeds_engine.settings.index_dir, index)
    portal_port, other_port, app_port = free_port(), free_port(), free_port()
    log = root / "feedback.jsonl"
    process = start_app(app_port, {
        "BOT_INDEX_DIR": str(index), "BOT_SEEDS_DIR": str(seeds_engine.settings.seeds_dir),
        "BOT_FEEDBACK_LOG": str(log), "BOT_FRAME_ANCESTORS": f"'self' http://127.0.0.1:{portal_port}",
        "BOT_CORS_ORIGINS": f"http://127.0.0.1:{portal_port}",
    })
    app_url = f"http://127.0.0.1:{app_port}"
    portals = []
    try:
        wait_ready(app_url + "/healthz", process, timeout=300)
        portals = [serve_portal(portal_port, app_url), serve_portal(other_port, app_url)]
        yield {"app": app_url, "portal": f"http://127.0.0.1:{portal_port}/",
               "other_portal": f"http://127.0.0.1:{other_port}/", "log": log}
    finally:
        for portal in portals:
            portal.shutdown()
        stop(process)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = launch(playwright)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="zh-CN")
    page = context.new_page()
    page.dialogs = []  # type: ignore[attr-defined]
    page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
    yield page
    context.close()


# ---------------------------------------------------------------- helpers


def open_chat(page, url: str):
    page.goto(url, wait_until="load")
    page.wait_for_selector("#question textarea", timeout=60_000)
    return page


def bot_count(target) -> int:
    return target.evaluate("document.querySelectorAll('[data-testid=bot]').length")


def ask(target, text: str, expect: str, timeout: float = 60_000) -> str:
    """Type into the chat (page or frame), send, and return the new answer once it contains ``expect``."""
    before = bot_count(target)
    target.fill("#question textarea", text)
    target.press("#question textarea", "Enter")
    target.wait_for_function(
        "([n, expect]) => { const m = document.querySelectorAll('[data-testid=bot]');"
        " return m.length > n && m[m.length - 1].innerText.includes(expect); }",
        arg=[before, expect], timeout=timeout,
    )
    return target.evaluate("() => { const m = document.querySelectorAll('[data-testid=bot]');"
                           " return m[m.length - 1].innerText; }")


def snap(page, path: Path, full_page: bool = False) -> None:
    time.sleep(0.8)  # let the chat finish scrolling to the newest answer
    page.screenshot(path=str(path), full_page=full_page)


def last_bot(target):
    return target.locator("[data-testid=bot]").last


# ---------------------------------------------------------------- tests


def test_widget_in_portal_answers_chinese_english_and_a_pasted_trace(site, page, shots):
    page.goto(site["portal"], wait_until="load")
    frame = page.wait_for_selector("#assistant").content_frame()
    frame.wait_for_selector("#question textarea", timeout=60_000)
    assert frame.url.startswith(site["app"] + "/widget")

    zh = ask(frame, "训练时报错显存不足怎么办？", "002_5c885a5c94776257.txt")
    assert "问题：训练时报错提示显存不足，如何解决？" in zh and "来源" in zh and "查看原文" in zh
    snap(page, shots / "portal_widget.png")

    en = ask(frame, "Loss becomes NaN after a few steps", "Source")
    assert "问题：Loss为NaN，如何处理？" in en and "open source text" in en and "来源" not in en

    trace = ask(frame, TRACE, "000_786bff9181b08d52.txt")
    assert trace.index("EnforceNotMet: Failed to find dynamic library: libnccl.so") < trace.index("000_786bff9181b08d52.txt")
    assert trace.lstrip().startswith("检测到的错误") or trace.lstrip().startswith("Detected")
    snap(page, shots / "portal_widget_trace.png")

    # the citation link opens the source view in a new tab, lines highlighted
    link = last_bot(frame).locator("a", has_text=re.compile("查看原文|open source text")).first
    with page.context.expect_page() as popup_info:
        link.click()
    popup = popup_info.value
    popup.wait_for_load_state("load")
    assert popup.url.startswith(site["app"] + "/source?")
    assert popup.locator(".line.in").count() >= 3
    assert popup.locator("mark").count() >= 1
    snap(popup, shots / "source_view.png")


def test_widget_as_gradio_web_component(site, page, shots):
    page.goto(site["portal"] + "web-component", wait_until="load")
    page.wait_for_selector("gradio-app #question textarea", timeout=60_000)
    answer = ask(page, "Loss becomes NaN after a few steps", "002_5c885a5c94776257.txt")
    assert "Source" in answer
    href = last_bot(page).locator("a", has_text="open source text").first.get_attribute("href")
    assert href.startswith(site["app"] + "/source?")  # absolute: the host page is another site
    snap(page, shots / "web_component.png")


def test_web_component_gets_no_cors_grant_on_an_unlisted_origin(site, page):
    page.goto(site["other_portal"] + "web-component", wait_until="load")
    time.sleep(5)
    assert page.query_selector("gradio-app #question textarea") is None


def test_widget_is_refused_in_a_portal_that_is_not_allowed(site, page):
    page.goto(site["other_portal"], wait_until="load")
    handle = page.wait_for_selector("#assistant")
    time.sleep(3)
    frame = handle.content_frame()
    assert frame is None or frame.query_selector("#question textarea") is None


def test_typed_html_does_not_run(site, page, shots):
    open_chat(page, site["app"] + "/")
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    answer = ask(page, XSS, "002_5c885a5c94776257.txt")
    assert answer
    user = page.locator("[data-testid=user]").last.inner_text()
    assert '<img src=x onerror="window.__pwned=1;alert(1)">' in user  # shown as text, not as an element
    time.sleep(1)
    assert page.evaluate("window.__pwned") is None
    assert page.dialogs == []  # type: ignore[attr-defined]
    assert page.locator("#chat img").count() == 0
    assert not [u for u in requests if u.endswith("/x") or "/x?" in u]
    snap(page, shots / "xss_inert.png")


def test_document_html_and_images_are_inert(site, page):
    open_chat(page, site["app"] + "/")
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    answer = ask(page, "How do I check that TensorFlow can see my GPU with nvidia-smi?", "004_c9562597aefa3d00.txt")
    assert answer
    page.evaluate("document.querySelectorAll('#chat details').forEach(d => d.open = true)")
    time.sleep(0.5)
    assert page.locator("#chat img").count() == 0  # the seed's ![GPU](/img/GPU-01.png) is not loaded
    assert not [u for u in requests if "/img/GPU" in u]
    hrefs = page.eval_on_selector_all("#chat a", "as => as.map(a => a.getAttribute('href') || '')")
    assert hrefs and all(h.startswith(("http://", "https://")) for h in hrefs)


def test_chinese_and_english_answers_full_app(site, page, shots):
    open_chat(page, site["app"] + "/")
    snap(page, shots / "empty_chat.png")
    zh = ask(page, "多卡训练报错 libnccl.so 找不到", "000_786bff9181b08d52.txt")
    assert "解决方法" in zh and 'find / -name "libnccl.so*"' in zh
    snap(page, shots / "answer_zh.png", full_page=True)
    page.click("#new-chat")
    page.wait_for_function("document.querySelectorAll('[data-testid=bot]').length === 0")
    en = ask(page, "How do I stop TensorFlow from grabbing all GPU memory?", "004_c9562597aefa3d00.txt")
    assert "Source" in en and "管理GPU RAM" in en
    snap(page, shots / "answer_en.png", full_page=True)


def test_examples_options_votes_and_new_chat(site, page, shots):
    open_chat(page, site["app"] + "/")
    page.get_by_role("button", name=re.compile("Loss becomes NaN")).click()
    page.wait_for_function("() => { const m = document.querySelectorAll('[data-testid=bot]');"
                           " return m.length === 1 && m[0].innerText.includes('Loss为NaN'); }", timeout=60_000)

    # thumbs down on the answer is appended to the feedback log
    page.get_by_role("button", name=re.compile("^(Dislike|踩)$")).last.click()  # Gradio translates the label
    deadline = time.monotonic() + 20
    votes = []
    while time.monotonic() < deadline and not votes:
        if site["log"].exists():
            votes = [json.loads(x) for x in site["log"].read_text(encoding="utf-8").splitlines()]
            votes = [v for v in votes if v["event"] == "vote" and v["question"] == "Loss becomes NaN after a few steps"]
        time.sleep(0.3)
    assert votes and votes[-1]["vote"] == "down" and votes[-1]["language"] == "en"
    assert votes[-1]["cited"] and votes[-1]["cited"][0].startswith("002_5c885a5c94776257.txt#")

    # a vague question gets a clarifying question with clickable options
    ask(page, "nccl", "Which one is closest?")
    options = page.locator("#chat button.option")
    assert options.count() >= 2
    label = options.nth(1).inner_text()
    snap(page, shots / "clarify.png")
    options.nth(1).click()
    page.wait_for_function("() => { const m = document.querySelectorAll('[data-testid=bot]');"
                           " return m.length === 3 && m[2].innerText.includes('You chose'); }", timeout=60_000)
    assert label.split()[0] in page.locator("[data-testid=user]").last.inner_text()

    # "that didn't help" moves on instead of repeating
    shown = last_bot(page).inner_text()
    again = ask(page, "that didn't help", "Sorry that didn't help")
    assert again != shown

    page.click("#new-chat")
    page.wait_for_function("document.querySelectorAll('[data-testid=bot], [data-testid=user]').length === 0")
    assert page.get_by_role("button", name=re.compile("Loss becomes NaN")).is_visible()


def test_no_match_offers_suggestions(site, page, shots):
    open_chat(page, site["app"] + "/")
    answer = ask(page, "how do I bake sourdough bread at home", "Sorry, I found nothing")
    assert "nvidia-smi" in answer and "cuDNN" in answer
    assert page.locator("#chat button.option").count() == 3
    snap(page, shots / "no_match.png")


def test_empty_and_over_long_input(site, page):
    open_chat(page, site["app"] + "/")
    page.fill("#question textarea", "   ")
    page.press("#question textarea", "Enter")
    page.wait_for_function("() => { const m = document.querySelectorAll('[data-testid=bot]');"
                           " return m.length === 1 && m[0].innerText.includes('请输入你的问题'); }", timeout=30_000)
    long_text = "显存不足 " + "x" * 120_000
    page.evaluate("""(text) => { const box = document.querySelector('#question textarea');
        box.value = text; box.dispatchEvent(new Event('input', {bubbles: true})); }""", long_text)
    page.press("#question textarea", "Enter")
    page.wait_for_function("() => { const m = document.querySelectorAll('[data-testid=bot]');"
                           " return m.length === 2 && m[1].innerText.includes('输入过长'); }", timeout=60_000)
    notice = last_bot(page).inner_text()
    assert "120,005" in notice and "100,000" in notice
    user = page.locator("[data-testid=user]").last.inner_text()
    assert len(user) < 10_000  # the bubble shows a short echo, not 120k characters
