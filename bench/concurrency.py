"""Many clients against a running ``POST /api/ask`` server, on loopback only.

Every client owns one distinct question and sends a new wording of it each
time ("question (1)", "question (2)", ...), so no answer comes from a cache.
After the load every question sent is asked again one at a time; the parts of
the answer that identify it (answered, language, signature, cited sections in
order, reply text) must match what its own client received under load: a
response answered with another user's reply, or lost, is counted. Request
count and duration are both bounded, and the run stops by itself.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.measure import percentiles

LOOPBACK = "127.0.0.1"
ASK_PATH = "/api/ask"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def _check_loopback(url: str) -> None:
    from urllib.parse import urlsplit

    host = urlsplit(url).hostname
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise ValueError(f"load runs target loopback only, not {host!r}")


@dataclass
class Server:
    """A server process this module started (its own process group), and how long it took to answer."""

    proc: subprocess.Popen
    url: str
    log: Path
    ready_s: float = 0.0
    first: dict = field(default_factory=dict)

    def tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def pid_maps_torch(self) -> bool | None:
        """Whether libtorch is mapped into the server process (None when it cannot be read)."""
        try:
            return "libtorch" in Path(f"/proc/{self.proc.pid}/maps").read_text()
        except OSError:
            return None

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)  # the group this module created for the server
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)


def start_server(
    cmd: list[str],
    port: int,
    *,
    env: dict | None = None,
    cwd: Path | None = None,
    log: Path,
    timeout_s: float = 180.0,
    probe: str = "GPU 显存不足",
) -> Server:
    """Launch ``cmd`` and poll ``POST /api/ask`` until it answers 200; ``ready_s`` is launch -> first answer."""
    import httpx

    url = f"http://{LOOPBACK}:{port}"
    log.parent.mkdir(parents=True, exist_ok=True)
    handle = open(log, "wb")
    started = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=cwd, env=env, stdout=handle, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
    )
    handle.close()
    server = Server(proc, url, log)
    deadline = started + timeout_s
    with httpx.Client(timeout=10.0) as client:
        while time.perf_counter() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited with code {proc.returncode} before answering:\n{server.tail()}")
            try:
                response = client.post(url + ASK_PATH, json={"question": probe, "history": []})
                if response.status_code == 200:
                    server.ready_s = time.perf_counter() - started
                    server.first = response.json()
                    return server
            except httpx.TransportError:
                pass
            time.sleep(0.05)
    server.stop()
    raise RuntimeError(f"server did not answer within {timeout_s:.0f}s:\n{server.tail()}")


# ------------------------------------------------------------------ fingerprints


def _hit_id(hit: dict) -> str:
    return f"{hit.get('source', '')}#{hit.get('anchor') or hit.get('section') or hit.get('heading') or ''}"


_SIGNED = re.compile(r"[?&]exp=\d{1,12}&sig=[A-Za-z0-9_\-]{1,128}")


def fingerprint(body: dict, with_reply: bool = True) -> str:
    """The parts of an answer that identify which question it answers."""
    parts = {
        "answered": body.get("answered"),
        "language": body.get("language"),
        "signature": body.get("signature"),
        "hits": [_hit_id(h) for h in body.get("hits") or [] if isinstance(h, dict)],
    }
    if with_reply:
        # A signed /source link expires a fixed time after it is issued: two answers a second apart differ there only.
        parts["reply"] = _SIGNED.sub("", str(body.get("reply") or ""))
    return hashlib.sha1(json.dumps(parts, ensure_ascii=False, sort_keys=True).encode()).hexdigest()


def variant(question: str, n: int) -> str:
    """The n-th distinct wording of a client's question (n=0: the question itself)."""
    return question if n == 0 else f"{question} ({n})"


def _ask(client, url: str, question: str) -> dict:
    response = client.post(url + ASK_PATH, json={"question": question, "history": []})
    response.raise_for_status()
    return response.json()


# ------------------------------------------------------------------ load


