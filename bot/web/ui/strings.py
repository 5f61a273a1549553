"""The chat's words, one table per language, and how the UI picks its language.

Nothing here is about one knowledge base: the page title comes from the operator's setting
(``BOT_TITLE``) and the example questions from the indexed sections (:mod:`bot.web.ui.welcome`).
"""

from __future__ import annotations

from typing import Literal

UiLanguage = Literal["zh", "en"]  # the UI's languages: one table of words each


# ---------------------------------------------------------------- UI strings, one table per language

UI: dict[str, dict[str, str]] = {
    "zh": {
        "title": "知识库助手",  # BOT_TITLE replaces it
        "intro": "用中文或英文提问，或直接粘贴报错日志；每个回答都标明出处。",
        "hint": "提问或粘贴报错日志，回答都标明出处",
        "placeholder": "输入问题或粘贴报错日志…",
        "send": "发送",
        "new_chat": "新对话",
        "person": "找人工",
        "person_none": "求助同事",
        "reason_label": "哪里不对？",
        "comment_placeholder": "也可以写几句（可选），回车发送",
        # Names read by screen readers (static/after_load.js puts them on Gradio's controls) and the progress line.
        "a11y_box": "问题或报错日志",
        "a11y_send": "发送",
        "a11y_user": "你的消息",
        "a11y_bot": "助手的回答",
        "a11y_like": "赞",
        "a11y_dislike": "踩",
        "a11y_copy": "复制",
        "a11y_copy_all": "复制整段对话",
        "a11y_examples": "示例问题",
        "a11y_comment": "哪里不对（可选）",
        "a11y_reasons": "哪里不对",
        "a11y_scroll": "跳到最新消息",
        # Gradio's other buttons, named whenever they show (issue 44): a code block's copy, a toast's close, and the
        # chat's retry, undo, clear, edit, share, stop, full screen and download.
        "a11y_copy_code": "复制代码",
        "a11y_close": "关闭",
        "a11y_retry": "重新回答",
        "a11y_undo": "撤销",
        "a11y_clear": "清空对话",
        "a11y_edit": "编辑",
        "a11y_share": "分享",
        "a11y_stop": "停止",
        "a11y_fullscreen": "全屏",
        "a11y_download": "下载",
        "searching": "正在查找…",
        "toast_title": "提示",
        "wrong_section": "引用的章节不对",
        "didnt_help": "没解决我的问题",
        "outdated": "内容过时",
        "not_my_framework": "不是我用的框架",
        "other": "其他",
        "empty": "请先输入问题，或粘贴报错日志。",
        "vote_up": "感谢反馈！",
        "vote_down": "感谢反馈！可在下方选择原因。",
        "vote_withdrawn": "已撤销评价。",
        "reason_thanks": "已记录原因，谢谢！",
        "vote_not_saved": "评价未能保存，请稍后再试。",
        "reason_not_saved": "原因未能保存，请稍后再试。",
        "welcome": "### 你好！\n\n描述你遇到的问题，或粘贴完整的报错日志。试试：",
        # The documents offer no Chinese question: theirs are shown, and said to be English (bot.web.ui.welcome).
        "welcome_other": "### 你好！\n\n描述你遇到的问题，或粘贴完整的报错日志。知识库的文档是英文的，例如：",
        "welcome_plain": "### 你好！\n\n描述你遇到的问题，或粘贴完整的报错日志。",
    },
    "en": {
        "title": "Knowledge base assistant",  # BOT_TITLE replaces it
        "intro": "Ask in Chinese or English, or paste an error log; every answer cites its source.",
        "hint": "Ask or paste an error log; every answer cites its source",
        "placeholder": "Ask a question or paste an error log…",
        "send": "Send",
        "new_chat": "New chat",
        "person": "Talk to a person",
        "person_none": "Ask a colleague",
        "reason_label": "What was wrong?",
        "comment_placeholder": "Or say what was wrong (optional), then Enter",
        "a11y_box": "Question or error log",
        "a11y_send": "Send",
        "a11y_user": "Your message",
        "a11y_bot": "Assistant's answer",
        "a11y_like": "Like",
        "a11y_dislike": "Dislike",
        "a11y_copy": "Copy",
        "a11y_copy_all": "Copy the conversation",
        "a11y_examples": "Example questions",
        "a11y_comment": "What was wrong (optional)",
        "a11y_reasons": "What was wrong",
        "a11y_scroll": "Scroll to the newest message",
        "a11y_copy_code": "Copy code",
        "a11y_close": "Close",
        "a11y_retry": "Answer again",
        "a11y_undo": "Undo",
        "a11y_clear": "Clear the conversation",
        "a11y_edit": "Edit",
        "a11y_share": "Share",
        "a11y_stop": "Stop",
        "a11y_fullscreen": "Full screen",
        "a11y_download": "Download",
        "searching": "Searching…",
        "toast_title": "Note",
        "wrong_section": "Wrong section",
        "didnt_help": "Didn't help",
        "outdated": "Outdated",
        "not_my_framework": "Not my framework",
        "other": "Other",
        "empty": "Type a question or paste an error log first.",
        "vote_up": "Thanks for the feedback!",
        "vote_down": "Thanks! Pick a reason below if you like.",
        "vote_withdrawn": "Vote withdrawn.",
        "reason_thanks": "Reason recorded, thank you!",
        "vote_not_saved": "Your vote could not be saved. Please try again later.",
        "reason_not_saved": "The reason could not be saved. Please try again later.",
        "welcome": "### Hi!\n\nDescribe your problem or paste the full error log. Try:",
        "welcome_other": "### Hi!\n\nDescribe your problem or paste the full error log. The documents are in Chinese; "
        "they answer questions such as:",
        "welcome_plain": "### Hi!\n\nDescribe your problem or paste the full error log.",
    },
}


def a11y_labels() -> dict[str, dict[str, str]]:
    """The words static/after_load.js puts on Gradio's controls, per language (``a11y_*`` and the progress line)."""
    return {
        language: {k.removeprefix("a11y_"): v for k, v in table.items() if k.startswith("a11y_") or k == "searching"}
        for language, table in UI.items()
    }


def ui_language(accept_language: str | None) -> UiLanguage:
    """The UI language from the browser's Accept-Language header.

    >>> ui_language("zh-CN,zh;q=0.9,en;q=0.8"), ui_language("en-US,en;q=0.9"), ui_language(None)
    ('zh', 'en', 'en')
    """
    first = (accept_language or "").split(",")[0].strip().lower()
    return "zh" if first.startswith("zh") else "en"


def ui_text(language: str, key: str) -> str:
    return UI["zh" if language == "zh" else "en"][key]


# A pasted log that the repository's seeds answer: for the browser tests and the bench, never shown in the UI
# (the welcome's examples come from the knowledge base, bot.web.ui.welcome).
SAMPLE_LOG = (
    "I0221 18:48:34.436648 29562 Util.cpp:155] commandline: python train.py --use_gpu=True\n"
    "EnforceNotMet: Failed to find dynamic library: libnccl.so ( libnccl.so: cannot open shared object file: "
    "No such file or directory ) at [/paddle/paddle/fluid/platform/dynload/dynamic_loader.cc:157]\n"
    "PaddlePaddle Call Stacks:\n"
    "0       0x7f19fce44e96p paddle::platform::EnforceNotMet::EnforceNotMet(char const*, int) + 486\n"
    "1       0x7f19fe6ea71ep paddle::platform::dynload::GetNCCLDsoHandle() + 1822"
)
