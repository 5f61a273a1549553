"""Issue 42 item 2, step 3 (measured, not served): would BM25's weight chosen per knowledge base on its own
pseudo-questions (selftest.json's ``lexical``) rank a new knowledge base's real questions better than the shipped fit?

usage: BOT_SEEDS_DIR=... BOT_INDEX_DIR=... python eval/pseudo_weights.py QUESTIONS.jsonl KB
(the index built by ``python -m bot build`` over the seeds with the company's pages under seeds/KB, no labels, as
eval/run_new_kb.sh builds it). Prints one JSON line: hit@1 of the product as served, of the product with the chosen
weight on KB's sections (the rule that ranks documents nobody labelled, through bot.engine.beside's lexical weight),
dense alone and BM25 alone (as ``bot eval`` computes them).
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from bot.engine.beside import Boost
from bot.engine.rank import rank
from bot.engine.retrieve import Engine
from bot.fit.evaluate import hit_matches, read_cases
from bot.kb.selftest import read
from bot.settings import Settings


def main() -> None:
    questions, kb = Path(sys.argv[1]), sys.argv[2]
    settings = Settings.from_env(os.environ)
    engine = Engine.open(settings)
    test, problem = read(engine.index.path)
    if test is None:
        raise SystemExit(problem)
    figures = next(k for k in test.kbs if k.kb == kb)
    reach = np.array([s.source.startswith(kb + "/") for s in engine.sections], dtype=bool)
    weights = engine.calibration.weights
    right = {"product": 0, "chosen": 0, "dense": 0, "bm25": 0}
    n = 0
    for case in read_cases(questions):
        if not case.expect:
            continue
        n += 1
        evidence = engine.evidence(case.query)
        chosen = replace(evidence, beside=Boost(np.zeros(len(reach), np.float32), reach, figures.lexical))
        for name, found, mode in (
            ("product", evidence, "hybrid"),
            ("chosen", chosen, "hybrid"),
            ("dense", evidence, "dense"),
            ("bm25", evidence, "bm25"),
        ):
            order = rank(found, weights, mode=mode, k=1).order
            top = engine.sections[order[0]] if order else None
            if top is not None and any(
                hit_matches({"source": top.source, "section": top.heading}, e) for e in case.expect
            ):
                right[name] += 1
    print(
        json.dumps(
            {
                "kb": kb,
                "n": n,
                "lexical": figures.lexical,
                "calibration_lexical": weights.lexical,
                "pseudo": {"product": figures.product, "fitted": figures.fitted},
                **{k: round(v / n, 4) for k, v in right.items()},
            }
        )
    )


if __name__ == "__main__":
    main()
