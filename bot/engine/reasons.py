"""The one-line reason behind a tier that is not a plain answer, in the user's language.

    >>> reason("en", "uncovered", subjects=["Jetson"], closest="Out of GPU memory during training")
    'No document here covers Jetson; the closest is about “Out of GPU memory during training”.'
    >>> reason("zh", "weak", closest="显存不足")
    '知识库中没有与此明确对应的内容；最接近的是“显存不足”，可能并不适用。'
"""

from __future__ import annotations

REASONS: dict[str, dict[str, str]] = {
    "zh": {
        "uncovered": "知识库中没有关于 {subjects} 的文档；最接近的是“{closest}”。",
        "uncovered_top": "最接近的“{closest}”没有涉及 {subjects}，可能并不适用。",
        "weak": "知识库中没有与此明确对应的内容；最接近的是“{closest}”，可能并不适用。",
        "nothing": "知识库中没有与此相近的内容。",
        "empty": "消息中没有可检索的问题或报错文字。",
        "uncalibrated": "（此索引的嵌入模型尚未校准，置信度采用保守的默认设置。）",
        "retry_none": "知识库中没有更多适用于这个问题的内容。",
    },
    "en": {
        "uncovered": "No document here covers {subjects}; the closest is about “{closest}”.",
        "uncovered_top": "The closest section, “{closest}”, does not cover {subjects} and may not apply.",
        "weak": "Nothing here clearly matches; the closest is about “{closest}” and may not apply.",
        "nothing": "Nothing in the knowledge base is close to this question.",
        "empty": "The message has no question or error text to search.",
        "uncalibrated": "(Confidence is not calibrated for this index's embedder; a conservative default is used.)",
        "retry_none": "The knowledge base has nothing more that fits this question.",
    },
}


def reason(language: str, code: str, *, subjects: list[str] | tuple[str, ...] = (), closest: str = "") -> str:
    table = REASONS["zh" if language == "zh" else "en"]
    joiner = "、" if language == "zh" else ", "
    return table[code].format(subjects=joiner.join(subjects), closest=" ".join(closest.split())[:80])
