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

Follow-ups and retries are judged by a second model (:class:`Logistic` over
:data:`FOLLOW_FEATURES`, fitted on labelled conversations) when one was fitted; the
default has none, and then follow-ups use the first-turn model.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

from bot.engine.fitted_documents import unfitted_documents
from bot.engine.model_checks import embedder_dimension, first_non_finite
from bot.engine.precedents import Precedents

log = logging.getLogger("bot.engine.calibration")

FEATURES = (
    "margin",  # best KB cosine minus best off-topic cosine, same language
    "coverage",  # share of the question's words the knowledge base knows at all
    "top_overlap",  # share of the question's specific words found in the best section
    "foreign_major",  # frameworks, products, devices of the question that no section covers (PyTorch, Jetson, PaddleOCR)
    "foreign_minor",  # OS, tools, features, error kinds no section covers (Windows, Docker, AMP, segfault)
    "uncovered_top",  # subjects covered elsewhere in the KB but not by the best section
    "dense_top",  # cosine of the best section
    "is_log",  # the input was a pasted log
    "problem_match",  # +1: the best section covers the question's problem (OOM, NaN, a task); -1: it names others; 0: none named
    "product_setting",  # products built on the section's framework (PaddleOCR on a Paddle FAQ): the setting, not foreign
    "precedent_lean",  # nearest answered labelled real question minus nearest unanswered one, cosine (bot.engine.precedents)
    "precedent_top",  # their vote for the best section: questions like this one were answered by it
    "learned_top",  # learned score of the best section minus the question's "none" score (bot.engine.learned)
)
FOLLOW_FEATURES = (
    "own_margin",  # the follow-up's own words: best KB cosine minus best off-topic cosine (bare "没用": none)
    "own_overlap",  # share of its own specific words found in the section
    "joined_margin",  # the case's search with the follow-up, the same margin
    "foreign",  # subjects the follow-up names that no section covers (M1, Jetson, PyTorch)
    "uncovered_top",  # subjects of the case covered elsewhere but not by this section
    "retry",  # the user said the answer did not help or the problem persists
    "shown_before",  # the section was already shown in this conversation
    "own_words",  # how much the follow-up says on its own (specific tokens, up to 30, scaled to 0..1)
)
CALIBRATION_DIR = "calibration"
# A number that is not finite was never fitted by `bot calibrate` alone: the shipped models come from `bot tune`,
# which refits the calibration and the learned relevance beside it.
NON_FINITE_FIX = "Run: python -m bot tune"
FORMAT = 5
READABLE_FORMATS = (4, 5)  # 4: fitted before the learned relevance (read with learned_top at zero weight)
LEARNED_FEATURES = ("learned_top",)  # what format 5 added; a format-4 file reads as without them
PRECEDENTS_SUFFIX = ".precedents.npz"


