"""Signature extraction on a 1 MB paste: adversarial vs benign text of the same shape, and the old pattern.

    python scripts/bench_signature.py            # 1 MB figure (for the bench report)
    python scripts/bench_signature.py --size 2000000

The adversarial paste is the one that made the old library pattern quadratic per line
(``a-a-a-…``: every ``-`` is a word boundary where ``\\b[\\w-]+\\.dll`` restarted); the benign
paste has the same size and line lengths, so the ratio between them is the regression signal,
independent of how fast the machine is. tests/kb/test_signature.py calls :func:`measure`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.kb.signature import extract_signature, looks_like_log  # noqa: E402

# The library pattern before issue 11, kept only to show what the fix is measured against.
OLD_LIBRARY = re.compile(r"\blib[\w+\-]+\.so(?:\.\d+)*|\b[\w\-]+\.dll\b|\blib[\w+\-]+\.dylib\b")
LINE = 2_000


def adversarial(size: int) -> str:
    return (("a-" * LINE)[: LINE - 1] + "\n") * max(1, size // LINE)


def benign(size: int) -> str:
    return (("ab " * LINE)[: LINE - 1] + "\n") * max(1, size // LINE)


def _seconds(text: str, repeat: int = 2) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        looks_like_log(text)
        extract_signature(text)
        best = min(best, time.perf_counter() - started)
    return best


def measure(size: int = 1_000_000, *, old_size: int = 100_000, repeat: int = 2) -> dict:
    """Seconds for looks_like_log + extract_signature on adversarial and benign pastes of ``size`` characters."""
    bad, good = adversarial(size), benign(size)
    out = {"chars": len(bad), "adversarial_s": _seconds(bad, repeat), "benign_s": _seconds(good, repeat)}
    if old_size:
        started = time.perf_counter()
        OLD_LIBRARY.findall(adversarial(old_size))
        out["old_pattern_chars"] = len(adversarial(old_size))
        out["old_pattern_s"] = time.perf_counter() - started
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = measure(args.size)
    if args.json:
        print(json.dumps(result))
    else:
        print(f"signature on {result['chars']:,} chars: adversarial {result['adversarial_s']:.3f}s, "
              f"benign {result['benign_s']:.3f}s (ratio {result['adversarial_s'] / result['benign_s']:.2f}); "
              f"old library pattern alone on {result['old_pattern_chars']:,} adversarial chars: "
              f"{result['old_pattern_s']:.3f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
