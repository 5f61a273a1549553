"""The judge's features on a batch of first questions against what its fit saw (issue 42, item 4).

usage: python eval/pseudo/fresh_features.py QUESTIONS.jsonl [...]   (the index and calibration of BOT_INDEX_DIR)

For every answerable question: the tier, whether the first section is right, the calibrated probability and each
feature of :data:`bot.engine.calibration.FEATURES`. Printed per feature, for the right answers hedged (tier not
``answer``) and those answered confidently: the mean value, and the mean of its term in the logistic model,
coef × (value − fit mean) / fit scale — the fit's mean and scale are those of the rows it was fitted on, so a term
far below 0 on hedged right answers is a feature where the fresh phrasings fall below what the fit saw.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from bot.engine.calibration import FEATURES
from bot.engine.judge import features, judge
from bot.engine.rank import rank
from bot.engine.retrieve import Engine
from bot.fit.evaluate import hit_matches, read_cases
from bot.web.config import AppConfig


def main(paths: list[str]) -> None:
    engine = Engine.open(AppConfig.from_env().engine)
    cal = engine.calibration
    rows = []
    for path in paths:
        for case in read_cases(Path(path)):
            if not case.expect:
                continue
            evidence = engine.evidence(case.query)
            ranking = rank(evidence, engine.weights, k=3)
            if not ranking.order:
                continue
            verdict = judge(engine.catalog, evidence, ranking, cal)
            top = engine.sections[ranking.order[0]]
            right = any(hit_matches({"source": top.source, "section": top.heading}, e) for e in case.expect)
            f = features(engine.catalog, evidence, evidence.own, ranking.order[0])
            rows.append((right, verdict.tier, verdict.probability, f))
    right = [r for r in rows if r[0]]
    hedged = [r for r in right if r[1] != "answer"]
    sure = [r for r in right if r[1] == "answer"]
    print(
        json.dumps(
            {
                "files": paths,
                "answerable": len(rows),
                "hit@1": round(len(right) / max(len(rows), 1), 3),
                "right_hedged": len(hedged),
                "right_confident": len(sure),
                "answer_threshold": round(cal.answer_threshold, 3),
                "calibrated": cal.calibrated,
                "documents_changed": bool(cal.figures.get("documents_changed")),
            }
        )
    )
    print(f"{'feature':<16}{'fit mean':>9}{'coef':>7}{'hedged':>9}{'sure':>9}{'term h':>8}{'term s':>8}")

    def avg(group: list, name: str, term: tuple[float, float, float] | None = None) -> float:
        values = [float(r[3].get(name, 0.0)) for r in group]
        values = [v for v in values if not np.isnan(v)]
        if not values:
            return float("nan")
        if term is None:
            return float(np.mean(values))
        mean, scale, coef = term
        return float(np.mean([coef * (v - mean) / scale for v in values]))

    for n, name in enumerate(FEATURES):
        term = (cal.mean[n], cal.scale[n] or 1.0, cal.coef[n])
        print(
            f"{name:<16}{term[0]:>9.3f}{term[2]:>7.2f}{avg(hedged, name):>9.3f}{avg(sure, name):>9.3f}"
            f"{avg(hedged, name, term):>8.2f}{avg(sure, name, term):>8.2f}"
        )
    print(
        f"{'probability':<16}{'':>16}{np.mean([r[2] for r in hedged] or [np.nan]):>9.3f}{np.mean([r[2] for r in sure] or [np.nan]):>9.3f}"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
