"""The portal widget in Debian's headless Chromium at 400×640 and 390×844: nothing overlaps, code wraps,
a pasted log shows its error, a typed two-line question stays text, toasts speak the UI's language.

``python app.py`` runs as a subprocess over the repository's seeds indexed with the ``hash`` embedder,
with a ``mailto:`` contact. Screenshots go to ``$BOT_SCREENSHOT_DIR`` or ``screenshots/``: look at them.
"""

from __future__ import annotations

import re

import pytest

from bot.web.ui import SAMPLE_LOG
from fixtures.browser import ask, chromium_missing_reason, open_loaded, rendered, seeds_app, shots  # noqa: F401 (fixtures)

_missing = chromium_missing_reason()
pytestmark = [pytest.mark.browser, pytest.mark.skipif(_missing is not None, reason=_missing or "")]

SIZES = [(400, 640), (390, 844)]
# A pasted log: 60 INFO lines, then the error at its end (the bubble used to show only the first 40 lines).
LOG = (
    "\n".join(f"I0221 18:48:{n % 60:02d}.436648 29562 trainer.cc:88] step {n} loss=0.{n}" for n in range(60))
    + "\n"
    + SAMPLE_LOG.splitlines()[1]
)
TWO_LINES = "多卡训练报错怎么办？\n用的是 8 张 V100"
LONG_COMMAND = (
    "多卡训练报错 libnccl.so，我运行了 `export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/nccl/lib:"
    "/opt/conda/lib/python3.8/site-packages/nvidia/nccl/lib:$LD_LIBRARY_PATH`"
)

# Every box that must not overlap another: chat bubbles, option chips, the bar's buttons, the input.
BOXES = """() => {
  const picked = [...document.querySelectorAll(
    '#chat [data-testid=bot], #chat [data-testid=user], #chat button.option, .bot-top button, #question textarea')];
  const visible = picked.filter(e => { const r = e.getBoundingClientRect(); const s = getComputedStyle(e);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none'; });
  // Bubbles scroll inside the chat: only what is inside the chat's visible box counts.
  const chat = document.querySelector('#chat').getBoundingClientRect();
  return visible.map((e, i) => { const r = e.getBoundingClientRect();
    const inChat = !!e.closest('#chat');
    const top = inChat ? Math.max(r.top, chat.top) : r.top, bottom = inChat ? Math.min(r.bottom, chat.bottom) : r.bottom;
    return {i, name: (e.dataset.testid || e.id || e.className || e.tagName).toString().slice(0, 40),
            text: (e.innerText || e.value || '').slice(0, 30), left: r.left, right: r.right, top, bottom,
            path: i}; }).filter(b => b.bottom > b.top);
}"""
NESTED = """() => {
  const picked = [...document.querySelectorAll(
    '#chat [data-testid=bot], #chat [data-testid=user], #chat button.option, .bot-top button, #question textarea')];
  const pairs = [];
  picked.forEach((a, i) => picked.forEach((b, j) => { if (i !== j && a.contains(b)) pairs.push([i, j]); }));
  return pairs;
}"""


@pytest.fixture(scope="module")
def widget_site(tmp_path_factory):
    root = tmp_path_factory.mktemp("widget")
    with seeds_app(root, BOT_CONTACT_LABEL="GPU 支持") as url:
        yield url


def overlaps(page) -> list[tuple[dict, dict]]:
    boxes = page.evaluate(BOXES)
    nested = {tuple(p) for p in page.evaluate(NESTED)}
    found = []
    for n, a in enumerate(boxes):
        for b in boxes[n + 1 :]:
            if (a["i"], b["i"]) in nested or (b["i"], a["i"]) in nested:
                continue
            if (
                min(a["right"], b["right"]) - max(a["left"], b["left"]) > 1
                and min(a["bottom"], b["bottom"]) - max(a["top"], b["top"]) > 1
            ):
                found.append((a, b))
    return found


