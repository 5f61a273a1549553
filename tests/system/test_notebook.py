"""notebooks/evaluation.ipynb runs top to bottom (real seeds and embedder, temporary index)."""

from __future__ import annotations

from pathlib import Path

import nbclient
import nbformat
import pytest

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "notebooks" / "evaluation.ipynb"
DEV_SET = REPO.parent / "shared" / "eval" / "dev.jsonl"  # as in conftest.py


@pytest.mark.model
def test_evaluation_notebook_runs_without_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    if not DEV_SET.is_file():
        pytest.skip(f"evaluation set {DEV_SET} is not there")
    monkeypatch.setenv("BOT_EVAL_SET", str(DEV_SET))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}
    )
    client.execute()  # raises CellExecutionError on the first failing cell
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) >= 3, "the hit@k, confidence and reliability plots are missing"
    text = "".join(o.get("text", "") for o in outputs)
    assert "hit@1" in text and "misses out of" in text
