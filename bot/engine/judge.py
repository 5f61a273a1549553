"""How sure the engine is of a ranking's first section (:func:`judge` -> :class:`Verdict`: tier, calibrated
probability, reason code) and the features it reads: the confidence models' inputs (:func:`features`,
:func:`follow_features`) and what keeps a section from being a confident answer whatever the probability
(:func:`blockers`: subjects it does not cover, operating systems its document contradicts, a newer release).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.engine.calibration import Calibration
from bot.engine.catalog import (
    CATEGORY_ORDER,
    HARD_CATEGORIES,
    MAJOR_CATEGORIES,
    PROBLEM_CATEGORIES,
    SETTING_ONLY_CATEGORIES,
    Catalog,
)
from bot.engine.evidence import Evidence
from bot.engine.rank import Ranking
from bot.engine.scores import QUANTITY, Scores, margin
from bot.kb.eras import newer_release
from bot.records import Reason, Tier


@dataclass(frozen=True)
class Verdict:
    """How sure the engine is of a ranking's first section, and why not more."""

    tier: Tier
    probability: float
    reason: Reason | None = None
    uncovered: tuple[str, ...] = ()


def judge(catalog: Catalog, evidence: Evidence, ranking: Ranking, calibration: Calibration) -> Verdict:
    """The tier of a ranking's first section, its calibrated probability and the reason (codes and keys).

    First questions use the first-turn model; follow-ups and retries the follow-up model when
    one was fitted. A subject the section does not cover (framework, device), an operating system
    its document contradicts, or a newer release than the section was written for keeps it from
    being a confident answer.
    """
    if not ranking.order:
        code = "empty" if evidence.empty else ("retry_none" if evidence.move == "retry" else "nothing")
        return Verdict("none", 0.0, Reason(code))
    top = ranking.order[0]
    first = [features(catalog, evidence, s, top) for s in (evidence.own, evidence.joined) if s is not None]
    continuing = evidence.plan.continues  # the follow-up model judges a turn of its case, when one was fitted
    if continuing and calibration.follow is not None:
        probability = calibration.follow.probability(follow_features(catalog, evidence, top, first))
    else:
        probability = max(calibration.probability(f) for f in first)
    uncovered, conflicts, (newer, era) = blockers(catalog, evidence, top)
    thresholds = calibration.follow if continuing and calibration.follow is not None else calibration
    tier = calibration.tier(
        probability,
        hard_uncovered=hard_uncovered(catalog, uncovered) or bool(conflicts) or bool(newer),
        margin=max(f["margin"] for f in first),
        coverage=max(f["coverage"] for f in first),
        thresholds=thresholds,
    )
    tier = evidence.plan.bound(tier)  # the plan's bounds (a failed fix's next candidate is doubtful), decided there
    if tier == "answer":
        return Verdict("answer", probability, None, tuple(uncovered))
    closest = catalog.sections[top].key
    foreign = [s for s in uncovered if s not in catalog.covered_anywhere]
    if newer:
        reason = Reason("old_release", closest=closest, release=newer, era=era)
    elif conflicts:
        reason = Reason("setting_conflict", subjects=tuple(conflicts), closest=closest)
    elif foreign:
        reason = Reason("uncovered", subjects=tuple(named_through_children(catalog, foreign))[:3], closest=closest)
    elif uncovered:
        reason = Reason(
            "uncovered_top", subjects=tuple(named_through_children(catalog, uncovered))[:3], closest=closest
        )
    else:
        reason = Reason("nothing" if tier == "none" else "weak", closest=closest)
    return Verdict(tier, probability, reason, tuple(uncovered))


def features(catalog: Catalog, evidence: Evidence, scores: Scores, top: int) -> dict[str, float]:
    """The confidence model's inputs for one set of scores (see :data:`bot.engine.calibration.FEATURES`)."""
    covered = catalog.coverage[top] if catalog.coverage else frozenset()
    asked = evidence.named if evidence.move == "new" else evidence.problem | evidence.setting
    built_on = [s for s in asked if catalog.built_on(s, covered)]
    subjects = effective_subjects(catalog, evidence, top) - frozenset(built_on)
    foreign = [s for s in subjects if s not in catalog.covered_anywhere]
    major = [s for s in foreign if catalog.lexicon.category(s) in MAJOR_CATEGORIES]
    problem = (
        evidence.problem
        if evidence.move != "new"
        else frozenset(s for s in evidence.named if catalog.lexicon.category(s) in PROBLEM_CATEGORIES)
    )
    elsewhere = [s for s in subjects if s in catalog.covered_anywhere and s not in covered]
    specific = [t for t in scores.tokens if len(t) > 1 and not QUANTITY.match(t)]
    section_tokens = catalog.tokens_of(top)
    overlap = sum(1 for t in specific if t in section_tokens) / len(specific) if specific else 0.0
    return {
        "margin": margin(catalog.index, scores),
        "coverage": scores.coverage,
        "top_overlap": overlap,
        "foreign_major": float(min(len(major), 3)),
        "foreign_minor": float(min(len(foreign) - len(major), 3)),
        "uncovered_top": float(min(len(elsewhere), 3)),
        "dense_top": float(scores.dense[top]),
        "is_log": 1.0 if evidence.is_log else 0.0,
        "problem_match": (1.0 if problem & covered else -1.0) if problem else 0.0,
        "product_setting": float(min(len(built_on), 3)),
        "precedent_lean": evidence.precedent_lean,
        "precedent_top": float(evidence.precedent[top]) if evidence.precedent is not None else 0.0,
        # NaN without an adapter: the confidence model counts it as its mean (neither for nor against).
        "learned_top": float(evidence.learned[top]) - evidence.learned_none
        if evidence.learned is not None
        else math.nan,
    }


