"""Issue 35, what a person sees, in Debian's headless Chromium (repository seeds, ``hash`` embedder):

- a reply with nothing to rate (the hand-off "转人工", the "talk to a person" button's reply) shows no 👍/👎, also
  after a reload; an answer keeps them, and on the full page the hand-off keeps its copy icon;
- no blank band above the messages on a 390×844 phone: the first message starts just below the icon row (Gradio's
  16 px padding and 20 px margin left 64 px of white above it), the welcome 6 px below it (was 16).
"""

from __future__ import annotations

import pytest

from fixtures.browser import ask, chromium_missing_reason, open_loaded, rendered, shots, site  # noqa: F401 (fixtures)

_missing = chromium_missing_reason()
pytestmark = [pytest.mark.browser, pytest.mark.skipif(_missing is not None, reason=_missing or "")]

# Per bot reply, oldest first: the names of its visible buttons under the bubble.
REPLY_BUTTONS = """() => [...document.querySelectorAll('#chat .message-row.bot-row')].map(row => {
  const buttons = row.nextElementSibling && row.nextElementSibling.matches('.message-buttons')
    ? [...row.nextElementSibling.querySelectorAll('button')] : [];
  return buttons.filter(b => b.checkVisibility()).map(b => b.dataset.botGradio || b.getAttribute('aria-label'));
})"""
VOTES = {"Like", "Liked", "Dislike", "Disliked", "赞", "踩"}


def votes(names: list[str]) -> set[str]:
    return VOTES & set(names)


@pytest.mark.parametrize("path", ["/", "/widget/"])
def test_a_reply_with_nothing_to_rate_shows_no_votes_and_an_answer_does(site, browser, shots, path):
    context = browser.new_context(viewport={"width": 390, "height": 844}, locale="en-US")
    page = context.new_page()
    try:
        open_loaded(page, site + path)
        ask(page, "NCCL timeout on 8 GPUs")
        ask(page, "转人工")
        page.click("#talk-to-person")
        page.wait_for_function("() => document.querySelectorAll('#chat [data-testid=bot]').length >= 3")
        rendered(page)
        for moment in ("asked", "reloaded"):
            replies = page.evaluate(REPLY_BUTTONS)
            assert len(replies) == 3, (moment, replies)
            answer, typed, button = replies
            assert votes(answer) == {"Like", "Dislike"}, (moment, answer)  # an answer keeps both
            assert not votes(typed) and not votes(button), (moment, replies)  # the hand-offs: none
            if path == "/":  # the full page copies a message; the hand-off's contact too
                assert any("Copy" in name for name in typed), (moment, typed)
            page.screenshot(path=str(shots / f"no_votes_{'widget' if 'widget' in path else 'page'}_{moment}.png"))
            open_loaded(page, site + path)  # the conversation comes back from the tab's storage
            page.wait_for_function("() => document.querySelectorAll('#chat [data-testid=bot]').length >= 3")
            rendered(page)
    finally:
        context.close()


# Where the chat's parts start, relative to the chat's top.
BAND = """() => { const top = e => e && e.getBoundingClientRect().top;
  const chat = top(document.querySelector('#chat'));
  const welcome = document.querySelector('#chat .placeholder-content');
  const first = document.querySelector('#chat .message-row');
  const icons = document.querySelector('#chat .top-panel');
  return {welcome: welcome && top(welcome) - chat, first: first && top(first) - chat,
          icons: icons && icons.getBoundingClientRect().bottom - chat}; }"""


@pytest.mark.parametrize("path", ["/", "/widget/"])
def test_no_blank_band_above_the_welcome_or_the_first_message_on_a_phone(site, browser, shots, path):
    context = browser.new_context(viewport={"width": 390, "height": 844}, locale="zh-CN")
    page = context.new_page()
    try:
        open_loaded(page, site + path)
        welcome = page.evaluate(BAND)
        page.screenshot(path=str(shots / f"band_{'widget' if 'widget' in path else 'page'}_welcome.png"))
        assert welcome["welcome"] <= 28 + 8, welcome  # the fixed 28 px icon row, then 6 px (was 16: 44 in all)
        ask(page, "NCCL timeout on 8 GPUs")
        asked = page.evaluate(BAND)
        page.screenshot(path=str(shots / f"band_{'widget' if 'widget' in path else 'page'}_asked.png"))
        assert asked["icons"] is not None and asked["icons"] <= 30, asked  # the icon row: one 28 px strip
        assert asked["first"] - asked["icons"] <= 12, asked  # was 36 px of white under it
    finally:
        context.close()


# ---------------------------------------------------------------- the first paint (bot.web.ui.first_paint)

GRADIO_ENTRY = "**/assets/index-*.js"  # held back: the page as a person sees it before Gradio's scripts have run


