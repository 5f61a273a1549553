"""Pseudo-questions drawn from a knowledge base's own structure (bot.kb.pseudo), one test per kind."""

from __future__ import annotations

from bot.kb.domain import shipped
from bot.kb.parse import parse_folder
from bot.kb.pseudo import contains, draw, held_out, questions_of

GUIDE = """# Trainer guide

## How do I resume training from a checkpoint?

Pass the folder of the last checkpoint to the trainer. It restores the optimizer too.

## FAQ

- Does the trainer support bf16 on older GPUs
- Q: Why is the second epoch slower than the first?

## NCCL timeout

The job stops after ten minutes with this error:

```
Traceback (most recent call last):
  File "train.py", line 12, in <module>
RuntimeError: NCCL error: unhandled system error, NCCL version 2.18.1
```

## Enable debug logging

```bash
# print every collective
export NCCL_DEBUG=INFO
```
"""

FAQ = """# 安装 FAQ

## 1. 安装后无法导入

+ 问题描述：安装完成后 import paddle 报错找不到 libcudart 动态库

+ 解决方法：把 CUDA 的 lib64 目录加入 `LD_LIBRARY_PATH`。
"""


def _sections(tmp_path):
    (tmp_path / "guide.md").write_text(GUIDE, encoding="utf-8")
    (tmp_path / "faq.md").write_text(FAQ, encoding="utf-8")
    sections, errors = parse_folder(tmp_path, faq=shipped().faq)
    assert not errors
    return {s.heading: (n, s) for n, s in enumerate(sections)}, sections


def _drawn(tmp_path, heading):
    by_heading, _ = _sections(tmp_path)
    n, section = next(v for h, v in by_heading.items() if heading in h)
    return [(q.kind, q.text) for q in questions_of(section, n, shipped().faq)]


def test_a_heading_that_asks_is_a_question(tmp_path):
    assert ("heading", "How do I resume training from a checkpoint?") in _drawn(tmp_path, "resume training")


def test_a_heading_that_names_a_topic_is_not(tmp_path):
    assert all(kind != "heading" for kind, _ in _drawn(tmp_path, "NCCL timeout"))


def test_question_lines_and_bullets_under_a_broad_heading(tmp_path):
    drawn = _drawn(tmp_path, "FAQ")
    assert ("question", "Does the trainer support bf16 on older GPUs") in drawn  # no "?": a bullet under "FAQ"
    assert ("question", "Why is the second epoch slower than the first?") in drawn


def test_a_quoted_log_is_pasted_as_a_question(tmp_path):
    kinds = dict(_drawn(tmp_path, "NCCL timeout"))
    assert "RuntimeError: NCCL error: unhandled system error" in kinds["log"]


def test_a_command_line_not_its_comment(tmp_path):
    assert ("command", "export NCCL_DEBUG=INFO") in _drawn(tmp_path, "debug logging")


def test_an_faq_problem_field_not_its_fix(tmp_path):
    drawn = _drawn(tmp_path, "无法导入")
    assert ("field", "安装完成后 import paddle 报错找不到 libcudart 动态库") in drawn
    assert all("LD_LIBRARY_PATH" not in text for _, text in drawn)


def test_the_first_sentence_of_the_prose(tmp_path):
    assert ("first", "Pass the folder of the last checkpoint to the trainer.") in _drawn(tmp_path, "resume training")


def test_draw_is_capped_per_section_and_the_same_each_time(tmp_path):
    _, sections = _sections(tmp_path)
    first, again = draw(sections, shipped().faq), draw(sections, shipped().faq)
    assert first == again and first
    per_section: dict[int, int] = {}
    for q in first:
        per_section[q.section] = per_section.get(q.section, 0) + 1
    assert max(per_section.values()) <= 2


def test_held_out_text_no_longer_holds_its_spans():
    text = "## Q: why OOM?\nQ: why OOM?\nSet the batch smaller."
    assert "why OOM" not in held_out(text, ["Q: why OOM?"]) and "batch smaller" in held_out(text, ["Q: why OOM?"])
    assert contains("A > Why  OOM?\nbody", ["Why OOM?"]) and not contains("body", ["Why OOM?"])
