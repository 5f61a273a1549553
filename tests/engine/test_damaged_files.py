"""Damaged or non-finite model files beside the index (issue 36, findings 1 and 3): each is named with its fix and
the engine answers without it: never an error per request, never a silent re-ranking."""

from __future__ import annotations

import dataclasses
import json
import logging
import math

import numpy as np
import pytest

from bot.engine.calibration import (
    FOLLOW_FEATURES,
    Calibration,
    calibration_path,
    precedents_path,
    sources_fingerprint,
)
from bot.engine.learned import Adapter, adapter_path
from bot.engine.precedents import Precedents
from bot.engine.retrieve import Engine
from bot.kb.embed import HashEmbedder

QUESTION = "显存不足 out of memory"


@pytest.fixture
def engine(tmp_path):
    from fixtures.engines import two_section_engine

    return two_section_engine(tmp_path)


def _fingerprint(engine: Engine) -> str:
    return sources_fingerprint(engine.index.manifest.get("sources", {}))


def _store_calibration(engine: Engine, *, precedents: bool = False) -> Calibration:
    """A calibrated model for this index as `bot calibrate` stores it (the default's numbers, marked fitted)."""
    cal = dataclasses.replace(
        Calibration.default(engine.embedder.id),
        calibrated=True,
        sources_hash=_fingerprint(engine),
        figures={"fitted": True},
        precedent_weight=1.0 if precedents else 0.0,
        precedents=Precedents(np.eye(2, engine.embedder.dim, dtype=np.float32), ((engine.sections[0].key,), ()), k=2)
        if precedents
        else None,
    )
    cal.save(calibration_path(engine.settings.index_dir, engine.embedder.id))
    return cal


def _store_adapter(engine: Engine, dim: int | None = None, **arrays) -> Adapter:
    d = dim or engine.embedder.dim
    rng = np.random.default_rng(0)
    adapter = Adapter(
        arrays.get("up", rng.standard_normal((d, 2)) * 0.01),
        arrays.get("down", rng.standard_normal((d, 2)) * 0.01),
        arrays.get("none_weight", np.zeros(d)),
        embedder=engine.embedder.id,
        sources_hash=_fingerprint(engine),
    )
    adapter.save(adapter_path(calibration_path(engine.settings.index_dir, engine.embedder.id)))
    return adapter


def _reopen(engine: Engine, caplog) -> Engine:
    with caplog.at_level(logging.WARNING):
        return Engine.open(engine.settings, HashEmbedder())


def _answers_finitely(engine: Engine) -> None:
    answer = engine.ask(QUESTION)
    assert answer.hits and math.isfinite(answer.confidence)
    json.dumps({"confidence": answer.confidence}, allow_nan=False)  # what /api/ask serialises


@pytest.mark.parametrize(
    "field, value",
    [
        ("intercept", "NaN"),
        ("lexical_weight", "Infinity"),
        ("learned_weight", "-Infinity"),
        ("coef", "[NaN, 1.0, 0.0, -8.0, -4.0, -2.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0]"),
        ("scale", "[Infinity, 0.5, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]"),
    ],
)
def test_a_calibration_with_a_non_finite_number_is_named_with_the_fix_and_the_default_answers(
    engine, caplog, field, value
):
    _store_calibration(engine)
    path = calibration_path(engine.settings.index_dir, engine.embedder.id)
    data = json.loads(path.read_text(encoding="utf-8"))
    # What json.dumps writes for a NaN fit (and json.loads reads back).
    text = json.dumps({**data, field: "@@"}).replace('"@@"', value)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=rf"{path.name}: {field}.*not a finite number.*python -m bot tune"):
        Calibration.load(path)
    reopened = _reopen(engine, caplog)
    assert not reopened.calibration.calibrated and reopened.calibration.weights == Calibration.default().weights
    assert path.name in caplog.text and "python -m bot tune" in caplog.text
    _answers_finitely(reopened)


def test_a_follow_up_model_with_nan_is_refused_with_the_file(engine, caplog):
    _store_calibration(engine)
    path = calibration_path(engine.settings.index_dir, engine.embedder.id)
    data = json.loads(path.read_text(encoding="utf-8"))
    n = len(FOLLOW_FEATURES)
    data["follow"] = {
        "features": list(FOLLOW_FEATURES),
        "mean": [0.0] * n,
        "scale": [1.0] * n,
        "coef": [float("nan")] + [0.0] * (n - 1),
        "intercept": 0.0,
        "answer_threshold": 0.9,
        "none_threshold": 0.1,
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match=rf"{path.name}.*coef\[0\]=nan is not a finite number"):
        Calibration.load(path)
    assert not _reopen(engine, caplog).calibration.calibrated


