"""A conversation's state as a token the client carries: the turns after each reply, signed, versioned, capped.

The APIs are stateless. Instead of rebuilding a conversation from the user messages a client sends
(each one run through the engine again), the reply carries ``state``: the conversation's turns
(:class:`bot.answer.conversation.Turn`, every text field capped), as compact JSON, compressed, signed with
HMAC-SHA256 and base64url-encoded. The client sends it back with its next message and the turn continues
from it at the cost of decoding a few KB.

A token is ``s1.<body>.<signature>``; the body records what the turns were computed on (the index
generation, :func:`generation_of`). :meth:`StateSeal.open` refuses, with a :class:`StateRefused` naming the
reason and the fix, a token that is too long, not of this shape, of another version, not signed with this
app's key, not readable, or computed on another index generation: a token is used whole or not at all.

    >>> from bot.answer.conversation import Turn
    >>> seal = StateSeal(b"k" * 32, hmac.compare_digest)
    >>> token = seal.seal([Turn("显存不足", "zh", "显存不足", "answer", True, shown=["gpu.md#oom"])], "gen-1")
    >>> token.startswith("s1.") and len(token) < 400
    True
    >>> [t.shown for t in seal.open(token, "gen-1")]
    [['gpu.md#oom']]
    >>> seal.open(token, "gen-2")
    Traceback (most recent call last):
    bot.answer.state.StateRefused: `state` was computed on another index (gen-1; this server answers from gen-2): send the `state` from the previous reply, or plain `history`
    >>> StateSeal(b"x" * 32, hmac.compare_digest).open(token, "gen-1").__class__
    Traceback (most recent call last):
    bot.answer.state.StateRefused: `state` is not signed by this server (or was changed): send the `state` from the previous reply, or plain `history`
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import json
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from bot.answer.conversation import Turn
from bot.limits import HISTORY_TURNS_REPLAYED, STATE_CHARS, STATE_LIST_ITEMS, STATE_SEARCH_CHARS, STATE_TEXT_CHARS

if TYPE_CHECKING:
    from bot.engine.answerer import Answerer

VERSION = "s1"
DOMAIN = b"bot-conversation-state-v1\n"  # the MAC's own prefix: a /source link's signature is never a state's
TURNS_KEPT = HISTORY_TURNS_REPLAYED  # the newest turns a token carries: what a replay of plain history rebuilds
FIX = "send the `state` from the previous reply, or plain `history`"
MAX_JSON_BYTES = 4 * STATE_CHARS  # a body inflating to more than this is refused (a zip bomb costs nothing here)

_FIELDS = tuple(f.name for f in dataclasses.fields(Turn))

Refusal = Literal["oversize", "shape", "version", "signature", "corrupt", "stale"]


class StateRefused(ValueError):
    """A ``state`` this server cannot use; ``reason`` says why, the message says what to send instead."""

    def __init__(self, reason: Refusal, message: str) -> None:
        super().__init__(f"`state` {message}: {FIX}")
        self.reason = reason


def generation_of(engine: Answerer) -> str:
    """What a state is computed on: the loaded index generation's folder name (``gen-…``, new at every build),
    else a digest of the section keys (an engine without an index folder, such as a test stub)."""
    path = getattr(getattr(engine, "index", None), "path", None)
    if path:
        return Path(path).name
    keys = "\n".join(getattr(s, "key", "") for s in getattr(engine, "sections", ()) or ())
    return "keys-" + hashlib.sha256(keys.encode("utf-8", "surrogatepass")).hexdigest()[:16]


# ---------------------------------------------------------------- a turn as small JSON, and back


def _cut(value: Any, limit: int = STATE_TEXT_CHARS) -> str:
    return value[:limit] if isinstance(value, str) else ""


def _cuts(value: Any) -> list[str]:
    return (
        [v[:STATE_TEXT_CHARS] for v in value[:STATE_LIST_ITEMS] if isinstance(v, str)]
        if isinstance(value, list)
        else []
    )


def turn_to_dict(turn: Turn, *, environment: bool = True) -> dict:
    """A turn's fields, each text cut to :data:`~bot.limits.STATE_TEXT_CHARS` (the search text to
    :data:`~bot.limits.STATE_SEARCH_CHARS`: a pasted log's head, what a follow-up needs) and each list to
    :data:`~bot.limits.STATE_LIST_ITEMS` items.
    ``environment=False`` leaves the environment out (only the last turn's is read: it is the case's).

    >>> d = turn_to_dict(Turn("q" * 5000, "en", "s", "answer", True, shown=["a"] * 99))
    >>> len(d["question"]), len(d["shown"])
    (500, 20)
    """
    out: dict[str, Any] = {}
    for name in _FIELDS:
        value = getattr(turn, name)
        if name == "environment":
            if environment and value:
                out[name] = value  # as Environment.as_dict wrote it: plain JSON values
        elif isinstance(value, str):
            out[name] = value[: STATE_SEARCH_CHARS if name == "search" else STATE_TEXT_CHARS]
        elif isinstance(value, list):
            out[name] = [v[:STATE_TEXT_CHARS] for v in value[:STATE_LIST_ITEMS]]
        else:
            out[name] = value
    return out


def turn_from_dict(data: Any) -> Turn:
    """A :class:`Turn` from a dict of its fields (unknown keys dropped, types checked, sizes capped); ValueError when
    it is not one."""
    if not isinstance(data, dict):
        raise ValueError("a turn must be an object")
    values: dict[str, Any] = {}
    for f in dataclasses.fields(Turn):
        if f.name not in data:
            continue
        value = data[f.name]
        if f.name == "answered":
            values[f.name] = bool(value)
        elif f.name == "top_score":
            values[f.name] = float(value) if isinstance(value, (int, float)) and abs(value) < 1e6 else 0.0
        elif f.name == "environment":
            values[f.name] = _environment(value)
        elif isinstance(value, list):
            values[f.name] = _cuts(value)
        else:
            values[f.name] = _cut(value, STATE_SEARCH_CHARS if f.name == "search" else STATE_TEXT_CHARS)
    try:
        return Turn(**values)
    except TypeError as exc:  # a required field missing
        raise ValueError(str(exc)) from None


def _environment(value: Any) -> dict:
    """The environment dict as :meth:`bot.records.Environment.as_dict` writes it, or {} when it does not read back."""
    from bot.records import Environment

    if not isinstance(value, dict):
        return {}
    try:
        return Environment.from_dict(value).as_dict()
    except (TypeError, ValueError, KeyError, AttributeError):
        return {}


def turns_to_json(turns: Sequence[Turn]) -> bytes:
    """The newest :data:`TURNS_KEPT` turns as compact JSON (what :class:`bot.answer.turn.HistoryStates` keeps too),
    the environment on the last one only."""
    kept = list(turns)[-TURNS_KEPT:]
    data = [turn_to_dict(t, environment=n == len(kept) - 1) for n, t in enumerate(kept)]
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")


def turns_from_json(raw: bytes) -> list[Turn]:
    data = json.loads(raw)
    if not isinstance(data, list):
        raise ValueError("turns must be a list")
    return [turn_from_dict(item) for item in data[-TURNS_KEPT:]]


# ---------------------------------------------------------------- the signed token


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(frozen=True)
class StateSeal:
    """Seals and opens state tokens with one key (the app's signing secret, :func:`bot.web.signing.signing_secret`);
    ``matches(given, expected)`` compares signatures in constant time (the app's one comparison of credentials,
    :func:`bot.web.credentials.token_matches`)."""

    key: bytes
    matches: Callable[[str, str], bool]

    def _mac(self, body: str) -> str:
        return _b64(hmac.new(self.key, DOMAIN + body.encode(), hashlib.sha256).digest())

    def seal(self, turns: Sequence[Turn], generation: str) -> str:
        """The token for ``turns`` computed on ``generation``; the oldest turns are left out until it fits
        :data:`~bot.limits.STATE_CHARS`."""
        kept = list(turns)[-TURNS_KEPT:]
        while True:
            head = json.dumps({"v": 1, "g": generation[:100]}, ensure_ascii=False, separators=(",", ":"))
            payload = head[:-1].encode() + b',"t":' + turns_to_json(kept) + b"}"
            body = _b64(zlib.compress(payload, 6))
            token = f"{VERSION}.{body}.{self._mac(body)}"
            if len(token) <= STATE_CHARS or len(kept) <= 1:
                return token if len(token) <= STATE_CHARS else ""  # one turn that does not fit: no state
            kept = kept[1:]

    def open(self, token: str, generation: str) -> list[Turn]:
        """The turns of ``token``, or :class:`StateRefused` (checked in this order: size, shape, version, signature,
        content, index generation)."""
        if not isinstance(token, str):
            raise StateRefused("shape", "must be a string")
        if len(token) > STATE_CHARS:
            raise StateRefused(
                "oversize", f"is {len(token):,} characters, more than this server makes ({STATE_CHARS:,})"
            )
        parts = token.split(".")
        if not token.isascii() or len(parts) != 3 or not all(parts):
            raise StateRefused("shape", "is not a state token (expected `s1.<body>.<signature>`)")
        version, body, signature = parts
        if version != VERSION:
            raise StateRefused("version", f"has version {version[:10]!r}; this server reads {VERSION!r}")
        if not self.matches(signature, self._mac(body)):
            raise StateRefused("signature", "is not signed by this server (or was changed)")
        try:
            inflate = zlib.decompressobj()
            payload = inflate.decompress(_unb64(body), MAX_JSON_BYTES)
            if inflate.unconsumed_tail:
                raise ValueError("too large")
            data = json.loads(payload)
            if not isinstance(data, dict) or data.get("v") != 1 or not isinstance(data.get("g"), str):
                raise ValueError("not a state")
            turns = (
                [turn_from_dict(item) for item in data["t"][-TURNS_KEPT:]] if isinstance(data.get("t"), list) else None
            )
            if turns is None:
                raise ValueError("no turns")
        except (ValueError, zlib.error, UnicodeDecodeError, RecursionError):
            raise StateRefused("corrupt", "does not read back (it was cut or damaged)") from None
        if data["g"] != generation:
            raise StateRefused(
                "stale", f"was computed on another index ({data['g'][:40]}; this server answers from {generation[:40]})"
            )
        return turns
