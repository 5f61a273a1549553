"""Figures for a labelled batch of pasted environments (``eval/environments/*.jsonl``; format and scoring rule:
``docs/labelling-environments.md``).

- *named right*: mismatch cases whose claims hold at least one code of ``mismatches ∪ accept`` and none outside it;
- *false claims*: ``[]`` cases with any claim;
- *with source*: claims that cite a table row (all of them, by construction; counted so a regression shows).

    >>> from bot.engine.compat import table_from_toml
    >>> table = table_from_toml('[[message]]\\nkey = "insufficient_driver"\\ncode = "driver_too_old"\\nsource = "https://x"\\n')
    >>> cases = [{"id": "a", "paste": "Cuda error(35), CUDA driver version is insufficient for CUDA runtime version",
    ...           "expect": {"mismatches": [{"code": "driver_too_old"}]}},
    ...          {"id": "b", "paste": "loss is nan", "expect": {"mismatches": []}}]
    >>> figures = score(cases, table)
    >>> figures.named_right, figures.mismatch_cases, figures.false_claims, figures.none_cases
    (1, 1, 0, 1)
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from bot.engine.compat import CompatTable, check
from bot.engine.environment import read_environment


@dataclass(frozen=True)
class CaseResult:
    id: str
    variant: str
    expected: tuple[str, ...]
    accepted: tuple[str, ...]
    claimed: tuple[str, ...]
    ok: bool


@dataclass(frozen=True)
class Figures:
    named_right: int = 0
    mismatch_cases: int = 0
    false_claims: int = 0
    none_cases: int = 0
    claims: int = 0
    claims_with_source: int = 0
    by_variant: dict[str, tuple[int, int, int, int]] = field(default_factory=dict)  # right, cases, false, [] cases
    cases: tuple[CaseResult, ...] = ()


def read_batch(path: Path) -> list[dict]:
    """The labelled cases of one JSON-lines file; a line that is not JSON names the file and line."""
    cases = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            cases.append(json.loads(line))
        except json.JSONDecodeError as error:
            raise ValueError(
                f"{path}:{n}: not JSON ({error.msg}). Each line is one case: see docs/labelling-environments.md"
            ) from None
    return cases


def score(cases: Iterable[dict], table: CompatTable) -> Figures:
    """Read and check every case's paste, and count against its label."""
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    results: list[CaseResult] = []
    claims = sourced = 0
    for case in cases:
        expect = case.get("expect", {})
        wanted = tuple(sorted({m["code"] for m in expect.get("mismatches", [])}))
        accepted = tuple(sorted(set(wanted) | set(expect.get("accept", []))))
        diagnosis = check(read_environment(case.get("paste", "")), table)
        claimed = diagnosis.codes
        claims += len(diagnosis.mismatches)
        sourced += sum(1 for m in diagnosis.mismatches if m.source.url)
        variant = case.get("variant") or "original"
        row = tally[variant]
        if wanted:
            ok = bool(set(claimed) & set(accepted)) and set(claimed) <= set(accepted)
            row[0] += ok
            row[1] += 1
        else:
            ok = not claimed
            row[2] += not ok
            row[3] += 1
        results.append(CaseResult(str(case.get("id", "")), variant, wanted, accepted, tuple(claimed), ok))
    totals = [sum(r[i] for r in tally.values()) for i in range(4)]
    return Figures(
        named_right=totals[0],
        mismatch_cases=totals[1],
        false_claims=totals[2],
        none_cases=totals[3],
        claims=claims,
        claims_with_source=sourced,
        by_variant={k: (v[0], v[1], v[2], v[3]) for k, v in sorted(tally.items())},
        cases=tuple(results),
    )


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} = {part / whole:.3f}" if whole else "0/0"


def format_figures(figures: Figures, *, cases: bool = False) -> str:
    """The figures as a small table (and every case, with ``cases``)."""
    lines = [
        f"named right (mismatch cases): {_share(figures.named_right, figures.mismatch_cases)}",
        f"false claims ([] cases):      {_share(figures.false_claims, figures.none_cases)}",
        f"claims with a source row:     {figures.claims_with_source}/{figures.claims}",
        "by variant: variant  named right  false claims",
    ]
    for variant, (right, total, false, none) in figures.by_variant.items():
        lines.append(f"  {variant:8} {right:>5}/{total:<5} {false:>5}/{none}")
    if cases:
        for r in figures.cases:
            mark = "ok" if r.ok else "XX"
            lines.append(f"{mark} {r.id:12} {r.variant:8} expected={list(r.expected)} claimed={list(r.claimed)}")
    return "\n".join(lines)
