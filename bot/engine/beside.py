"""A company's labels beside the fit (issue 42, item 3: labels only help).

The calibration and the adapter are fitted on the shipped labels, hundreds per seed document; a company's twenty
labels for its own pages would weigh nothing among them, and a refit moves every seed answer too. So ``python -m
bot tune`` leaves that fit alone (the company's pages stay documents nobody labelled for it, ``Engine.hidden``) and
fits this beside it: the company's labelled questions as precedents for its own documents only, each document
weighing as much as any other whatever the seeds' count, with one weight for their vote chosen on the company's
labels — cross-validated by document (:mod:`bot.fit.beside`). A document whose fold does not improve keeps the
untuned ranking: it is left out of :attr:`Beside.documents`, and the vote never reaches its sections.

Served: a new question's vote of the nearest company labels, times :attr:`Beside.weight`, is added to the ranking
score of the sections of :attr:`Beside.documents` still as labelled (same content hash), after the gate that keeps
the seeds' own evidence from pulling past them (:func:`bot.engine.rank.rank`); and the shared rule those sections
are ranked by fuses dense and BM25 with the lexical weight fitted on the company's labels (:attr:`Beside.lexical`),
not the one fitted on the seeds' hundreds. It is stored beside the
calibration (``index/calibration/<embedder>.beside.npz`` and ``.beside.json``); a missing file means no labels.

    >>> from bot.engine.precedents import Precedents
    >>> p = Precedents(np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32), (("c.md#a",), ("s.md#x",)), k=2)
    >>> b = Beside(p, weight=2.0, documents={"c.md": "h1"})
    >>> boost = b.boost(np.array([1.0, 0.0], dtype=np.float32), {"c.md#a": 0, "s.md#x": 1}, ["c.md", "s.md"],
    ...                 {"c.md": "h1", "s.md": "h2"})
    >>> [round(float(v), 2) for v in boost.vote], boost.reach.tolist()
    ([2.0, 0.0], [True, False])
    >>> b.boost(np.array([1.0, 0.0], dtype=np.float32), {"c.md#a": 0}, ["c.md"], {"c.md": "edited"}) is None
    True
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bot.engine.precedents import Precedents

log = logging.getLogger("bot.engine.beside")

SUFFIX = ".beside"  # + ".npz" (the labelled questions) and ".json" (weights, documents, figures)
FORMAT = 1
FIX = "Run: python -m bot tune"


def beside_files(calibration: Path) -> tuple[Path, Path]:
    """``index/calibration/<embedder>.beside.json`` and ``.beside.npz`` for the calibration file ``<embedder>.json``.

    >>> [p.name for p in beside_files(Path("index/calibration/e.json"))]
    ['e.beside.json', 'e.beside.npz']
    """
    return calibration.with_name(calibration.stem + SUFFIX + ".json"), calibration.with_name(
        calibration.stem + SUFFIX + ".npz"
    )


@dataclass(frozen=True, eq=False)
class Boost:
    """What the company's labels add to one new question's ranking (:func:`bot.engine.rank.rank`): ``vote`` per
    section (weighted; zero outside ``reach``), and the fusion's lexical weight for the sections of ``reach`` (the
    documents still as labelled) in the shared rule they are ranked by (None: the fitted one)."""

    vote: np.ndarray
    reach: np.ndarray
    lexical: float | None = None


@dataclass(frozen=True, eq=False)
class Beside:
    """The company's labelled questions (their vectors and answering section keys), the weight of their vote, and
    the documents it reaches with the content hash each was labelled on."""

    precedents: Precedents
    weight: float
    documents: dict[str, str]
    figures: dict = field(default_factory=dict)
    lexical: float | None = None  # the fusion's lexical weight for these documents (None: the fitted one)

    def boost(
        self, query_vector: np.ndarray, by_key: dict[str, int], sources: Sequence[str], now: dict[str, str]
    ) -> Boost | None:
        """For one question (``sources``: each section's document), what the labels add to the sections of the
        documents still as labelled (``now``: the index manifest's hashes); None when they reach none."""
        live = {d for d, digest in self.documents.items() if now.get(d) == digest}
        if not live:
            return None
        reach = np.array([source in live for source in sources], dtype=bool)
        return Boost(self.vote(query_vector, by_key, reach), reach, self.lexical)

    def vote(self, query_vector: np.ndarray, by_key: dict[str, int], reach: np.ndarray) -> np.ndarray:
        """The nearest labels' vote per section, weighted, zero outside ``reach``."""
        if self.weight <= 0:
            return np.zeros(len(reach), dtype=np.float32)
        sections = self.precedents.vote(query_vector, by_key).sections
        return (self.weight * np.where(reach, sections, 0.0)).astype(np.float32)

    def save(self, calibration: Path) -> None:
        """Beside the calibration file ``calibration`` (:func:`beside_files`)."""
        header_path, vectors_path = beside_files(calibration)
        self.precedents.save(vectors_path)
        header = {
            "format": FORMAT,
            "weight": self.weight,
            "lexical": self.lexical,
            "documents": self.documents,
            "figures": self.figures,
        }
        tmp = header_path.with_name(header_path.name + ".tmp")
        tmp.write_text(json.dumps(header, ensure_ascii=False, indent=1), encoding="utf-8")
        tmp.replace(header_path)

    @classmethod
    def load(cls, calibration: Path, dim: int) -> Beside | None:
        """What :meth:`save` wrote beside ``calibration``, or None when there is none; a damaged file is logged
        with the fix and left out (the ranking without the company's labels)."""
        header_path, vectors_path = beside_files(calibration)
        if not header_path.is_file():
            return None
        try:
            header = json.loads(header_path.read_text(encoding="utf-8"))
            if header.get("format") != FORMAT:
                raise ValueError(f"format {header.get('format')!r}, expected {FORMAT}")
            weight = float(header["weight"])
            lexical = None if header.get("lexical") is None else float(header["lexical"])
            for name, value in (("weight", weight), ("lexical", 0.0 if lexical is None else lexical)):
                if not np.isfinite(value) or value < 0:
                    raise ValueError(f"{name} {value} is not a finite number >= 0")
            documents = {str(k): str(v) for k, v in dict(header["documents"]).items()}
            figures = dict(header.get("figures", {}))
            return cls(Precedents.load(vectors_path, dim), weight, documents, figures, lexical)
        except Exception as exc:
            log.warning(
                "%s: the company's labels beside the fit are unreadable (%s); ranking without them. %s",
                header_path,
                exc,
                FIX,
            )
            return None
