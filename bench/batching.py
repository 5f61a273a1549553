"""The embedder alone under closed-loop load: e5 on ONNX Runtime with and without micro-batches (issue 45).

``python -m bench.batching [--clients 50] [--seconds 6] [--rounds 2]`` — ``clients`` threads each embed a new
wording of a benchmark question as soon as their previous one is back, for ``seconds``, once plain (each caller its
own runtime call, what the plain FAISS server does) and once batched (:mod:`bot.kb.batcher`), the two interleaved
``rounds`` times in one process; then 30 questions one at a time on each (what a question alone pays). Prints one
JSON object: requests per second, CPU milliseconds per request, the batches made, the median alone, and the
load average (the machine is shared: compare the two within a run).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time


def closed_loop(embedder, questions: list[str], clients: int, seconds: float) -> dict:
    stop = time.monotonic() + seconds
    done = [0]
    lock = threading.Lock()

    def client(n: int) -> None:
        k = 0
        while time.monotonic() < stop:
            embedder.embed([f"{questions[(n + k) % len(questions)]} ({n}-{k})"], "query")
            k += 1
            with lock:
                done[0] += 1

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    cpu, wall = time.process_time(), time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall, cpu = time.monotonic() - wall, time.process_time() - cpu
    return {"rps": round(done[0] / wall, 2), "cpu_ms_per_request": round(cpu / max(done[0], 1) * 1000, 2)}


def alone_ms(embedder, questions: list[str], n: int = 30) -> float:
    times = []
    for k in range(n):
        started = time.perf_counter()
        embedder.embed([f"{questions[k % len(questions)]} [{k}]"], "query")
        times.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(times), 2)


def main(argv: list[str] | None = None) -> int:
    from bench.queries import QUERIES
    from bot.kb.embed import E5Embedder

    parser = argparse.ArgumentParser(prog="python -m bench.batching", description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    questions = [q.text for q in QUERIES]
    sides = {"plain": E5Embedder(runtime="onnx"), "batched": E5Embedder(runtime="onnx", batching=True)}
    for embedder in sides.values():
        embedder.embed(["warm-up"], "query")
    load_start = os.getloadavg()
    runs: dict[str, list[dict]] = {name: [] for name in sides}
    for _ in range(args.rounds):
        for name, embedder in sides.items():
            runs[name].append({**closed_loop(embedder, questions, args.clients, args.seconds)})
    alone = {name: alone_ms(embedder, questions) for name, embedder in sides.items()}
    out = {
        "clients": args.clients,
        "seconds": args.seconds,
        "runs": runs,
        "batches": sides["batched"]._batcher.batches,
        "batched_jobs": sides["batched"]._batcher.jobs,
        "alone_p50_ms": alone,
        "rps_ratio_batched_over_plain": round(
            statistics.median(r["rps"] for r in runs["batched"]) / statistics.median(r["rps"] for r in runs["plain"]),
            3,
        ),
        "loadavg_start": [round(x, 2) for x in load_start],
        "loadavg_end": [round(x, 2) for x in os.getloadavg()],
    }
    json.dump(out, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
