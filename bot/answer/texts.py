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
        "page": "第 {page} 页",
        "open": "查看原文",
        "detected": "检测到的错误",
        "truncated": (
            "注意：输入过长：共 {total:,} 个字符，超过上限 {limit:,}。保留了开头几行和日志末尾（报错通常在最后），"
            "省略了中间约 {cut:,} 个字符。"
        ),
        "empty": "请输入你的问题，或粘贴完整的报错日志。例如：“训练时报错显存不足怎么办？”",
        "no_match": "抱歉，知识库里没有找到和你的问题足够匹配的内容，下面的章节只是最接近的，不一定能解决你的问题。",
        "nearest": "最接近的章节（点击下方按钮查看）：",
        "other_candidates": "其他可能相关的章节",
        "detail_of": "（上面这一节里与你的追问有关的部分：第 {steps} 步）",
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
        "nothing_to_retry": "还没有回答过什么问题。请描述你遇到的问题，或粘贴完整的报错日志。",
        "still_seen": "（你已经看过这一节；如果问题依旧，请说说试过了什么、现在的报错是什么。）",
        "exhausted": "知识库中没有更多和这个问题相关的内容了。",
        "en_summary": "English summary",
        "cut": "…（内容较长，完整内容请查看原文）",
        "image": "图片",
        "more_lines": "…（还有 {n} 行，共 {total:,} 个字符）",
        "chosen": "好的，这是你选的这一节。",
        "original": "原文（中文）",
        "vote_thanks": "感谢反馈！",
        "error": "抱歉，处理这条消息时出错了。请再试一次；如果还不行，请缩短粘贴的日志后重试。",
        "contact_default": "联系技术支持",
        "contact_none": "你们团队的技术支持渠道",
        "era": "这一节写于 {era} 时代，新版本（PaddlePaddle 2.x / TensorFlow 2.x）的做法可能不同。",
        "more_steps": "更多步骤",
        "showing": "（这一节较长，下面是与问题相关的第 {start}–{end} 行）",
        "background": "问题与背景",
        "no_english": "（这一节还没有英文摘要，下面是中文原文。）",
        "may_not_apply": "可能不适用",
        "tentative_reason": "知识库里没有和你的问题完全对应的内容，下面只是最接近的章节。",
        "no_match_title": "知识库里没有和这个问题相近的内容。",
        "covers": "这个助手根据知识库里的 {n} 份文档回答问题：{titles}。",
        "covers_generic": "这个助手只根据知识库里的文档回答问题。",
        "scope_more": " 等",
        "ask_more_generic": (
            "为了更准确地定位问题，请补充以下信息：\n\n"
            "- 完整的报错信息或日志（从第一条 Error 开始）\n"
            "- 用到的软件和版本\n"
            "- 你做了什么、期望的结果和实际的结果"
        ),
        "intent_thanks": "不客气！还有其他问题，随时问我。",
        "intent_greeting": "你好！描述你遇到的问题，或直接粘贴报错日志，我会从知识库里找解决方法。",
        "intent_small_talk": "我是知识库问答助手：根据知识库里的文档回答问题，每个回答都标明出处。描述问题或粘贴报错日志即可。",
        "collect_for_colleague_generic": (
            "这里没有配置人工支持渠道。找同事帮忙时，请一起发给他们：\n\n"
            "- 用到的软件和版本\n- 完整的报错信息或日志的最后几十行\n- 你已经试过的方法"
        ),
        "ask_person": "想找人帮忙？请到 {contact}。",
        "pointers": "最接近的章节（可能无关）",
        "ask_person_webhook": "想找人帮忙？点“找人工”或直接说“转人工”，我会把这段对话转给技术支持。",
        "intent_human_webhook": (
            "已把这段对话（你的问题、我的回答和引用的章节）转给技术支持，他们会联系你。\n\n"
            "等待的时候，也可以把完整的报错日志贴给我，我先查一下知识库。"
        ),
        "handoff_failed": "抱歉，这段对话没能转给技术支持（转交服务暂时不可用）。",
        "collect_for_colleague": (
            "这里没有配置人工支持渠道。找同事帮忙时，请一起发给他们：\n\n"
            '- 版本：PaddlePaddle 或 TensorFlow、CUDA、cuDNN（`python -c "import paddle; print(paddle.__version__)"`）\n'
            "- GPU 型号和驱动版本：`nvidia-smi` 的输出\n"
            "- 日志的最后几十行（`tail -n 50 train.log`），从第一条 Error 或 Traceback 开始\n"
            "- 你已经试过的方法"
        ),
        "intent_human": "可以在这里找人帮忙：{contact}。\n\n等待的时候，也可以把完整的报错日志贴给我，我先查一下知识库。",
        "new_chat_done": "已开始新对话。",
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
        "page": "page {page}",
        "open": "open source text",
        "detected": "Detected",
        "truncated": (
            "Note: your input was too long: {total:,} characters, over the limit of {limit:,}. "
            "I kept the first lines and the end of the log (where the error usually is) "
            "and left out about {cut:,} characters in the middle."
        ),
        "empty": "Type a question or paste a full error log, for example “Loss becomes NaN after a few steps”.",
        "no_match": (
            "Sorry, I found nothing in the knowledge base that matches your question confidently. "
            "The sections below are only the nearest ones and may not solve your problem."
        ),
        "nearest": "Nearest sections (click a button below to open one):",
        "other_candidates": "Other close sections",
        "detail_of": "(the part of the section above that your follow-up is about: step {steps})",
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
        "nothing_to_retry": "Nothing has been answered yet. Describe the problem, or paste the full error log.",
        "still_seen": "(You have seen this section already; if the problem persists, say what you tried and what the error is now.)",
        "exhausted": "The knowledge base has nothing more on this question.",
        "en_summary": "English summary",
        "cut": "… (long section: open the source text for the rest)",
        "image": "image",
        "more_lines": "… ({n} more lines, {total:,} characters in all)",
        "chosen": "Here is the section you picked.",
        "original": "Original section (Chinese)",
        "vote_thanks": "Thanks for the feedback!",
        "error": "Sorry, something went wrong while answering. Please try again, or paste a shorter part of the log.",
        "contact_default": "Contact support",
        "contact_none": "your team’s support channel",
        "era": "Written for {era}; on newer releases (PaddlePaddle 2.x / TensorFlow 2.x) the fix may differ.",
        "more_steps": "More steps",
        "showing": "(a long section: lines {start}–{end}, where it matches your question)",
        "background": "Problem and background",
        "no_english": "_(No English summary for this section yet; the original text, in Chinese, follows.)_",
        "may_not_apply": "May not apply",
        "tentative_reason": "Nothing here matches your question exactly; these are only the closest sections.",
        "no_match_title": "The knowledge base has nothing close to this question.",
        "covers": "This assistant answers from the {n} documents in its knowledge base: {titles}.",
        "covers_generic": "This assistant answers only from the documents in its knowledge base.",
        "scope_more": " and others",
        "ask_more_generic": (
            "To pin the problem down, please add:\n\n"
            "- the full error message or log (from the first Error line)\n"
            "- the software involved and its versions\n"
            "- what you did, what you expected and what happened"
        ),
        "intent_thanks": "You're welcome! Ask any time.",
        "intent_greeting": (
            "Hi! Describe the problem you hit, or paste the error log, and I'll look for the fix in the knowledge base."
        ),
        "intent_small_talk": (
            "I answer questions from the documents in this knowledge base and cite the source of every answer. "
            "Describe your problem or paste an error log."
        ),
        "collect_for_colleague_generic": (
            "No support contact is set up here. When you ask a colleague, send them:\n\n"
            "- the software involved and its versions\n- the full error message or the last lines of the log\n"
            "- what you have tried already"
        ),
        "ask_person": "To ask a person, go to {contact}.",
        "pointers": "Closest sections (probably unrelated)",
        "ask_person_webhook": "To ask a person, press “Talk to a person” (or say so) and I'll pass this conversation on.",
        "intent_human_webhook": (
            "I've passed this conversation (your questions, my replies and the sections I cited) to support; "
            "someone will get back to you.\n\nWhile you wait, paste the full error log and I'll check the knowledge base."
        ),
        "handoff_failed": "Sorry, I could not pass this conversation on (the hand-off service is not reachable).",
        "collect_for_colleague": (
            "No support contact is set up here. When you ask a colleague, send them:\n\n"
            '- versions: PaddlePaddle or TensorFlow, CUDA, cuDNN (`python -c "import paddle; print(paddle.__version__)"`)\n'
            "- the GPU model and driver version: the output of `nvidia-smi`\n"
            "- the last lines of the log (`tail -n 50 train.log`), from the first Error or Traceback\n"
            "- what you have tried already"
        ),
        "intent_human": (
            "You can reach a person here: {contact}.\n\nWhile you wait, paste the full error log and I'll check "
            "the knowledge base."
        ),
        "new_chat_done": "Started a new chat.",
    },
}


def text(language: str, key: str, **values: object) -> str:
    """One fixed UI text in the reply language ("zh", anything else is English).

    >>> text("zh", "lines", start=3, end=9), text("en", "lines", start=3, end=9)
    ('第 3–9 行', 'lines 3–9')
    """
    template = TEXTS["zh" if language == "zh" else "en"][key]
    return template.format(**values) if values else template
