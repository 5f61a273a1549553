"""Issue 42 item 2: how the pages nobody labelled are ranked, against rankings that carry over by construction.

usage: BOT_SEEDS_DIR=… BOT_INDEX_DIR=… PYTHONPATH=. python eval/holdout11/scripts/unseen_variants.py QUESTIONS.jsonl
(the seeds and index that ``eval/run_new_kb.sh`` builds for a new knowledge base, before ``bot tune``).

Per in-scope question, first-section hits of: the product (:meth:`Engine.ask`'s rank and verdict); its baselines
(no curated keys, dense, BM25, as ``bot eval``); the shared rule standardised over the fitted documents only (as the
"no curated keys" baseline is); the shared rule with another lexical weight for the unseen pages (through
:class:`bot.engine.beside.Boost` with no vote, as ``bot tune`` passes one); and, among the unseen pages' sections
only, z-score fusion over three standardisation sets, reciprocal-rank fusion, and the dense score taken from other
keys of a section (its heading alone; the best key plus the heading; the mean of its keys). Figures in
docs/evaluation.md.
"""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from bot.cli import settle
from bot.engine.beside import Boost
from bot.engine.rank import rank
from bot.engine.retrieve import Engine
from bot.engine.scores import zscore
from bot.fit.evaluate import _rank, hit_matches, read_cases
from bot.settings import Settings

LEXICAL = (0.0, 0.25, 0.5, 0.75, 1.0)
RRF_K = (10, 30, 60)


def _reciprocal(values: np.ndarray, k: int) -> np.ndarray:
    ranks = np.empty(len(values))
    ranks[np.argsort(-values, kind="stable")] = np.arange(1, len(values) + 1)
    return 1.0 / (k + ranks)


def main(path: str) -> None:
    engine = Engine.open(Settings.from_env(os.environ))
    settle(engine.embedder)
    cases = [c for c in read_cases(Path(path)) if c.expect]
    unseen = engine.catalog.hidden_sections(engine.hidden)
    weights = engine.calibration.weights
    vectors, owners = engine.catalog.key_vectors
    heading_key = np.array([k.kind == "heading" for k in engine.index.keys], dtype=bool)
    tally: dict[str, int] = {}
    wrong_confident: dict[str, int] = {}

    def count(name, evidence, ranking, expect) -> None:
        answer = engine.answer(evidence, ranking, engine.verdict(evidence, ranking))
        hits = [{"source": h.section.source, "section": h.section.heading} for h in answer.hits]
        right = _rank(hits, expect) == 1
        tally[name] = tally.get(name, 0) + right
        wrong_confident[name] = wrong_confident.get(name, 0) + (not right and answer.tier == "confident")

    def with_reference(scores):
        return (
            scores
            if scores is None or scores.plain is None
            else replace(scores, plain=replace(scores.plain, reference=scores.reference))
        )

    for case in cases:
        evidence = engine.evidence(case.query)
        count("product", evidence, rank(evidence, weights), case.expect)
        plain = engine.evidence(case.query, use_meta=False)
        count("baseline no_meta", plain, rank(plain, weights), case.expect)
        for mode in ("dense", "bm25"):
            count(f"baseline {mode}", evidence, rank(evidence, weights, mode=mode), case.expect)
        fitted_scale = replace(evidence, own=with_reference(evidence.own), title=with_reference(evidence.title))
        count(
            "shared rule standardised over the fitted documents", fitted_scale, rank(fitted_scale, weights), case.expect
        )
        for lexical in LEXICAL:
            boosted = replace(evidence, beside=Boost(np.zeros(len(unseen), np.float32), unseen.copy(), lexical))
            count(f"unseen pages' lexical weight {lexical}", boosted, rank(boosted, weights), case.expect)
        # Among the unseen pages' sections only (what a fusion does to their order, the seeds aside).
        scores, among = plain.own, np.flatnonzero(unseen & plain.allowed)
        subject = weights.subject * plain.subject_share
        dense, lexical = scores.dense[among], scores.lexical[among]
        candidates = {
            "among unseen: z over all sections": (
                zscore(scores.dense) + weights.lexical * zscore(scores.lexical) + subject
            )[among],
            "among unseen: z over the fitted documents": (
                scores.z_dense + weights.lexical * scores.z_lexical + subject
            )[among],
            "among unseen: z over the unseen pages": zscore(dense) + weights.lexical * zscore(lexical) + subject[among],
            **{f"among unseen: reciprocal rank k={k}": _reciprocal(dense, k) + _reciprocal(lexical, k) for k in RRF_K},
        }
        by_heading = np.full(len(engine.sections), -1.0)
        np.maximum.at(by_heading, owners[heading_key], (vectors @ scores.query_vector)[heading_key])
        keyed = {
            "heading key alone": by_heading,
            "best key plus heading key": scores.dense + by_heading,
            "mean of the keys": engine.index.section_vectors @ scores.query_vector,
        }
        for name, dense_of in keyed.items():
            fused = zscore(dense_of[among]) + weights.lexical * zscore(lexical) + subject[among]
            candidates[f"among unseen, z over the unseen pages, dense from the {name}"] = fused
        for name, fused in candidates.items():
            top = engine.sections[among[int(np.argmax(fused))]]
            right = any(hit_matches({"source": top.source, "section": top.heading}, e) for e in case.expect)
            tally[name] = tally.get(name, 0) + right
    print(f"{len(cases)} in-scope questions; {len(engine.hidden)} unseen documents; fitted lexical {weights.lexical}")
    for name, right in tally.items():
        extra = f"  confident wrong {wrong_confident[name]}" if name in wrong_confident else ""
        print(f"  {name:<52} hit@1 {right:>3}/{len(cases)} = {right / len(cases):.3f}{extra}")


if __name__ == "__main__":
    main(sys.argv[1])
