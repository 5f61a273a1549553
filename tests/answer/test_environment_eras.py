"""Under an environment answer, a section written for an older era than the pasted versions does not lead."""

from __future__ import annotations

import pytest

from bot.answer.turn import take_turn
from fixtures.engines import hash_engine, hash_settings_for

# Two answers to one problem: one written for Fluid 1.x (its words match the question closely), one for 2.x.
FLUID = (
    "# Fluid FAQ\n\n## Fluid 1.5 训练时报错 out of memory 显存不足\n\n"
    "+ 问题：Fluid 1.5 训练时报错 out of memory 显存不足。\n+ 解决方法：设置 `fluid.ExecutionStrategy` 并减小 batch_size。\n"
)
CURRENT = "# 显存\n\n## 多卡训练显存分配\n\n+ 解决方法：设置 `FLAGS_fraction_of_gpu_memory_to_use`。\n"
QUESTION = "训练时报错 out of memory 显存不足"


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    root = tmp_path_factory.mktemp("eras")
    (root / "seeds").mkdir()
    (root / "seeds" / "fluid.md").write_text(FLUID, encoding="utf-8")
    (root / "seeds" / "memory.md").write_text(CURRENT, encoding="utf-8")
    return hash_engine(hash_settings_for(root))


def _first(turned) -> str:
    return turned.reply.shown[0].hit.section.heading


def test_the_fluid_section_leads_when_nothing_says_otherwise(engine):
    assert "Fluid" in _first(take_turn(engine, QUESTION)[0])
    assert "Fluid" in _first(take_turn(engine, f"{QUESTION}\npaddlepaddle-gpu 1.8.5")[0])


def test_a_pasted_2x_environment_puts_a_section_of_its_era_first(engine):
    turned, _ = take_turn(engine, f"{QUESTION}\npip list | grep paddle\npaddlepaddle-gpu          2.2.2.post112")
    assert "Fluid" not in _first(turned)


def test_a_2x_environment_pasted_earlier_in_the_conversation_counts(engine):
    _, talk = take_turn(engine, "nvidia-smi 正常，pip list:\npaddlepaddle-gpu          2.5.2")
    turned, _ = take_turn(engine, QUESTION, conversation=talk)
    assert "Fluid" not in _first(turned)
