"""A real ``python app.py`` on loopback for the benchmarks: start it on a free port, send requests, stop it, and
seed a store with many unanswered questions (the ``/admin`` probes).

    >>> free_port() > 0
    True
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
TOKEN = "probe-token-123"
ADMIN = "probe-admin-123"


def _python(repo: Path, code: str, *args: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=repo, capture_output=True, text=True, timeout=1800, check=False
    )
    if done.returncode:
        raise RuntimeError(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


SEED_ADMIN = """
import json, random, sys
from bot.records import Event
from bot.store.database import Store, StoreSettings
store = Store.open(StoreSettings(data_dir=sys.argv[1]))
words = "显存 不足 out of memory CUDA error NCCL timeout 多卡 训练 报错 libcudnn version mismatch paddle tensorflow".split()
rng = random.Random(28)
rows = []
for n in range(1500):
    text = f"question {n}: " + " ".join(rng.choice(words) for _ in range(160))
    rows.append(store._row(Event("question", text, "zh", tier="none", confidence=0.1), f"s{n}", 50.0))
store._write(rows)
store.close()
print(json.dumps({"seeded": len(rows)}))
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_app(repo: Path, work: Path, extra_env: dict[str, str]) -> tuple[subprocess.Popen, int]:
    port = free_port()
    env = {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "BOT_API_TOKEN": TOKEN,
        "BOT_ADMIN_TOKEN": ADMIN,
        "BOT_EMBEDDER": "hash",
        "BOT_SEEDS_DIR": str(repo / "seeds"),
        "BOT_INDEX_DIR": str(work / "index"),
        "BOT_DATA_DIR": str(work / "data"),
        **extra_env,
    }
    log = open(work / "server.log", "a")  # noqa: SIM115 (closed with the process)
    process = subprocess.Popen(
        [sys.executable, str(repo / "app.py"), "--host", "127.0.0.1", "--port", str(port)],
        cwd=repo,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError((work / "server.log").read_text()[-3000:])
        try:
            if request(port, "GET", "/healthz", timeout=5)[0] == 200:
                return process, port
        except OSError:
            pass
        time.sleep(0.5)
    stop(process)  # not left serving (or building its index) with nobody to stop it
    raise TimeoutError(f"app not ready in 600 s (still building its index on a loaded host?): {work / 'server.log'}")


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def request(
    port: int, method: str, path: str, body: dict | None = None, headers: dict | None = None, timeout: float = 300
) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        data = json.dumps(body).encode() if body is not None else None
        conn.request(method, path, body=data, headers={"Content-Type": "application/json", **(headers or {})})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


class Receiver:
    """A webhook whose behaviour is switched between phases: drip, hang or answer."""

    def __init__(self) -> None:
        self.mode = "answer"
        self.tickets = 0
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}/hook"
        self.stopped = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.server.accept()
            except OSError:
                continue
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(600)
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            self.tickets += 1
            if self.mode == "drip":
                for byte in b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n":
                    if self.stopped.is_set():
                        return
                    conn.sendall(bytes([byte]))
                    time.sleep(3)
            elif self.mode == "hang":
                while not self.stopped.is_set() and conn.recv(1):
                    pass
            else:
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        except OSError:
            pass
        finally:
            conn.close()

    def stop(self) -> None:
        self.stopped.set()
        self.server.close()
