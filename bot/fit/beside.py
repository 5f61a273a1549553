"""``python -m bot tune`` with a company's labels: fit them beside the shipped fit (:mod:`bot.engine.beside`).

The shipped calibration and adapter stay as they are: they keep serving the seeds, and the company's pages stay
documents nobody labelled for them. Beside them:

- **The labels' vote.** The company's labelled questions vote for the sections that answered them, as the shipped
  precedents do for the seeds, with the weight the shipped fit chose for its precedents (fitted on 1,414 labels
  where many questions share a section: twenty labels, each mostly the only one for its section, cannot show
  what a vote is worth, only whether it pulls other questions away — below). The vote reaches the company's
  documents only, so each of them gets its own labels' evidence however few, never drowned by the seeds'.
- **The lexical weight of its pages.** The shared rule its pages are ranked by fuses dense and BM25 with the
  lexical weight fitted on the seeds' Chinese FAQ pages; one from :data:`LEXICAL` is chosen on the company's
  labels, every document weighing the same (the mean over documents of their hit@1), the fitted one winning a tie,
  and kept only when the folds by document (below) do better with it than with the fitted one.
- **Cross-validated by document.** Each document's labelled questions are ranked with the lexical weight chosen on
  the other documents' questions, and each question's vote comes from the other labels only. A document whose
  held-out questions lose (hit@1 below the untuned ranking's) keeps the untuned ranking: nothing reaches it.
  With a single document, folds of its questions stand in.

It costs one evidence per labelled question and a ranking per question and candidate: seconds, not the minutes of
a full ``calibrate`` (which refits everything on the seeds' hundreds with the company's twenty among them).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from bot.engine.beside import Beside, Boost
from bot.engine.evidence import Evidence
from bot.engine.precedents import Precedents
from bot.engine.rank import rank
from bot.engine.retrieve import Engine
from bot.fit.calibrate_rows import answers_of
from bot.fit.evaluate import read_cases

# The lexical weights tried for the company's pages (None: the fitted one, the seeds'; first, so it wins a tie).
LEXICAL = (None, 0.0, 0.25, 1.0, 2.0, 4.0)
ROW_FOLDS = 5  # a company with one document: folds of its questions instead of documents
K, TEMPERATURE = 5, 0.05  # the vote's neighbours and softness when the shipped fit stored no precedents


@dataclass(frozen=True)
class _Row:
    query: str
    evidence: Evidence
    answers: frozenset[int]  # the sections that answer it (empty: the company's pages do not)
    document: str  # the company document it is about ("" for a question its pages do not answer)


def company_rows(engine: Engine, paths: list[Path]) -> list[_Row]:
    """The labelled questions of ``paths`` about the documents the fit never saw (:attr:`Engine.hidden`), and the
    ones no section answers (they vote for nothing, so a question like them is pulled nowhere)."""
    rows = []
    for path in paths:
        for case in read_cases(path):
            answers = answers_of(engine, case.expect)
            documents = {engine.sections[n].source for n in answers}
            if answers and not documents <= engine.hidden:
                continue  # about the seeds: the shipped fit already has hundreds of those
            rows.append(_Row(case.query, engine.evidence(case.query), frozenset(answers), min(documents, default="")))
    return rows


def _hits(engine: Engine, rows: list[_Row], votes: list[np.ndarray], reach: np.ndarray, pair: tuple) -> np.ndarray:
    """Per answered row, whether its first section answers it with the vote's weight and the lexical weight of
    ``pair``."""
    weight, lexical = pair
    out = np.zeros(len(rows), dtype=bool)
    for n, (row, vote) in enumerate(zip(rows, votes)):
        if row.answers:
            boost = Boost((weight * vote).astype(np.float32), reach, lexical)
            order = rank(replace(row.evidence, beside=boost), engine.calibration.weights, k=1).order
            out[n] = bool(order) and order[0] in row.answers
    return out


def _choose(table: np.ndarray, rows: list[_Row], keep: np.ndarray) -> int:
    """The row of ``table`` (per candidate, per question: a hit) whose mean per-document hit@1 over the ``keep``
    questions is highest (each document weighs the same; the earlier candidate wins a tie)."""
    documents = sorted({r.document for r, k in zip(rows, keep) if k and r.answers})
    if not documents:
        return 0
    per = [
        np.mean([table[w][[n for n, r in enumerate(rows) if keep[n] and r.document == d]].mean() for d in documents])
        for w in range(len(table))
    ]
    return int(np.flatnonzero(np.isclose(per, max(per)))[0])


def fit_beside(engine: Engine, paths: list[Path], *, say=None) -> tuple[Beside | None, dict]:
    """The company's labels beside the fit, and the figures (None: no document gains; the untuned ranking stays)."""
    say = say or (lambda text: print(text, file=sys.stderr, flush=True))
    started, cpu = time.perf_counter(), time.process_time()
    engine.beside = None  # the votes below are the candidates'; the stored one is replaced
    say("tune: reading the company's labelled questions")
    rows = company_rows(engine, paths)
    answered = [r for r in rows if r.answers]
    documents = sorted({r.document for r in answered})
    figures: dict = {"questions": len(rows), "answered": len(answered), "documents": len(documents)}
    if not answered:
        return None, {**figures, "kept": [], "why": "no labelled question about a document the fit never saw"}
    shipped = engine.calibration.precedents
    k, temperature = (shipped.k, shipped.temperature) if shipped is not None else (K, TEMPERATURE)
    vectors = np.stack([r.evidence.own.query_vector for r in rows])
    keys = tuple(tuple(engine.sections[n].key for n in sorted(r.answers)) for r in rows)
    labels = Precedents(vectors, keys, k=k, temperature=temperature)
    reach = np.array([s.source in documents for s in engine.sections], dtype=bool)
    say(
        f"tune: {len(answered)} answered and {len(rows) - len(answered)} unanswered questions, {len(documents)} documents"
    )
    votes = []
    for n in range(len(rows)):  # each question's vote from the other labels only
        others = labels.subset(np.arange(len(rows)) != n)
        votes.append(np.where(reach, others.vote(vectors[n], engine.catalog.by_key).sections, 0.0).astype(np.float32))
    answered_mask = np.array([bool(r.answers) for r in rows])
    weight = engine.calibration.precedent_weight  # what the shipped fit found its precedents' vote worth
    base = _hits(engine, rows, votes, reach, (0.0, None))
    say(f"tune: untuned: hit@1 on the labelled questions {base[answered_mask].mean():.3f}")
    table = []
    for lexical in LEXICAL:
        table.append(_hits(engine, rows, votes, reach, (weight, lexical)))
        say(
            f"tune: vote {weight}, lexical weight {lexical}: hit@1 (each label's vote from the others) "
            f"{table[-1][answered_mask].mean():.3f}"
        )
    table = np.stack(table)
    # Cross-validated by document: each fold's questions ranked with the weight chosen without them.
    if len(documents) >= 2:
        folds = [np.array([r.document == d for r in rows]) for d in documents]
    else:
        at = np.flatnonzero([bool(r.answers) for r in rows])
        folds = [np.isin(np.arange(len(rows)), at[f::ROW_FOLDS]) for f in range(min(ROW_FOLDS, len(at)))]
    held = np.zeros(len(rows), dtype=bool)
    for fold in folds:
        chosen = _choose(table, rows, ~fold)
        held[fold] = table[chosen][fold]
        say(f"tune: fold of {int(fold.sum())} questions: lexical weight {LEXICAL[chosen]} chosen on the others")
    kept, per_document = [], {}
    for d in documents:
        mine = np.array([r.document == d and bool(r.answers) for r in rows])
        per_document[d] = {"n": int(mine.sum()), "untuned": float(base[mine].mean()), "folds": float(held[mine].mean())}
        if held[mine].sum() >= base[mine].sum():
            kept.append(d)
    # The lexical weight of its own only where the folds improve on the fitted one (each document weighing the same).
    everyone = np.ones(len(rows), dtype=bool)
    improves = _choose(np.stack([table[0], held]), rows, everyone) == 1
    lexical = LEXICAL[_choose(table, rows, everyone)] if improves else None
    figures.update(
        weight=weight,
        lexical=lexical,
        per_document=per_document,
        kept=kept,
        seconds=round(time.perf_counter() - started, 1),
        seconds_cpu=round(time.process_time() - cpu, 1),
    )
    if not kept or (weight <= 0 and lexical is None):
        return None, {**figures, "why": "every document's held-out questions lost: the untuned ranking stays"}
    now = engine.index.manifest.get("sources", {})
    return Beside(labels, weight, {d: now[d] for d in kept}, figures, lexical), figures
