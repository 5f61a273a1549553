"""The chat page and the portal widget (Gradio), by job:

- :mod:`~bot.web.ui.layout`: :func:`make_ui` (the Blocks), the theme, and the static styles and scripts;
- :mod:`~bot.web.ui.state`: :class:`ChatState`, its bounds, and its copy in the tab (:func:`snapshot` / :func:`restore`);
- :mod:`~bot.web.ui.events`: what submitting, answering, voting and "talk to a person" do (testable without a browser);
- :mod:`~bot.web.ui.strings`: the UI's words per language (:func:`ui_language`, :func:`ui_text`);
- :mod:`~bot.web.ui.welcome`: the title (``BOT_TITLE``) and the welcome in the UI's language, its example
  questions from the knowledge base.

The names other modules import are re-exported here (the /admin page takes its language from here too):

    >>> ui_language("zh-CN,zh;q=0.9,en;q=0.8"), ui_text("en", "new_chat")
    ('zh', 'New chat')
"""

from bot.records import VOTE_REASONS
from bot.web.ui.events import (
    Deps,
    Recorder,
    ask_person,
    choose,
    exchanges,
    reason_prompt,
    respond,
    submit,
    vote,
    vote_reason,
)
from bot.web.ui.layout import AFTER_LOAD_JS, CSS, SCROLL_JS, THEME, WIDGET_CSS, make_ui, welcome_examples
from bot.web.ui.state import (
    HEAD_CHARS,
    MAX_MESSAGES,
    MAX_SEARCH_CHARS,
    MAX_SESSIONS,
    MAX_SNAPSHOT_CHARS,
    MAX_TURNS,
    SESSION_TTL,
    AnswerInfo,
    ChatState,
    cap_input,
    feedback_values,
    restore,
    snapshot,
)
from bot.web.ui.strings import SAMPLE_LOG, UI, UiLanguage, ui_language, ui_text
from bot.web.ui.welcome import Welcome, examples, page_title

__all__ = [
    "AFTER_LOAD_JS",
    "CSS",
    "HEAD_CHARS",
    "MAX_MESSAGES",
    "MAX_SEARCH_CHARS",
    "MAX_SESSIONS",
    "MAX_SNAPSHOT_CHARS",
    "MAX_TURNS",
    "SAMPLE_LOG",
    "SCROLL_JS",
    "SESSION_TTL",
    "THEME",
    "UI",
    "VOTE_REASONS",
    "WIDGET_CSS",
    "AnswerInfo",
    "UiLanguage",
    "Welcome",
    "ChatState",
    "Deps",
    "Recorder",
    "ask_person",
    "cap_input",
    "choose",
    "examples",
    "exchanges",
    "feedback_values",
    "make_ui",
    "page_title",
    "reason_prompt",
    "respond",
    "restore",
    "snapshot",
    "submit",
    "ui_language",
    "ui_text",
    "vote",
    "vote_reason",
    "welcome_examples",
]
