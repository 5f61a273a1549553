"""The domain's word lists (``bot/data/vocabulary.toml``), compiled once into patterns.

Modules name a list and search with it as with a regular expression::

    >>> PROBLEM = words("problem")
    >>> bool(PROBLEM.search("thanks, but NCCL still fails")), bool(PROBLEM.search("thanks a lot"))
    (True, False)
    >>> bool(words("linux_only_fix").search("export LD_LIBRARY_PATH=/usr/local/cuda/lib64"))
    True

The lists are literal words joined into one alternation per list (escaped; boundaries are single-character
look-arounds), so matching stays linear whatever a list holds. Another knowledge base brings its own lists:
:func:`use_vocabulary` reads a file of the same shape and replaces the lists it names; every :class:`Words`
follows (the patterns are compiled again, once).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

VOCABULARY_FILE = Path(__file__).parents[1] / "data" / "vocabulary.toml"

# What must not touch a word, as a look-around over one character.
BOUNDARIES = {"word": r"\w", "latin": "[A-Za-z]", "identifier": "[A-Za-z0-9_]"}

_override: Path | None = None


class VocabularyError(ValueError):
    """A vocabulary file that cannot be used; the message names the file, the list and the fix."""


def use_vocabulary(path: Path | None) -> None:
    """Lists of ``path`` replace the default ones of the same name (``None``: the default file alone)."""
    global _override
    chosen = Path(path) if path is not None else None
    _compile(chosen)  # a bad file fails here, where it is chosen, not at the first message; the lists in use stay
    _override = chosen
    compiled.cache_clear()


def _read(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
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


def _compile(override: Path | None) -> dict[str, re.Pattern[str]]:
    lists = {name: (VOCABULARY_FILE, groups) for name, groups in _read(VOCABULARY_FILE).items()}
    if override is not None:
        lists.update({name: (override, groups) for name, groups in _read(override).items()})
    return {name: _pattern(path, name, groups) for name, (path, groups) in lists.items()}


@lru_cache(maxsize=1)
def compiled() -> dict[str, re.Pattern[str]]:
    """Every list of the default file, those of :func:`use_vocabulary`'s file replacing theirs, compiled once."""
    return _compile(_override)


class Words:
    """One list of the vocabulary, searched like a compiled regular expression."""

    def __init__(self, name: str) -> None:
        self.name = name

    def search(self, text: str) -> re.Match[str] | None:
        return compiled()[self.name].search(text)

    def __repr__(self) -> str:
        return f"Words({self.name!r})"


def words(name: str) -> Words:
    """The list ``name`` of the vocabulary; a name the default file lacks is a mistake in code, raised at once."""
    if name not in compiled():
        raise KeyError(f"no list {name!r} in {VOCABULARY_FILE}")
    return Words(name)
