"""Feedback and unanswered questions: an append-only JSON-lines log, and its summary.

One line per event::

    {"time": "2026-11-21T18:40:00+00:00", "event": "vote", "question": "显存不足",
     "language": "zh", "answered": true, "cited": ["002_....txt#问题-..."], "vote": "down"}

``event`` is ``unanswered`` (logged for every question without a confident
match), ``vote`` (👍/👎 in the chat) or ``not_helpful`` (the user said "that
didn't help"; counted as a down-vote). ``python -m bot report`` prints the
most frequent unanswered and down-voted questions: what to add to the seeds next.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr

from bot.engine.retrieve import sanitize
from bot.limits import QUESTION_CHARS, VOTE_COMMENT_CHARS
from bot.records import Event, Vote
from bot.store import NotSpooled

MAX_QUESTION_CHARS = QUESTION_CHARS  # a pasted log is stored cut; its signature says what it was about
EVENTS = ("unanswered", "vote", "not_helpful")

_lock = threading.Lock()


def record(
    event: str,
    question: str,
    *,
    language: str,
    answered: bool,
    cited: Iterable[str] = (),
    vote: str | None = None,
    signature: str = "",
    comment: str = "",
    now: datetime | None = None,
) -> dict:
    """One log line as a dict (not yet written)."""
    if event not in EVENTS:
        raise ValueError(f"unknown feedback event {event!r}; expected one of {', '.join(EVENTS)}")
    if vote not in (None, "up", "down"):
        raise ValueError(f"vote must be 'up', 'down' or None, not {vote!r}")
    # What users paste can hold lone surrogates and control characters; the log must take it anyway.
    clean, _ = sanitize(question, MAX_QUESTION_CHARS)
    line = {
        "time": (now or datetime.now(UTC)).isoformat(timespec="seconds"),
        "event": event,
        "question": clean,
        "language": language,
        "answered": bool(answered),
        "cited": list(cited),
        "vote": vote,
    }
    if len(question) > MAX_QUESTION_CHARS:
        line["question_chars"] = len(question)
    if signature:
        line["signature"] = sanitize(signature, MAX_QUESTION_CHARS)[0]
    if comment.strip():
        line["comment"] = sanitize(comment[:VOTE_COMMENT_CHARS], VOTE_COMMENT_CHARS)[0].strip()
    return line


def append(path: Path, line: dict) -> None:
    """Append one JSON line; safe across threads of one process and, line-wise, across processes."""
    path = Path(path)
    data = (json.dumps(line, ensure_ascii=False) + "\n").encode("utf-8")
    with _lock:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "ab") as handle:  # one write() of one line: O_APPEND keeps lines whole
            handle.write(data)


def log_event(path: Path | None, event: str, question: str, **fields: object) -> dict | None:
    """Build and append a line; returns it, or None when logging is off (``path`` is None)."""
    if path is None:
        return None
    line = record(event, question, **fields)  # type: ignore[arg-type]
    append(path, line)
    return line


class JsonlRecorder:
    """The edge's recorder: ``record(event, session=..., latency_ms=...)`` for every event of a turn.

    Any object with this one method can stand in (a database store, a list in tests).
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path

    def record(self, event: Event, *, session: str = "", latency_ms: float | None = None) -> None:
        try:
            self._record(event)
        except OSError as exc:  # disk full: refuse (503) rather than acknowledge what was not written
            raise NotSpooled(
                f"the event could not be kept: the log {self.path} refused the write ({exc.strerror or exc}); "
                "free space there"
            ) from None

    def _record(self, event: Event) -> None:
        if event.kind == "vote":
            log_event(
                self.path,
                "vote",
                event.question,
                language=event.language,
                answered=event.tier == "answer",
                cited=event.cited,
                vote=event.vote,
                signature=event.signature,
                comment=event.comment,
            )
        else:
            log_events(self.path, [event])


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


def log_events(path: Path | None, events: Iterable[Event]) -> None:
    """Write a turn's events: questions without a confident answer and "that didn't help"."""
    for event in events:
        if event.kind == "question" and event.tier != "answer":
            log_event(
                path,
                "unanswered",
                event.question,
                language=event.language,
                answered=False,
                cited=event.cited,
                signature=event.signature,
            )
        elif event.kind == "not_helpful":
            log_event(
                path,
                "not_helpful",
                event.question,
                language=event.language,
                answered=event.tier == "answer",
                cited=event.cited,
                vote="down",
                signature=event.signature,
            )


# ---------------------------------------------------------------- report

_PUNCT = re.compile(r"[\s\W_]+", re.UNICODE)


def normalize(question: str) -> str:
    """Grouping key: case, spacing and punctuation do not make a different question.

    >>> normalize("  Loss is NaN?? ") == normalize("loss is nan")
    True
    """
    return _PUNCT.sub(" ", question.casefold()).strip()


