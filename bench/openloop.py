"""Open-loop load: requests arrive as a Poisson process, whether or not earlier ones have finished.

A closed loop (N clients, each waiting for its answer before asking again) slows
its own arrivals when the server slows, and so hides queueing. Here each request
has a scheduled send time drawn from exponential gaps at the given rate, and its
latency is counted from that scheduled time (so a client-side delay in sending
is charged to the server, not forgotten). The mix is what a portal sees when a
cluster fails: mostly short questions, some pasted logs, and the same question
again from a colleague.

- 80 % short questions (Chinese and English), 20 % pasted logs (~150 tokens);
- 10 % of the requests repeat an earlier request's exact text;
- every other request is a new wording (``question (n)``), so no cache answers it.
"""

from __future__ import annotations

import asyncio
import random
import time

from bench.concurrency import ASK_PATH, _check_loopback
from bench.measure import percentiles

LOG_PREAMBLE = (
    "I1123 08:00:01.000100  4242 launch.py:211] trainer 0 started, device gpu:0\n"
    "I1123 08:00:02.118000  4242 executor.cc:200] step 10 cost 0.31s, loss 2.3101\n"
    "W1123 08:00:03.004000  4242 device_context.cc:236] Please NOTE: device: 0, GPU Compute Capability: 8.0, "
    "Driver API Version: 12.2, Runtime API Version: 11.8\n"
)


def request_mix(seed: int = 0) -> tuple[list[str], list[str]]:
    """(short questions, pasted logs) drawn from the benchmark queries."""
    from bench.queries import QUERIES

    short = [q.text for q in QUERIES if q.kind in ("zh", "en")]
    logs = [LOG_PREAMBLE + q.text + "\n训练跑到一半就挂了，怎么解决？" for q in QUERIES if q.kind == "trace"]
    return short, logs


def schedule(
    rate: float, duration_s: float, seed: int = 0, repeat_share: float = 0.10, log_share: float = 0.20
) -> list[tuple[float, str, str]]:
    """(send time in s, kind, text) for one run: Poisson arrivals at ``rate`` per second."""
    rng = random.Random(seed)
    short, logs = request_mix()
    out: list[tuple[float, str, str]] = []
    t, n = 0.0, 0
    while True:
        t += rng.expovariate(rate)
        if t >= duration_s:
            return out
        n += 1
        if out and rng.random() < repeat_share:
            _, kind, text = out[rng.randrange(len(out))]
            out.append((t, "repeat", text))
        elif rng.random() < log_share:
            out.append((t, "log", f"{rng.choice(logs)}\n(request {n})"))
        else:
            out.append((t, "short", f"{rng.choice(short)} ({n})"))


async def _run(url: str, plan: list[tuple[float, str, str]], timeout_s: float) -> dict:
    import httpx

    latencies: list[float] = []
    by_kind: dict[str, list[float]] = {}
    errors: dict[str, int] = {}
    limits = httpx.Limits(max_connections=512, max_keepalive_connections=64)
    async with httpx.AsyncClient(timeout=timeout_s, limits=limits) as client:
        started = time.perf_counter()

        async def one(at: float, kind: str, text: str) -> None:
            delay = started + at - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            try:
                response = await client.post(url + ASK_PATH, json={"question": text, "history": []})
                ok = response.status_code == 200 and isinstance(response.json().get("hits"), list)
                if not ok:
                    key = f"HTTP {response.status_code}"
                    errors[key] = errors.get(key, 0) + 1
                    return
            except (httpx.HTTPError, ValueError) as exc:
                errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
                return
            ms = (time.perf_counter() - (started + at)) * 1000  # from the scheduled time: no coordinated omission
            latencies.append(ms)
            by_kind.setdefault(kind, []).append(ms)

        await asyncio.gather(*(one(*item) for item in plan))
        elapsed = time.perf_counter() - started
    return {"latencies": latencies, "by_kind": by_kind, "errors": errors, "elapsed_s": elapsed}


def run_open_loop(
    url: str, rates: list[float], duration_s: float, *, timeout_s: float = 30.0, seed: int = 0
) -> list[dict]:
    """One run per rate, lowest first; each returns {"rps", "p50_ms", "p95_ms", "p99_ms", "errors", ...}."""
    _check_loopback(url)
    out = []
    for n, rate in enumerate(sorted(rates)):
        plan = schedule(rate, duration_s, seed=seed + n)
        raw = asyncio.run(_run(url, plan, timeout_s))
        lat = percentiles(raw["latencies"])
        out.append(
            {
                "rps": rate,
                "p50_ms": lat["p50"],
                "p95_ms": lat["p95"],
                "p99_ms": lat["p99"],
                "errors": sum(raw["errors"].values()),
                "error_kinds": raw["errors"],
                "sent": len(plan),
                "completed": len(raw["latencies"]),
                "duration_s": duration_s,
                "achieved_rps": round(len(raw["latencies"]) / max(raw["elapsed_s"], 1e-9), 2),
                "by_kind_p95_ms": {k: percentiles(v)["p95"] for k, v in raw["by_kind"].items()},
                "mix": {k: sum(1 for _, kind, _ in plan if kind == k) for k in ("short", "log", "repeat")},
            }
        )
    return out


def p95_passes_1s_at(runs: list[dict]) -> float | None:
    """The lowest rate whose p95 is over 1 s (or that had errors); None when every rate stayed under."""
    for run in sorted(runs, key=lambda r: r["rps"]):
        if run["errors"] or run["p95_ms"] is None or run["p95_ms"] > 1000:
            return run["rps"]
    return None
