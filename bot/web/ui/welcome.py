"""What the empty chat shows, from the operator's settings and the knowledge base (never from the seeds):
the page title (``BOT_TITLE``, else a neutral one) and a welcome in the UI's language with example questions
taken from the indexed sections.

An example is a whole question a document answers, a troubleshooting one first (a symptom: an error, a
failure, something stuck or wrong): a curated phrasing of the section (``seeds/meta``:
``phrasings_zh`` for a Chinese page, ``phrasings_en`` for an English one) or, without metadata, the
section's heading when it reads as a question, in the language it is written in. One per document (the
largest documents first), so the examples show the breadth of the knowledge base; one too long for a chip
is skipped, never cut.

    >>> from bot.records import Section
    >>> doc = [Section("b.md", h, ("Billing", h), n, n, h, "x", "Billing") for n, h in
    ...        enumerate(["Billing", "How do I get an invoice?", "Contact"], 1)]
    >>> examples(doc, lambda key: None, "en")
    ('How do I get an invoice?',)
    >>> examples(doc, lambda key: None, "zh")
    ()

None dated: an old release or a syntax error in the user's own code is not what the welcome offers.

    >>> old = [Section("p.md", h, ("P", h), n, n, h, "x", "P") for n, h in
    ...        enumerate(["P", "Why does paddle 1.1 not use the GPU?", "Why is GPU-Util 0%?"], 1)]
    >>> examples(old, lambda key: None, "en")
    ('Why is GPU-Util 0%?',)

The welcome is in one language, the page's. When the documents offer no question in it (another company's
English documents on a Chinese page), it shows theirs and says which language the documents are in:

    >>> welcome = Welcome.of(doc, lambda key: None)
    >>> welcome.shown("en")
    ('### Hi!\\n\\nDescribe your problem or paste the full error log. Try:', ('How do I get an invoice?',))
    >>> welcome.shown("zh")
    ('### 你好！\\n\\n描述你遇到的问题，或粘贴完整的报错日志。知识库的文档是英文的，例如：', ('How do I get an invoice?',))
    >>> Welcome().shown("zh")[0]  # no question to offer: no "try:" left hanging
    '### 你好！\\n\\n描述你遇到的问题，或粘贴完整的报错日志。'
    >>> page_title("", "en"), page_title("Acme help desk", "zh")
    ('Knowledge base assistant', 'Acme help desk')
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bot.answer.reply import clean_heading
from bot.kb.tokenize import detect_language
from bot.records import Section
from bot.web.ui.strings import UiLanguage, ui_text

MAX_EXAMPLES = 4
MAX_EXAMPLE_CHARS = 60  # longer questions do not fit a chip in the 400 px widget: another one is taken

# A heading reads as a question when it ends with a question mark or starts with a question word.
_QUESTION = re.compile(
    r"[?？]\s*$|^(问题\s*[:：]|如何|怎么|为什么|(how|why|what|when|which|can|does|is|do)\b)", re.IGNORECASE
)


# A troubleshooting phrasing names a symptom (an error, a failure, something stuck or wrong), the kind of question a
# person brings to this chat; "paddle stop_gradient=True affects which layers" is a reference question and comes after.
_SYMPTOM = re.compile(
    r"error|fail|crash|not (work|found|updat|using)|cannot|can't|doesn't|does not|wrong|differ|mismatch|stuck|"
    r"\b0%|\boom\b|out of memory|\bnan\b|slow|idle|报错|失败|错误|找不到|不一致|不对|卡住|为0|为 0|溢出|慢",
    re.IGNORECASE,
)


# An example must read as a question someone asks today: none naming an old release ("paddle 1.1 训练…", Fluid,
# TensorFlow 1.x) and none about a typo in the user's own code ("from paddle.distributed as dist 报语法错误"), which
# made the welcome read dated (issue 35); the document's next phrasing is taken instead.
_DATED = re.compile(
    r"paddle\s*(paddle\s*)?v?1\.\d|fluid|tensorflow\s*1\.|\btf\s*1\.\d|语法错误|syntax\s*error", re.IGNORECASE
)


def page_title(setting: str, language: str) -> str:
    """The operator's title (``BOT_TITLE``), else a neutral one in ``language``."""
    return " ".join(setting.split()) or ui_text(language, "title")


def _is_intro(section: Section) -> bool:
    """The text above a document's first heading: it introduces the document, it answers no question."""
    return section.heading == section.title and section.path == (section.title,)


def _questions(section: Section, meta: Any, language: UiLanguage) -> list[str]:
    """Whole questions in ``language`` that ``section`` answers, questions first: its curated phrasings in that
    language, else (no metadata) its heading if it is a question written in that language."""
    if meta is not None:
        phrasings = list(getattr(meta, f"phrasings_{language}", ()))
    else:
        heading = clean_heading(section.heading)
        question = re.sub(r"^问题\s*[:：]\s*", "", heading).strip()
        phrasings = [question] if _QUESTION.search(heading) and detect_language(question) == language else []
    whole = [
        q for q in (" ".join(p.split()) for p in phrasings) if 0 < len(q) <= MAX_EXAMPLE_CHARS and not _DATED.search(q)
    ]
    return sorted(whole, key=_rank)


def _rank(question: str) -> tuple[bool, bool]:
    """Symptoms first (what a person brings here), then questions, then keyword-style phrasings."""
    return not _SYMPTOM.search(question), not _QUESTION.search(question)


def examples(
    sections: Sequence[Section], meta: Callable[[str], Any], language: UiLanguage, limit: int = MAX_EXAMPLES
) -> tuple[str, ...]:
    """Up to ``limit`` example questions in ``language``, one per document, largest document first."""
    by_source: dict[str, list[Section]] = {}
    for section in sections:
        if not _is_intro(section):
            by_source.setdefault(section.source, []).append(section)
    out: list[str] = []
    for document in sorted(by_source.values(), key=len, reverse=True):
        found = [q for s in document for q in _questions(s, meta(s.key), language) if q not in out]
        # the document's best phrasing over all its sections: a symptom before a reference question
        question = min(found, key=_rank) if found else None
        if question is not None:
            out.append(question)
        if len(out) >= limit:
            break
    return tuple(out)


@dataclass(frozen=True)
class Welcome:
    """The empty chat's example questions per UI language, found once per knowledge base (``app.py`` computes
    them for the page and the widget; each tab then shows the ones in its language, :meth:`shown`)."""

    zh: tuple[str, ...] = ()
    en: tuple[str, ...] = ()

    @classmethod
    def of(cls, sections: Sequence[Section], meta: Callable[[str], Any]) -> Welcome:
        return cls(zh=examples(sections, meta, "zh"), en=examples(sections, meta, "en"))

    def shown(self, language: UiLanguage) -> tuple[str, tuple[str, ...]]:
        """The welcome's text and examples for a page in ``language``: its own examples; else (the documents
        have no question in it) the documents' own, and the text says which language they are in; else none,
        and the text invites no "try:"."""
        own, theirs = (self.zh, self.en) if language == "zh" else (self.en, self.zh)
        if own:
            return ui_text(language, "welcome"), own
        if theirs:
            return ui_text(language, "welcome_other"), theirs
        return ui_text(language, "welcome_plain"), ()


def as_chips(questions: Sequence[str]) -> list[dict[str, str]] | None:
    """Gradio's example messages for ``questions`` (None: no example box at all)."""
    return [{"text": q, "display_text": q} for q in questions] or None
