"""The confidence models' inputs and fits: features of a row's first section, logistic regressions, folds, ECE.

The first-turn and follow-up models are standardised logistic regressions (:func:`fit_logistic`); what a row contributes is
the serving engine's features of the section its ranking puts first (:func:`first_features`, :func:`follow_features`).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import replace

import numpy as np

from bot.engine.calibration import FEATURES, FOLLOW_FEATURES, Calibration, Logistic, Weights
from bot.engine.rank import rank
from bot.engine.retrieve import Engine
from bot.fit.calibrate_rows import Row, matches
from bot.fit.calibrate_thresholds import follow_thresholds

FOLDS = 5


def first_features(engine: Engine, row: Row, weights: Weights) -> tuple[list[float], int, bool, bool]:
    """(feature vector, top section, blocked, top is right) for a first turn."""
    order = rank(row.evidence, weights).order
    if not order:
        return [0.0] * len(FEATURES), -1, True, False
    top = order[0]
    feats = engine.features(row.evidence, row.evidence.own, top)
    # NaN: no adapter (a constant column the model gives no weight).
    vector = [0.0 if math.isnan(feats[name]) else feats[name] for name in FEATURES]
    return vector, top, engine.blocked(row.evidence, top), matches(engine, top, row.expect)


def follow_features(engine: Engine, row: Row, weights: Weights) -> tuple[list[float], int, bool, bool, list[int]]:
    """(feature vector, top section, blocked, top is right, first three) for a follow-up turn."""
    order = rank(row.evidence, weights).order
    if not order:
        return [0.0] * len(FOLLOW_FEATURES), -1, True, False, []
    top = order[0]
    feats = engine.follow_features(row.evidence, top)
    return (
        [feats[name] for name in FOLLOW_FEATURES],
        top,
        engine.blocked(row.evidence, top),
        matches(engine, top, row.expect),
        list(order[:3]),
    )


def fit_logistic(x: np.ndarray, y: np.ndarray):
    from sklearn.linear_model import LogisticRegression

    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    model = LogisticRegression(max_iter=2000)
    model.fit((x - mean) / scale, y)
    return mean, scale, model


def predict(fitted, x: np.ndarray) -> np.ndarray:
    mean, scale, model = fitted
    return model.predict_proba((x - mean) / scale)[:, 1]


def tiers_of(p: np.ndarray, hard: np.ndarray, x: np.ndarray, answer: float, none: float) -> list[str]:
    model = replace(Calibration.default(), answer_threshold=answer, none_threshold=none)
    margin, coverage = x[:, FEATURES.index("margin")], x[:, FEATURES.index("coverage")]
    return [
        model.tier(float(q), hard_uncovered=bool(h), margin=float(m), coverage=float(c))
        for q, h, m, c in zip(p, hard, margin, coverage)
    ]


def ece_of(p: np.ndarray, y: np.ndarray, bins: int = 10) -> float:
    edges = np.linspace(0, 1, bins + 1)
    total = 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        inside = (p >= lo) & ((p < hi) if hi < 1 else (p <= hi))
        if inside.any():
            total += inside.sum() / len(p) * abs(p[inside].mean() - y[inside].mean())
    return float(total)


def reliability_of(p: np.ndarray, y: np.ndarray, bins: int = 10) -> list[dict]:
    out = []
    edges = np.linspace(0, 1, bins + 1)
    for lo, hi in zip(edges[:-1], edges[1:]):
        inside = (p >= lo) & ((p < hi) if hi < 1 else (p <= hi))
        if inside.any():
            out.append(
                {
                    "bin": [round(float(lo), 2), round(float(hi), 2)],
                    "n": int(inside.sum()),
                    "mean_p": round(float(p[inside].mean()), 4),
                    "share_in_scope": round(float(y[inside].mean()), 4),
                }
            )
    return out


def folds_of(groups: list[str], k: int) -> list[np.ndarray]:
    """Group k-fold: every thread's cases in one fold (deterministic: by hash of the thread)."""
    fold_of = {g: int(hashlib.sha1(g.encode()).hexdigest(), 16) % k for g in set(groups)}
    ids = np.array([fold_of[g] for g in groups])
    return [np.where(ids == f)[0] for f in range(k)]


def share_of(mask: np.ndarray, among: np.ndarray) -> float | None:
    return round(float(mask[among].mean()), 4) if among.any() else None


def fit_follow(engine: Engine, rows: list[Row], weights: Weights, max_follow_wrong: float) -> Logistic | None:
    """The follow-up model on every follow-up turn, thresholds from cross-validated probabilities."""
    feats = [follow_features(engine, r, weights) for r in rows]
    if not feats:
        return None
    x = np.array([f[0] for f in feats])
    hard = np.array([f[2] for f in feats])
    right = np.array([f[3] for f in feats])
    if len(set(right)) < 2:
        return None
    p_cv = np.zeros(len(rows))
    for test in folds_of([r.group for r in rows], FOLDS):
        train = np.setdiff1d(np.arange(len(rows)), test)
        if len(test) and len(set(right[train])) == 2:
            p_cv[test] = predict(fit_logistic(x[train], right[train]), x[test])
    answer, none = follow_thresholds(p_cv, right, hard, max_follow_wrong)
    mean, scale, model = fit_logistic(x, right)
    return Logistic(
        FOLLOW_FEATURES,
        tuple(float(v) for v in mean),
        tuple(float(v) for v in scale),
        tuple(float(v) for v in model.coef_[0]),
        float(model.intercept_[0]),
        answer,
        none,
    )
