"""Every fixed text of a reply, in Chinese and English: labels, notices, "no confident match".

Replies use the language of the question, including these texts.
"""

from __future__ import annotations


TEXTS: dict[str, dict[str, str]] = {
    "zh": {
        "fix": "解决方法",
        "details": "问题描述与分析",
        "full": "查看完整内容",
        "rest": "其余内容",
        "related": "其他可能相关的内容",
        "source": "来源",
        "sources": "引用来源",
        "lines": "第 {start}–{end} 行",
        "open": "查看原文",
        "detected": "检测到的错误",
        "truncated": "注意：输入过长：共 {total:,} 个字符，只分析了前 {limit:,} 个字符。请粘贴报错开头和最后的几十行。",
        "empty": "请输入你的问题，或粘贴完整的报错日志。例如：“训练时报错显存不足怎么办？”",
        "no_match": "抱歉，知识库里没有找到和你的问题足够匹配的内容，下面的章节只是最接近的，不一定能解决你的问题。",
        "nearest": "最接近的章节（点击下方按钮查看）：",
        "ask_more": (
            "为了更准确地定位问题，请补充以下信息：\n\n"
            "- 完整的报错日志（从第一条 Error 或 Traceback 开始）\n"
            "- `nvidia-smi` 的输出\n"
            "- CUDA、cuDNN 版本，以及 PaddlePaddle 或 TensorFlow 的版本"
        ),
        "clarify": "你的问题可能对应几种不同的情况。请选择最接近的一项（点击下方按钮）：",
        "followup": "（结合上一个问题“{previous}”一起检索）",
        "not_helpful": "抱歉没能解决。下面是其他可能的原因和解决方法：",
        "sorry": "抱歉没能解决。",
        "exhausted": "知识库中没有更多和这个问题相关的内容了。",
        "en_summary": "English summary",
        "cut": "…（内容较长，完整内容请查看原文）",
        "image": "图片",
        "more_lines": "…（还有 {n} 行，共 {total:,} 个字符）",
        "chosen": "你选择的是：",
        "original": "原文（中文）",
        "commands": "原文中的命令",
        "vote_thanks": "感谢反馈！",
        "error": "抱歉，处理这条消息时出错了。请再试一次；如果还不行，请缩短粘贴的日志后重试。",
    },
    "en": {
        "fix": "Fix",
        "details": "Problem description and analysis",
        "full": "Show the full section",
        "rest": "Rest of the section",
        "related": "Possibly related",
        "source": "Source",
        "sources": "Sources",
        "lines": "lines {start}–{end}",
        "open": "open source text",
        "detected": "Detected",
        "truncated": (
            "Note: your input was too long: {total:,} characters, only the first {limit:,} were analysed. "
            "Paste the start of the error and the last few dozen lines instead."
        ),
        "empty": "Type a question or paste a full error log, for example “Loss becomes NaN after a few steps”.",
        "no_match": (
            "Sorry, I found nothing in the knowledge base that matches your question confidently. "
            "The sections below are only the nearest ones and may not solve your problem."
        ),
        "nearest": "Nearest sections (click a button below to open one):",
        "ask_more": (
            "To pin the problem down, please add:\n\n"
            "- the full error log (from the first Error or Traceback line)\n"
            "- the output of `nvidia-smi`\n"
            "- your CUDA and cuDNN versions and your PaddlePaddle or TensorFlow version"
        ),
        "clarify": "Your question matches several different problems. Which one is closest? (click a button below)",
        "followup": "(searched together with your previous question “{previous}”)",
        "not_helpful": "Sorry that didn't help. Here are other possible causes and fixes:",
        "sorry": "Sorry that didn't help.",
        "exhausted": "The knowledge base has nothing more on this question.",
        "en_summary": "English summary",
        "cut": "… (long section: open the source text for the rest)",
        "image": "image",
        "more_lines": "… ({n} more lines, {total:,} characters in all)",
        "chosen": "You chose:",
        "original": "Original section (Chinese)",
        "commands": "Commands from the original section",
        "vote_thanks": "Thanks for the feedback!",
        "error": "Sorry, something went wrong while answering. Please try again, or paste a shorter part of the log.",
    },
}


def text(language: str, key: str, **values: object) -> str:
    """One fixed UI text in the reply language ("zh", anything else is English).

    >>> text("zh", "lines", start=3, end=9), text("en", "lines", start=3, end=9)
    ('第 3–9 行', 'lines 3–9')
    """
    template = TEXTS["zh" if language == "zh" else "en"][key]
    return template.format(**values) if values else template