@pytest.mark.parametrize("damage", ["truncated", "nan", "other dimension"])
def test_damaged_precedents_are_named_with_the_fix_and_the_engine_starts_and_answers(engine, caplog, damage):
    _store_calibration(engine, precedents=True)
    side = precedents_path(calibration_path(engine.settings.index_dir, engine.embedder.id))
    assert Engine.open(engine.settings, HashEmbedder()).calibration.precedents is not None
    if damage == "truncated":
        side.write_bytes(side.read_bytes()[: side.stat().st_size // 2])  # BadZipFile, not a ValueError
    elif damage == "nan":
        Precedents(np.full((2, engine.embedder.dim), np.nan), ((), ())).save(side)
    else:
        Precedents(np.eye(2, 64, dtype=np.float32), ((engine.sections[0].key,), ())).save(side)
    reopened = _reopen(engine, caplog)
    assert reopened.calibration.precedents is None and not reopened.calibration.calibrated
    assert side.name in caplog.text and "python -m bot calibrate" in caplog.text
    _answers_finitely(reopened)


@pytest.mark.parametrize("damage", ["truncated", "nan", "infinite", "other dimension"])
def test_a_damaged_adapter_is_named_with_the_fix_and_the_engine_answers_without_it(engine, caplog, damage):
    _store_calibration(engine)
    _store_adapter(engine)
    path = adapter_path(calibration_path(engine.settings.index_dir, engine.embedder.id))
    assert Engine.open(engine.settings, HashEmbedder()).adapter is not None
    if damage == "truncated":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif damage == "nan":
        _store_adapter(engine, up=np.full((engine.embedder.dim, 2), np.nan))
    elif damage == "infinite":
        _store_adapter(engine, none_weight=np.full(engine.embedder.dim, np.inf))
    else:
        _store_adapter(engine, dim=64)
    reopened = _reopen(engine, caplog)
    assert reopened.adapter is None and reopened.calibration.calibrated  # only the adapter is left out
    assert path.name in caplog.text and "python -m bot tune" in caplog.text
    _answers_finitely(reopened)
    assert reopened.evidence(QUESTION).learned is None


# ---------------------------------------------------------------- labelled files for `bot calibrate` / `bot tune`

GOOD = {
    "query": "显存不足怎么办",
    "kind": "zh",
    "url": "https://t/1",
    "expect": [{"source": "gpu.md", "section": "显存"}],
}


@pytest.mark.parametrize("command", ["calibrate", "tune"])
@pytest.mark.parametrize(
    "bad_line, said",
    [
        (json.dumps({**GOOD, "expect": "notalist"}), "expect is 'notalist', not a list"),
        ("this is not json", "not JSON"),
        (json.dumps({**GOOD, "expect": [{"source": "gpu.md"}]}), "expect[0]"),
        (json.dumps(["a", "list"]), "not an object"),
        ("[" * 100_000 + "]" * 100_000, "nested deeper"),  # issue 45: before, a RecursionError traceback
        (json.dumps({**GOOD, "query": "显存\ud800"}), "lone surrogate"),  # issue 45: before, the fit ran first
    ],
    ids=["expect-not-a-list", "not-json", "expect-without-section", "not-an-object", "nested", "surrogate"],
)
def test_a_bad_labelled_line_is_named_with_the_file_the_line_and_the_fix(
    hash_settings, tmp_path, capsys, command, bad_line, said
):
    from bot.cli import main
    from bot.engine.facts import build

    build(hash_settings, HashEmbedder())
    labelled = tmp_path / "real_more9.jsonl"
    labelled.write_text(json.dumps(GOOD, ensure_ascii=False) + "\n\n" + bad_line + "\n", encoding="utf-8")
    argv = [command, str(labelled), "--embedder", "hash"]
    argv += ["--seeds", str(hash_settings.seeds_dir), "--index", str(hash_settings.index_dir)]
    assert main(argv) == 2  # before: a TypeError traceback (rc 1), or "Expecting value" without file or line
    err = capsys.readouterr().err
    assert f"{labelled}:3: " in err and said in err and "Fix that line" in err and "Traceback" not in err


def test_a_conversation_turn_with_a_bad_expect_is_named_with_its_line_and_turn(tmp_path):
    from bot.fit.labels import check_labelled

    conversations = tmp_path / "conversations_9.jsonl"
    turns = [{"query": "显存不足", "expect": []}, {"query": "还是不行", "expect": "notalist"}]
    conversations.write_text(
        json.dumps({"turns": turns[:1]}) + "\n" + json.dumps({"turns": turns}) + "\n", encoding="utf-8"
    )
    with pytest.raises(ValueError, match=rf"{conversations.name}:2: turn 2: expect is 'notalist'.*Fix that line"):
        check_labelled([conversations])
    conversations.write_text(json.dumps({"turns": turns[:1]}) + "\n", encoding="utf-8")
    check_labelled([conversations])  # a good file passes
