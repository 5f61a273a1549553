"""The benchmark runs end to end and reports every figure (``python -m bench --smoke --json``).

Smoke mode is tiny and model-free (hash embedder on both sides); no timing is asserted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from bench.run import PLANS, figures

REPO = Path(__file__).resolve().parents[1]


def test_bench_smoke_reports_every_figure() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOT_")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])
    proc = subprocess.run([sys.executable, "-m", "bench", "--smoke", "--json"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    expected = set(figures({}, PLANS["smoke"]))
    assert set(report["figures"]) == expected
    app_exists = (REPO / "app.py").is_file()
    for key, fig in report["figures"].items():
        for side in ("ours", "baseline"):
            if fig[side] is None:
                stage_without_counterpart = side == "baseline" and any(s in key for s in (".bm25.", ".signature."))
                no_app = side == "ours" and not app_exists and key.startswith(("concurrency.", "startup.app"))
                assert stage_without_counterpart or no_app, f"{key} has no {side} figure"
        assert fig["status"] in ("", "pass", "MISS", "n/a")
    errors = {k: v for k, v in report["details"].items() if isinstance(v, dict) and "error" in v}
    assert not errors, errors
    assert report["details"]["startup"]["ours"]["torch_imported"] is False
    for side in ("ours", "baseline") if app_exists else ("baseline",):
        load = report["details"]["concurrency"][side]
        assert load["errors"] == 0 and load["lost"] == 0 and load["mismatched"] == 0, load
