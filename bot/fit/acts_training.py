"""Training and scoring the turn-act model (:mod:`bot.engine.acts`) on labelled conversations.

The labelled turns are read as the product reads them: each conversation's earlier turns answered by
:class:`bot.answer.conversation.Conversation` (so the case a turn is read in is the one a user would have), then the
turn's features and vector in that case. This lives in the answer stage because it replays conversations; the model
itself, and what the engine loads, stay in :mod:`bot.engine.acts`.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from bot.answer.conversation import Conversation
from bot.engine.acts import BEFORE_ENGINE, LABELS, ActModel
from bot.fit.acts import (
    L2_CHOICES,
    TRAIN_FILE,
    Rows,
    cross_validate,
    file_hash,
    fit,
    per_act,
    pipeline,
    read_labelled,
)
from bot.fit.acts import one_thread as _one_thread
from bot.fit.acts import read_turn as _read_turn


def rows_of(engine, conversations: Sequence[dict], progress: Callable[[int, int], None] | None = None) -> Rows:
    """Every later turn of the conversations, read as the product reads it: the earlier turns answered by
    :class:`bot.answer.conversation.Conversation`, then the turn's features and vector in that case (what the
    plan sees), with the rule pipeline's label (intents first, then :func:`act_of`)."""
    xs, ys, rules, groups, queries = [], [], [], [], []
    for c, conversation in enumerate(conversations):
        talk = Conversation(engine)
        for n, turn in enumerate(conversation["turns"]):
            if n > 0 and turn["act"] in LABELS:
                x, rule = _read_turn(engine, turn["query"], talk.case)
                xs.append(x)
                ys.append(LABELS.index(turn["act"]))
                rules.append(rule)
                groups.append(c)
                queries.append(turn["query"])
            talk.respond(turn["query"])
        if progress is not None:
            progress(c + 1, len(conversations))
    return Rows(np.stack(xs), np.array(ys), tuple(rules), np.array(groups), tuple(queries))


def train(engine, path: Path = TRAIN_FILE, *, progress: bool = True) -> tuple[ActModel, dict]:
    """Read the labelled turns through the engine, choose the L2 weight by cross-validation over whole
    conversations, fit on every turn; returns the model and its figures (rule vs model, per act)."""
    start = time.perf_counter()
    conversations = read_labelled(path)

    def show(done: int, total: int) -> None:
        if progress:
            print(f"\rreading turns: {done}/{total} conversations", end="", file=sys.stderr, flush=True)

    rows = rows_of(engine, conversations, show)
    if progress:
        print(f" ({time.perf_counter() - start:.1f} s)", file=sys.stderr)
    truth = [LABELS[i] for i in rows.y]
    trials = {}
    with _one_thread():
        for l2 in L2_CHOICES:
            trials[l2] = per_act(truth, cross_validate(rows, l2))
            if progress:
                print(f"l2 {l2:<6} cross-validated accuracy {trials[l2]['all']:.3f}", file=sys.stderr)
    best = max(L2_CHOICES, key=lambda l2: (trials[l2]["all"], l2))  # ties: the stronger penalty
    figures = {
        "train_file": str(path),
        "turns": len(truth),
        "l2": best,
        "rule": per_act(truth, rows.rule),
        "model_cross_validated": trials[best],
        "seconds": 0.0,
    }
    with _one_thread():
        model = fit(rows.x, rows.y, classes=LABELS, l2=best, embedder=engine.embedder.id, train_hash=file_hash(path))
    figures["model_in_sample"] = per_act(truth, pipeline(model, rows.x))
    figures["model_unguarded_in_sample"] = per_act(truth, pipeline(model, rows.x, guarded=False))
    figures["seconds"] = round(time.perf_counter() - start, 1)
    return ActModel(**{**model.__dict__, "figures": json.dumps(figures, ensure_ascii=False)}), figures


ENGINE_ACTS = tuple(label for label in LABELS if label not in BEFORE_ENGINE)  # what the model chooses among
# A model that can say fewer of them than this says one thing whatever the turn (the rule reads all of them).
MIN_ENGINE_ACTS = 2


def save_refusal(figures: dict) -> str:
    """Why a model :func:`train` fitted must not replace the one served ("": it may). Refused: one fitted on fewer
    than :data:`MIN_ENGINE_ACTS` of the engine's acts, and one whose cross-validated accuracy (each turn labelled by a
    model fitted without its conversation) is below the rule's on the same turns: it would serve worse than no model.

    >>> save_refusal({"turns": 3, "rule": {"all": 0.33, "n": 3, "detail": 0.33}, "model_cross_validated": {"all": 1.0}})
    "the labelled turns hold 1 of the engine's 5 acts (detail); a model needs 2 or more: label later turns of each act (eval/acts/README.md)"
    """
    seen = [label for label in ENGINE_ACTS if label in figures["rule"]]
    if len(seen) < MIN_ENGINE_ACTS:
        return (
            f"the labelled turns hold {len(seen)} of the engine's {len(ENGINE_ACTS)} acts ({', '.join(seen) or 'none'}); "
            f"a model needs {MIN_ENGINE_ACTS} or more: label later turns of each act (eval/acts/README.md)"
        )
    model, rule = figures["model_cross_validated"]["all"], figures["rule"]["all"]
    if model < rule:
        return (
            f"its cross-validated accuracy {model} is below the rule's {rule} on these {figures['turns']} turns: it "
            "would answer worse than the rule alone; label more turns, or turns the rule gets wrong (eval/acts/README.md)"
        )
    return ""


def evaluate(engine, model: ActModel | None, path: Path) -> dict:
    """Rule vs model act accuracy (per act) on a labelled file, read through the engine."""
    rows = rows_of(engine, read_labelled(path))
    truth = [LABELS[i] for i in rows.y]
    out = {"file": str(path), "rule": per_act(truth, rows.rule)}
    if model is not None:
        out["model"] = per_act(truth, pipeline(model, rows.x))
        out["model_unguarded"] = per_act(truth, pipeline(model, rows.x, guarded=False))
    return out
