"""Labelled JSON-lines files (evaluation sets, conversations, environment batches), one reader: a line that does
not parse names the file, the line number and what a row should hold.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "cases.jsonl"
    >>> _ = path.write_text('{"query": "oom"}\\n\\n[1]\\n', encoding="utf-8")
    >>> read_jsonl(path, lambda row: row["query"], lambda exc: f"no query ({exc})", (KeyError, TypeError))
    Traceback (most recent call last):
    ValueError: ...cases.jsonl:3: no query (list indices must be integers or slices, not str)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

Row = TypeVar("Row")


def read_jsonl(
    path: Path,
    parse: Callable[[Any], Row],
    refusal: Callable[[Exception], str],
    errors: tuple[type[Exception], ...] = (ValueError,),
) -> list[Row]:
    """``parse`` of every non-blank line's JSON; one of ``errors`` becomes ``ValueError("<path>:<line>: "
    + refusal(exc))`` (a line that is not JSON is a ``ValueError``)."""
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append(parse(json.loads(line)))
        except errors as exc:
            raise ValueError(f"{path}:{n}: {refusal(exc)}") from None
    return rows
