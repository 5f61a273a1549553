"""Order the sections for one message: :func:`rank`, a pure function of its evidence, the weights and the
:class:`Scorer` s in :data:`SCORERS` (the message's own words, the precedents' vote, a long post's title, the
learned relevance), with :func:`gate` keeping sections without evidence of their own from being pulled past.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from bot.engine.calibration import Weights
from bot.engine.evidence import Evidence
from bot.engine.scores import Scores, plain_of, zscore


@dataclass(frozen=True, eq=False)
class Ranking:
    """Fused score per section (-inf where not allowed) and the best ``k`` allowed sections, best first."""

    scores: np.ndarray
    order: tuple[int, ...]

    def within(self, allowed: np.ndarray, preferred: np.ndarray | None = None, *, k: int = 10) -> Ranking:
        """The same scores with fewer sections allowed (a subset of those allowed before): no second fusion."""
        return _ordered(np.where(allowed, self.scores, -np.inf).astype(np.float32), allowed, preferred, k)


def _ordered(
    masked: np.ndarray, allowed: np.ndarray, preferred: np.ndarray | None, k: int, not_lead: np.ndarray | None = None
) -> Ranking:
    """The allowed sections best first (``preferred`` ones before the rest); a ``not_lead`` section may follow but
    not lead: the best of the others goes first.

    >>> _ordered(np.array([3.0, 2.0, 1.0]), np.ones(3, bool), None, 3, np.array([True, False, False])).order
    (1, 0, 2)
    """
    order_by = masked if preferred is None else np.where(preferred, masked + 1e6, masked)
    ranked = np.argsort(-order_by, kind="stable")
    ranked = ranked[allowed[ranked]]
    if not_lead is not None and len(ranked) and not_lead[ranked[0]]:
        leads = np.flatnonzero(~not_lead[ranked])
        if len(leads):
            ranked = np.concatenate(([ranked[leads[0]]], np.delete(ranked, leads[0])))
    return Ranking(masked, tuple(int(n) for n in ranked[:k]))


def fuse(dense: np.ndarray, lexical: np.ndarray, lexical_weight: float = 0.5) -> np.ndarray:
    """z(dense) + lexical_weight * z(lexical), per section.

    >>> fuse(np.array([0.9, 0.8, 0.7]), np.array([0.0, 0.0, 9.0])).round(2)
    array([ 0.87, -0.35, -0.52], dtype=float32)
    """
    return zscore(dense) + lexical_weight * zscore(lexical)


class Scorer(Protocol):
    """One kind of evidence for ranking: a per-section score added to the message's own fused score, or None
    when it has nothing to say about this message (see :data:`SCORERS`). A learned scorer is one more of these."""

    def __call__(self, evidence: Evidence, weights: Weights, mode: str) -> np.ndarray | None: ...


def _fused(scores: Scores, evidence: Evidence, weights: Weights, mode: str, *, subjects: bool = True) -> np.ndarray:
    if mode == "dense":
        return scores.z_dense
    if mode == "bm25":
        return scores.z_lexical
    out = scores.fused(weights.lexical)
    return out + weights.subject * evidence.subject_share if subjects else out


def words_scorer(evidence: Evidence, weights: Weights, mode: str) -> np.ndarray | None:
    """Dense and BM25 over the message's own search text, plus the share of its subjects a section covers."""
    return _fused(evidence.own, evidence, weights, mode)


def precedent_scorer(evidence: Evidence, weights: Weights, mode: str) -> np.ndarray | None:
    """Labelled real questions like this one were answered by these sections."""
    if evidence.precedent is None or not weights.precedent or mode != "hybrid":
        return None
    return weights.precedent * evidence.precedent


def title_scorer(evidence: Evidence, weights: Weights, mode: str) -> np.ndarray | None:
    """The first line of a long post says what it is about; the body dilutes it."""
    if evidence.title is None or not weights.title or mode != "hybrid":
        return None
    return weights.title * _fused(evidence.title, evidence, weights, mode, subjects=False)


def learned_scorer(evidence: Evidence, weights: Weights, mode: str) -> np.ndarray | None:
    """What the labelled questions taught about which section answers which question (bot.engine.learned)."""
    if evidence.learned is None or not weights.learned or mode != "hybrid":
        return None
    return weights.learned * zscore(evidence.learned, evidence.own.reference if evidence.own is not None else None)


# The scorers of the message's own words, summed in this order (the first gives the base score).
SCORERS: tuple[Scorer, ...] = (words_scorer, precedent_scorer, title_scorer, learned_scorer)


