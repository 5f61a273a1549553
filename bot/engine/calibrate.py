"""``python -m bot calibrate``: fit ranking weights, the confidence models and the tier thresholds.

From labelled questions (``eval/*.jsonl``: real questions from public threads, each with its
``url``) and labelled conversations (files whose rows have ``turns``) this

1. picks the ranking weights (BM25, subject and title terms, and the vote of the labelled
   precedents nearest to a question, :mod:`bot.engine.precedents`: its weight, ``k`` and
   temperature) that put an expected section first most often on first turns;
2. fits a logistic regression from :data:`bot.engine.calibration.FEATURES` to "the first
   section answers this question" on first turns, and one from
   :data:`bot.engine.calibration.FOLLOW_FEATURES` on follow-up turns (the conversation is
   replayed through the engine, each turn in the case the earlier turns left);
3. picks the tier thresholds by policy on cross-validated probabilities: at most
   ``max_near_confident`` of out-of-scope questions answered confidently, at most
   ``max_inscope_none`` of in-scope questions shown as "none", at most
   ``max_follow_wrong`` of follow-up turns answered confidently and wrongly;
4. reports every figure cross-validated *by thread or conversation* (no thread in both fit and
   test; each test fold's thresholds chosen on its training folds only; a question's precedents
   never include its own thread or its gathering batch, and a test fold's only the training folds'
   questions), and stores
   the models and the precedents (every labelled first question) beside the index for this embedder.

Everything is computed with the serving functions: :meth:`Engine.evidence` (built on the turn's plan,
:mod:`bot.engine.plan`, exactly as ``ask`` builds it), :func:`rank` and
:func:`judge`'s inputs (:meth:`Engine.features`, :meth:`Engine.follow_features`,
:meth:`Engine.blocked`); nothing here re-implements ranking.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from bot.engine import learned
from bot.engine.calibration import (
    FEATURES,
    FOLLOW_FEATURES,
    Calibration,
    Logistic,
    Weights,
    calibration_path,
    sources_fingerprint,
)
from bot.engine.evaluate import Case as Labelled
from bot.engine.evaluate import hit_matches, read_cases
from bot.engine.labels import check_labelled
from bot.engine.learned import Adapter, adapter_path
from bot.engine.precedents import Precedents
from bot.engine.retrieve import Engine, Evidence, judge, rank
from bot.records import Case

LEXICAL_GRID = (0.0, 0.25, 0.5, 0.75, 1.0)
SUBJECT_GRID = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0)
TITLE_GRID = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5)
PRECEDENT_GRID = (0.0, 0.5, 1.0, 2.0, 4.0)
PRECEDENT_K_GRID = (5, 10)
PRECEDENT_TEMPERATURE_GRID = (0.02, 0.05)
LEARNED_GRID = (0.0, 0.5, 1.0, 2.0, 4.0)
FOLDS = 5
FIT_WORKERS = 2  # adapters fitted at once (one core each)
# A batch's near-domain rate counts in the thresholds' batch average only from this many near questions on: below
# it one question moves the batch's rate by more than the policy's whole margin.
MIN_BATCH_NEAR = 10
# Documents nobody labelled: at most this share of their answerable questions answered confidently with the wrong
# section (the thresholds of :func:`fit_unseen`; a wrong confident answer costs more than a tentative right one).
MAX_UNSEEN_WRONG = 0.03


@dataclass
class Row:
    """One labelled message with its evidence (computed once; ranking variants reuse it)."""

    expect: tuple[dict, ...]
    group: str  # thread or conversation: never split across folds
    evidence: Evidence
    kind: str = ""  # the case's kind (zh, en, trace …) or the conversation's (followup, retry, switch, drift)
    turn: int = 0  # 0 for a first question
    previous_top: str = ""  # key of the previous turn's first section (to count repeats on retries)
    batch: str = ""  # the gathering batch of its file (:func:`batch_of`; "" unknown): never among its own precedents

    @property
    def in_scope(self) -> bool:
        return bool(self.expect)


def batch_of(path: Path) -> str:
    """The gathering batch of a labelled file: files gathered together differ only in the words that say
    what they hold (``real``, ``conversations``, ``inscope``, ``near``, ``more``).

    A question's precedents never come from its own batch while fitting: questions gathered together
    share topics, searches and a labeller's habits, so their votes are stronger there than for
    the threads of a question asked later, and the weights, the model and the thresholds would trust
    them too much (measured: fitted with only its own thread left out, the model answered 22 % of a
    fresh batch's near-domain questions confidently where cross-validation said 8 %).

    >>> [batch_of(Path(f"eval/{n}.jsonl")) for n in ("real_more4_a", "conversations_real4_a", "real_inscope", "real_near")]
    ['4_a', '4_a', '0', '0']
    """
    return re.sub(r"conversations|real|inscope|near|more", "", path.stem).strip("_-") or "0"


def read_labelled(paths: list[Path]) -> tuple[list[Labelled], list[str], list[dict], dict]:
    """Single questions (with their thread, ``thread@batch``) and conversations from JSON-lines files."""
    check_labelled(paths)  # a bad line is named with its file and line before any work
    cases: list[Labelled] = []
    groups: list[str] = []
    conversations: list[dict] = []
    fitted_on: dict = {}
    for path in paths:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        if rows and all("turns" in r for r in rows):
            for n, row in enumerate(rows):
                conversations.append(
                    {**row, "group": str(row.get("url") or f"{path.name}#{n}"), "batch": batch_of(path)}
                )
            fitted_on[str(path)] = {"conversations": len(rows), "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
            continue
        file_cases = read_cases(path)
        for case, row in zip(file_cases, rows):
            cases.append(case)
            groups.append(f"{row.get('url') or row.get('thread') or row['query']}@{batch_of(path)}")
        fitted_on[str(path)] = {"cases": len(file_cases), "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    return cases, groups, conversations, fitted_on


def collect(engine: Engine, cases: list[Labelled], groups: list[str], progress: Callable | None = None) -> list[Row]:
    """First-turn evidence for every labelled question."""
    rows = []
    for c, g in zip(cases, groups):
        rows.append(Row(c.expect, g, engine.evidence(c.query), c.kind, batch=g.rpartition("@")[2]))
        if progress is not None:
            progress(1)
    return rows


def collect_turns(
    engine: Engine,
    conversations: list[dict],
    precedents_without: Callable[[str, str], Precedents | None] | None = None,
    adapter_without: Callable[[str], Adapter | None] | None = None,
    progress: Callable | None = None,
) -> tuple[list[Row], list[Row]]:
    """(first turns, later turns) of every conversation, each turn's evidence in the case the
    earlier turns left, replayed with the engine as it serves (its current calibration).
    ``precedents_without(thread, batch)``: the precedents a conversation is replayed with (never its own
    thread or batch)."""
    firsts: list[Row] = []
    later: list[Row] = []
    serving, serving_adapter = engine.calibration, engine.adapter
    try:
        for conversation in conversations:
            if precedents_without is not None:
                engine.calibration = replace(
                    serving, precedents=precedents_without(conversation["group"], conversation.get("batch", ""))
                )
            if adapter_without is not None:
                engine.adapter = adapter_without(conversation.get("batch", ""))
            _replay(engine, conversation, firsts, later)
            if progress is not None:
                progress(len(conversation["turns"]))
    finally:
        engine.calibration, engine.adapter = serving, serving_adapter
    return firsts, later


def _replay(engine: Engine, conversation: dict, firsts: list[Row], later: list[Row]) -> None:
    case = Case()
    previous_top = ""
    for n, turn in enumerate(conversation["turns"]):
        evidence = engine.evidence(turn["query"], case)
        row = Row(
            tuple(turn.get("expect") or ()),
            conversation["group"],
            evidence,
            conversation.get("kind", ""),
            n,
            previous_top,
            conversation.get("batch", ""),
        )
        (firsts if n == 0 else later).append(row)
        # What Engine.ask does, on the evidence already computed (its plan included): the case the next turn sees.
        ranking = rank(evidence, engine.calibration.weights)
        answer = engine.answer(evidence, ranking, judge(engine, evidence, ranking, engine.calibration))
        previous_top = answer.hits[0].section.key if answer.hits else ""
        case = answer.case


def _matches(engine: Engine, n: int, expect: tuple[dict, ...]) -> bool:
    section = engine.sections[n]
    hit = {"source": section.source, "section": section.heading}
    return any(hit_matches(hit, e) for e in expect)


def precedents_of(engine: Engine, rows: list[Row]) -> Precedents:
    """Every labelled first question as a precedent: its own search vector and the sections that answer it."""
    vectors = np.array(
        [
            r.evidence.own.query_vector
            if r.evidence.own is not None
            else np.zeros(engine.embedder.dim, dtype=np.float32)
            for r in rows
        ],
        dtype=np.float32,
    )
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
    answers = tuple(
        tuple(engine.sections[n].key for n in range(len(engine.sections)) if _matches(engine, n, r.expect))
        for r in rows
    )
    return Precedents(vectors, answers)


def questions_of(engine: Engine, rows: list[Row]) -> tuple[np.ndarray, list[list[int]]]:
    """Every labelled first question's search vector and the sections that answer it (none: near-domain)."""
    vectors = np.array(
        [
            r.evidence.own.query_vector if r.evidence.own is not None else np.zeros(engine.embedder.dim, np.float32)
            for r in rows
        ],
        dtype=np.float32,
    )
    answers = [[n for n in range(len(engine.sections)) if _matches(engine, n, r.expect)] for r in rows]
    return vectors, answers


def fit_adapter(engine: Engine, vectors: np.ndarray, answers: list[list[int]], **kwargs) -> Adapter:
    """An adapter on these questions over the engine's knowledge base (its retrieval keys)."""
    keys, owners = engine._key_vectors
    return learned.fit(vectors, answers, keys, owners, len(engine.sections), **kwargs)


def learned_without_batch(
    engine: Engine, rows: list[Row], fit: Callable[..., Adapter] = fit_adapter
) -> tuple[list[Row], dict[str, Adapter]]:
    """``rows`` with learned scores from adapters that never saw their gathering batch: one adapter per batch,
    fitted on every other batch's questions (as the precedents never vote within a batch, :func:`_may_vote`).
    Returns the rows and the adapter of each batch (the conversations' later turns are replayed with it)."""
    vectors, answers = questions_of(engine, rows)
    batches = np.array([r.batch for r in rows])
    from concurrent.futures import ThreadPoolExecutor

    def without(batch: str) -> Adapter | None:
        others = np.flatnonzero(batches != batch)
        return fit(engine, vectors[others], [answers[i] for i in others]) if len(others) else None

    # Each fit trains on one core (torch releases the GIL): two at a time on a two-core host.
    with ThreadPoolExecutor(max_workers=FIT_WORKERS) as pool:
        fitted = dict(zip(sorted(set(batches)), pool.map(without, sorted(set(batches)))))
    adapters: dict[str, Adapter] = {batch: a for batch, a in fitted.items() if a is not None}
    return [replace(r, evidence=engine.with_learned(r.evidence, adapters.get(r.batch))) for r in rows], adapters


def _may_vote(groups: np.ndarray, batches: np.ndarray, group: str, batch: str) -> np.ndarray:
    """Which labelled questions may vote for one of thread ``group`` in ``batch`` while fitting: none of its own
    thread, none of its gathering batch (:func:`batch_of`; ``""``: unknown, so only the thread is left out).

    >>> _may_vote(np.array(["t1", "t2", "t3"]), np.array(["4_a", "4_a", "4_b"]), "t1", "4_a").tolist()
    [False, False, True]
    >>> _may_vote(np.array(["t1", "t2"]), np.array(["", ""]), "t1", "").tolist()
    [False, True]
    """
    return (groups != group) & ((batches != batch) | (batch == ""))


def voted(engine: Engine, rows: list[Row], precedents: Precedents | None, pool: np.ndarray | None = None) -> list[Row]:
    """``rows`` (the rows ``precedents`` were made from) with the precedents' vote, each row's drawn from ``pool``
    (default: all) without its own thread or gathering batch, as a question asked later would get."""
    if precedents is None:
        return rows
    groups = np.array([r.group for r in rows])
    batches = np.array([r.batch for r in rows])
    pool = np.ones(len(rows), dtype=bool) if pool is None else pool
    return [
        replace(
            r,
            evidence=engine.with_precedents(
                r.evidence, precedents, pool & _may_vote(groups, batches, r.group, r.batch)
            ),
        )
        for r in rows
    ]


def _ranking_quality(engine: Engine, rows: list[Row], weights: Weights) -> tuple[float, float]:
    hit1 = hit3 = 0
    scored = [r for r in rows if r.in_scope]
    for r in scored:
        order = rank(r.evidence, weights, k=3).order
        ok = [_matches(engine, n, r.expect) for n in order]
        hit1 += bool(ok and ok[0])
        hit3 += any(ok)
    n = max(len(scored), 1)
    return hit1 / n, hit3 / n


def choose_weights(
    engine: Engine, rows: list[Row], precedents: Precedents | None = None, pool: np.ndarray | None = None
) -> tuple[Weights, Precedents | None]:
    """Best hit@1 (then hit@3) on the ``pool`` rows (default: all), ties broken towards smaller weights
    (simpler ranking): first the words' weights, then the precedents' weight, ``k`` and temperature, the
    precedents drawn from the pool without the question's own thread or batch (:func:`voted`)."""
    scored = [r for n, r in enumerate(rows) if pool is None or pool[n]]
    best, best_key = Weights(0.5, 0.0, 0.0), (-1.0, -1.0)
    for tw in TITLE_GRID:
        for lw in LEXICAL_GRID:
            for sw in SUBJECT_GRID:
                weights = Weights(lw, sw, tw)
                key = _ranking_quality(engine, scored, weights)
                if key > best_key:
                    best, best_key = weights, key
    chosen = precedents
    for k in PRECEDENT_K_GRID if precedents is not None else ():
        for temperature in PRECEDENT_TEMPERATURE_GRID:
            candidate = precedents.with_params(k, temperature)
            with_votes = [r for n, r in enumerate(voted(engine, rows, candidate, pool)) if pool is None or pool[n]]
            for pw in PRECEDENT_GRID[1:]:
                weights = replace(best, precedent=pw)
                key = _ranking_quality(engine, with_votes, weights)
                if key > best_key:
                    best, best_key, chosen = weights, key, candidate
    if any(r.evidence.learned is not None for r in scored):
        # The learned relevance (each row's from an adapter fitted without its batch, :func:`learned_without_batch`).
        with_votes = [r for n, r in enumerate(voted(engine, rows, chosen, pool)) if pool is None or pool[n]]
        base = best
        for lw in LEARNED_GRID[1:]:
            weights = replace(base, learned=lw)
            key = _ranking_quality(engine, with_votes, weights)
            if key > best_key:
                best, best_key = weights, key
    return best, chosen


def first_features(engine: Engine, row: Row, weights: Weights) -> tuple[list[float], int, bool, bool]:
    """(feature vector, top section, blocked, top is right) for a first turn."""
    order = rank(row.evidence, weights).order
    if not order:
        return [0.0] * len(FEATURES), -1, True, False
    top = order[0]
    feats = engine.features(row.evidence, row.evidence.own, top)
    # NaN: no adapter (a constant column the model gives no weight).
    vector = [0.0 if math.isnan(feats[name]) else feats[name] for name in FEATURES]
    return vector, top, engine.blocked(row.evidence, top), _matches(engine, top, row.expect)


def follow_features(engine: Engine, row: Row, weights: Weights) -> tuple[list[float], int, bool, bool, list[int]]:
    """(feature vector, top section, blocked, top is right, first three) for a follow-up turn."""
    order = rank(row.evidence, weights).order
    if not order:
        return [0.0] * len(FOLLOW_FEATURES), -1, True, False, []
    top = order[0]
    feats = engine.follow_features(row.evidence, top)
    return (
        [feats[name] for name in FOLLOW_FEATURES],
        top,
        engine.blocked(row.evidence, top),
        _matches(engine, top, row.expect),
        list(order[:3]),
    )


def _fit(x: np.ndarray, y: np.ndarray):
    from sklearn.linear_model import LogisticRegression

    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    model = LogisticRegression(max_iter=2000)
    model.fit((x - mean) / scale, y)
    return mean, scale, model


def _predict(fitted, x: np.ndarray) -> np.ndarray:
    mean, scale, model = fitted
    return model.predict_proba((x - mean) / scale)[:, 1]


def _thresholds(
    p: np.ndarray,
    y: np.ndarray,
    hard: np.ndarray,
    max_near_confident: float,
    max_inscope_none: float,
    batches: np.ndarray | None = None,
) -> tuple[float, float]:
    """Answer threshold: the lowest that keeps out-of-scope confident answers within policy, pooled and on
    average over the gathering batches (each with at least ``MIN_BATCH_NEAR`` near-domain questions).
    None threshold: the highest that keeps in-scope "none" within policy (and below the answer threshold).

    The promise is about a batch gathered after fitting. Each gathering batch is one such batch, so the mean of
    their rates estimates the next one's; the pooled rate is ruled by the largest, easiest batch (178 near
    questions at 1 % while the batches gathered later ran at 4-37 %: pooled 8 %, a fresh batch 14 %).

    >>> p = np.array([0.9, 0.8, 0.7, 0.6, 0.5] + [0.55] * 2 + [0.1] * 8 + [0.1] * 30)
    >>> y = np.array([1] * 5 + [0] * 40)
    >>> b = np.array(["a"] * 15 + ["b"] * 30)
    >>> _thresholds(p, y, np.zeros(45, bool), 0.06, 0.0)[0]  # pooled: 2 of 40 near above 0.55 is within 6 %
    0.5
    >>> _thresholds(p, y, np.zeros(45, bool), 0.06, 0.0, b)[0]  # batches: (2/10 + 0/30) / 2 = 10 % is not
    0.6
    """
    near = (y == 0) & ~hard
    every = np.ones(len(p), dtype=bool)
    own = [] if batches is None else [batches == b for b in np.unique(batches)]
    own = [s for s in own if ((y == 0) & s).sum() >= MIN_BATCH_NEAR]

    def share(t: float, among: np.ndarray) -> float:
        return (near & among & (p >= t)).sum() / max(int(((y == 0) & among).sum()), 1)

    candidates = np.unique(np.concatenate([p, [0.0, 1.0]]))
    answer = 1.0
    for t in candidates:
        if share(t, every) <= max_near_confident and (
            not own or np.mean([share(t, s) for s in own]) <= max_near_confident
        ):
            answer = float(t)
            break
    inscope = np.sort(p[y == 1])
    allowed = int(np.floor(max_inscope_none * len(inscope)))
    none = float(inscope[allowed]) if len(inscope) > allowed else 0.0
    return answer, min(none, answer)


def _follow_thresholds(
    p: np.ndarray, right: np.ndarray, hard: np.ndarray, max_follow_wrong: float
) -> tuple[float, float]:
    """Answer threshold: the lowest that keeps confident wrong follow-up turns within policy; none: never
    below the lowest right one (a follow-up with any evidence is shown as tentative, not as nothing)."""
    n = max(len(p), 1)
    candidates = np.unique(np.concatenate([p, [0.0, 1.0]]))
    answer = 1.0
    for t in candidates:
        if ((p >= t) & ~right & ~hard).sum() / n <= max_follow_wrong:
            answer = float(t)
            break
    none = float(p[right].min()) if right.any() else 0.0
    return answer, min(none, answer)


def _tiers(p: np.ndarray, hard: np.ndarray, x: np.ndarray, answer: float, none: float) -> list[str]:
    model = replace(Calibration.default(), answer_threshold=answer, none_threshold=none)
    margin, coverage = x[:, FEATURES.index("margin")], x[:, FEATURES.index("coverage")]
    return [
        model.tier(float(q), hard_uncovered=bool(h), margin=float(m), coverage=float(c))
        for q, h, m, c in zip(p, hard, margin, coverage)
    ]


def _ece(p: np.ndarray, y: np.ndarray, bins: int = 10) -> float:
    edges = np.linspace(0, 1, bins + 1)
    total = 0.0
    for lo, hi in zip(edges[:-1], edges[1:]):
        inside = (p >= lo) & ((p < hi) if hi < 1 else (p <= hi))
        if inside.any():
            total += inside.sum() / len(p) * abs(p[inside].mean() - y[inside].mean())
    return float(total)


def _folds(groups: list[str], k: int) -> list[np.ndarray]:
    """Group k-fold: every thread's cases in one fold (deterministic: by hash of the thread)."""
    fold_of = {g: int(hashlib.sha1(g.encode()).hexdigest(), 16) % k for g in set(groups)}
    ids = np.array([fold_of[g] for g in groups])
    return [np.where(ids == f)[0] for f in range(k)]


def _share(mask: np.ndarray, among: np.ndarray) -> float | None:
    return round(float(mask[among].mean()), 4) if among.any() else None


def cross_validate(engine: Engine, rows: list[Row], policy: dict, precedents: Precedents | None = None) -> dict:
    """First-turn figures from weights, models, thresholds and precedents that never saw the test fold's threads."""
    groups = [r.group for r in rows]
    y = np.array([1 if r.in_scope else 0 for r in rows])
    p_out = np.zeros(len(rows))
    tiers_out: list[str] = [""] * len(rows)
    hit1_out = np.zeros(len(rows), dtype=bool)
    hit3_out = np.zeros(len(rows), dtype=bool)
    for test in _folds(groups, FOLDS):
        if not len(test):
            continue
        train = np.setdiff1d(np.arange(len(rows)), test)
        pool = np.zeros(len(rows), dtype=bool)
        pool[train] = True
        weights, fold_precedents = choose_weights(engine, rows, precedents, pool)
        fold_rows = voted(engine, rows, fold_precedents, pool)
        feats = [first_features(engine, r, weights) for r in fold_rows]
        x = np.array([f[0] for f in feats])
        hard = np.array([f[2] for f in feats])
        # Thresholds from out-of-fold predictions *within* the training threads.
        p_inner = np.zeros(len(train))
        for inner_test in _folds([groups[i] for i in train], FOLDS):
            inner_train = np.setdiff1d(np.arange(len(train)), inner_test)
            if len(inner_test) and len(set(y[train][inner_train])) == 2:
                p_inner[inner_test] = _predict(_fit(x[train][inner_train], y[train][inner_train]), x[train][inner_test])
        batches = np.array([rows[i].batch for i in train])
        answer, none = _thresholds(p_inner, y[train], hard[train], batches=batches, **policy)
        p_out[test] = _predict(_fit(x[train], y[train]), x[test])
        for i, tier in zip(test, _tiers(p_out[test], hard[test], x[test], answer, none)):
            tiers_out[i] = tier
        for i in test:
            if rows[i].in_scope:
                order = rank(fold_rows[i].evidence, weights, k=3).order
                ok = [_matches(engine, n, rows[i].expect) for n in order]
                hit1_out[i], hit3_out[i] = bool(ok and ok[0]), any(ok)
    inscope, near = y == 1, y == 0
    tiers = np.array(tiers_out)
    return {
        "n_cases": len(rows),
        "n_threads": len(set(groups)),
        "n_in_scope": int(inscope.sum()),
        "n_out_of_scope": int(near.sum()),
        "out_of_scope_not_confident": _share(tiers != "answer", near),
        "out_of_scope_none": _share(tiers == "none", near),
        "in_scope_confident": _share(tiers == "answer", inscope),
        "in_scope_not_confident": _share(tiers != "answer", inscope),
        "in_scope_none": _share(tiers == "none", inscope),
        "in_scope_hit@1": _share(hit1_out, inscope),
        "in_scope_hit@3": _share(hit3_out, inscope),
        "ece": round(_ece(p_out, y), 4),
        "reliability": _reliability(p_out, y),
        "folds": FOLDS,
    }


def document_of(engine: Engine, row: Row, documents: list[str]) -> str:
    """The document a labelled question is held out with: the first one that answers it; a near-domain question
    (or one whose answer is gone) goes with a document chosen by its thread, so every fold has some.

    >>> class E: sections = []
    >>> document_of(E(), Row((), "t1", None), ["a.md", "b.md"]) in ("a.md", "b.md")
    True
    """
    for n in range(len(engine.sections)):
        if row.expect and _matches(engine, n, row.expect):
            return engine.sections[n].source
    return documents[int(hashlib.sha1(row.group.encode()).hexdigest(), 16) % len(documents)]


def _unseen_thresholds(
    p: np.ndarray,
    y: np.ndarray,
    right: np.ndarray,
    hard: np.ndarray,
    documents: np.ndarray,
    max_near_confident: float,
    max_inscope_none: float,
    max_wrong_confident: float = MAX_UNSEEN_WRONG,
    far: np.ndarray | None = None,
) -> tuple[float, float]:
    """Answer threshold for documents nobody labelled: the lowest that keeps near-domain questions answered
    confidently within policy (pooled and on the average held-out document) and in-scope questions answered
    confidently with the wrong section within ``max_wrong_confident``; none: the highest that shows at most
    ``max_inscope_none`` of the answerable questions as "none" among those ``far`` from everything (margin <= 0 or
    no known word: the other condition of "none"; default all).

    >>> p = np.array([0.9, 0.8, 0.7, 0.6, 0.2, 0.1]); y = np.array([1, 1, 1, 0, 0, 0])
    >>> right = np.array([True, False, True, False, False, False]); z = np.zeros(6, bool); d = np.array(["a"] * 6)
    >>> _unseen_thresholds(p, y, right, z, d, 0.34, 0.0, 0.34)[0], _unseen_thresholds(p, y, right, z, d, 0.34, 0.0, 0.0)[0]
    (0.6, 0.9)
    """
    near = (y == 0) & ~hard
    wrong = (y == 1) & ~right & ~hard
    groups = [documents == d for d in np.unique(documents)]
    groups = [g for g in groups if ((y == 0) & g).sum() >= MIN_BATCH_NEAR]

    def near_share(t: float, among: np.ndarray) -> float:
        return (near & among & (p >= t)).sum() / max(int(((y == 0) & among).sum()), 1)

    every = np.ones(len(p), dtype=bool)
    answer = 1.0
    for t in np.unique(np.concatenate([p, [0.0, 1.0]])):
        if (
            near_share(t, every) <= max_near_confident
            and (not groups or np.mean([near_share(t, g) for g in groups]) <= max_near_confident)
            and (wrong & (p >= t)).sum() / max(int((y == 1).sum()), 1) <= max_wrong_confident
        ):
            answer = float(t)
            break
    # "none" needs nothing close as well (Calibration.tier): only such answerable questions can be lost to it.
    lost = np.sort(p[(y == 1) & (far if far is not None else True)])
    allowed = int(np.floor(max_inscope_none * int((y == 1).sum())))
    none = float(lost[allowed]) if len(lost) > allowed else 1.0
    return answer, min(none, answer)


def fit_unseen(
    engine: Engine,
    rows: list[Row],
    weights: Weights,
    precedents: Precedents | None,
    policy: dict,
    progress: Callable[[int], None] | None = None,
    *,
    lazy: bool = False,
) -> tuple[dict | None, dict]:
    """The first-turn model for documents nobody labelled, fitted leave-one-document-out.

    Each document's questions (and a share of the near-domain ones) are scored with that document *hidden*
    (:attr:`Engine.hidden`: its curated phrasings ignored, its sections ranked by the shared rule,
    :func:`bot.engine.retrieve.gate`) and with precedents that never answered it (nor share the question's thread or
    batch), without the adapter (it learned today's sections). The model's target is "the first section answers it"
    (a wrong section from an unlabelled document is the failure to avoid); thresholds by the near-domain policy and
    at most :data:`MAX_UNSEEN_WRONG` confident wrong, on probabilities each from a model fitted without that
    document. Returns the stored model (None: fewer than two documents) and its held-out figures."""
    documents = sorted({s.source for s in engine.sections})
    if len(documents) < 2 or not rows:
        return None, {}
    doc = np.array([document_of(engine, r, documents) for r in rows])
    answers_of = [
        {engine.sections[n].source for n in range(len(engine.sections)) if _matches(engine, n, r.expect)} for r in rows
    ]
    groups = np.array([r.group for r in rows])
    batches = np.array([r.batch for r in rows])
    held: list[Row | None] = [None] * len(rows)
    try:
        for document in documents:
            engine.hidden = frozenset({document})
            never_answered = np.array([document not in a for a in answers_of], dtype=bool)
            for i in np.flatnonzero(doc == document):
                r = rows[i]
                computed = r.evidence.own is not None or (lazy and not r.evidence.empty)
                evidence = engine.evidence(r.evidence.text) if computed else r.evidence
                if precedents is not None:
                    evidence = engine.with_precedents(
                        evidence, precedents, never_answered & _may_vote(groups, batches, r.group, r.batch)
                    )
                held[i] = replace(r, evidence=evidence)
                if progress is not None:
                    progress(1)
    finally:
        engine.hidden = frozenset()
    feats = [first_features(engine, r, weights) for r in held]
    x = np.array([f[0] for f in feats])
    x[:, FEATURES.index("learned_top")] = 0.0  # served without the adapter
    hard = np.array([f[2] for f in feats])
    right = np.array([f[3] for f in feats])
    y = np.array([1 if r.in_scope else 0 for r in rows])
    target = (right & (y == 1)).astype(int)
    if len(set(target)) < 2:
        return None, {}
    p_cv = np.zeros(len(rows))
    for document in documents:
        test, train = doc == document, doc != document
        if test.any() and len(set(target[train])) == 2:
            p_cv[test] = _predict(_fit(x[train], target[train]), x[test])
    # Figures: each document's tiers from thresholds chosen on the other documents' held-out probabilities.
    confident = np.zeros(len(rows), dtype=bool)
    for document in documents:
        test, train = doc == document, doc != document
        answer, _ = _unseen_thresholds(p_cv[train], y[train], right[train], hard[train], doc[train], **policy)
        confident[test] = (p_cv[test] >= answer) & ~hard[test]
    far = (x[:, FEATURES.index("margin")] <= 0) | (x[:, FEATURES.index("coverage")] <= 0)
    answer, none = _unseen_thresholds(p_cv, y, right, hard, doc, **policy, far=far)
    mean, scale, model = _fit(x, target)
    inscope, near = y == 1, y == 0
    figures = {
        "documents": len(documents),
        "n_in_scope": int(inscope.sum()),
        "n_out_of_scope": int(near.sum()),
        "in_scope_hit@1": _share(right, inscope),
        "in_scope_confident_right": _share(confident & right, inscope),
        "in_scope_confident_wrong": _share(confident & ~right, inscope),
        "out_of_scope_confident": _share(confident, near),
        "ece": round(_ece(p_cv, target), 4),
    }
    stored = {
        "mean": [float(v) for v in mean],
        "scale": [float(v) for v in scale],
        "coef": [float(v) for v in model.coef_[0]],
        "intercept": float(model.intercept_[0]),
        "answer_threshold": answer,
        "none_threshold": none,
    }
    return stored, figures


def cross_validate_follow(engine: Engine, rows: list[Row], weights: Weights, max_follow_wrong: float) -> dict:
    """Follow-up figures, cross-validated by conversation: per turn hit@1/hit@3 (turns with an
    answer), confident wrong (all turns), [] turns not answered confidently, repeats on retry."""
    if not rows:
        return {}
    groups = [r.group for r in rows]
    feats = [follow_features(engine, r, weights) for r in rows]
    x = np.array([f[0] for f in feats])
    hard = np.array([f[2] for f in feats])
    right = np.array([f[3] for f in feats])
    tops = [f[1] for f in feats]
    p_out = np.zeros(len(rows))
    answer_out = np.zeros(len(rows), dtype=bool)
    for test in _folds(groups, FOLDS):
        train = np.setdiff1d(np.arange(len(rows)), test)
        if not len(test) or len(set(right[train])) < 2:
            continue
        p_inner = np.zeros(len(train))
        for inner_test in _folds([groups[i] for i in train], FOLDS):
            inner_train = np.setdiff1d(np.arange(len(train)), inner_test)
            if len(inner_test) and len(set(right[train][inner_train])) == 2:
                p_inner[inner_test] = _predict(
                    _fit(x[train][inner_train], right[train][inner_train]), x[train][inner_test]
                )
        answer, _ = _follow_thresholds(p_inner, right[train], hard[train], max_follow_wrong)
        p_out[test] = _predict(_fit(x[train], right[train]), x[test])
        answer_out[test] = (p_out[test] >= answer) & ~hard[test]
    expect = np.array([r.in_scope for r in rows])
    hit3 = np.array([any(_matches(engine, n, r.expect) for n in f[4]) for r, f in zip(rows, feats)])
    retry = np.array([r.evidence.move == "retry" for r in rows])
    repeats = sum(
        1
        for r, top in zip(rows, tops)
        if r.kind == "retry" and top >= 0 and r.previous_top and engine.sections[top].key == r.previous_top
    )
    return {
        "n_turns": len(rows),
        "n_conversations": len(set(groups)),
        "n_with_answer": int(expect.sum()),
        "follow_hit@1": _share(right, expect),
        "follow_hit@3": _share(hit3, expect),
        "follow_confident": _share(answer_out, expect),
        "follow_confident_wrong": round(float((answer_out & ~right).mean()), 4),
        "follow_empty_not_confident": _share(~answer_out, ~expect),
        "retry_turns": int(retry.sum()),
        "repeat_on_retry": repeats,
        "follow_ece": round(_ece(p_out, right.astype(int)), 4),
    }


def _reliability(p: np.ndarray, y: np.ndarray, bins: int = 10) -> list[dict]:
    out = []
    edges = np.linspace(0, 1, bins + 1)
    for lo, hi in zip(edges[:-1], edges[1:]):
        inside = (p >= lo) & ((p < hi) if hi < 1 else (p <= hi))
        if inside.any():
            out.append(
                {
                    "bin": [round(float(lo), 2), round(float(hi), 2)],
                    "n": int(inside.sum()),
                    "mean_p": round(float(p[inside].mean()), 4),
                    "share_in_scope": round(float(y[inside].mean()), 4),
                }
            )
    return out


def fit_follow(engine: Engine, rows: list[Row], weights: Weights, max_follow_wrong: float) -> Logistic | None:
    """The follow-up model on every follow-up turn, thresholds from cross-validated probabilities."""
    feats = [follow_features(engine, r, weights) for r in rows]
    if not feats:
        return None
    x = np.array([f[0] for f in feats])
    hard = np.array([f[2] for f in feats])
    right = np.array([f[3] for f in feats])
    if len(set(right)) < 2:
        return None
    p_cv = np.zeros(len(rows))
    for test in _folds([r.group for r in rows], FOLDS):
        train = np.setdiff1d(np.arange(len(rows)), test)
        if len(test) and len(set(right[train])) == 2:
            p_cv[test] = _predict(_fit(x[train], right[train]), x[test])
    answer, none = _follow_thresholds(p_cv, right, hard, max_follow_wrong)
    mean, scale, model = _fit(x, right)
    return Logistic(
        FOLLOW_FEATURES,
        tuple(float(v) for v in mean),
        tuple(float(v) for v in scale),
        tuple(float(v) for v in model.coef_[0]),
        float(model.intercept_[0]),
        answer,
        none,
    )


def calibrate(
    engine: Engine,
    paths: list[Path],
    *,
    max_near_confident: float = 0.08,
    max_inscope_none: float = 0.02,
    max_follow_wrong: float = 0.05,
    save: bool = True,
    tune: bool = False,
    progress: bool = False,
) -> Calibration:
    """Fit on every labelled case and conversation, report cross-validated figures, store beside the index.

    ``tune``: first fit the learned relevance (:mod:`bot.engine.learned`) on every labelled first question and
    store it beside the calibration; without it the engine's adapter is used as loaded (None: calibrate without).
    Either way each question's learned score while fitting comes from an adapter fitted without its batch."""
    cases, groups, conversations, fitted_on = read_labelled(paths)
    turns = sum(len(c["turns"]) for c in conversations)
    # Every labelled question is embedded once: the leave-one-document-out fit reads them again.
    cache_size, engine.query_cache_size = (
        engine.query_cache_size,
        max(engine.query_cache_size, 4 * (len(cases) + turns)),
    )
    try:
        return _calibrate(
            engine,
            paths,
            cases,
            groups,
            conversations,
            fitted_on,
            max_near_confident,
            max_inscope_none,
            max_follow_wrong,
            save,
            tune,
            _Progress(len(cases) + 2 * turns, progress),
        )
    finally:
        engine.query_cache_size = cache_size


class _Progress:
    """One progress bar over the whole fit (tqdm, on stderr), counted in labelled messages read; silent when off."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.bar = None
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc="tune", unit="msg", dynamic_ncols=True)

    def __call__(self, n: int = 1) -> None:
        if self.bar is not None:
            self.bar.update(n)

    def stage(self, name: str, more: int = 0) -> None:
        if self.bar is not None:
            self.bar.set_description(f"tune: {name}")
            if more:
                self.bar.total += more
                self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

    def __enter__(self) -> _Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _calibrate(
    engine: Engine,
    paths: list[Path],
    cases: list[Labelled],
    groups: list[str],
    conversations: list[dict],
    fitted_on: dict,
    max_near_confident: float,
    max_inscope_none: float,
    max_follow_wrong: float,
    save: bool,
    tune: bool,
    progress: _Progress,
) -> Calibration:
    sources_hash = sources_fingerprint(engine.index.manifest.get("sources", {}))
    # The evidence is computed without the stored precedents (they include these very questions) and without the
    # stored adapter (it learned from them); each fold, thread and batch gets its own below.
    serving = engine.calibration
    engine.calibration = replace(engine.calibration, precedents=None)
    serving_adapter, engine.adapter = engine.adapter, None
    timings: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        timings[name] = round(now - clock, 1)
        clock = now

    stored = _load_vectors(engine)
    firsts_text = [engine.read(c.query).search_text for c in cases]
    firsts_text += [engine.read(c["turns"][0]["query"]).search_text for c in conversations if c["turns"]]
    engine.remember({**_precedent_vectors(serving, fitted_on, firsts_text), **stored})
    texts = [engine.read(c.query).search_text for c in cases]
    texts += [engine.read(t["query"]).search_text for c in conversations for t in c["turns"]]
    progress.stage("embedding the labelled messages", more=len(texts))
    progress(len(texts) - engine.prefetch(texts, progress=progress))  # the ones remembered from an earlier fit
    lap("embed")
    progress.stage("reading the labelled questions")
    rows = collect(engine, cases, groups, progress)
    if conversations:
        firsts, _ = collect_turns(engine, conversations, progress=progress)
        rows += firsts
    lap("read")
    if not any(r.in_scope for r in rows) or all(r.in_scope for r in rows):
        engine.adapter = serving_adapter
        raise ValueError(
            f"{', '.join(map(str, paths))}: need both in-scope (non-empty expect) and "
            "out-of-scope (empty expect) cases to calibrate"
        )
    adapter, by_batch, tuned = serving_adapter, {}, {}
    if tune:
        progress.stage("learning the adapter")
        started = time.process_time()
        vectors, answers = questions_of(engine, rows)
        adapter = replace(
            fit_adapter(engine, vectors, answers),
            embedder=engine.embedder.id,
            sources_hash=sources_hash,
            fitted_on=fitted_on,
        )
        tuned = {"seconds_cpu": round(time.process_time() - started, 1), "questions": len(rows)}
    lap("adapter")
    if adapter is not None:
        progress.stage("adapters without each batch")
        started = time.process_time()
        rows, by_batch = learned_without_batch(engine, rows)
        tuned["batches"] = len(by_batch)
        tuned["leave_one_batch_out_seconds_cpu"] = round(time.process_time() - started, 1)
    lap("adapters_by_batch")
    policy = {"max_near_confident": max_near_confident, "max_inscope_none": max_inscope_none}
    all_precedents = precedents_of(engine, rows)
    progress.stage("cross-validating")
    figures = cross_validate(engine, rows, policy, all_precedents) if len({r.group for r in rows}) >= FOLDS else {}
    lap("cross_validate")
    progress.stage("choosing the weights")
    weights, precedents = choose_weights(engine, rows, all_precedents)
    lap("weights")
    feats = [first_features(engine, r, weights) for r in voted(engine, rows, precedents)]
    x = np.array([f[0] for f in feats])
    hard = np.array([f[2] for f in feats])
    y = np.array([1 if r.in_scope else 0 for r in rows])
    # Each batch's probabilities from a model fitted without that batch, so the thresholds hold for a batch gathered
    # later; a company's own labels in one or two files have no batches to leave out: folds of threads then.
    batches = np.array([r.batch for r in rows])
    if len(set(batches)) >= 3:
        folds = [np.where(batches == batch)[0] for batch in np.unique(batches)]
    else:
        folds = _folds([r.group for r in rows], FOLDS)
    p_cv = np.zeros(len(rows))
    for test in folds:
        train = np.setdiff1d(np.arange(len(rows)), test)
        if len(test) and len(set(y[train])) == 2:
            p_cv[test] = _predict(_fit(x[train], y[train]), x[test])
    answer, none = _thresholds(p_cv, y, hard, batches=batches, **policy)
    mean, scale, model = _fit(x, y)
    first = Calibration(
        embedder=engine.embedder.id,
        lexical_weight=weights.lexical,
        subject_weight=weights.subject,
        title_weight=weights.title,
        mean=tuple(float(v) for v in mean),
        scale=tuple(float(v) for v in scale),
        coef=tuple(float(v) for v in model.coef_[0]),
        intercept=float(model.intercept_[0]),
        answer_threshold=answer,
        none_threshold=none,
        fitted_on=fitted_on,
        sources_hash=sources_hash,
        precedent_weight=weights.precedent,
        precedents=precedents,
        learned_weight=weights.learned if adapter is not None else 0.0,
    )
    progress.stage("documents held out", more=len(rows))
    unseen, unseen_figures = fit_unseen(engine, rows, weights, precedents, policy, progress)
    first = replace(first, unseen=unseen)
    lap("documents_held_out")
    progress.stage("replaying conversations")
    follow = None
    if conversations:
        # Follow-up turns are replayed with the first-turn model just fitted: the cases they see are the served ones,
        # but a conversation's first turn never has its own thread or batch among its precedents.
        engine.calibration = first
        threads = np.array([r.group for r in rows])
        batches = np.array([r.batch for r in rows])
        _, later = collect_turns(
            engine,
            conversations,
            lambda thread, batch: (
                precedents.subset(_may_vote(threads, batches, thread, batch)) if precedents is not None else None
            ),
            (lambda batch: by_batch.get(batch)) if adapter is not None else None,
            progress=progress,
        )
        figures.update(cross_validate_follow(engine, later, weights, max_follow_wrong))
        follow = fit_follow(engine, later, weights, max_follow_wrong)
    lap("conversations")
    progress.close()
    if unseen_figures:
        figures["unseen_documents"] = unseen_figures
    figures["seconds"] = timings
    figures["policy"] = {**policy, "max_follow_wrong": max_follow_wrong}
    figures["weights"] = {
        "lexical": weights.lexical,
        "subject": weights.subject,
        "title": weights.title,
        "precedent": weights.precedent,
        "learned": weights.learned,
    }
    if adapter is not None:
        figures["learned"] = {"rank": adapter.up.shape[1], **tuned}
    if precedents is not None:
        figures["precedents"] = {"n": len(precedents), "k": precedents.k, "temperature": precedents.temperature}
    result = replace(first, follow=follow, figures=figures)
    engine.calibration, engine.adapter = result, adapter
    if save:
        path = calibration_path(engine.settings.index_dir, engine.embedder.id)
        if tune and adapter is not None:
            adapter.save(adapter_path(path))
        result.save(path)
    _save_vectors(engine, stored)
    return result


def _precedent_vectors(cal: Calibration, fitted_on: dict, texts: list[str]) -> dict[bytes, np.ndarray]:
    """The first questions' vectors the stored precedents already hold, by search text — only when they were
    fitted on exactly these files (same names, same bytes, so the same questions in the same order).

    >>> p = Precedents(np.eye(2, dtype=np.float32), ((), ()))
    >>> cal = replace(Calibration.default(), precedents=p, fitted_on={"a.jsonl": {"cases": 2, "sha256": "x"}})
    >>> len(_precedent_vectors(cal, {"a.jsonl": {"cases": 2, "sha256": "x"}}, ["q1", "q2"]))
    2
    >>> _precedent_vectors(cal, {"a.jsonl": {"cases": 2, "sha256": "y"}}, ["q1", "q2"])
    {}
    """
    from bot.engine.retrieve import query_key

    if cal.precedents is None or cal.fitted_on != fitted_on or len(cal.precedents) != len(texts):
        return {}
    return {
        query_key(text): vector
        for text, vector in zip(texts, cal.precedents.vectors)
        if float(np.linalg.norm(vector)) > 0.5  # a message with no words was stored as zeros
    }


def add_unseen(
    engine: Engine, paths: list[Path], *, max_near_confident: float = 0.08, max_inscope_none: float = 0.02
) -> Calibration:
    """The engine's calibration with only its model for documents nobody labelled refitted (:func:`fit_unseen`),
    with its ranking weights and precedents as fitted, and stored: what ``tune`` adds, without refitting the rest
    (a calibration fitted before this model existed, on the same files)."""
    cases, groups, conversations, fitted_on = read_labelled(paths)
    serving = engine.calibration
    if not serving.calibrated or serving.fitted_on != fitted_on:
        raise ValueError(f"{paths}: the stored calibration was fitted on other files. Run: python -m bot tune")
    texts = [engine.read(c.query).search_text for c in cases]
    firsts = [c["turns"][0]["query"] for c in conversations if c["turns"]]
    texts += [engine.read(q).search_text for q in firsts]
    cache_size, engine.query_cache_size = engine.query_cache_size, max(engine.query_cache_size, 4 * len(texts))
    try:
        engine.remember(_precedent_vectors(serving, fitted_on, texts))
        queries = [c.query for c in cases] + firsts
        labels = [(c.expect, g, c.kind, g.rpartition("@")[2]) for c, g in zip(cases, groups)]
        labels += [(tuple(c["turns"][0].get("expect") or ()), c["group"], c.get("kind", ""), c.get("batch", ""))
                   for c in conversations if c["turns"]]  # fmt: skip
        # Evidence without scores: fit_unseen computes each row's with its document hidden (``lazy``).
        rows = [
            Row(expect, group, Evidence(text=engine.read(q).text, language=""), kind, batch=batch)
            for q, (expect, group, kind, batch) in zip(queries, labels)
        ]
        policy = {"max_near_confident": max_near_confident, "max_inscope_none": max_inscope_none}
        with _Progress(len(rows), True) as progress:
            unseen, figures = fit_unseen(engine, rows, serving.weights, serving.precedents, policy, progress, lazy=True)
    finally:
        engine.query_cache_size = cache_size
    result = replace(serving, unseen=unseen, figures={**serving.figures, "unseen_documents": figures})
    result.save(calibration_path(engine.settings.index_dir, engine.embedder.id))
    engine.calibration = result
    return result


def vectors_path(engine: Engine) -> Path:
    """Where the labelled messages' query vectors are kept between fits: the user's cache, not the repository
    (``~/.cache/gpu-troubleshooter/<embedder>.queries.npz``; only ``bot/settings.py`` reads the environment)."""
    from bot.engine.calibration import slug

    root = Path.home() / ".cache" / "gpu-troubleshooter"
    return root / f"{slug(engine.embedder.id)}.queries.npz"


def _worth_keeping(engine: Engine) -> bool:
    """The test suite's hashing embedder costs nothing to run again: no file in the user's cache for it."""
    return not engine.embedder.id.startswith("hash:")


def _load_vectors(engine: Engine) -> dict[bytes, np.ndarray]:
    """The query vectors an earlier fit stored (none when missing, unreadable or of another dimension)."""
    if not _worth_keeping(engine):
        return {}
    path = vectors_path(engine)
    try:
        with np.load(path, allow_pickle=False) as data:
            keys, vectors = data["keys"], data["vectors"].astype(np.float32)
    except (OSError, KeyError, ValueError):
        return {}
    if vectors.ndim != 2 or vectors.shape[1] != engine.embedder.dim or len(keys) != len(vectors):
        return {}
    return {bytes.fromhex(str(k)): v for k, v in zip(keys, vectors)}


def _save_vectors(engine: Engine, before: dict[bytes, np.ndarray]) -> None:
    """Every query vector this fit used, for the next fit (a cache: failing to write it only costs time)."""
    vectors = engine.remembered()
    if not _worth_keeping(engine) or not vectors or vectors.keys() == before.keys():
        return
    path = vectors_path(engine)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez(tmp, keys=np.array([k.hex() for k in vectors]), vectors=np.stack(list(vectors.values())))
        tmp.replace(path)
    except OSError:
        pass


def format_figures(cal: Calibration) -> str:
    f = cal.figures
    lines = [
        f"calibrated for {cal.embedder}: weights lexical={cal.lexical_weight} subject={cal.subject_weight} "
        f"title={cal.title_weight} precedent={cal.precedent_weight} learned={cal.learned_weight}"
        + (
            f" (k={cal.precedents.k}, temperature={cal.precedents.temperature}, {len(cal.precedents)} labelled questions)"
            if cal.precedents is not None
            else ""
        )
        + "; "
        f"thresholds answer>={cal.answer_threshold:.3f} none<{cal.none_threshold:.3f}",
        "coefficients (standardised): " + ", ".join(f"{n}={c:+.2f}" for n, c in zip(FEATURES, cal.coef)),
        (
            f"learned relevance: rank {f['learned']['rank']} adapter, {f['learned']}"
            if "learned" in f
            else f"learned relevance: none (ranking and confidence without it). {learned.FIX}"
        ),
    ]
    if cal.follow is not None:
        lines.append(
            f"follow-up model: thresholds answer>={cal.follow.answer_threshold:.3f} "
            f"none<{cal.follow.none_threshold:.3f}; coefficients "
            + ", ".join(f"{n}={c:+.2f}" for n, c in zip(FOLLOW_FEATURES, cal.follow.coef))
        )
    if "n_cases" in f:
        lines.append(
            f"first turns, cross-validated by thread ({f['folds']} folds, {f['n_cases']} cases, {f['n_threads']} "
            f"threads, {f['n_in_scope']} in scope, {f['n_out_of_scope']} out of scope):"
        )
        for key in (
            "out_of_scope_not_confident",
            "out_of_scope_none",
            "in_scope_confident",
            "in_scope_not_confident",
            "in_scope_none",
            "in_scope_hit@1",
            "in_scope_hit@3",
            "ece",
        ):
            lines.append(f"  {key:<28} {f[key]}")
    if "unseen_documents" in f:
        u = f["unseen_documents"]
        lines.append(
            f"documents nobody labelled, each of {u['documents']} held out ({u['n_in_scope']} in scope, "
            f"{u['n_out_of_scope']} out of scope; used when the documents change):"
        )
        for key in (
            "in_scope_hit@1",
            "in_scope_confident_right",
            "in_scope_confident_wrong",
            "out_of_scope_confident",
            "ece",
        ):
            lines.append(f"  {key:<28} {u[key]}")
    if "seconds" in f:
        lines.append("seconds: " + ", ".join(f"{k} {v}" for k, v in f["seconds"].items()))
    if "n_turns" in f:
        lines.append(
            f"follow-up turns, cross-validated by conversation ({f['n_turns']} turns, "
            f"{f['n_conversations']} conversations, {f['n_with_answer']} with an answer):"
        )
        for key in (
            "follow_hit@1",
            "follow_hit@3",
            "follow_confident",
            "follow_confident_wrong",
            "follow_empty_not_confident",
            "retry_turns",
            "repeat_on_retry",
            "follow_ece",
        ):
            lines.append(f"  {key:<28} {f[key]}")
    return "\n".join(lines)


def with_engine_calibration(engine: Engine, cal: Calibration) -> Engine:
    """The same engine using ``cal`` (after a fit, without reloading the index)."""
    engine.calibration = replace(cal)
    return engine