def follow_features(
    catalog: Catalog, evidence: Evidence, top: int, first: Sequence[dict[str, float]] = ()
) -> dict[str, float]:
    """The follow-up model's inputs: the message's own evidence, the case's, and how the turn moved it.

    ``first``: :meth:`features` of the own and joined scores when the caller has them already.
    """
    own = first[0] if first else features(catalog, evidence, evidence.own, top)
    joined = (
        (first[1] if len(first) > 1 else features(catalog, evidence, evidence.joined, top))
        if evidence.joined is not None
        else own
    )
    key = catalog.sections[top].key
    return {
        "own_margin": own["margin"] if evidence.own_weight else -0.05,
        "own_overlap": own["top_overlap"] if evidence.own_weight else 0.0,
        "joined_margin": joined["margin"],
        "foreign": own["foreign_major"] + own["foreign_minor"],
        "uncovered_top": joined["uncovered_top"],
        "retry": 1.0 if evidence.move == "retry" else 0.0,
        "shown_before": 1.0 if key in evidence.case.shown else 0.0,
        "own_words": float(min(len([t for t in evidence.own.tokens if len(t) > 1]), 30)) / 30.0,
    }


def effective_subjects(catalog: Catalog, evidence: Evidence, top: int) -> frozenset[str]:
    """The subjects that count against the section at ``top``.

    A framework-level section answers a product user's framework-level problem: when the
    question's problem (OOM, NaN, NCCL, hang …) is covered by the section, the products built
    on a framework the section covers, and the OS or tool it happens on, are the setting, not
    what is asked. Without a covered problem (PaddleOCR accuracy, TensorRT shapes) they count.
    """
    subjects = evidence.named if evidence.move == "new" else evidence.problem | evidence.setting
    covered = catalog.coverage[top] if catalog.coverage else frozenset()
    if not (evidence.problem & covered):
        return subjects
    return frozenset(
        s
        for s in subjects
        if not catalog.built_on(s, covered) and catalog.lexicon.category(s) not in SETTING_ONLY_CATEGORIES
    )


def named_through_children(catalog: Catalog, subjects: Iterable[str]) -> list[str]:
    """Drop implied parents: PaddleOCR stands for PaddlePaddle too, so name PaddleOCR only."""
    subjects = list(subjects)
    implied = {i for s in subjects for i in catalog.lexicon.subjects[s].implies} if subjects else set()
    return [s for s in subjects if s not in implied]


def hard_uncovered(catalog: Catalog, uncovered: Iterable[str]) -> bool:
    return any(catalog.lexicon.category(s) in HARD_CATEGORIES for s in uncovered)


def uncovered(catalog: Catalog, evidence: Evidence, top: int) -> list[str]:
    covered = catalog.coverage[top] if catalog.coverage else frozenset()
    missing = [s for s in effective_subjects(catalog, evidence, top) if s not in covered]
    order = {c: n for n, c in enumerate(CATEGORY_ORDER)}
    return sorted(missing, key=lambda s: (order.get(catalog.lexicon.category(s), 99), s))


def blockers(catalog: Catalog, evidence: Evidence, top: int) -> tuple[list[str], list[str], tuple[str, str]]:
    """What keeps the section at ``top`` from being a confident answer, whatever the probability:
    subjects it does not cover, operating systems its document contradicts, a newer release."""
    return (
        uncovered(catalog, evidence, top),
        conflicts(catalog, evidence, top),
        old_release_named(catalog, evidence, top),
    )


def blocked(catalog: Catalog, evidence: Evidence, top: int) -> bool:
    uncovered, conflicts, (newer, _) = blockers(catalog, evidence, top)
    return hard_uncovered(catalog, uncovered) or bool(conflicts) or bool(newer)


def conflicts(catalog: Catalog, evidence: Evidence, top: int) -> list[str]:
    """Operating systems of the question that the section's document contradicts (Windows vs a Linux-only guide)."""
    section_os = catalog.facts[top].os
    if not section_os:
        return []
    asked = [s for s in evidence.setting | evidence.named if catalog.lexicon.category(s) == "os"]
    return sorted(s for s in asked if s not in section_os)


def old_release_named(catalog: Catalog, evidence: Evidence, top: int) -> tuple[str, str]:
    """(newer release the user named, old release the section was written for), or ("", "")."""
    asked = "\n".join((evidence.case.search if evidence.move != "new" else "", evidence.text))
    for era in catalog.facts[top].eras:
        newer = newer_release(asked, era)
        if newer:
            return newer, era
    return "", ""
