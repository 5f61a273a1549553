"""/admin after issue 26: one problem worded many ways, in several frameworks, is one group; every row has a tier
(a "didn't help" or a 👎 without a tier of its own takes its answer's)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.kb.embed import HashEmbedder
from bot.web.admin import build_report

NAN = [
    "PyTorch loss becomes NaN after a few steps",
    "loss is nan in paddle training",
    "训练几步后 loss 变成 nan",
    "TensorFlow training loss NaN after first epoch",
]
OTHER = ["pip install behind company proxy times out", "company proxy makes pip install time out"]


def _row(at: datetime, text: str, **extra) -> dict:
    return {
        "at": at,
        "kind": "question",
        "tier": "tentative",
        "question": text,
        "signature": None,
        "cited": [],
        "vote": None,
        "latency_ms": None,
        "session": "",
        "answer_id": "",
        **extra,
    }


def _report(rows):
    embedder = HashEmbedder()
    return build_report(rows, lambda texts: embedder.embed(texts, role="query"), days=7)


def test_one_nan_problem_is_one_group_across_frameworks_and_wordings():
    t = datetime.now(UTC).replace(tzinfo=None) - timedelta(hours=1)
    rows = [_row(t, text) for text in NAN + OTHER]
    groups = _report(rows).groups
    holding = [g for g in groups if any(e.question in NAN for e in g.examples)]
    assert len(holding) == 1, [(g.label, [e.question for e in g.examples]) for g in holding]
    assert {e.question for e in holding[0].examples} == set(NAN)


def test_every_row_has_a_tier_when_its_answer_had_one():
    t = datetime.now(UTC).replace(tzinfo=None) - timedelta(hours=1)
    rows = [
        _row(t, "PyTorch DataLoader hangs with num_workers > 0", tier="answer", session="s1", answer_id="a1"),
        # "didn't help" on that answer, stored without a tier (the row the brief saw as "–")
        _row(t + timedelta(minutes=1), "still hangs", kind="not_helpful", tier="", session="s1"),
        # a 👎 through /api/feedback: answer id only
        {**_row(t + timedelta(minutes=2), "", kind="vote", tier="", answer_id="a1"), "vote": "down", "reason": "other"},
    ]
    report = _report(rows)
    tiers = [e.tier for g in report.groups for e in g.examples]
    assert tiers and all(tiers), [(g.label, [(e.question, e.tier) for e in g.examples]) for g in report.groups]
