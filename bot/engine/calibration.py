"""The confidence model: a few features of a question and its best section -> P(the section answers it) -> tier.

Fitted by ``python -m bot calibrate`` from labelled questions (logistic regression on
standardised features), stored beside the index, one file per embedder::

    index/calibration/<embedder slug>.json

with the ranking weights, the feature scaling, the coefficients, the two tier
thresholds and the cross-validated figures they were chosen by. Nothing here is typed
in by hand except :data:`DEFAULT`, the documented conservative model used when the
index's embedder has no calibration (see README, "Confidence").

    >>> model = Calibration.default()
    >>> model.tier(0.97, hard_uncovered=True)
    'tentative'

    >>> model.tier(0.97), model.tier(0.2), model.tier(0.0), model.tier(0.0, margin=0.03, coverage=0.5)
    ('answer', 'tentative', 'none', 'tentative')
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

FEATURES = (
    "margin",  # best KB cosine minus best off-topic cosine, same language
    "coverage",  # share of the question's words the knowledge base knows at all
    "top_overlap",  # share of the question's specific words found in the best section
    "foreign_major",  # frameworks, products, devices of the question that no section covers (PyTorch, Jetson, PaddleOCR)
    "foreign_minor",  # OS, tools, features, error kinds no section covers (Windows, Docker, AMP, segfault)
    "uncovered_top",  # subjects covered elsewhere in the KB but not by the best section
    "dense_top",  # cosine of the best section
    "is_log",  # the input was a pasted log
)
CALIBRATION_DIR = "calibration"
FORMAT = 1


def slug(embedder_id: str) -> str:
    """File-name-safe embedder id.

    >>> slug("st:/tmp/models/x:384")
    'st-tmp-models-x-384'
    """
    return re.sub(r"[^A-Za-z0-9_.]+", "-", embedder_id).strip("-")[:120] or "embedder"


def calibration_path(index_dir: Path, embedder_id: str) -> Path:
    return Path(index_dir) / CALIBRATION_DIR / f"{slug(embedder_id)}.json"


@dataclass(frozen=True)
class Calibration:
    """Ranking weights + logistic confidence + tier thresholds, for one embedder."""

    embedder: str
    lexical_weight: float  # fused = z(dense) + lexical_weight * z(bm25) + subject_weight * subject share
    subject_weight: float
    title_weight: float  # + title_weight * (z(dense) + lexical_weight * z(bm25)) of the message's first line
    mean: tuple[float, ...]  # feature scaling, in FEATURES order
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    answer_threshold: float  # P >= this: "answer"
    none_threshold: float  # P < this: "none"; in between: "tentative"
    calibrated: bool = True
    figures: dict = field(default_factory=dict)  # cross-validated figures from `bot calibrate`
    fitted_on: dict = field(default_factory=dict)  # files and their hashes, case counts
    sources_hash: str = ""  # knowledge base it was fitted on

    # ---------------------------------------------------------------- use

    def probability(self, features: dict[str, float]) -> float:
        z = self.intercept
        for name, mean, scale, coef in zip(FEATURES, self.mean, self.scale, self.coef):
            z += coef * (float(features.get(name, 0.0)) - mean) / (scale or 1.0)
        return 1.0 / (1.0 + math.exp(-max(min(z, 50.0), -50.0)))

    def tier(self, probability: float, *, hard_uncovered: bool = False, margin: float = -1.0,
             coverage: float = 0.0) -> str:
        """``hard_uncovered``: the question names a framework or device the section does not cover.

        "none" means nothing is close: a low probability *and* either a best match no closer to
        the knowledge base than to everyday off-topic questions (``margin`` <= 0) or no word the
        knowledge base knows (``coverage`` 0: noise). Anything closer is shown as "tentative" —
        the closest material, marked as possibly not applying.
        """
        if probability < self.none_threshold and (margin <= 0 or coverage <= 0):
            return "none"
        if probability >= self.answer_threshold and not hard_uncovered:
            return "answer"
        return "tentative"

    # ---------------------------------------------------------------- storage

    @classmethod
    def default(cls, embedder: str = "") -> "Calibration":
        """The conservative model for an index whose embedder was never calibrated.

        It answers only when the best match is clearly closer to the knowledge base than to
        everyday off-topic questions (margin), most of the question's words are known, and
        no subject of the question is missing from the section: each missing subject costs
        more than the strongest margin can give. Thresholds 0.9 / 0.05 keep most doubtful
        questions "tentative" rather than "answer" or "none".
        """
        return cls(
            embedder=embedder, lexical_weight=0.5, subject_weight=0.5, title_weight=0.5,
            mean=(0.0175, 0.6, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0), scale=(0.0075, 0.5, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
            coef=(1.0, 1.0, 0.0, -8.0, -4.0, -2.0, 0.0, 0.0), intercept=0.0,
            answer_threshold=0.9, none_threshold=0.05, calibrated=False,
        )

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {"format": FORMAT, "features": list(FEATURES), **asdict(self)}
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> "Calibration":
        """Read a stored calibration; raises ValueError naming the file and the fix."""
        fix = "Run: python -m bot calibrate"
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"{path} is unreadable ({exc}). {fix}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("features") != list(FEATURES):
            raise ValueError(f"{path} was written for other features or format. {fix}")
        try:
            model = cls(
                embedder=str(data["embedder"]), lexical_weight=float(data["lexical_weight"]),
                subject_weight=float(data["subject_weight"]), title_weight=float(data["title_weight"]),
                mean=tuple(float(x) for x in data["mean"]), scale=tuple(float(x) for x in data["scale"]),
                coef=tuple(float(x) for x in data["coef"]), intercept=float(data["intercept"]),
                answer_threshold=float(data["answer_threshold"]), none_threshold=float(data["none_threshold"]),
                calibrated=bool(data.get("calibrated", True)), figures=dict(data.get("figures") or {}),
                fitted_on=dict(data.get("fitted_on") or {}), sources_hash=str(data.get("sources_hash", "")),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{path} is missing or has a wrong field ({exc}). {fix}") from None
        n = len(FEATURES)
        if not (len(model.mean) == len(model.scale) == len(model.coef) == n):
            raise ValueError(f"{path} has {len(model.coef)} coefficients, expected {n}. {fix}")
        if not (0.0 <= model.none_threshold <= model.answer_threshold <= 1.0):
            raise ValueError(
                f"{path}: thresholds none={model.none_threshold} answer={model.answer_threshold} "
                f"must satisfy 0 <= none <= answer <= 1. {fix}"
            )
        return model


def load_for(index_dir: Path, embedder_id: str) -> Calibration:
    """The stored calibration for this embedder, or the conservative default when there is none."""
    path = calibration_path(index_dir, embedder_id)
    if not path.is_file():
        return Calibration.default(embedder_id)
    model = Calibration.load(path)
    if model.embedder != embedder_id:
        return Calibration.default(embedder_id)
    return model
