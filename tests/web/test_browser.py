"""The chat in Debian's headless Chromium at three sizes: desktop page, 400×640 portal widget, 390×844 phone.

``python app.py`` runs as a subprocess over the repository's seeds indexed with the
dependency-free ``hash`` embedder (quick; retrieval quality is not what these tests
check). The portal page (portal/example.html, with the app's address put in) is served
from another origin, as a real portal would be. Screenshots go to ``$BOT_SCREENSHOT_DIR``
when it is set, else to ``screenshots/`` in the repository: look at them.
"""

from __future__ import annotations

import http.server
import json
import re
import threading
import time
from pathlib import Path

import pytest

from bot.web.ui import SAMPLE_LOG
from fixtures import REPO
from fixtures.browser import CHROMIUM, chromium_missing_reason, shots  # noqa: F401 (fixtures)
from fixtures.server import free_port, start_app, stop, wait_ready

_missing = chromium_missing_reason()
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(_missing is not None, reason=_missing or ""),
]

CONTACT = "https://help.example.com/gpu-support"
TRACE = "多卡训练的时候报下面的错，怎么解决？\n" + SAMPLE_LOG
XSS = '<img src=x onerror="window.__pwned=1;alert(1)"> <script>window.__pwned=2</script> 显存不足'
SIZES = {"desktop": (1280, 900, "/"), "widget": (400, 640, "/widget/"), "phone": (390, 844, "/")}
LONG_SIGNATURE = (
    "EnforceNotMet: Failed_to_find_dynamic_library_libnccl.so_cannot_open_shared_object_file_"
    "No_such_file_or_directory_please_set_LD_LIBRARY_PATH_to_the_folder_that_holds_libnccl.so.2.4.8"
)


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
def hash_index(tmp_path_factory):
    """The repository's seeds (with metadata) indexed with the hash embedder: built in seconds."""
    from fixtures.engines import repo_seeds_hash_settings

    return repo_seeds_hash_settings(tmp_path_factory.mktemp("hash_seeds"))


@pytest.fixture(scope="module")
def site(hash_index, tmp_path_factory):
    """The app (subprocess) plus two portal origins: one allowed to frame it, one not."""
    root = tmp_path_factory.mktemp("browser")
    portal_port, other_port, app_port = free_port(), free_port(), free_port()
    data = root / "data"  # the store: SQLite in here
    process = start_app(
        app_port,
        {
            "BOT_INDEX_DIR": str(hash_index.index_dir),
            "BOT_SEEDS_DIR": str(hash_index.seeds_dir),
            "BOT_EMBEDDER": "hash",
            "BOT_DATA_DIR": str(data),
            "BOT_FRAME_ANCESTORS": f"'self' http://127.0.0.1:{portal_port}",
            "BOT_CORS_ORIGINS": f"http://127.0.0.1:{portal_port}",
            "BOT_CONTACT_URL": CONTACT,
            "BOT_CONTACT_LABEL": "GPU support channel",
        },
    )
    app_url = f"http://127.0.0.1:{app_port}"
    portals = []
    try:
        wait_ready(app_url + "/healthz", process, timeout=120)
        portals = [serve_portal(portal_port, app_url), serve_portal(other_port, app_url)]
        yield {
            "app": app_url,
            "portal": f"http://127.0.0.1:{portal_port}/",
            "other_portal": f"http://127.0.0.1:{other_port}/",
            "db": data / "bot.sqlite3",
        }
    finally:
        for portal in portals:
            portal.shutdown()
        stop(process)


def new_page(browser, width: int = 1280, height: int = 900):
    context = browser.new_context(viewport={"width": width, "height": height}, locale="zh-CN")
    page = context.new_page()
    page.dialogs = []  # type: ignore[attr-defined]
    page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
    return page


@pytest.fixture
def page(browser):
    page = new_page(browser)
    yield page
    page.context.close()


