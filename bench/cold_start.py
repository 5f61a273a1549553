"""Cold start: launching the app until a person can type, beside ``import gradio`` on the same machine.

``python -m bench.cold_start [--reps N] [--index DIR] [--seeds DIR] [--embedder NAME] [--json]``

Per launch of ``app.py`` (a built index, its own temporary data folder, loopback only) it measures

- ``api_s``: launch -> the first ``200`` from ``POST /api/ask`` (the API's first answer);
- ``page_s``: launch -> the chat page loaded in headless Chromium with its chat box enabled
  (``/`` polled until it is the UI rather than the "starting" page, then the textarea awaited);

and, as the yardstick, ``import_gradio_s``: a fresh ``python -c "import gradio"``, the floor of any
Gradio page (the UI cannot render before Gradio is imported). Beside it, ``import_gradio_lean_s``: the
same import as the app does it (:mod:`bot.web.lean_gradio`: no IDE stubs rewritten), which is not the
yardstick but shows how much of the ratio comes from importing less. The target is
``page_s <= 1.5 × import_gradio_s`` (:data:`TARGET_RATIO`). Both start orders of the app are measured,
interleaved (``--start-first``): ``api`` (the default: the index first, then the UI) and ``ui`` (the
UI first, the index behind it). Medians over ``--reps`` runs, the machine's load average beside them:
figures from a busy machine compare only within one run.
The browser is started before the app, so its own start-up is not counted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.concurrency import LOOPBACK, app_command, free_port
from bench.env import REPO, child_env

TARGET_RATIO = 1.5
PROBE_QUESTION = "GPU 显存不足"
CHROMIUM = os.environ.get("BOT_CHROMIUM", "/usr/bin/chromium")


IMPORTS = {  # the yardstick, and the import the app itself does (bot/web/lean_gradio.py), shown beside it
    "plain": "import gradio",
    "lean": "from bot.web.lean_gradio import lean_gradio_import; lean_gradio_import(); import gradio",
}


def import_gradio_s(env: dict, kind: str = "plain") -> float:
    """Wall time of a fresh interpreter importing gradio (and exiting)."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", IMPORTS[kind]], env=env, check=True, cwd=REPO)
    return time.perf_counter() - started


def _first_answer(url: str, started: float, deadline: float, out: dict) -> None:
    import httpx

    with httpx.Client(timeout=10.0) as client:
        while time.perf_counter() < deadline:
            try:
                response = client.post(url + "/api/ask", json={"question": PROBE_QUESTION, "history": []})
                if response.status_code == 200:
                    out["api_s"] = time.perf_counter() - started
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.02)


def _page_usable(browser, url: str, started: float, deadline: float, out: dict) -> None:
    """Poll ``/`` until the UI (not the 503 "starting" page) is served, then load it and await the chat box."""
    import httpx

    with httpx.Client(timeout=10.0) as client:
        while time.perf_counter() < deadline:
            try:
                if client.get(url + "/").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.02)
    out["page_served_s"] = time.perf_counter() - started
    page = browser.new_page()
    try:
        page.goto(url + "/", wait_until="load")
        box = page.locator("textarea").first
        box.wait_for(state="visible", timeout=max(1.0, deadline - time.perf_counter()) * 1000)
        page.wait_for_function("el => !el.disabled && !el.readOnly", arg=box.element_handle())
        out["page_s"] = time.perf_counter() - started
    finally:
        page.close()


def launch_once(browser, env: dict, log: Path, timeout_s: float = 180.0) -> dict:
    """One launch of the app: seconds to the API's first answer and to a usable chat page."""
    port = free_port()
    url = f"http://{LOOPBACK}:{port}"
    with open(log, "wb") as handle:
        started = time.perf_counter()
        proc = subprocess.Popen(
            app_command(REPO, port),
            cwd=REPO,
            env=env,
            stdout=handle,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    deadline = started + timeout_s
    out: dict = {}
    api = threading.Thread(target=_first_answer, args=(url, started, deadline, out), daemon=True)
    api.start()
    try:
        _page_usable(browser, url, started, deadline, out)  # playwright's sync API stays on this thread
        api.join(timeout=max(0.0, deadline - time.perf_counter()))
    finally:
        proc.terminate()  # our own child, by its id
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)
    if "api_s" not in out or "page_s" not in out:
        raise RuntimeError(f"the app did not become usable within {timeout_s:.0f} s; log: {log}")
    return {k: round(v, 3) for k, v in out.items()}


