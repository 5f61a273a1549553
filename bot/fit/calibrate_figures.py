"""The figures ``python -m bot calibrate`` reports, cross-validated by thread or conversation.

No thread is in both fit and test; each test fold's weights, precedents and thresholds are chosen on its training
folds only (thresholds from out-of-fold probabilities *within* the training threads).
"""

from __future__ import annotations

import numpy as np

from bot.engine.calibration import Weights
from bot.engine.precedents import Precedents
from bot.engine.rank import rank
from bot.engine.retrieve import Engine
from bot.fit.calibrate_models import (
    FOLDS,
    ece_of,
    first_features,
    fit_logistic,
    folds_of,
    follow_features,
    predict,
    reliability_of,
    share_of,
    tiers_of,
)
from bot.fit.calibrate_rows import Row, matches, voted
from bot.fit.calibrate_thresholds import fit_thresholds, follow_thresholds
from bot.fit.calibrate_weights import choose_weights


def inner_predictions(x: np.ndarray, y: np.ndarray, groups: list[str]) -> np.ndarray:
    """Out-of-fold predictions within the training threads (``groups``: each row's thread), for its thresholds; a fold
    whose training part has one class only keeps 0."""
    p_inner = np.zeros(len(x))
    for inner_test in folds_of(groups, FOLDS):
        inner_train = np.setdiff1d(np.arange(len(x)), inner_test)
        if len(inner_test) and len(set(y[inner_train])) == 2:
            p_inner[inner_test] = predict(fit_logistic(x[inner_train], y[inner_train]), x[inner_test])
    return p_inner


def cross_validate(engine: Engine, rows: list[Row], policy: dict, precedents: Precedents | None = None) -> dict:
    """First-turn figures from weights, models, thresholds and precedents that never saw the test fold's threads."""
    groups = [r.group for r in rows]
    y = np.array([1 if r.in_scope else 0 for r in rows])
    p_out = np.zeros(len(rows))
    tiers_out: list[str] = [""] * len(rows)
    hit1_out = np.zeros(len(rows), dtype=bool)
    hit3_out = np.zeros(len(rows), dtype=bool)
    for test in folds_of(groups, FOLDS):
        if not len(test):
            continue
        train = np.setdiff1d(np.arange(len(rows)), test)
        pool = np.zeros(len(rows), dtype=bool)
        pool[train] = True
        weights, fold_precedents = choose_weights(engine, rows, precedents, pool)
        fold_rows = voted(engine, rows, fold_precedents, pool)
        feats = [first_features(engine, r, weights) for r in fold_rows]
        x = np.array([f[0] for f in feats])
        hard = np.array([f[2] for f in feats])
        # Thresholds from out-of-fold predictions *within* the training threads.
        p_inner = inner_predictions(x[train], y[train], [groups[i] for i in train])
        batches = np.array([rows[i].batch for i in train])
        answer, none = fit_thresholds(p_inner, y[train], hard[train], batches=batches, **policy)
        p_out[test] = predict(fit_logistic(x[train], y[train]), x[test])
        for i, tier in zip(test, tiers_of(p_out[test], hard[test], x[test], answer, none)):
            tiers_out[i] = tier
        for i in test:
            if rows[i].in_scope:
                order = rank(fold_rows[i].evidence, weights, k=3).order
                ok = [matches(engine, n, rows[i].expect) for n in order]
                hit1_out[i], hit3_out[i] = bool(ok and ok[0]), any(ok)
    inscope, near = y == 1, y == 0
    tiers = np.array(tiers_out)
    return {
        "n_cases": len(rows),
        "n_threads": len(set(groups)),
        "n_in_scope": int(inscope.sum()),
        "n_out_of_scope": int(near.sum()),
        "out_of_scope_not_confident": share_of(tiers != "answer", near),
        "out_of_scope_none": share_of(tiers == "none", near),
        "in_scope_confident": share_of(tiers == "answer", inscope),
        "in_scope_not_confident": share_of(tiers != "answer", inscope),
        "in_scope_none": share_of(tiers == "none", inscope),
        "in_scope_hit@1": share_of(hit1_out, inscope),
        "in_scope_hit@3": share_of(hit3_out, inscope),
        "ece": round(ece_of(p_out, y), 4),
        "reliability": reliability_of(p_out, y),
        "folds": FOLDS,
    }


def cross_validate_follow(engine: Engine, rows: list[Row], weights: Weights, max_follow_wrong: float) -> dict:
    """Follow-up figures, cross-validated by conversation: per turn hit@1/hit@3 (turns with an
    answer), confident wrong (all turns), [] turns not answered confidently, repeats on retry."""
    if not rows:
        return {}
    groups = [r.group for r in rows]
    feats = [follow_features(engine, r, weights) for r in rows]
    x = np.array([f[0] for f in feats])
    hard = np.array([f[2] for f in feats])
    right = np.array([f[3] for f in feats])
    tops = [f[1] for f in feats]
    p_out = np.zeros(len(rows))
    answer_out = np.zeros(len(rows), dtype=bool)
    for test in folds_of(groups, FOLDS):
        train = np.setdiff1d(np.arange(len(rows)), test)
        if not len(test) or len(set(right[train])) < 2:
            continue
        p_inner = inner_predictions(x[train], right[train], [groups[i] for i in train])
        answer, _ = follow_thresholds(p_inner, right[train], hard[train], max_follow_wrong)
        p_out[test] = predict(fit_logistic(x[train], right[train]), x[test])
        answer_out[test] = (p_out[test] >= answer) & ~hard[test]
    expect = np.array([r.in_scope for r in rows])
    hit3 = np.array([any(matches(engine, n, r.expect) for n in f[4]) for r, f in zip(rows, feats)])
    retry = np.array([r.evidence.move == "retry" for r in rows])
    repeats = sum(
        1
        for r, top in zip(rows, tops)
        if r.kind == "retry" and top >= 0 and r.previous_top and engine.sections[top].key == r.previous_top
    )
    return {
        "n_turns": len(rows),
        "n_conversations": len(set(groups)),
        "n_with_answer": int(expect.sum()),
        "follow_hit@1": share_of(right, expect),
        "follow_hit@3": share_of(hit3, expect),
        "follow_confident": share_of(answer_out, expect),
        "follow_confident_wrong": round(float((answer_out & ~right).mean()), 4),
        "follow_empty_not_confident": share_of(~answer_out, ~expect),
        "retry_turns": int(retry.sum()),
        "repeat_on_retry": repeats,
        "follow_ece": round(ece_of(p_out, right.astype(int)), 4),
    }
