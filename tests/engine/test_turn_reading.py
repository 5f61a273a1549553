"""Reading a turn (issue 44): which cues say a message needs its conversation, a complete question's two readings
weighed by what each finds, and the act model's guard as a stored, chosen value (hash embedder)."""

from __future__ import annotations

import numpy as np
import pytest

from bot.engine.acts import FEATURE_NAMES, LABELS, ActModel, acts_path, load_for
from bot.engine.calibration import calibration_path
from bot.engine.plan import (
    STORED_BEFORE,
    Finding,
    Guard,
    Proposal,
    Reading,
    chosen_reading,
    decide_act,
    plan,
    read,
)
from bot.engine.read import detail_asked
from bot.kb.domain import shipped
from bot.records import Case

CASE = Case(search="nccl error", shown=("faq#nccl",), best="faq#nccl", led=("faq#nccl",))


@pytest.fixture
def engine(tmp_path):
    from fixtures.engines import two_section_engine

    return two_section_engine(tmp_path)


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("具体改哪个参数？", "parameter"),
        ("which flag exactly?", "parameter"),
        ("具体要执行什么命令？", "command"),
        ("要改哪个文件", "file"),
        ("模型训练完很大，能压缩吗", ""),
        ("DNN 能同时跑在 GPU 和 CPU 上吗", ""),
        ("how do I choose the learning rate parameter when training a large detection model?", ""),
    ],
)
def test_a_detail_is_a_short_question_naming_what_it_asks_for(message, kind):
    assert detail_asked(message, shipped()) == kind


def test_the_weighing_picks_the_own_words_when_they_find_a_clear_lead_and_never_confidently_otherwise():
    message = read("also, training does not converge at all, any checklist?")
    alone, together = Finding("faq#conv", True, 0.9), Finding("faq#nccl", True, 0.8)
    p = plan(message, CASE, Reading(rule_move="follow_up", needs_case=False, alone=alone, together=together))
    assert (p.act, p.move, p.joined, p.focus, p.cap) == ("switch", "switch", "", "", None)
    unclear = Reading(
        rule_move="follow_up",
        needs_case=False,
        alone=Finding("faq#conv", False, 0.5),
        together=Finding("faq#nccl", False, 0.4),
    )
    assert plan(message, CASE, unclear).cap == "tentative"
    # the same findings do not move a message whose cues need the case
    cued = Reading(rule_move="follow_up", needs_case=True, alone=alone, together=together)
    assert plan(read("那多机呢？", follow_up=True), CASE, cued).move == "follow_up"


def test_own_words_leading_to_the_section_shown_keep_the_case():
    assert chosen_reading("follow_up", Finding("faq#nccl", True, 0.9), Finding("faq#other", True, 0.9), CASE) == (
        "follow_up",
        True,
    )


def test_a_guard_is_read_from_text_and_refused_with_the_fix():
    assert Guard.parse("none") == Guard()
    assert Guard.parse("threshold 0.7") == Guard(0.7)
    assert str(Guard.parse(" Threshold=0.6 , never on failed fix ")) == "threshold 0.6, never on failed fix"
    for bad in ("threshold", "threshold 2", "sometimes"):
        with pytest.raises(ValueError, match="--guard"):
            Guard.parse(bad if bad != "threshold 2" else "threshold x")
    with pytest.raises(ValueError, match="between 0 and 1"):
        Guard.parse("threshold 2")


@pytest.mark.parametrize(
    ("guard", "rule", "probability", "act"),
    [
        ("none", "failed_fix", 0.3, "switch"),
        ("threshold 0.8", "detail", 0.7, "detail"),
        ("threshold 0.8", "failed_fix", 0.9, "switch"),
        ("never on failed fix", "failed_fix", 0.99, "failed_fix"),
        ("never on failed fix", "detail", 0.3, "switch"),
    ],
)
def test_the_plan_decides_under_the_models_guard(guard, rule, probability, act):
    assert decide_act(rule, Proposal("new_covered", probability), Guard.parse(guard)) == act


def _model(engine, guard: Guard) -> ActModel:
    inputs = len(FEATURE_NAMES) + engine.embedder.dim
    return ActModel(
        weights=np.zeros((len(LABELS), inputs), dtype=np.float32),
        bias=np.zeros(len(LABELS), dtype=np.float32),
        mean=np.zeros(inputs, dtype=np.float32),
        scale=np.ones(inputs, dtype=np.float32),
        classes=LABELS,
        names=FEATURE_NAMES,
        embedder=engine.embedder.id,
        guard=guard,
    )


def test_the_guard_is_stored_with_the_model_and_an_older_file_keeps_the_guard_it_shipped_with(engine):
    path = acts_path(calibration_path(engine.settings.index_dir, engine.embedder.id))
    _model(engine, Guard.parse("never on failed fix")).save(path)
    loaded = load_for(path, engine.embedder.id, engine.embedder.dim)
    assert loaded is not None and str(loaded.guard) == "never on failed fix"
    # a file written before guards were stored: no "guard" array
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files if k != "guard"}
    np.savez(path.with_name("old.acts.npz"), **arrays)
    old = load_for(path.with_name("old.acts.npz"), engine.embedder.id, engine.embedder.dim)
    assert old is not None and str(old.guard) == STORED_BEFORE
