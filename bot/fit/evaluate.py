"""Retrieval evaluation on a JSON-lines set (format and rule: shared/eval/README.md).

The product's figures come from the serving path (:meth:`Engine.ask`); the baselines beside them (dense only,
BM25 only, no curated phrasings) from :func:`baseline_ask`, which only the evaluation calls: serving code, typed
against :class:`bot.engine.answerer.Answerer`, has no way to ask for them.

>>> normalize("`Nccl` **error**  [x]")
'ncclerrorx'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from bot.jsonl import read_jsonl
from bot.records import Answer

if TYPE_CHECKING:
    from bot.engine.retrieve import Engine

_DROP = re.compile(r"[\s`*#\[\]]+")
EVAL_DEPTH = 10


def normalize(text: str) -> str:
    return _DROP.sub("", text.lower())


def hit_matches(hit: dict, expect: dict) -> bool:
    return hit["source"] == expect["source"] and normalize(expect["section"]) in normalize(hit["section"])


@dataclass(frozen=True)
class EvalCase:
    """One labelled question of an evaluation set (not :class:`bot.records.Case`, a conversation's state)."""

    query: str
    kind: str
    expect: tuple[dict, ...]


Mode = Literal["hybrid", "dense", "bm25"]


def read_cases(path: Path) -> list[EvalCase]:
    return read_jsonl(
        path,
        lambda row: EvalCase(row["query"], row.get("kind", "?"), tuple(row.get("expect", []))),
        lambda exc: f'not an eval case ({exc}); expected {{"query", "kind", "expect"}}',
        (ValueError, KeyError),
    )


def baseline_ask(engine: Engine, text: str, *, k: int, mode: Mode = "hybrid", use_meta: bool = True) -> Answer:
    """Evaluation only: :meth:`Engine.ask` ranked by one kind of evidence (``mode`` "dense" or "bm25") or without
    the curated phrasings (``use_meta=False``), on the same plan, evidence and judgement as the product."""
    from bot.engine.rank import rank

    evidence = engine.evidence(text, use_meta=use_meta)
    ranking = rank(evidence, engine.calibration.weights, mode=mode, k=k)
    return engine.answer(evidence, ranking, engine.verdict(evidence, ranking))


def _rank(hits: list[dict], expect: tuple[dict, ...]) -> int | None:
    for rank, hit in enumerate(hits, 1):
        if any(hit_matches(hit, e) for e in expect):
            return rank
    return None


def _metrics(rows: list[dict]) -> dict:
    answerable = [r for r in rows if r["expect"]]
    oos = [r for r in rows if not r["expect"]]
    out: dict = {"n": len(rows)}
    if answerable:
        ranks = [r["rank"] for r in answerable]
        out["hit@1"] = sum(1 for x in ranks if x == 1) / len(ranks)
        out["hit@3"] = sum(1 for x in ranks if x and x <= 3) / len(ranks)
        out["mrr@10"] = sum(1 / x for x in ranks if x and x <= 10) / len(ranks)
        out["false_abstain"] = sum(1 for r in answerable if not r["answered"]) / len(answerable)
        out["none_in_scope"] = sum(1 for r in answerable if r["tier"] == "none") / len(answerable)
    if oos:
        out["abstain_oos"] = sum(1 for r in oos if not r["answered"]) / len(oos)
        out["none_oos"] = sum(1 for r in oos if r["tier"] == "none") / len(oos)
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in out.items()}


def evaluate(
    engine: Engine, cases: list[EvalCase], depth: int = EVAL_DEPTH, *, mode: Mode = "hybrid", use_meta: bool = True
) -> dict:
    """Ask every case; per case the tier, whether it was answered, the reason and the ranked sections.

    ``mode`` ("hybrid", "dense", "bm25") and ``use_meta`` give the baselines printed beside the product.
    """
    rows = []
    out_cases = []
    for case in cases:
        k = max(depth, 10)
        product = mode == "hybrid" and use_meta
        answer = (
            engine.ask(case.query, k=k)
            if product
            else baseline_ask(engine, case.query, k=k, mode=mode, use_meta=use_meta)
        )
        hits = [
            {"source": h.section.source, "section": h.section.heading, "score": round(h.score, 4)} for h in answer.hits
        ]
        rank = _rank(hits, case.expect) if case.expect else None
        rows.append(
            {"kind": case.kind, "expect": case.expect, "rank": rank, "answered": answer.answered, "tier": answer.tier}
        )
        out_cases.append(
            {
                "query": case.query,
                "kind": case.kind,
                "tier": answer.tier,
                "answered": answer.answered,
                "reason": answer.reason.code if answer.reason else "",
                "reason_subjects": list(answer.reason.subjects) if answer.reason else [],
                "confidence": round(answer.confidence, 4),
                "rank": rank,
                "signature": answer.signature or None,
                "subjects": list(answer.subjects),
                "hits": hits,
            }
        )
    metrics = _metrics(rows)
    metrics["by_kind"] = {
        kind: _metrics([r for r in rows if r["kind"] == kind]) for kind in sorted({r["kind"] for r in rows})
    }
    return {"metrics": metrics, "cases": out_cases}


def evaluate_with_baselines(engine: Engine, cases: list[EvalCase], depth: int = EVAL_DEPTH) -> dict:
    """The product's report plus, on the same cases: without curated phrasings, dense only, BM25 only."""
    report = evaluate(engine, cases, depth)
    report["baselines"] = {
        "no_meta": evaluate(engine, cases, depth, use_meta=False)["metrics"],
        "dense_only": evaluate(engine, cases, depth, mode="dense")["metrics"],
        "bm25_only": evaluate(engine, cases, depth, mode="bm25")["metrics"],
    }
    return report


COLUMNS = ["n", "hit@1", "hit@3", "mrr@10", "false_abstain", "none_in_scope", "abstain_oos", "none_oos"]


def _row(name: str, m: dict) -> str:
    return f"{name:<12}" + "".join(f"{m[c]:>14}" if c in m else f"{'-':>14}" for c in COLUMNS)


def format_table(report: dict) -> str:
    lines = [f"{'kind':<12}" + "".join(f"{c:>14}" for c in COLUMNS)]
    lines.append(_row("all", report["metrics"]))
    for kind, m in report["metrics"]["by_kind"].items():
        lines.append(_row(kind, m))
    if report.get("baselines"):
        lines.append("\nsame cases, other rankings (ranking figures; confidence as the product):")
        for name, m in report["baselines"].items():
            lines.append(_row(name, m))
    misses = [
        c for c in report["cases"] if (c["rank"] != 1 and c["kind"] != "oos") or (c["kind"] == "oos" and c["answered"])
    ]
    if misses:
        lines.append("\nmisses:")
        for c in misses:
            top = c["hits"][0] if c["hits"] else {"source": "-", "section": "-"}
            lines.append(
                f"  [{c['kind']}] rank={c['rank']} tier={c['tier']} conf={c['confidence']} "
                f"{c['query'][:60]!r} -> {top['source'][:3]} {top['section'][:40]}"
            )
    return "\n".join(lines)