@pytest.mark.parametrize("width,height", SIZES)
def test_widget_nothing_overlaps_code_wraps_logs_show_their_error(widget_site, browser, shots, width, height):
    context = browser.new_context(viewport={"width": width, "height": height}, locale="zh-CN")
    page = context.new_page()
    try:
        page.goto(widget_site + "/widget/", wait_until="load")
        page.wait_for_selector("#question textarea", timeout=60_000)
        rendered(page)
        ask(page, TWO_LINES)
        user = page.locator("[data-testid=user]").last
        assert user.locator("pre").count() == 0  # a typed question is text, not a tiny code block
        assert "用的是 8 张 V100" in user.inner_text()
        ask(page, LOG)
        log_bubble = page.locator("[data-testid=user]").last
        assert "EnforceNotMet" in log_bubble.inner_text()  # the error at the end of the paste is shown
        ask(page, LONG_COMMAND)
        ask(page, "how do I bake sourdough bread at home")
        page.screenshot(path=str(shots / f"widget_layout_{width}x{height}.png"))
        # Code blocks wrap: nothing is hidden behind a sideways scroll in the narrow bubble.
        wide = page.evaluate(
            "[...document.querySelectorAll('#chat pre')].filter(p => p.scrollWidth > p.clientWidth + 1).length"
        )
        assert wide == 0
        # Scroll through the conversation; at every position no two boxes overlap.
        positions = page.evaluate("""() => { const m = document.querySelector('#chat [data-testid=bot]');
          let box = m.parentElement;
          while (box && !(box.scrollHeight > box.clientHeight && /(auto|scroll)/.test(getComputedStyle(box).overflowY)))
            box = box.parentElement;
          box.id = box.id || 'chat-scroller';
          return Math.ceil(box.scrollHeight / Math.max(1, box.clientHeight)); }""")
        for step in range(positions + 1):
            page.evaluate(
                "(s) => { const b = document.getElementById('chat-scroller') ||"
                " document.querySelector('#chat .bubble-wrap'); b.scrollTop = s * b.clientHeight; }",
                step,
            )
            rendered(page)
            found = overlaps(page)
            assert not found, f"overlapping at scroll step {step}: {found[:3]}"
        # 👎: the toast is titled in the UI's language, and a person is offered (a contact is configured).
        page.get_by_role("button", name=re.compile("^(Dislike|踩)$")).last.click()
        page.wait_for_selector("[data-testid=toast-body], .toast-body", timeout=15_000)
        # What the title shows: its text, or its ::before content when the text itself is hidden (font-size 0).
        titles = page.evaluate("""[...document.querySelectorAll('[data-testid=toast-title], .toast-title')].map(t =>
          parseFloat(getComputedStyle(t).fontSize) === 0 ? getComputedStyle(t, '::before').content.replace(/"/g, '')
                                                         : t.innerText)""")
        assert titles and all("Info" not in t for t in titles) and any("提示" in t for t in titles), titles
        page.wait_for_selector(".bot-reasons a[href^='mailto:gpu-help@example.com']", timeout=10_000)
        rendered(page)
        page.screenshot(path=str(shots / f"widget_dislike_{width}x{height}.png"))
    finally:
        context.close()


# Where each message and the chat's scroll area are: viewport tops, and the scroll offset they are seen at.
POSITIONS = """() => {
  const scroller = document.querySelector('#chat .bubble-wrap');
  const box = scroller.getBoundingClientRect();
  return {box: [box.top, box.bottom], scroll: scroller.scrollTop,
          tops: [...document.querySelectorAll('#chat [data-testid=user], #chat [data-testid=bot]')]
                  .map(m => m.getBoundingClientRect().top)};
}"""
SCROLL_TO = "(top) => { const b = document.querySelector('#chat .bubble-wrap'); b.scrollTop = top; }"
DOWN = "#chat .scroll-down-button-container button"


def moved(before: dict, after: dict) -> list[str]:
    """How the messages moved other than by scrolling: each message's top must differ by exactly the scroll, and the
    chat's scroll area must keep its place (within 1 px)."""
    problems = []
    if any(abs(a - b) > 1 for a, b in zip(before["box"], after["box"])):
        problems.append(f"the chat's scroll area moved from {before['box']} to {after['box']}")
    scrolled = after["scroll"] - before["scroll"]
    for n, (a, b) in enumerate(zip(before["tops"], after["tops"])):
        if abs((b - a) + scrolled) > 1:
            problems.append(f"message {n} moved {b - a + scrolled:+.0f} px beyond the scroll")
    return problems