@pytest.fixture(params=list(SIZES))
def sized(request, browser, site):
    """(size name, page opened at that size on the page or widget it is for)."""
    width, height, path = SIZES[request.param]
    page = new_page(browser, width, height)
    open_chat(page, site["app"] + path)
    yield request.param, page
    page.context.close()


# ---------------------------------------------------------------- helpers


# Gradio's page starts as <html lang="en">; the app's load event (which restores a saved conversation) ends by
# setting lang again (bot/web/ui/static/after_load.js). Setting an attribute queues a mutation record even when
# the value stays the same, so this marks "the load event is done" for Chinese and English pages alike.
LOADED_MARKER = """window.__botLoaded = false;
new MutationObserver((records) => { if (records.some(r => r.target === document.documentElement)) window.__botLoaded = true; })
  .observe(document, {attributes: true, subtree: true, attributeFilter: ['lang']});"""


def open_chat(page, url: str):
    page.add_init_script(LOADED_MARKER)  # kept for later navigations and reloads of this page
    page.goto(url, wait_until="load")
    wait_loaded(page)
    return page


def wait_loaded(page) -> None:
    """The chat is on screen and its load event (restoring the tab's conversation) has finished and rendered."""
    page.wait_for_selector("#question textarea", timeout=60_000)
    page.wait_for_function("window.__botLoaded === true", timeout=30_000)
    # Gradio sets <html lang> early too: the app's load event itself says it has run (after_load.js).
    page.wait_for_selector("html[data-chat-loaded]", state="attached", timeout=60_000)
    rendered(page)


def rendered(target) -> None:
    """Two animation frames: whatever the last event changed has been laid out and painted."""
    target.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


# SCROLL_JS (bot/web/ui/static/scroll.js) scrolls the chat so the new answer starts at its top, 150 ms after it arrives, smoothly.
# Done when the answer sits at the top of the chat's scroll box, the box cannot scroll further, or nothing scrolls.
SCROLLED_TO_ANSWER = """() => { const all = document.querySelectorAll('#chat [data-testid=bot]');
  if (!all.length) return true;
  const message = all[all.length - 1];
  let box = message.parentElement;
  while (box && !(box.scrollHeight > box.clientHeight && /(auto|scroll)/.test(getComputedStyle(box).overflowY))) {
    box = box.parentElement;
  }
  if (!box) return true;
  const offset = message.getBoundingClientRect().top - box.getBoundingClientRect().top;
  return Math.abs(offset - 8) <= 2 || box.scrollTop >= box.scrollHeight - box.clientHeight - 1; }"""


def wait_scrolled(target, timeout: float = 30_000) -> None:  # 10 s ran out once under a load of 28 on 2 cores
    target.wait_for_function(SCROLLED_TO_ANSWER, timeout=timeout, polling="raf")
    rendered(target)


def bubbles(target, role: str = "bot") -> int:
    return target.evaluate(f"document.querySelectorAll('[data-testid={role}]').length")


def ask(target, text: str, expect: str = "", timeout: float = 60_000) -> str:
    """Type into the chat (page or frame), send, and return the new answer once it contains ``expect``."""
    before = bubbles(target)
    target.fill("#question textarea", text)
    target.press("#question textarea", "Enter")
    target.wait_for_function(
        "([n, expect]) => { const m = document.querySelectorAll('[data-testid=bot]');"
        " return m.length > n && m[m.length - 1].innerText.includes(expect); }",
        arg=[before, expect],
        timeout=timeout,
    )
    wait_scrolled(target)  # the chat scrolls to the start of the answer
    return last_text(target)


def last_text(target) -> str:
    return target.evaluate(
        "() => { const m = document.querySelectorAll('[data-testid=bot]');"
        " return m.length ? m[m.length - 1].innerText : ''; }"
    )


def snap(page, path: Path, full_page: bool = False) -> None:
    rendered(page)
    page.screenshot(path=str(path), full_page=full_page)


def last_bot(target):
    return target.locator("[data-testid=bot]").last


