"""Fitting the turn-act model (:class:`bot.engine.acts.ActModel`, which serving loads) from labelled turns.

``python -m bot acts`` (:mod:`bot.fit.acts_training`) reads the labelled conversations (``eval/acts/train.jsonl``),
reads every turn as the engine does at plan time (:func:`read_turn`), chooses the L2 by cross-validation over whole
conversations and fits the model here.

    >>> x = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]], dtype=np.float32)
    >>> model = fit(x, np.array([0, 0, 1, 1]), classes=("detail", "failed_fix"), names=("a", "b"), l2=0.01)
    >>> [model.classes[i] for i in model.probabilities(x).argmax(1)]
    ['detail', 'detail', 'failed_fix', 'failed_fix']
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bot.engine.acts import (
    BEFORE_ENGINE,
    FEATURE_NAMES,
    INTENTS,
    LABEL_OF_ACT,
    LABEL_OF_INTENT,
    LABEL_OF_REPLY,
    LABELS,
    ActModel,
    turn_features,
)
from bot.engine.plan import (
    ACTS,
    GUARDS,
    WEIGHED,
    Guard,
    Proposal,
    chosen_reading,
    decide_act,
    plan,
    weighs_readings,
)
from bot.jsonl import HostileLine, json_line
from bot.records import Act, Case, Plan

TRAIN_FILE = Path("eval/acts/train.jsonl")
L2_CHOICES = (0.003, 0.01, 0.03, 0.1, 0.3)  # chosen by cross-validation over whole conversations
FOLDS = 5
STEPS = 400


def fit(
    x: np.ndarray,
    y: np.ndarray,
    *,
    classes: Sequence[str],
    names: Sequence[str] = FEATURE_NAMES,
    l2: float = 0.03,
    steps: int = STEPS,
    embedder: str = "",
    train_hash: str = "",
    figures: str = "{}",
    guard: Guard | None = None,
) -> ActModel:
    """Multinomial logistic regression on standardised inputs, classes weighted to equal totals, L2 on the weights;
    full-batch gradient descent with Adam (deterministic, a few hundred milliseconds for a few hundred turns)."""
    x = np.asarray(x, dtype=np.float64)
    mean = x.mean(0)
    scale = x.std(0)
    scale[scale < 1e-6] = 1.0
    z = (x - mean) / scale
    n, d = z.shape
    k = len(classes)
    target = np.zeros((n, k))
    target[np.arange(n), y] = 1.0
    counts = np.maximum(target.sum(0), 1.0)
    sample = (target / counts).sum(1) * (n / k)  # each class weighs the same in total
    w = np.zeros((k, d))
    b = np.zeros(k)
    moments = [np.zeros_like(w), np.zeros_like(w), np.zeros_like(b), np.zeros_like(b)]
    rate, beta1, beta2 = 0.05, 0.9, 0.999
    for step in range(1, steps + 1):
        logits = z @ w.T + b
        logits -= logits.max(1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(1, keepdims=True)
        error = (p - target) * sample[:, None] / n
        grad_w = error.T @ z + l2 * w
        grad_b = error.sum(0)
        for param, grad, m, v in ((w, grad_w, moments[0], moments[1]), (b, grad_b, moments[2], moments[3])):
            m *= beta1
            m += (1 - beta1) * grad
            v *= beta2
            v += (1 - beta2) * grad**2
            param -= rate * (m / (1 - beta1**step)) / (np.sqrt(v / (1 - beta2**step)) + 1e-8)
    return ActModel(
        weights=w.astype(np.float32),
        bias=b.astype(np.float32),
        mean=mean.astype(np.float32),
        scale=scale.astype(np.float32),
        classes=tuple(classes),
        names=tuple(names),
        embedder=embedder,
        train_hash=train_hash,
        figures=figures,
        **({"guard": guard} if guard is not None else {}),
    )


@dataclass(frozen=True)
class Rows:
    """Labelled turns read through the engine: inputs, label index, the rule pipeline's label, the conversation,
    and whether the turn, read as a follow-up or a detail, is a complete question its own words answer (``switch``:
    the plan's weighing of its readings, :func:`bot.engine.plan.chosen_reading`, makes it a new question)."""

    x: np.ndarray
    y: np.ndarray
    rule: tuple[str, ...]
    group: np.ndarray
    queries: tuple[str, ...]
    switch: np.ndarray | None = None


def read_labelled(path: Path) -> list[dict]:
    """Conversations with an ``act`` on every later turn (``eval/acts/README.md``); a bad row names its line."""
    out = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json_line(line)
            turns = [{"query": str(t["query"]), "act": t.get("act")} for t in row["turns"]]
            bad = [t["act"] for t in turns[1:] if t["act"] not in LABELS]
        except HostileLine as exc:  # 100,000 brackets, a lone surrogate: refused before any turn is read
            raise ValueError(f"{path}:{n}: {exc}") from None
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(
                f'{path}:{n}: not a labelled conversation ({exc}). Fix that line: {{"turns": [{{"query": "..."}}, '
                '{"query": "...", "act": "..."}]}'
            ) from None
        if bad:
            raise ValueError(f"{path}:{n}: act {bad[0]!r} is not one of {', '.join(LABELS)}")
        out.append({"id": row.get("id", str(n)), "turns": turns})
    if not any(len(c["turns"]) > 1 for c in out):  # nothing to learn from or score (a stack of no arrays, once)
        raise ValueError(
            f'{path}: no labelled later turn: each conversation\'s turns after the first need an "act" ({", ".join(LABELS)}); '
            "add conversations of two turns or more (eval/acts/README.md)"
        )
    return out


def read_turn(engine, query: str, case: Case) -> tuple[np.ndarray, str, bool]:
    """One turn read as the engine reads it at plan time: the model's inputs, the rule's plan read as a label (the
    product's plan without the model: its readings weighed when it joins a complete question with the case), and
    whether a follow-up or detail reading of it would be weighed into a new question."""
    message = engine.read(query)
    own = engine.scores(message.search_text, tokens=message.tokens) if message.has_words else None
    reading = engine.reading(message, case, own)
    planned = plan(message, case, reading, turn=True)  # the product's plan, by the rule
    switch = False
    if own is not None and planned.reply in ("answer", "retry") and weighs_readings("follow_up", reading, case):
        # Whatever act decides it (the rule or the model), a follow-up or detail reading of a complete question is
        # weighed: once here, read as the rule's act when it is one of them, else as a follow-up.
        act = planned.act if planned.act in WEIGHED else "follow_up"
        weighed = engine.weighed(message, case, own, reading, act)
        switch = chosen_reading(act, weighed.alone, weighed.together, case)[0] == "switch"
        if planned.act in WEIGHED:
            planned = plan(message, case, weighed, turn=True, act=planned.act)
    features = planned.features
    vector = own.query_vector if own is not None else np.zeros(engine.embedder.dim, dtype=np.float32)
    x = np.concatenate([turn_features(features, message, case), np.asarray(vector, dtype=np.float32)])
    return x, rule_label(planned), switch


def rule_label(planned: Plan) -> str:
    """The rule's plan read as a label: its reply to what is not a question in an open case, else its act (a turn of
    no open case is a first question, whatever it says)."""
    if planned.features is not None and planned.features.open_case and planned.reply in LABEL_OF_REPLY:
        return LABEL_OF_REPLY[planned.reply]
    return LABEL_OF_ACT.get(planned.act, "new_covered")


def pipeline(
    model: ActModel, x: np.ndarray, *, guard: Guard | None = None, switch: np.ndarray | None = None
) -> list[str]:
    """The product's labels from the model: intents first (answered before the engine), else the plan's decision
    (:func:`bot.engine.plan.decide_act`) under ``guard`` (the model's own unless given; ``Guard()``: the model's
    best among the engine's five), then the weighing of a complete question's readings (``switch``, per row)."""
    guard = model.guard if guard is None else guard
    p = model.probabilities(x)
    allowed = np.array([c not in BEFORE_ENGINE for c in model.classes])
    out = []
    for i, row in enumerate(p):
        intent = _intent_of(x[i])
        if intent:
            out.append(intent)
            continue
        best = int(np.argmax(np.where(allowed, row, -1.0)))
        proposal = Proposal(model.classes[best], float(row[best] / row[allowed].sum()))
        act = decide_act(_rule_of(x[i]), proposal, guard)
        if switch is not None and switch[i] and act in WEIGHED:
            act = "switch"
        out.append(LABEL_OF_ACT.get(act, "new_covered"))
    return out


def _rule_of(x: np.ndarray) -> Act:
    return next((a for a in ACTS if x[FEATURE_NAMES.index(f"rule={a}")] > 0.5), "new")


def _intent_of(x: np.ndarray) -> str:
    for name in INTENTS:
        if x[FEATURE_NAMES.index(f"intent={name}")] > 0.5:
            return LABEL_OF_INTENT[name]
    return ""


def per_act(truth: Sequence[str], said: Sequence[str]) -> dict:
    """Accuracy over all turns and per labelled act (recall of each act).

    >>> per_act(["detail", "detail", "thanks"], ["detail", "failed_fix", "thanks"])
    {'all': 0.6667, 'n': 3, 'detail': 0.5, 'thanks': 1.0}
    """
    out: dict = {"all": round(float(np.mean([t == s for t, s in zip(truth, said)])), 4), "n": len(truth)}
    for label in LABELS:
        rows = [s == label for t, s in zip(truth, said) if t == label]
        if rows:
            out[label] = round(float(np.mean(rows)), 4)
    return out


def cross_validate(rows: Rows, l2: float, folds: int = FOLDS, guards: Sequence[str] = GUARDS) -> dict[str, list[str]]:
    """Each turn's pipeline label, per guard, from a model fitted without its conversation's fold."""
    said: dict[str, list[str]] = {g: [""] * len(rows.y) for g in guards}
    fold_of = rows.group % folds
    for fold in range(folds):
        test = fold_of == fold
        model = fit(rows.x[~test], rows.y[~test], classes=LABELS, l2=l2)
        switch = rows.switch[test] if rows.switch is not None else None
        for g in guards:
            for i, label in zip(
                np.flatnonzero(test), pipeline(model, rows.x[test], guard=Guard.parse(g), switch=switch)
            ):
                said[g][i] = label
    return said


def one_thread():
    """Small matrices on a shared host: one BLAS thread (several thrash: 22 s for one fit at load 28, 1.2 s on one)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # not installed: numpy's default threads
        from contextlib import nullcontext

        return nullcontext()
    return threadpool_limits(1)


def file_hash(path: Path) -> str:
    """The training file's SHA-256 (stored with the model: what it was fitted on)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