@pytest.mark.parametrize("path,sizes", [("/widget/", SIZES), ("/", [(390, 844)])])
def test_the_messages_stay_put_when_the_scroll_down_button_comes_and_goes(widget_site, browser, shots, path, sizes):
    """Issue 18: the ↓ sat in a row that grew when it appeared, and the messages jumped. Scrolled up in a long
    conversation (the ↓ shows) and back to the end (it goes), every message moves by the scroll and nothing more;
    the scroll area is where it was on the welcome screen (the copy icon's arrival moved it too)."""
    width, height = sizes[0]
    context = browser.new_context(viewport={"width": width, "height": height}, locale="zh-CN")
    page = context.new_page()
    problems = []
    try:
        open_loaded(page, widget_site + path)
        welcome = page.evaluate(POSITIONS)
        ask(page, "How do I stop TensorFlow from grabbing all GPU memory?", options=True)
        ask(page, "多卡训练报错 libnccl.so 找不到", options=True)
        for width, height in sizes:
            page.set_viewport_size({"width": width, "height": height})
            where = f"{path} {width}×{height}"
            page.evaluate(SCROLL_TO, 10**6)  # the end: no ↓
            page.wait_for_selector(DOWN, state="detached", timeout=10_000)
            rendered(page)
            end = page.evaluate(POSITIONS)
            if width == sizes[0][0] and any(abs(a - b) > 1 for a, b in zip(welcome["box"], end["box"])):
                problems.append(
                    f"{where}: the chat's scroll area moved from {welcome['box']} (welcome) to {end['box']}"
                )
            page.evaluate(SCROLL_TO, max(0, end["scroll"] - height // 3))  # up a third of a screen: the ↓ appears
            page.wait_for_selector(DOWN, state="visible", timeout=10_000)
            rendered(page)
            up = page.evaluate(POSITIONS)
            page.screenshot(
                path=str(shots / f"widget_scroll_down_{'widget' if 'widget' in path else 'page'}_{width}x{height}.png")
            )
            problems += [f"{where}, ↓ appeared: {p}" for p in moved(end, up)]
            page.evaluate(SCROLL_TO, 10**6)  # back to the end: the ↓ goes
            page.wait_for_selector(DOWN, state="detached", timeout=10_000)
            rendered(page)
            problems += [f"{where}, ↓ went: {p}" for p in moved(up, page.evaluate(POSITIONS))]
        assert not problems, problems[:6]
    finally:
        context.close()


WELCOME = """() => { const box = document.querySelector('#chat .placeholder-content') || document.querySelector('#chat .placeholder');
  const chips = [...document.querySelectorAll('#chat button.example')].map(b => b.innerText.trim());
  return {text: box ? box.innerText.replace(chips.join('\\n'), '') : '', chips,
          visible: !!box && box.checkVisibility({visibilityProperty: true})}; }"""


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_the_welcome_speaks_the_pages_language_only(widget_site, browser, shots, locale):
    """Issue 18: the widget's welcome said 你好 and Hi, with Chinese and English examples, under a tab titled
    "知识库助手 · Knowledge base assistant". A Chinese browser sees a Chinese welcome with Chinese questions, an English
    one English only (the seeds have both, in seeds/meta), in the widget and on the page, whose tab is titled in
    that language too."""
    chinese = locale.startswith("zh")
    context = browser.new_context(viewport={"width": 400, "height": 640}, locale=locale)
    page = context.new_page()
    try:
        for path in ("/widget/", "/"):
            open_loaded(page, widget_site + path)
            shown = page.evaluate(WELCOME)
            page.screenshot(path=str(shots / f"welcome_{'widget' if 'widget' in path else 'page'}_{locale}.png"))
            assert shown["visible"] and len(shown["chips"]) >= 3, shown
            wrong = [t for t in [shown["text"], *shown["chips"]] if bool(re.search(r"[\u4e00-\u9fff]", t)) != chinese]
            assert not wrong, (path, shown)
        assert page.title() == ("知识库助手" if chinese else "Knowledge base assistant")
    finally:
        context.close()
