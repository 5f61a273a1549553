"""Figures on the labelled pasted environments of batch A (Paddle threads; docs/labelling-environments.md).

Batch B (TensorFlow/PyTorch threads) is the held-out batch: the code was frozen before it was read once, and its
figures are reported apart (`python -m bot eval-env eval/environments/batch_b.jsonl`); no test is fitted to it."""

from __future__ import annotations

from bot.diagnose.compat import check, table_for
from bot.diagnose.environment import read_environment
from bot.diagnose.evaluate_environments import read_batch, score
from fixtures import REPO

BATCH_A = REPO / "eval" / "environments" / "batch_a.jsonl"


def test_batch_a_meets_the_targets():
    figures = score(read_batch(BATCH_A), table_for(None))
    assert figures.mismatch_cases >= 30 and figures.none_cases >= 10
    assert figures.named_right / figures.mismatch_cases >= 0.90
    assert figures.false_claims / figures.none_cases <= 0.03
    assert figures.claims_with_source == figures.claims > 0


def test_every_variant_gets_the_diagnosis_of_its_original():
    table = table_for(None)
    cases = read_batch(BATCH_A)
    by_id = {c["id"]: c for c in cases}
    variants = [c for c in cases if c.get("variant_of")]
    assert {c["variant"] for c in variants} == {"cut", "mixed", "windows", "zh", "ansi"}
    for case in variants:
        original = by_id[case["variant_of"]]
        assert (
            check(read_environment(case["paste"]), table).codes
            == check(read_environment(original["paste"]), table).codes
        ), case["id"]
