"""Small measuring helpers shared by the benchmark workers."""

from __future__ import annotations

import resource
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable

import numpy as np


def percentiles(samples_ms: Iterable[float]) -> dict:
    values = np.asarray(list(samples_ms), dtype=np.float64)
    if values.size == 0:
        return {"n": 0, "p50": None, "p95": None, "p99": None, "mean": None, "max": None}
    p50, p95, p99 = np.percentile(values, [50, 95, 99])
    return {
        "n": int(values.size),
        "p50": round(float(p50), 3),
        "p95": round(float(p95), 3),
        "p99": round(float(p99), 3),
        "mean": round(float(values.mean()), 3),
        "max": round(float(values.max()), 3),
    }


def peak_rss_mb() -> float:
    """Peak resident set size of this process, in MiB (Linux reports KiB)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / 1024 if sys.platform != "darwin" else peak / 1024 / 1024, 1)


def current_rss_mb() -> float:
    try:
        import psutil

        return round(psutil.Process().memory_info().rss / 1024 / 1024, 1)
    except ImportError:  # pragma: no cover
        with open("/proc/self/statm") as handle:
            pages = int(handle.read().split()[1])
        return round(pages * resource.getpagesize() / 1024 / 1024, 1)


class StageClock:
    """Accumulates time spent inside wrapped callables during one measured call."""

    def __init__(self) -> None:
        self.current: dict[str, float] = defaultdict(float)
        self.samples: dict[str, list[float]] = defaultdict(list)

    def wrap(self, stage: str, fn: Callable) -> Callable:
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.current[stage] += (time.perf_counter() - start) * 1000

        return timed

    def start(self) -> None:
        self.current = defaultdict(float)

    def stop(self, total_ms: float, stages: Iterable[str]) -> None:
        accounted = 0.0
        for stage in stages:
            self.samples[stage].append(self.current.get(stage, 0.0))
            accounted += self.current.get(stage, 0.0)
        self.samples["other"].append(max(total_ms - accounted, 0.0))

    def summary(self) -> dict:
        return {stage: percentiles(values) for stage, values in self.samples.items()}