def rect(target, selector: str) -> dict | None:
    return target.evaluate(
        "(s) => { const e = document.querySelector(s); if (!e) return null;"
        " const r = e.getBoundingClientRect(); return {x: r.x, y: r.y, w: r.width, h: r.height,"
        " right: r.right, bottom: r.bottom}; }",
        selector,
    )


def in_viewport(page, selector: str) -> bool:
    box = rect(page, selector)
    size = page.viewport_size
    return bool(
        box
        and box["w"] > 0
        and box["y"] >= 0
        and box["bottom"] <= size["height"] + 1
        and box["x"] >= 0
        and box["right"] <= size["width"] + 1
    )


def send_button(page) -> str:
    return "#question button"


def store_rows(site) -> list[dict]:
    """The events the app recorded (the store: SQLite under BOT_DATA_DIR), oldest first."""
    import sqlite3

    if not site["db"].exists():
        return []
    with sqlite3.connect(site["db"]) as db:
        db.row_factory = sqlite3.Row
        try:
            rows = db.execute("SELECT * FROM bot_events ORDER BY id").fetchall()
        except sqlite3.OperationalError:
            return []
    return [dict(r) for r in rows]


def wait_for_rows(site, predicate, timeout: float = 20) -> list[dict]:
    """Rows matching ``predicate`` once there are any (the store writes in the background)."""
    return eventually(lambda: [x for x in store_rows(site) if predicate(x)], timeout) or []


def toast_texts(page) -> list[str]:
    return page.evaluate(
        "[...document.querySelectorAll('[data-testid=toast-body], .toast-body')].map(t => t.innerText)"
    )


