"""Probe issue 28's findings 1, 6, 13 and 14 on loopback, against this checkout or another (``--repo``).

    python -m bench.probe_hardening [--repo /path/to/other/checkout] [--parts regex,cache,handoff,admin]

- **regex** (1): ``Lexicon.find`` on ``"linux windows mac " + "?" * n + "x"`` for n = 12,500, 25,000, 50,000
  (seconds, and the 50K/25K ratio: linear is 2, quadratic 4);
- **cache** (13): RSS growth of one process after 300 distinct 100,000-character questions (one emoji each, so
  CPython stores 4 bytes a character) went through the engine's query-embedding cache (a constant-vector
  embedder: the cache is measured, not the embedder);
- **handoff** (6): ``python app.py`` with ``BOT_HANDOFF_WEBHOOK`` on a local receiver. "转人工" against a receiver
  that drips one byte every 3 s (seconds until the reply); then 60 hand-offs at once against a receiver that
  never answers, with ``/healthz`` latency meanwhile (max of the samples); then 61 hand-offs one after the other
  to a receiver that answers 200 (tickets received);
- **admin** (14): ``python app.py`` over a store of 1,500 distinct unanswered questions (about 1,000 characters
  each): the server's RSS before, after 8 concurrent ``/admin`` views, and after 8 more.

Prints one JSON object. Each part starts its own processes and stops them; nothing leaves loopback.

Before → after issue 28 (2026-11-24, 2 cores shared with other jobs, load average about 20, so the "before"
times are inflated by the load; the ratios and counts are not): regex 25K 79.7 s → 0.028 s, 50K 417.6 s → 0.029 s
(ratio 5.2 → 1.0); cache RSS +134.6 MB → +0.6 MB; hand-off against a dripping receiver 111.4 s → 5.9 s; /healthz
max with 60 hanging receivers 5.82 s → 0.56 s; 61 hand-offs after those → 61 → 1 ticket (10 at once, 10 a
minute); /admin RSS after 8 concurrent views +136 MB → +37 MB, 8 more +73 MB → +0 MB (1,500 questions of about
1,000 characters; the issue's 800 MB came from a larger backlog).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import threading
import time
from pathlib import Path

from bench.app_server import ADMIN, HERE, SEED_ADMIN, TOKEN, Receiver, _python, free_port, request, start_app, stop  # noqa: F401

REGEX = """
import json, time
from bot.engine.subjects import Lexicon
lexicon = Lexicon.load()
out = {}
for n in (12_500, 25_000, 50_000):
    text = "linux windows mac " + "?" * n + "x"
    start = time.perf_counter()
    lexicon.find(text)
    out[str(n)] = round(time.perf_counter() - start, 4)
out["ratio_50k_25k"] = round(out["50000"] / max(out["25000"], 1e-9), 2)
print(json.dumps(out))
"""

CACHE = """
import json, sys, tempfile
from pathlib import Path
import numpy as np, psutil
from bot.engine.retrieve import Engine
from bot.kb.embed import make_embedder
from bot.kb.index import build_index
from bot.settings import Settings
work = Path(tempfile.mkdtemp())
settings = Settings(seeds_dir=Path("seeds"), index_dir=work / "index", embedder="hash", feedback_log=work / "feedback.jsonl")
build_index(settings, make_embedder("hash"))
engine = Engine.open(settings, make_embedder("hash"))
vector = engine.embedder.embed(["x"], role="query")[0]
engine.embedder.embed = lambda texts, role="passage": np.stack([vector] * len(texts))
process = psutil.Process()
before = process.memory_info().rss
for n in range(300):
    engine._embed_query(f"{n} 😀 " + "显存不足 out of memory " * 6_250)
after = process.memory_info().rss
print(json.dumps({"questions": 300, "chars": 100_000, "rss_growth_mb": round((after - before) / 2**20, 1)}))
"""


def handoff(repo: Path) -> dict:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    receiver = Receiver()
    work = Path(tempfile.mkdtemp(prefix="probe28-"))
    process, port = start_app(repo, work, {"BOT_HANDOFF_WEBHOOK": receiver.url})
    out: dict = {}
    try:
        receiver.mode = "drip"
        start = time.perf_counter()
        status, _ = request(port, "POST", "/api/ask", {"question": "转人工"}, auth)
        out["dripping_receiver_reply_s"] = round(time.perf_counter() - start, 2)
        out["dripping_receiver_status"] = status

        receiver.mode = "hang"
        done: list[int] = []

        def ask() -> None:
            try:
                done.append(request(port, "POST", "/api/ask", {"question": "转人工"}, auth, timeout=120)[0])
            except OSError:
                done.append(0)

        callers = [threading.Thread(target=ask, daemon=True) for _ in range(60)]
        for caller in callers:
            caller.start()
        samples = []
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and len(done) < 60:
            start = time.perf_counter()
            request(port, "GET", "/healthz", timeout=60)
            samples.append(time.perf_counter() - start)
            time.sleep(0.2)
        for caller in callers:
            caller.join(120)
        out["hanging_receivers_healthz_max_s"] = round(max(samples), 3) if samples else None
        out["hanging_receivers_healthz_samples"] = len(samples)

        receiver.mode = "answer"
        before = receiver.tickets
        for _ in range(61):
            request(port, "POST", "/api/ask", {"question": "转人工"}, auth)
        out["tickets_from_61_hand_offs"] = receiver.tickets - before
    finally:
        stop(process)
        receiver.stop()
    return out


def admin(repo: Path) -> dict:
    import psutil

    work = Path(tempfile.mkdtemp(prefix="probe28-"))
    seeded = _python(repo, SEED_ADMIN, str(work / "data"))
    process, port = start_app(repo, work, {})
    auth = {"Authorization": f"Bearer {ADMIN}"}
    out: dict = dict(seeded)
    try:
        server = psutil.Process(process.pid)
        out["rss_before_mb"] = round(server.memory_info().rss / 2**20)

        def views(n: int) -> list[int]:
            codes: list[int] = []
            threads = [
                threading.Thread(target=lambda: codes.append(request(port, "GET", "/admin", headers=auth)[0]))
                for _ in range(n)
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(600)
            return codes

        out["first_8_status"] = sorted(set(views(8)))
        out["rss_after_8_views_mb"] = round(server.memory_info().rss / 2**20)
        out["second_8_status"] = sorted(set(views(8)))
        out["rss_after_16_views_mb"] = round(server.memory_info().rss / 2**20)
        out["growth_8_views_mb"] = out["rss_after_8_views_mb"] - out["rss_before_mb"]
    finally:
        stop(process)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=HERE, help="the checkout to probe (default: this one)")
    parser.add_argument("--parts", default="regex,cache,handoff,admin")
    args = parser.parse_args()
    repo = args.repo.resolve()
    result: dict = {"repo": str(repo)}
    for part in args.parts.split(","):
        if part == "regex":
            result["regex"] = _python(repo, REGEX)
        elif part == "cache":
            result["cache"] = _python(repo, CACHE)
        elif part == "handoff":
            result["handoff"] = handoff(repo)
        elif part == "admin":
            result["admin"] = admin(repo)
        else:
            parser.error(f"unknown part {part!r}; choose from regex, cache, handoff, admin")
    print(json.dumps(result, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
