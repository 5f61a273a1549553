"""Growth ratios of the text scanners that once went quadratic: the figures that used to be timing tests.

    python -m bench.linearity            # every check at its full size (minutes on 2 shared cores; --only to pick)
    python -m bench.linearity --scale 0.01 --repeat 1   # a smoke run on tiny inputs (what the tests do)

Each check times the same code on a small and a large input of the same shape, the rounds interleaved and the
best of each kept (:func:`best_seconds`), and prints the ratio ``large / small`` beside what linear growth gives
(``factor``) and what quadratic growth gives (``factor²``). Ratios, not seconds: they hold on a loaded machine,
and nothing here asserts on them. A ratio near ``factor²`` means a regression; open the check's function.

- ``sanitiser``: ``doc_markdown`` (bot/answer/safe_markdown.py) on runs of ``[a](``, ``![``, ``[x]: y`` and
  ``<a href='x'>`` (issue 19);
- ``signature``: ``looks_like_log`` + ``extract_signature`` on an ``a-a-a-…`` paste against a benign one of the
  same size (issue 11; scripts/bench_signature.py has the 1 MB figures), the library scan on one long line, and
  the library pattern before issue 11 on the same line (quadratic: the measure tells them apart);
- ``question_marks``: ``Lexicon.find`` on a long run of ``?`` (issue 28, finding 1), beside the splitter before
  issue 28;
- ``environment``: ``read_environment`` on a pip list with adversarial lines;
- ``pastes``: ``looks_like_log`` + ``extract_signature`` on pastes shaped to make a regex backtrack (long lines of
  colons, dashes, spaces, dotted names, unclosed ``at [``; :data:`PASTES`), a quarter megabyte against a whole one.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import Callable

# The patterns before their fixes, kept only to show what the fixes are measured against.
OLD_LIBRARY = re.compile(r"\blib[\w+\-]+\.so(?:\.\d+)*|\b[\w\-]+\.dll\b|\blib[\w+\-]+\.dylib\b")
OLD_SENTENCE = re.compile(r"[.。;；!！?？\n]+(?:\s|$)|[。；！？\n]")


def best_seconds(runs: dict[str, Callable[[], object]], repeat: int = 3) -> dict[str, float]:
    """Best time of each ``name: call`` over ``repeat`` rounds, the rounds interleaved (a busy spell of the
    machine falls on every candidate alike; the best of the rounds drops the spells).

    >>> sorted(best_seconds({"a": lambda: None, "b": lambda: None}, repeat=1))
    ['a', 'b']
    """
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(repeat):
        for name, call in runs.items():
            started = time.perf_counter()
            call()
            best[name] = min(best[name], time.perf_counter() - started)
    return best


def growth(function: Callable[[str], object], small: str, large: str, repeat: int) -> float:
    """``function(large)``'s time over ``function(small)``'s."""
    best = best_seconds({"small": lambda: function(small), "large": lambda: function(large)}, repeat)
    return best["large"] / max(best["small"], 1e-9)


def _size(n: int, scale: float) -> int:
    return max(8, int(n * scale))


def sanitiser(scale: float = 1.0, repeat: int = 3) -> dict:
    from bot.answer.safe_markdown import doc_markdown

    n = _size(8_000, scale)
    return {
        "factor": 4,
        "ratios": {
            unit: round(growth(doc_markdown, unit * n, unit * 4 * n, repeat), 2)
            for unit in ("[a](", "![", "[x]: y\n", "<a href='x'>")
        },
    }


def signature(scale: float = 1.0, repeat: int = 3) -> dict:
    from bot.kb.signature import _libraries, extract_signature, looks_like_log

    def extract(text: str) -> None:
        looks_like_log(text)
        extract_signature(text)

    size, line = _size(200_000, scale), 2_000
    adversarial = (("a-" * line)[: line - 1] + "\n") * max(1, size // line)
    benign = (("ab " * line)[: line - 1] + "\n") * max(1, size // line)
    best = best_seconds({"adversarial": lambda: extract(adversarial), "benign": lambda: extract(benign)}, repeat)
    chars = _size(100_000, scale)
    return {
        "factor": 8,
        "adversarial_over_benign": round(best["adversarial"] / max(best["benign"], 1e-9), 2),
        "library_scan": round(growth(_libraries, "a-" * (chars // 2), "a-" * (chars * 4), repeat), 2),
        "old_library_pattern": round(growth(OLD_LIBRARY.findall, "a-" * 500, "a-" * 4_000, repeat), 2),
    }


def question_marks(scale: float = 1.0, repeat: int = 5) -> dict:
    from bot.engine.subjects import Lexicon

    lexicon = Lexicon.load()
    n = _size(2_000, scale)

    def question(marks: int) -> str:
        return "linux windows mac " + "?" * marks + "x"

    return {
        "factor": 4,
        "lexicon_find": round(growth(lexicon.find, question(n), question(4 * n), repeat), 2),
        "old_splitter": round(growth(OLD_SENTENCE.split, question(n), question(4 * n), repeat), 2),
    }


def environment(scale: float = 1.0, repeat: int = 3) -> dict:
    from bot.diagnose.environment import read_environment

    def paste(lines: int, adversarial_lines: int) -> str:
        body = "\n".join(f"package-{i:05d}            {i % 7}.{i % 13}.{i % 5}" for i in range(lines))
        adversarial = "cuda " * 150 + "1" * 150 + " driver " + "9" * 200 + "\n"
        return f"Package    Version\n---------- -------\n{body}\npaddlepaddle-gpu    2.6.0.post120\n" + (
            adversarial * adversarial_lines
        )

    lines, extra = _size(600, scale), _size(20, scale)
    return {
        "factor": 8,
        "read_environment": round(
            growth(read_environment, paste(lines, extra), paste(8 * lines, 8 * extra), repeat), 2
        ),
    }


def _lines(line: str, size: int) -> str:
    return line * max(1, size // len(line))


# Pastes shaped to trip a backtracking regex in the log scanner, each about ``size`` characters long (the megabyte
# pastes tests/system/test_bad_input.py timed once; the test now runs them at a tenth of that, untimed).
PASTES: dict[str, Callable[[int], str]] = {
    "one_long_line": lambda size: "a" * size,
    "dotted_identifier": lambda size: "a." * (size // 2),
    "dotted_no_break": lambda size: _lines("x." * 999 + "\n", size),
    "paths": lambda size: _lines("/" + "/".join(["dir"] * 400) + ":1:2:3\n", size),
    "unclosed_at_bracket": lambda size: _lines("at [" + "/x" * 900 + "\n", size),
    "colons": lambda size: _lines("Error" + ":" * 1990 + "\n", size),
    "spaces": lambda size: _lines(" " * 1999 + "\n", size),
    "camel_error_words": lambda size: _lines("NotAnErrorButLooksLikeOne" * 80 + "\n", size),
    "flags": lambda size: _lines("--flag-" + "-" * 1990 + "\n", size),
    "hex": lambda size: _lines("0x" + "f" * 1998 + "\n", size),
    "glog_prefix": lambda size: _lines("I0221 18:48:34.436648 29562 " + "a" * 1900 + "\n", size),
    "many_short_lines": lambda size: "E\n" * (size // 2),
    "cjk": lambda size: "显存不足" * (size // 4),
}


def pastes(scale: float = 1.0, repeat: int = 2) -> dict:
    """``looks_like_log`` + ``extract_signature`` on each of :data:`PASTES` at 250,000 and 1,000,000 characters."""
    from bot.kb.signature import extract_signature, looks_like_log

    def scan(text: str) -> None:
        looks_like_log(text)
        extract_signature(text)

    n = _size(250_000, scale)
    return {
        "factor": 4,
        "ratios": {name: round(growth(scan, make(n), make(4 * n), repeat), 2) for name, make in PASTES.items()},
    }


CHECKS = {
    "sanitiser": sanitiser,
    "signature": signature,
    "question_marks": question_marks,
    "environment": environment,
    "pastes": pastes,
}


def measure(scale: float = 1.0, repeat: int | None = None, checks: tuple[str, ...] = tuple(CHECKS)) -> dict:
    """Every check's ratios (``repeat`` rounds each, else the check's own default)."""
    options = {} if repeat is None else {"repeat": repeat}
    return {name: CHECKS[name](scale, **options) for name in checks}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="input sizes times this (1: the figures' sizes)")
    parser.add_argument("--repeat", type=int, default=None, help="rounds per input (default: each check's own)")
    parser.add_argument("--only", nargs="*", choices=sorted(CHECKS), default=sorted(CHECKS))
    args = parser.parse_args(argv)
    print(json.dumps(measure(args.scale, args.repeat, tuple(args.only)), ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
