"""A widget everyone can use (issue 35), in Debian's headless Chromium with the repository's seeds.

- axe-core (npm, installed by ``scripts/test.sh`` into ``tests/.axe``), injected into ``/``, ``/widget/``,
  ``/admin`` (with its token) and ``/source``, finds nothing serious or critical;
- the chat's controls are named in the page's language (the box, Send, the votes, the copy icons: Gradio said
  "Textbox", nothing, "Copy message" beside 赞/踩), each message says whose it is, a vote says it is pressed
  (``aria-pressed``), vote and copy icons are at least 24×24 px (WCAG 2.2; they were 18×18), the text box shows
  its focus, a user's message has no copy icon;
- the 👎 reasons wrap: all of them, the comment box and the contact link are on screen at 390 and 420 px (one row
  hid "其他" and the contact off-screen);
- a toast takes no room: the bar, the chat and the input stay where they were while it shows;
- every visible control at 390 and 420 px, Gradio's own buttons included (a code block's copy, a toast's close), has
  a name, and the words the page gave it are in the page's language (issue 44).
"""

from __future__ import annotations

import json
import re
import urllib.request
from urllib.parse import urlsplit

import pytest

from fixtures import REPO
from fixtures.browser import CONTACT, ask, browser, chromium_missing_reason, open_loaded, rendered, seeds_app  # noqa: F401 (browser is a fixture)

_missing = chromium_missing_reason()
AXE = REPO / "tests" / ".axe" / "node_modules" / "axe-core" / "axe.min.js"
pytestmark = [pytest.mark.browser, pytest.mark.skipif(_missing is not None, reason=_missing or "")]
ADMIN = "admin-token-for-a11y"
ZH = {"locale": "zh-CN", "extra_http_headers": {"Accept-Language": "zh-CN,zh;q=0.9"}}
QUESTION = "多卡训练报错 libnccl.so 找不到"  # a reply with a code block, suggestions and the contact
DISLIKE, LIKE = re.compile("^(Dislike|踩)$"), re.compile("^(Like|赞)$")

