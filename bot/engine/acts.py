"""Turn acts learned, not listed: a small model that reads what a later turn is from its e5 vector and its features.

The rule :func:`bot.engine.plan.act_of` decides a turn's act from word lists. This module learns the same decision
from labelled conversation turns (``eval/acts/train.jsonl``, format in ``eval/acts/README.md``): a multinomial
logistic regression over the message's own e5 vector (the engine's embedder) and the :class:`TurnFeatures` record
(the word lists' cues and move become inputs, not the decision; the message against the section shown and the
others; what the case already holds: a fix tried, an environment shown). It is fitted by ``python -m bot acts`` in
seconds, stored beside the calibration (``index/calibration/<embedder>.acts.npz``, with the embedder's id and a
hash of the training file), and loaded with checks; a missing or bad file is named with the fix and the engine
decides by the rule, as before.

The labels are the labellers' acts; the plan's acts are finer. A label maps to a family of plan acts
(:data:`FAMILY`); when the rule's act is in the model's family the rule's finer act is kept ("follow_up" vs
"detail", "report" vs "failed_fix"), else the model's family's first act is used. ``thanks`` and ``person`` are
answered before the engine (:mod:`bot.engine.intents`): at plan time the model chooses among the other five.

The model is fitted in :mod:`bot.fit.acts` (this module is what serving loads). When its proposal overrules the
rule is its :class:`bot.engine.plan.Guard`, chosen when it is fitted and stored with it.

    >>> plan_act("failed_fix", "report"), plan_act("failed_fix", "detail"), plan_act("new_covered", "new")
    ('report', 'failed_fix', 'switch')
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from bot.engine.plan import (
    ACTS,
    FAMILY,
    STORED_BEFORE,
    Guard,
    Proposal,
    TurnFeatures,
    act_of,
    plan_act,
)
from bot.records import Act, Case

if TYPE_CHECKING:
    from bot.engine.message import Message

log = logging.getLogger("bot.engine.acts")

FILE_FORMAT = 1
SUFFIX = ".acts.npz"
FIX = "Run: python -m bot acts"
# The labellers' acts (eval/acts/README.md), in the order the model's outputs are stored.
LABELS: tuple[str, ...] = ("detail", "failed_fix", "new_covered", "new_uncovered", "environment", "thanks", "person")
# Answered before the engine (bot.engine.intents): never a plan's act.
BEFORE_ENGINE = frozenset({"thanks", "person"})
# The plan's act read back as a label (to score the rule on the same labels).
LABEL_OF_ACT: dict[Act, str] = {"new": "new_covered", **{act: label for label, acts in FAMILY.items() for act in acts}}
# The plan's replies to what is not a question, read as labels: a greeting or small talk in a conversation is closest
# to a thanks.
LABEL_OF_REPLY: dict[str, str] = {"thanks": "thanks", "greeting": "thanks", "small_talk": "thanks", "person": "person"}
LABEL_OF_INTENT = {"thanks": "thanks", "greeting": "thanks", "small_talk": "thanks", "human": "person"}

_BOOLS = (
    "failed",
    "not_helpful",
    "elliptical",
    "new_topic",
    "is_log",
    "shows_environment",
    "asks_more",
    "foreign",
    "foreign_product",
    "own_lead_shown",
    "own_lead_asked_shown",
)
_MOVES = ("new", "follow_up", "retry", "switch")
INTENTS = ("thanks", "greeting", "small_talk", "human")
FEATURE_NAMES: tuple[str, ...] = (
    *_BOOLS,
    *(f"move={m}" for m in _MOVES),
    *(f"rule={a}" for a in ACTS),
    *(f"intent={i}" for i in INTENTS),
    "margin",
    "shown_similarity",
    "other_similarity",
    "other_minus_shown",
    "log_chars",
    "zh",
    "asks",
    "case_tried",
    "case_environment",
    "case_shown",
)


def turn_features(features: TurnFeatures, message: Message, case: Case) -> np.ndarray:
    """The numeric features of one turn (:data:`FEATURE_NAMES`), the e5 vector apart.

    >>> from bot.engine.plan import Reading, features_of, read
    >>> f = features_of(read("没用", failed=True, not_helpful=True), Case(search="oom"), Reading(rule_move="retry"))
    >>> v = turn_features(f, read("没用"), Case(search="oom"))
    >>> len(v) == len(FEATURE_NAMES), dict(zip(FEATURE_NAMES, v.tolist()))["rule=failed_fix"]
    (True, 1.0)
    """
    rule = act_of(features)
    text = message.text
    values = [
        *(float(getattr(features, name)) for name in _BOOLS),
        *(float(features.rule_move == m) for m in _MOVES),
        *(float(rule == a) for a in ACTS),
        *(float(message.intent == i) for i in INTENTS),
        features.margin,
        features.shown_similarity,
        features.other_similarity,
        features.other_similarity - features.shown_similarity,
        math.log1p(len(text)),
        float(message.language == "zh"),
        float("?" in text or "？" in text or "吗" in text),
        float(bool(case.tried)),
        float(not case.environment.is_empty),
        math.log1p(len(case.shown)),
    ]
    return np.asarray(values, dtype=np.float32)


@dataclass(frozen=True, eq=False)
class ActModel:
    """``softmax(weights · standardise([features, vector]) + bias)`` over :attr:`classes`."""

    weights: np.ndarray  # (classes, inputs)
    bias: np.ndarray  # (classes,)
    mean: np.ndarray  # (inputs,)
    scale: np.ndarray  # (inputs,)
    classes: tuple[str, ...]
    names: tuple[str, ...]  # the numeric features' names; the vector's dimensions follow them
    embedder: str = ""
    train_hash: str = ""
    figures: str = "{}"  # JSON: how it was chosen and how well it did (cross-validated), for the record
    guard: Guard = Guard.parse(STORED_BEFORE)  # when its proposal overrules the rule (bot.engine.plan.decide_act)

    @property
    def inputs(self) -> int:
        return int(self.weights.shape[1])

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        z = ((np.atleast_2d(x) - self.mean) / self.scale) @ self.weights.T + self.bias
        z -= z.max(1, keepdims=True)
        p = np.exp(z)
        return p / p.sum(1, keepdims=True)

    def label(self, features: TurnFeatures, vector: np.ndarray, message: Message, case: Case) -> str:
        """The turn's label among those the engine answers (not thanks or person: answered before it)."""
        return self.weigh(features, vector, message, case)[0]

    def weigh(self, features: TurnFeatures, vector: np.ndarray, message: Message, case: Case) -> tuple[str, float]:
        """The best label among those the engine answers and its probability among them."""
        x = np.concatenate([turn_features(features, message, case), np.asarray(vector, dtype=np.float32)])
        p = self.probabilities(x)[0]
        allowed = [i for i, c in enumerate(self.classes) if c not in BEFORE_ENGINE]
        best = max(allowed, key=lambda i: p[i])
        return self.classes[best], float(p[best] / max(p[allowed].sum(), 1e-12))

    def propose(self, features: TurnFeatures, vector: np.ndarray, message: Message, case: Case) -> Proposal:
        """The model's proposal for an open case's turn: its best label and how sure it is (the plan decides,
        :func:`bot.engine.plan.decide_act`)."""
        return Proposal(*self.weigh(features, vector, message, case))

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez(
            tmp,
            format=np.array(FILE_FORMAT),
            weights=self.weights.astype(np.float32),
            bias=self.bias.astype(np.float32),
            mean=self.mean.astype(np.float32),
            scale=self.scale.astype(np.float32),
            classes=np.array(json.dumps(list(self.classes))),
            names=np.array(json.dumps(list(self.names))),
            embedder=np.array(self.embedder),
            train_hash=np.array(self.train_hash),
            figures=np.array(self.figures),
            guard=np.array(str(self.guard)),
        )
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> ActModel:
        """Read a stored model; a damaged, non-finite or ill-shaped file raises ValueError naming it and the fix."""
        try:
            with np.load(path, allow_pickle=False) as data:
                if int(data["format"]) != FILE_FORMAT:
                    raise ValueError(f"format {int(data['format'])}, expected {FILE_FORMAT}")
                model = cls(
                    weights=np.asarray(data["weights"], dtype=np.float32),
                    bias=np.asarray(data["bias"], dtype=np.float32),
                    mean=np.asarray(data["mean"], dtype=np.float32),
                    scale=np.asarray(data["scale"], dtype=np.float32),
                    classes=tuple(json.loads(str(data["classes"]))),
                    names=tuple(json.loads(str(data["names"]))),
                    embedder=str(data["embedder"]),
                    train_hash=str(data["train_hash"]),
                    figures=str(data["figures"]),
                    # a file stored before guards were: the guard it shipped with
                    guard=Guard.parse(str(data["guard"]) if "guard" in data else STORED_BEFORE),
                )
        except Exception as exc:  # zip, key, JSON or dtype errors alike: the file is not a model
            raise ValueError(f"{path}: not a turn-act model ({type(exc).__name__}: {exc}). {FIX}") from None
        n, inputs = model.weights.shape if model.weights.ndim == 2 else (0, 0)
        if (
            model.weights.ndim != 2
            or model.bias.shape != (n,)
            or model.mean.shape != (inputs,)
            or model.scale.shape != (inputs,)
            or len(model.classes) != n
            or not set(model.classes) <= set(LABELS)
            or model.names != FEATURE_NAMES
        ):
            raise ValueError(f"{path}: a turn-act model of another shape or feature set than this code's. {FIX}")
        arrays = (model.weights, model.bias, model.mean, model.scale)
        if not all(np.isfinite(a).all() for a in arrays) or (model.scale <= 0).any():
            raise ValueError(f"{path}: a turn-act model with values that are not finite. {FIX}")
        return model


