"""Figures of one or more ``bot eval --json`` reports on kb2 (issue 33's targets), beside the baselines.

usage: python eval/kb2/summarize.py QUESTIONS.jsonl REPORT.json [REPORT.json ...]

Per report: hit@1 and hit@3 of the product and of the baselines printed in the same run (dense-only, BM25-only,
no-meta); answerable questions answered confidently (tier ``answer``) with the right section first, and with a
wrong one; near-domain questions (empty ``expect``) answered confidently.
"""

from __future__ import annotations

import json
import sys


def figures(questions: str, report: str) -> dict:
    expects = [json.loads(line)["expect"] for line in open(questions, encoding="utf-8") if line.strip()]
    data = json.load(open(report, encoding="utf-8"))
    cases = data["cases"]
    if len(cases) != len(expects):
        raise SystemExit(f"{report}: {len(cases)} cases, {questions}: {len(expects)} questions; not the same set")
    answerable = [c for c, e in zip(cases, expects) if e]
    near = [c for c, e in zip(cases, expects) if not e]
    sure = [c for c in answerable if c["tier"] == "answer"]
    out = {
        "n": len(cases),
        "answerable": len(answerable),
        "near": len(near),
        "hit@1": data["metrics"].get("hit@1"),
        "hit@3": data["metrics"].get("hit@3"),
        "confident_right": round(sum(1 for c in sure if c["rank"] == 1) / max(len(answerable), 1), 4),
        "confident_wrong": round(sum(1 for c in sure if c["rank"] != 1) / max(len(answerable), 1), 4),
        "near_confident": round(sum(1 for c in near if c["tier"] == "answer") / len(near), 4) if near else None,
    }
    for name, m in (data.get("baselines") or {}).items():
        out[f"{name}_hit@1"] = m.get("hit@1")
    return out


if __name__ == "__main__":
    questions, *reports = sys.argv[1:]
    for report in reports:
        print(report, json.dumps(figures(questions, report)))
