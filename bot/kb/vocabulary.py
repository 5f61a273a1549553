"""The domain's word lists (``bot/data/vocabulary.toml``), compiled into patterns.

The :class:`bot.kb.domain.Domain` holds them; modules search with a list as with a regular expression::

    >>> lists = compile_lists(VOCABULARY_FILE)
    >>> PROBLEM = lists["problem"]
    >>> bool(PROBLEM.search("thanks, but NCCL still fails")), bool(PROBLEM.search("thanks a lot"))
    (True, False)
    >>> bool(lists["linux_only_fix"].search("export LD_LIBRARY_PATH=/usr/local/cuda/lib64"))
    True

The lists are literal words joined into one alternation per list (escaped; boundaries are single-character
look-arounds), so matching stays linear whatever a list holds. Another knowledge base brings its own lists:
``seeds/vocabulary.toml``, a file of the same shape, replaces the lists it names (:func:`compile_lists`).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bot.jsonl import json_depth
from bot.limits import MAX_JSON_DEPTH

VOCABULARY_FILE = Path(__file__).parents[1] / "data" / "vocabulary.toml"

# What must not touch a word, as a look-around over one character.
BOUNDARIES = {"word": r"\w", "latin": "[A-Za-z]", "identifier": "[A-Za-z0-9_]"}


class VocabularyError(ValueError):
    """A vocabulary file that cannot be used; the message names the file, the list and the fix."""


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file's table, or ValueError with the reason: unreadable, not UTF-8, not TOML, or nested deeper than
    :data:`bot.limits.MAX_JSON_DEPTH` (100,000 brackets were a RecursionError naming no file; no list needs 3)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_JSON_DEPTH} levels") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(str(exc)) from None
    if json_depth(data) > MAX_JSON_DEPTH:
        raise ValueError(f"nested deeper than {MAX_JSON_DEPTH} levels")
    return data


def _read(path: Path) -> dict[str, Any]:
    try:
        return read_toml(path)
    except ValueError as exc:
        raise VocabularyError(f"{path}: cannot read the vocabulary ({exc}). Fix the file or remove it") from None


def _pattern(path: Path, name: str, groups: Any) -> re.Pattern[str]:
    if not isinstance(groups, list) or not groups:
        raise VocabularyError(f"{path}: [[{name}]] must be a list of groups with words. Fix the file")
    alternatives, flags = [], re.IGNORECASE
    for group in groups:
        words = group.get("words") if isinstance(group, Mapping) else None
        if not isinstance(words, list) or not words or not all(isinstance(w, str) and w for w in words):
            raise VocabularyError(f'{path}: each [[{name}]] group needs words = ["…", …]. Fix the file')
        sides = []
        for side in ("before", "after"):
            kind = group.get(side, "")
            if kind and kind not in BOUNDARIES:
                raise VocabularyError(f"{path}: [[{name}]] {side} = {kind!r}; use one of {', '.join(BOUNDARIES)}")
            sides.append(BOUNDARIES.get(kind, ""))
        if group.get("case", "ignore") == "exact":
            flags = 0  # one list, one case rule: a list mixes no case-sensitive and insensitive words
        before = f"(?<!{sides[0]})" if sides[0] else ""
        after = f"(?!{sides[1]})" if sides[1] else ""
        alternatives.append(before + "(?:" + "|".join(map(re.escape, words)) + ")" + after)
    return re.compile("|".join(alternatives), flags)


def compile_lists(default: Path, override: Path | None = None) -> dict[str, re.Pattern[str]]:
    """Every list of ``default``, those of ``override`` replacing the lists of the same name, compiled."""
    lists = {name: (default, groups) for name, groups in _read(default).items()}
    if override is not None:
        lists.update({name: (override, groups) for name, groups in _read(override).items()})
    return {name: _pattern(path, name, groups) for name, (path, groups) in lists.items()}
