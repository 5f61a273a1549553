"""What a person sees, in Debian's headless Chromium: the widget, the full page and the source view at
400×640, 390×844 and 1280×900, in light and dark colour schemes.

After questions that bring suggestion chips, a 👍 and a 👎 (toasts and the reason picker), nothing visible
covers anything else (bubbles, chips, buttons, links, the picker, toasts, the bar, the ↓ button, the input),
with the chat scrolled to its end and to its top (where the ↓ shows), and nothing scrolls sideways. The source
view names the document (not its file), its linked line is never under its sticky bar, and its text is readable
(contrast ratio at least 4.5, WCAG AA) in both schemes.

One app (repository seeds, ``hash`` embedder) and one browser for the module; each page is reused across sizes
(``set_viewport_size``) and schemes (``emulate_media``), so the module costs about a minute. Screenshots go to
``$BOT_SCREENSHOT_DIR`` or ``screenshots/``: look at them.
"""

from __future__ import annotations

import json
import re
import urllib.request
from urllib.parse import urlsplit

import pytest

from fixtures.browser import ask, chromium_missing_reason, open_loaded, rendered, shots, site  # noqa: F401 (fixtures)

_missing = chromium_missing_reason()
pytestmark = [pytest.mark.browser, pytest.mark.skipif(_missing is not None, reason=_missing or "")]

SIZES = [(400, 640), (390, 844), (1280, 900)]
SCHEMES = ["light", "dark"]
# Both bring suggestion chips with the seeds; the second cites an old (Fluid 1.x) section: a long reply.
QUESTIONS = ["How do I stop TensorFlow from grabbing all GPU memory?", "多卡训练报错 libnccl.so 找不到"]

# Every visible box that must not cover another. Inside the chat's scroll area only the visible part counts;
# a link is measured line by line (a link wrapped over two lines is two boxes, not their union).
BOXES = """() => {
  const selector = ['.bot-top', '.bot-top button', '#chat [data-testid=bot]', '#chat [data-testid=user]',
    '#chat button', '#chat a', '.bot-reasons', '.bot-reasons label', '.bot-reasons a', '.bot-reasons .bot-reason-label',
    '.toast-body', '#question textarea', '#question button'].join(', ');
  const picked = [...new Set(document.querySelectorAll(selector))];
  const scroller = document.querySelector('#chat .bubble-wrap');
  const clip = scroller.getBoundingClientRect();
  const out = [];
  picked.forEach((e, i) => {
    // Not drawn: hidden, transparent, or inside a closed <details> (its rectangle is still computed).
    if (!e.checkVisibility({opacityProperty: true, visibilityProperty: true, contentVisibilityAuto: true})) return;
    const rects = e.tagName === 'A' ? [...e.getClientRects()] : [e.getBoundingClientRect()];
    for (const r of rects) {
      let {left, right, top, bottom} = r;
      if (scroller.contains(e)) { top = Math.max(top, clip.top); bottom = Math.min(bottom, clip.bottom); }
      if (right - left < 1 || bottom - top < 1) continue;
      out.push({i, left, right, top, bottom,
                name: (e.getAttribute('aria-label') || e.dataset.testid || e.className || e.tagName).toString().slice(0, 40),
                text: (e.innerText || e.value || '').trim().slice(0, 30)});
    }
  });
  const nested = [];
  picked.forEach((a, i) => picked.forEach((b, j) => { if (i !== j && a.contains(b)) nested.push(i + ':' + j); }));
  return {boxes: out, nested};
}"""

SIDEWAYS = """() => {
  const page = document.scrollingElement;
  const scroller = document.querySelector('#chat .bubble-wrap');
  return {page: page.scrollWidth - page.clientWidth, chat: scroller ? scroller.scrollWidth - scroller.clientWidth : 0};
}"""

