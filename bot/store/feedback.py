"""Recorders besides the store: :class:`OriginRecorder` stamps an edge's name on its events; :class:`MemoryRecorder`
keeps the events of an app built without a store (tests, benches) in memory.

The JSON-lines feedback log that lived here is gone: events go to the store (:mod:`bot.store.database`), and an
old ``logs/feedback.jsonl`` is imported once with ``python -m bot store import-jsonl FILE``
(:mod:`bot.store.jsonl_import`).

    >>> from bot.records import Event
    >>> seen = []
    >>> class Recorder:
    ...     def record(self, event, *, session="", latency_ms=None):
    ...         seen.append(event.origin)
    >>> with_origin(Recorder(), "widget").record(Event("question", "显存不足", "zh"))
    >>> with_origin(Recorder(), "widget").record(Event("question", "q", "en", origin="api")), seen
    (None, ['widget', 'api'])
    >>> with_origin(None, "ui") is None
    True
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, replace

from bot.records import Event


@dataclass(frozen=True)
class OriginRecorder:
    """A recorder that stamps the edge's name on every event it passes on: ``ui``, ``widget``, ``api``, ``v1``.

    For an edge that hands its recorder on (the chat UI gives it to every handler) instead of calling it.
    """

    recorder: object
    origin: str

    def record(self, event: Event, *, session: str = "", latency_ms: float | None = None) -> None:
        self.recorder.record(
            replace(event, origin=event.origin or self.origin),  # type: ignore[attr-defined]
            session=session,
            latency_ms=latency_ms,
        )


def with_origin(recorder: object | None, origin: str) -> OriginRecorder | None:
    return None if recorder is None else OriginRecorder(recorder, origin)


class MemoryRecorder:
    """The recorder of an app built without a store (``build_app(store=None)``: tests, benches): the last
    ``keep`` events with their session, in memory; nothing persists. The app (``python app.py``) always opens a store.

        >>> recorder = MemoryRecorder(keep=2)
        >>> for n in range(3):
        ...     recorder.record(Event("question", f"q{n}", "en"), session="s")
        >>> [event.question for event, _ in recorder.events]
        ['q1', 'q2']
    """

    def __init__(self, keep: int = 10_000) -> None:
        self._events: deque[tuple[Event, str]] = deque(maxlen=keep)
        self._lock = threading.Lock()

    def record(self, event: Event, *, session: str = "", latency_ms: float | None = None) -> None:
        with self._lock:
            self._events.append((event, session))

    @property
    def events(self) -> list[tuple[Event, str]]:
        """(event, session) pairs, oldest first."""
        with self._lock:
            return list(self._events)
