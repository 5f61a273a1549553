"""The chat as Gradio Blocks: the full page and the compact portal widget.

Formatting lives in :mod:`bot.answer.reply` and conversation rules in :mod:`bot.answer.conversation`;
this module lays out components and routes their events to small functions over a
typed per-session state (:class:`ChatState`):

- :func:`submit` takes the user's message (capped: head lines + tail of a log) and shows it;
- :func:`respond` answers it through :class:`~bot.answer.conversation.Conversation` (or
  :func:`bot.answer.reply.format_intent` for thanks, small talk and "talk to a person") and hands
  the turn's events to the recorder, adding suggested follow-ups from the cited section's
  neighbours;
- :func:`vote` / :func:`vote_reason` record one vote per answer (the last one counts);
- :func:`snapshot` / :func:`restore` keep the conversation in the tab's ``sessionStorage``
  across a reload ("New chat" clears it).

Memory per session is bounded: input is capped before it is stored, the visible history
keeps :data:`MAX_MESSAGES` messages, sessions expire after :data:`SESSION_TTL` seconds idle
and at most :data:`MAX_SESSIONS` are kept per page (the oldest is dropped).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import traceback
import uuid
from dataclasses import dataclass, field
from typing import Any, Protocol

import gradio as gr

from bot.answer.conversation import Conversation, Turn
from bot.answer.turn import Turned, take_turn
from bot.records import Event
from bot.answer.reply import Contact, Reply, format_intent, person_line, truncation_notice, user_echo
from bot.answer.reply import text as reply_text
from bot.settings import Settings
from bot.kb.signature import looks_like_log
from bot.kb.tokenize import detect_language
from bot.store.feedback import with_origin
from bot.web.handoff import Exchange, carrying, finish
from bot.web.http import WebSettings, public_base, request_base

MAX_MESSAGES = 40  # chat bubbles kept per session (older ones scroll away for good)
MAX_TURNS = 12  # conversation turns kept for follow-ups
MAX_SEARCH_CHARS = 8_000  # a turn's search text kept for follow-ups
MAX_SNAPSHOT_CHARS = 600_000  # a restored snapshot larger than this is ignored
SESSION_TTL = 2 * 3600  # seconds of inactivity after which a session's state is dropped
MAX_SESSIONS = 300  # sessions kept in memory per page (full page and widget each)
HEAD_CHARS = 2_000  # of an over-long input, at most this much of its first lines is kept
VOTE_REASONS = ("wrong_section", "outdated", "not_my_framework", "other")

# ---------------------------------------------------------------- UI strings, one table per language

UI: dict[str, dict[str, str]] = {
    "zh": {
        "title": "GPU 训练故障助手",
        "intro": "用中文或英文提问，或直接粘贴报错日志；每个回答都标明出处。",
        "hint": "提问或粘贴报错日志，回答都标明出处",
        "placeholder": "输入问题或粘贴报错日志…",
        "send": "发送",
        "new_chat": "新对话",
        "person": "找人工",
        "person_none": "求助同事",
        "reason_label": "哪里不对？（可选）",
        "toast_title": "提示",
        "wrong_section": "引用的章节不对",
        "outdated": "内容过时",
        "not_my_framework": "不是我用的框架",
        "other": "其他",
        "empty": "请先输入问题，或粘贴报错日志。",
        "vote_up": "感谢反馈！",
        "vote_down": "感谢反馈！愿意的话，选一下哪里不对。",
        "vote_withdrawn": "已撤销评价。",
        "reason_thanks": "已记录原因，谢谢！",
        "welcome": "### 你好！\n\n描述你遇到的 GPU 训练问题，或粘贴完整的报错日志。试试：",
    },
    "en": {
        "title": "GPU Training Troubleshooter",
        "intro": "Ask in Chinese or English, or paste an error log; every answer cites its source.",
        "hint": "Ask or paste an error log; every answer cites its source",
        "placeholder": "Ask a question or paste an error log…",
        "send": "Send",
        "new_chat": "New chat",
        "person": "Talk to a person",
        "person_none": "Ask a colleague",
        "reason_label": "What was wrong? (optional)",
        "toast_title": "Note",
        "wrong_section": "Wrong section",
        "outdated": "Outdated",
        "not_my_framework": "Not my framework",
        "other": "Other",
        "empty": "Type a question or paste an error log first.",
        "vote_up": "Thanks for the feedback!",
        "vote_down": "Thanks for the feedback! If you like, pick what was wrong.",
        "vote_withdrawn": "Vote withdrawn.",
        "reason_thanks": "Reason recorded, thank you!",
        "welcome": "### Hi!\n\nDescribe your GPU training problem or paste the full error log. Try:",
    },
}


def ui_language(accept_language: str | None) -> str:
    """The UI language from the browser's Accept-Language header.

    >>> ui_language("zh-CN,zh;q=0.9,en;q=0.8"), ui_language("en-US,en;q=0.9"), ui_language(None)
    ('zh', 'en', 'en')
    """
    first = (accept_language or "").split(",")[0].strip().lower()
    return "zh" if first.startswith("zh") else "en"


def ui_text(language: str, key: str) -> str:
    return UI["zh" if language == "zh" else "en"][key]


# Kept for the browser tests and the bench: a pasted log that the seeds answer.
SAMPLE_LOG = (
    "I0221 18:48:34.436648 29562 Util.cpp:155] commandline: python train.py --use_gpu=True\n"
    "EnforceNotMet: Failed to find dynamic library: libnccl.so ( libnccl.so: cannot open shared object file: "
    "No such file or directory ) at [/paddle/paddle/fluid/platform/dynload/dynamic_loader.cc:157]\n"
    "PaddlePaddle Call Stacks:\n"
    "0       0x7f19fce44e96p paddle::platform::EnforceNotMet::EnforceNotMet(char const*, int) + 486\n"
    "1       0x7f19fe6ea71ep paddle::platform::dynload::GetNCCLDsoHandle() + 1822"
)
EXAMPLES = [
    {"text": "训练时报错显存不足怎么办？", "display_text": "训练时报错显存不足怎么办？"},
    {"text": "Loss becomes NaN after a few steps", "display_text": "Loss becomes NaN after a few steps"},
    {"text": "How do I stop TensorFlow from grabbing all GPU memory?",
     "display_text": "How do I stop TensorFlow from grabbing all GPU memory?"},
    {"text": SAMPLE_LOG, "display_text": "粘贴日志 · Paste a log: EnforceNotMet … libnccl.so"},
]
TITLE = "GPU 训练故障助手 · GPU Training Troubleshooter"

# ---------------------------------------------------------------- styles and scripts

CSS = """
html, body { overscroll-behavior: none; }
/* One column as tall as the window: the chat takes what the bar and the input leave, so a growing
   input (bounded, it scrolls inside) shrinks the chat instead of pushing Send off-screen. */
