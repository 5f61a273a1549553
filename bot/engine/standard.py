"""Scores standardised to one scale (:func:`zscore`): apart from :mod:`bot.engine.scores` so that the build's
self-test (:mod:`bot.engine.selftest`, run from :func:`bot.engine.facts.build`) standardises as ranking does without
importing the catalog, which reads the facts.
"""

from __future__ import annotations

import numpy as np


def zscore(values: np.ndarray, reference: np.ndarray | None = None, basis: np.ndarray | None = None) -> np.ndarray:
    """``values`` standardised by the mean and spread of the ``reference`` sections (default: all). The engine's
    reference is the sections of the documents its calibration was fitted on: a page added since moves none of
    their scores (the weights were fitted on these statistics), and is scored on the same scale.

    ``basis``: the values the mean and spread are taken from, when they differ from ``values`` (a changed document's
    sections are scored on their own text but counted as the fit counted them, with their curated phrasings).

    >>> zscore(np.array([1.0, 3.0, 100.0]), np.array([True, True, False])).tolist()
    [-1.0, 1.0, 98.0]
    >>> zscore(np.array([1.0, 3.0]), basis=np.array([1.0, 5.0])).tolist()
    [-1.0, 0.0]
    """
    basis = values if basis is None or len(basis) != len(values) else basis
    if reference is not None and reference.any() and len(reference) == len(values):
        basis = basis[reference]
    spread = float(basis.std()) if len(basis) else 0.0
    if spread < 1e-9:
        return np.zeros_like(values, dtype=np.float32)
    return ((values - basis.mean()) / spread).astype(np.float32)
