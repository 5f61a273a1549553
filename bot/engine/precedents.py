"""Precedents: real questions already labelled, as evidence for a new one.

``python -m bot calibrate`` reads labelled first questions from public threads (``eval/*.jsonl``):
each one either names the sections that answer it or says the knowledge base has none. Those
questions are kept, as their e5 vectors and answers, beside the calibration. A new question is
compared with them: its ``k`` nearest precedents vote, each by ``exp(cosine / temperature)``
relative to the nearest one, for the sections that answered them; and the question *leans* towards
being answered by how much closer it is to the nearest answered precedent than to the nearest one
the knowledge base did not answer. A question like many that were answered by "显存不足" leans
towards that section; one like the Jetson and Docker questions the knowledge base never answered
is less likely to be answered now; an off-topic one is far from both and leans neither way.

    >>> import numpy as np
    >>> p = Precedents(np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]], dtype=np.float32),
    ...                (("a.md#oom",), ("a.md#oom", "a.md#nan"), ()), k=2, temperature=0.05)
    >>> vote = p.vote(np.array([1.0, 0.0], dtype=np.float32), {"a.md#oom": 0, "a.md#nan": 1, "b.md#x": 2})
    >>> [round(float(v), 3) for v in vote.sections], round(vote.lean, 3)
    ([0.991, 0.009, 0.0], 1.0)
    >>> far = p.vote(np.array([0.0, 1.0], dtype=np.float32), {"a.md#oom": 0, "a.md#nan": 1, "b.md#x": 2})
    >>> [round(float(v), 3) for v in far.sections], round(far.lean, 3)
    ([0.0, 0.0, 0.0], -0.4)

A precedent answered by several sections gives each an equal part of its vote. Nothing here is
typed in by hand: ``k`` and ``temperature`` are chosen by ``bot calibrate`` with the ranking
weights, and cross-validation builds precedents from the training threads only (``among``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bot.engine.model_checks import first_non_finite

FILE_FORMAT = 1


def as_stored(vectors: np.ndarray) -> np.ndarray:
    """Vectors as a saved file gives them back (float16, read as float32).

    >>> as_stored(np.array([0.1], dtype=np.float32)).tolist()
    [0.0999755859375]
    """
    return np.asarray(vectors, dtype=np.float16).astype(np.float32)


@dataclass(frozen=True)
class Vote:
    """Per section, the nearest precedents' weighted vote; and the lean: how much closer the question is to
    the nearest precedent the knowledge base answered than to the nearest one it did not (cosine difference;
    about 0 for a question far from both, such as an off-topic one)."""

    sections: np.ndarray
    lean: float


@dataclass(frozen=True, eq=False)
class Precedents:
    """Labelled questions (unit vectors) and the section keys that answered each (empty: none did)."""

    vectors: np.ndarray
    answers: tuple[tuple[str, ...], ...]
    k: int = 10
    temperature: float = 0.05

    def __post_init__(self) -> None:
        # Stored as float16: hold exactly what a reload gives, so a saved model equals the fitted one.
        object.__setattr__(self, "vectors", as_stored(self.vectors))
        # Which precedents the knowledge base answered: asked of every vote, so found once.
        object.__setattr__(self, "_answered", np.array([bool(keys) for keys in self.answers], dtype=bool))
        if len(self.vectors) != len(self.answers):
            raise ValueError(f"{len(self.vectors)} precedent vectors for {len(self.answers)} answers")
        if self.k < 1 or self.temperature <= 0:
            raise ValueError(
                f"precedents need k >= 1 and temperature > 0, not k={self.k} temperature={self.temperature}"
            )

    def __len__(self) -> int:
        return len(self.answers)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Precedents)
            and (self.answers, self.k, self.temperature) == (other.answers, other.k, other.temperature)
            and np.array_equal(self.vectors, other.vectors)
        )

    __hash__ = None  # type: ignore[assignment]  # mutable arrays inside

    def with_params(self, k: int, temperature: float) -> Precedents:
        return Precedents(self.vectors, self.answers, k, temperature)

    def subset(self, keep: np.ndarray) -> Precedents:
        """Only the precedents where ``keep`` is true (a conversation replayed without its own thread)."""
        rows = np.flatnonzero(keep)
        return Precedents(self.vectors[rows], tuple(self.answers[i] for i in rows), self.k, self.temperature)

    def vote(self, query_vector: np.ndarray, section_index: dict[str, int], among: np.ndarray | None = None) -> Vote:
        """The vote of the ``k`` precedents nearest to ``query_vector`` (``among``: only these may vote)."""
        votes = np.zeros(len(section_index), dtype=np.float32)
        candidates = np.arange(len(self.answers)) if among is None else np.flatnonzero(among)
        if not len(candidates):
            return Vote(votes, 0.0)
        query = np.asarray(query_vector, dtype=np.float32)
        query = query / (float(np.linalg.norm(query)) or 1.0)
        sims = (self.vectors @ query)[candidates]  # not vectors[candidates] @ query: no copy of the matrix per vote
        nearest = np.argsort(-sims, kind="stable")[: self.k]
        weights = np.exp((sims[nearest] - sims[nearest].max()) / self.temperature)
        weights = weights / weights.sum()
        for weight, row in zip(weights, candidates[nearest]):
            keys = [section_index[key] for key in self.answers[row] if key in section_index]
            if keys:
                votes[keys] += float(weight) / len(keys)
        answered = self._answered[candidates]
        lean = float(sims[answered].max() - sims[~answered].max()) if answered.any() and (~answered).any() else 0.0
        return Vote(votes, lean)

    # ---------------------------------------------------------------- storage

    def save(self, path: Path) -> None:
        """Vectors (float16) and answers in one ``.npz``, written atomically."""
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp.npz")
        header = json.dumps(
            {
                "format": FILE_FORMAT,
                "k": self.k,
                "temperature": self.temperature,
                "answers": [list(a) for a in self.answers],
            },
            ensure_ascii=False,
        )
        np.savez_compressed(tmp, vectors=self.vectors.astype(np.float16), header=np.array(header))
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path, dim: int | None = None) -> Precedents:
        """Read what :meth:`save` wrote; raises ValueError naming the file and the fix. ``dim``: the embedder's
        dimension, which the vectors must have (another one would fail every vote)."""
        fix = "Run: python -m bot calibrate"
        try:
            with np.load(path, allow_pickle=False) as data:
                header = json.loads(str(data["header"]))
                vectors = data["vectors"].astype(np.float32)
            if header.get("format") != FILE_FORMAT:
                raise ValueError(f"format {header.get('format')!r}, expected {FILE_FORMAT}")
            answers = tuple(tuple(str(key) for key in keys) for keys in header["answers"])
            precedents = cls(vectors, answers, int(header["k"]), float(header["temperature"]))
            if vectors.ndim != 2 or (dim is not None and len(vectors) and vectors.shape[1] != dim):
                raise ValueError(f"vectors of shape {vectors.shape}, expected (n, {dim}) for this embedder")
            if (
                bad := first_non_finite({"vectors": precedents.vectors, "temperature": precedents.temperature})
            ) is not None:
                raise ValueError(f"{bad} is not a finite number")
            return precedents
        except Exception as exc:  # a truncated file raises BadZipFile, EOFError, zlib.error …: all mean damaged
            raise ValueError(f"{path}: precedents unreadable ({type(exc).__name__}: {exc}). {fix}") from None