def sources_fingerprint(sources: dict) -> str:
    """One hash of the knowledge base a calibration was fitted on (the index manifest's ``sources``).

    >>> sources_fingerprint({"a.md": "1"}) == sources_fingerprint({"a.md": "1"}) != sources_fingerprint({"a.md": "2"})
    True
    """
    return hashlib.sha256(json.dumps(sources, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class Weights:
    """Ranking weights: fused = z(dense) + lexical z(bm25) + subject share (+ title (z(dense) + lexical z(bm25)) of line 1)
    (+ precedent × the labelled precedents' vote, :mod:`bot.engine.precedents`)."""

    lexical: float = 0.5
    subject: float = 0.5
    title: float = 0.5
    precedent: float = 0.0
    learned: float = 0.0  # + learned × z(the adapter's score per section), :mod:`bot.engine.learned`


@dataclass(frozen=True)
class Logistic:
    """A logistic model over named features, with its own tier thresholds (used for follow-up turns).

    >>> m = Logistic(("a",), (0.0,), (1.0,), (2.0,), 0.0, 0.9, 0.1)
    >>> round(m.probability({"a": 1.0}), 3), m.answer_threshold
    (0.881, 0.9)
    """

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    answer_threshold: float
    none_threshold: float

    def probability(self, features: dict[str, float]) -> float:
        z = self.intercept
        for name, mean, scale, coef in zip(self.features, self.mean, self.scale, self.coef):
            z += coef * (float(features.get(name, 0.0)) - mean) / (scale or 1.0)
        return 1.0 / (1.0 + math.exp(-max(min(z, 50.0), -50.0)))

    @classmethod
    def from_dict(cls, data: dict) -> Logistic:
        model = cls(
            tuple(str(f) for f in data["features"]),
            tuple(float(x) for x in data["mean"]),
            tuple(float(x) for x in data["scale"]),
            tuple(float(x) for x in data["coef"]),
            float(data["intercept"]),
            float(data["answer_threshold"]),
            float(data["none_threshold"]),
        )
        if model.features != FOLLOW_FEATURES or not (
            len(model.mean) == len(model.scale) == len(model.coef) == len(FOLLOW_FEATURES)
        ):
            raise ValueError(f"follow-up model for features {list(model.features)}, expected {list(FOLLOW_FEATURES)}")
        if (bad := first_non_finite(_numbers(model))) is not None:
            raise ValueError(f"follow-up model: {bad} is not a finite number")
        if not (0.0 <= model.none_threshold <= model.answer_threshold <= 1.0):
            raise ValueError(f"follow-up thresholds none={model.none_threshold} answer={model.answer_threshold}")
        return model


def _numbers(model: Calibration | Logistic) -> dict[str, object]:
    """Every number of a model that the engine computes with (the figures and file names are only reported)."""
    skip = {
        "embedder",
        "features",
        "calibrated",
        "figures",
        "fitted_on",
        "sources_hash",
        "documents",
        "follow",
        "precedents",
        "unseen",
    }
    numbers = {f.name: getattr(model, f.name) for f in fields(model) if f.name not in skip}
    unseen = getattr(model, "unseen", None) or {}  # the held-out-documents model: the engine computes with it too
    return numbers | {f"unseen.{name}": value for name, value in unseen.items()}


def slug(embedder_id: str) -> str:
    """File-name-safe embedder id.

    >>> slug("st:/tmp/models/x:384")
    'st-tmp-models-x-384'
    """
    return re.sub(r"[^A-Za-z0-9_.]+", "-", embedder_id).strip("-")[:120] or "embedder"


def calibration_path(index_dir: Path, embedder_id: str) -> Path:
    return Path(index_dir) / CALIBRATION_DIR / f"{slug(embedder_id)}.json"


def precedents_path(calibration_file: Path) -> Path:
    """Where a calibration's precedents are stored.

    >>> precedents_path(Path("index/calibration/hash-64.json")).as_posix()
    'index/calibration/hash-64.precedents.npz'
    """
    return Path(calibration_file).with_suffix(PRECEDENTS_SUFFIX)


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
    # Per file of that knowledge base, its content hash (the index manifest's ``sources``): the documents added or
    # changed since are served as documents nobody labelled (:func:`unfitted_documents`), the others as fitted.
    documents: dict = field(default_factory=dict)
    follow: Logistic | None = None  # follow-up turns' model (None: they use the first-turn model)
    precedent_weight: float = 0.0  # + precedent_weight * the precedents' vote, on a new question
    precedents: Precedents | None = None  # labelled real questions (stored beside, PRECEDENTS_SUFFIX)
    learned_weight: float = 0.0  # + learned_weight * z(learned score), when the adapter is loaded (bot.engine.learned)
    # The first-turn model fitted with whole documents held out (``bot calibrate``'s leave-one-document-out: each
    # document's questions scored by a model fitted without its labels, precedents and curated phrasings), with its
    # own thresholds; used instead of this model when the documents differ from the ones it was fitted on.
    unseen: dict | None = None

    @property
    def weights(self) -> Weights:
        return Weights(
            self.lexical_weight,
            self.subject_weight,
            self.title_weight,
            self.precedent_weight if self.precedents is not None else 0.0,
            self.learned_weight,
        )

    # ---------------------------------------------------------------- use

    def probability(self, features: dict[str, float]) -> float:
        """P(the best section answers the question); a feature that is NaN (no adapter loaded) counts as its mean.

        >>> m = Calibration.default()
        >>> m.probability({"margin": 0.03, "learned_top": float("nan")}) == m.probability({"margin": 0.03})
        True
        """
        z = self.intercept
        for name, mean, scale, coef in zip(FEATURES, self.mean, self.scale, self.coef):
            value = float(features.get(name, 0.0))
            if not math.isnan(value):
                z += coef * (value - mean) / (scale or 1.0)
        return 1.0 / (1.0 + math.exp(-max(min(z, 50.0), -50.0)))

    def tier(
        self,
        probability: float,
        *,
        hard_uncovered: bool = False,
        margin: float = -1.0,
        coverage: float = 0.0,
        thresholds: Calibration | Logistic | None = None,
    ) -> str:
        """``hard_uncovered``: the question names a framework or device the section does not cover.

        "none" means nothing is close: a low probability *and* either a best match no closer to
        the knowledge base than to everyday off-topic questions (``margin`` <= 0) or no word the
        knowledge base knows (``coverage`` 0: noise). Anything closer is shown as "tentative" —
        the closest material, marked as possibly not applying. ``thresholds``: another model's
        thresholds (the follow-up model's), else this one's.
        """
        limits = thresholds or self
        if probability < limits.none_threshold and (margin <= 0 or coverage <= 0):
            return "none"
        if probability >= limits.answer_threshold and not hard_uncovered:
            return "answer"
        return "tentative"

    # ---------------------------------------------------------------- storage

    @classmethod
    def default(cls, embedder: str = "") -> Calibration:
        """The conservative model for an index whose embedder was never calibrated.

        It answers only when the best match is clearly closer to the knowledge base than to
        everyday off-topic questions (margin), most of the question's words are known, and
        no subject of the question is missing from the section: each missing subject costs
        more than the strongest margin can give. Thresholds 0.9 / 0.05 keep most doubtful
        questions "tentative" rather than "answer" or "none".
        """
        return cls(
            embedder=embedder,
            lexical_weight=0.5,
            subject_weight=0.5,
            title_weight=0.5,
            mean=(0.0175, 0.6, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
            scale=(0.0075, 0.5, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0),
            coef=(1.0, 1.0, 0.0, -8.0, -4.0, -2.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0),
            intercept=0.0,
            answer_threshold=0.9,
            none_threshold=0.05,
            calibrated=False,
        )

    def save(self, path: Path) -> None:
        """The model as JSON at ``path``; its precedents (vectors) beside it, ``<name>.precedents.npz``."""
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {
            "format": FORMAT,
            "features": list(FEATURES),
            **{f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("follow", "precedents", "unseen")},
            "follow": asdict(self.follow) if self.follow is not None else None,
            "unseen": self.unseen,
            "precedents": None,
        }
        if self.precedents is not None:
            side = precedents_path(path)
            self.precedents.save(side)
            data["precedents"] = {
                "file": side.name,
                "n": len(self.precedents),
                "k": self.precedents.k,
                "temperature": self.precedents.temperature,
            }
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> Calibration:
        """Read a stored calibration; raises ValueError naming the file and the fix."""
        fix = "Run: python -m bot calibrate"
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"{path} is unreadable ({exc}). {fix}") from None
        if (
            isinstance(data, dict)
            and data.get("format") == 4
            and data.get("features") == [f for f in FEATURES if f not in LEARNED_FEATURES]
        ):
            # Fitted before the learned relevance: the same model, the new feature given no weight.
            n = len(LEARNED_FEATURES)
            data = {
                **data,
                "features": list(FEATURES),
                **{
                    key: list(data.get(key) or []) + [value] * n
                    for key, value in (("mean", 0.0), ("scale", 1.0), ("coef", 0.0))
                },
            }
        if (
            not isinstance(data, dict)
            or data.get("format") not in READABLE_FORMATS
            or data.get("features") != list(FEATURES)
        ):
            raise ValueError(f"{path} was written for other features or format. {fix}")
        try:
            model = cls(
                embedder=str(data["embedder"]),
                lexical_weight=float(data["lexical_weight"]),
                subject_weight=float(data["subject_weight"]),
                title_weight=float(data["title_weight"]),
                mean=tuple(float(x) for x in data["mean"]),
                scale=tuple(float(x) for x in data["scale"]),
                coef=tuple(float(x) for x in data["coef"]),
                intercept=float(data["intercept"]),
                answer_threshold=float(data["answer_threshold"]),
                none_threshold=float(data["none_threshold"]),
                calibrated=bool(data.get("calibrated", True)),
                figures=dict(data.get("figures") or {}),
                fitted_on=dict(data.get("fitted_on") or {}),
                sources_hash=str(data.get("sources_hash", "")),
                documents={str(k): str(v) for k, v in dict(data.get("documents") or {}).items()},
                follow=Logistic.from_dict(data["follow"]) if data.get("follow") else None,
                precedent_weight=float(data.get("precedent_weight", 0.0)),
                learned_weight=float(data.get("learned_weight", 0.0)),
                unseen=_unseen(data.get("unseen")),
                precedents=Precedents.load(
                    Path(path).parent / Path(str(data["precedents"]["file"])).name,
                    dim=embedder_dimension(str(data["embedder"])),
                )
                if data.get("precedents")
                else None,
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{path} is missing or has a wrong field ({exc}). {fix}") from None
        # NaN (what json.dumps writes for a diverged fit) or Infinity: every request would carry it.
        if (bad := first_non_finite(_numbers(model))) is not None:
            raise ValueError(
                f"{path}: {bad} is not a finite number (a fit that diverged, or a damaged file). {NON_FINITE_FIX}"
            )
        n = len(FEATURES)
        if not (len(model.mean) == len(model.scale) == len(model.coef) == n):
            raise ValueError(f"{path} has {len(model.coef)} coefficients, expected {n}. {fix}")
        if not (0.0 <= model.none_threshold <= model.answer_threshold <= 1.0):
            raise ValueError(
                f"{path}: thresholds none={model.none_threshold} answer={model.answer_threshold} "
                f"must satisfy 0 <= none <= answer <= 1. {fix}"
            )
        return model

    def unfitted(self, sources: dict) -> frozenset[str]:
        """The documents of ``sources`` (the index manifest's) this model was not fitted on as they are: the engine
        serves their sections as documents nobody labelled (:attr:`bot.engine.retrieve.Engine.hidden`, judged by
        :meth:`for_unseen_documents`). Empty when it is used as fitted for every document, or for none (a default,
        a model already serving every document as unseen: :meth:`for_unseen_documents`).

        >>> m = replace(Calibration.default(), documents={"a.md": "1"})
        >>> sorted(m.unfitted({"a.md": "1", "b.md": "2"})), sorted(replace(m, calibrated=True).unfitted({"a.md": "1", "b.md": "2"}))
        ([], ['b.md'])
        """
        if not self.calibrated or "documents_changed" in self.figures:
            return frozenset()
        return unfitted_documents(self.documents, sources) or frozenset()

    def for_unseen_documents(self) -> Calibration:
        """This calibration as it serves documents it was not fitted on: the model and thresholds fitted with whole
        documents held out (no adapter: it learned today's sections), the ranking weights and the precedents kept
        (their vote only reaches the documents they name, :func:`bot.engine.rank.gate`). Without that fit (an
        older file): the conservative default.

        >>> m = replace(Calibration.default(), calibrated=True, unseen={"mean": [0.0] * len(FEATURES),
        ...     "scale": [1.0] * len(FEATURES), "coef": [0.0] * len(FEATURES), "intercept": 0.0,
        ...     "answer_threshold": 0.7, "none_threshold": 0.1})
        >>> u = m.for_unseen_documents()
        >>> u.answer_threshold, u.calibrated, u.figures["documents_changed"], u.learned_weight
        (0.7, True, True, 0.0)
        """
        if not self.unseen:
            return replace(Calibration.default(self.embedder), figures={"stale": True})
        u = self.unseen
        # Fitted with the learned score at zero (served without the adapter): an adapter loaded for the documents
        # that are as fitted says nothing about these.
        coef = tuple(0.0 if name in LEARNED_FEATURES else float(c) for name, c in zip(FEATURES, u["coef"]))
        return replace(
            self,
            mean=tuple(u["mean"]),
            scale=tuple(u["scale"]),
            coef=coef,
            intercept=float(u["intercept"]),
            answer_threshold=float(u["answer_threshold"]),
            none_threshold=float(u["none_threshold"]),
            learned_weight=0.0,
            figures={**self.figures, "documents_changed": True},
        )


def _unseen(data: object) -> dict | None:
    """The held-out-documents model as stored (None: not fitted); raises ValueError on a malformed one."""
    if not data:
        return None
    if not isinstance(data, dict):
        raise ValueError(f"unseen: expected an object, not {type(data).__name__}")
    n = len(FEATURES)
    out = {
        "mean": [float(x) for x in data["mean"]],
        "scale": [float(x) for x in data["scale"]],
        "coef": [float(x) for x in data["coef"]],
        "intercept": float(data["intercept"]),
        "answer_threshold": float(data["answer_threshold"]),
        "none_threshold": float(data["none_threshold"]),
    }
    if not (len(out["mean"]) == len(out["scale"]) == len(out["coef"]) == n):
        raise ValueError(f"unseen: {len(out['coef'])} coefficients, expected {n}")
    if not (0.0 <= out["none_threshold"] <= out["answer_threshold"] <= 1.0):
        raise ValueError(f"unseen: thresholds none={out['none_threshold']} answer={out['answer_threshold']}")
    return out


def load_for(index_dir: Path, embedder_id: str, sources: dict | None = None) -> Calibration:
    """The stored calibration for this embedder, or the conservative default when there is none.

    ``sources``: the index manifest's content hash per file. Documents added or changed since the fit are served as
    documents nobody labelled by the engine (:meth:`Calibration.unfitted`), the others keep the fitted model. When
    what every document depends on changed, or the file recorded no per-document hashes (an older one) and the
    folder differs, the whole calibration is used as fitted for documents nobody labelled
    (:meth:`Calibration.for_unseen_documents`); that is logged with the fix.
    """
    path = calibration_path(index_dir, embedder_id)
    if not path.is_file():
        return Calibration.default(embedder_id)
    try:
        model = Calibration.load(path)
    except ValueError as exc:  # an older format or a broken file: answer conservatively, say how to fix it
        log.warning("%s; using the conservative default", exc)
        return replace(Calibration.default(embedder_id), figures={"unreadable": str(exc)})
    if model.embedder != embedder_id:
        return Calibration.default(embedder_id)
    if not sources:
        return model
    fresh = unfitted_documents(model.documents, sources)
    fingerprint = sources_fingerprint(sources)
    if fresh is None and model.sources_hash and model.sources_hash != fingerprint:
        log.warning(
            "%s was fitted on other documents than the index in %s (sources hash %s…, index %s…; %s); "
            "using its fit for documents nobody labelled (%s). Run: python -m bot calibrate",
            path,
            index_dir,
            model.sources_hash[:12],
            fingerprint[:12],
            "no per-document hashes stored" if not model.documents else "the shared files changed",
            "whole documents held out" if model.unseen else "none stored: the conservative default",
        )
        return model.for_unseen_documents()
    if fresh:
        log.warning(
            "%s: %d document(s) added or changed since the fit (%s); they are served as documents nobody "
            "labelled, the others as fitted. Run: python -m bot calibrate",
            path,
            len(fresh),
            ", ".join(sorted(fresh)[:5]) + (" …" if len(fresh) > 5 else ""),
        )
    return model
