"""The environment reader's patterns as data (``bot/data/environment.toml``, a company's ``seeds/environment.toml``).

What text a pasted environment is matched with is specific to the frameworks and their messages, so it is data;
what each match means stays in :mod:`bot.diagnose.environment`. The :class:`bot.kb.domain.Domain` carries one
:class:`Patterns`, loaded here; a pattern is reached by its name (``patterns.SMI_DRIVER``).

Every pattern must stay linear in the length of a paste (a paste is up to 200,000 characters, read on every turn):
no unbounded repeat, no repeat over 40 inside another repeat. A file that breaks this, names an unknown pattern or
does not compile is refused with the file, the name and the fix.

    >>> p = load_patterns()
    >>> p.SMI_DRIVER.search("| NVIDIA-SMI 418.67       Driver Version: 418.67       CUDA Version: 10.1     |").group(1)
    '418.67'
    >>> bool(p.KEYWORD.search("nvidia-smi")), p.newest_cuda_major
    (True, 13)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from re import _constants as sre_constants  # the parser of re itself: what a pattern repeats, and how deep
from re import _parser as sre_parse
from typing import Any

from bot.kb.vocabulary import read_toml

PATTERNS_FILE = Path(__file__).parents[1] / "data" / "environment.toml"
SEEDS_PATTERNS = "environment.toml"  # seeds/environment.toml: a company's replacements, by name
NESTED_REPEAT = 40  # the most a repeat inside another repeat may repeat
_FLAGS = {"IGNORECASE": re.IGNORECASE, "MULTILINE": re.MULTILINE}


class PatternsError(ValueError):
    """A patterns file that cannot be used; the message names the file, the pattern and the fix."""


@dataclass(frozen=True)
class Patterns:
    """The compiled patterns by name, the line keywords (as one pattern, ``KEYWORD``) and the newest CUDA major."""

    named: dict[str, re.Pattern[str]] = field(compare=False)
    keywords: tuple[str, ...]
    newest_cuda_major: int
    source: tuple[tuple[str, str, int], ...]  # (name, pattern, flags): what equality and a digest compare

    def __getattr__(self, name: str) -> re.Pattern[str]:
        named = self.__dict__.get("named", {})
        if name in named:
            return named[name]
        if name == "KEYWORD":
            return self.__dict__["_keyword"]
        raise AttributeError(f"no pattern {name!r} in {PATTERNS_FILE}")

    def __post_init__(self) -> None:
        object.__setattr__(self, "_keyword", re.compile("|".join(re.escape(k) for k in self.keywords)))


def _repeats(tree: Any, depth: int = 0):
    """(max repeat, nesting depth) of every repeat in a parsed pattern."""
    for op, arg in tree:
        if op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT):
            yield arg[1], depth
            yield from _repeats(arg[2], depth + 1)
        elif op == sre_constants.SUBPATTERN:
            yield from _repeats(arg[-1], depth)
        elif op == sre_constants.BRANCH:
            for branch in arg[1]:
                yield from _repeats(branch, depth)
        elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            yield from _repeats(arg[1], depth)


def linear_problem(pattern: str, flags: int = 0) -> str:
    """Why ``pattern`` may take more than linear time ("" when it cannot).

    >>> linear_problem(r"cuda\\s{0,3}(\\d{1,2})"), linear_problem(r"(a+)+b")
    ('', 'an unbounded repeat')
    >>> linear_problem(r"(?:x{0,50}){0,5}")
    'a repeat up to 50 inside another repeat'
    """
    for high, depth in _repeats(sre_parse.parse(pattern, flags)):
        if high == sre_constants.MAXREPEAT:
            return "an unbounded repeat"
        if depth and high > NESTED_REPEAT:
            return f"a repeat up to {high} inside another repeat"
    return ""


def _read(path: Path) -> dict[str, Any]:
    try:
        return read_toml(path)  # a deeply nested file is named too, not a RecursionError (issue 45)
    except ValueError as exc:
        raise PatternsError(f"{path}: cannot be read ({exc}). Fix the TOML or remove the file") from None


def _compiled(path: Path, name: str, row: Any) -> tuple[re.Pattern[str], tuple[str, str, int]]:
    if not isinstance(row, dict) or not isinstance(row.get("re"), str):
        raise PatternsError(f"{path}: [pattern.{name}] needs re = '…' (a TOML literal string). Fix the file")
    unknown = [f for f in row.get("flags", []) if f not in _FLAGS]
    if unknown:
        raise PatternsError(f"{path}: [pattern.{name}] flag {unknown[0]!r} is not one of {sorted(_FLAGS)}")
    flags = sum(_FLAGS[f] for f in row.get("flags", []))
    try:
        compiled = re.compile(row["re"], flags)
    except re.error as exc:
        raise PatternsError(f"{path}: [pattern.{name}] does not compile ({exc}). Fix the expression") from None
    problem = linear_problem(row["re"], flags)
    if problem:
        raise PatternsError(
            f"{path}: [pattern.{name}] has {problem}; a paste is read on every turn, so use bounded repeats "
            f"such as {{0,40}} and no repeat over {NESTED_REPEAT} inside another"
        )
    return compiled, (name, row["re"], flags)


def load_patterns(own: Path | None = None) -> Patterns:
    """The shipped patterns with ``own`` (a company's ``seeds/environment.toml``) replacing those it names."""
    shipped = _read(PATTERNS_FILE)
    rows: dict[str, tuple[Path, Any]] = {n: (PATTERNS_FILE, r) for n, r in shipped.get("pattern", {}).items()}
    keywords: tuple[Path, Any] = (PATTERNS_FILE, shipped.get("keywords"))
    newest: tuple[Path, Any] = (PATTERNS_FILE, shipped.get("newest_cuda_major"))
    if own is not None:
        data = _read(own)
        unknown = sorted(set(data) - {"pattern", "keywords", "newest_cuda_major"})
        if unknown:
            raise PatternsError(f"{own}: no key {unknown[0]!r}; use [pattern.NAME], keywords or newest_cuda_major")
        for name, row in data.get("pattern", {}).items():
            if name not in rows:
                raise PatternsError(f"{own}: [pattern.{name}] is not a pattern the reader uses; see {PATTERNS_FILE}")
            rows[name] = (own, row)
        keywords = (own, data["keywords"]) if "keywords" in data else keywords
        newest = (own, data["newest_cuda_major"]) if "newest_cuda_major" in data else newest
    if not isinstance(keywords[1], list) or not all(isinstance(k, str) and k for k in keywords[1]):
        raise PatternsError(f'{keywords[0]}: keywords must be a list of words, e.g. keywords = ["cuda"]. Fix the file')
    if not isinstance(newest[1], int):
        raise PatternsError(f"{newest[0]}: newest_cuda_major must be a whole number, e.g. 13. Fix the file")
    named: dict[str, re.Pattern[str]] = {}
    source = []
    for name, (path, row) in rows.items():
        named[name], row_source = _compiled(path, name, row)
        source.append(row_source)
    return Patterns(named, tuple(keywords[1]), newest[1], tuple(source))
