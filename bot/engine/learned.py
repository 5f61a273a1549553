"""Learned relevance: a low-rank adapter on the frozen e5 question vectors, fitted on the labelled questions.

e5 is a general-purpose embedding: it never learned which section of *this* knowledge base answers
which problem. ``python -m bot tune`` learns a small correction from the labelled first questions
(``eval/*.jsonl``): a question vector ``q`` is mapped to ``q + U (Vᵀ q)`` (rank :data:`bot.fit.learned.RANK`, the
identity at the start), normalised, and a section's learned score is its best cosine with any of the
section's retrieval keys (the same keys as dense search). One more learned score, ``none``, says how
much a question looks like those the knowledge base did not answer (near-domain questions, ``expect: []``):
the training pushes it above every section for them and below the answering section for the others.

    >>> keys = np.eye(3, dtype=np.float32)            # one key per section
    >>> adapter = Adapter.identity(3)
    >>> r = adapter.relevance(np.array([0.8, 0.6, 0.0], dtype=np.float32), keys, np.array([0, 1, 2]), 3)
    >>> [round(float(s), 2) for s in r.sections], r.none
    ([0.8, 0.6, 0.0], 0.0)

Training (:mod:`bot.fit.learned`) runs on the CPU with torch in about ten seconds of one core per thousand questions; serving
is one 384×32 product and one key-matrix product in numpy. The adapter is stored beside the
calibration (``index/calibration/<embedder>.adapter.npz``, float16), tied to the knowledge base's
sources like the calibration: a stale, missing or broken file is reported with the fix and the engine
ranks and judges without it.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bot.engine.model_checks import embedder_dimension, first_non_finite

log = logging.getLogger("bot.engine.learned")

FILE_FORMAT = 1
SUFFIX = ".adapter.npz"
FIX = "Run: python -m bot tune"


@dataclass(frozen=True)
class Relevance:
    """A question's learned score per section (cosine) and its "none" score on the same scale."""

    sections: np.ndarray
    none: float


@dataclass(frozen=True, eq=False)
class Adapter:
    """``q ↦ normalise(q + up (downᵀ q))`` and ``none = none_bias + none_weight · q'``."""

    up: np.ndarray
    down: np.ndarray
    none_weight: np.ndarray
    none_bias: float = 0.0
    embedder: str = ""
    sources_hash: str = ""
    fitted_on: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Stored as float16: hold exactly what a reload gives, so a saved adapter scores as the fitted one.
        for name in ("up", "down", "none_weight"):
            object.__setattr__(self, name, np.asarray(getattr(self, name), dtype=np.float16).astype(np.float32))
        if self.up.shape != self.down.shape or self.up.ndim != 2 or self.none_weight.shape != (self.up.shape[0],):
            raise ValueError(
                f"adapter shapes up {self.up.shape}, down {self.down.shape}, none {self.none_weight.shape}"
            )

    @classmethod
    def identity(cls, dim: int, rank: int = 1) -> Adapter:
        zero = np.zeros((dim, rank), dtype=np.float32)
        return cls(zero, zero, np.zeros(dim, dtype=np.float32))

    @property
    def dim(self) -> int:
        return self.up.shape[0]

    def map(self, vectors: np.ndarray) -> np.ndarray:
        x = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
        y = x + (x @ self.down) @ self.up.T
        return y / np.maximum(np.linalg.norm(y, axis=1, keepdims=True), 1e-9)

    def relevance(
        self, query_vector: np.ndarray, key_vectors: np.ndarray, key_sections: np.ndarray, n_sections: int
    ) -> Relevance:
        """The learned score of every section for one question (its best key), and the "none" score."""
        q = self.map(query_vector)[0]
        sims = key_vectors @ q
        sections = np.full(n_sections, -1.0, dtype=np.float32)
        np.maximum.at(sections, key_sections, sims)
        return Relevance(sections, float(self.none_bias + self.none_weight @ q))

    # ---------------------------------------------------------------- storage

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp.npz")
        header = json.dumps(
            {
                "format": FILE_FORMAT,
                "embedder": self.embedder,
                "sources_hash": self.sources_hash,
                "none_bias": self.none_bias,
                "fitted_on": self.fitted_on,
            },
            ensure_ascii=False,
        )
        np.savez_compressed(
            tmp,
            up=self.up.astype(np.float16),
            down=self.down.astype(np.float16),
            none_weight=self.none_weight.astype(np.float16),
            header=np.array(header),
        )
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> Adapter:
        """Read what :meth:`save` wrote; raises ValueError naming the file and the fix."""
        try:
            with np.load(path, allow_pickle=False) as data:
                header = json.loads(str(data["header"]))
                arrays = {name: data[name] for name in ("up", "down", "none_weight")}
            if header.get("format") != FILE_FORMAT:
                raise ValueError(f"format {header.get('format')!r}, expected {FILE_FORMAT}")
            adapter = cls(
                **arrays,
                none_bias=float(header["none_bias"]),
                embedder=str(header["embedder"]),
                sources_hash=str(header["sources_hash"]),
                fitted_on=dict(header.get("fitted_on") or {}),
            )
            # NaN or Infinity (a diverged fit, a damaged file) would send every question to one section, silently.
            if (bad := first_non_finite({**arrays, "none_bias": adapter.none_bias})) is not None:
                raise ValueError(f"{bad} is not a finite number")
            return adapter
        except Exception as exc:  # a truncated file raises BadZipFile, EOFError, zlib.error …: all mean damaged
            raise ValueError(f"{path}: learned relevance unreadable ({type(exc).__name__}: {exc}). {FIX}") from None


def adapter_path(calibration_file: Path) -> Path:
    """Where the adapter of a calibration is stored.

    >>> adapter_path(Path("index/calibration/hash-64.json")).as_posix()
    'index/calibration/hash-64.adapter.npz'
    """
    return Path(calibration_file).with_suffix(SUFFIX)


def load_for(
    path: Path, embedder_id: str, sources_hash: str, *, expected: bool = True, dim: int | None = None
) -> Adapter | None:
    """The stored adapter when it was fitted for this embedder and these documents, else None (said once, with
    the file and the fix: the engine then ranks and judges as it did without one). ``expected``: the calibration
    was fitted with an adapter, so a missing file is worth a warning (without one, nothing was lost). ``dim``: the
    embedder's dimension (default: the one its id states); an adapter of another would fail every question."""
    if not path.is_file():
        if expected:
            log.warning("%s: no learned relevance for this index; ranking and confidence without it. %s", path, FIX)
        return None
    try:
        adapter = Adapter.load(path)
    except ValueError as exc:
        log.warning("%s; ranking and confidence without it", exc)
        return None
    if adapter.embedder != embedder_id or (sources_hash and adapter.sources_hash != sources_hash):
        log.warning(
            "%s was fitted for other documents or another embedder than the index (%s, sources %s…; index %s, %s…); "
            "ranking and confidence without it. %s",
            path,
            adapter.embedder,
            adapter.sources_hash[:12],
            embedder_id,
            sources_hash[:12],
            FIX,
        )
        return None
    dim = dim if dim is not None else embedder_dimension(embedder_id)
    if dim is not None and adapter.dim != dim:
        log.warning(
            "%s maps vectors of dimension %d, the index's embedder %s has %d; ranking and confidence without it. %s",
            path,
            adapter.dim,
            embedder_id,
            dim,
            FIX,
        )
        return None
    return adapter