def measure(reps: int, env: dict, work: Path, orders: tuple[str, ...] = ("api",)) -> dict:
    """Medians of ``reps`` launches per start order (``BOT_START_FIRST``) and ``reps`` gradio imports, interleaved
    so that all see the same load; the result of the first order at the top, every order under ``orders``."""
    from playwright.sync_api import sync_playwright

    imports: list[float] = []
    lean_imports: list[float] = []
    launches: dict[str, list[dict]] = {order: [] for order in orders}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu", "--no-first-run"]
        )
        try:
            for n in range(reps):
                imports.append(round(import_gradio_s(env), 3))
                lean_imports.append(round(import_gradio_s(env, "lean"), 3))
                for order in orders:
                    launches[order].append(
                        launch_once(browser, {**env, "BOT_START_FIRST": order}, work / f"app-{order}-{n}.log")
                    )
        finally:
            browser.close()
    gradio = statistics.median(imports)
    by_order = {order: _summary(runs, gradio) for order, runs in launches.items()}
    return {
        "import_gradio_s": round(gradio, 3),
        **by_order[orders[0]],
        "start_first": orders[0],
        "orders": by_order,
        "import_runs_s": imports,
        "import_gradio_lean_s": round(statistics.median(lean_imports), 3),
        "import_lean_runs_s": lean_imports,
        "loadavg": [round(x, 2) for x in os.getloadavg()],
    }


def _summary(runs: list[dict], gradio: float) -> dict:
    page = statistics.median(r["page_s"] for r in runs)
    return {
        "api_first_answer_s": round(statistics.median(r["api_s"] for r in runs), 3),
        "page_served_s": round(statistics.median(r["page_served_s"] for r in runs), 3),
        "page_usable_s": round(page, 3),
        "ratio": round(page / gradio, 3),
        "target_ratio": TARGET_RATIO,
        "status": "pass" if page <= TARGET_RATIO * gradio else "MISS",
        "runs": runs,
    }


def app_env(work: Path, index: Path, seeds: Path, embedder: str | None) -> dict:
    extra = {
        "BOT_INDEX_DIR": str(index),
        "BOT_SEEDS_DIR": str(seeds),
        "BOT_DATA_DIR": str(work / "data"),
        "BOT_INDEX_POLL_SECONDS": "0",
    }
    if embedder:
        extra["BOT_EMBEDDER"] = embedder
    return child_env(extra)


def format_result(result: dict) -> str:
    lines = [
        f"python -c 'import gradio':            {result['import_gradio_s']:.2f} s (median of {len(result['import_runs_s'])}; "
        f"the app's lean import: {result['import_gradio_lean_s']:.2f} s)"
    ]
    for order, r in result["orders"].items():
        lines += [
            f"BOT_START_FIRST={order}: launch -> 1st API answer: {r['api_first_answer_s']:.2f} s",
            f"BOT_START_FIRST={order}: launch -> page usable:    {r['page_usable_s']:.2f} s  "
            f"({r['ratio']:.2f} × import gradio; target <= {r['target_ratio']}: {r['status']})",
        ]
    return "\n".join(lines + [f"load average at the end {result['loadavg']}"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.cold_start", description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=3, help="launches (and gradio imports) to take the median of")
    parser.add_argument("--index", type=Path, default=REPO / "index", help="a built index (default: index/)")
    parser.add_argument("--seeds", type=Path, default=REPO / "seeds", help="the seeds it was built from")
    parser.add_argument("--embedder", help="the embedder the index was built with (default: the product's)")
    parser.add_argument(
        "--start-first",
        choices=("api", "ui", "both"),
        default="both",
        help="the app's BOT_START_FIRST: the API first, the chat page first, or both, interleaved",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of lines")
    args = parser.parse_args(argv)
    if args.reps < 1:
        parser.error(f"--reps must be at least 1, got {args.reps}")
    if not (args.index / "CURRENT").exists():
        parser.error(f"--index {args.index} holds no built index; run: python -m bot build --index {args.index}")
    with tempfile.TemporaryDirectory(prefix="cold-start-") as tmp:
        work = Path(tmp)
        orders = ("api", "ui") if args.start_first == "both" else (args.start_first,)
        result = measure(
            args.reps, app_env(work, args.index.resolve(), args.seeds.resolve(), args.embedder), work, orders
        )
    print(json.dumps(result, indent=1) if args.json else format_result(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
