"""Precedents: labelled real questions vote for the sections that answered them, never for their own thread."""

from __future__ import annotations

import dataclasses
import json
import logging

import numpy as np
import pytest

from bot.engine.calibration import Calibration, Weights, calibration_path, load_for, precedents_path
from bot.engine.precedents import Precedents
from bot.engine.rank import rank
from bot.engine.retrieve import Engine
from bot.fit.calibrate import Row, calibrate, precedents_of, voted
from bot.kb.embed import HashEmbedder


@pytest.fixture
def engine(tmp_path):
    from fixtures.engines import two_section_engine

    return two_section_engine(tmp_path)


def _key(engine: Engine, heading: str) -> str:
    return next(s.key for s in engine.sections if heading in s.heading)


def test_a_question_like_a_labelled_one_leans_to_the_section_that_answered_it(engine):
    question = "训练很慢 显存不足"  # its words tie the two sections
    evidence = engine.evidence(question)
    slow, memory = _key(engine, "利用率"), _key(engine, "显存不足")
    # Labelled precedents: this very wording was answered by the slow-training section; its opposite by nothing.
    # Both sections have labels of their own (a far-away question each): a section nobody labelled is protected
    # from the others' evidence by the gate (tests/engine/test_transfer.py), and here both are labelled.
    vector = evidence.own.query_vector / np.linalg.norm(evidence.own.query_vector)
    far = np.zeros_like(vector)
    far[int(np.argmin(np.abs(vector)))] = 1.0  # nearly orthogonal to the question: never among its k=1 nearest
    precedents = Precedents(np.stack([vector, -vector, far]), ((slow,), (), (memory,)), k=1)
    voted_evidence = engine.with_precedents(evidence, precedents)
    assert voted_evidence.precedent_lean == pytest.approx(2.0, abs=1e-2)  # cosine 1 to the answered, -1 to the other
    with_vote = rank(voted_evidence, Weights(0.5, 0.0, 0.0, precedent=4.0)).order
    assert engine.sections[with_vote[0]].key == slow
    # The same evidence with a precedent answered by the other section leans the other way.
    other = engine.with_precedents(
        evidence, Precedents(np.stack([evidence.own.query_vector, far]), ((memory,), (slow,)), k=1)
    )
    assert engine.sections[rank(other, Weights(0.5, 0.0, 0.0, precedent=4.0)).order[0]].key == memory
    # The engine's features carry the vote to the confidence model.
    top = with_vote[0]
    features = engine.features(voted_evidence, voted_evidence.own, top)
    assert features["precedent_lean"] == pytest.approx(2.0, abs=1e-2) and features["precedent_top"] == pytest.approx(
        1.0
    )


def test_a_follow_up_gets_no_precedent_vote(engine):
    precedents = Precedents(np.ones((1, engine.embedder.dim), dtype=np.float32), ((_key(engine, "利用率"),),))
    first = engine.ask("显存不足怎么办")
    follow = engine.with_precedents(engine.evidence("那多卡呢？", first.case), precedents)
    assert follow.move == "follow_up" and follow.precedent is None and follow.precedent_lean == 0.0


def test_calibration_never_lets_a_question_vote_for_itself(engine):
    """The same question in two threads: each one's vote comes only from the other thread."""
    slow = _key(engine, "利用率")
    rows = [
        Row(
            expect=({"source": "gpu.md", "section": "利用率"},),
            group="https://t/1",
            evidence=engine.evidence("训练很慢怎么办"),
        ),
        Row(expect=(), group="https://t/2", evidence=engine.evidence("训练很慢怎么办")),
    ]
    precedents = precedents_of(engine, rows)
    assert precedents.answers == ((slow,), ())
    first, second = voted(engine, rows, precedents)
    slow_at = next(n for n, s in enumerate(engine.sections) if s.key == slow)
    assert not first.evidence.precedent.any()  # only the other thread (not answered) voted, not itself
    assert second.evidence.precedent[slow_at] == pytest.approx(1.0)
    # A pool without the other thread leaves nobody to vote.
    alone = voted(engine, rows, precedents, pool=np.array([True, False]))[0]
    assert alone.evidence.precedent_lean == 0.0 and not alone.evidence.precedent.any()


