"""What the chat's events do, as small functions over a :class:`~bot.web.ui.state.ChatState` (no Gradio here
but the toast): testable without a browser.

- :func:`submit` takes the user's message (capped: head lines + tail of a log) and shows it;
- :func:`respond` answers it through :class:`~bot.answer.conversation.Conversation` (the same turn as
  ``/api/ask`` and ``/v1``, :func:`bot.answer.turn.take_turn`) and hands the turn's events to the recorder,
  adding suggested follow-ups;
- :func:`vote` / :func:`vote_reason` record one vote per answer (the last one counts);
- :func:`ask_person` is the "talk to a person" button.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import gradio as gr

from bot.answer.conversation import Conversation
from bot.answer.reply import Contact, Reply, compose, format_intent, person_line, scope_of, user_echo
from bot.answer.reply import text as reply_text
from bot.answer.turn import Turned, take_turn
from bot.kb.signature import looks_like_log
from bot.kb.tokenize import detect_language
from bot.limits import QUESTION_CHARS, VOTE_COMMENT_CHARS
from bot.records import VOTE_REASONS, Event
from bot.settings import Settings, WebSettings
from bot.web.handoff import Exchange, carrying, hand_over, reply_gist
from bot.web.ui.state import AnswerInfo, ChatState, cap_input, trim
from bot.web.ui.strings import ui_text

if TYPE_CHECKING:
    from bot.engine.answerer import ServingEngine

# A reply the chat records no answer for (a hand-off, small talk, an error) carries this empty marker: chat.css hides
# its 👍/👎, which would count nothing (Gradio 6 draws them on every reply, with no per-message switch). A class,
# since Gradio's sanitizer keeps classes and drops data attributes.
NO_VOTE = '<span class="bot-no-vote"></span>'


def without_votes(markdown: str) -> str:
    """``markdown`` marked as a reply without votes (:data:`NO_VOTE`), once.

    >>> without_votes("Ask a person: [support](mailto:help@example.com)")
    'Ask a person: [support](mailto:help@example.com)<span class="bot-no-vote"></span>'
    >>> without_votes(without_votes("Hi")) == without_votes("Hi")
    True
    """
    return markdown if markdown.endswith(NO_VOTE) else markdown + NO_VOTE


class Recorder(Protocol):
    def record(self, event: Event, *, session: str = "", latency_ms: float | None = None) -> None: ...


@dataclass
class Deps:
    """What the handlers need besides the session state."""

    engine: ServingEngine
    settings: Settings
    web: WebSettings
    recorder: Recorder | None = None
    contact: Contact = field(default_factory=Contact)


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
    out = [
        Exchange(info.question, info.tier, tuple(info.cited), _said(state, index), info.vote or "", info.reason)
        for index, info in sorted(state.answers.items(), key=lambda item: int(item[0]))
    ]
    if pending and pending.strip():
        out.append(Exchange(pending[:QUESTION_CHARS]))
    return out


def _said(state: ChatState, index: str) -> str:
    """The bot's reply at message ``index``, in short, for the person the conversation is handed to."""
    item = state.messages[int(index)] if index.isdigit() and int(index) < len(state.messages) else {}
    content = item.get("content") if isinstance(item, dict) else ""
    return reply_gist(content) if isinstance(content, str) else ""


def _contact(deps: Deps, state: ChatState, pending: str | None = None) -> Contact:
    """The configured contact, its link carrying this tab's conversation."""
    return carrying(deps.contact, exchanges(state, pending), deps.engine)


def _reply_for(deps: Deps, state: ChatState, message: str, base: str, total: int = 0) -> tuple[Turned, Conversation]:
    """The tab's conversation answers: the same turn as /api/ask and /v1 (:func:`bot.answer.turn.take_turn`), its
    contact carrying this tab's conversation, ``total`` the length of a message :func:`submit` cut."""
    contact = _contact(deps, state, message)
    talk = Conversation(deps.engine, base_url=base, turns=list(state.turns), contact=contact)
    asked = exchanges(state, message)
    over = hand_over(deps.contact, deps.engine, lambda _turns: asked, origin=deps_origin(deps))
    return take_turn(
        deps.engine,
        message,
        conversation=talk,
        contact=contact,
        truncated_from=total,
        input_limit=deps.settings.max_input_chars,
        hand_over=over,
    )


