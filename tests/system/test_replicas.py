"""Several replicas: two `python app.py` processes on one PostgreSQL share votes and reports,
and a new index generation built elsewhere is picked up by both without a restart."""

from __future__ import annotations

import logging
import time

import httpx

from bot.engine.live import LiveEngine, watch_index
from bot.engine.retrieve import Engine
from bot.kb.embed import HashEmbedder
from bot.kb.index import build_index
from fixtures.server import free_port, start_app, stop, wait_ready

ADMIN = "ops-token"
AMP = (
    "# 混合精度\n\n## 问题：混合精度训练时 loss scale 溢出\n\n+ 问题描述：开启 AMP 后日志里反复出现 loss scale overflow。\n\n"
    "+ 解决方法：调小 `init_loss_scaling`，或者打开 `use_dynamic_loss_scaling`。\n"
)
AMP_QUESTION = "AMP 混合精度 loss scale overflow 溢出怎么办"


def poll(check, timeout: float = 30.0, every: float = 0.3):
    """Call ``check`` until it returns something truthy; the last value, or AssertionError on timeout."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(every)
    raise AssertionError(f"not true after {timeout:.0f}s; last value {last!r}")


def test_a_new_generation_is_swapped_in_and_a_broken_one_is_not(hash_settings, caplog):
    engine = Engine.open(hash_settings, auto_build=True)
    live = LiveEngine(engine, poll_seconds=0)
    assert live.check() is False and live.current is engine  # nothing new
    before = len(live.sections)
    (hash_settings.seeds_dir / "amp.md").write_text(AMP, encoding="utf-8")
    build_index(hash_settings, engine.embedder)
    assert live.check() is True and live.current is not engine and live.reloads == 1
    assert len(live.sections) > before and live.ask(AMP_QUESTION).hits[0].section.source == "amp.md"
    assert live.current.embedder is engine.embedder  # the loaded model is reused, not loaded again
    assert len(engine.sections) == before  # the old engine is untouched: requests in flight finish on it
    caplog.set_level(logging.WARNING, logger="bot.engine.live")
    (hash_settings.index_dir / "CURRENT").write_text("gen-does-not-exist", encoding="utf-8")
    assert live.check() is False and live.reloads == 1
    assert live.ask(AMP_QUESTION).hits[0].section.source == "amp.md"  # still answering from the last good one
    assert any("not loaded, still answering" in r.getMessage() for r in caplog.records)
    assert watch_index(live, 1.0) is live and watch_index("not an engine", 1.0) == "not an engine"


def test_two_app_processes_share_one_postgresql_and_follow_the_index(postgres, hash_settings, tmp_path):
    Engine.open(hash_settings, auto_build=True)  # the index is built once and shared (shipped) to both
    url = postgres.url(postgres.new_database())
    ports = [free_port(), free_port()]
    env = {
        "BOT_EMBEDDER": "hash",
        "BOT_SEEDS_DIR": str(hash_settings.seeds_dir),
        "BOT_INDEX_DIR": str(hash_settings.index_dir),
        "BOT_DATABASE_URL": url,
        "BOT_ADMIN_TOKEN": ADMIN,
        "BOT_INDEX_POLL_SECONDS": "0.5",
    }
    processes = [start_app(port, env) for port in ports]
    try:
        for port, process in zip(ports, processes):
            wait_ready(f"http://127.0.0.1:{port}/healthz", process, timeout=180)
        one, two = (f"http://127.0.0.1:{port}" for port in ports)
        admin = {"Authorization": f"Bearer {ADMIN}"}
        baseline = httpx.get(two + "/admin/data.json", headers=admin, timeout=60).json()
        assert baseline["totals"]["questions"] == 0

        # a question and a vote in one replica ...
        answer = httpx.post(one + "/api/ask", json={"question": "显存不足怎么办", "session": "u1"}, timeout=60).json()
        key = answer["hits"][0]["key"]
        vote = httpx.post(
            one + "/api/feedback",
            timeout=30,
            json={
                "question": "显存不足怎么办",
                "vote": "down",
                "reason": "outdated",
                "cited": [key],
                "answer_id": answer["answer_id"],
                "language": "zh",
            },
        )
        assert vote.status_code == 200

        # ... show in the other's /admin data
        def seen():
            data = httpx.get(two + "/admin/data.json", headers=admin, timeout=60).json()
            row = next((s for s in data["sections"] if s["key"] == key), None)
            return data if row and row["down"] == 1 else None

        data = poll(seen)
        row = next(s for s in data["sections"] if s["key"] == key)
        assert row["reasons"] == {"outdated": 1} and row["cited"] == 1 and data["totals"]["questions"] == 1
        assert any(e[0] == "显存不足怎么办" for g in data["groups"] for e in g["examples"])  # down-voted -> a gap

        # a changed vote on the same answer, sent to the other replica, replaces the first
        httpx.post(
            two + "/api/feedback",
            timeout=30,
            json={"question": "显存不足怎么办", "vote": "up", "cited": [key], "answer_id": answer["answer_id"]},
        )
        poll(
            lambda: (
                next(
                    s
                    for s in httpx.get(one + "/admin/data.json", headers=admin, timeout=60).json()["sections"]
                    if s["key"] == key
                )["up"]
                == 1
            )
        )
        final = next(
            s
            for s in httpx.get(one + "/admin/data.json", headers=admin, timeout=60).json()["sections"]
            if s["key"] == key
        )
        assert (final["up"], final["down"]) == (1, 0)

        # a new index generation, built elsewhere, reaches both replicas without a restart
        sections = httpx.get(one + "/healthz", timeout=10).json()["sections"]
        (hash_settings.seeds_dir / "amp.md").write_text(AMP, encoding="utf-8")
        build_index(hash_settings, HashEmbedder())
        for base in (one, two):
            poll(lambda base=base: httpx.get(base + "/healthz", timeout=10).json()["sections"] > sections)
            hit = httpx.post(base + "/api/ask", json={"question": AMP_QUESTION}, timeout=60).json()["hits"][0]
            assert hit["source"] == "amp.md", hit
    finally:
        for process in processes:
            stop(process)
    for process in processes:
        output = process.stdout.read()
        assert "Store: postgresql+psycopg://postgres@127.0.0.1" in output, output
        assert "now answering from generation" in output, output