SCROLL_CHAT = (
    "(top) => { const b = document.querySelector('#chat .bubble-wrap'); b.scrollTop = top ? 0 : b.scrollHeight; }"
)

# WCAG contrast of each text element against the first opaque background behind it.
CONTRAST = """(selector) => {
  const parse = s => s.match(/[\\d.]+/g).map(Number);
  const lum = c => { const [r, g, b] = c.slice(0, 3).map(v => { v /= 255;
    return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const behind = e => { for (; e; e = e.parentElement) { const c = parse(getComputedStyle(e).backgroundColor);
    if (c.length < 4 || c[3] > 0.5) return c; } return [255, 255, 255]; };
  return [...document.querySelectorAll(selector)].filter(e => e.innerText.trim()).slice(0, 40).map(e => {
    const a = lum(parse(getComputedStyle(e).color)), b = lum(behind(e));
    return {text: e.innerText.trim().slice(0, 30), ratio: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)}; });
}"""
SOURCE_TEXT = "h1, nav a, .meta .document, .meta, .era, .line .n, .line .t, mark"


def overlaps(page) -> list[tuple[dict, dict]]:
    found = page.evaluate(BOXES)
    nested = set(found["nested"])
    boxes = found["boxes"]
    pairs = []
    for n, a in enumerate(boxes):
        for b in boxes[n + 1 :]:
            if a["i"] == b["i"] or f"{a['i']}:{b['i']}" in nested or f"{b['i']}:{a['i']}" in nested:
                continue
            if (
                min(a["right"], b["right"]) - max(a["left"], b["left"]) > 1
                and min(a["bottom"], b["bottom"]) - max(a["top"], b["top"]) > 1
            ):
                pairs.append((a, b))
    return pairs


def describe(pair: tuple[dict, dict]) -> str:
    return " covers ".join(
        f"{b['name']} {b['text']!r} at ({b['left']:.0f},{b['top']:.0f})-({b['right']:.0f},{b['bottom']:.0f})"
        for b in pair
    )


def vote_up_then_down(page) -> None:
    """👍 then 👎 on the last answer: two toasts, then the reason picker (a 👍 first, so the 👎 is always new)."""
    page.get_by_role("button", name=re.compile("^(Like|赞)$")).last.click()
    page.wait_for_selector(".bot-reasons", state="hidden", timeout=15_000)
    # The 👍 answered (its toast) before the 👎: clicked at once, the 👎 could be handled first and then undone.
    page.locator(".toast-message-text").filter(
        has_text=re.compile("^(Thanks for the feedback!|感谢反馈！)$")
    ).last.wait_for(timeout=15_000)
    page.get_by_role("button", name=re.compile("^(Dislike|踩)$")).last.click()
    page.wait_for_selector(".bot-reasons", state="visible", timeout=15_000)
    page.wait_for_selector(".toast-body", state="visible", timeout=15_000)
    rendered(page)


@pytest.mark.parametrize("path", ["/widget/", "/"])
def test_nothing_covers_anything_at_three_sizes_light_and_dark(site, browser, shots, path):
    name = "widget" if path == "/widget/" else "page"
    context = browser.new_context(viewport={"width": SIZES[0][0], "height": SIZES[0][1]}, locale="zh-CN")
    page = context.new_page()
    try:
        page.goto(site + path, wait_until="load")
        page.wait_for_selector("#question textarea", timeout=60_000)
        for question in QUESTIONS:
            ask(page, question, options=True)
        problems = []
        if name == "widget":  # Gradio's own chrome: a copy icon on every message, a trash icon ("New chat" clears)
            labels = page.evaluate(
                "() => [...document.querySelectorAll('#chat button')].filter(b => b.checkVisibility())"
                ".map(b => b.getAttribute('aria-label') || b.title || '')"
            )
            problems += [
                ("widget chrome", label)
                for label in labels
                if label in ("Copy message", "Copy", "复制", "Clear", "清空对话")
            ]
        for width, height in SIZES:
            page.set_viewport_size({"width": width, "height": height})
            for scheme in SCHEMES:
                page.emulate_media(color_scheme=scheme)
                vote_up_then_down(page)
                for top in (False, True):  # the end of the chat, then its top (where the ↓ shows)
                    page.evaluate(SCROLL_CHAT, top)
                    rendered(page)
                    if top:
                        page.wait_for_selector(
                            "#chat .scroll-down-button-container button", state="visible", timeout=5_000
                        )
                    found = overlaps(page)
                    if found:
                        problems.append(
                            (width, height, scheme, "top" if top else "end", [describe(p) for p in found[:3]])
                        )
                    sideways = page.evaluate(SIDEWAYS)
                    if sideways["page"] > 1 or sideways["chat"] > 1:
                        problems.append((width, height, scheme, "sideways", sideways))
                page.screenshot(path=str(shots / f"layout_{name}_{width}x{height}_{scheme}.png"))
        assert not problems, problems
    finally:
        context.close()


