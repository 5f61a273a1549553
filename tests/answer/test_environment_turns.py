"""The environment in a conversation: read from each message, kept in the case, named in the reply and returned to
the APIs (``environment``, ``mismatches``); ``python -m bot check-env`` prints the same diagnosis."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.answer.turn import take_turn
from bot.cli import main
from fixtures.engines import one_section_engine

SMI = "| NVIDIA-SMI 418.67       Driver Version: 418.67       CUDA Version: 10.1     |"


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    return one_section_engine(tmp_path_factory.mktemp("env"))


def test_a_driver_given_in_turn_one_is_known_in_turn_three(engine):
    first, talk = take_turn(engine, f"训练时报错，nvidia-smi 如下：\n{SMI}")
    assert first.to_json()["environment"]["driver"] == "418.67" and first.to_json()["mismatches"] == []
    _, talk = take_turn(engine, "显存不足怎么办", conversation=talk)
    third, _ = take_turn(
        engine, "pip list | grep paddle\npaddlepaddle-gpu 2.6.0.post120\nUbuntu 20.04", conversation=talk
    )
    body = third.to_json()
    assert body["environment"]["driver"] == "418.67"
    [mismatch] = body["mismatches"]
    assert mismatch["code"] == "driver_too_old" and mismatch["values"]["driver"] == "418.67"
    assert mismatch["values"]["cuda"] == "12.0" and mismatch["source"]["url"].startswith("https://docs.nvidia.com/")
    assert "418.67" in third.reply.markdown and mismatch["source"]["url"] in third.reply.markdown


def test_the_reply_names_the_mismatch_in_chinese_and_still_cites_the_section(engine):
    turned, _ = take_turn(
        engine, "显存不足怎么办？我的环境：\nDriver Version: 418.67   CUDA Version: 10.1\npaddle with cuda: 10.2"
    )
    markdown = turned.reply.markdown
    assert markdown.startswith("**环境检查**") and "驱动 418.67 最高支持 CUDA 10.1；安装包是 CUDA 10.2 版本" in markdown
    assert "显存不足" in turned.reply.shown[0].hit.section.heading  # the knowledge base's section is still cited


def test_consistent_versions_are_said_so_and_a_missing_value_is_asked_for(engine):
    fine, _ = take_turn(
        engine, "显存不足怎么办？\nDriver Version: 470.82.01   CUDA Version: 11.4\npaddle with cuda: 11.7"
    )
    assert "没有发现不匹配" in fine.reply.markdown and fine.to_json()["mismatches"] == []
    ask, _ = take_turn(engine, "GPU out of memory\npaddlepaddle-gpu==2.6.0.post120")
    assert "`nvidia-smi`" in ask.reply.markdown.split("\n\n")[0]


def test_a_question_without_versions_gets_no_environment_paragraph(engine):
    turned, _ = take_turn(engine, "显存不足怎么办")
    assert "环境检查" not in turned.reply.markdown and turned.to_json()["environment"] == {}


def test_check_env_prints_the_diagnosis(tmp_path: Path, capsys):
    paste = tmp_path / "env.txt"
    paste.write_text(f"{SMI}\npaddle with cuda: 10.2\n", encoding="utf-8")
    assert main(["--seeds", str(tmp_path), "check-env", str(paste)]) == 0
    out = capsys.readouterr().out
    assert "Status: mismatch" in out and "driver 418.67" in out and "Driver too old" in out


def test_a_pasted_log_still_leads_with_its_error_line(engine):
    log = (
        'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n'
        "OSError: libcudart.so.11.0: cannot open shared object file: No such file or directory"
    )
    turned, _ = take_turn(engine, log)
    blocks = turned.reply.markdown.split("\n\n")
    detected = next(n for n, block in enumerate(blocks) if block.startswith("**Detected:**"))
    assert blocks[detected + 1].startswith("**Environment check**")
    assert not any(block.startswith("**Environment check**") for block in blocks[:detected])
    assert "The library libcudart.so.11.0 was not found" in turned.reply.markdown
    assert [m["code"] for m in turned.to_json()["mismatches"]] == ["missing_library"]