@dataclass
class Item:
    question: str  # the most recent wording seen
    count: int
    last_time: str
    language: str
    cited: list[str] = field(default_factory=list)
    signature: str = ""

    def to_json(self) -> dict:
        out = {
            "question": self.question,
            "count": self.count,
            "last_time": self.last_time,
            "language": self.language,
            "cited": self.cited,
        }
        if self.signature:
            out["signature"] = self.signature
        return out


@dataclass
class Summary:
    path: str
    events: int = 0
    bad_lines: int = 0
    up_votes: int = 0
    down_votes: int = 0
    unanswered_total: int = 0
    unanswered: list[Item] = field(default_factory=list)
    downvoted: list[Item] = field(default_factory=list)
    missing: bool = False

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "events": self.events,
            "bad_lines": self.bad_lines,
            "up_votes": self.up_votes,
            "down_votes": self.down_votes,
            "unanswered_total": self.unanswered_total,
            "unanswered": [i.to_json() for i in self.unanswered],
            "downvoted": [i.to_json() for i in self.downvoted],
        }

    def to_text(self) -> str:
        if self.missing:
            return f"no feedback log at {self.path} yet (it is written by the chat app: python app.py)"
        out = [
            f"feedback log {self.path}: {self.events} events, {self.unanswered_total} unanswered, "
            f"{self.up_votes} 👍, {self.down_votes} 👎"
            + (f", {self.bad_lines} unreadable line(s) skipped" if self.bad_lines else "")
        ]
        for heading, items in (
            ("most frequent unanswered questions", self.unanswered),
            ("most frequent down-voted questions", self.downvoted),
        ):
            out.append("")
            out.append(f"{heading}:")
            if not items:
                out.append("  (none)")
            for item in items:
                shown = " ".join(item.question.split())
                shown = shown if len(shown) <= 100 else shown[:99] + "…"
                out.append(f"  {item.count:>4}×  [{item.language}] {shown}")
                if item.signature:
                    out.append(f"         detected: {item.signature[:120]}")
                if item.cited:
                    out.append(f"         cited: {', '.join(item.cited[:3])}")
        return "\n".join(out)


def _group(lines: list[dict], top: int) -> list[Item]:
    counts: Counter[str] = Counter()
    latest: dict[str, dict] = {}
    for line in lines:
        key = normalize(line.get("signature") or line.get("question", ""))
        if not key:
            continue
        counts[key] += 1
        if key not in latest or str(line.get("time", "")) >= str(latest[key].get("time", "")):
            latest[key] = line
    ranked = sorted(counts, key=lambda k: (counts[k], str(latest[k].get("time", ""))), reverse=True)
    items = []
    for key in ranked[:top]:
        line = latest[key]
        items.append(
            Item(
                question=str(line.get("question", "")),
                count=counts[key],
                last_time=str(line.get("time", "")),
                language=str(line.get("language", "")),
                cited=[str(c) for c in line.get("cited") or []],
                signature=str(line.get("signature", "")),
            )
        )
    return items


class _Line(BaseModel):
    """What a log line must look like to be counted; anything else (hand edits, other tools) is skipped."""

    model_config = ConfigDict(extra="allow")
    event: Literal["unanswered", "vote", "not_helpful"]
    question: StrictStr
    time: StrictStr = ""
    language: StrictStr = ""
    answered: StrictBool = False
    cited: list[StrictStr] = Field(default_factory=list)
    vote: Vote | None = None
    signature: StrictStr = ""


def summarize(path: Path, top: int = 10) -> Summary:
    """Read the log (skipping unreadable and wrong-typed lines, counted) and rank unanswered and down-voted questions.

    Raises ValueError (with the fix) when ``path`` is a folder or cannot be read.
    """
    path = Path(path)
    summary = Summary(path=str(path))
    if path.is_dir():
        raise ValueError(f"{path} is a folder, not a feedback log; give the file, e.g. --log {path / 'feedback.jsonl'}")
    if not path.exists():
        summary.missing = True
        return summary
    unanswered: list[dict] = []
    downvoted: list[dict] = []
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise ValueError(
            f"cannot read the feedback log {path} ({exc.strerror}); check the path and its permissions"
        ) from None
    with handle:
        for raw in handle:
            if not raw.strip():
                continue
            try:
                line = _Line.model_validate(json.loads(raw.decode("utf-8"))).model_dump()
            except (ValueError, UnicodeDecodeError, RecursionError):  # ValidationError is a ValueError
                summary.bad_lines += 1
                continue
            summary.events += 1
            event, vote = line.get("event"), line.get("vote")
            if event == "unanswered":
                summary.unanswered_total += 1
                unanswered.append(line)
            if vote == "up":
                summary.up_votes += 1
            elif vote == "down":
                summary.down_votes += 1
                downvoted.append(line)
    summary.unanswered = _group(unanswered, top)
    summary.downvoted = _group(downvoted, top)
    return summary