def ask_person(deps: Deps, state: ChatState) -> Reply:
    """The "talk to a person" button or a typed "转人工": the contact (carrying the conversation), the transcript
    sent to ``BOT_HANDOFF_WEBHOOK``, or — with neither configured — what to collect for a colleague."""
    contact = _contact(deps, state)
    asked = exchanges(state)
    over = hand_over(deps.contact, deps.engine, lambda _turns: asked, origin=deps_origin(deps))
    failed = over is not None and not over((), state.language)
    return compose(
        format_intent("human", state.language, contact),
        contact=contact,
        handoff_failed=failed,
        scope=scope_of(getattr(deps.engine, "sections", ()) or ()),
    )


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
        turned, talk = _reply_for(deps, state, message, base, total)
    except Exception:  # never leave the user with a spinner or a bare "Error"
        traceback.print_exc()
        language = detect_language(message[:20_000])
        state.messages.append({"role": "assistant", "content": without_votes(reply_text(language, "error"))})
        return state
    reply, latency = turned.reply, turned.latency_ms  # finished: scope, person, hand-off and truncation note in
    state.turns = talk.turns
    _record(deps, state, reply.events, latency)
    answered = reply.kind not in ("empty", "intent")  # a hand-off ("转人工") or small talk: nothing to vote on
    item: dict = {"role": "assistant", "content": reply.markdown if answered else without_votes(reply.markdown)}
    options = list(turned.options)
    if options:
        item["options"] = [{"value": o["value"], "label": o["label"]} for o in options]
    state.options = {o["value"]: o["label"] for o in options}
    state.messages.append(item)
    if answered:
        turn = state.turns[-1] if state.turns else None
        state.answers[str(len(state.messages) - 1)] = AnswerInfo(
            answer_id=turned.answer_id,
            question=(turn.question if turn else message)[:QUESTION_CHARS],
            language=reply.language,
            tier=reply.tier,
            confidence=reply.confidence,
            cited=[s.hit.section.key for s in reply.shown],
            signature=reply.signature,
        )
    trim(state)
    return state


def _record(deps: Deps, state: ChatState, events: list[Event], latency: float | None = None) -> bool:
    """Record ``events``; False when one could not be kept (spool full, store down: ``NotSpooled`` or another
    error), so the chat never thanks for a vote it lost."""
    if deps.recorder is None:
        return True
    kept = True
    for event in events:
        try:
            deps.recorder.record(event, session=state.session, latency_ms=latency)
        except Exception:  # feedback must never break the chat
            traceback.print_exc()
            kept = False
    return kept


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
    before = info.vote, info.reason, info.comment
    info.vote, info.reason, info.comment = value, "", ""
    # A withdrawn vote is not an event (the store keeps the last vote per answer).
    if value is not None and not _record(deps, state, [_vote_event(info)]):
        info.vote, info.reason, info.comment = before  # not kept: the answer's vote is what was last saved
        state.disliked = None  # no reason picker for a vote that was not saved
        return state, ui_text(state.language, "vote_not_saved")
    state.disliked = key if value == "down" else None
    return state, ui_text(state.language, {"up": "vote_up", "down": "vote_down"}.get(value or "", "vote_withdrawn"))


def vote_reason(deps: Deps, state: ChatState, reason: str, comment: Any = "") -> tuple[ChatState, str]:
    """The optional reason for the last 👎, with the user's own words if they typed any (a comment sent alone is
    the reason "other"): the same answer's vote again, now with them.

    >>> class Kept(list):
    ...     def record(self, event, **_): self.append(event)
    >>> kept = Kept()
    >>> state = ChatState(answers={"1": AnswerInfo("a1", "q", "zh", "answer", vote="down")}, disliked="1")
    >>> state, toast = vote_reason(Deps(None, None, None, kept), state, "", "  命令在 Windows 上不对  ")
    >>> (kept[-1].reason, kept[-1].comment, state.disliked)
    ('other', '命令在 Windows 上不对', None)
    """
    info = state.answers.get(state.disliked or "")
    reason = reason if reason in VOTE_REASONS else "other"
    comment = (comment if isinstance(comment, str) else "").strip()[:VOTE_COMMENT_CHARS]
    state.disliked = None
    if info is None or info.vote != "down":
        return state, ""
    info.reason, info.comment = reason, comment
    if not _record(deps, state, [_vote_event(info)]):
        info.reason, info.comment = "", ""
        return state, ui_text(state.language, "reason_not_saved")
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
    return Event(
        "vote",
        info.question,
        info.language,
        tier=info.tier,
        confidence=info.confidence,
        cited=tuple(info.cited),
        signature=info.signature,
        vote=info.vote,
        reason=info.reason,
        answer_id=info.answer_id,
        comment=info.comment,
    )
