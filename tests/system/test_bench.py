"""The benchmark runs end to end and reports every figure (``python -m bench --smoke --json``).

Smoke mode is tiny and model-free (hash embedders everywhere, 1.5 s per open-loop
rate); no timing is asserted, only that each figure is produced and the answers
under load are right.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.openloop import p95_passes_1s_at, schedule
from bench.run import PLANS, figures
from fixtures.source import parse

REPO = Path(__file__).resolve().parents[2]
TOP_LEVEL = (
    "query_p50_ms",
    "query_p99_ms",
    "embed_p50_ms",
    "e5_dense_only_p50_ms",
    "seed_build_s",
    "incremental_build_s",
    "app_ready_s",
    "open_loop",
    "rss_100k_mb",
    "query_p50_100k_ms",
    "machine",
    "closed_loop_rps",
    "closed_loop_e5_dense_only_rps",
    "closed_loop_over_e5_dense_only",
    "history_last_turn_over_alone",
)
# Sections measured for the product and the e5 dense-only baseline but not for MiniLM.
WITHOUT_MINILM = ("query.synthetic.", "openloop.", "concurrency.")
OURS_ONLY = (
    "startup.app_ready_s",
    "startup.import_gradio_s",
    "startup.page_usable_s",
    "startup.page_over_gradio",
)  # the web app; the baselines have no UI to start
OURS_ONLY_SECTIONS = ("history.",)  # conversations: the plain FAISS server has none
NONE_WHEN_NEVER_SLOW = ("openloop.p95_over_1s_at",)  # no rate reached p95 > 1 s


@pytest.fixture(scope="module")
def smoke_report() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOT_")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--smoke", "--json"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_bench_smoke_reports_every_figure(smoke_report: dict) -> None:
    report = smoke_report
    assert set(report["figures"]) == set(figures({}, PLANS["smoke"]))
    for key, fig in report["figures"].items():
        for side in ("ours", "baseline", "minilm"):
            if fig[side] is None and key not in NONE_WHEN_NEVER_SLOW:
                allowed = (side == "minilm" and key.startswith(WITHOUT_MINILM)) or (
                    side != "ours" and (key in OURS_ONLY or key.startswith(OURS_ONLY_SECTIONS))
                )
                assert allowed, f"{key} has no {side} figure"
        assert fig["status"] in ("", "pass", "MISS", "n/a")
    errors = {k: v for k, v in report["details"].items() if isinstance(v, dict) and "error" in v}
    assert not errors, errors
    assert report["details"]["startup"]["ours"]["torch_imported"] is False
    for side in ("ours", "baseline"):
        load = report["details"]["concurrency"][side]
        assert load["errors"] == 0 and load["lost"] == 0 and load["mismatched"] == 0, load


def test_history_compares_the_last_turn_with_the_question_alone(smoke_report: dict) -> None:
    from bench.history import CONVERSATIONS, HISTORY_TURNS, TARGET_RATIO

    history = smoke_report["details"]["history"]["ours"]
    assert history["errors"] == 0
    assert all(len(turns) == HISTORY_TURNS for _, turns, _ in CONVERSATIONS)
    for name, _, _ in CONVERSATIONS:
        got = history["conversations"][name]
        assert got["alone_p50_ms"] > 0 and got["state_p50_ms"] > 0
        # the medians are kept to 0.01 ms and the ratio to 0.001, so they agree to about 1 %
        assert got["ratio"] == pytest.approx(got["state_p50_ms"] / got["alone_p50_ms"], rel=1e-2)
    worst = max(c["ratio"] for c in history["conversations"].values())
    figure = smoke_report["figures"]["history.last_turn_over_alone"]
    assert figure["ours"] == worst == smoke_report["history_last_turn_over_alone"]
    assert figure["target"] == f"<= {TARGET_RATIO}"
    assert figure["status"] == ("pass" if worst <= TARGET_RATIO else "MISS")


def test_closed_loop_is_compared_with_the_faiss_server_in_the_same_run(smoke_report: dict) -> None:
    figure = smoke_report["figures"]["concurrency.rps"]
    ours, faiss = (smoke_report["details"]["concurrency"][side]["rps"] for side in ("ours", "baseline"))
    assert figure["ratio"] == round(ours / faiss, 3) == smoke_report["closed_loop_over_e5_dense_only"]
    from bench.run import CLOSED_LOOP_TARGET_RATIO as TARGET

    assert figure["target"] == f"ratio >= {TARGET}" and figure["status"] == (
        "pass" if ours / faiss >= TARGET else "MISS"
    )


def test_bench_json_top_level_contract(smoke_report: dict) -> None:
    for key in TOP_LEVEL:
        assert report_value(smoke_report, key) is not None, f"--json lacks a value for {key!r}"
    rates = [run["rps"] for run in smoke_report["open_loop"]]
    assert rates == sorted(PLANS["smoke"].openloop_rates)
    for run in smoke_report["open_loop"]:
        assert {"rps", "p50_ms", "p95_ms", "p99_ms", "errors"} <= set(run)
        assert run["errors"] == 0, run
        assert run["p50_ms"] <= run["p95_ms"] <= run["p99_ms"]
    assert smoke_report["machine"]["cores"] >= 1 and smoke_report["machine"]["cpu_model"]


def report_value(report: dict, key: str):
    return report.get(key)


def test_open_loop_schedule_is_poisson_with_the_asked_mix() -> None:
    plan = schedule(rate=20, duration_s=300, seed=1)
    times = [t for t, _, _ in plan]
    assert times == sorted(times) and times[-1] < 300
    assert abs(len(plan) / 300 - 20) < 1.5  # mean rate
    kinds = [kind for _, kind, _ in plan]
    repeats = kinds.count("repeat") / len(kinds)
    logs = kinds.count("log") / (len(kinds) - kinds.count("repeat"))
    assert 0.07 < repeats < 0.13 and 0.16 < logs < 0.24
    texts = [text for _, kind, text in plan if kind != "repeat"]
    assert len(set(texts)) == len(texts)  # only the repeats repeat: no cache answers the rest
    earlier = set()
    for _, kind, text in plan:
        if kind == "repeat":
            assert text in earlier
        earlier.add(text)


def test_p95_threshold_rate() -> None:
    runs = [
        {"rps": 5, "p95_ms": 100, "errors": 0},
        {"rps": 10, "p95_ms": 900, "errors": 0},
        {"rps": 20, "p95_ms": 1500, "errors": 0},
    ]
    assert p95_passes_1s_at(runs) == 20
    assert p95_passes_1s_at(runs[:2]) is None
    assert p95_passes_1s_at([{"rps": 5, "p95_ms": 10, "errors": 3}]) == 5


def test_bench_rejects_bad_duration() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--smoke", "--duration", "0"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert proc.returncode == 2 and "--duration" in proc.stderr


def test_readme_table_is_generated_from_the_report(smoke_report: dict, tmp_path: Path) -> None:
    from bench.readme_table import END, START, main, table

    text = table(smoke_report)
    assert smoke_report["machine"]["cpu_model"] in text
    for rate in PLANS["smoke"].openloop_rates:
        assert f"open loop {rate:g} req/s" in text
    report = tmp_path / "report.json"
    report.write_text(json.dumps(smoke_report), encoding="utf-8")
    readme = tmp_path / "performance.md"
    readme.write_text(f"# x\n\n{START}\nold table\n{END}\n\nafter\n", encoding="utf-8")
    assert main([str(report), "--write", str(readme)]) == 0
    written = readme.read_text(encoding="utf-8")
    assert "old table" not in written and text in written and written.endswith("\n\nafter\n")
    readme.write_text("no markers here\n", encoding="utf-8")
    assert main([str(report), "--write", str(readme)]) == 2


def test_the_performance_page_holds_the_table_markers() -> None:
    from bench.readme_table import END, START

    page = (REPO / "docs" / "performance.md").read_text(encoding="utf-8")
    assert page.count(START) == page.count(END) == 1 and page.index(START) < page.index(END)


def bench_imports() -> dict[str, set[str]]:
    """Which bench modules each bench module imports (at the top or inside a function)."""
    graph: dict[str, set[str]] = {}
    for path in sorted((REPO / "bench").glob("*.py")):
        names: set[str] = set()
        for node in ast.walk(parse(path)):
            if isinstance(node, ast.ImportFrom) and node.module == "bench":  # from bench import run
                names |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("bench."):
                names.add(node.module.removeprefix("bench."))
            elif isinstance(node, ast.Import):
                names |= {a.name.removeprefix("bench.") for a in node.names if a.name.startswith("bench.")}
        graph[path.stem] = names
    return graph


def test_bench_modules_import_each_other_without_a_cycle() -> None:
    graph = bench_imports()
    assert graph["cold_start"] and graph["run"] >= {"cold_start", "env"}  # the check sees lazy imports too

    def cycle_from(module: str, path: tuple[str, ...]) -> tuple[str, ...] | None:
        for imported in sorted(graph.get(module, ())):
            if imported in path:
                return (*path[path.index(imported) :], imported)
            found = cycle_from(imported, (*path, imported))
            if found:
                return found
        return None

    cycles = {m: c for m in graph if (c := cycle_from(m, (m,)))}
    assert not cycles, cycles
