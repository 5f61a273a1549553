"""One browser tab's conversation (:class:`ChatState`), its bounds and its copy in the tab's ``sessionStorage``.

Memory per session is bounded: input is capped before it is stored (:func:`cap_input`), the
visible history keeps :data:`MAX_MESSAGES` messages, sessions expire after :data:`SESSION_TTL`
seconds idle and at most :data:`MAX_SESSIONS` are kept per page (the oldest is dropped).
:func:`snapshot` / :func:`restore` keep the conversation across a reload ("New chat" clears it);
a restored snapshot is untrusted input: types are checked and sizes capped.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from bot.answer.conversation import Turn
from bot.limits import CONVERSATION_TURNS_KEPT, QUESTION_CHARS, VOTE_COMMENT_CHARS
from bot.records import VOTE_REASONS

MAX_MESSAGES = 40  # chat bubbles kept per session (older ones scroll away for good)
MAX_TURNS = CONVERSATION_TURNS_KEPT  # conversation turns kept for follow-ups
MAX_SEARCH_CHARS = 8_000  # a turn's search text kept for follow-ups
MAX_SNAPSHOT_CHARS = 600_000  # a restored snapshot larger than this is ignored
SESSION_TTL = 2 * 3600  # seconds of inactivity after which a session's state is dropped
MAX_SESSIONS = 300  # sessions kept in memory per page (full page and widget each)
HEAD_CHARS = 2_000  # of an over-long input, at most this much of its first lines is kept


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
    comment: str = ""  # a 👎's own words (at most bot.limits.VOTE_COMMENT_CHARS)


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


def as_state(value: Any) -> ChatState:
    """The tab's state, or a fresh one when Gradio hands over nothing (a new or expired session)."""
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
    tail = message[len(message) - tail_budget :] if tail_budget else ""
    newline = tail.find("\n")
    if 0 <= newline < min(500, len(tail) - 1):  # start the tail at a whole line
        tail = tail[newline + 1 :]
    return head.rstrip("\n") + marker + tail, len(message)


def _clip_turn(turn: Turn) -> Turn:
    if len(turn.search) > MAX_SEARCH_CHARS:
        turn = dataclasses.replace(
            turn, search=turn.search[: MAX_SEARCH_CHARS // 2] + "\n" + turn.search[-MAX_SEARCH_CHARS // 2 :]
        )
    return turn


def trim(state: ChatState) -> None:
    """Keep the newest messages and turns; answers follow their message's new index."""
    state.turns = [_clip_turn(t) for t in state.turns[-MAX_TURNS:]]
    drop = len(state.messages) - MAX_MESSAGES
    if drop > 0:
        state.messages = state.messages[drop:]
        state.answers = {str(int(k) - drop): v for k, v in state.answers.items() if int(k) - drop >= 0}
        if state.disliked is not None:
            state.disliked = str(int(state.disliked) - drop) if int(state.disliked) - drop >= 0 else None


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
            message["options"] = [
                {"value": _str(o.get("value"), 500), "label": _str(o.get("label"), 200)}
                for o in options[:5]
                if isinstance(o, dict)
            ]
        messages.append(message)
    turns = (
        [t for t in (_turn(x) for x in (data.get("turns") or [])[-MAX_TURNS:]) if t is not None]
        if isinstance(data.get("turns"), list)
        else []
    )
    answers: dict[str, AnswerInfo] = {}
    if isinstance(data.get("answers"), dict):
        for key, info in list(data["answers"].items())[-MAX_MESSAGES:]:
            if not (isinstance(key, str) and key.isdigit() and int(key) < len(messages) and isinstance(info, dict)):
                continue
            answers[key] = AnswerInfo(
                answer_id=_str(info.get("answer_id"), 40) or uuid.uuid4().hex[:16],
                question=_str(info.get("question"), QUESTION_CHARS),
                language=_str(info.get("language"), 4) or "en",
                tier=_str(info.get("tier"), 12),
                confidence=float(info["confidence"]) if isinstance(info.get("confidence"), (int, float)) else 0.0,
                cited=_strs(info.get("cited")),
                signature=_str(info.get("signature"), QUESTION_CHARS),
                vote=info.get("vote") if info.get("vote") in ("up", "down") else None,
                reason=info.get("reason") if info.get("reason") in VOTE_REASONS else "",
                comment=_str(info.get("comment"), VOTE_COMMENT_CHARS),
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
