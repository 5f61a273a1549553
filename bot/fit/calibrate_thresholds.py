"""The tier thresholds chosen by policy from cross-validated probabilities (first turns, follow-ups, unseen documents).

Pure functions of arrays: probabilities, labels, blocked rows, batches or documents, and the policy's shares.
"""

from __future__ import annotations

import numpy as np

# A batch's near-domain rate counts in the thresholds' batch average only from this many near questions on: below
# it one question moves the batch's rate by more than the policy's whole margin.
MIN_BATCH_NEAR = 10
# Documents nobody labelled: at most this share of their answerable questions answered confidently with the wrong
# section (the thresholds of :func:`fit_unseen`; a wrong confident answer costs more than a tentative right one).
MAX_UNSEEN_WRONG = 0.03


def fit_thresholds(
    p: np.ndarray,
    y: np.ndarray,
    hard: np.ndarray,
    max_near_confident: float,
    max_inscope_none: float,
    batches: np.ndarray | None = None,
) -> tuple[float, float]:
    """Answer threshold: the lowest that keeps out-of-scope confident answers within policy, pooled and on
    average over the gathering batches (each with at least ``MIN_BATCH_NEAR`` near-domain questions).
    None threshold: the highest that keeps in-scope "none" within policy (and below the answer threshold).

    The promise is about a batch gathered after fitting. Each gathering batch is one such batch, so the mean of
    their rates estimates the next one's; the pooled rate is ruled by the largest, easiest batch (178 near
    questions at 1 % while the batches gathered later ran at 4-37 %: pooled 8 %, a fresh batch 14 %).

    >>> p = np.array([0.9, 0.8, 0.7, 0.6, 0.5] + [0.55] * 2 + [0.1] * 8 + [0.1] * 30)
    >>> y = np.array([1] * 5 + [0] * 40)
    >>> b = np.array(["a"] * 15 + ["b"] * 30)
    >>> fit_thresholds(p, y, np.zeros(45, bool), 0.06, 0.0)[0]  # pooled: 2 of 40 near above 0.55 is within 6 %
    0.5
    >>> fit_thresholds(p, y, np.zeros(45, bool), 0.06, 0.0, b)[0]  # batches: (2/10 + 0/30) / 2 = 10 % is not
    0.6
    """
    near = (y == 0) & ~hard
    every = np.ones(len(p), dtype=bool)
    own = [] if batches is None else [batches == b for b in np.unique(batches)]
    own = [s for s in own if ((y == 0) & s).sum() >= MIN_BATCH_NEAR]

    def share(t: float, among: np.ndarray) -> float:
        return (near & among & (p >= t)).sum() / max(int(((y == 0) & among).sum()), 1)

    candidates = np.unique(np.concatenate([p, [0.0, 1.0]]))
    answer = 1.0
    for t in candidates:
        if share(t, every) <= max_near_confident and (
            not own or np.mean([share(t, s) for s in own]) <= max_near_confident
        ):
            answer = float(t)
            break
    inscope = np.sort(p[y == 1])
    allowed = int(np.floor(max_inscope_none * len(inscope)))
    none = float(inscope[allowed]) if len(inscope) > allowed else 0.0
    return answer, min(none, answer)


def follow_thresholds(
    p: np.ndarray, right: np.ndarray, hard: np.ndarray, max_follow_wrong: float
) -> tuple[float, float]:
    """Answer threshold: the lowest that keeps confident wrong follow-up turns within policy; none: never
    below the lowest right one (a follow-up with any evidence is shown as tentative, not as nothing)."""
    n = max(len(p), 1)
    candidates = np.unique(np.concatenate([p, [0.0, 1.0]]))
    answer = 1.0
    for t in candidates:
        if ((p >= t) & ~right & ~hard).sum() / n <= max_follow_wrong:
            answer = float(t)
            break
    none = float(p[right].min()) if right.any() else 0.0
    return answer, min(none, answer)


def unseen_thresholds(
    p: np.ndarray,
    y: np.ndarray,
    right: np.ndarray,
    hard: np.ndarray,
    documents: np.ndarray,
    max_near_confident: float,
    max_inscope_none: float,
    max_wrong_confident: float = MAX_UNSEEN_WRONG,
    far: np.ndarray | None = None,
) -> tuple[float, float]:
    """Answer threshold for documents nobody labelled: the lowest that keeps near-domain questions answered
    confidently within policy (pooled and on the average held-out document) and in-scope questions answered
    confidently with the wrong section within ``max_wrong_confident``; none: the highest that shows at most
    ``max_inscope_none`` of the answerable questions as "none" among those ``far`` from everything (margin <= 0 or
    no known word: the other condition of "none"; default all).

    >>> p = np.array([0.9, 0.8, 0.7, 0.6, 0.2, 0.1]); y = np.array([1, 1, 1, 0, 0, 0])
    >>> right = np.array([True, False, True, False, False, False]); z = np.zeros(6, bool); d = np.array(["a"] * 6)
    >>> unseen_thresholds(p, y, right, z, d, 0.34, 0.0, 0.34)[0], unseen_thresholds(p, y, right, z, d, 0.34, 0.0, 0.0)[0]
    (0.6, 0.9)
    """
    near = (y == 0) & ~hard
    wrong = (y == 1) & ~right & ~hard
    groups = [documents == d for d in np.unique(documents)]
    groups = [g for g in groups if ((y == 0) & g).sum() >= MIN_BATCH_NEAR]

    def near_share(t: float, among: np.ndarray) -> float:
        return (near & among & (p >= t)).sum() / max(int(((y == 0) & among).sum()), 1)

    every = np.ones(len(p), dtype=bool)
    answer = 1.0
    for t in np.unique(np.concatenate([p, [0.0, 1.0]])):
        if (
            near_share(t, every) <= max_near_confident
            and (not groups or np.mean([near_share(t, g) for g in groups]) <= max_near_confident)
            and (wrong & (p >= t)).sum() / max(int((y == 1).sum()), 1) <= max_wrong_confident
        ):
            answer = float(t)
            break
    # "none" needs nothing close as well (Calibration.tier): only such answerable questions can be lost to it.
    lost = np.sort(p[(y == 1) & (far if far is not None else True)])
    allowed = int(np.floor(max_inscope_none * int((y == 1).sum())))
    none = float(lost[allowed]) if len(lost) > allowed else 1.0
    return answer, min(none, answer)
