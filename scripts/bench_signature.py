"""Signature extraction on a 1 MB paste: adversarial vs benign text of the same shape, and the old pattern.

    python scripts/bench_signature.py            # 1 MB figure (for the bench report)
    python scripts/bench_signature.py --size 2000000

The adversarial paste is the one that made the old library pattern quadratic per line
(``a-a-a-…``: every ``-`` is a word boundary where ``\\b[\\w-]+\\.dll`` restarted); the benign
paste has the same size and line lengths, so the ratio between them is the regression signal,
independent of how fast the machine is. `python -m bench.linearity` measures the growth ratios (the tests once did).
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


def _extract(text: str) -> None:
    looks_like_log(text)
    extract_signature(text)


def best_seconds(runs: dict[str, tuple], repeat: int = 3) -> dict[str, float]:
    """Best time of each ``name: (function, text)`` over ``repeat`` rounds, the rounds interleaved.

    Interleaving puts a busy spell of the machine on every candidate alike, and the best of several
    rounds drops the spells themselves, so the ratios between candidates hold on a loaded machine.
    """
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(repeat):
        for name, (function, text) in runs.items():
            started = time.perf_counter()
            function(text)
            best[name] = min(best[name], time.perf_counter() - started)
    return best


def measure(size: int = 1_000_000, *, old_size: int = 100_000, repeat: int = 2) -> dict:
    """Seconds for looks_like_log + extract_signature on adversarial and benign pastes of ``size`` characters,
    and for the old library pattern alone on ``old_size`` adversarial characters (0: skipped)."""
    bad, good = adversarial(size), benign(size)
    runs = {"adversarial_s": (_extract, bad), "benign_s": (_extract, good)}
    if old_size:
        runs["old_pattern_s"] = (OLD_LIBRARY.findall, adversarial(old_size))
    out: dict = {"chars": len(bad), **best_seconds(runs, repeat)}
    if old_size:
        out["old_pattern_chars"] = len(adversarial(old_size))
    return out


def library_growth(chars: int = 100_000, factor: int = 8, repeat: int = 9, scan=None) -> float:
    """How much longer the library scan takes on one ``a-a-a-…`` line ``factor`` times longer: about ``factor``
    when linear, ``factor``² when quadratic (the old pattern)."""
    from bot.kb.signature import _libraries

    scan = scan or _libraries
    best = best_seconds({"small": (scan, "a-" * (chars // 2)), "large": (scan, "a-" * (chars * factor // 2))}, repeat)
    return best["large"] / best["small"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = measure(args.size)
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"signature on {result['chars']:,} chars: adversarial {result['adversarial_s']:.3f}s, "
            f"benign {result['benign_s']:.3f}s (ratio {result['adversarial_s'] / result['benign_s']:.2f}); "
            f"old library pattern alone on {result['old_pattern_chars']:,} adversarial chars: "
            f"{result['old_pattern_s']:.3f}s"
        )
        print(
            f"library scan on one line 8x longer: {library_growth():.1f}x the time (linear: 8, quadratic: 64); "
            f"old pattern: {library_growth(1_000, scan=OLD_LIBRARY.findall, repeat=2):.1f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