def test_calibration_takes_no_vote_from_the_questions_own_gathering_batch(engine, tmp_path):
    """Questions gathered together (real_more4_a and conversations_real4_a) vote for each other more than for a
    question asked later: while fitting, a question's precedents come from other batches only."""
    from bot.fit.calibrate import batch_of, collect, read_labelled

    slow = _key(engine, "利用率")
    expect = [{"source": "gpu.md", "section": "利用率"}]
    for name, url in (("real_more4_a", "https://t/1"), ("real_more4_b", "https://t/3")):
        (tmp_path / f"{name}.jsonl").write_text(
            json.dumps({"query": "训练很慢怎么办", "kind": "zh", "url": url, "expect": expect}) + "\n", encoding="utf-8"
        )
    (tmp_path / "conversations_real4_a.jsonl").write_text(
        json.dumps({"turns": [{"query": "训练很慢怎么办", "expect": expect}], "kind": "followup", "url": "https://t/2"})
        + "\n",
        encoding="utf-8",
    )
    cases, groups, conversations, _ = read_labelled(sorted(tmp_path.glob("*.jsonl")))
    assert [c["batch"] for c in conversations] == ["4_a"] and batch_of(tmp_path / "real_more4_b.jsonl") == "4_b"
    rows = collect(engine, cases, groups)
    assert [r.batch for r in rows] == ["4_a", "4_b"]
    precedents = precedents_of(engine, rows)
    same_batch, other_batch = voted(engine, rows, precedents)
    slow_at = next(n for n, s in enumerate(engine.sections) if s.key == slow)
    # 4_a's question hears only 4_b's; 4_b's only 4_a's: each gets exactly one vote, from the other batch.
    assert same_batch.evidence.precedent[slow_at] == pytest.approx(1.0) == other_batch.evidence.precedent[slow_at]
    # With 4_b left out of the pool, nobody outside 4_a's batch is left to vote for it.
    alone = voted(engine, rows, precedents, pool=np.array([True, False]))[0]
    assert not alone.evidence.precedent.any()


def _labelled(path, n_threads: int = 12):
    rows = []
    for n in range(n_threads):
        rows.append(
            {
                "query": f"显存不足 out of memory 第{n}次",
                "kind": "zh",
                "url": f"https://t/{n}",
                "expect": [{"source": "gpu.md", "section": "显存不足"}],
            }
        )
        rows.append({"query": f"how do I bake bread number {n}", "kind": "oos", "url": f"https://t/{n}", "expect": []})
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return path


def test_calibrate_stores_the_precedents_beside_the_model_and_a_missing_file_falls_back(engine, tmp_path, caplog):
    cal = calibrate(engine, [_labelled(tmp_path / "labelled.jsonl")])
    path = calibration_path(engine.settings.index_dir, engine.embedder.id)
    side = precedents_path(path)
    assert cal.precedents is not None and len(cal.precedents) == 24 and side.is_file()
    assert Calibration.load(path) == cal
    assert json.loads(path.read_text(encoding="utf-8"))["precedents"]["file"] == side.name
    reopened = Engine.open(engine.settings, HashEmbedder())
    assert reopened.calibration.precedents == cal.precedents
    side.unlink()
    with caplog.at_level(logging.WARNING):
        fallback = load_for(engine.settings.index_dir, engine.embedder.id)
    assert not fallback.calibrated and fallback.precedents is None
    assert side.name in caplog.text and "python -m bot calibrate" in caplog.text


def test_a_broken_precedents_file_names_the_file_and_the_fix(tmp_path):
    path = tmp_path / "x.precedents.npz"
    path.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match=r"x\.precedents\.npz.*python -m bot calibrate"):
        Precedents.load(path)
    with pytest.raises(ValueError, match="k >= 1"):
        Precedents(np.zeros((1, 2), dtype=np.float32), ((),), k=0)


def test_the_stored_vote_weight_is_only_used_with_precedents():
    cal = dataclasses.replace(Calibration.default("e"), precedent_weight=4.0)
    assert cal.weights.precedent == 0.0  # no precedents loaded: nothing to weigh
    with_them = dataclasses.replace(cal, precedents=Precedents(np.zeros((1, 2), dtype=np.float32), ((),)))
    assert with_them.weights.precedent == 4.0