.gradio-container, .gradio-container > .main, .gradio-container .main > .wrap { height: 100dvh !important; min-height: 0 !important; }
.gradio-container .main .contain, .gradio-container .fillable { display: flex !important; flex-direction: column !important;
  height: 100% !important; min-height: 0 !important; }
.gradio-container .fillable > .column, .gradio-container .fillable > div:has(#chat) { min-height: 0 !important; }
#chat { flex: 1 1 0 !important; height: auto !important; min-height: 0 !important; max-height: none !important; }
#chat > .wrapper { height: 100% !important; }
.gradio-container { max-width: 1100px !important; }
.bot-top { align-items: center; gap: 0.5rem; flex-wrap: nowrap !important; }
.bot-top .bot-header { min-width: 0; }
.bot-header h1 { font-size: 1.25rem; margin: 0.1rem 0; }
.bot-header p { margin: 0; opacity: 0.8; font-size: 0.9rem; }
.bot-top button { white-space: nowrap; flex: 0 0 auto !important; min-width: 0 !important; }
#chat .message-wrap details { margin: 0.35rem 0; border-left: 3px solid var(--border-color-primary); padding-left: 0.6rem; }
#chat .message-wrap summary { cursor: pointer; font-weight: 600; }
#chat .message-wrap h3 { margin: 0.1rem 0 0.4rem; font-size: 1.02rem; }
#chat .prose, #chat .message-content { font-size: 15px; line-height: 1.6; }
#chat .prose :not(pre) > code { font-size: 0.86em; white-space: pre-wrap; word-break: break-word; overflow-wrap: anywhere; }
#chat .message { overflow-wrap: anywhere; max-width: 100%; }
#chat pre { max-width: 100%; overflow-x: auto; }
#chat .bot-row, #chat .message-row { max-width: 100%; }
#chat .placeholder-content, #chat .placeholder { justify-content: flex-start !important; padding-top: 0.5rem !important; }
#chat .placeholder-content { height: auto !important; min-height: 0 !important; }
#chat .examples { margin-top: 0.5rem !important; }
#chat button.example { border: 1px solid var(--border-color-primary); border-radius: 10px; padding: 0.5rem 0.7rem;
  background: var(--background-fill-secondary); cursor: pointer; text-align: left; }
#chat button.example:hover { border-color: var(--color-accent); background: var(--background-fill-primary); }
/* Clickable options (clarifying choices, suggested follow-ups) are chips, not user bubbles. */
#chat button.option { border: 1px dashed var(--color-accent) !important; background: transparent !important;
  border-radius: 999px !important; padding: 0.2rem 0.7rem !important; font-size: 0.85rem !important;
  color: var(--body-text-color) !important; text-align: left; box-shadow: none !important; }
