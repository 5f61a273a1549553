"""The calibration's batched ranking gives exactly the orders :func:`rank` gives, message by message."""

from __future__ import annotations

import numpy as np
import pytest

from bot.engine.calibration import Weights
from bot.engine.evidence import Evidence
from bot.engine.rank import rank
from bot.engine.scores import Scores
from bot.fit.rank_batch import RankingBatch

N = 12  # sections


def _scores(rng: np.random.Generator, with_plain: bool) -> Scores:
    # rounded values make ties, which the stable sort must break as rank does
    dense = np.round(rng.normal(size=N), 1).astype(np.float32)
    lexical = np.round(np.abs(rng.normal(size=N)) * rng.integers(0, 2, N), 1).astype(np.float32)
    plain = _scores(rng, False) if with_plain else None
    return Scores(np.zeros(4), dense, lexical, [], 0.0, {}, [], plain)


def _evidence(rng: np.random.Generator, known: np.ndarray | None) -> Evidence:
    gated = known is not None
    maybe = lambda p: rng.random() < p  # noqa: E731
    return Evidence(
        "q",
        "en",
        own=_scores(rng, gated),
        title=_scores(rng, gated) if maybe(0.5) else None,
        joined=_scores(rng, False) if maybe(0.1) else None,
        allowed=rng.random(N) < 0.85,
        preferred=(rng.random(N) < 0.2) if maybe(0.2) else None,
        not_lead=(rng.random(N) < 0.3) if maybe(0.1) else None,
        subject_share=np.round(rng.random(N) * rng.integers(0, 2, N), 2).astype(np.float32),
        precedent=rng.random(N).astype(np.float64 if maybe(0.5) else np.float32) if maybe(0.7) else None,
        learned=rng.normal(size=N).astype(np.float32) if maybe(0.6) else None,
        known=known,
        empty=maybe(0.02),
    )


@pytest.mark.parametrize("seed", range(6))
def test_batched_orders_equal_rank_for_every_weight(seed):
    rng = np.random.default_rng(seed)
    masks = [None, np.ones(N, bool), rng.random(N) < 0.6, np.zeros(N, bool)]
    evidences = [_evidence(rng, masks[int(rng.integers(0, len(masks)))]) for _ in range(150)]
    batch = RankingBatch(evidences)
    for weights in (
        Weights(0.5, 0.0, 0.0),
        Weights(0.25, 1.5, 0.75),
        Weights(1.0, 3.0, 0.5, precedent=4.0),
        Weights(0.0, 2.0, 1.5, precedent=0.5, learned=2.0),
    ):
        for k in (1, 3, 10):
            assert batch.orders(weights, k) == [rank(e, weights, k=k).order for e in evidences]
