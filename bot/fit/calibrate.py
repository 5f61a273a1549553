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

The work is split by what each part holds: :mod:`bot.fit.calibrate_rows` (labelled messages -> evidence),
:mod:`bot.fit.calibrate_weights` (ranking weights, adapters without each batch), :mod:`bot.fit.calibrate_models`
(features and logistic fits), :mod:`bot.fit.calibrate_thresholds` (tier thresholds by policy),
:mod:`bot.fit.calibrate_figures` (cross-validated figures), :mod:`bot.fit.calibrate_unseen` (documents held
out), :mod:`bot.fit.calibrate_cache` (vectors kept between fits); this module runs them in order and stores the
result.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import numpy as np

from bot.engine import learned
from bot.engine.beside import beside_files
from bot.engine.calibration import FEATURES, FOLLOW_FEATURES, Calibration, calibration_path, sources_fingerprint
from bot.engine.learned import adapter_path
from bot.engine.precedents import as_stored
from bot.engine.retrieve import Engine
from bot.fit.calibrate_cache import load_vectors, precedent_vectors, save_vectors, vectors_path
from bot.fit.calibrate_figures import cross_validate, cross_validate_follow
from bot.fit.calibrate_models import FOLDS, first_features, fit_follow, fit_logistic, folds_of, predict
from bot.fit.calibrate_progress import Progress
from bot.fit.calibrate_rows import (
    Labelled,
    Row,
    batch_of,
    collect,
    collect_turns,
    may_vote,
    precedents_of,
    questions_of,
    read_labelled,
    voted,
)
from bot.fit.calibrate_thresholds import MAX_UNSEEN_WRONG, MIN_BATCH_NEAR, fit_thresholds
from bot.fit.calibrate_unseen import fit_unseen
from bot.fit.calibrate_weights import choose_weights, fit_adapter, learned_without_batch

__all__ = [  # what callers and tests import from here, wherever it lives now
    "FOLDS",
    "MAX_UNSEEN_WRONG",
    "MIN_BATCH_NEAR",
    "Row",
    "folds_of",
    "batch_of",
    "calibrate",
    "collect",
    "collect_turns",
    "cross_validate",
    "fit_unseen",
    "format_figures",
    "learned_without_batch",
    "precedents_of",
    "read_labelled",
    "vectors_path",
    "voted",
]


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
    cache_size, engine.queries.size = (
        engine.queries.size,
        max(engine.queries.size, 4 * (len(cases) + turns)),
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
            Progress(len(cases) + 2 * turns, progress),
        )
    finally:
        engine.queries.size = cache_size


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
    progress: Progress,
) -> Calibration:
    sources_hash = sources_fingerprint(engine.index.manifest.get("sources", {}))
    # The evidence is computed without the stored precedents (they include these very questions) and without the
    # stored adapter (it learned from them); each fold, thread and batch gets its own below.
    serving = engine.calibration
    engine.calibration = replace(engine.calibration, precedents=None)
    # Every document is fitted now: none is served as added since the last fit while these rows are read.
    engine.hidden = engine.changed = frozenset()
    # The company's labels fitted beside the previous fit are among these rows: no vote of theirs while they are read.
    engine.beside = None
    serving_adapter, engine.adapter = engine.adapter, None
    timings: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        timings[name] = round(now - clock, 1)
        clock = now

    stored = load_vectors(engine)
    firsts_text = [engine.read(c.query).search_text for c in cases]
    firsts_text += [engine.read(c["turns"][0]["query"]).search_text for c in conversations if c["turns"]]
    engine.remember({**precedent_vectors(serving, fitted_on, firsts_text), **stored})
    texts = [engine.read(c.query).search_text for c in cases]
    texts += [engine.read(t["query"]).search_text for c in conversations for t in c["turns"]]
    progress.stage("embedding the labelled messages", more=len(texts))
    progress(len(texts) - engine.prefetch(texts, progress=progress))  # the ones remembered from an earlier fit
    # Each first question as the stored precedents will hold it (float16): this fit, from freshly embedded
    # questions, and the next, from the stored precedents, learn from the same numbers (the adapter's fit
    # amplifies a difference in the last bits into another adapter).
    remembered = engine.remembered()
    firsts = {engine.cache_key(t) for t in firsts_text}
    engine.remember({key: as_stored(remembered[key]) for key in firsts if key in remembered})
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
    with ThreadPoolExecutor(max_workers=1) as aside:
        # With ``tune``, the adapter on every question trains beside the ones without each batch (one core each;
        # torch releases the GIL), not before them with the other core idle.
        full = aside.submit(fit_adapter, engine, *questions_of(engine, rows)) if tune else None
        if full is not None or adapter is not None:
            progress.stage("learning the adapters" if full is not None else "adapters without each batch")
            started = time.process_time()
            rows, by_batch = learned_without_batch(engine, rows)
            if full is not None:
                adapter = replace(
                    full.result(), embedder=engine.embedder.id, sources_hash=sources_hash, fitted_on=fitted_on
                )
            # all the fits, both cores
            tuned = {
                "questions": len(rows),
                "batches": len(by_batch),
                "seconds_cpu": round(time.process_time() - started, 1),
            }
    lap("adapters")
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
        folds = folds_of([r.group for r in rows], FOLDS)
    p_cv = np.zeros(len(rows))
    for test in folds:
        train = np.setdiff1d(np.arange(len(rows)), test)
        if len(test) and len(set(y[train])) == 2:
            p_cv[test] = predict(fit_logistic(x[train], y[train]), x[test])
    answer, none = fit_thresholds(p_cv, y, hard, batches=batches, **policy)
    mean, scale, model = fit_logistic(x, y)
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
        documents=dict(engine.index.manifest.get("sources", {})),
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
                precedents.subset(may_vote(threads, batches, thread, batch)) if precedents is not None else None
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
        # The company's labels are in this fit now: a vote fitted beside the previous one would count them twice.
        for beside in beside_files(path):
            beside.unlink(missing_ok=True)
    if save:
        save_vectors(engine, stored)
    return result


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