#chat button.option:hover { background: var(--background-fill-secondary) !important; }
/* Tiers in style: "may not apply" and "no match" replies start with a marked line. */
#chat .bot .tier-note, #chat strong.tier-note { color: #9a6700; }
/* Gradio's own clear icon sat on top of the first bubble; "New chat" does that job, and the remaining
   "copy conversation" icon gets a row of its own above the messages. */
#chat .top-panel > button:first-child:not(:only-child) { display: none !important; }
#chat > .wrapper { display: flex !important; flex-direction: column !important; }
#chat .top-panel { position: static !important; align-self: flex-end; margin: 2px 4px 0 0; flex: 0 0 auto; }
#chat .bubble-wrap { flex: 1 1 auto !important; min-height: 0 !important; }
/* Bubbles never get wider than the chat: long code scrolls inside its block, long words wrap. */
#chat .message-row { max-width: 100% !important; min-width: 0; }
#chat .message-row.bot-row { margin-left: 0 !important; margin-right: 0 !important; }
#chat .message-row .flex-wrap, #chat .message-row .message { min-width: 0 !important; max-width: 100% !important; }
#chat .message-row.bot-row .message { overflow-x: hidden; }
#chat .message-content, #chat .prose { min-width: 0; max-width: 100%; overflow-wrap: anywhere; }
#chat .options { max-width: 100%; justify-content: flex-start !important; margin-left: 0 !important; margin-right: auto !important; align-self: flex-start !important; }
#question textarea { max-height: 30vh; overflow-y: auto !important; resize: none; }
#question { min-width: 0 !important; }
/* The optional 👎 reason floats above the input: the layout (and Send) never moves. */
.bot-reasons { position: fixed !important; left: 50%; transform: translateX(-50%); bottom: 72px; z-index: 30;
  width: max-content !important; max-width: calc(100vw - 16px); flex-wrap: wrap !important; gap: 0.3rem !important;
  align-items: center; background: var(--background-fill-primary); border: 1px solid var(--border-color-primary);
  border-radius: 12px; padding: 6px 10px !important; box-shadow: 0 4px 16px rgba(0, 0, 0, 0.15); }
.bot-reasons > * { flex: 0 1 auto !important; min-width: 0 !important; }
.bot-reasons .bot-reason-label p { margin: 0; font-size: 0.85rem; font-weight: 600; }
.bot-reasons .wrap { gap: 0.3rem !important; }
.bot-reasons label { font-size: 0.82rem !important; padding: 0.15rem 0.5rem !important; }
footer { display: none !important; }
/* Gradio titles a toast with its level in English ("Info") whatever gr.Info(title=…) says: a Chinese UI says 提示. */
html:lang(zh) .toast-title.info { font-size: 0 !important; }
html:lang(zh) .toast-title.info::before { content: "提示"; font-size: var(--text-md, 14px); }
@media (max-width: 640px) {
  .gradio-container { padding: 4px 6px !important; }
  .gradio-container .main, .gradio-container .wrap.fillable { padding: 0 !important; }
  .bot-header p { display: none; }
  .bot-header h1 { font-size: 1.02rem; }
  #chat .prose, #chat .message-content { font-size: 14px; }
}
"""
WIDGET_CSS = CSS + """
.gradio-container { padding: 0 !important; max-width: 100% !important; }
.gradio-container .main.fillable { padding: 6px 6px 4px !important; }
#chat .prose, #chat .message-content { font-size: 13.5px; line-height: 1.5; }
#chat .message-wrap h3 { font-size: 14px; }
#chat .message-wrap p { margin: 0.25rem 0; }
#chat pre { font-size: 12px; margin: 0.25rem 0; }
/* 366 px of bubble: code wraps instead of hiding its end behind a sideways scroll (a command's flags, a log's error). */
#chat pre, #chat pre code { white-space: pre-wrap !important; overflow-wrap: anywhere !important; word-break: break-word; }
#chat pre { overflow-x: hidden !important; }
.bot-widget-hint, .bot-widget-hint p { font-size: 0.78rem; opacity: 0.75; margin: 0; line-height: 1.25;
  overflow: hidden; text-overflow: ellipsis; }
