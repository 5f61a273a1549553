"""One API turn, the same for ``POST /api/ask`` and ``POST /v1/chat/completions``: the conversation from the
client's ``state`` (or its plain history), the turn with the hand-off, the events recorded with the edge's origin.

A ``state`` (:mod:`bot.answer.state`) this server cannot use is decided here, once for both APIs: with plain
history beside it, it is ignored (the history is replayed) and the turn carries a warning for the response's
``X-Bot-Warning`` header; alone, it is refused (:class:`bot.answer.state.StateRefused`, which each edge turns into
its 400 naming the field and the fix). A token is used whole or not at all: never half, never another's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from bot.answer.reply import Contact
from bot.answer.state import StateRefused, StateSeal, generation_of
from bot.answer.turn import Turned, take_turn
from bot.web.handoff import api_turn

if TYPE_CHECKING:
    from bot.engine.answerer import ServingEngine

log = logging.getLogger("bot.web.api_turn")
WARNING_HEADER = "X-Bot-Warning"


@dataclass(frozen=True)
class ApiTurn:
    """The finished turn and, when the client's ``state`` was ignored, why (ASCII: it goes in a header)."""

    turned: Turned
    warning: str = ""

    def headers(self) -> dict[str, str]:
        return {WARNING_HEADER: self.warning} if self.warning else {}


def answer(
    engine: ServingEngine,
    question: str,
    prior: Sequence[str],
    state: str | None,
    *,
    seal: StateSeal,
    recorder: Any,
    origin: str,
    base_url: str,
    contact: Contact,
    sign: Callable[[str], str] | None = None,
    session: str = "",
) -> ApiTurn:
    """The turn for ``question`` after ``state`` (a token from an earlier reply) or ``prior`` (user messages);
    raises :class:`StateRefused` for an unusable ``state`` sent without history. Runs the engine: call it off
    the event loop."""
    turns = None
    warning = ""
    if state:
        try:
            turns = seal.open(state, generation_of(engine))
        except StateRefused as refused:
            if not prior:
                raise
            warning = f"{refused} (ignored: answered from `history`)".encode("ascii", "replace").decode()
            log.info("%s: state ignored (%s), history replayed", origin, refused.reason)
    asked = [t.question for t in turns] if turns is not None else list(prior)
    turned, _ = api_turn(
        engine,
        question,
        asked,
        base_url=base_url,
        contact=contact,
        origin=origin,
        sign=sign,
        take=partial(take_turn, turns=turns, seal=seal),
    )
    for event in turned.reply.events:
        recorder.record(replace(event, origin=origin), session=session, latency_ms=turned.latency_ms)
    return ApiTurn(turned, warning)
