"""Issue 45, hardening round five, finding 3: hostile label files for ``bot calibrate`` and ``bot acts``.

A line of 100,000 nested brackets gave a RecursionError traceback; a lone surrogate (``\\ud800``) in a query let the
whole fit run, then printed a codec error without file or line; an acts file with no labelled later turn printed
"need at least one array to stack". Each is now refused with the file, the line and the fix, before any fitting
(exit 2 from the command line).
"""

from __future__ import annotations

import json

import pytest

from bot.fit.acts import read_labelled
from bot.fit.labels import check_labelled
from bot.jsonl import read_jsonl
from bot.kb.embed import HashEmbedder

NESTED = "[" * 100_000 + "]" * 100_000
QUESTION = {"query": "显存不足怎么办", "kind": "zh", "expect": [{"source": "gpu.md", "section": "显存"}]}
CONVERSATION = {"turns": [{"query": "显存不足怎么办"}, {"query": "batch_size 减到多少？", "act": "detail"}]}
SURROGATE_QUESTION = json.dumps({**QUESTION, "query": "显存\ud800不足"})  # written as the escape \ud800
SURROGATE_CONVERSATION = json.dumps(
    {"turns": [{"query": "显存不足"}, {"query": "还是\ud800不行", "act": "failed_fix"}]}
)
assert "\\ud800" in SURROGATE_QUESTION and "\\ud800" in SURROGATE_CONVERSATION


def _file(tmp_path, name: str, first: dict, hostile: str):
    path = tmp_path / name
    path.write_text(json.dumps(first, ensure_ascii=False) + "\n" + hostile + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "hostile, said", [(NESTED, "nested"), (SURROGATE_QUESTION, "surrogate")], ids=["nested", "surrogate"]
)
def test_calibrates_labels_refuse_a_hostile_line_with_the_file_the_line_and_the_fix(tmp_path, hostile, said):
    path = _file(tmp_path, "real_more9.jsonl", QUESTION, hostile)
    with pytest.raises(ValueError) as refused:  # before: RecursionError, or nothing (the fit ran)
        check_labelled([path])
    message = str(refused.value)
    assert f"{path}:2: " in message and said in message and "Fix that line" in message


@pytest.mark.parametrize(
    "hostile, said", [(NESTED, "nested"), (SURROGATE_CONVERSATION, "surrogate")], ids=["nested", "surrogate"]
)
def test_acts_labels_refuse_a_hostile_line_with_the_file_the_line_and_the_fix(tmp_path, hostile, said):
    path = _file(tmp_path, "train.jsonl", CONVERSATION, hostile)
    with pytest.raises(ValueError) as refused:
        read_labelled(path)
    message = str(refused.value)
    assert f"{path}:2: " in message and said in message and "Fix that line" in message


def test_every_labelled_reader_refuses_a_nested_line(tmp_path):
    path = _file(tmp_path, "cases.jsonl", QUESTION, NESTED)
    with pytest.raises(ValueError, match=rf"{path.name}:2: .*nested"):
        read_jsonl(path, lambda row: row["query"], lambda exc: f"no query ({exc})", (KeyError, TypeError))


def test_an_acts_file_with_no_labelled_later_turn_is_named_with_the_fix(tmp_path):
    path = tmp_path / "train.jsonl"
    path.write_text(json.dumps({"turns": [{"query": "显存不足"}]}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError) as refused:  # before: "need at least one array to stack", after reading turns
        read_labelled(path)
    message = str(refused.value)
    assert str(path) in message and "no labelled later turn" in message and '"act"' in message


@pytest.mark.parametrize(
    "lines",
    [
        [json.dumps(CONVERSATION), NESTED],
        [json.dumps(CONVERSATION), SURROGATE_CONVERSATION],
        [json.dumps({"turns": [{"query": "显存不足"}]})],
    ],
    ids=["nested", "surrogate", "no-later-turn"],
)
def test_the_acts_command_refuses_before_any_fitting(hash_settings, tmp_path, capsys, lines):
    from bot.cli import main
    from bot.engine.acts import acts_path
    from bot.engine.calibration import calibration_path
    from bot.engine.facts import build

    build(hash_settings, HashEmbedder())
    path = tmp_path / "train.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    argv = ["acts", str(path), "--embedder", "hash"]
    argv += ["--seeds", str(hash_settings.seeds_dir), "--index", str(hash_settings.index_dir)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "Traceback" not in err and "reading turns" not in err  # refused before reading turns
    assert not acts_path(calibration_path(hash_settings.index_dir, HashEmbedder().id)).exists()
