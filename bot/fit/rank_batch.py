"""Many first questions ranked under many weights, for ``python -m bot calibrate``'s weight grid.

:func:`bot.engine.rank.rank` orders one message's sections; calibration asks that of every labelled question
under every weight of its grid (about 250,000 times a fit). :class:`RankingBatch` stacks the questions' per-section
scores into matrices once and, for each weight, does the same sums in the same order as ``rank`` over whole rows,
so every float is the one ``rank`` computes and the orders are identical (a test compares them), at a fraction of
the cost. Messages ``rank`` treats in ways that do not stack (a follow-up's joined words, a section that may not
lead) are ranked by ``rank`` itself.

>>> import numpy as np
>>> from bot.engine.calibration import Weights
>>> from bot.engine.evidence import Evidence
>>> from bot.engine.rank import rank
>>> from bot.engine.scores import Scores
>>> def scores(dense, lexical):
...     return Scores(np.zeros(2), np.array(dense, np.float32), np.array(lexical, np.float32), [], 0.0, {}, [])
>>> a = Evidence("oom", "en", own=scores([0.9, 0.1, 0.5], [0, 3, 1]), allowed=np.ones(3, bool),
...              subject_share=np.array([0, 1, 0], np.float32))
>>> b = Evidence("nan", "en", own=scores([0.2, 0.3, 0.8], [1, 0, 0]), allowed=np.array([True, True, False]),
...              subject_share=np.zeros(3, np.float32))
>>> batch = RankingBatch([a, b])
>>> batch.orders(Weights(0.5, 2.0, 0.0), k=2)
[(1, 0), (0, 1)]
>>> [rank(e, Weights(0.5, 2.0, 0.0), k=2).order for e in (a, b)]
[(1, 0), (0, 1)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bot.engine.calibration import Weights
from bot.engine.evidence import Evidence
from bot.engine.rank import rank
from bot.engine.scores import Scores, plain_of, zscore


@dataclass(frozen=True, eq=False)
class _Rows:
    """The stacked scores of messages (one row each) that have the same kinds of evidence and ``known`` mask, so
    their sums promote and round exactly as ``rank``'s do for each alone."""

    at: np.ndarray  # their positions in the batch
    own: tuple[np.ndarray, np.ndarray]  # z(dense), z(lexical)
    title: tuple[np.ndarray, np.ndarray] | None
    share: np.ndarray
    precedent: np.ndarray | None
    learned: np.ndarray | None  # z-scored
    allowed: np.ndarray
    preferred: np.ndarray | None
    known: np.ndarray | None  # None: no gate (no mask, or every section known)
    plain_own: tuple[np.ndarray, np.ndarray] | None  # the shared rule's scores, where there is a gate
    plain_title: tuple[np.ndarray, np.ndarray] | None


def _z(scores: list[Scores]) -> tuple[np.ndarray, np.ndarray]:
    return np.stack([s.z_dense for s in scores]), np.stack([s.z_lexical for s in scores])


def _gated(e: Evidence) -> bool:
    return e.known is not None and len(e.known) == len(e.allowed) and not e.known.all()


def _kind(e: Evidence) -> tuple:
    """What decides how ``rank`` sums and orders a message: rows alike in this stack exactly."""
    arrays = (e.own.dense, e.own.lexical, e.subject_share, e.precedent, e.learned)  # type: ignore[union-attr]
    return (
        len(e.allowed),
        e.title is not None,
        e.preferred is not None,
        *(None if a is None else a.dtype.str for a in arrays),
        np.asarray(e.known, dtype=bool).tobytes() if _gated(e) else None,
    )


def _stacks(at: list[int], evidences: list[Evidence]) -> _Rows:
    first = evidences[0]
    gated = _gated(first)
    return _Rows(
        at=np.array(at),
        own=_z([e.own for e in evidences]),  # type: ignore[misc]
        title=_z([e.title for e in evidences]) if first.title is not None else None,  # type: ignore[misc]
        share=np.stack([e.subject_share for e in evidences]),
        precedent=np.stack([e.precedent for e in evidences]) if first.precedent is not None else None,  # type: ignore[misc]
        learned=np.stack([zscore(e.learned, e.own.reference) for e in evidences])
        if first.learned is not None
        else None,  # type: ignore[arg-type]
        allowed=np.stack([e.allowed for e in evidences]),
        preferred=np.stack([e.preferred for e in evidences]) if first.preferred is not None else None,  # type: ignore[misc]
        known=np.asarray(first.known, dtype=bool) if gated else None,
        plain_own=_z([plain_of(e.own) for e in evidences]) if gated else None,  # type: ignore[misc]
        plain_title=_z([plain_of(e.title) for e in evidences]) if gated and first.title is not None else None,  # type: ignore[misc]
    )


