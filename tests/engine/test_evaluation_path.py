"""Issue 34: the evaluation's switches (one kind of evidence, no curated phrasings) are not part of what serving
calls. Before, ``Answerer.ask`` and ``LiveEngine.ask`` took ``mode`` and ``use_meta``: any edge could ask for a
baseline ranking. Now only ``bot.fit.evaluate.baseline_ask`` reaches them, with the same results as before."""

from __future__ import annotations

import inspect

import pytest

from bot.engine.answerer import Answerer
from bot.engine.live import LiveEngine
from bot.fit.evaluate import baseline_ask
from fixtures.engines import hash_engine, repo_seeds_hash_settings

QUESTIONS = ("显存不足怎么办", "NCCL timeout on multi-node training", "what about TensorFlow?")


@pytest.mark.parametrize("ask", [Answerer.ask, LiveEngine.ask])
def test_serving_ask_takes_no_evaluation_switch(ask):
    assert {"mode", "use_meta"}.isdisjoint(inspect.signature(ask).parameters)


def test_a_live_engine_refuses_a_baseline_mode(tmp_path):
    live = LiveEngine(hash_engine(repo_seeds_hash_settings(tmp_path)), poll_seconds=0)
    assert live.ask(QUESTIONS[0]).hits
    with pytest.raises(TypeError):
        live.ask(QUESTIONS[0], mode="bm25")  # type: ignore[call-arg]


def test_the_evaluation_path_ranks_as_the_engine_does(tmp_path):
    """The default baseline (hybrid, curated phrasings on) is exactly the engine's own answer."""
    engine = hash_engine(repo_seeds_hash_settings(tmp_path))
    for question in QUESTIONS:
        ours = baseline_ask(engine, question, k=10, mode="hybrid", use_meta=True)
        engine_own = engine.ask(question, k=10)
        assert [(h.section.key, round(h.score, 6)) for h in ours.hits] == [
            (h.section.key, round(h.score, 6)) for h in engine_own.hits
        ]
        assert (ours.tier, ours.reason) == (engine_own.tier, engine_own.reason)


@pytest.mark.parametrize(("mode", "use_meta"), [("dense", True), ("bm25", True), ("hybrid", False)])
def test_a_baseline_ranks_the_engine_s_evidence_by_one_kind(tmp_path, mode, use_meta):
    """A baseline reads the message as serving does (the same plan and evidence), then ranks by its one kind."""
    from bot.engine.rank import rank

    engine = hash_engine(repo_seeds_hash_settings(tmp_path))
    for question in QUESTIONS:
        ours = baseline_ask(engine, question, k=10, mode=mode, use_meta=use_meta)
        evidence = engine.evidence(question, use_meta=use_meta)
        order = rank(evidence, engine.calibration.weights, mode=mode, k=10).order
        assert [h.section.key for h in ours.hits] == [engine.sections[i].key for i in order]
