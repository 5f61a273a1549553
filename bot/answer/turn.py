"""One turn of a chat, the same for the chat UI, the widget, ``POST /api/ask`` and ``/v1``.

A turn is: the conversation so far (the UI's own, or rebuilt from the user messages an API
request carries), the reply to the new message, and what to offer next — the reply's own
options (a clarifying question, the closest sections) or, after an answer, follow-up
suggestions from the cited section's neighbours. The edges only record the turn's events
and render it.

    >>> from bot.answer.reply import Reply
    >>> Turned(Reply(kind="empty", language="en", markdown="Type a question"), (), "a1").to_json()["suggestions"]
    []
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from bot.answer.conversation import Conversation
from bot.answer.reply import Contact, Reply, follow_up_options
from bot.engine.retrieve import Engine


@dataclass(frozen=True)
class Turned:
    """The reply to one message, what to offer next, the id votes refer to and how long it took."""

    reply: Reply
    options: tuple[dict, ...]  # [{"label", "value"}]: clickable; a value is a section key or a question
    answer_id: str
    latency_ms: float = 0.0

    def to_json(self) -> dict:
        return {**self.reply.to_json(), "answer_id": self.answer_id,
                "suggestions": [{"label": o["label"], "value": o["value"]} for o in self.options]}


def suggestions(reply: Reply, engine: Engine) -> tuple[dict, ...]:
    """The reply's own options, or after an answer the cited section's neighbours (never one already shown)."""
    if reply.options:
        return tuple(reply.options)
    if reply.kind in ("answer", "section") and reply.shown:
        cited = reply.shown[0].hit.section
        seen = {s.hit.section.key for s in reply.shown}
        return tuple(follow_up_options(cited, engine.sections, engine.meta, reply.language, exclude=seen))
    return ()


def take_turn(engine: Engine, message: object, *, history: Sequence[str] = (), conversation: Conversation | None = None,
              base_url: str = "", contact: Contact | None = None) -> tuple[Turned, Conversation]:
    """Answer ``message`` after ``history`` (user messages, oldest first) or in ``conversation`` (the UI's).

    Returns the turn and the conversation after it (the UI keeps it; the APIs drop it).
    """
    started = time.perf_counter()
    talk = conversation if conversation is not None else Conversation.replay(
        engine, history, base_url=base_url, contact=contact or Contact())
    reply = talk.respond(message)
    latency = (time.perf_counter() - started) * 1000
    return Turned(reply, suggestions(reply, engine), uuid.uuid4().hex, latency), talk
