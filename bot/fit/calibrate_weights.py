"""The ranking weights ``python -m bot calibrate`` chooses, and the adapters it fits without each batch.

A grid search on first turns: the words' weights (BM25, subjects, title), then the labelled precedents' vote
(weight, ``k``, temperature), then the learned relevance's weight — best hit@1, then hit@3, ties towards smaller
weights. Every score a row is ranked with comes from evidence that never saw its thread or gathering batch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from bot.engine.calibration import Weights
from bot.engine.learned import Adapter
from bot.engine.precedents import Precedents
from bot.engine.retrieve import Engine
from bot.fit import learned
from bot.fit.calibrate_rows import Row, answers_of, questions_of, voted
from bot.fit.rank_batch import RankingBatch

LEXICAL_GRID = (0.0, 0.25, 0.5, 0.75, 1.0)
SUBJECT_GRID = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0)
TITLE_GRID = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5)
PRECEDENT_GRID = (0.0, 0.5, 1.0, 2.0, 4.0)
PRECEDENT_K_GRID = (5, 10)
PRECEDENT_TEMPERATURE_GRID = (0.02, 0.05)
LEARNED_GRID = (0.0, 0.5, 1.0, 2.0, 4.0)
FOLDS = 5
FIT_WORKERS = 2  # adapters fitted at once (one core each)


def fit_adapter(engine: Engine, vectors: np.ndarray, answers: list[list[int]], **kwargs) -> Adapter:
    """An adapter on these questions over the engine's knowledge base (its retrieval keys)."""
    keys, owners = engine.key_vectors
    return learned.fit(vectors, answers, keys, owners, len(engine.sections), **kwargs)


def learned_without_batch(
    engine: Engine, rows: list[Row], fit: Callable[..., Adapter] = fit_adapter
) -> tuple[list[Row], dict[str, Adapter]]:
    """``rows`` with learned scores from adapters that never saw their gathering batch: one adapter per batch,
    fitted on every other batch's questions (as the precedents never vote within a batch, :func:`may_vote`).
    Returns the rows and the adapter of each batch (the conversations' later turns are replayed with it)."""
    vectors, answers = questions_of(engine, rows)
    batches = np.array([r.batch for r in rows])
    from concurrent.futures import ThreadPoolExecutor

    def without(batch: str) -> Adapter | None:
        others = np.flatnonzero(batches != batch)
        return fit(engine, vectors[others], [answers[i] for i in others]) if len(others) else None

    # Each fit trains on one core (torch releases the GIL): two at a time on a two-core host.
    with ThreadPoolExecutor(max_workers=FIT_WORKERS) as pool:
        fitted = dict(zip(sorted(set(batches)), pool.map(without, sorted(set(batches)))))
    adapters: dict[str, Adapter] = {batch: a for batch, a in fitted.items() if a is not None}
    return [replace(r, evidence=engine.with_learned(r.evidence, adapters.get(r.batch))) for r in rows], adapters


def _ranking_quality(engine: Engine, rows: list[Row]) -> Callable[[Weights], tuple[float, float]]:
    """hit@1 and hit@3 of the in-scope ``rows`` under a weight: their scores stacked once
    (:class:`bot.fit.rank_batch.RankingBatch`, the same orders as :func:`rank`) for the grid's many weights."""
    scored = [r for r in rows if r.in_scope]
    batch = RankingBatch([r.evidence for r in scored])
    answers = [answers_of(engine, r.expect) for r in scored]
    n = max(len(scored), 1)

    def quality(weights: Weights) -> tuple[float, float]:
        hit1 = hit3 = 0
        for order, answer in zip(batch.orders(weights, k=3), answers):
            ok = [m in answer for m in order]
            hit1 += bool(ok and ok[0])
            hit3 += any(ok)
        return hit1 / n, hit3 / n

    return quality


def choose_weights(
    engine: Engine, rows: list[Row], precedents: Precedents | None = None, pool: np.ndarray | None = None
) -> tuple[Weights, Precedents | None]:
    """Best hit@1 (then hit@3) on the ``pool`` rows (default: all), ties broken towards smaller weights
    (simpler ranking): first the words' weights, then the precedents' weight, ``k`` and temperature, the
    precedents drawn from the pool without the question's own thread or batch (:func:`voted`)."""
    scored = [r for n, r in enumerate(rows) if pool is None or pool[n]]
    best, best_key = Weights(0.5, 0.0, 0.0), (-1.0, -1.0)
    quality = _ranking_quality(engine, scored)
    for tw in TITLE_GRID:
        for lw in LEXICAL_GRID:
            for sw in SUBJECT_GRID:
                weights = Weights(lw, sw, tw)
                key = quality(weights)
                if key > best_key:
                    best, best_key = weights, key
    chosen = precedents
    for k in PRECEDENT_K_GRID if precedents is not None else ():
        for temperature in PRECEDENT_TEMPERATURE_GRID:
            candidate = precedents.with_params(k, temperature)
            with_votes = [r for n, r in enumerate(voted(engine, rows, candidate, pool)) if pool is None or pool[n]]
            quality = _ranking_quality(engine, with_votes)
            for pw in PRECEDENT_GRID[1:]:
                weights = replace(best, precedent=pw)
                key = quality(weights)
                if key > best_key:
                    best, best_key, chosen = weights, key, candidate
    if any(r.evidence.learned is not None for r in scored):
        # The learned relevance (each row's from an adapter fitted without its batch, :func:`learned_without_batch`).
        with_votes = [r for n, r in enumerate(voted(engine, rows, chosen, pool)) if pool is None or pool[n]]
        quality = _ranking_quality(engine, with_votes)
        base = best
        for lw in LEARNED_GRID[1:]:
            weights = replace(base, learned=lw)
            key = quality(weights)
            if key > best_key:
                best, best_key = weights, key
    return best, chosen
