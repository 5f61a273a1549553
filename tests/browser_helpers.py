"""Shared helpers for the headless-Chromium tests and screenshots (Debian's /usr/bin/chromium, no download)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("BOT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
REPO = Path(__file__).resolve().parents[1]


def chromium_missing_reason() -> str | None:
    """Why browser tests cannot run here, or None when they can."""
    if not Path(CHROMIUM).exists():
        return (f"{CHROMIUM} is absent: install Debian's browser with "
                "'apt-get update && apt-get install -y chromium fonts-noto-cjk'")
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "the Python package playwright is not installed: pip install playwright (never 'playwright install')"
    return None


def launch(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium per test module (import this fixture into the module)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = launch(playwright)
        yield chromium
        chromium.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url: str, process: subprocess.Popen | None = None, timeout: float = 240.0) -> None:
    """Poll ``url`` until it answers 200; fail early with the server's output if it died."""
    deadline = time.monotonic() + timeout
    last = ""
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            out = process.stdout.read() if process.stdout else ""
            raise RuntimeError(f"app exited with {process.returncode} before it was ready:\n{out}")
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status == 200:
                    return
        except Exception as exc:  # not up yet
            last = str(exc)
        time.sleep(0.5)
    raise TimeoutError(f"{url} not ready after {timeout:.0f}s ({last})")


def start_app(port: int, env: dict[str, str], *extra: str) -> subprocess.Popen:
    """``python app.py`` as a subprocess on 127.0.0.1:port with the given environment overrides."""
    full_env = {**os.environ, **env, "PYTHONUNBUFFERED": "1"}
    if "BOT_DATA_DIR" not in env and "BOT_DATABASE_URL" not in env:  # the store: never the tester's home folder
        full_env["BOT_DATA_DIR"] = tempfile.mkdtemp(prefix="bot-data-")
    return subprocess.Popen(
        [sys.executable, str(REPO / "app.py"), "--host", "127.0.0.1", "--port", str(port), *extra],
        cwd=REPO, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def copy_index(src: Path, dst: Path) -> None:
    shutil.copytree(src, dst, dirs_exist_ok=True)
