"""Soak probes of issue 36 on loopback (nothing leaves 127.0.0.1): a real ``python app.py`` (:mod:`bench.app_server`)
with the hash embedder and the SQLite store, bounded in count and time, stopping by themselves.

    python -m bench.soak [mix|kill|build|all] [--clients 30] [--seconds 60] [--kills 3] [--builds 2] [--embedder hash]

- ``mix``: ``--clients`` clients for ``--seconds`` s, a third each: ``/api/ask`` with the ``state`` round trip (a
  question, then a follow-up sending back the reply's ``state``), ``/v1/chat/completions`` streaming (the ``state`` of
  the last chunk sent back on the next turn), and ``/api/ask`` with plain ``history`` (no state). Counts errors (not
  200, a reply without ``state``, a stream without ``[DONE]``), p50/p95 latency per kind and the server's RSS growth
  (psutil) from a warm server.
- ``kill``: 8 writers ask questions and vote on the answers, each with a unique marker; after 2-6 s the app is
  SIGKILLed, started again on the same data folder, and stopped with SIGTERM; ``--kills`` times. Then the store is
  read: every acknowledged (200) question and vote must be stored, once. Rows stored but never acknowledged (in flight
  at the kill) are counted apart: allowed.
- ``build``: 8 clients ask while ``python -m bot build`` runs ``--builds`` times on the server's index folder: failed
  requests must be 0.

Prints one JSON object per probe. Seconds on a shared host say little; counts hold.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.app_server import HERE, TOKEN, request, start_app, stop

AUTH = {"Authorization": f"Bearer {TOKEN}"}
QUESTIONS = (
    "训练时显存不足怎么办？",
    "NCCL timeout when training on 8 GPUs",
    "paddle 报错 libcudnn version mismatch",
    "tensorflow could not load dynamic library libcudart.so.11.0",
    "多卡训练 loss 变成 nan",
)
FOLLOW_UPS = ("那多机呢？", "what about TensorFlow?", "没用", "still fails after that")


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)


def _ask(port: int, body: dict) -> tuple[int, dict]:
    status, raw = request(port, "POST", "/api/ask", body, AUTH, timeout=120)
    return status, (json.loads(raw) if status == 200 else {"detail": raw[:200].decode(errors="replace")})


def _stream(port: int, messages: list[dict], state: str | None) -> tuple[int, str | None, bool]:
    """One streamed /v1 turn: (status, the last chunk's state, whether [DONE] came)."""
    body = {"model": "gpu-troubleshooter", "messages": messages, "stream": True}
    if state:
        body["state"] = state
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json", **AUTH})
        response = conn.getresponse()
        if response.status != 200:
            response.read()
            return response.status, None, False
        found, done = None, False
        for line in response:
            line = line.strip()
            if line == b"data: [DONE]":
                done = True
                break
            if line.startswith(b"data: "):
                found = json.loads(line[6:]).get("state") or found
        return 200, found, done
    finally:
        conn.close()


def _server_rss_mb(pid: int) -> float:
    import psutil

    return round(psutil.Process(pid).memory_info().rss / 2**20, 1)


def probe_mix(work: Path, clients: int, seconds: float, embedder: str) -> dict:
    process, port = start_app(HERE, work, {"BOT_EMBEDDER": embedder})
    results: list[tuple[str, bool, float, str]] = []  # kind, ok, seconds, what went wrong
    lock = threading.Lock()
    try:
        for question in QUESTIONS:  # warm: every code path loaded before RSS is counted
            _ask(port, {"question": question})
            _stream(port, [{"role": "user", "content": question}], None)
        rss_before = _server_rss_mb(process.pid)
        peak = [rss_before]
        deadline = time.monotonic() + seconds
        stop_sampling = threading.Event()

        def sample() -> None:
            while not stop_sampling.wait(1):
                peak[0] = max(peak[0], _server_rss_mb(process.pid))

        def note(kind: str, ok: bool, started: float, why: str = "") -> None:
            with lock:
                results.append((kind, ok, time.monotonic() - started, why))

        def client(n: int) -> None:
            rng = random.Random(n)
            kind = ("state", "stream", "history")[n % 3]
            while time.monotonic() < deadline:
                first, then = rng.choice(QUESTIONS), rng.choice(FOLLOW_UPS)
                try:
                    started = time.monotonic()
                    if kind == "state":
                        status, reply = _ask(port, {"question": first})
                        ok = status == 200 and bool(reply.get("state"))
                        note(kind, ok, started, "" if ok else f"{status} {reply.get('detail', 'no state')}")
                        if not ok:
                            continue
                        started = time.monotonic()
                        status, reply = _ask(port, {"question": then, "state": reply["state"]})
                        ok = status == 200 and bool(reply.get("state"))
                        note(kind, ok, started, "" if ok else f"{status} {reply.get('detail', 'no state')}")
                    elif kind == "stream":
                        messages = [{"role": "user", "content": first}]
                        status, state, done = _stream(port, messages, None)
                        ok = status == 200 and done and bool(state)
                        note(kind, ok, started, "" if ok else f"{status} done={done} state={bool(state)}")
                        if not ok:
                            continue
                        started = time.monotonic()
                        messages += [{"role": "assistant", "content": "…"}, {"role": "user", "content": then}]
                        status, state, done = _stream(port, messages, state)
                        ok = status == 200 and done and bool(state)
                        note(kind, ok, started, "" if ok else f"{status} done={done} state={bool(state)}")
                    else:
                        history = [rng.choice(QUESTIONS) for _ in range(rng.randint(1, 4))]
                        status, reply = _ask(port, {"question": then, "history": history})
                        ok = status == 200 and bool(reply.get("state"))
                        note(kind, ok, started, "" if ok else f"{status} {reply.get('detail', 'no state')}")
                except (OSError, ValueError, http.client.HTTPException) as exc:
                    note(kind, False, started, f"{type(exc).__name__}: {exc}")

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        threads = [threading.Thread(target=client, args=(n,), daemon=True) for n in range(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(seconds + 180)  # a request in flight at the deadline finishes (its timeout is 120 s)
        stop_sampling.set()
        rss_after = _server_rss_mb(process.pid)
    finally:
        stop(process)
    out: dict = {"probe": "mix", "clients": clients, "seconds": seconds, "embedder": embedder}
    for kind in ("state", "stream", "history", "all"):
        mine = [r for r in results if kind in ("all", r[0])]
        latencies = [r[2] for r in mine if r[1]]
        out[kind] = {
            "requests": len(mine),
            "errors": sum(1 for r in mine if not r[1]),
            "p50_s": _percentile(latencies, 0.5),
            "p95_s": _percentile(latencies, 0.95),
        }
    out["first_errors"] = sorted({r[3] for r in results if not r[1]})[:5]
    out["rss_mb"] = {
        "before": rss_before,
        "peak": peak[0],
        "after": rss_after,
        "growth": round(rss_after - rss_before, 1),
    }
    return out


def probe_kill(work: Path, kills: int, embedder: str, writers: int = 8) -> dict:
    acknowledged: set[str] = set()  # markers of questions and votes answered 200
    lock = threading.Lock()
    cycles = []
    for cycle in range(kills):
        process, port = start_app(HERE, work, {"BOT_EMBEDDER": embedder})
        stop_writing = threading.Event()

        def writer(n: int, cycle: int = cycle, port: int = port, stop_writing: threading.Event = stop_writing) -> None:
            for k in range(10_000):
                if stop_writing.is_set():
                    return
                marker = f"soak-kill c{cycle} w{n} k{k}"
                try:
                    status, reply = _ask(port, {"question": f"{marker} 训练时显存不足怎么办？"})
                    if status != 200:
                        return
                    with lock:
                        acknowledged.add(f"question {marker}")
                    vote = {
                        "question": f"{marker} vote",
                        "vote": "down",
                        "cited": [],
                        "answer_id": reply.get("answer_id", ""),
                        "reason": "other",
                        "language": "en",
                    }
                    if request(port, "POST", "/api/feedback", vote, AUTH, timeout=120)[0] == 200:
                        with lock:
                            acknowledged.add(f"vote {marker}")
                except (OSError, http.client.HTTPException):  # the server is gone: unanswered is unacknowledged
                    return

        threads = [threading.Thread(target=writer, args=(n,), daemon=True) for n in range(writers)]
        for thread in threads:
            thread.start()
        time.sleep(random.Random(cycle).uniform(2, 6))
        before = len(acknowledged)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        stop_writing.set()
        for thread in threads:
            thread.join(150)
        cycles.append({"cycle": cycle, "acknowledged_before_kill": before, "acknowledged": len(acknowledged)})
    # One more start replays the last killed run's spool; SIGTERM then lets the writer finish.
    process, _ = start_app(HERE, work, {"BOT_EMBEDDER": embedder})
    stop(process)
    stored = _stored_markers(work)
    lost = sorted(acknowledged - set(stored))
    return {
        "probe": "kill",
        "kills": kills,
        "writers": writers,
        "cycles": cycles,
        "acknowledged": len(acknowledged),
        "acknowledged_questions": sum(1 for m in acknowledged if m.startswith("question")),
        "acknowledged_votes": sum(1 for m in acknowledged if m.startswith("vote")),
        "stored": len(set(stored)),
        "lost": len(lost),
        "lost_first": lost[:5],
        "stored_twice": sum(1 for m in set(stored) if stored.count(m) > 1),
        "stored_not_acknowledged": len(set(stored) - acknowledged),
    }


def _stored_markers(work: Path) -> list[str]:
    code = (
        "import json, sys\n"
        "from bot.store.database import Store, StoreSettings\n"
        "store = Store.reader(StoreSettings(data_dir=sys.argv[1]))\n"
        "rows = store.rows(kinds=('question', 'vote'))\n"
        "print(json.dumps([[r['kind'], r.get('question') or ''] for r in rows], ensure_ascii=False))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(work / "data")], cwd=HERE, capture_output=True, text=True, timeout=300
    )
    if done.returncode:
        raise RuntimeError(done.stderr[-3000:])
    out = []
    for kind, text in json.loads(done.stdout.strip().splitlines()[-1]):
        if text.startswith("soak-kill "):
            marker = " ".join(text.split()[:4])
            out.append(f"{kind} {marker}")
    return out


def probe_build(work: Path, builds: int, embedder: str, clients: int = 8) -> dict:
    process, port = start_app(HERE, work, {"BOT_EMBEDDER": embedder})
    results: list[tuple[bool, str]] = []
    lock = threading.Lock()
    done_building = threading.Event()
    build_runs = []
    try:

        def client(n: int) -> None:
            rng = random.Random(n)
            while not done_building.is_set():
                try:
                    if n % 2:
                        status, reply = _ask(port, {"question": rng.choice(QUESTIONS)})
                        ok, why = status == 200 and bool(reply.get("state")), f"{status}"
                    else:
                        messages = [{"role": "user", "content": rng.choice(QUESTIONS)}]
                        status, state, done = _stream(port, messages, None)
                        ok, why = status == 200 and done, f"{status} done={done}"
                except (OSError, ValueError, http.client.HTTPException) as exc:
                    ok, why = False, f"{type(exc).__name__}: {exc}"
                with lock:
                    results.append((ok, why))

        threads = [threading.Thread(target=client, args=(n,), daemon=True) for n in range(clients)]
        for thread in threads:
            thread.start()
        env = {
            **os.environ,
            "BOT_EMBEDDER": embedder,
            "BOT_SEEDS_DIR": str(HERE / "seeds"),
            "BOT_INDEX_DIR": str(work / "index"),
        }
        for _ in range(builds):
            started = time.monotonic()
            built = subprocess.run(
                [sys.executable, "-m", "bot", "build"], cwd=HERE, env=env, capture_output=True, text=True, timeout=900
            )
            build_runs.append(
                {"rc": built.returncode, "seconds": round(time.monotonic() - started, 1), "last": built.stdout[-200:]}
            )
        time.sleep(3)  # the server notices the new CURRENT on its next request: a few seconds of traffic after it
        done_building.set()
        for thread in threads:
            thread.join(150)
        health = request(port, "GET", "/healthz", timeout=30)[0]
    finally:
        done_building.set()
        stop(process)
    return {
        "probe": "build",
        "builds": build_runs,
        "requests": len(results),
        "failed": sum(1 for ok, _ in results if not ok),
        "first_failures": sorted({why for ok, why in results if not ok})[:5],
        "healthz_after": health,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("probe", nargs="?", default="all", choices=("mix", "kill", "build", "all"))
    parser.add_argument("--clients", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--kills", type=int, default=3)
    parser.add_argument("--builds", type=int, default=2)
    parser.add_argument("--embedder", default="hash")
    args = parser.parse_args()
    probes = ("mix", "kill", "build") if args.probe == "all" else (args.probe,)
    for probe in probes:
        work = Path(tempfile.mkdtemp(prefix=f"soak-{probe}-"))
        if probe == "mix":
            result = probe_mix(work, args.clients, args.seconds, args.embedder)
        elif probe == "kill":
            result = probe_kill(work, args.kills, args.embedder)
        else:
            result = probe_build(work, args.builds, args.embedder)
        result["work"] = str(work)
        print(json.dumps(result, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    main()
