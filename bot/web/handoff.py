"""Handing a conversation to a person: the transcript, and the webhook that receives it.

When a contact is configured (``BOT_CONTACT_URL`` and/or ``BOT_HANDOFF_WEBHOOK``, see
:class:`bot.answer.reply.Contact`), the person a user is sent to should not have to ask
"what did you try?" again. Every edge builds the same :class:`Exchange` list:

- the contact link carries it as text (:func:`transcript_text`: a ``mailto:`` body or a
  ``{transcript}`` URL placeholder, capped by the reply module);
- when the user asks for a person, :func:`hand_over` POSTs it as JSON (:func:`payload`) to
  ``BOT_HANDOFF_WEBHOOK``; the finished reply (:func:`bot.answer.reply.compose`) says whether that worked.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from bot import limits
from bot.answer.reasons import shorten
from bot.answer.reply import Contact, citation_label
from bot.answer.texts import TEXTS
from bot.engine.case import is_not_helpful
from bot.engine.intents import classify
from bot.web.handoff_transport import DEADLINE, courier_for

if TYPE_CHECKING:
    from bot.engine.answerer import ServingEngine

WEBHOOK_TIMEOUT = DEADLINE  # seconds in total; the user is waiting for the reply that says the hand-off worked
MAX_EXCHANGES = limits.CONVERSATION_TURNS_KEPT  # the newest exchanges sent along (the UI keeps no more turns)
QUESTION_CHARS = limits.QUESTION_CHARS  # of each question (a pasted log: its head and its error are in the first part)


@dataclass(frozen=True)
class Exchange:
    """One question and what the bot did with it."""

    question: str
    tier: str = ""  # answer | tentative | none | "" (not a search: a greeting, a hand-off request)
    cited: tuple[str, ...] = ()  # section keys, the answer first
    reply: str = ""  # what the bot said, in short (:func:`bot.answer.handoff_text.reply_gist`)
    vote: str = ""  # "down" when the user gave the reply a 👎
    reason: str = ""  # the 👎's reason (bot.records.VoteReason), when one was picked


def _label(engine: ServingEngine | None, key: str) -> str:
    section = engine.section(key) if engine is not None else None
    return citation_label(section, None, "en") if section is not None else key


def payload(
    exchanges: Sequence[Exchange], engine: ServingEngine | None, *, language: str = "en", origin: str = ""
) -> dict:
    """The JSON the webhook receives: each question, the reply's tier and the sections it cited.

    >>> payload([Exchange("OOM?", "answer", ("a.md#x",), "Out of GPU memory", "down", "didnt_help")], None)["turns"]
    [{'question': 'OOM?', 'tier': 'answer', 'cited': [{'key': 'a.md#x', 'label': 'a.md#x'}], 'reply': 'Out of GPU memory', 'vote': 'down', 'reason': 'didnt_help'}]
    """
    turns = [
        {
            "question": e.question[:QUESTION_CHARS],
            "tier": e.tier,
            "cited": [{"key": k, "label": _label(engine, k)} for k in e.cited[:5]],
            "reply": e.reply,
            "vote": e.vote,
            "reason": e.reason,
        }
        for e in list(exchanges)[-MAX_EXCHANGES:]
    ]
    return {"type": "handoff", "language": language, "origin": origin, "turns": turns}


def transcript_text(exchanges: Sequence[Exchange], engine: ServingEngine | None) -> str:
    """The conversation as plain text for a mail body or a ticket (the reply module caps it).

    >>> print(transcript_text([Exchange("OOM?", "answer", ("a.md#x",), "Lower batch_size", "down", "didnt_help"),
    ...                        Exchange("still OOM", "none")], None))
    Q1: OOM?
      -> answer: a.md#x
      bot: Lower batch_size
      👎 didnt_help
    Q2: still OOM
      -> none
    """
    lines = []
    for n, e in enumerate(list(exchanges)[-MAX_EXCHANGES:], 1):
        question = " ".join(e.question.split())
        lines.append(f"Q{n}: {question[:300]}{'…' if len(question) > 300 else ''}")
        if e.tier:
            cited = "; ".join(_label(engine, k) for k in e.cited[:3])
            lines.append(f"  -> {e.tier}" + (f": {cited}" if cited else ""))
        if e.reply:
            lines.append(f"  bot: {e.reply}")
        if e.vote == "down" or e.reason:
            lines.append("  👎" + (f" {e.reason}" if e.reason else ""))
    return "\n".join(lines)


def unresolved(exchanges: Sequence[Exchange]) -> str:
    """The question a person is asked to solve: the newest one that was down-voted or not plainly answered, or
    the one being asked now; never a "thanks", "转人工" or "that didn't help" (its case's question is kept instead).

    >>> unresolved([Exchange("OOM?", "answer"), Exchange("NCCL error on 2 nodes", "tentative"), Exchange("转人工")])
    'NCCL error on 2 nodes'
    >>> unresolved([Exchange("OOM?", "answer"), Exchange("Keras does not use my GPU")])
    'Keras does not use my GPU'
    """
    for e in reversed(exchanges):
        if not e.question.strip() or classify(e.question) is not None or is_not_helpful(e.question):
            continue
        if e.vote == "down" or e.reason or e.tier != "answer":
            return e.question
    asked = [e.question for e in exchanges if e.question.strip() and classify(e.question) is None]
    return asked[-1] if asked else (exchanges[-1].question if exchanges else "")


REPLY_GIST_CHARS = 200
NOTHING_CLOSE = {f"**{TEXTS[language]['no_match_title']}**" for language in TEXTS}  # a "none" reply's first line


def reply_gist(markdown: str) -> str:
    r"""A reply in one line for a person reading the transcript: its caution line and the title of the section it
    showed (or its first line), without markup.

    >>> reply_gist("⚠️ **May not apply:** Nothing matches.\n\n### Out of GPU memory\n\n**1.** Lower it\n\n"
    ...            "<details><summary>x</summary>\n\ny\n\n</details>")
    'May not apply: Nothing matches. — Out of GPU memory'
    >>> reply_gist("Note: cut.\n\n**The knowledge base has nothing close to this question.**\n\nIt covers …")
    'The knowledge base has nothing close to this question.'
    """
    text = re.sub(r"<details>.*?</details>", "", markdown, flags=re.S)
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("```")]
    caution = next((line for line in lines if line.startswith(("⚠️", "ℹ️")) or line in NOTHING_CLOSE), "")
    title = next((line for line in lines if line.startswith("### ")), "")
    picked = [p for p in (caution, title) if p] or lines[:1]
    plain = [re.sub(r"^[#\s]+|[*_`]|^⚠️\s*|^ℹ️\s*", "", p).strip() for p in picked]
    plain = [re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", p) for p in plain]
    return shorten(" — ".join(p for p in plain if p), REPLY_GIST_CHARS)


def carrying(contact: Contact, exchanges: Sequence[Exchange], engine: ServingEngine | None) -> Contact:
    """The contact whose link carries this conversation (subject: the question left unresolved)."""
    if not contact.configured or not exchanges:
        return contact
    subject = unresolved(exchanges)
    return replace(contact, transcript=transcript_text(exchanges, engine), question=subject[:200])


def send(webhook: str, data: dict) -> bool:
    """POST ``data`` as JSON to the webhook; True when a 2xx answer came within the deadline. Never raises:
    off the request's thread, a few at once, rate limited, failures logged and retried
    (:mod:`bot.web.handoff_transport`)."""
    return courier_for(webhook).deliver(data)


def hand_over(
    contact: Contact,
    engine: ServingEngine | None,
    exchanges: Callable[[Sequence[Any]], Sequence[Exchange]],
    *,
    origin: str = "",
) -> Callable[[Sequence[Any], str], bool] | None:
    """What :func:`bot.answer.turn.take_turn` calls when the user asks for a person: POST the transcript to
    ``BOT_HANDOFF_WEBHOOK`` (``exchanges`` of the conversation's turns), True when it was received; None
    without a webhook. The reply says so (:func:`bot.answer.reply.compose`), this only sends."""
    webhook = contact.webhook.strip()
    if not webhook:
        return None
    return lambda turns, language: send(webhook, payload(exchanges(turns), engine, language=language, origin=origin))


def from_turns(turns: Sequence[Any]) -> list[Exchange]:
    """Exchanges from :class:`bot.answer.conversation.Turn` s (an API conversation rebuilt from its history).

    A turn keeps whether it was answered, not the tentative/none split: those are both "no_match".
    """
    return [
        t if isinstance(t, Exchange) else Exchange(t.question, "answer" if t.answered else "no_match", tuple(t.shown))
        for t in turns
    ]


def api_turn(
    engine: ServingEngine | None,
    question: str,
    prior: Sequence[str],
    *,
    base_url: str,
    contact: Contact,
    origin: str,
    sign: Callable[[str], str] | None = None,
    take: Any = None,
):
    """One stateless API turn (``/api/ask``, ``/v1``) with the hand-off: the contact link carries the questions
    so far, a person is offered after "that didn't help", and "talk to a person" posts the transcript.

    ``take`` is :func:`bot.answer.turn.take_turn` as the edge module sees it (tests count its calls there).
    """
    from bot.answer.turn import take_turn

    asked = [Exchange(q[:QUESTION_CHARS]) for q in (*prior, question)]
    over = hand_over(contact, engine, lambda turns: from_turns(turns) or asked[:-1], origin=origin)
    return (take or take_turn)(
        engine,
        question,
        history=prior,
        base_url=base_url,
        contact=carrying(contact, asked, engine),
        sign=sign,
        hand_over=over,
    )