def _stackable(e: Evidence) -> bool:
    return not e.empty and e.own is not None and len(e.allowed) > 0 and e.joined is None and e.not_lead is None


class RankingBatch:
    """The first ``k`` sections of many messages under any weights, as :func:`rank` orders them (hybrid mode)."""

    def __init__(self, evidences: Sequence[Evidence]) -> None:
        self.evidences = list(evidences)
        groups: dict[tuple, list[int]] = {}
        for i, e in enumerate(self.evidences):
            if _stackable(e):
                groups.setdefault(_kind(e), []).append(i)
        self._rows = [_stacks(members, [self.evidences[i] for i in members]) for members in groups.values()]
        self._alone = [i for i, e in enumerate(self.evidences) if not _stackable(e)]

    def orders(self, weights: Weights, k: int = 3) -> list[tuple[int, ...]]:
        out: list[tuple[int, ...]] = [()] * len(self.evidences)
        for i in self._alone:
            out[i] = rank(self.evidences[i], weights, k=k).order
        for rows in self._rows:
            fused = _summed(rows.own, rows.title, rows.share, rows.precedent, rows.learned, weights)
            if rows.known is not None:
                shared = _summed(rows.plain_own, rows.plain_title, rows.share, None, None, weights)  # type: ignore[arg-type]
                fused = _gate(shared, fused, rows.known)
            masked = np.where(rows.allowed, fused, -np.inf).astype(np.float32)
            order_by = masked if rows.preferred is None else np.where(rows.preferred, masked + 1e6, masked)
            # the allowed sections sort first (the others are -inf), so the first k of each row, allowed ones only,
            # are rank's first k
            ranked = np.argsort(-order_by, axis=1, kind="stable")[:, :k]
            allowed = np.take_along_axis(rows.allowed, ranked, axis=1)
            for at, top, ok in zip(rows.at, ranked, allowed):
                out[at] = tuple(int(n) for n in top[ok])
        return out


def _summed(
    own: tuple[np.ndarray, np.ndarray],
    title: tuple[np.ndarray, np.ndarray] | None,
    share: np.ndarray,
    precedent: np.ndarray | None,
    learned: np.ndarray | None,
    weights: Weights,
) -> np.ndarray:
    """``rank``'s scorers in its order (words, precedents, title, learned), row-wise: the same floats."""
    fused = own[0] + weights.lexical * own[1]
    fused = fused + weights.subject * share
    if precedent is not None and weights.precedent:
        fused = fused + weights.precedent * precedent
    if title is not None and weights.title:
        fused = fused + weights.title * (title[0] + weights.lexical * title[1])
    if learned is not None and weights.learned:
        fused = fused + weights.learned * learned
    return fused


def _gate(shared: np.ndarray, total: np.ndarray, known: np.ndarray) -> np.ndarray:
    """:func:`bot.engine.rank.gate` for many rows sharing one ``known`` mask (the same floats)."""
    if not known.any():
        return shared.astype(np.float32)
    extra = total - shared
    order = np.argsort(shared[:, known], axis=1, kind="stable")
    below = np.take_along_axis(shared[:, known], order, axis=1)
    running = np.maximum.accumulate(np.take_along_axis(extra[:, known], order, axis=1), axis=1)
    # searchsorted(below, value, side="right") is the count of ``below`` at most ``value`` (``below`` is sorted)
    position = (below[:, None, :] <= shared[:, ~known][:, :, None]).sum(axis=2)
    lowest = extra[:, known].min(axis=1)
    picked = np.take_along_axis(running, np.maximum(position - 1, 0), axis=1)
    imputed = np.where(position > 0, picked, lowest[:, None])
    out = total.astype(np.float32).copy()
    out[:, ~known] = shared[:, ~known] + imputed
    return out
