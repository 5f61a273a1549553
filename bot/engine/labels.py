"""The labelled files ``python -m bot calibrate`` and ``tune`` learn from, checked line by line before any work.

Two kinds of JSON-lines file (``eval/*.jsonl``): single questions, one object a line::

    {"query": "...", "kind": "zh", "url": "...", "expect": [{"source": "gpu.md", "section": "显存不足"}]}

and conversations, when every line has ``turns``::

    {"turns": [{"query": "...", "expect": [...]}, ...], "kind": "retry", "url": "..."}

``expect`` lists the sections that answer (``[]``: the knowledge base has none). A line that is not JSON, or an
``expect`` that is not such a list, is reported with the file, the line and the fix, instead of a traceback
minutes into a fit:

    >>> problem_of({"query": "显存不足", "expect": "notalist"})
    'expect is \\'notalist\\', not a list of {"source", "section"}'
    >>> problem_of({"query": "显存不足", "expect": [{"source": "gpu.md", "section": "显存不足"}]}) is None
    True
    >>> problem_of({"turns": [{"query": "x", "expect": [{"source": "gpu.md"}]}]}, conversations=True)
    'turn 1: expect[0] is {\\'source\\': \\'gpu.md\\'}, not {"source", "section"}'
"""

from __future__ import annotations

import json
from pathlib import Path

CASE = '{"query": "...", "kind": "...", "expect": [{"source": "...", "section": "..."}]}'
CONVERSATION = '{"turns": [{"query": "...", "expect": [...]}, ...]}'


def _short(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _expect_problem(expect: object) -> str | None:
    if not isinstance(expect, list):
        return f'expect is {_short(expect)}, not a list of {{"source", "section"}}'
    for n, item in enumerate(expect):
        if not (
            isinstance(item, dict) and isinstance(item.get("source"), str) and isinstance(item.get("section"), str)
        ):
            return f'expect[{n}] is {_short(item)}, not {{"source", "section"}}'
    return None


def _question_problem(row: dict, *, null_expect: bool = False) -> str | None:
    if not isinstance(row.get("query"), str):
        return f"query is {_short(row.get('query'))}, not text"
    if "expect" not in row or (null_expect and row["expect"] is None):
        return None
    return _expect_problem(row["expect"])


def problem_of(row: object, *, conversations: bool = False) -> str | None:
    """What is wrong with one parsed line (None: nothing), for a file of questions or of conversations."""
    if not isinstance(row, dict):
        return f"a JSON {type(row).__name__}, not an object"
    if not conversations:
        return _question_problem(row)
    turns = row.get("turns")
    if not isinstance(turns, list) or not turns:
        return f"turns is {_short(turns)}, not a list of turns"
    for n, turn in enumerate(turns, 1):
        problem = f"not an object ({_short(turn)})" if not isinstance(turn, dict) else None
        problem = problem or _question_problem(turn, null_expect=True)
        if problem:
            return f"turn {n}: {problem}"
    return None


def check_labelled(paths: list[Path]) -> None:
    """Raise ValueError naming the file, the line and the fix at the first line calibration could not read."""
    for path in paths:
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"{path}: unreadable ({exc}); pass labelled JSON-lines files") from None
        rows: list[tuple[int, object]] = []
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                rows.append((number, json.loads(line)))
            except ValueError as exc:
                raise ValueError(
                    f"{path}:{number}: not JSON ({exc}). Fix that line: one object a line, {CASE}"
                ) from None
        # As the reader decides: a file is conversations only when every line has turns.
        conversations = bool(rows) and all(isinstance(row, dict) and "turns" in row for _, row in rows)
        for number, row in rows:
            if (problem := problem_of(row, conversations=conversations)) is not None:
                shape = CONVERSATION if conversations else CASE
                raise ValueError(
                    f"{path}:{number}: {problem}. Fix that line: {shape} (expect [] when no section answers)"
                )
