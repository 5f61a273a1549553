"""Issue 45, hardening round five, finding 5: ``bot acts`` saved a useless model. Three labelled turns of one class
replaced the shipped model with exit 0 (held-out accuracy 0.78 -> 0.26). A model fitted on too few of the engine's
acts, or worse than the rule on the turns held out of its fit (cross-validated), is refused: the model served stays,
and the command says why and exits non-zero."""

from __future__ import annotations

import json

import pytest

from bot.fit.acts_training import save_refusal
from bot.kb.embed import HashEmbedder


def _figures(rule: float, model: float, acts: dict[str, int]) -> dict:
    n = sum(acts.values())
    per = {label: 1.0 for label in acts}
    return {
        "turns": n,
        "rule": {"all": rule, "n": n, **per},
        "model_cross_validated": {"all": model, "n": n, **per},
    }


@pytest.mark.parametrize(
    "figures, said",
    [
        (_figures(0.5, 1.0, {"detail": 3}), "1 of the engine's 5 acts"),
        (_figures(0.5, 1.0, {"detail": 3, "thanks": 4, "person": 2}), "1 of the engine's 5 acts"),
        (
            _figures(0.78, 0.6, {"detail": 30, "failed_fix": 30}),
            "cross-validated accuracy 0.6 is below the rule's 0.78",
        ),
    ],
    ids=["one-act", "one-engine-act", "worse-than-the-rule"],
)
def test_a_useless_model_is_refused_with_the_reason(figures, said):
    why = save_refusal(figures)
    assert said in why and "label" in why


def test_a_model_as_good_as_the_rule_on_two_acts_or_more_may_be_saved():
    assert save_refusal(_figures(0.7, 0.7, {"detail": 20, "failed_fix": 20})) == ""
    assert save_refusal(_figures(0.7, 0.9, {"detail": 20, "failed_fix": 20, "environment": 5, "thanks": 3})) == ""


def test_the_acts_command_keeps_the_model_served_when_it_refuses(hash_settings, tmp_path, capsys):
    from bot.cli import main
    from bot.engine.acts import acts_path
    from bot.engine.calibration import calibration_path
    from bot.engine.facts import build

    build(hash_settings, HashEmbedder())
    served = acts_path(calibration_path(hash_settings.index_dir, HashEmbedder().id))
    served.parent.mkdir(parents=True, exist_ok=True)
    served.write_bytes(b"the model served before")  # stands for the shipped model: it must not be replaced
    first = {"query": "显存不足 out of memory 怎么办"}
    rows = [
        {"id": f"c{n}", "turns": [first, {"query": query, "act": "detail"}]}
        for n, query in enumerate(["batch_size 减到多少合适？", "显存占用在哪里看？", "which batch_size should I use?"])
    ]
    path = tmp_path / "train.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    argv = ["acts", str(path), "--embedder", "hash"]
    argv += ["--seeds", str(hash_settings.seeds_dir), "--index", str(hash_settings.index_dir)]
    assert main(argv) == 2  # before: 0, and the model served replaced by one that can only say "detail"
    err = capsys.readouterr().err
    assert "not saved" in err and "1 of the engine's 5 acts" in err and str(served) in err
    assert served.read_bytes() == b"the model served before"
