"""The one-line reason behind a tier that is not a plain answer, in the user's language.

The engine says *why* as a code and keys (:class:`bot.records.Reason`); this module writes it.

    >>> reason("en", "uncovered", subjects=["Jetson"], closest="Out of GPU memory during training")
    'No document here covers Jetson; the closest is about “Out of GPU memory during training”.'
    >>> reason("zh", "weak", closest="显存不足")
    '知识库中没有与此明确对应的内容；最接近的是“显存不足”，可能并不适用。'
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bot.kb.meta import SectionMeta
from bot.records import Answer, Section

REASONS: dict[str, dict[str, str]] = {
    "zh": {
        "uncovered": "知识库中没有关于 {subjects} 的文档；最接近的是“{closest}”。",
        "uncovered_top": "最接近的“{closest}”没有涉及 {subjects}，可能并不适用。",
        "weak": "知识库中没有与此明确对应的内容；最接近的是“{closest}”，可能并不适用。",
        "nothing": "知识库中没有与此相近的内容。",
        "empty": "消息中没有可检索的问题或报错文字。",
        "uncalibrated": "（此索引的嵌入模型尚未校准，置信度采用保守的默认设置。）",
        "retry_none": "知识库中没有更多适用于这个问题的内容。",
        "old_release": "最接近的“{closest}”是为 {era} 写的，而你用的是 {release}，可能并不适用。",
        "setting_conflict": "最接近的“{closest}”是为其他环境写的，不涉及 {subjects}，可能并不适用。",
    },
    "en": {
        "uncovered": "No document here covers {subjects}; the closest is about “{closest}”.",
        "uncovered_top": "The closest section, “{closest}”, does not cover {subjects} and may not apply.",
        "weak": "Nothing here clearly matches; the closest is about “{closest}” and may not apply.",
        "nothing": "Nothing in the knowledge base is close to this question.",
        "empty": "The message has no question or error text to search.",
        "uncalibrated": "(Confidence is not calibrated for this index's embedder; a conservative default is used.)",
        "retry_none": "The knowledge base has nothing more that fits this question.",
        "old_release": "The closest section, “{closest}”, was written for {era}; you use {release}, so it may not apply.",
        "setting_conflict": "The closest section, “{closest}”, is written for another environment than {subjects} "
        "and may not apply.",
    },
}


def reason(
    language: str,
    code: str,
    *,
    subjects: list[str] | tuple[str, ...] = (),
    closest: str = "",
    release: str = "",
    era: str = "",
) -> str:
    table = REASONS["zh" if language == "zh" else "en"]
    joiner = "、" if language == "zh" else ", "
    return table[code].format(
        subjects=joiner.join(subjects), closest=" ".join(closest.split())[:80], release=release, era=era
    )


def section_label(section: Section, meta: SectionMeta | None, language: str) -> str:
    """A section's name for a sentence: the curated English title in English, else the heading
    without review markers, numbering and the "问题：" prefix.

    >>> section_label(Section("a.md", "`已审核` 3. 问题：显存不足？", ("D",), 1, 2, "x", "", "D"), None, "zh")
    '显存不足？'
    """
    if language != "zh" and meta is not None and meta.title_en.strip():
        return meta.title_en.strip()
    label = re.sub(r"^`?已审核`?\s*(?:\d+\s*[.、．]\s*)?", "", section.heading)
    label = re.sub(r"^\d+\s*[.、．]\s*(?=问题)", "", label)
    return re.sub(r"^问题\s*[:：]\s*", "", label).strip() or section.heading


def reason_text(answer: Answer, meta: Callable[[str], SectionMeta | None], language: str) -> str:
    """The engine's reason for ``answer`` (a code and keys) as one line in ``language`` ("" for a plain answer)."""
    found = answer.reason
    if found is None:
        return ""
    closest = next((h.section for h in answer.hits if h.section.key == found.closest), None)
    label = section_label(closest, meta(closest.key), language) if closest is not None else ""
    return reason(language, found.code, subjects=found.subjects, closest=label, release=found.release, era=found.era)