RUN_AXE = """async () => { const r = await axe.run(document, {resultTypes: ['violations']});
  return r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
    .map(v => `${v.impact} ${v.id}: ${v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(' | ')}`); }"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    with seeds_app(tmp_path_factory.mktemp("a11y"), BOT_ADMIN_TOKEN=ADMIN) as url:
        yield url


def source_path(site: str) -> str:
    request = urllib.request.Request(
        site + "/api/ask",
        data=json.dumps({"question": QUESTION}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        hit = json.load(response)["hits"][0]
    return "/source?" + urlsplit(hit["url"]).query


# Shown as a person reads it: no ancestor still fading (axe computes contrast through opacity, so an element caught
# half-faded-in reads as low contrast).
FULLY_SHOWN = (
    "e => { for (; e; e = e.parentElement) if (getComputedStyle(e).opacity !== '1') return false; return true; }"
)
# A 👎 always shows a toast (its thanks): it is checked once there and faded in, not arriving during the check.
TOAST_SHOWN = f"""() => {{ const shown = {FULLY_SHOWN};
  const toasts = [...document.querySelectorAll('.toast-body')];
  return toasts.length > 0 && toasts.every(shown); }}"""
# The reason picker, at rest: faded in (the pointer that clicked 👎 is moved off it first: a reason under the
# pointer is in its hover colours).
REASONS_SHOWN = f"() => ({FULLY_SHOWN})(document.querySelector('.bot-reasons'))"


def dislike_last(page) -> None:
    page.get_by_role("button", name=DISLIKE).last.click()
    page.wait_for_selector(".bot-reasons", state="visible", timeout=15_000)
    page.wait_for_function("() => document.querySelector('#chat button[aria-pressed=true]')", timeout=15_000)
    rendered(page)
    page.wait_for_function(TOAST_SHOWN, timeout=15_000)
    page.mouse.move(0, 0)
    page.wait_for_function(REASONS_SHOWN, timeout=15_000)


@pytest.mark.parametrize("path", ["/widget/", "/", "/admin", "/source"])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_nothing_serious_on_the_four_pages(site, browser, path, scheme):
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: run scripts/test.sh, or: npm install --prefix tests/.axe axe-core")
    # /admin and /source forbid inline scripts (their CSP): the checker is injected around it, as an extension would.
    context = browser.new_context(
        viewport={"width": 390, "height": 844},
        color_scheme=scheme,
        bypass_csp=True,
        locale="zh-CN",
        extra_http_headers={"Accept-Language": "zh-CN,zh;q=0.9", "Authorization": f"Bearer {ADMIN}"},
    )
    page = context.new_page()
    try:
        if path in ("/widget/", "/"):
            open_loaded(page, site + path)
            ask(page, QUESTION, options=True)
            dislike_last(page)
        else:
            page.goto(site + (source_path(site) if path == "/source" else path), wait_until="load")
        page.add_script_tag(path=str(AXE))
        assert page.evaluate(RUN_AXE) == []
    finally:
        context.close()


@pytest.mark.parametrize("path", ["/widget/", "/"])
def test_controls_are_named_in_the_pages_language_votes_say_pressed_and_targets_are_24px(site, browser, path):
    context = browser.new_context(viewport={"width": 1280, "height": 800}, **ZH)
    page = context.new_page()
    try:
        open_loaded(page, site + path)
        ask(page, QUESTION, options=True)
        dislike_last(page)
        named = page.evaluate("""() => ({
          box: document.querySelector('#question textarea').getAttribute('aria-label'),
          send: document.querySelector('#question button.submit-button').getAttribute('aria-label'),
          user: document.querySelector('#chat [data-testid=user]').getAttribute('aria-label'),
          bot: document.querySelector('#chat [data-testid=bot]').getAttribute('aria-label'),
          pressed: [...document.querySelectorAll('#chat button[aria-pressed]')].map(b =>
            b.getAttribute('aria-label') + '=' + b.getAttribute('aria-pressed')),
          labels: [...document.querySelectorAll('#chat button[aria-label], #question button')]
            .filter(b => b.checkVisibility()).map(b => b.getAttribute('aria-label')),
          small: [...document.querySelectorAll('#chat button.icon-button, #chat .top-panel button')]
            .filter(b => b.checkVisibility()).map(b => b.getBoundingClientRect())
            .filter(r => r.width < 24 || r.height < 24).map(r => `${r.width}x${r.height}`),
          userCopy: [...document.querySelectorAll('#chat .message-buttons-right button')].filter(b => b.checkVisibility()).length,
        })""")
        assert (named["box"], named["send"], named["user"], named["bot"]) == (
            "问题或报错日志",
            "发送",
            "你的消息",
            "助手的回答",
        )
        assert named["pressed"][-2:] == ["踩=true", "赞=false"] or named["pressed"][-2:] == ["赞=false", "踩=true"]
        english = [label for label in named["labels"] if re.search(r"[A-Za-z]{3,}", label or "")]
        assert english == [] and None not in named["labels"], named["labels"]
        assert named["small"] == [] and named["userCopy"] == 0
        page.get_by_role("button", name=LIKE).last.click()  # the vote changed: the buttons say so
        page.wait_for_function(
            "() => [...document.querySelectorAll('#chat button[aria-pressed=true]')].some(b => b.getAttribute('aria-label') === '赞')",
            timeout=15_000,
        )
        page.focus("#question textarea")
        rendered(page)
        ring = page.evaluate("getComputedStyle(document.querySelector('#question')).outlineStyle")
        assert ring != "none"
    finally:
        context.close()


# Every control a person can reach, visible: its accessible name as a screen reader takes it (aria-labelledby,
# aria-label, a <label>, its text) and the words it was named with by the page (aria-label, title), not by content.
CONTROLS = """() => {
  const picked = 'button, a[href], input:not([type=hidden]), textarea, select, [role=button], [role=link], [role=tab], '
    + '[role=checkbox], [role=radio], [role=switch], [tabindex]:not([tabindex="-1"])';
  return [...document.querySelectorAll(picked)].filter(e => e.checkVisibility()).map(e => {
    const by = (e.getAttribute('aria-labelledby') || '').split(/\\s+/).filter(Boolean)
      .map(i => (document.getElementById(i) || {}).innerText || '').join(' ').trim();
    const labels = e.labels ? [...e.labels].map(l => l.innerText.trim()).join(' ').trim() : '';
    const text = e.tagName === 'INPUT' || e.tagName === 'TEXTAREA' ? '' : (e.innerText || '').trim();
    return {what: `${e.tagName.toLowerCase()}.${String(e.className.baseVal ?? e.className).split(' ')[0]}`,
            name: by || e.getAttribute('aria-label') || labels || text,
            words: [e.getAttribute('aria-label'), e.getAttribute('title')].filter(Boolean)};
  });
}"""
EN = {"locale": "en-US", "extra_http_headers": {"Accept-Language": "en-US,en;q=0.9"}}
FILE_NAME = re.compile(r"^[\w.-]{1,200}\.[A-Za-z0-9]{1,5}$")
OTHER_LANGUAGE = {"zh": re.compile(r"[A-Za-z]{3,}"), "en": re.compile(r"[\u4e00-\u9fff]")}


def unnamed_or_foreign(page, language: str) -> list[str]:
    """Visible controls with no accessible name, or named (aria-label, title) in the other language."""
    out = []
    for control in page.evaluate(CONTROLS):
        if not control["name"]:
            out.append(f"{control['what']}: no name")
        # A document's file name (a source link's tooltip) is its name, in no language.
        words = [w for w in control["words"] if not FILE_NAME.match(w)]
        out += [f"{control['what']}: {w!r}" for w in words if OTHER_LANGUAGE[language].search(w)]
    return out


@pytest.mark.parametrize("language", ["zh", "en"])
@pytest.mark.parametrize("path", ["/", "/widget/"])
def test_every_control_is_named_in_the_pages_language_at_390_and_420_px(site, browser, path, language):
    """Issue 44: Gradio's own buttons too (a code block's copy said "copy", a toast's close "Close" on a Chinese
    page), after a reply with code blocks and a 👎 (its reasons, comment box and toast), at the phone's and the
    widget's width."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, **(ZH if language == "zh" else EN))
    page = context.new_page()
    try:
        open_loaded(page, site + path)
        ask(page, QUESTION if language == "zh" else "NCCL error: libnccl.so not found in multi-GPU training")
        dislike_last(page)
        found = {}
        for width, height in ((390, 844), (420, 640)):
            page.set_viewport_size({"width": width, "height": height})
            rendered(page)
            found[width] = unnamed_or_foreign(page, language)
        assert found == {390: [], 420: []}
        assert page.evaluate("document.querySelectorAll('button.toast-close').length") > 0  # the toast was checked
    finally:
        context.close()


