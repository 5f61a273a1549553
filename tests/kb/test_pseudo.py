"""Pseudo-questions drawn from a knowledge base's own structure, and the sections they are scored against."""

from __future__ import annotations

from bot.kb.domain import shipped
from bot.kb.parse import parse_text
from bot.kb.pseudo import draw, questions_of, stripped

FAQ = (
    "# GPU FAQ\n\n"
    "## `已审核`1.问题：多卡训练报错 libnccl.so 找不到\n\n"
    "+ 版本号：`1.1.0`\n\n"
    "+ 问题描述：多卡训练报错 libnccl.so 找不到\n\n"
    "+ 报错输出：\n\n```\nEnforceNotMet: Failed to find dynamic library: libnccl.so\n```\n\n"
    "+ 解决方法：把 libnccl.so 所在目录加入 `LD_LIBRARY_PATH`。\n"
)
GUIDE = (
    "# Docker\n\n## Start a GPU container\n\nUse the NVIDIA container toolkit to expose the GPUs. It is installed once.\n\n"
    "```bash\n# check the GPUs\ndocker run --gpus all --rm nvidia/cuda nvidia-smi\n```\n\n"
    "## Questions\n\n- Why does docker not see my GPU?\n- Do I need nvidia-docker2?\n"
)


def sections(text: str, source: str = "a.md"):
    return parse_text(text, source, faq=shipped().faq)


def test_an_faq_entry_gives_its_heading_and_its_quoted_error_never_its_fix_or_labels():
    (entry,) = [s for s in sections(FAQ) if "libnccl" in s.heading]
    found = {q.kind: q.text for q in questions_of(entry, 0, shipped().faq)}
    assert found["heading"] == "多卡训练报错 libnccl.so 找不到"  # without the review marker and the numbering
    assert "EnforceNotMet: Failed to find dynamic library" in found["log"]
    assert all("LD_LIBRARY_PATH" not in text and "1.1.0" not in text for text in found.values())
    # the problem field repeats the heading: one question, not two
    assert sum(1 for text in found.values() if text.startswith("多卡训练报错")) == 1


def test_a_guide_gives_headings_commands_first_sentences_and_bullet_questions():
    drawn = [q for n, s in enumerate(sections(GUIDE)) for q in questions_of(s, n)]
    texts = {(q.kind, q.text) for q in drawn}
    assert ("heading", "Start a GPU container") in texts
    assert ("command", "docker run --gpus all --rm nvidia/cuda nvidia-smi") in texts  # not the comment above it
    assert ("first", "Use the NVIDIA container toolkit to expose the GPUs.") in texts
    assert ("question", "Why does docker not see my GPU?") in texts


def test_a_question_is_removed_from_its_section_wherever_the_section_repeats_it():
    (entry,) = [s for s in sections(FAQ) if "libnccl" in s.heading]
    heading = next(q for q in questions_of(entry, 0, shipped().faq) if q.kind == "heading")
    cut = stripped(entry, [heading])
    assert "多卡训练报错 libnccl.so 找不到" not in cut.heading + " ".join(cut.path) + cut.text
    assert "多卡训练报错 libnccl.so 找不到" in entry.text  # the problem field held it too
    assert "LD_LIBRARY_PATH" in cut.text  # the rest stays


def test_drawing_is_reproducible_and_spread_over_sections_within_its_limit():
    found = sections(FAQ) + sections(GUIDE, "b.md")
    every = draw(found, shipped().faq, limit=1000)
    few = draw(found, shipped().faq, limit=3)
    assert len(few) == 3 and few == draw(found, shipped().faq, limit=3)
    assert len({q.section for q in few}) == 3  # one per section before a second from any
    assert set(few) <= set(every)
