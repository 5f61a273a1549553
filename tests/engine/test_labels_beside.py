"""Labels only help (issue 42, item 3): a company's twenty labels for its own pages, given to ``bot tune`` beside the
shipped fit, never lower hit@1 on the company's other questions, and leave the shipped fit and the seeds' answers as
they were. The company here is holdout 11's kb6 (two Chinese FAQ pages of other projects, 20 labels and 49 other
questions labelled twice, blind), beside the repository's seeds under the hash embedder."""

from __future__ import annotations

import dataclasses
import json
import shutil

import pytest

from bot.cli import main as cli_main
from bot.engine.beside import beside_files
from bot.engine.calibration import Calibration, calibration_path
from bot.engine.facts import build
from bot.engine.retrieve import Engine
from bot.fit.evaluate import evaluate, read_cases
from bot.kb.embed import HashEmbedder
from fixtures import REPO
from fixtures.engines import repo_seeds_hash_settings

KB6 = REPO / "eval" / "holdout11" / "kb6"


def _hit1(engine: Engine) -> float:
    return evaluate(engine, read_cases(KB6 / "questions_settled.jsonl"))["metrics"]["hit@1"]


@pytest.fixture(scope="module")
def company(tmp_path_factory):
    """The seeds with a stored fit (as ``bot calibrate`` leaves one: calibrated, its documents' hashes, a precedent
    weight), kb6's pages added since, the company's other questions answered before any label."""
    root = tmp_path_factory.mktemp("company")
    settings = repo_seeds_hash_settings(root)
    shutil.rmtree(settings.seeds_dir / "labels", ignore_errors=True)
    engine = Engine.open(settings, HashEmbedder())
    sources = engine.index.manifest["sources"]
    fitted = dataclasses.replace(
        Calibration.default(engine.embedder.id), calibrated=True, precedent_weight=4.0, documents=dict(sources)
    )
    fitted.save(calibration_path(settings.index_dir, engine.embedder.id))
    (settings.seeds_dir / "kb6").mkdir()
    for page in (KB6 / "docs").glob("*.md"):
        shutil.copy(page, settings.seeds_dir / "kb6" / page.name)
    build(settings, HashEmbedder())
    engine = Engine.open(settings, HashEmbedder())
    assert engine.hidden == {"kb6/qwen_faq_zh.md", "kb6/swift_faq_zh.md"}
    return settings, _hit1(engine)


def test_twenty_labels_and_a_tune_never_lower_the_companys_other_questions(company, monkeypatch, capsys):
    settings, before = company
    shipped = calibration_path(settings.index_dir, HashEmbedder().id)
    fitted_bytes = shipped.read_bytes()
    (settings.seeds_dir / "labels").mkdir(exist_ok=True)
    shutil.copy(KB6 / "labels20.jsonl", settings.seeds_dir / "labels" / "kb6.jsonl")
    monkeypatch.setenv("BOT_SEEDS_DIR", str(settings.seeds_dir))
    monkeypatch.setenv("BOT_INDEX_DIR", str(settings.index_dir))
    monkeypatch.setenv("BOT_EMBEDDER", "hash")
    monkeypatch.chdir(REPO)  # the shipped labels (eval/*.jsonl) are read beside the company's, as in production
    assert cli_main(["tune", "--json"]) == 0
    out = capsys.readouterr()
    figures = json.loads(out.out.strip().splitlines()[-1])["beside"]
    assert "tune: fold of" in out.err  # progress, per fold
    assert figures["answered"] == 20 and figures["documents"] == 2
    assert shipped.read_bytes() == fitted_bytes  # the shipped fit is kept as it was
    engine = Engine.open(settings, HashEmbedder())
    after = _hit1(engine)
    assert after >= before, (before, after, figures)
    # Whatever was kept reaches the company's pages only.
    if engine.beside is not None:
        assert set(engine.beside.documents) <= engine.hidden
        assert beside_files(shipped)[0].is_file()


def test_a_tune_leaves_no_vote_where_nothing_is_kept_and_a_calibrate_clears_it(tmp_path):
    import numpy as np

    from bot.engine.beside import Beside
    from bot.engine.precedents import Precedents

    path = tmp_path / "e.json"
    beside = Beside(Precedents(np.eye(2, dtype=np.float32), (("a.md#x",), ())), 4.0, {"a.md": "h"}, {}, 1.0)
    beside.save(path)
    loaded = Beside.load(path, dim=2)
    assert loaded is not None and loaded.weight == 4.0 and loaded.lexical == 1.0 and loaded.documents == {"a.md": "h"}
    assert not path.exists()  # saved beside the calibration file, never over it
    beside_files(path)[0].write_text('{"format": 1, "weight": -1, "documents": {}}', encoding="utf-8")
    assert Beside.load(path, dim=2) is None  # a damaged file: ranked without it, logged with the fix
