"""``python -m bench.learned [--rounds N] [--json]``: what the learned relevance costs a question, and to train.

The same engine (the shipped index and calibration) answers the benchmark's questions (``bench/queries.py``)
with its adapter and without it (``engine.adapter = None``), rounds interleaved so a busy machine slows
both alike; the figure is the median over rounds of each question's time (a question's vector is cached
after its first round, so this is the ranking and judging the adapter adds, plus the embedding once).
Target (issue 25): p50 with the adapter at most 3× without. Training time: what ``python -m bot tune``
reported when the shipped adapter was fitted (CPU seconds of one core; ``figures.learned`` of the calibration).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

from bench.queries import QUERIES


def measure(rounds: int = 5) -> dict:
    from bot.engine.retrieve import Engine
    from bot.settings import Settings

    engine = Engine.open(Settings())
    adapter = engine.adapter
    if adapter is None:
        raise SystemExit("no learned relevance loaded for the index. Run: python -m bot tune")
    engine.ask(QUERIES[0].text)  # first-use costs (runtime load, caches) out of the figures
    times: dict[str, list[float]] = {"with": [], "without": []}
    for _ in range(rounds):
        for side in ("with", "without"):
            engine.adapter = adapter if side == "with" else None
            for query in QUERIES:
                started = time.perf_counter()
                engine.ask(query.text)
                times[side].append((time.perf_counter() - started) * 1000)
    engine.adapter = adapter
    p50 = {side: round(statistics.median(values), 2) for side, values in times.items()}
    learned = engine.calibration.figures.get("learned", {})
    return {
        "questions": len(QUERIES),
        "rounds": rounds,
        "p50_ms_with_adapter": p50["with"],
        "p50_ms_without": p50["without"],
        "ratio": round(p50["with"] / p50["without"], 2) if p50["without"] else None,
        "target_ratio": 3.0,
        "fits_seconds_cpu": learned.get("seconds_cpu"),  # the adapter and the ones without each batch
        "adapter_rank": learned.get("rank"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    figures = measure(args.rounds)
    if args.json:
        print(json.dumps(figures))
    else:
        for key, value in figures.items():
            print(f"{key:36} {value}", file=sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
