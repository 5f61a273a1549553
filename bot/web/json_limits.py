"""JSON hygiene of request bodies: at most :data:`MAX_JSON_ITEMS` values (counted before parsing), strict UTF-8,
no deeper than :data:`MAX_JSON_DEPTH`; :func:`load_json` says what is wrong as a :class:`JSONProblem` (status
and message).
"""

from __future__ import annotations

import json
import re
from typing import Any

from bot.jsonl import json_depth  # looked up here by load_json (where tests replace it)
from bot.limits import MAX_JSON_DEPTH

# A question with 100 history turns, or an OpenAI message list, is a few hundred values; the cap is far above.
MAX_JSON_ITEMS = 10_000
JSON_KEY = "bot.json"  # where the parsed body is left in the ASGI scope for the route


# A JSON string, or an unterminated one up to the end (so a stray quote never makes the scan quadratic).
_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+(?:"|\\?\Z)', re.S)


def _marks(body: bytes, start: int = 0, end: int | None = None) -> int:
    end = len(body) if end is None else end
    return body.count(b",", start, end) + body.count(b"[", start, end) + body.count(b"{", start, end)


def json_items(body: bytes, budget: int = MAX_JSON_ITEMS) -> int:
    """About how many values a JSON text holds (commas and openers outside strings, plus strings),
    counted just far enough to tell whether it is over ``budget``: an upper bound from a C-speed
    count when that is under budget, else a scan that skips strings and stops once past the budget.

    >>> json_items(b'{"q": "a, b, [c]", "h": [1, 2]}'), json_items(b'[' + b'0,' * 50 + b'0]', budget=10) > 10
    (7, True)
    """
    rough = _marks(body)
    if rough <= budget:
        return rough
    count, pos = 0, 0
    for match in _STRING.finditer(body):
        count += 1 + _marks(body, pos, match.start())
        if count > budget:
            return count
        pos = match.end()
    return count + _marks(body, pos)


class JSONProblem(ValueError):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def load_json(body: bytes) -> Any:
    """The parsed body, or :class:`JSONProblem` (status and message) when it is not acceptable JSON.

    Counting the values first bounds the parse: ``json.loads`` holds the GIL for its whole run,
    so only bodies with few values (strings are cheap to parse) get that far.
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JSONProblem(400, f"body is not valid UTF-8 (byte {exc.start}); send JSON encoded as UTF-8") from None
    if json_items(body) > MAX_JSON_ITEMS:
        raise JSONProblem(
            413,
            f"JSON body with more than {MAX_JSON_ITEMS:,} values; this API takes a question "
            "and a short history (see README, JSON API)",
        )
    try:
        data = json.loads(text or "null")
    except RecursionError:
        raise JSONProblem(400, f"JSON nested too deeply (at most {MAX_JSON_DEPTH} levels)") from None
    except ValueError as exc:
        raise JSONProblem(400, f'body is not JSON ({exc}); send e.g. {{"question": "...", "history": []}}') from None
    if json_depth(data) > MAX_JSON_DEPTH:
        raise JSONProblem(400, f"JSON nested too deeply (at most {MAX_JSON_DEPTH} levels)")
    return data