#question textarea { max-height: 96px; }
"""
# System fonts only: nothing is fetched from font CDNs (offline installs, strict portal CSPs).
THEME = gr.themes.Soft(
    font=["system-ui", "-apple-system", "Segoe UI", "Noto Sans CJK SC", "Microsoft YaHei", "sans-serif"],
    font_mono=["ui-monospace", "SFMono-Regular", "Menlo", "Noto Sans Mono CJK SC", "monospace"],
)
# After a message is added: bring its start into view (inside the chat's own scroll area only, never
# the page around it: a portal embedding the widget must not jump).
SCROLL_JS = """() => { setTimeout(() => {
  const all = document.querySelectorAll('#chat [data-testid=ROLE]');
  if (!all.length) return;
  const message = all[all.length - 1];
  let box = message.parentElement;
  while (box && !(box.scrollHeight > box.clientHeight && /(auto|scroll)/.test(getComputedStyle(box).overflowY))) {
    box = box.parentElement;
  }
  if (!box) return;
  const offset = message.getBoundingClientRect().top - box.getBoundingClientRect().top;
  box.scrollTo({top: box.scrollTop + offset - 8, behavior: 'smooth'});
}, 150); }"""
STORAGE_KEY = "gpu-bot:" + "PAGE"
SAVE_JS = """(snapshot) => { try {
  if (snapshot) sessionStorage.setItem('KEY', snapshot); else sessionStorage.removeItem('KEY');
} catch (e) {} }"""
LOAD_JS = """(ignored) => { try { return sessionStorage.getItem('KEY') || ''; } catch (e) { return ''; } }"""
AFTER_LOAD_JS = """(language) => {
  document.documentElement.lang = language === 'zh' ? 'zh-CN' : 'en';
  if (window.innerWidth > 700) { const box = document.querySelector('#question textarea'); if (box) box.focus({preventScroll: true}); }
  window.scrollTo(0, 0);
}"""


# ---------------------------------------------------------------- state

class Recorder(Protocol):
    def record(self, event: Event, *, session: str = "", latency_ms: float | None = None) -> None: ...


@dataclass
class Deps:
    """What the handlers need besides the session state."""

    engine: Any
    settings: Settings
    web: WebSettings
    recorder: Recorder | None = None
    contact: Contact = field(default_factory=Contact)


@dataclass
class AnswerInfo:
    """What a vote on one bot message refers to."""

    answer_id: str
    question: str
    language: str
    tier: str
    confidence: float = 0.0
    cited: list[str] = field(default_factory=list)
    signature: str = ""
    vote: str | None = None
    reason: str = ""


@dataclass
class ChatState:
    """One browser tab's conversation."""

    messages: list[dict] = field(default_factory=list)  # what the chatbot shows (the server's copy is the truth)
    turns: list[Turn] = field(default_factory=list)
    answers: dict[str, AnswerInfo] = field(default_factory=dict)  # message index -> answer
    options: dict[str, str] = field(default_factory=dict)  # clickable option value -> label
    pending: str | None = None  # the message being answered (already capped)
    pending_total: int = 0  # its length before the cap, 0 when it was not cut
    language: str = "en"  # UI language
    session: str = ""  # hashed session id for the recorder
    disliked: str | None = None  # message index waiting for an optional 👎 reason


def _state(value: Any) -> ChatState:
    return value if isinstance(value, ChatState) else ChatState()


def session_id(request: Any) -> str:
    raw = getattr(request, "session_hash", None) or ""
    return hashlib.sha256(str(raw).encode()).hexdigest()[:16] if raw else ""


