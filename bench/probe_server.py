"""Probe the served app (``python app.py``) for the issue-19 server findings, loopback only, bounded loops.

    python -m bench.probe_server [--clients 200] [--rounds 8] [--half-open 300]

Starts ``app.py`` on a free 127.0.0.1 port (hash embedder, the repo's seeds, a temp index,
``BOT_API_TOKEN`` and ``BOT_ADMIN_TOKEN`` set) and measures:

- **stall**: latency of small ``GET /healthz`` requests (p50/p95) while 4 clients keep posting
  8 MB bodies: millions of small JSON values (the costliest to parse), an 8 MB question (parse
  plus the engine's work on the 100,000 characters it keeps), and 8 MB in a field the API ignores
  (receiving and checking only);
- **history**: server time of one question with 8 history turns of 100,000 characters;
- **slowloris**: how many half-sent requests (headers never finished; body never sent) are
  still open once the request timeout (+5 s) has passed;
- **keep-alive**: failed requests over ``clients`` keep-alive clients x ``rounds`` requests with
  idle gaps around 5 s (uvicorn's default keep-alive timeout, where the race is).

Prints one JSON object; the figures in docs/security.md ("Server limits") come from it.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from fixtures.server import free_port, start_app, stop, wait_ready  # noqa: E402

TOKEN = "probe-token-123"
AUTH = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
MB8 = 8 * 1024 * 1024 - 64


def values_body() -> bytes:
    """The costliest body under the 8 MB cap: millions of tiny JSON values (valid, depth 3)."""
    return b'{"question":"x","pad":[' + b",".join([b"[]"] * (MB8 // 3)) + b"]}"


def string_body() -> bytes:
    return (
        json.dumps({"question": "显存不足 out of memory " * (MB8 // 40)}, ensure_ascii=False)
        .encode()[: MB8 - 2]
        .rsplit(b" ", 1)[0]
        + b'"}'
    )


def padded_body() -> bytes:
    """8 MB in one string field the API ignores: the cost of receiving and checking a body, no engine work."""
    return b'{"question": "\xe6\x98\xbe\xe5\xad\x98\xe4\xb8\x8d\xe8\xb6\xb3", "pad": "' + b"x" * (MB8 - 60) + b'"}'


def post(port: int, path: str, body: bytes, timeout: float = 120) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("POST", path, body=body, headers=AUTH)
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def stall(port: int, body: bytes, small: int = 60) -> dict:
    stop_flag = threading.Event()
    statuses: list[int] = []

    def hammer() -> None:
        while not stop_flag.is_set():
            try:
                statuses.append(post(port, "/api/ask", body))
            except OSError:
                statuses.append(0)

    workers = [threading.Thread(target=hammer, daemon=True) for _ in range(4)]
    for w in workers:
        w.start()
    time.sleep(1.0)  # the big bodies are in flight
    latencies = []
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    for _ in range(small):
        started = time.perf_counter()
        conn.request("GET", "/healthz")
        conn.getresponse().read()
        latencies.append((time.perf_counter() - started) * 1000)
        time.sleep(0.05)
    conn.close()
    stop_flag.set()
    for w in workers:
        w.join(timeout=120)
    latencies.sort()
    return {
        "p50_ms": round(statistics.median(latencies), 1),
        "p95_ms": round(latencies[int(0.95 * (len(latencies) - 1))], 1),
        "max_ms": round(latencies[-1], 1),
        "big_statuses": sorted(set(statuses)),
    }


def history_cost(port: int) -> dict:
    rng = random.Random(7)
    words = "GPU 显存 不足 out of memory batch_size nccl timeout cuda driver paddle tensorflow 多机 训练 报错".split()
    turns = [" ".join(f"{rng.choice(words)}{rng.randrange(10_000)}" for _ in range(12_000))[:100_000] for _ in range(8)]
    body = json.dumps({"question": "怎么办", "history": turns}, ensure_ascii=False).encode()
    times = []
    for _ in range(3):
        started = time.perf_counter()
        status = post(port, "/api/ask", body)
        times.append(time.perf_counter() - started)
    return {"status": status, "seconds_median": round(statistics.median(times), 2)}


def slowloris(port: int, count: int, wait: float) -> dict:
    socks = []
    for n in range(count):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        if n % 2:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # headers never finished
        else:
            s.sendall(
                b"POST /api/ask HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Authorization: Bearer " + TOKEN.encode() + b"\r\nContent-Length: 100\r\n\r\n"
            )  # body never sent
        socks.append(s)
    deadline = time.monotonic() + wait
    open_ = set(range(count))
    while time.monotonic() < deadline and open_:
        for n in list(open_):
            socks[n].settimeout(0.01)
            try:
                data = socks[n].recv(65536)
                if not data:
                    open_.discard(n)
            except TimeoutError:
                pass
            except OSError:
                open_.discard(n)
        time.sleep(0.2)
    for s in socks:
        s.close()
    return {"half_open_sent": count, "still_open_after_s": round(wait, 1), "still_open": len(open_)}


def keep_alive(port: int, clients: int, rounds: int) -> dict:
    failures: list[str] = []
    done = [0]
    lock = threading.Lock()

    def client(seed: int) -> None:
        rng = random.Random(seed)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        for _ in range(rounds):
            try:
                conn.request("GET", "/healthz")
                conn.getresponse().read()
                with lock:
                    done[0] += 1
            except (OSError, http.client.HTTPException) as exc:
                with lock:
                    failures.append(type(exc).__name__)
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            time.sleep(rng.uniform(4.7, 5.3))  # idle around the old 5 s server keep-alive timeout
        conn.close()

    threads = [threading.Thread(target=client, args=(n,), daemon=True) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=rounds * 10 + 60)
    return {"requests": clients * rounds, "ok": done[0], "failed": len(failures), "errors": sorted(set(failures))}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--clients", type=int, default=200)
    p.add_argument("--rounds", type=int, default=8)
    p.add_argument("--half-open", type=int, default=300)
    p.add_argument("--request-timeout", type=float, default=15.0, help="the server's BOT_REQUEST_TIMEOUT")
    p.add_argument("--bodies", default="values,string,padded", help="stall bodies: values,string,padded")
    p.add_argument("--skip", default="", help="comma-separated parts to skip: stall,history,slowloris,keepalive")
    args = p.parse_args(argv)
    skip = set(args.skip.split(","))
    work = Path(tempfile.mkdtemp(prefix="probe-"))
    port = free_port()
    env = {
        "BOT_API_TOKEN": TOKEN,
        "BOT_ADMIN_TOKEN": "probe-admin-123",
        "BOT_EMBEDDER": "hash",
        "BOT_SEEDS_DIR": str(REPO / "seeds"),
        "BOT_INDEX_DIR": str(work / "index"),
        "BOT_FEEDBACK_LOG": str(work / "feedback.jsonl"),
        "BOT_DATA_DIR": str(work / "data"),
        "BOT_REQUEST_TIMEOUT": str(args.request_timeout),
    }
    process = start_app(port, env)
    out: dict = {"python": sys.version.split()[0], "cores": os.cpu_count()}
    try:
        wait_ready(f"http://127.0.0.1:{port}/healthz", process)
        log_lines: list[str] = []  # drain the server's output so a full pipe never blocks it
        threading.Thread(target=lambda: log_lines.extend(process.stdout), daemon=True).start()
        if "stall" not in skip:
            makers = {"values": values_body, "string": string_body, "padded": padded_body}
            for name in args.bodies.split(","):
                out[f"stall_{name}_body"] = stall(port, makers[name]())
        if "history" not in skip:
            out["history_8x100k"] = history_cost(port)
        if "slowloris" not in skip:
            out["slowloris"] = slowloris(port, args.half_open, args.request_timeout + 5)
        if "keepalive" not in skip:
            out["keep_alive"] = keep_alive(port, args.clients, args.rounds)
    finally:
        stop(process)
    out["server_log_lines"] = len(log_lines) if "log_lines" in locals() else None
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