def rank(
    evidence: Evidence, weights: Weights, *, mode: str = "hybrid", k: int = 10, scorers: Sequence[Scorer] = SCORERS
) -> Ranking:
    """Order the sections for one message: a pure function of the evidence, the weights and the scorers.

    hybrid: ``own_weight * (fuse(own) + w_subj share + w_prec precedents' vote + w_title fuse(title)
    + w_learned z(learned))
    + fuse(joined) + w_subj share``,
    the ``preferred`` sections (if any) first;
    "dense" or "bm25" use one kind of evidence only (baselines).
    """
    if mode not in ("hybrid", "dense", "bm25"):
        raise ValueError(f"mode must be 'hybrid', 'dense' or 'bm25', not {mode!r}")
    if evidence.empty or evidence.own is None or not len(evidence.allowed):
        return Ranking(np.zeros(0, dtype=np.float32), ())
    fused = _combined(evidence, weights, mode, scorers)
    known = evidence.known
    if mode == "hybrid" and known is not None and len(known) == len(fused) and not known.all():
        # Some documents have no labels or curated phrasings: the shared rule (each section's own text, the
        # question's subjects) ranks them; the others' own evidence adds only where it cannot pull past them.
        shared = _combined(_shared_only(evidence), weights, mode, scorers)
        boost = evidence.beside
        if boost is not None and boost.lexical is not None and len(boost.reach) == len(shared):
            # The company's pages fuse dense and BM25 as their own labels chose (bot.engine.beside).
            own = _combined(_shared_only(evidence), replace(weights, lexical=boost.lexical), mode, scorers)
            shared = np.where(boost.reach & ~known, own, shared)
        fused = gate(shared, fused, known)
    if mode == "hybrid" and evidence.beside is not None and len(evidence.beside.vote) == len(fused):
        # The company's labels' vote for its own pages (bot.engine.beside): only their sections, only upward.
        fused = fused + evidence.beside.vote
    masked = np.where(evidence.allowed, fused, -np.inf).astype(np.float32)
    return _ordered(masked, evidence.allowed, evidence.preferred, k, evidence.not_lead)


def _combined(evidence: Evidence, weights: Weights, mode: str, scorers: Sequence[Scorer]) -> np.ndarray:
    """The scorers summed, and a follow-up's case words joined with them."""
    fused: np.ndarray | None = None
    for scorer in scorers:
        score = scorer(evidence, weights, mode)
        if score is not None:
            fused = score if fused is None else fused + score
    if fused is None:
        fused = np.zeros(len(evidence.allowed), dtype=np.float32)
    if evidence.joined is not None:
        # A follow-up or retry: the case's words joined with the message's, against the message's own.
        fused = evidence.own_weight * fused + _fused(evidence.joined, evidence, weights, mode)
    return fused


def _shared_only(evidence: Evidence) -> Evidence:
    """The evidence every section has alike: its own text's scores, the question's subjects; no precedents, no
    adapter, no curated phrasings."""
    return replace(
        evidence,
        own=plain_of(evidence.own),
        title=plain_of(evidence.title),
        joined=plain_of(evidence.joined),
        precedent=None,
        learned=None,
        known=None,
    )


def gate(shared: np.ndarray, total: np.ndarray, known: np.ndarray) -> np.ndarray:
    """``total`` where per-section evidence (curated phrasings, precedents, the adapter) exists; a section without it
    (``known`` false) gets its ``shared`` score plus the largest extra (``total - shared``) of any known section the
    shared rule puts no higher than it — what a section like it would get — so no known section's own evidence
    lifts it past an unknown one the shared rule put first, and the unknown ones keep their order.

    >>> gate(np.array([2.0, 1.0, 0.0]), np.array([2.0, 4.0, 0.5]), np.array([False, True, True])).tolist()
    [5.0, 4.0, 0.5]
    >>> gate(np.array([2.0, 1.0]), np.array([2.5, 9.0]), np.array([False, False])).tolist()
    [2.0, 1.0]
    """
    if not known.any():
        return shared.astype(np.float32)
    extra = total - shared
    order = np.argsort(shared[known], kind="stable")
    below = shared[known][order]
    running = np.maximum.accumulate(extra[known][order])
    position = np.searchsorted(below, shared[~known], side="right")
    imputed = np.where(position > 0, running[np.maximum(position - 1, 0)], float(extra[known].min()))
    out = total.astype(np.float32).copy()
    out[~known] = shared[~known] + imputed
    return out