def acts_path(calibration_file: Path) -> Path:
    """Where the turn-act model of a calibration is stored.

    >>> acts_path(Path("index/calibration/hash-64.json")).as_posix()
    'index/calibration/hash-64.acts.npz'
    """
    return Path(calibration_file).with_suffix(SUFFIX)


def load_for(path: Path, embedder_id: str, dim: int) -> ActModel | None:
    """The stored model when it fits this embedder (its id and vector size), else None: the plan then decides by the
    rule (:func:`bot.engine.plan.act_of`). A missing file is normal (not fitted); a bad one is said once, named with
    the fix."""
    if not path.is_file():
        log.info("%s: no turn-act model; turn acts by the rule. %s", path, FIX)
        return None
    try:
        model = ActModel.load(path)
    except ValueError as exc:
        log.warning("%s; turn acts by the rule", exc)
        return None
    if model.embedder != embedder_id or model.inputs != len(FEATURE_NAMES) + dim:
        log.warning(
            "%s was fitted for another embedder (%s, %d inputs; the index's is %s, %d); turn acts by the rule. %s",
            path,
            model.embedder,
            model.inputs,
            embedder_id,
            len(FEATURE_NAMES) + dim,
            FIX,
        )
        return None
    return model


__all__ = [
    "FAMILY",
    "FEATURE_NAMES",
    "LABELS",
    "ActModel",
    "acts_path",
    "load_for",
    "plan_act",
    "turn_features",
]