@pytest.mark.parametrize("path", ["/", "/widget/"])
def test_the_first_paint_shows_the_welcome_and_a_named_box_before_gradio_runs(site, browser, shots, path):
    """Issue 35: the widget showed a blank "加载中…" until Gradio's ~50 scripts had run and its load event had
    answered (6.5 s at load 20). The page's HTML now shows the welcome, its examples and the text box, in the tab's
    language, with Gradio's scripts not even loaded."""
    for locale, hello, box in (("zh-CN", "你好", "问题或报错日志"), ("en-US", "Hi!", "Question or error log")):
        context = browser.new_context(
            viewport={"width": 390, "height": 844}, locale=locale, extra_http_headers={"Accept-Language": locale}
        )
        page = context.new_page()
        try:
            page.route(GRADIO_ENTRY, lambda route: route.abort())
            page.goto(site + path, wait_until="load")
            first = page.locator("#bot-first")
            assert first.is_visible() and hello in first.inner_text()
            assert page.locator("#bot-first .example").count() >= 2
            assert page.get_attribute("#bot-first textarea", "aria-label").startswith(box[:4])
            boxes = page.evaluate(
                "[...document.querySelectorAll('#bot-first button, #bot-first textarea')].map(e => {"
                " const r = e.getBoundingClientRect(); return [r.width, r.height, e.getAttribute('aria-label') || e.innerText]; })"
            )
            assert all(w >= 24 and h >= 24 and name for w, h, name in boxes), boxes  # targets ≥ 24 px, all named
            page.screenshot(path=str(shots / f"first_paint_{'widget' if 'widget' in path else 'page'}_{locale}.png"))
        finally:
            context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_nothing_serious_on_the_first_paint(site, browser, scheme):
    from web.test_browser_a11y import AXE, RUN_AXE

    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: run scripts/test.sh, or: npm install --prefix tests/.axe axe-core")
    context = browser.new_context(viewport={"width": 390, "height": 844}, locale="zh-CN", color_scheme=scheme)
    page = context.new_page()
    try:
        page.route(GRADIO_ENTRY, lambda route: route.abort())
        page.goto(site + "/widget/", wait_until="load")
        page.add_script_tag(path=str(AXE))
        assert page.evaluate(RUN_AXE) == []
    finally:
        context.close()


def test_what_is_done_on_the_first_paint_goes_to_the_chat_once_it_is_ready(site, browser):
    """An example picked before Gradio has run is asked once the chat is ready; words typed (not sent) are in
    Gradio's box; a reload of a tab with a conversation shows the conversation, not the first paint's welcome."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, locale="zh-CN")
    page = context.new_page()
    try:
        held = []
        page.route(GRADIO_ENTRY, lambda route: held.append(route))
        page.goto(site + "/widget/", wait_until="commit")
        page.wait_for_selector("#bot-first .example")
        picked = page.inner_text("#bot-first .example >> nth=1")
        page.click("#bot-first .example >> nth=1")
        page.unroute(GRADIO_ENTRY)  # Gradio's scripts load now
        page.wait_for_function(
            "(q) => [...document.querySelectorAll('#chat [data-testid=user]')].some(m => m.innerText.includes(q))",
            arg=picked,
            timeout=60_000,
        )
        assert page.locator("#bot-first").count() == 0
        page.wait_for_function("() => document.querySelectorAll('#chat [data-testid=bot]').length >= 1", timeout=60_000)

        page.route(GRADIO_ENTRY, lambda route: held.append(route))
        page.reload(wait_until="commit")
        page.wait_for_selector("html", state="attached")
        page.wait_for_function("() => document.readyState !== 'loading'")
        assert page.locator("#bot-first").count() == 0  # the saved conversation comes back instead
        page.unroute(GRADIO_ENTRY)
        open_loaded(page, site + "/widget/")
        assert page.evaluate("document.querySelectorAll('#chat [data-testid=user]').length") == 1
    finally:
        context.close()

    context = browser.new_context(viewport={"width": 390, "height": 844}, locale="en-US")
    page = context.new_page()
    try:
        page.route(GRADIO_ENTRY, lambda route: held.append(route))
        page.goto(site + "/widget/", wait_until="commit")
        page.fill("#bot-first textarea", "nvidia-smi shows no process")
        page.unroute(GRADIO_ENTRY)
        page.wait_for_selector("html[data-chat-loaded]", state="attached", timeout=60_000)
        assert page.input_value("#question textarea") == "nvidia-smi shows no process"
        assert page.locator("#chat [data-testid=user]").count() == 0  # typed, not sent
    finally:
        context.close()


def test_gradios_hashed_assets_are_served_once_compressed_and_cached_for_a_year(site):
    import re
    import urllib.error
    import urllib.request

    shell = urllib.request.urlopen(site + "/widget/").read().decode()
    name = re.search(r"assets/(index-[\w-]+\.js)", shell).group(1)
    for url in (f"{site}/widget/assets/{name}", f"{site}/assets/{name}"):
        with urllib.request.urlopen(urllib.request.Request(url, headers={"Accept-Encoding": "gzip"})) as response:
            assert response.headers["Cache-Control"] == "public, max-age=31536000, immutable"
            assert response.headers["Content-Encoding"] == "gzip" and response.headers["X-Content-Type-Options"]
            etag = response.headers["ETag"]
        try:
            urllib.request.urlopen(urllib.request.Request(url, headers={"If-None-Match": etag}))
            raise AssertionError("an unchanged asset is sent again")
        except urllib.error.HTTPError as answer:
            assert answer.code == 304
    try:
        urllib.request.urlopen(f"{site}/widget/assets/missing-ABCDEFGH.js")
        raise AssertionError("a file Gradio does not have was served")
    except urllib.error.HTTPError as answer:
        assert answer.code == 404