async def _load(
    url: str,
    questions: list[str],
    clients: int,
    duration_s: float,
    max_requests: int,
    per_client: int | None,
    timeout_s: float,
    fresh: bool,
) -> tuple[dict, list[tuple[int, str, dict]]]:
    import httpx

    latencies: list[float] = []
    errors: dict[str, int] = {}
    state = {"sent": 0, "completed": 0, "lost": 0}
    answered: list[tuple[int, str, dict]] = []  # (client, question sent, response body)
    started = time.perf_counter()
    deadline = started + duration_s
    last_done = [started]

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(timeout=timeout_s, limits=limits) as client:

        async def one_client(n: int) -> None:
            done = 0
            while time.perf_counter() < deadline and state["sent"] < max_requests:
                if per_client is not None and done >= per_client:
                    return
                question = variant(questions[n % len(questions)], done + 1 if fresh else 0)
                state["sent"] += 1
                done += 1
                t = time.perf_counter()
                try:
                    response = await client.post(url + ASK_PATH, json={"question": question, "history": []})
                except httpx.HTTPError as exc:
                    state["lost"] += 1
                    errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
                    continue
                latencies.append((time.perf_counter() - t) * 1000)
                last_done[0] = time.perf_counter()
                if response.status_code != 200:
                    key = f"HTTP {response.status_code}"
                    errors[key] = errors.get(key, 0) + 1
                    continue
                state["completed"] += 1
                try:
                    answered.append((n, question, response.json()))
                except ValueError:
                    answered.append((n, question, {"not-json": response.text[:200]}))

        await asyncio.gather(*(one_client(n) for n in range(clients)))
    elapsed = max(last_done[0] - started, 1e-9)
    return {
        "clients": clients,
        "fresh_questions": fresh,
        "duration_s": round(elapsed, 3),
        "sent": state["sent"],
        "completed": state["completed"],
        "errors": sum(errors.values()),
        "error_kinds": errors,
        "lost": state["lost"],
        "rps": round(state["completed"] / elapsed, 2),
        "latency": percentiles(latencies),
    }, answered


def verify(url: str, answered: list[tuple[int, str, dict]]) -> dict:
    """Ask every question sent under load again, one at a time, and compare.

    A concurrent answer that differs from the calm one is a mismatch (answered
    with someone else's reply, or corrupted) when two calm answers agree; when
    they do not, the question is merely unstable. ``ambiguous`` counts answers
    whose fingerprint also belongs to another client's question: a swap between
    those two would go unseen.
    """
    import httpx

    calm: dict[str, dict] = {}
    mismatched, unstable = 0, 0
    examples: list[dict] = []
    owners: dict[str, set[int]] = {}
    with httpx.Client(timeout=60.0) as client:
        for n, question, body in answered:
            if question not in calm:
                calm[question] = _ask(client, url, question)
            expected = calm[question]
            got_fp = fingerprint(body)
            if got_fp != fingerprint(expected):
                again = _ask(client, url, question)
                if fingerprint(again) != fingerprint(expected):
                    unstable += 1
                    continue
                mismatched += 1
                if len(examples) < 5:
                    examples.append(
                        {
                            "client": n,
                            "question": question[:80],
                            "got": json.dumps(body, ensure_ascii=False)[:300],
                            "expected": json.dumps(expected, ensure_ascii=False)[:300],
                        }
                    )
            owners.setdefault(got_fp, set()).add(n)
    ambiguous = sum(1 for n, question, body in answered if len(owners.get(fingerprint(body), ())) > 1)
    return {
        "checked": len(answered),
        "distinct_questions": len(calm),
        "mismatched": mismatched,
        "unstable": unstable,
        "ambiguous": ambiguous,
        "mismatch_examples": examples,
    }


def run_load(
    url: str,
    questions: list[str],
    *,
    clients: int,
    duration_s: float,
    max_requests: int,
    per_client: int | None = None,
    timeout_s: float = 60.0,
    fresh: bool = True,
) -> dict:
    """``clients`` concurrent clients for at most ``duration_s`` / ``max_requests``, then verify every answer.

    With ``fresh`` every request is a question the server has not seen (so no cache
    helps); otherwise each client repeats its own question.
    """
    _check_loopback(url)
    result, answered = asyncio.run(
        _load(url, questions, clients, duration_s, max_requests, per_client, timeout_s, fresh)
    )
    result.update(verify(url, answered))
    return result


def app_command(repo: Path, port: int) -> list[str]:
    return [sys.executable, str(repo / "app.py"), "--host", LOOPBACK, "--port", str(port)]


def baseline_command(index: Path, embedder: str, port: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "bench.baseline_server",
        "--index",
        str(index),
        "--embedder",
        embedder,
        "--host",
        LOOPBACK,
        "--port",
        str(port),
    ]
