"""The chat as Gradio Blocks: the full page and the compact portal widget.

This module only lays out components and routes their events to the handlers in
:mod:`bot.web.ui.events` over the per-tab :class:`~bot.web.ui.state.ChatState`. Styles and
scripts are static files next to it (``static/chat.css``, ``static/widget.css``, ``static/*.js``);
the words are in :mod:`bot.web.ui.strings`, the title and example questions in :mod:`bot.web.ui.welcome`.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gradio as gr

from bot.answer.reply import Contact
from bot.limits import VOTE_COMMENT_CHARS
from bot.records import VOTE_REASONS
from bot.settings import Settings, WebSettings
from bot.store.feedback import with_origin
from bot.web.http import public_base, request_base
from bot.web.ui.events import (
    Deps,
    Recorder,
    ask_person,
    choose,
    notify,
    reason_prompt,
    respond,
    submit,
    vote,
    vote_reason,
    without_votes,
)
from bot.web.ui.first_paint import FirstPaint
from bot.web.ui.state import (
    MAX_SESSIONS,
    SESSION_TTL,
    ChatState,
    as_state,
    feedback_values,
    restore,
    session_id,
    snapshot,
    trim,
)
from bot.web.ui.strings import UI, a11y_labels, ui_language, ui_text
from bot.web.ui.welcome import Welcome, as_chips, page_title

if TYPE_CHECKING:
    from bot.engine.answerer import ServingEngine

STATIC = Path(__file__).with_name("static")


def static_text(name: str) -> str:
    """A file of ``static/``; for scripts without their leading ``//`` comment lines (Gradio wraps a script's
    text in a call, where a comment before the function would swallow it)."""
    text = (STATIC / name).read_text(encoding="utf-8")
    if name.endswith(".js"):
        lines = text.splitlines()
        while lines and lines[0].lstrip().startswith("//"):
            lines.pop(0)
        text = "\n".join(lines).strip()
    return text


CSS = static_text("chat.css")
WIDGET_CSS = CSS + static_text("widget.css")
# System fonts only: nothing is fetched from font CDNs (offline installs, strict portal CSPs).
THEME = gr.themes.Soft(
    font=["system-ui", "-apple-system", "Segoe UI", "Noto Sans CJK SC", "Microsoft YaHei", "sans-serif"],
    font_mono=["ui-monospace", "SFMono-Regular", "Menlo", "Noto Sans Mono CJK SC", "monospace"],
)
SCROLL_JS = static_text("scroll.js")
STORAGE_KEY = "gpu-bot:" + "PAGE"
SAVE_JS = static_text("save.js")
LOAD_JS = static_text("load.js")
AFTER_LOAD_JS = static_text("after_load.js").replace("LABELS", json.dumps(a11y_labels(), ensure_ascii=False))
KEEP_PLACE_JS = static_text("keep_place.js")


# ---------------------------------------------------------------- layout


def welcome_examples(engine: ServingEngine, settings: Settings) -> Welcome:
    """The welcome's example questions in each UI language (:class:`~bot.web.ui.welcome.Welcome`) from the loaded
    engine's sections or, while a stand-in engine is still loading the index (the "ui" start order builds the
    page first and must not wait for it), from the documents in the seeds folder, parsed directly (no model).
    ``app.py`` computes them once for the page and the widget."""
    if getattr(engine, "ready", True) is not False:
        try:
            return Welcome.of(engine.sections, engine.meta)
        except AttributeError:
            return Welcome()
    from bot.kb.meta import load_meta
    from bot.kb.parse import parse_folder

    sections, _ = parse_folder(
        settings.seeds_dir,
        max_bytes=settings.max_seed_bytes,
        max_sections=settings.max_seed_sections,
        max_file_bytes=settings.max_seed_file_bytes,
    )
    meta, _ = load_meta(settings.seeds_dir, sections)
    return Welcome.of(sections, meta.get)


def make_ui(
    engine: ServingEngine,
    settings: Settings,
    web: WebSettings,
    *,
    compact: bool = False,
    recorder: Recorder | None = None,
    contact: Contact | None = None,
    welcome: Welcome | None = None,
) -> gr.Blocks:
    """The chat as Gradio Blocks; ``compact`` is the portal widget (no header, fills its frame); ``welcome``:
    the example questions, when the caller already has them (else :func:`welcome_examples`); each tab shows the
    welcome in its own language (:meth:`Welcome.shown`, set by the load event)."""
    deps = Deps(engine, settings, web, with_origin(recorder, "widget" if compact else "ui"), contact or Contact())
    limit = settings.max_input_chars
    # No contact configured: the button gives what to collect for a colleague, and says so (no promise of a person).
    person_key = "person" if deps.contact.configured else "person_none"
    page = "widget" if compact else "page"
    save_js = SAVE_JS.replace("KEY", STORAGE_KEY.replace("PAGE", page))
    load_js = LOAD_JS.replace("KEY", STORAGE_KEY.replace("PAGE", page))
    keep_place_js = KEEP_PLACE_JS.replace("KEY", STORAGE_KEY.replace("PAGE", page) + ":place")
    # The operator's title (BOT_TITLE) or a neutral one; the welcome's examples are questions the indexed
    # sections answer, so another company's documents never show this repository's seed questions.
    title = {language: page_title(settings.title, language) for language in UI}
    both_titles = title["zh"] if title["zh"] == title["en"] else f"{title['zh']} · {title['en']}"
    welcome = welcome_examples(engine, settings) if welcome is None else welcome

    def base_of(request: gr.Request | None) -> str:
        return request_base(request, web) if request is not None else public_base({}, "http", web)

    def chat_value(state: ChatState):
        text, questions = welcome.shown(state.language)
        return gr.update(
            value=state.messages, feedback_value=feedback_values(state), placeholder=text, examples=as_chips(questions)
        )

    # --- thin Gradio wrappers around the handlers above
    def on_submit(message: str | None, state: Any):
        state = as_state(state)
        state, taken = submit(state, message, limit)
        if not taken:
            notify(state.language, ui_text(state.language, "empty"))
            return gr.update(), gr.update(), state
        return "", state.messages, state

    def on_answer(state: Any, request: gr.Request):
        state = as_state(state)
        if not state.session:
            state.session = session_id(request)
        state = respond(deps, state, base_of(request))
        return state.messages, state, snapshot(state)

    def on_example(state: Any, evt: gr.SelectData):
        state = as_state(state)
        value = evt.value if isinstance(evt.value, dict) else {"text": str(evt.value)}
        state, _ = submit(state, str(value.get("text", "")), limit)
        return state.messages, state

    def on_option(state: Any, evt: gr.SelectData):
        state = choose(as_state(state), evt.value)
        return state.messages, state

    def on_vote(state: Any, evt: gr.LikeData):
        state, toast = vote(deps, as_state(state), evt.index, evt.liked)
        if toast:
            notify(state.language, toast)
        show = state.disliked is not None
        # One row (chat.css): the question before the reasons, the contact (if any) after them.
        label, _, contact = reason_prompt(deps, state).partition("  \n")
        return (
            state,
            gr.update(visible=show),
            snapshot(state),
            gr.update(value=label),
            gr.update(value=contact, visible=bool(contact)),
            gr.update(value=None),
            gr.update(value=""),
        )

    def on_reason(reason: str | None, comment: str | None, state: Any):
        """A reason picked (with the comment typed so far, if any) or a comment sent with Enter (reason "other")."""
        state = as_state(state)
        if not reason and not (comment or "").strip():
            return state, gr.update(), gr.update(), gr.update()
        state, toast = vote_reason(deps, state, reason or "", comment or "")
        if toast:
            notify(state.language, toast)
        return state, gr.update(visible=False), snapshot(state), gr.update(value="")

    def on_person(state: Any):
        state = as_state(state)
        reply = ask_person(deps, state)
        state.messages.append({"role": "assistant", "content": without_votes(reply.markdown)})  # no answer to rate
        trim(state)
        return state.messages, state, snapshot(state)

    def on_new_chat(state: Any):
        old = as_state(state)
        # A new conversation is a new session for the record: /admin reads a question in the context of its
        # session's earlier questions, and those from before "New chat" are no context of it (issue 35).
        fresh = ChatState(language=old.language, session=uuid.uuid4().hex[:16])
        return "", [], fresh, gr.update(visible=False), ""

    def on_load(saved: str | None, request: gr.Request):
        state = ChatState()
        headers = {k.lower(): v for k, v in dict(getattr(request, "headers", {}) or {}).items()}
        state.language = ui_language(headers.get("accept-language"))
        state.session = session_id(request)
        state = restore(saved, state)
        t = UI[state.language]
        reasons = [(t[r], r) for r in VOTE_REASONS]
        top = [
            gr.update(value=t["hint"] if compact else f"# {title[state.language]}\n{t['intro']}"),
            gr.update(value=t[person_key]),
            gr.update(value=t["new_chat"]),
        ]
        return (
            chat_value(state),
            state,
            gr.update(placeholder=t["placeholder"]),
            gr.update(choices=reasons),
            gr.update(value=t["reason_label"]),
            gr.update(placeholder=t["comment_placeholder"]),
            *top,
            state.language,
            "" if compact else title[state.language],
        )

    with gr.Blocks(title=both_titles, fill_height=True, analytics_enabled=False) as blocks:
        state = gr.State(ChatState(), time_to_live=SESSION_TTL)
        saved = gr.Textbox(visible=False, elem_id="bot-snapshot")
        language = gr.Textbox(visible=False, elem_id="bot-language")
        # The tab's title in the UI's language (the HTML names both until the load event knows which); none for the
        # widget, whose document may be the portal's own page (Gradio's web component): its title is the portal's.
        tab_title = gr.Textbox(visible=False, elem_id="bot-tab-title")
        with gr.Row(elem_classes=["bot-top", "bot-widget-bar" if compact else "bot-page-bar"], equal_height=True):
            if compact:  # the portal's panel has its own title: one slim bar with a hint and the buttons
                intro = gr.Markdown(UI["en"]["hint"], elem_classes=["bot-widget-hint"])
            else:
                intro = gr.Markdown(
                    f"# {both_titles}\n{UI['zh']['intro']}  \n{UI['en']['intro']}", elem_classes=["bot-header"]
                )
            person = gr.Button(UI["en"][person_key], elem_id="talk-to-person", scale=0, size="sm", variant="secondary")
            new = gr.Button(UI["en"]["new_chat"], elem_id="new-chat", scale=0, size="sm", variant="secondary")
        chatbot = gr.Chatbot(
            label="Chat",
            show_label=False,
            elem_id="chat",
            elem_classes=["bot-chat"],
            # English until the load event shows the tab's language (chat.css keeps it hidden until then). Without
            # "Try:": an embedded widget's first frame (before its CSS and the chips) showed "Try:" and nothing after.
            placeholder=Welcome().shown("en")[0],
            examples=as_chips(welcome.shown("en")[1]),
            scale=1,
            # The chat scrolls inside; the input stays in view (dvh: phones' browser bars are not counted twice).
            height="100%",
            sanitize_html=True,
            allow_tags=False,
            render_markdown=True,
            feedback_options=("Like", "Dislike"),
            # Both copy the transcript (one icon above the messages); the slim widget has no copy icon on every
            # message, and no trash icon (its "New chat" clears; chat.css hides the icon Gradio always draws).
            buttons=["copy_all"] if compact else ["copy", "copy_all"],
            autoscroll=False,  # SCROLL_JS shows the start of each answer (its summary), not its end
            layout="bubble",
            latex_delimiters=[],
            group_consecutive_messages=False,  # "talk to a person" after an answer is its own bubble
        )
        with gr.Row(visible=False, elem_classes=["bot-reasons"]) as reason_row:
            reason_label = gr.Markdown(UI["en"]["reason_label"], elem_classes=["bot-reason-label"])
            reasons = gr.Radio(
                choices=[(UI["en"][r], r) for r in VOTE_REASONS],
                show_label=False,
                elem_id="vote-reason",
                container=False,
            )
            # The user's own words, optional: Enter sends them (with the reason picked after, if any).
            reason_comment = gr.Textbox(
                placeholder=UI["en"]["comment_placeholder"],
                show_label=False,
                lines=1,
                max_lines=1,
                max_length=VOTE_COMMENT_CHARS,
                elem_id="vote-comment",
                container=False,
            )
            reason_contact = gr.Markdown("", visible=False, elem_classes=["bot-reason-contact"])
        box = gr.Textbox(
            placeholder=UI["en"]["placeholder"],
            show_label=False,
            lines=1,
            max_lines=4 if compact else 6,
            submit_btn=True,
            elem_id="question",
            autofocus=False,  # focused by AFTER_LOAD_JS on wide screens only: a phone must load at the top
        )

        scroll_user = SCROLL_JS.replace("ROLE", "user")
        scroll_bot = SCROLL_JS.replace("ROLE", "bot")
        box.submit(on_submit, [box, state], [box, chatbot, state], show_progress="hidden", api_name="add_user").then(
            None, js=scroll_user
        ).then(on_answer, [state], [chatbot, state, saved], show_progress="minimal", api_name="answer").then(
            None, [saved], None, js=save_js
        ).then(None, js=scroll_bot)
        chatbot.example_select(on_example, [state], [chatbot, state], queue=False).then(
            on_answer, [state], [chatbot, state, saved], show_progress="minimal"
        ).then(None, [saved], None, js=save_js).then(None, js=scroll_bot)
        chatbot.option_select(on_option, [state], [chatbot, state], queue=False).then(None, js=scroll_user).then(
            on_answer, [state], [chatbot, state, saved], show_progress="minimal"
        ).then(None, [saved], None, js=save_js).then(None, js=scroll_bot)
        chatbot.like(
            on_vote, [state], [state, reason_row, saved, reason_label, reason_contact, reasons, reason_comment]
        ).then(None, [saved], None, js=save_js)
        reasons.select(
            lambda value, comment, s: on_reason(value, comment, s),
            [reasons, reason_comment, state],
            [state, reason_row, saved, reason_comment],
        ).then(None, [saved], None, js=save_js)
        reason_comment.submit(
            lambda comment, s: on_reason("", comment, s),
            [reason_comment, state],
            [state, reason_row, saved, reason_comment],
        ).then(None, [saved], None, js=save_js)
        person.click(on_person, [state], [chatbot, state, saved], queue=False).then(
            None, [saved], None, js=save_js
        ).then(None, js=scroll_bot)
        new.click(on_new_chat, [state], [box, chatbot, state, reason_row, saved], queue=False).then(
            None, [saved], None, js=save_js
        )
        if not compact:  # Gradio shows its trash icon once .clear has a listener; the widget has "New chat" only
            chatbot.clear(on_new_chat, [state], [box, chatbot, state, reason_row, saved], queue=False).then(
                None, [saved], None, js=save_js
            )
        blocks.load(
            on_load,
            [saved],
            [chatbot, state, box, reasons, reason_label, reason_comment, intro, person, new, language, tab_title],
            js=load_js,
            queue=False,
        ).then(None, [language, tab_title], None, js=AFTER_LOAD_JS).then(None, js=keep_place_js)
    blocks.state_session_capacity = MAX_SESSIONS
    # The page's first screen before Gradio has drawn anything (bot.web.ui.shell puts it in the page's HTML).
    blocks.first_paint = FirstPaint(compact, title, welcome, STORAGE_KEY.replace("PAGE", page))
    return blocks
