"""Documents nobody labelled: the first-turn model fitted leave-one-document-out (stored as ``unseen``).

:func:`fit_unseen` scores each document's questions with that document hidden and fits the model and its thresholds
on probabilities each from a model fitted without that document; :func:`add_unseen` refits only this part of a
stored calibration.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from bot.engine.calibration import FEATURES, Weights
from bot.engine.precedents import Precedents
from bot.engine.retrieve import Engine
from bot.fit.calibrate_models import ece_of, first_features, fit_logistic, predict, share_of
from bot.fit.calibrate_rows import Row, document_of, matches, may_vote
from bot.fit.calibrate_thresholds import unseen_thresholds


def fit_unseen(
    engine: Engine,
    rows: list[Row],
    weights: Weights,
    precedents: Precedents | None,
    policy: dict,
    progress: Callable[[int], None] | None = None,
    *,
    lazy: bool = False,
) -> tuple[dict | None, dict]:
    """The first-turn model for documents nobody labelled, fitted leave-one-document-out.

    Each document's questions (and a share of the near-domain ones) are scored with that document *hidden*
    (:attr:`Engine.hidden`: its curated phrasings ignored, its sections ranked by the shared rule,
    :func:`bot.engine.rank.gate`) and with precedents that never answered it (nor share the question's thread or
    batch), without the adapter (it learned today's sections). The model's target is "the first section answers it"
    (a wrong section from an unlabelled document is the failure to avoid); thresholds by the near-domain policy and
    at most :data:`MAX_UNSEEN_WRONG` confident wrong, on probabilities each from a model fitted without that
    document. Returns the stored model (None: fewer than two documents) and its held-out figures."""
    documents = sorted({s.source for s in engine.sections})
    if len(documents) < 2 or not rows:
        return None, {}
    doc = np.array([document_of(engine, r, documents) for r in rows])
    answers_of = [
        {engine.sections[n].source for n in range(len(engine.sections)) if matches(engine, n, r.expect)} for r in rows
    ]
    groups = np.array([r.group for r in rows])
    batches = np.array([r.batch for r in rows])
    held: list[Row | None] = [None] * len(rows)
    try:
        for document in documents:
            engine.hidden = frozenset({document})
            never_answered = np.array([document not in a for a in answers_of], dtype=bool)
            for i in np.flatnonzero(doc == document):
                r = rows[i]
                computed = r.evidence.own is not None or (lazy and not r.evidence.empty)
                evidence = engine.evidence(r.evidence.text) if computed else r.evidence
                if precedents is not None:
                    evidence = engine.with_precedents(
                        evidence, precedents, never_answered & may_vote(groups, batches, r.group, r.batch)
                    )
                held[i] = replace(r, evidence=evidence)
                if progress is not None:
                    progress(1)
    finally:
        engine.hidden = frozenset()
    feats = [first_features(engine, r, weights) for r in held]
    x = np.array([f[0] for f in feats])
    x[:, FEATURES.index("learned_top")] = 0.0  # served without the adapter
    hard = np.array([f[2] for f in feats])
    right = np.array([f[3] for f in feats])
    y = np.array([1 if r.in_scope else 0 for r in rows])
    target = (right & (y == 1)).astype(int)
    if len(set(target)) < 2:
        return None, {}
    p_cv = np.zeros(len(rows))
    for document in documents:
        test, train = doc == document, doc != document
        if test.any() and len(set(target[train])) == 2:
            p_cv[test] = predict(fit_logistic(x[train], target[train]), x[test])
    # Figures: each document's tiers from thresholds chosen on the other documents' held-out probabilities.
    confident = np.zeros(len(rows), dtype=bool)
    for document in documents:
        test, train = doc == document, doc != document
        answer, _ = unseen_thresholds(p_cv[train], y[train], right[train], hard[train], doc[train], **policy)
        confident[test] = (p_cv[test] >= answer) & ~hard[test]
    far = (x[:, FEATURES.index("margin")] <= 0) | (x[:, FEATURES.index("coverage")] <= 0)
    answer, none = unseen_thresholds(p_cv, y, right, hard, doc, **policy, far=far)
    mean, scale, model = fit_logistic(x, target)
    inscope, near = y == 1, y == 0
    figures = {
        "documents": len(documents),
        "n_in_scope": int(inscope.sum()),
        "n_out_of_scope": int(near.sum()),
        "in_scope_hit@1": share_of(right, inscope),
        "in_scope_confident_right": share_of(confident & right, inscope),
        "in_scope_confident_wrong": share_of(confident & ~right, inscope),
        "out_of_scope_confident": share_of(confident, near),
        "ece": round(ece_of(p_cv, target), 4),
    }
    stored = {
        "mean": [float(v) for v in mean],
        "scale": [float(v) for v in scale],
        "coef": [float(v) for v in model.coef_[0]],
        "intercept": float(model.intercept_[0]),
        "answer_threshold": answer,
        "none_threshold": none,
    }
    return stored, figures
