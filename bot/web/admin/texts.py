"""The operator page's words in English and Chinese (the page's language: ``?lang=`` or Accept-Language),
and the Chinese names of the subjects groups are named by.

    >>> words("zh")["title"], words("en")["title"], words("fr")["title"]
    ('知识库缺口', 'Coverage gaps', 'Coverage gaps')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from bot.engine.subjects import Lexicon

Language = Literal["en", "zh"]

TEXTS: dict[str, dict[str, str]] = {
    "en": {
        "title": "Coverage gaps",
        "store": "store",
        "writes_waiting": "writes are waiting for the database",
        "selftest": "Self-test: the pages' own questions",
        "selftest_note": "hit@1 on questions drawn from each knowledge base's headings, FAQ lines, quoted errors and "
        "commands at build, each with its source text held out of its section",
        "selftest_head": "knowledge base|questions|product|dense alone|BM25 alone",
        "days": "{n} days",
        "sign_out": "Sign out",
        "other_language": "中文",
        "totals": "Totals",
        "questions": "questions",
        "answered": "answered",
        "tentative": "tentative",
        "unanswered": "unanswered",
        "up": "up-votes",
        "down": "down-votes",
        "not_helpful": "didn't help",
        "downvoted": "down-voted",
        "gaps": "gaps",
        "median": "median answer time",
        "origins": "Events by origin",
        "origins_note": "(ui: chat page, widget: portal panel, api: /api, "
        "v1: OpenAI-compatible API; app: recorded before origins were kept)",
        "over_time": "Over time",
        "chart_questions": "Questions",
        "chart_feedback": "Feedback",
        "per_day": "per day",
        "per_week": "per week",
        "per_month": "per month",
        "no_data": "no data in this period",
        "groups": "What the documents do not answer, grouped by subject",
        "groups_note": 'Unanswered, tentative, down-voted and "didn\'t help" questions, filed under the subject '
        "they name, then grouped by meaning. Largest group first.",
        "no_text": "No question text is kept (BOT_STORE_QUESTION_TEXT=0), so they are grouped by the section "
        "they came nearest to.",
        "left_out": "{n} message(s) left out, not questions:",
        "thanks": "thanks",
        "greeting": "greetings",
        "small_talk": "small talk",
        "human": "asked for a person",
        "front_end": "chat front-end prompts",
        "csv": "CSV",
        "csv_gaps": "questions with context (CSV)",
        "csv_events": "all events (CSV)",
        "col_size": "size",
        "col_group": "group",
        "col_trend": "trend (7 days)",
        "col_daily": "over time",
        "col_section": "nearest section",
        "steady": "steady",
        "vs": "vs",
        "after": "after",
        "cited": "cited",
        "times": "×",
        "tier_answer": "answered",
        "tier_tentative": "tentative",
        "tier_none": "unanswered",
        "tier_": "–",
        "no_gaps": "No gaps in this period.",
        "ungrouped": "{n} less frequent question(s) are not grouped yet: each view embeds a few hundred new "
        "wordings, most frequent first. Reload to group more.",
        "sections": "Sections",
        "sections_note": 'Most down-votes and "didn\'t help" first.',
        "col_cited": "cited",
        "col_reasons": "down-vote reasons",
        "no_sections": "No section cited in this period.",
        "wrong_section": "wrong section",
        "didnt_help": "didn't help",
        "outdated": "outdated",
        "not_my_framework": "not my framework",
        "other": "other",
        "no reason": "no reason",
        "near": "near “{section}”",
        "no_section": "no section",
        "sign_in_title": "sign in",
        "sign_in_intro": "This page is for operators. Sign in with the operator credential (BOT_ADMIN_TOKEN).",
        "credential": "Operator credential",
        "sign_in": "Sign in",
        "wrong": "That is not the operator credential.",
        "off": "The coverage page is off: start the app with BOT_ADMIN_TOKEN set to an operator credential (it is "
        "separate from BOT_API_TOKEN).",
    },
    "zh": {
        "title": "知识库缺口",
        "store": "存储",
        "writes_waiting": "写入正在等待数据库恢复",
        "selftest": "自测：文档自身的问题",
        "selftest_note": "构建时从每个知识库的标题、FAQ 问句、引用的报错和命令中生成问题，并从其所在章节中去掉原文后检索，首位命中率",
        "selftest_head": "知识库|问题数|本产品|仅向量|仅 BM25",
        "days": "{n} 天",
        "sign_out": "退出登录",
        "other_language": "English",
        "totals": "总计",
        "questions": "问题",
        "answered": "已回答",
        "tentative": "不确定",
        "unanswered": "未回答",
        "up": "点赞",
        "down": "点踩",
        "not_helpful": "没帮上",
        "downvoted": "被点踩",
        "gaps": "缺口",
        "median": "回答时间中位数",
        "origins": "按来源的事件",
        "origins_note": "（ui：聊天页，widget：门户侧栏，api：/api，v1：OpenAI 兼容接口；app：记录来源之前的数据）",
        "over_time": "趋势",
        "chart_questions": "问题数",
        "chart_feedback": "反馈",
        "per_day": "按天",
        "per_week": "按周",
        "per_month": "按月",
        "no_data": "这段时间没有数据",
        "groups": "文档没有回答的问题（按主题分组）",
        "groups_note": "未回答、不确定、被点踩和“没帮上”的问题，先按提到的主题归类，再按语义分组。最大的组在前。",
        "no_text": "没有保存问题原文（BOT_STORE_QUESTION_TEXT=0），因此按最接近的章节分组。",
        "left_out": "{n} 条消息不是问题，未计入：",
        "thanks": "致谢",
        "greeting": "问候",
        "small_talk": "闲聊",
        "human": "要求转人工",
        "front_end": "聊天前端的自动提示",
        "csv": "CSV",
        "csv_gaps": "带上下文的问题（CSV）",
        "csv_events": "全部事件（CSV）",
        "col_size": "数量",
        "col_group": "分组",
        "col_trend": "趋势（7 天）",
        "col_daily": "随时间",
        "col_section": "最接近的章节",
        "steady": "持平",
        "vs": "对比",
        "after": "前文",
        "cited": "引用",
        "times": "次",
        "tier_answer": "已回答",
        "tier_tentative": "不确定",
        "tier_none": "未回答",
        "tier_": "–",
        "no_gaps": "这段时间没有缺口。",
        "ungrouped": "还有 {n} 个较少见的问题尚未分组：每次打开页面会先嵌入几百个最常见的新问法。刷新以继续分组。",
        "sections": "章节",
        "sections_note": "点踩和“没帮上”最多的在前。",
        "col_cited": "被引用",
        "col_reasons": "点踩原因",
        "no_sections": "这段时间没有引用任何章节。",
        "wrong_section": "章节不对",
        "didnt_help": "没解决问题",
        "outdated": "内容过时",
        "not_my_framework": "不是我的框架",
        "other": "其他",
        "no reason": "未说明原因",
        "near": "接近“{section}”",
        "no_section": "无章节",
        "sign_in_title": "登录",
        "sign_in_intro": "此页面仅供运维人员使用。请用运维凭据（BOT_ADMIN_TOKEN）登录。",
        "credential": "运维凭据",
        "sign_in": "登录",
        "wrong": "运维凭据不正确。",
        "off": "知识库缺口页面未开启：启动应用时设置 BOT_ADMIN_TOKEN 作为运维凭据（与 BOT_API_TOKEN 不同）。",
    },
}


def subject_name(subject: str, language: str, lexicon: Lexicon | None = None) -> str:
    """A subject as the page names it: its name in the page's language from the domain (``names`` of its
    ``[[subject]]``; the engine's lexicon, the shipped one unless given), else its English name.

    >>> subject_name("multi-machine", "zh"), subject_name("multi-machine", "en"), subject_name("Jetson", "zh")
    ('多机', 'multi-machine', 'Jetson')
    """
    return (lexicon or Lexicon.load()).name(subject, language)


def group_label(
    label: str,
    subjects: Sequence[str],
    section: str,
    grouped_by_text: bool,
    language: str,
    lexicon: Lexicon | None = None,
) -> str:
    """A group's label in the page's language. The report names a group by its subjects (English, from the
    lexicon), maybe followed by its most frequent question; with no text kept, by the section it came nearest to.

    >>> group_label("Jetson · multi-machine", ("Jetson", "multi-machine"), "", True, "zh")
    'Jetson · 多机'
    >>> group_label("GPU out of memory: 显存不足怎么办", ("GPU out of memory",), "", True, "zh")
    '显存不足: 显存不足怎么办'
    >>> group_label("今天天气怎么样", (), "", True, "zh"), group_label("near “A › B”", (), "A › B", False, "zh")
    ('今天天气怎么样', '接近“A › B”')
    """
    if not grouped_by_text:
        return words(language)["near"].format(section=section) if section else words(language)["no_section"]
    named = " · ".join(subjects)
    if not subjects or not label.startswith(named):
        return label  # a representative question: the user's own words
    return " · ".join(subject_name(s, language, lexicon) for s in subjects) + label[len(named) :]


def words(language: str) -> dict[str, str]:
    """The page's words in ``language`` (English for anything but Chinese)."""
    return TEXTS["zh" if language == "zh" else "en"]


def page_language(query_lang: str | None, accept_language: str | None, ui_language) -> Language:
    """``?lang=zh|en`` first, else the browser's Accept-Language as the chat UI reads it (``ui_language``).

    >>> page_language("zh", "en-US", lambda h: "en"), page_language(None, "zh-CN", lambda h: "zh")
    ('zh', 'zh')
    >>> page_language("fr", "zh-CN", lambda h: "zh")
    'zh'
    """
    if query_lang in ("en", "zh"):
        return query_lang  # type: ignore[return-value]
    return "zh" if ui_language(accept_language) == "zh" else "en"
