"""Training and scoring the turn-act model (:mod:`bot.engine.acts`) on labelled conversations.

The labelled turns are read as the product reads them: each conversation's earlier turns answered by
:class:`bot.answer.conversation.Conversation` (so the case a turn is read in is the one a user would have), then the
turn's features and vector in that case. This lives in the answer stage because it replays conversations; the model
itself, and what the engine loads, stay in :mod:`bot.engine.acts`.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from bot.answer.conversation import Conversation
from bot.engine.acts import BEFORE_ENGINE, LABELS, ActModel
from bot.engine.plan import GUARDS, Guard
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


@contextmanager
def rule_only(engine) -> Iterator[None]:
    """The engine with its stored act model set aside (the rule decides every act) while turns are read."""
    kept, engine.acts = engine.acts, None
    try:
        yield
    finally:
        engine.acts = kept


def rows_of(engine, conversations: Sequence[dict], progress: Callable[[int, int], None] | None = None) -> Rows:
    """Every later turn of the conversations, read as the product reads it: the earlier turns answered by
    :class:`bot.answer.conversation.Conversation`, then the turn's features and vector in that case (what the
    plan sees), with the rule pipeline's label (intents first, then :func:`act_of`).

    The earlier turns are answered by the rule alone (:func:`rule_only`), whatever model is stored: the turns read,
    and so the fit, do not depend on the model being replaced (a refit read its cases with the model before it and
    gave other weights each time), and every guard ``--evaluate`` compares is scored on the same cases."""
    with rule_only(engine):
        return _rows_of(engine, conversations, progress)


def _rows_of(engine, conversations: Sequence[dict], progress: Callable[[int, int], None] | None) -> Rows:
    xs, ys, rules, groups, queries, switches = [], [], [], [], [], []
    for c, conversation in enumerate(conversations):
        talk = Conversation(engine)
        for n, turn in enumerate(conversation["turns"]):
            if n > 0 and turn["act"] in LABELS:
                x, rule, switch = _read_turn(engine, turn["query"], talk.case)
                xs.append(x)
                switches.append(switch)
                ys.append(LABELS.index(turn["act"]))
                rules.append(rule)
                groups.append(c)
                queries.append(turn["query"])
            talk.respond(turn["query"])
        if progress is not None:
            progress(c + 1, len(conversations))
    return Rows(
        np.stack(xs), np.array(ys), tuple(rules), np.array(groups), tuple(queries), np.array(switches, dtype=bool)
    )


def read_files(paths: Sequence[Path]) -> tuple[list[dict], str]:
    """The labelled conversations of every file, and one hash of them all (stored with the model)."""
    conversations = [c for path in paths for c in read_labelled(path)]
    digest = hashlib.sha256("".join(file_hash(path) for path in paths).encode()).hexdigest()
    return conversations, digest if len(paths) > 1 else file_hash(paths[0])


def train(
    engine, paths: Path | Sequence[Path] = TRAIN_FILE, *, progress: bool = True, guard: str | None = None
) -> tuple[ActModel, dict]:
    """Read the labelled turns through the engine, choose the L2 weight and the guard (:data:`GUARDS`) by
    cross-validation over whole conversations (``guard``: this one instead of the cross-validated choice), fit on
    every turn; returns the model (its guard stored with it) and its figures (rule vs model, per act and guard)."""
    start = time.perf_counter()
    paths = [paths] if isinstance(paths, Path) else list(paths)
    conversations, digest = read_files(paths)

    def show(done: int, total: int) -> None:
        if progress:
            print(f"\rreading turns: {done}/{total} conversations", end="", file=sys.stderr, flush=True)

    rows = rows_of(engine, conversations, show)
    if progress:
        print(f" ({time.perf_counter() - start:.1f} s)", file=sys.stderr)
    truth = [LABELS[i] for i in rows.y]
    trials: dict[float, dict[str, dict]] = {}
    with _one_thread():
        for l2 in L2_CHOICES:
            said = cross_validate(rows, l2)
            trials[l2] = {g: per_act(truth, labels) for g, labels in said.items()}
            if progress:
                best_guard = max(GUARDS, key=lambda g: trials[l2][g]["all"])
                print(
                    f"l2 {l2:<6} cross-validated accuracy {trials[l2][best_guard]['all']:.3f} ({best_guard}; "
                    f"unguarded {trials[l2]['none']['all']:.3f})",
                    file=sys.stderr,
                )
    # The L2 by the unguarded model's accuracy (what it learned), the guard by the pipeline's (what ships); ties:
    # the stronger penalty, and the guard listed first in GUARDS (the simpler one).
    best = max(L2_CHOICES, key=lambda l2: (trials[l2]["none"]["all"], l2))
    chosen = guard if guard is not None else max(GUARDS, key=lambda g: (trials[best][g]["all"], -GUARDS.index(g)))
    figures = {
        "train_files": [str(p) for p in paths],
        "turns": len(truth),
        "l2": best,
        "guard": str(Guard.parse(chosen)),
        "guard_chosen_by": "--guard" if guard is not None else "cross-validation",
        "rule": per_act(truth, rows.rule),
        "model_cross_validated": trials[best][chosen] if chosen in trials[best] else None,
        "cross_validated_per_guard": {g: trials[best][g] for g in GUARDS},
        "seconds": 0.0,
    }
    with _one_thread():
        model = fit(
            rows.x,
            rows.y,
            classes=LABELS,
            l2=best,
            embedder=engine.embedder.id,
            train_hash=digest,
            guard=Guard.parse(chosen),
        )
    figures["model_in_sample"] = per_act(truth, pipeline(model, rows.x, switch=rows.switch))
    figures["model_unguarded_in_sample"] = per_act(truth, pipeline(model, rows.x, guard=Guard(), switch=rows.switch))
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


def evaluate(engine, model: ActModel | None, path: Path, guard: str | None = None) -> dict:
    """Rule vs model act accuracy (per act) on a labelled file, read through the engine: the model under its stored
    guard (or ``guard``), and under every candidate guard (:data:`GUARDS`) for comparison."""
    rows = rows_of(engine, read_labelled(path))
    truth = [LABELS[i] for i in rows.y]
    out: dict = {"file": str(path), "rule": per_act(truth, rows.rule)}
    if model is not None:
        used = Guard.parse(guard) if guard is not None else model.guard
        out["guard"] = str(used)
        out["model"] = per_act(truth, pipeline(model, rows.x, guard=used, switch=rows.switch))
        out["per_guard"] = {
            g: per_act(truth, pipeline(model, rows.x, guard=Guard.parse(g), switch=rows.switch)) for g in GUARDS
        }
    return out
