"""``python -m bot calibrate``: fit ranking weights, the confidence model and the tier thresholds.

From labelled questions (``eval/*.jsonl``: real questions from public threads, each with its
``url``) this

1. picks the ranking weights (BM25 and subject terms) that put an expected section first most often;
2. fits a logistic regression from :data:`bot.engine.calibration.FEATURES` to "the knowledge base answers this";
3. picks the tier thresholds by policy on cross-validated probabilities: at most
   ``max_near_confident`` of out-of-scope questions answered confidently, at most
   ``max_inscope_none`` of in-scope questions shown as "none";
4. reports every figure cross-validated *by thread* (no thread in both fit and test; the
   thresholds of each test fold are chosen on its training folds only), and stores the
   model beside the index for this embedder.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from bot.engine.calibration import FEATURES, Calibration, calibration_path
from bot.engine.evaluate import Case, hit_matches, read_cases
from bot.engine.retrieve import Engine, _zscore

LEXICAL_GRID = (0.0, 0.25, 0.5, 0.75, 1.0)
SUBJECT_GRID = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0)
TITLE_GRID = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5)
FOLDS = 5


@dataclass
class _Row:
    case: Case
    group: str
    dense_z: np.ndarray
    lexical_z: np.ndarray
    subject_share: np.ndarray
    evidence: object  # retrieve._Scores
    subjects: frozenset
    text: str
    title_dense_z: np.ndarray | None = None
    title_lexical_z: np.ndarray | None = None

    def fused(self, lw: float, sw: float, tw: float) -> np.ndarray:
        out = self.dense_z + lw * self.lexical_z + sw * self.subject_share
        if tw and self.title_dense_z is not None:
            out = out + tw * (self.title_dense_z + lw * self.title_lexical_z)
        return out

    @property
    def in_scope(self) -> bool:
        return bool(self.case.expect)


def collect(engine: Engine, cases: list[Case], groups: list[str]) -> list[_Row]:
    """The evidence for every case, computed once (ranking variants reuse it)."""
    from bot.engine.retrieve import _title, sanitize

    rows = []
    for case, group in zip(cases, groups):
        text, _ = sanitize(case.query, engine.settings.max_input_chars)
        _, search_text = engine._search_text(text)
        scores = engine._scores(search_text)
        subjects = engine._main_subjects(engine.subjects_of(text))
        row = _Row(case, group, _zscore(scores.dense), _zscore(scores.lexical), engine.subject_share(subjects),
                   scores, subjects, text)
        title = _title(text)
        if title:
            title_scores = engine._scores(title)
            row.title_dense_z, row.title_lexical_z = _zscore(title_scores.dense), _zscore(title_scores.lexical)
        rows.append(row)
    return rows


def _matches(engine: Engine, n: int, case: Case) -> bool:
    section = engine.sections[n]
    hit = {"source": section.source, "section": section.heading}
    return any(hit_matches(hit, e) for e in case.expect)


def _ranking_quality(engine: Engine, rows: list[_Row], weights: tuple[float, float, float]) -> tuple[float, float]:
    hit1 = hit3 = 0
    scored = [r for r in rows if r.in_scope]
    for r in scored:
        order = np.argsort(-r.fused(*weights), kind="stable")[:3]
        ok = [_matches(engine, int(n), r.case) for n in order]
        hit1 += ok[0]
        hit3 += any(ok)
    n = max(len(scored), 1)
    return hit1 / n, hit3 / n


def choose_weights(engine: Engine, rows: list[_Row]) -> tuple[float, float, float]:
    """Best hit@1 (then hit@3), ties broken towards smaller weights (simpler ranking)."""
    best, best_key = (0.5, 0.0, 0.0), (-1.0, -1.0)
    for tw in TITLE_GRID:
        for lw in LEXICAL_GRID:
            for sw in SUBJECT_GRID:
                h1, h3 = _ranking_quality(engine, rows, (lw, sw, tw))
                if (h1, h3) > best_key:
                    best, best_key = (lw, sw, tw), (h1, h3)
    return best


def _features(engine: Engine, row: _Row, weights: tuple[float, float, float]) -> tuple[list[float], int, bool]:
    top = int(np.argmax(row.fused(*weights)))
    feats = engine.features(row.evidence, top, row.subjects, row.text)
    hard = engine.hard_uncovered(engine._uncovered(row.subjects, top))
    return [feats[name] for name in FEATURES], top, hard


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


def _thresholds(p: np.ndarray, y: np.ndarray, hard: np.ndarray, max_near_confident: float,
                max_inscope_none: float) -> tuple[float, float]:
    """Answer threshold: the lowest that keeps out-of-scope confident answers within policy.
    None threshold: the highest that keeps in-scope "none" within policy (and below the answer threshold)."""
    near = p[(y == 0) & ~hard]
    n_near = max(int((y == 0).sum()), 1)
    candidates = np.unique(np.concatenate([p, [0.0, 1.0]]))
    answer = 1.0
    for t in candidates:
        if (near >= t).sum() / n_near <= max_near_confident:
            answer = float(t)
            break
    inscope = np.sort(p[y == 1])
    allowed = int(np.floor(max_inscope_none * len(inscope)))
    none = float(inscope[allowed]) if len(inscope) > allowed else 0.0
    return answer, min(none, answer)


def _tiers(p: np.ndarray, hard: np.ndarray, x: np.ndarray, answer: float, none: float) -> list[str]:
    model = replace(Calibration.default(), answer_threshold=answer, none_threshold=none)
    margin, coverage = x[:, FEATURES.index("margin")], x[:, FEATURES.index("coverage")]
    return [model.tier(float(q), hard_uncovered=bool(h), margin=float(m), coverage=float(c))
            for q, h, m, c in zip(p, hard, margin, coverage)]


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


def cross_validate(engine: Engine, rows: list[_Row], policy: dict) -> dict:
    """Every figure from models, weights and thresholds that never saw the test fold's threads."""
    groups = [r.group for r in rows]
    y = np.array([1 if r.in_scope else 0 for r in rows])
    folds = _folds(groups, FOLDS)
    p_out = np.zeros(len(rows))
    tiers_out: list[str] = [""] * len(rows)
    hit1_out = np.zeros(len(rows), dtype=bool)
    hit3_out = np.zeros(len(rows), dtype=bool)
    for test in folds:
        if not len(test):
            continue
        train = np.setdiff1d(np.arange(len(rows)), test)
        train_rows = [rows[i] for i in train]
        weights = choose_weights(engine, train_rows)
        feats = [_features(engine, r, weights) for r in rows]
        x = np.array([f[0] for f in feats])
        hard = np.array([f[2] for f in feats])
        # Thresholds from out-of-fold predictions *within* the training threads.
        inner = _folds([groups[i] for i in train], FOLDS)
        p_inner = np.zeros(len(train))
        for inner_test in inner:
            inner_train = np.setdiff1d(np.arange(len(train)), inner_test)
            if len(inner_test) and len(set(y[train][inner_train])) == 2:
                p_inner[inner_test] = _predict(_fit(x[train][inner_train], y[train][inner_train]), x[train][inner_test])
        answer, none = _thresholds(p_inner, y[train], hard[train], **policy)
        fitted = _fit(x[train], y[train])
        p_out[test] = _predict(fitted, x[test])
        for i, tier in zip(test, _tiers(p_out[test], hard[test], x[test], answer, none)):
            tiers_out[i] = tier
        for i in test:
            r = rows[i]
            if r.in_scope:
                order = np.argsort(-r.fused(*weights), kind="stable")[:3]
                ok = [_matches(engine, int(n), r.case) for n in order]
                hit1_out[i], hit3_out[i] = ok[0], any(ok)
    inscope = y == 1
    near = y == 0
    tiers = np.array(tiers_out)
    return {
        "n_cases": len(rows), "n_threads": len(set(groups)), "n_in_scope": int(inscope.sum()),
        "n_out_of_scope": int(near.sum()),
        "out_of_scope_not_confident": round(float((tiers[near] != "answer").mean()), 4) if near.any() else None,
        "out_of_scope_none": round(float((tiers[near] == "none").mean()), 4) if near.any() else None,
        "in_scope_confident": round(float((tiers[inscope] == "answer").mean()), 4) if inscope.any() else None,
        "in_scope_not_confident": round(float((tiers[inscope] != "answer").mean()), 4) if inscope.any() else None,
        "in_scope_none": round(float((tiers[inscope] == "none").mean()), 4) if inscope.any() else None,
        "in_scope_hit@1": round(float(hit1_out[inscope].mean()), 4) if inscope.any() else None,
        "in_scope_hit@3": round(float(hit3_out[inscope].mean()), 4) if inscope.any() else None,
        "ece": round(_ece(p_out, y), 4),
        "reliability": _reliability(p_out, y),
        "folds": FOLDS,
    }