@pytest.mark.parametrize("width,height", [(390, 844), (420, 640)])
def test_every_reason_the_comment_box_and_the_contact_are_on_screen_on_a_phone(site, browser, width, height):
    context = browser.new_context(viewport={"width": width, "height": height}, **ZH)
    page = context.new_page()
    try:
        open_loaded(page, site + "/widget/")
        ask(page, QUESTION)
        dislike_last(page)
        page.wait_for_selector(f".bot-reasons a[href^='{CONTACT}']", timeout=10_000)
        boxes = page.evaluate("""() => [...document.querySelectorAll('#vote-reason label, .bot-reasons a, #vote-comment textarea, #vote-comment input')]
          .map(e => { const r = e.getBoundingClientRect(); return {text: (e.innerText || e.id).trim(), left: r.left,
            right: r.right, top: r.top, bottom: r.bottom}; })""")
        off = [b for b in boxes if b["left"] < 0 or b["right"] > width + 0.5 or b["top"] < 0 or b["bottom"] > height]
        assert len(boxes) == 7 and off == [], off  # five reasons, the comment box and the contact link
    finally:
        context.close()


WHERE = """() => Object.fromEntries(['.bot-top', '#chat .bubble-wrap', '#question'].map(s => {
  const r = document.querySelector(s).getBoundingClientRect(); return [s, [r.top, r.bottom, r.left, r.right]]; }))"""


@pytest.mark.parametrize("path", ["/widget/", "/"])
def test_a_toast_moves_nothing_and_covers_no_control(site, browser, path):
    context = browser.new_context(viewport={"width": 420, "height": 640}, **ZH)
    page = context.new_page()
    try:
        open_loaded(page, site + path)
        ask(page, QUESTION)
        before = page.evaluate(WHERE)
        page.get_by_role("button", name=LIKE).last.click()
        page.wait_for_selector(".toast-body", state="visible", timeout=15_000)
        rendered(page)
        assert page.evaluate(WHERE) == before
        covered = page.evaluate("""() => { const t = document.querySelector('.toast-body').getBoundingClientRect();
          return [...document.querySelectorAll('.bot-top button, #chat button, #question textarea, #chat [data-testid=bot]')]
            .filter(e => e.checkVisibility()).map(e => [e, e.getBoundingClientRect()])
            .filter(([e, r]) => Math.min(r.bottom, t.bottom) - Math.max(r.top, t.top) > 1
              && Math.min(r.right, t.right) - Math.max(r.left, t.left) > 1 && !e.closest('.bubble-wrap'))
            .map(([e]) => e.getAttribute('aria-label') || e.className); }""")
        assert covered == []
    finally:
        context.close()


def test_admin_follows_dark_mode(site, browser):
    context = browser.new_context(
        viewport={"width": 1280, "height": 800},
        color_scheme="dark",
        extra_http_headers={"Authorization": f"Bearer {ADMIN}"},
    )
    page = context.new_page()
    try:
        page.goto(site + "/admin", wait_until="load")
        colours = page.evaluate("""() => ['body', 'header', 'section.card'].map(s => {
          const c = getComputedStyle(document.querySelector(s)).backgroundColor.match(/[\\d.]+/g).map(Number);
          return Math.max(...c.slice(0, 3)); })""")
        assert max(colours) < 60, colours  # dark backgrounds, not the light theme's white
    finally:
        context.close()


@pytest.mark.parametrize("path", ["/", "/widget/"])
def test_code_is_never_cut_at_the_right_edge_of_a_phone(site, browser, path):
    context = browser.new_context(viewport={"width": 390, "height": 844}, **ZH)
    page = context.new_page()
    try:
        open_loaded(page, site + path)
        ask(page, "多机多卡训练怎么启动")  # a reply with a long command line
        hidden = page.evaluate("""() => [...document.querySelectorAll('#chat pre')].filter(e => e.checkVisibility())
          .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.innerText.slice(0, 40))""")
        assert page.evaluate("document.querySelectorAll('#chat pre').length") > 0 and hidden == []
    finally:
        context.close()
