"""Issue 35, what a person sees, in Debian's headless Chromium (repository seeds, ``hash`` embedder):

- a reply with nothing to rate (the hand-off "转人工", the "talk to a person" button's reply) shows no 👍/👎, also
  after a reload; an answer keeps them, and on the full page the hand-off keeps its copy icon;
- no blank band above the messages on a 390×844 phone: the welcome starts at the top of the chat (its empty icon
  row took 28 px with a line under it) and the first message just below the icon row (Gradio's 16 px padding and
  20 px margin left 64 px of white above it).
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
        assert welcome["welcome"] <= 12, welcome  # was 44: an empty icon row, its line, then padding
        ask(page, "NCCL timeout on 8 GPUs")
        asked = page.evaluate(BAND)
        page.screenshot(path=str(shots / f"band_{'widget' if 'widget' in path else 'page'}_asked.png"))
        assert asked["icons"] is not None and asked["icons"] <= 30, asked  # the icon row: one 28 px strip
        assert asked["first"] - asked["icons"] <= 12, asked  # was 36 px of white under it
    finally:
        context.close()