def cap_input(message: str, limit: int) -> tuple[str, int]:
    """Keep the head line(s) the user typed and the tail of a log (where the error is); (text, original length or 0).

    >>> text, total = cap_input("my question\\n" + "noise line\\n" * 50 + "FatalError: the end", 120)
    >>> total, text.startswith("my question\\n"), text.endswith("FatalError: the end"), len(text) <= 120
    (581, True, True, True)
    """
    if len(message) <= limit:
        return message, 0
    marker = "\n…\n"
    head_budget = min(HEAD_CHARS, limit // 5)
    head = ""
    for line in message.splitlines(keepends=True)[:3]:
        if len(head) + len(line) > head_budget:
            break
        head += line
    if not head:
        head = message[:head_budget]
    tail_budget = max(0, limit - len(head) - len(marker))
    tail = message[len(message) - tail_budget:] if tail_budget else ""
    newline = tail.find("\n")
    if 0 <= newline < min(500, len(tail) - 1):  # start the tail at a whole line
        tail = tail[newline + 1:]
    return head.rstrip("\n") + marker + tail, len(message)


def _clip_turn(turn: Turn) -> Turn:
    if len(turn.search) > MAX_SEARCH_CHARS:
        turn = dataclasses.replace(turn, search=turn.search[: MAX_SEARCH_CHARS // 2] + "\n" + turn.search[-MAX_SEARCH_CHARS // 2:])
    return turn


def _trim(state: ChatState) -> None:
    """Keep the newest messages and turns; answers follow their message's new index."""
    state.turns = [_clip_turn(t) for t in state.turns[-MAX_TURNS:]]
    drop = len(state.messages) - MAX_MESSAGES
    if drop > 0:
        state.messages = state.messages[drop:]
        state.answers = {str(int(k) - drop): v for k, v in state.answers.items() if int(k) - drop >= 0}
        if state.disliked is not None:
            state.disliked = str(int(state.disliked) - drop) if int(state.disliked) - drop >= 0 else None


# ---------------------------------------------------------------- handlers (pure over the state, testable)

def submit(state: ChatState, message: Any, limit: int) -> tuple[ChatState, bool]:
    """Take a typed message: show it and keep it (capped) to answer. False when it was empty (no bubble)."""
    message = message if isinstance(message, str) else ""
    if not message.strip():
        state.pending = None
        return state, False
    kept, total = cap_input(message, limit)
    state.pending, state.pending_total = kept, total
    state.messages.append({"role": "user", "content": user_echo(kept, looks_like_log(kept[:20_000]))})
    return state, True


def choose(state: ChatState, value: Any) -> ChatState:
    """A clicked option (clarifying choice or suggested follow-up): the label as the user's bubble, the key to answer."""
    key = value.get("value") if isinstance(value, dict) else str(value or "")
    key = str(key)[:500]
    label = state.options.get(key) or (value.get("label") if isinstance(value, dict) else None) or key
    state.messages.append({"role": "user", "content": user_echo(str(label)[:300])})
    state.pending, state.pending_total = key, 0
    return state


def exchanges(state: ChatState, pending: str | None = None) -> list[Exchange]:
    """The tab's questions with their replies' tiers and citations (what a person is handed), oldest first."""
    out = [Exchange(info.question, info.tier, tuple(info.cited))
           for _, info in sorted(state.answers.items(), key=lambda item: int(item[0]))]
    if pending and pending.strip():
        out.append(Exchange(pending[:2_000]))
    return out


def _contact(deps: Deps, state: ChatState, pending: str | None = None) -> Contact:
    """The configured contact, its link carrying this tab's conversation."""
    return carrying(deps.contact, exchanges(state, pending), deps.engine)


def _reply_for(deps: Deps, state: ChatState, message: str, base: str) -> tuple[Turned, Conversation]:
    """The tab's conversation answers: the same turn as /api/ask and /v1 (:func:`bot.answer.turn.take_turn`)."""
    talk = Conversation(deps.engine, base_url=base, turns=list(state.turns), contact=_contact(deps, state, message))
    return take_turn(deps.engine, message, conversation=talk)


def ask_person(deps: Deps, state: ChatState) -> Reply:
    """The "talk to a person" button or a typed "转人工": the contact (carrying the conversation), the transcript
    sent to ``BOT_HANDOFF_WEBHOOK``, or — with neither configured — what to collect for a colleague."""
    reply = format_intent("human", state.language, _contact(deps, state))
    return finish(reply, deps.contact, exchanges(state), deps.engine, origin=deps_origin(deps))


def deps_origin(deps: Deps) -> str:
    return str(getattr(deps.recorder, "origin", "") or "")


def respond(deps: Deps, state: ChatState, base: str) -> ChatState:
    """Answer the pending message; record the turn's events; suggest follow-ups."""
    message = state.pending
    total = state.pending_total
    state.pending, state.pending_total = None, 0
    if message is None:
        return state
    try:
        turned, talk = _reply_for(deps, state, message, base)
    except Exception:  # never leave the user with a spinner or a bare "Error"
        traceback.print_exc()
        language = detect_language(message[:20_000])
        state.messages.append({"role": "assistant", "content": reply_text(language, "error")})
        return state
    reply, latency = turned.reply, turned.latency_ms
    # what this knowledge base covers; a person after "that didn't help"; a typed "转人工" hands the transcript over
    finish(reply, deps.contact, exchanges(state, message), deps.engine, origin=deps_origin(deps))
    if total and not reply.truncated_from:  # cut here (head + tail) before the engine saw it
        reply.truncated_from = total
        notice = truncation_notice(total, deps.settings.max_input_chars, reply.language)
        reply.markdown = notice + "\n\n" + reply.markdown
    state.turns = talk.turns
    _record(deps, state, reply.events, latency)
    item: dict = {"role": "assistant", "content": reply.markdown}
    options = list(turned.options)
    if options:
        item["options"] = [{"value": o["value"], "label": o["label"]} for o in options]
    state.options = {o["value"]: o["label"] for o in options}
    state.messages.append(item)
    if reply.kind not in ("empty", "intent"):
        turn = state.turns[-1] if state.turns else None
        state.answers[str(len(state.messages) - 1)] = AnswerInfo(
            answer_id=turned.answer_id,
            question=(turn.question if turn else message)[:2_000],
            language=reply.language,
            tier=reply.tier,
            confidence=reply.confidence,
            cited=[s.hit.section.key for s in reply.shown],
            signature=reply.signature,
        )
    _trim(state)
    return state


def _record(deps: Deps, state: ChatState, events: list[Event], latency: float | None = None) -> None:
    if deps.recorder is None:
        return
    for event in events:
        try:
            deps.recorder.record(event, session=state.session, latency_ms=latency)
        except Exception:  # feedback must never break the chat
            traceback.print_exc()


def _vote_value(liked: Any) -> str | None:
    if liked is True or liked == "Like":
        return "up"
    if liked is False or liked == "Dislike":
        return "down"
    return None


def vote(deps: Deps, state: ChatState, index: Any, liked: Any) -> tuple[ChatState, str]:
    """👍/👎 on a bot message: one vote per answer, the last one counts. Returns the toast to show."""
    key = str(index[0] if isinstance(index, (list, tuple)) else index)
    info = state.answers.get(key)
    if info is None:
        return state, ""
    value = _vote_value(liked)
    info.vote, info.reason = value, ""
    if value is not None:  # a withdrawn vote is not an event (the store keeps the last vote per answer)
        _record(deps, state, [_vote_event(info)])
    state.disliked = key if value == "down" else None
    return state, ui_text(state.language, {"up": "vote_up", "down": "vote_down"}.get(value or "", "vote_withdrawn"))


def vote_reason(deps: Deps, state: ChatState, reason: str) -> tuple[ChatState, str]:
    """The optional reason for the last 👎: the same answer's vote again, now with a reason."""
    info = state.answers.get(state.disliked or "")
    reason = reason if reason in VOTE_REASONS else "other"
    state.disliked = None
    if info is None or info.vote != "down":
        return state, ""
    info.reason = reason
    _record(deps, state, [_vote_event(info)])
    return state, ui_text(state.language, "reason_thanks")


def notify(language: str, message: str) -> None:
    """A toast titled in the UI language (Gradio's default title is the English "Info")."""
    gr.Info(message, duration=3, title=ui_text(language, "toast_title"))


def reason_prompt(deps: Deps, state: ChatState) -> str:
    """The line above the 👎 reasons: "what was wrong?", and "talk to a person" when a contact is configured."""
    label = ui_text(state.language, "reason_label")
    person = person_line(state.language, _contact(deps, state), collect=False) if state.disliked is not None else ""
    return f"{label}  \n{person}" if person else label


def _vote_event(info: AnswerInfo) -> Event:
    return Event("vote", info.question, info.language, tier=info.tier, confidence=info.confidence,
                 cited=tuple(info.cited), signature=info.signature, vote=info.vote, reason=info.reason,
                 answer_id=info.answer_id)


# ---------------------------------------------------------------- persistence in the tab (sessionStorage)

def snapshot(state: ChatState) -> str:
    """The state as JSON for the tab's sessionStorage (what a reload restores)."""
    data = {
        "v": 1,
        "messages": state.messages,
        "turns": [dataclasses.asdict(t) for t in state.turns],
        "answers": {k: dataclasses.asdict(v) for k, v in state.answers.items()},
        "options": state.options,
    }
    return json.dumps(data, ensure_ascii=False)


def _str(value: Any, limit: int) -> str:
    return value[:limit] if isinstance(value, str) else ""


def _strs(value: Any, limit: int = 20) -> list[str]:
    return [v[:500] for v in value[:limit] if isinstance(v, str)] if isinstance(value, list) else []


def _turn(data: Any) -> Turn | None:
    if not isinstance(data, dict):
        return None
    values: dict[str, Any] = {}
    for f in dataclasses.fields(Turn):
        if f.name not in data:
            continue
        value = data[f.name]
        default = f.default if f.default is not dataclasses.MISSING else None
        if isinstance(default, bool) or f.name == "answered":
            values[f.name] = bool(value)
        elif isinstance(default, float) or f.name == "top_score":
            values[f.name] = float(value) if isinstance(value, (int, float)) else 0.0
        elif isinstance(value, list):
            values[f.name] = _strs(value, 50)
        else:
            values[f.name] = _str(value, MAX_SEARCH_CHARS)
    try:
        return Turn(**values)
    except TypeError:
        return None


def restore(raw: Any, state: ChatState) -> ChatState:
    """Rebuild a state from a snapshot (untrusted: types checked, sizes capped; anything odd is dropped)."""
    if not isinstance(raw, str) or not raw or len(raw) > MAX_SNAPSHOT_CHARS:
        return state
    try:
        data = json.loads(raw)
    except ValueError:
        return state
    if not isinstance(data, dict) or data.get("v") != 1:
        return state
    messages = []
    for item in data.get("messages", [])[-MAX_MESSAGES:] if isinstance(data.get("messages"), list) else []:
        if not isinstance(item, dict) or item.get("role") not in ("user", "assistant"):
            continue
        message = {"role": item["role"], "content": _str(item.get("content"), 60_000)}
        options = item.get("options")
        if isinstance(options, list):
            message["options"] = [{"value": _str(o.get("value"), 500), "label": _str(o.get("label"), 200)}
                                  for o in options[:5] if isinstance(o, dict)]
        messages.append(message)
    turns = [t for t in (_turn(x) for x in (data.get("turns") or [])[-MAX_TURNS:]) if t is not None] \
        if isinstance(data.get("turns"), list) else []
    answers: dict[str, AnswerInfo] = {}
    if isinstance(data.get("answers"), dict):
        for key, info in list(data["answers"].items())[-MAX_MESSAGES:]:
            if not (isinstance(key, str) and key.isdigit() and int(key) < len(messages) and isinstance(info, dict)):
                continue
            answers[key] = AnswerInfo(
                answer_id=_str(info.get("answer_id"), 40) or uuid.uuid4().hex[:16],
                question=_str(info.get("question"), 2_000), language=_str(info.get("language"), 4) or "en",
                tier=_str(info.get("tier"), 12), confidence=float(info["confidence"]) if isinstance(info.get("confidence"), (int, float)) else 0.0,
                cited=_strs(info.get("cited")), signature=_str(info.get("signature"), 2_000),
                vote=info.get("vote") if info.get("vote") in ("up", "down") else None,
                reason=info.get("reason") if info.get("reason") in VOTE_REASONS else "",
            )
    options = data.get("options") if isinstance(data.get("options"), dict) else {}
    state.messages, state.turns, state.answers = messages, turns, answers
    state.options = {_str(k, 500): _str(v, 200) for k, v in list(options.items())[:5]}
    return state


def feedback_values(state: ChatState) -> list[str | None]:
    """The chatbot's thumbs as restored: one entry per assistant message ("Like", "Dislike" or None)."""
    out: list[str | None] = []
    for n, message in enumerate(state.messages):
        if message.get("role") != "assistant":
            continue
        info = state.answers.get(str(n))
        out.append({"up": "Like", "down": "Dislike"}.get(info.vote or "") if info else None)
    return out


# ---------------------------------------------------------------- layout

def make_ui(engine: Any, settings: Settings, web: WebSettings, *, compact: bool = False,
            recorder: Recorder | None = None, contact: Contact | None = None) -> gr.Blocks:
    """The chat as Gradio Blocks; ``compact`` is the portal widget (no header, fills its frame)."""
    deps = Deps(engine, settings, web, with_origin(recorder, "widget" if compact else "ui"), contact or Contact())
    limit = settings.max_input_chars
    # No contact configured: the button gives what to collect for a colleague, and says so (no promise of a person).
    person_key = "person" if deps.contact.configured else "person_none"
    page = "widget" if compact else "page"
    save_js = SAVE_JS.replace("KEY", STORAGE_KEY.replace("PAGE", page))
    load_js = LOAD_JS.replace("KEY", STORAGE_KEY.replace("PAGE", page))

    def base_of(request: gr.Request | None) -> str:
        return request_base(request, web) if request is not None else public_base({}, "http", web)

    def chat_value(state: ChatState):
        return gr.update(value=state.messages, feedback_value=feedback_values(state))

    # --- thin Gradio wrappers around the handlers above
    def on_submit(message: str | None, state: Any):
        state = _state(state)
        state, taken = submit(state, message, limit)
        if not taken:
            notify(state.language, ui_text(state.language, "empty"))
            return gr.update(), gr.update(), state
        return "", state.messages, state

    def on_answer(state: Any, request: gr.Request):
        state = _state(state)
        if not state.session:
            state.session = session_id(request)
        state = respond(deps, state, base_of(request))
        return state.messages, state, snapshot(state)

    def on_example(state: Any, evt: gr.SelectData):
        state = _state(state)
        value = evt.value if isinstance(evt.value, dict) else {"text": str(evt.value)}
        state, _ = submit(state, str(value.get("text", "")), limit)
        return state.messages, state

    def on_option(state: Any, evt: gr.SelectData):
        state = choose(_state(state), evt.value)
        return state.messages, state

    def on_vote(state: Any, evt: gr.LikeData):
        state, toast = vote(deps, _state(state), evt.index, evt.liked)
        if toast:
            notify(state.language, toast)
        show = state.disliked is not None
        return state, gr.update(visible=show, value=None), snapshot(state), gr.update(value=reason_prompt(deps, state))

    def on_reason(reason: str | None, state: Any):
        state = _state(state)
        if not reason:
            return state, gr.update(), gr.update()
        state, toast = vote_reason(deps, state, reason)
        if toast:
            notify(state.language, toast)
        return state, gr.update(visible=False, value=None), snapshot(state)

    def on_person(state: Any):
        state = _state(state)
        reply = ask_person(deps, state)
        state.messages.append({"role": "assistant", "content": reply.markdown})
        _trim(state)
        return state.messages, state, snapshot(state)

    def on_new_chat(state: Any):
        old = _state(state)
        fresh = ChatState(language=old.language, session=old.session)
        return "", [], fresh, gr.update(visible=False, value=None), ""

    def on_load(saved: str | None, request: gr.Request):
        state = ChatState()
        headers = {k.lower(): v for k, v in dict(getattr(request, "headers", {}) or {}).items()}
        state.language = ui_language(headers.get("accept-language"))
        state.session = session_id(request)
        state = restore(saved, state)
        t = UI[state.language]
        reasons = [(t[r], r) for r in VOTE_REASONS]
        top = [gr.update(value=t["hint"] if compact else f"# {t['title']}\n{t['intro']}"),
               gr.update(value=t[person_key]), gr.update(value=t["new_chat"])]
        return (chat_value(state), state, gr.update(placeholder=t["placeholder"]), gr.update(choices=reasons),
                gr.update(value=t["reason_label"]), *top, state.language)

    with gr.Blocks(title=TITLE, fill_height=True, analytics_enabled=False) as blocks:
        state = gr.State(ChatState(), time_to_live=SESSION_TTL)
        saved = gr.Textbox(visible=False, elem_id="bot-snapshot")
        language = gr.Textbox(visible=False, elem_id="bot-language")
        with gr.Row(elem_classes=["bot-top", "bot-widget-bar" if compact else "bot-page-bar"], equal_height=True):
            if compact:  # the portal's panel has its own title: one slim bar with a hint and the buttons
                intro = gr.Markdown(UI["en"]["hint"], elem_classes=["bot-widget-hint"])
            else:
                intro = gr.Markdown(f"# {TITLE}\n{UI['zh']['intro']}  \n{UI['en']['intro']}", elem_classes=["bot-header"])
            person = gr.Button(UI["en"][person_key], elem_id="talk-to-person", scale=0, size="sm", variant="secondary")
            new = gr.Button(UI["en"]["new_chat"], elem_id="new-chat", scale=0, size="sm", variant="secondary")
        chatbot = gr.Chatbot(
            label="Chat",
            show_label=False,
            elem_id="chat",
            elem_classes=["bot-chat"],
            placeholder=UI["zh"]["welcome"] + "\n\n" + UI["en"]["welcome"].replace("### Hi!\n\n", ""),
            examples=EXAMPLES,
            scale=1,
            # The chat scrolls inside; the input stays in view (dvh: phones' browser bars are not counted twice).
            height="100%",
            sanitize_html=True,
            allow_tags=False,
            render_markdown=True,
            feedback_options=("Like", "Dislike"),
            buttons=["copy", "copy_all"],
            autoscroll=False,  # SCROLL_JS shows the start of each answer (its summary), not its end
            layout="bubble",
            latex_delimiters=[],
            group_consecutive_messages=False,  # "talk to a person" after an answer is its own bubble
        )
        with gr.Row(visible=False, elem_classes=["bot-reasons"]) as reason_row:
            reason_label = gr.Markdown(UI["en"]["reason_label"], elem_classes=["bot-reason-label"])
            reasons = gr.Radio(choices=[(UI["en"][r], r) for r in VOTE_REASONS], show_label=False,
                               elem_id="vote-reason", container=False)
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
        chatbot.option_select(on_option, [state], [chatbot, state], queue=False).then(
            None, js=scroll_user
        ).then(on_answer, [state], [chatbot, state, saved], show_progress="minimal").then(
            None, [saved], None, js=save_js
        ).then(None, js=scroll_bot)
        chatbot.like(on_vote, [state], [state, reason_row, saved, reason_label]).then(None, [saved], None, js=save_js)
        reasons.select(lambda value, s: on_reason(value, s), [reasons, state], [state, reason_row, saved]).then(
            None, [saved], None, js=save_js
        )
        person.click(on_person, [state], [chatbot, state, saved], queue=False).then(
            None, [saved], None, js=save_js
        ).then(None, js=scroll_bot)
        new.click(on_new_chat, [state], [box, chatbot, state, reason_row, saved], queue=False).then(
            None, [saved], None, js=save_js
        )
        chatbot.clear(on_new_chat, [state], [box, chatbot, state, reason_row, saved], queue=False).then(
            None, [saved], None, js=save_js
        )
        blocks.load(on_load, [saved], [chatbot, state, box, reasons, reason_label, intro, person, new, language],
                    js=load_js, queue=False).then(None, [language], None, js=AFTER_LOAD_JS)
    blocks.state_session_capacity = MAX_SESSIONS
    return blocks