def test_source_view_names_the_document_keeps_the_linked_line_in_view_and_reads_in_dark(site, browser, shots):
    request = urllib.request.Request(
        site + "/api/ask",
        data=json.dumps({"question": QUESTIONS[1]}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        hit = json.load(response)["hits"][0]
    parts = urlsplit(hit["url"])
    section_url = f"{site}/source?{parts.query}#{parts.fragment}"
    whole_url = f"{site}/source?{parts.query}&whole=1#{parts.fragment}"  # the linked line in the middle of the file
    context = browser.new_context(viewport={"width": SIZES[0][0], "height": SIZES[0][1]})
    page = context.new_page()
    problems = []
    try:
        for width, height in SIZES:
            page.set_viewport_size({"width": width, "height": height})
            for scheme in SCHEMES:
                page.emulate_media(color_scheme=scheme)
                for view, url in (("section", section_url), ("whole", whole_url)):
                    page.goto(url, wait_until="load")
                    page.wait_for_selector("#" + parts.fragment)
                    rendered(page)
                    where = (width, height, scheme, view)
                    bar = page.evaluate("document.querySelector('header').getBoundingClientRect().bottom")
                    line = page.evaluate(f"document.getElementById('{parts.fragment}').getBoundingClientRect().top")
                    if line < bar - 1:
                        problems.append((*where, "linked line under the bar", line, bar))
                    if (
                        page.evaluate("document.scrollingElement.scrollWidth - document.scrollingElement.clientWidth")
                        > 1
                    ):
                        problems.append((*where, "scrolls sideways"))
                    # The seed files are named by a hash ("000_786bff9181b08d52.txt"); the page names the document.
                    meta = page.evaluate("(document.querySelector('.meta') || {}).innerText || ''")
                    if hit["source"] in page.inner_text("body") or "GPU" not in meta:
                        problems.append((*where, "the file name instead of the document's title", meta))
                    problems += [
                        (*where, "contrast", c) for c in page.evaluate(CONTRAST, SOURCE_TEXT) if c["ratio"] < 4.5
                    ]
                page.screenshot(path=str(shots / f"layout_source_{width}x{height}_{scheme}.png"))
        assert not problems, problems[:8]
    finally:
        context.close()


GAPS = """() => { const r = document.querySelector('#chat').getBoundingClientRect();
  return {left: r.left, right: document.documentElement.clientWidth - r.right}; }"""


def test_the_chat_uses_a_phones_width_and_is_centred_on_a_wide_screen(site, browser, shots):
    """Seen on screenshots: the page kept Gradio's 32 px on each side of a 390 px phone (its @media rule never
    applied: Gradio scopes rules in @media under .contain), and on a 1280 px screen it sat at the left edge with
    the empty space all on the right. The widget fills its frame at every width."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, locale="zh-CN")
    page = context.new_page()
    problems = []
    try:
        for path in ("/", "/widget/"):
            open_loaded(page, site + path)
            for width, height in SIZES:
                page.set_viewport_size({"width": width, "height": height})
                rendered(page)
                gaps = page.evaluate(GAPS)
                narrow = path == "/widget/" or width < 640
                if narrow and max(gaps.values()) > 8:
                    problems.append((path, width, "margins wider than 8 px", gaps))
                if not narrow and abs(gaps["left"] - gaps["right"]) > 2:
                    problems.append((path, width, "not centred", gaps))
            page.screenshot(path=str(shots / f"layout_width_{'widget' if 'widget' in path else 'page'}_1280x900.png"))
        assert not problems, problems
    finally:
        context.close()


# WCAG contrast of the text a person reads as drawn: its colour faded by every opacity on the way up (an opacity
# on a block and again on its paragraph compound) over the first opaque background behind it.
DRAWN_CONTRAST = """(selector) => {
  // rgb(r, g, b[, a]) in 0–255, or color(srgb r g b[ / a]) in 0–1 (what a color-mix() computes to)
  const parse = s => { const n = s.match(/[\\d.]+/g).map(Number);
    return s.startsWith('color(') ? [...n.slice(0, 3).map(v => v * 255), ...n.slice(3)] : n; };
  const lum = c => { const [r, g, b] = c.slice(0, 3).map(v => { v /= 255;
    return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  return [...document.querySelectorAll(selector)].filter(e => e.checkVisibility() && e.innerText.trim()).map(e => {
    let alpha = 1, bg = [255, 255, 255];
    for (let x = e; x; x = x.parentElement) alpha *= parseFloat(getComputedStyle(x).opacity);
    for (let x = e; x; x = x.parentElement) { const c = parse(getComputedStyle(x).backgroundColor);
      if (c.length < 4 || c[3] > 0.5) { bg = c; break; } }
    const fg = parse(getComputedStyle(e).color); alpha *= fg.length > 3 ? fg[3] : 1;
    const drawn = fg.slice(0, 3).map((v, i) => v * alpha + bg[i] * (1 - alpha));
    const a = lum(drawn), b = lum(bg);
    return {text: e.innerText.trim().slice(0, 30), ratio: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)}; });
}"""
TRANSITIONS_DONE = (
    "() => document.getAnimations().filter(a => a instanceof CSSTransition).every(a => a.playState !== 'running')"
)
BAR_TEXT = ".bot-widget-hint p, .bot-header h1, .bot-header p, .bot-top button, #chat button.example"


def test_the_bar_and_the_welcome_read_at_contrast_4_5_light_and_dark(site, browser):
    """Seen on screenshots: the widget's hint ("Ask or paste an error log …") was pale grey, faded twice (0.75 on
    its block and again on its paragraph, 0.42 in all): 2.5 : 1 in light, 3.8 : 1 in dark, below WCAG AA's 4.5."""
    context = browser.new_context(viewport={"width": 400, "height": 640}, locale="zh-CN")
    page = context.new_page()
    problems = []
    try:
        for path in ("/widget/", "/"):
            open_loaded(page, site + path)
            for width, height in SIZES:
                page.set_viewport_size({"width": width, "height": height})
                for scheme in SCHEMES:
                    page.emulate_media(color_scheme=scheme)
                    # The scheme is in effect, its colour transitions (0.2 s) started and finished: read them after.
                    page.wait_for_function(
                        "(dark) => matchMedia('(prefers-color-scheme: dark)').matches === dark", arg=scheme == "dark"
                    )
                    rendered(page)
                    page.wait_for_function(TRANSITIONS_DONE)
                    rendered(page)
                    problems += [
                        (path, width, scheme, c) for c in page.evaluate(DRAWN_CONTRAST, BAR_TEXT) if c["ratio"] < 4.5
                    ]
        assert not problems, "\n".join(map(str, problems))
    finally:
        context.close()
