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

Issue 28 (``--only door28`` runs just these):

- **gradio_stall**: ``/healthz`` p50/p95 while 4 clients post 8 MB of ``[],`` to ``/gradio_api/queue/join``;
- **gradio_64mb**: status and seconds until a 64 MB ``Content-Length`` to ``queue/join`` is answered (head only);
- **v1_usage_stall**: ``/healthz`` p50/p95 while 4 clients post 7.2 MB system messages to ``/v1``;
- **trickle**: seconds until a body trickled one byte every 10 s is closed (40 s at most);
- **idle**: with the server at 1,024 descriptors, 1,100 connections that each sent one ``GET /healthz`` and
  stay idle, then the seconds a fresh client waits for ``/healthz`` (each try 5 s, 30 s in all);
- **smuggle**: responses to one ``Content-Length`` + ``Transfer-Encoding`` request with a second request
  after its chunked end; **throttle**: wrong Bearer guesses on ``/admin`` before the first 429 (300 at most).

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


def post(port: int, path: str, body: bytes, timeout: float = 120, headers: dict | None = None) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("POST", path, body=body, headers=headers or AUTH)
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def stall(port: int, body: bytes, small: int = 60, path: str = "/api/ask") -> dict:
    stop_flag = threading.Event()
    statuses: list[int] = []

    def hammer() -> None:
        while not stop_flag.is_set():
            try:
                statuses.append(post(port, path, body))
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


def gradio_values_body() -> bytes:
    return b'{"data": [' + b",".join([b"[]"] * (MB8 // 3)) + b'], "fn_index": 0, "session_hash": "probe"}'


def v1_system_body() -> bytes:
    system = "显存不足 " * (7_200_000 // 15)  # about 7.2 MB of UTF-8
    messages = [{"role": "system", "content": system}, {"role": "user", "content": "显存不足"}]
    return json.dumps({"model": "gpu-troubleshooter", "messages": messages}, ensure_ascii=False).encode()


def read_answer(sock: socket.socket, patience: float) -> tuple[bytes, float]:
    """What the server sends until it closes ``sock`` or ``patience`` passes, and the seconds that took."""
    started, data = time.monotonic(), b""
    while time.monotonic() - started < patience:
        sock.settimeout(max(0.05, patience - (time.monotonic() - started)))
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            break
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    return data, round(time.monotonic() - started, 2)


def gradio_64mb(port: int) -> dict:
    head = (
        f"POST /gradio_api/queue/join HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {64 * 1024 * 1024}\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(head.encode())
        data, seconds = read_answer(sock, 30)
    return {"status_line": data.split(b"\r\n", 1)[0].decode("latin-1"), "seconds": seconds}


def trickle(port: int, every: float = 10.0, patience: float = 40.0) -> dict:
    head = (
        f"POST /api/ask HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
        "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
    )
    started = time.monotonic()
    closed = False
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(head.encode())
        while not closed and time.monotonic() - started < patience:
            try:
                sock.sendall(b" ")
            except OSError:
                break
            _, waited = read_answer(sock, every)  # returns early only when the server answers or closes
            closed = waited < every - 0.05
    seconds = time.monotonic() - started
    return {"closed_after_s": round(seconds, 1) if closed else None, "patience_s": patience}


def idle_flood(port: int, count: int = 1_100) -> dict:
    socks: list[socket.socket] = []
    unanswered = 0
    for _ in range(count):
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        except OSError:
            unanswered += 1
            continue
        socks.append(sock)
        try:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            sock.settimeout(2)
            if not sock.recv(65536).startswith(b"HTTP/1.1 200"):
                unanswered += 1
        except OSError:
            unanswered += 1
        if unanswered >= 10:
            break
    started = time.monotonic()
    served = None
    while time.monotonic() - started < 30:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        try:
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                served = round(time.monotonic() - started, 2)
                break
        except OSError:
            pass
        finally:
            conn.close()
    for sock in socks:
        sock.close()
    return {"opened": len(socks), "unanswered": unanswered, "fresh_client_served_after_s": served}


def smuggle(port: int) -> dict:
    body = b'{"question": "q"}'
    request = (
        b"POST /api/ask HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN.encode() + b"\r\n"
        b"Content-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n"
        + f"{len(body):x}\r\n".encode()
        + body
        + b"\r\n0\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(request)
        data, _ = read_answer(sock, 15)
    lines = [line.decode("latin-1") for line in data.split(b"\r\n") if line.startswith(b"HTTP/1.1 ")]
    return {"responses": lines}


def throttle(port: int, limit: int = 300) -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    for n in range(1, limit + 1):
        conn.request("GET", "/admin/export.csv", headers={"Authorization": "Bearer wrong-guess"})
        response = conn.getresponse()
        response.read()
        if response.status == 429:
            conn.close()
            return {"first_429_at_guess": n}
    conn.close()
    return {"first_429_at_guess": None, "guesses": limit}


def door28(port: int) -> dict:
    out = {
        "smuggle": smuggle(port),
        "gradio_64mb": gradio_64mb(port),
        "gradio_stall": stall(port, gradio_values_body(), small=20, path="/gradio_api/queue/join"),
        "v1_usage_stall": stall(port, v1_system_body(), small=20, path="/v1/chat/completions"),
        "trickle": trickle(port),
        "idle": idle_flood(port),
        "throttle": throttle(port),  # last: it locks this address out
    }
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--clients", type=int, default=200)
    p.add_argument("--rounds", type=int, default=8)
    p.add_argument("--half-open", type=int, default=300)
    p.add_argument("--request-timeout", type=float, default=15.0, help="the server's BOT_REQUEST_TIMEOUT")
    p.add_argument("--bodies", default="values,string,padded", help="stall bodies: values,string,padded")
    p.add_argument("--skip", default="", help="comma-separated parts to skip: stall,history,slowloris,keepalive")
    p.add_argument("--only", default="", help="door28: only the issue-28 probes (the server at 1,024 descriptors)")
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
        "BOT_DATA_DIR": str(work / "data"),
        "BOT_REQUEST_TIMEOUT": str(args.request_timeout),
    }
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if args.only == "door28":  # the server inherits a common 1,024 limit; this process keeps its own
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(1024, soft), hard))
    process = start_app(port, env)
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    out: dict = {"python": sys.version.split()[0], "cores": os.cpu_count()}
    try:
        wait_ready(f"http://127.0.0.1:{port}/healthz", process)
        log_lines: list[str] = []  # drain the server's output so a full pipe never blocks it
        threading.Thread(target=lambda: log_lines.extend(process.stdout), daemon=True).start()
        if args.only == "door28":
            out["door28"] = door28(port)
            skip = {"stall", "history", "slowloris", "keepalive"}
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
