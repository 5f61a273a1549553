"""Concurrent users against the real app process: nothing lost, nobody gets another user's reply.

A small version of the benchmark's concurrency run (``python -m bench``): the app
is started with ``python app.py --host 127.0.0.1 --port N`` over a copy of the
seeds (hash embedder), 10 clients each send 5 new wordings of their own question
(so no cache answers), on loopback only; bounded in count and time. Every
answer is then checked against the same question asked alone.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from bench.concurrency import app_command, free_port, run_load, start_server
from bench.queries import QUERIES
from bot.kb.embed import make_embedder
from bot.kb.index import build_index
from bot.settings import Settings

REPO = Path(__file__).resolve().parents[2]
CLIENTS = 10
PER_CLIENT = 5


@pytest.fixture
def app_server(tmp_path: Path):
    shutil.copytree(REPO / "seeds", tmp_path / "seeds")
    settings = Settings(
        seeds_dir=tmp_path / "seeds",
        index_dir=tmp_path / "index",
        embedder="hash",
    )
    build_index(settings, make_embedder("hash"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOT_")}
    env.update(
        {
            "BOT_SEEDS_DIR": str(settings.seeds_dir),
            "BOT_INDEX_DIR": str(settings.index_dir),
            "BOT_EMBEDDER": "hash",
            "BOT_DATA_DIR": str(tmp_path / "data"),  # the app's store, of this test alone
            "PYTHONPATH": os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]),
        }
    )
    port = free_port()
    server = start_server(app_command(REPO, port), port, env=env, cwd=REPO, log=tmp_path / "app.log", timeout_s=180)
    try:
        yield server, settings
    finally:
        server.stop()


def test_concurrent_clients_each_get_their_own_answer(app_server) -> None:
    server, settings = app_server
    questions = [q.text for q in QUERIES[::5]][:CLIENTS]
    assert len(set(questions)) == CLIENTS
    result = run_load(
        server.url,
        questions,
        clients=CLIENTS,
        duration_s=120,
        max_requests=CLIENTS * PER_CLIENT,
        per_client=PER_CLIENT,
        timeout_s=60,
    )
    summary = json.dumps({k: v for k, v in result.items() if k != "latency"}, ensure_ascii=False)
    assert result["sent"] == CLIENTS * PER_CLIENT, summary
    assert result["completed"] == CLIENTS * PER_CLIENT, summary
    assert result["errors"] == 0 and result["lost"] == 0, summary
    assert result["checked"] == result["distinct_questions"] == CLIENTS * PER_CLIENT, summary
    assert result["unstable"] == 0, f"the same question got different answers one at a time: {summary}"
    assert result["ambiguous"] == 0, f"two clients' questions share an answer, a swap would go unseen: {summary}"
    assert result["mismatched"] == 0, summary
    assert server.proc.poll() is None, "the app died under load:\n" + server.tail()


def test_the_check_catches_a_server_that_mixes_up_users() -> None:
    """The verifier itself: a server keeping the question in shared state answers the wrong user under load."""
    import threading
    import time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    shared = {"question": ""}

    class Racy(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            shared["question"] = body["question"]  # the bug: per-request data in a global
            time.sleep(0.005)
            data = json.dumps(
                {
                    "answered": True,
                    "language": "zh",
                    "reply": f"about {shared['question']}",
                    "signature": None,
                    "hits": [],
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Racy)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        result = run_load(
            url,
            [q.text for q in QUERIES[:CLIENTS]],
            clients=CLIENTS,
            duration_s=20,
            max_requests=CLIENTS * PER_CLIENT,
            per_client=PER_CLIENT,
        )
    finally:
        server.shutdown()
        server.server_close()
    assert result["completed"] == CLIENTS * PER_CLIENT
    assert result["mismatched"] > 0, result