def _reliability(p: np.ndarray, y: np.ndarray, bins: int = 10) -> list[dict]:
    out = []
    edges = np.linspace(0, 1, bins + 1)
    for lo, hi in zip(edges[:-1], edges[1:]):
        inside = (p >= lo) & ((p < hi) if hi < 1 else (p <= hi))
        if inside.any():
            out.append({"bin": [round(float(lo), 2), round(float(hi), 2)], "n": int(inside.sum()),
                        "mean_p": round(float(p[inside].mean()), 4), "share_in_scope": round(float(y[inside].mean()), 4)})
    return out


def read_labelled(paths: list[Path]) -> tuple[list[Case], list[str], dict]:
    cases: list[Case] = []
    groups: list[str] = []
    fitted_on: dict = {}
    for path in paths:
        file_cases = read_cases(path)
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        for case, row in zip(file_cases, rows):
            cases.append(case)
            groups.append(str(row.get("url") or row.get("thread") or row["query"]))
        fitted_on[str(path)] = {"cases": len(file_cases), "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    return cases, groups, fitted_on


def calibrate(engine: Engine, paths: list[Path], *, max_near_confident: float = 0.10,
              max_inscope_none: float = 0.02, save: bool = True) -> Calibration:
    """Fit on every labelled case, report cross-validated figures, store beside the index."""
    cases, groups, fitted_on = read_labelled(paths)
    if not any(c.expect for c in cases) or all(c.expect for c in cases):
        raise ValueError(f"{', '.join(map(str, paths))}: need both in-scope (non-empty expect) and "
                         "out-of-scope (empty expect) cases to calibrate")
    policy = {"max_near_confident": max_near_confident, "max_inscope_none": max_inscope_none}
    rows = collect(engine, cases, groups)
    figures = cross_validate(engine, rows, policy) if len(set(groups)) >= FOLDS else {}
    lw, sw, tw = choose_weights(engine, rows)
    feats = [_features(engine, r, (lw, sw, tw)) for r in rows]
    x = np.array([f[0] for f in feats])
    hard = np.array([f[2] for f in feats])
    y = np.array([1 if r.in_scope else 0 for r in rows])
    p_cv = np.zeros(len(rows))
    for test in _folds(groups, FOLDS):
        train = np.setdiff1d(np.arange(len(rows)), test)
        if len(test) and len(set(y[train])) == 2:
            p_cv[test] = _predict(_fit(x[train], y[train]), x[test])
    answer, none = _thresholds(p_cv, y, hard, **policy)
    mean, scale, model = _fit(x, y)
    figures["policy"] = policy
    figures["weights"] = {"lexical": lw, "subject": sw, "title": tw}
    from bot.kb.index import source_hashes

    sources = hashlib.sha256(json.dumps(source_hashes(engine.settings.seeds_dir), sort_keys=True).encode()).hexdigest()
    result = Calibration(
        embedder=engine.embedder.id, lexical_weight=lw, subject_weight=sw, title_weight=tw,
        mean=tuple(float(v) for v in mean), scale=tuple(float(v) for v in scale),
        coef=tuple(float(v) for v in model.coef_[0]), intercept=float(model.intercept_[0]),
        answer_threshold=answer, none_threshold=none, figures=figures, fitted_on=fitted_on, sources_hash=sources,
    )
    if save:
        result.save(calibration_path(engine.settings.index_dir, engine.embedder.id))
    return result


def format_figures(cal: Calibration) -> str:
    f = cal.figures
    lines = [
        f"calibrated for {cal.embedder}: weights lexical={cal.lexical_weight} subject={cal.subject_weight} "
        f"title={cal.title_weight}; "
        f"thresholds answer>={cal.answer_threshold:.3f} none<{cal.none_threshold:.3f}",
        "coefficients (standardised): " + ", ".join(f"{n}={c:+.2f}" for n, c in zip(FEATURES, cal.coef)),
    ]
    if "n_cases" in f:
        lines.append(
            f"cross-validated by thread ({f['folds']} folds, {f['n_cases']} cases, {f['n_threads']} threads, "
            f"{f['n_in_scope']} in scope, {f['n_out_of_scope']} out of scope):"
        )
        for key in ("out_of_scope_not_confident", "out_of_scope_none", "in_scope_confident", "in_scope_not_confident",
                    "in_scope_none", "in_scope_hit@1", "in_scope_hit@3", "ece"):
            lines.append(f"  {key:<28} {f[key]}")
    return "\n".join(lines)


def with_engine_calibration(engine: Engine, cal: Calibration) -> Engine:
    """The same engine using ``cal`` (after a fit, without reloading the index)."""
    engine.calibration = replace(cal)
    return engine
