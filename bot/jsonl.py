"""Labelled JSON-lines files (evaluation sets, conversations, environment batches), one reader: a line that does
not parse names the file, the line number and what a row should hold.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "cases.jsonl"
    >>> _ = path.write_text('{"query": "oom"}\\n\\n[1]\\n', encoding="utf-8")
    >>> read_jsonl(path, lambda row: row["query"], lambda exc: f"no query ({exc})", (KeyError, TypeError))
    Traceback (most recent call last):
    ValueError: ...cases.jsonl:3: no query (list indices must be integers or slices, not str)

A line is parsed by :func:`json_line`, which also refuses what JSON allows and a fit cannot use: nesting deeper than
:data:`bot.limits.MAX_JSON_DEPTH` (100,000 brackets were a RecursionError traceback) and a lone surrogate
(``"\\ud800"``: not text; it passed every check, then ended a finished fit with a codec error naming nothing).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from bot.limits import MAX_JSON_DEPTH

Row = TypeVar("Row")
LINE_FIX = "Fix that line"  # how every refusal of a line ends: the file, the line, then what to write instead


class HostileLine(ValueError):
    """A line JSON allows and no reader can use (too deep, not text): refused whatever the reader accepts."""


def json_depth(value: Any) -> int:
    """Nesting depth of a parsed JSON value, level by level (no recursion limit to hit).

    >>> json_depth({"a": [1, {"b": []}]}), json_depth(3), json_depth([])
    (4, 0, 1)
    """
    depth, level = 0, [value]
    while True:
        level = [v for v in level if type(v) is dict or type(v) is list]
        if not level:
            return depth
        depth += 1
        below: list = []
        for item in level:
            below.extend(item.values() if type(item) is dict else item)
        level = below


def json_line(line: str) -> Any:
    """One line's JSON; ValueError when it is not JSON, :class:`HostileLine` saying what is wrong and the fix when
    it is JSON no reader can use (the caller adds the file and the line).

    >>> json_line('{"query": "oom"}')
    {'query': 'oom'}
    >>> json_line("[" * 5000 + "]" * 5000)
    Traceback (most recent call last):
    bot.jsonl.HostileLine: JSON nested deeper than 32 levels. Fix that line: one flat object a line
    >>> json_line('{"query": "oom \\\\ud800"}')
    Traceback (most recent call last):
    bot.jsonl.HostileLine: a lone surrogate ('\\ud800'), which is not text. Fix that line: write the character itself in UTF-8, or remove the \\u escape
    """
    deep = f"JSON nested deeper than {MAX_JSON_DEPTH} levels. {LINE_FIX}: one flat object a line"
    try:
        value = json.loads(line)
    except RecursionError:
        raise HostileLine(deep) from None
    if json_depth(value) > MAX_JSON_DEPTH:
        raise HostileLine(deep)
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise HostileLine(
            f"a lone surrogate ({exc.object[exc.start : exc.end]!r}), which is not text. {LINE_FIX}: write the "
            "character itself in UTF-8, or remove the \\u escape"
        ) from None
    return value


def read_jsonl(
    path: Path,
    parse: Callable[[Any], Row],
    refusal: Callable[[Exception], str],
    errors: tuple[type[Exception], ...] = (ValueError,),
) -> list[Row]:
    """``parse`` of every non-blank line's JSON; one of ``errors`` becomes ``ValueError("<path>:<line>: "
    + refusal(exc))`` (a line that is not JSON is a ``ValueError``; one nested too deep or holding a lone surrogate
    is always refused, with :func:`json_line`'s reason)."""
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json_line(line)
        except HostileLine as exc:
            raise ValueError(f"{path}:{n}: {exc}") from None
        except ValueError as exc:  # not JSON
            why = refusal(exc) if issubclass(ValueError, errors) else f"not JSON ({exc}). {LINE_FIX}: one object a line"
            raise ValueError(f"{path}:{n}: {why}") from None
        try:
            rows.append(parse(value))
        except errors as exc:
            raise ValueError(f"{path}:{n}: {refusal(exc)}") from None
    return rows