def eventually(probe, timeout: float = 20):
    """``probe()`` once it is truthy (polled until ``timeout`` seconds), else its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.1)


def saved_snapshot(page) -> str:
    """What the tab keeps for a reload (sessionStorage, written by SAVE_JS after each event)."""
    return page.evaluate(
        "() => Object.keys(sessionStorage).filter(k => k.startsWith('gpu-bot:') && !k.endsWith(':place'))"
        ".map(k => sessionStorage.getItem(k) || '').join('')"
    )


def wait_for_toast(page, text: str, timeout: float = 15_000) -> None:
    page.wait_for_function(
        "(t) => [...document.querySelectorAll('[data-testid=toast-body], .toast-body')]"
        ".some(e => e.innerText.includes(t))",
        arg=text,
        timeout=timeout,
    )


# ---------------------------------------------------------------- layout at the three sizes


def test_layout_welcome_answer_and_first_screen(sized, shots):
    name, page = sized
    width, height, _ = SIZES[name]
    # loads at the top, New chat and "talk to a person" in view, lang follows the UI language
    assert page.evaluate("window.scrollY") == 0
    assert in_viewport(page, "#new-chat") and in_viewport(page, "#talk-to-person")
    assert page.evaluate("document.documentElement.lang") == "zh-CN"
    assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
    # the welcome has no big gap between its text and the examples
    gap = page.evaluate("""() => { const ex = document.querySelector('#chat button.example');
        const texts = [...document.querySelectorAll('#chat .placeholder-content p, #chat .placeholder-content h3,'
          + ' #chat .placeholder p, #chat .placeholder h3')].filter(e => e.getBoundingClientRect().height > 0);
        if (!ex || !texts.length) return -1;
        return ex.getBoundingClientRect().top - Math.max(...texts.map(t => t.getBoundingClientRect().bottom)); }""")
    assert 0 <= gap < 80, gap
    snap(page, shots / f"{name}_welcome.png")

    # an empty submit adds no bubble
    page.fill("#question textarea", "   ")
    page.press("#question textarea", "Enter")
    page.wait_for_selector("[data-testid=toast-body], .toast-body", timeout=15_000)  # the empty submit was handled

    answer = ask(page, "训练时报错显存不足怎么办？", "来源")
    assert bubbles(page, "bot") == 1 and bubbles(page, "user") == 1  # the empty submit added none
    assert "问题：训练时报错提示显存不足" in answer
    # the first screen shows the summary and the first fix step, inside the chat's visible area
    chat = rect(page, "#chat .bubble-wrap") or rect(page, "#chat")
    title = page.evaluate("""() => { const m = [...document.querySelectorAll('[data-testid=bot]')].pop();
        const h = m.querySelector('h3'); const s = [...m.querySelectorAll('strong')].find(e => e.innerText.trim() === '1.');
        const r = e => { const b = e.getBoundingClientRect(); return {top: b.top, bottom: b.bottom}; };
        return {h: h && r(h), step: s && r(s)}; }""")
    assert title["h"] and title["step"], title
    assert chat["y"] - 1 <= title["h"]["top"] and title["step"]["bottom"] <= chat["bottom"] + 1, (title, chat)
    assert title["step"]["bottom"] <= height  # on the first screen of the page / widget
    # bubbles stay inside the chat; Gradio's clear icon overlaps no bubble; Send in view
    overflow = page.evaluate("""() => { const c = document.querySelector('#chat').getBoundingClientRect();
        return [...document.querySelectorAll('#chat .message')].filter(m => m.getBoundingClientRect().right > c.right + 1).length; }""")
    assert overflow == 0
    overlaps = page.evaluate("""() => {
        const icons = [...document.querySelectorAll('#chat .top-panel button')].filter(b => b.offsetParent !== null)
          .map(b => b.getBoundingClientRect());
        const wrap = document.querySelector('#chat .bubble-wrap').getBoundingClientRect();
        const msgs = [...document.querySelectorAll('#chat .message')].map(m => m.getBoundingClientRect())
          .map(m => ({left: m.left, right: m.right, top: Math.max(m.top, wrap.top), bottom: Math.min(m.bottom, wrap.bottom)}))
          .filter(m => m.bottom > m.top);  // only the visible part of each bubble
        return icons.filter(i => msgs.some(m => i.left < m.right && i.right > m.left && i.top < m.bottom && i.bottom > m.top)).length; }""")
    assert overlaps == 0
    assert in_viewport(page, send_button(page)) and in_viewport(page, "#new-chat")
    assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
    snap(page, shots / f"{name}_answer.png")


def test_english_browser_gets_an_english_ui_and_lang(site, browser, shots):
    context = browser.new_context(viewport={"width": 400, "height": 640}, locale="en-US")
    page = context.new_page()
    try:
        open_chat(page, site["app"] + "/widget/")
        assert page.evaluate("document.documentElement.lang") == "en"
        assert page.locator("#talk-to-person").inner_text().strip() == "Talk to a person"
        assert page.locator("#new-chat").inner_text().strip() == "New chat"
        assert page.get_attribute("#question textarea", "placeholder") == "Ask a question or paste an error log…"
        ask(page, "Out of GPU memory during training, what should I do?", "Source")
        snap(page, shots / "widget_english_answer.png")
    finally:
        context.close()


def test_long_paste_keeps_send_in_view_and_the_error_line_in_the_search(sized, shots, site):
    name, page = sized
    _, height, _ = SIZES[name]
    noise = "".join(
        f"I0221 18:48:{n % 60:02d}.436648 29562 trainer.cc:{n}] step {n} loss=0.{n % 97:02d}\n" for n in range(3_000)
    )
    paste = "多卡训练的时候报下面的错，怎么解决？\n" + noise + SAMPLE_LOG
    assert len(paste.splitlines()) > 3_000 and len(paste) > 100_000  # over the input cap
    page.evaluate(
        """(text) => { const box = document.querySelector('#question textarea');
        box.value = text; box.dispatchEvent(new Event('input', {bubbles: true})); }""",
        paste,
    )
    # the textbox has taken the paste and scrolls inside itself
    page.wait_for_function(
        "() => { const b = document.querySelector('#question textarea');"
        " return b.value.length > 100000 && b.scrollHeight > b.clientHeight; }",
        timeout=30_000,  # awaited, not slept: 10 s ran out under a shared host's load
    )
    rendered(page)
    snap(page, shots / f"{name}_long_paste.png")
    box = rect(page, "#question textarea")
    assert box["h"] <= 0.35 * height, box  # bounded: the textbox scrolls inside
    assert in_viewport(page, send_button(page))
    assert page.evaluate("window.scrollY") == 0
    page.click(send_button(page))
    page.wait_for_function(
        "() => { const m = document.querySelectorAll('[data-testid=bot]');"
        " return m.length === 1 && m[0].innerText.includes('输入过长'); }",
        timeout=90_000,
    )
    wait_scrolled(page)
    answer = last_text(page)
    assert f"{len(paste):,}" in answer and "末尾" in answer  # says what was kept and what was cut
    assert "EnforceNotMet: Failed to find dynamic library: libnccl.so" in answer  # the error at the tail was searched
    assert len(page.locator("[data-testid=user]").last.inner_text()) < 10_000  # a short echo, not the paste
    assert in_viewport(page, send_button(page))
    snap(page, shots / f"{name}_long_paste_answer.png")


def test_a_long_signature_wraps_inside_its_bubble(sized, shots):
    name, page = sized
    log = 'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n' + LONG_SIGNATURE
    ask(page, log, "")
    wide = page.evaluate("""() => { const m = [...document.querySelectorAll('[data-testid=bot]')].pop();
        const box = m.closest('.message').getBoundingClientRect();
        const inline = [...m.querySelectorAll('code')].filter(c => !c.closest('pre'));
        const blocks = [...m.querySelectorAll('pre')];  // code blocks scroll inside themselves
        return [...inline, ...blocks].filter(c => c.getBoundingClientRect().right > box.right + 1).length; }""")
    assert wide == 0
    snap(page, shots / f"{name}_long_signature.png")


# ---------------------------------------------------------------- tiers, people, small talk


def test_tiers_in_words_and_a_person_always_reachable(site, page, shots):
    open_chat(page, site["app"] + "/")
    tentative = ask(page, "Jetson Nano paddle install fails", "May not apply")
    first_line = tentative.strip().splitlines()[0]
    assert first_line.startswith("⚠️") and "Jetson" in first_line  # the tier and its reason, first
    assert "nvidia-smi" in tentative
    assert page.locator("#chat button.option").count() == 3  # the closest sections, to open
    snap(page, shots / "desktop_tentative.png")
    nothing = ask(page, "how do I bake sourdough bread at home", "nothing close")
    assert nothing.lstrip().startswith("The knowledge base has nothing close")  # no icon: a bare "i" sans emoji
    assert "GPU" in nothing and "nvidia-smi" in nothing  # scope: doc titles
    assert last_bot(page).locator(f'a[href="{CONTACT}"]').count() == 1  # where to ask a person
    assert page.locator("#chat button.option").count() == 0  # nothing close: no chips to open
    snap(page, shots / "desktop_none.png")
    person = ask(page, "转人工", "GPU support channel")
    assert last_bot(page).locator(f'a[href="{CONTACT}"]').count() == 1

    page.click("#talk-to-person")
    page.wait_for_function("(n) => document.querySelectorAll('[data-testid=bot]').length > n", arg=3, timeout=30_000)
    assert last_bot(page).locator(f'a[href="{CONTACT}"]').count() == 1
    thanks = ask(page, "谢谢", "不客气")
    assert person and thanks
    # a question after the small talk: once it is recorded, whatever came before it has been (or never will be)
    ask(page, "NCCL timeout on 8 GPUs", "")
    asked = {"how do I bake sourdough bread at home", "Jetson Nano paddle install fails"}
    assert wait_for_rows(site, lambda x: x["question"] == "NCCL timeout on 8 GPUs")
    questions = {x["question"]: x["tier"] for x in store_rows(site) if x["kind"] == "question"}
    assert asked <= set(questions) and {questions[q] for q in asked} <= {"tentative", "none"}
    assert not {"转人工", "谢谢"} & set(questions)  # answered as such, not recorded as (unanswered) questions
    snap(page, shots / "desktop_person.png")


def test_person_link_in_the_widget(site, browser, shots):
    page = new_page(browser, 400, 640)
    try:
        open_chat(page, site["app"] + "/widget/")
        page.click("#talk-to-person")
        page.wait_for_selector(f'[data-testid=bot] a[href="{CONTACT}"]', timeout=30_000)
        assert in_viewport(page, "#talk-to-person")
        snap(page, shots / "widget_person.png")
    finally:
        page.context.close()


# ---------------------------------------------------------------- feedback


def test_feedback_toast_one_vote_per_answer_and_an_optional_reason(site, page, shots):
    open_chat(page, site["app"] + "/")
    question = "How do I stop TensorFlow from grabbing all GPU memory?"
    ask(page, question, "Source")
    page.get_by_role("button", name=re.compile("^(Dislike|踩)$")).last.click()
    wait_for_toast(page, "感谢反馈")
    page.wait_for_selector("#vote-reason", state="visible", timeout=10_000)
    snap(page, shots / "desktop_vote_reason.png")
    page.locator("#vote-reason label", has_text="内容过时").click()
    wait_for_toast(page, "已记录原因")
    page.wait_for_selector("#vote-reason", state="hidden", timeout=10_000)
    mine = lambda x: x["kind"] == "vote" and x["question"] == question  # noqa: E731
    assert wait_for_rows(site, lambda x: mine(x) and x["reason"] == "outdated" and x["vote"] == "down")
    page.get_by_role("button", name=re.compile("^(Like|赞)$")).last.click()
    assert wait_for_rows(site, lambda x: mine(x) and x["vote"] == "up")
    votes = [x for x in store_rows(site) if mine(x)]
    assert len(votes) == 1 and votes[0]["vote"] == "up"  # one vote per answer: switching 👎 to 👍, the last counts
    assert votes[0]["answer_id"] and json.loads(votes[0]["cited"])[0].startswith("004_c9562597aefa3d00.txt#")
    assert not [x for x in store_rows(site) if x["kind"] == "not_helpful"]  # a 👎 is not a "didn't help"


# ---------------------------------------------------------------- the conversation across a reload


def test_reload_keeps_the_conversation_copy_transcript_and_new_chat_clears(site, browser, shots):
    page = new_page(browser, 400, 640)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site["app"])
    try:
        open_chat(page, site["app"] + "/widget/")
        first = ask(page, "训练时报错显存不足怎么办？", "来源")
        ask(page, "Loss becomes NaN after a few steps", "Source")
        page.get_by_role("button", name=re.compile("^(Like|赞)$")).last.click()  # a vote is kept too
        assert eventually(lambda: '"vote": "up"' in saved_snapshot(page))  # the tab has saved it
        rendered(page)
        # Since issue 35 a vote button keeps its name (赞/Like) and says it is pressed with aria-pressed (Gradio
        # renamed it "Liked" before), so both replies have a Like button and exactly one, the last reply's, is pressed.
        like = "#chat button:is([aria-label='赞'], [aria-label='Like'])"
        assert eventually(lambda: page.locator(f"{like}[aria-pressed=true]").count() == 1, timeout=10)
        likes = page.locator(like).count()
        page.reload(wait_until="load")
        wait_loaded(page)
        page.wait_for_function("document.querySelectorAll('[data-testid=bot]').length === 2", timeout=30_000)
        assert page.locator("[data-testid=user]").first.inner_text().strip() == "训练时报错显存不足怎么办？"
        assert page.locator("[data-testid=bot]").first.inner_text()[:40] == first[:40]
        assert page.locator(like).count() == likes == 2
        assert eventually(lambda: page.locator(f"{like}[aria-pressed=true]").count() == 1, timeout=10)
        assert page.locator(like).last.get_attribute("aria-pressed") == "true"  # the vote is the last reply's
        snap(page, shots / "widget_after_reload.png")
        # a follow-up after the reload still knows the conversation
        ask(page, "那显存呢？", "")
        # copy the transcript
        # named in the page's language since issue 35 (Gradio's "Copy conversation" beside 赞/踩 mixed two)
        page.locator("#chat button:is([aria-label='复制整段对话'], [aria-label='Copy the conversation'])").first.click()
        copied = eventually(
            lambda: (text := page.evaluate("navigator.clipboard.readText()")) and "Loss becomes NaN" in text and text,
            timeout=10,
        )
        assert copied and "训练时报错显存不足怎么办？" in copied
        # New chat clears the chat and what the tab keeps
        page.click("#new-chat")
        page.wait_for_function("document.querySelectorAll('[data-testid=bot], [data-testid=user]').length === 0")
        assert eventually(lambda: saved_snapshot(page) == "", timeout=10)  # the tab forgot it too
        page.reload(wait_until="load")
        wait_loaded(page)  # the load event that would restore a conversation has run
        assert bubbles(page, "bot") == 0 and bubbles(page, "user") == 0
    finally:
        page.context.close()
    # another tab starts empty (sessionStorage is per tab)
    other = new_page(browser)
    try:
        open_chat(other, site["app"] + "/widget/")  # waits for the load event that would restore one
        assert bubbles(other, "bot") == 0
    finally:
        other.context.close()


def test_suggested_follow_ups_from_the_cited_sections_neighbours(site, page, shots):
    open_chat(page, site["app"] + "/")
    ask(page, "多卡训练报错 libnccl.so 找不到", "来源")
    options = page.locator("#chat button.option")
    assert 1 <= options.count() <= 3
    snap(page, shots / "desktop_follow_ups.png")
    label = options.first.inner_text().strip()
    before = bubbles(page)
    options.first.click()
    page.wait_for_function(
        "(n) => { const m = document.querySelectorAll('[data-testid=bot]');"
        " return m.length > n && m[m.length - 1].innerText.includes('这是你选的这一节'); }",
        arg=before,
        timeout=60_000,
    )
    assert label[:8] in page.locator("[data-testid=user]").last.inner_text()


# ---------------------------------------------------------------- source view


def test_source_view_marks_only_that_sections_terms_and_notes_old_releases(site, page, shots):
    open_chat(page, site["app"] + "/")
    ask(page, TRACE, "检测到的错误")
    link = last_bot(page).locator("a[href*='/source?']").first
    with page.context.expect_page() as popup_info:
        link.click()
    popup = popup_info.value
    popup.wait_for_load_state("load")
    assert popup.url.startswith(site["app"] + "/source?")
    assert popup.locator(".line.in").count() >= 3
    assert "Fluid 1.x" in popup.locator(".era").inner_text()
    snap(popup, shots / "source_view.png")
    key = re.search(r"key=([^&]+)", popup.url).group(1)
    popup.goto(f"{site['app']}/source?key={key}&terms=libnccl.so+gi+b+00+%E6%98%BE%E5%AD%98&lang=zh", wait_until="load")
    marked = {m.inner_text() for m in popup.locator("main mark").all()}
    assert marked == {"libnccl.so"}  # not "显存" (not in this section), not noise
    assert popup.locator(".meta mark").all_inner_texts() == ["libnccl.so"]


# ---------------------------------------------------------------- embedding and safety (kept from before)


def test_widget_in_portal_answers_chinese_english_and_a_pasted_trace(site, page, shots):
    page.goto(site["portal"], wait_until="load")
    frame = page.wait_for_selector("#assistant").content_frame()
    frame.wait_for_selector("#question textarea", timeout=60_000)
    assert frame.url.startswith(site["app"] + "/widget")
    zh = ask(frame, "训练时报错显存不足怎么办？", "来源")
    assert "问题：训练时报错提示显存不足，如何解决？" in zh
    snap(page, shots / "portal_widget.png")
    en = ask(frame, "Loss becomes NaN after a few steps", "Source")
    assert "Loss" in en and "来源" not in en.split("Source")[0]
    trace = ask(frame, TRACE, "检测到的错误")
    assert trace.lstrip().startswith("检测到的错误")
    assert "libnccl.so" in trace.splitlines()[0]
    snap(page, shots / "portal_widget_trace.png")


def test_widget_as_gradio_web_component(site, page, shots):
    page.goto(site["portal"] + "web-component", wait_until="load")
    page.wait_for_selector("gradio-app #question textarea", timeout=60_000)
    ask(page, "Loss becomes NaN after a few steps", "Source")
    href = last_bot(page).locator("a[href*='/source?']").first.get_attribute("href")
    assert href.startswith(site["app"] + "/source?")  # absolute: the host page is another site
    snap(page, shots / "web_component.png")


def test_web_component_gets_no_cors_grant_on_an_unlisted_origin(site, page):
    refused: list[str] = []  # positive signs that the browser refused the app's answers to this origin
    page.on("requestfailed", lambda r: refused.append(r.url) if r.url.startswith(site["app"]) else None)
    page.on("console", lambda m: refused.append(m.text) if "CORS" in m.text else None)
    page.goto(site["other_portal"] + "web-component", wait_until="load")
    assert eventually(lambda: refused, timeout=30), "the web component never tried to reach the app"
    rendered(page)
    assert page.query_selector("gradio-app #question textarea") is None


def test_widget_is_refused_in_a_portal_that_is_not_allowed(site, page):
    page.goto(site["other_portal"], wait_until="load")
    handle = page.wait_for_selector("#assistant")
    # The frame's navigation ends (refused by frame-ancestors: Chromium shows its error page) before we look inside.
    frame = eventually(lambda: (f := handle.content_frame()) and f.url not in ("", "about:blank") and f, timeout=30)
    assert frame, "the portal's frame never navigated"
    frame.wait_for_load_state("load")
    # Refused: either the browser's own error page (no Referer) or the app's readable page naming the setting.
    assert frame.url.startswith("chrome-error://") or "BOT_FRAME_ANCESTORS" in frame.inner_text("body"), frame.url
    assert frame.query_selector("#question textarea") is None


def test_typed_html_does_not_run(site, page, shots):
    open_chat(page, site["app"] + "/")
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    ask(page, XSS, "")
    user = page.locator("[data-testid=user]").last.inner_text()
    assert '<img src=x onerror="window.__pwned=1;alert(1)">' in user  # shown as text, not as an element
    # A control: the same broken image, added outside the chat, does fire its onerror; once it has, one in the chat
    # would have too.
    page.evaluate(
        "() => { const i = document.createElement('img'); i.onerror = () => { window.__control = 1; };"
        " i.src = 'no-such-control-image'; i.style.display = 'none'; document.body.appendChild(i); }"
    )
    page.wait_for_function("window.__control === 1", timeout=10_000)
    assert page.evaluate("window.__pwned") is None
    assert page.dialogs == []  # type: ignore[attr-defined]
    assert page.locator("#chat img").count() == 0
    assert not [u for u in requests if u.endswith("/x") or "/x?" in u]


def test_document_html_and_images_are_inert(site, page):
    open_chat(page, site["app"] + "/")
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    ask(page, "How do I check that TensorFlow can see my GPU with nvidia-smi?", "")
    page.evaluate("document.querySelectorAll('#chat details').forEach(d => d.open = true)")
    # A control image in an opened details of the page: once the browser has requested it, it would have requested
    # an image in the chat's opened details too.
    with page.expect_request("**/img/control.png", timeout=10_000):
        page.evaluate(
            "() => { const d = document.createElement('details'); d.open = true;"
            " d.innerHTML = '<img src=\"/img/control.png\">'; document.body.appendChild(d); }"
        )
    assert page.locator("#chat img").count() == 0  # the seed's ![GPU](/img/GPU-01.png) is not loaded
    assert not [u for u in requests if "/img/GPU" in u]
    hrefs = page.eval_on_selector_all("#chat a", "as => as.map(a => a.getAttribute('href') || '')")
    assert hrefs and all(h.startswith(("http://", "https://")) for h in hrefs)
