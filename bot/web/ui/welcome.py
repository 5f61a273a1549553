"""What the empty chat shows, from the operator's settings and the knowledge base (never from the seeds):
the page title (``BOT_TITLE``, else a neutral one) and example questions taken from the indexed sections.

An example is a whole question a document answers: a curated phrasing of the section
(``seeds/meta``, one in Chinese and one in English where both exist) or, without metadata, the
section's heading when it reads as a question. One per document (the largest documents first), so
the examples show the breadth of the knowledge base; one too long for a chip is skipped, never cut.

    >>> from bot.records import Section
    >>> doc = [Section("b.md", h, ("Billing", h), n, n, h, "x", "Billing") for n, h in
    ...        enumerate(["Billing", "How do I get an invoice?", "Contact"], 1)]
    >>> examples(doc, lambda key: None)
    [{'text': 'How do I get an invoice?', 'display_text': 'How do I get an invoice?'}]
    >>> page_title("", "en"), page_title("Acme help desk", "zh")
    ('Knowledge base assistant', 'Acme help desk')
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from bot.answer.reply import clean_heading
from bot.records import Section
from bot.web.ui.strings import ui_text

MAX_EXAMPLES = 4
MAX_EXAMPLE_CHARS = 60  # longer questions do not fit a chip in the 400 px widget: another one is taken

# A heading reads as a question when it ends with a question mark or starts with a question word.
_QUESTION = re.compile(r"[?？]\s*$|^(问题\s*[:：]|如何|怎么|为什么|(how|why|what|when|which|can|does|is|do)\b)",
                       re.IGNORECASE)


def page_title(setting: str, language: str) -> str:
    """The operator's title (``BOT_TITLE``), else a neutral one in ``language``."""
    return " ".join(setting.split()) or ui_text(language, "title")


def _is_intro(section: Section) -> bool:
    """The text above a document's first heading: it introduces the document, it answers no question."""
    return section.heading == section.title and section.path == (section.title,)


def _questions(section: Section, meta: Any) -> list[str]:
    """Whole questions ``section`` answers, questions first: its curated phrasings, else its heading if a question."""
    phrasings = [*getattr(meta, "phrasings_zh", ()), *getattr(meta, "phrasings_en", ())] if meta is not None else []
    if not phrasings:
        heading = re.sub(r"^问题\s*[:：]\s*", "", clean_heading(section.heading)).strip()
        phrasings = [heading] if _QUESTION.search(clean_heading(section.heading)) else []
    whole = [q for q in (" ".join(p.split()) for p in phrasings) if 0 < len(q) <= MAX_EXAMPLE_CHARS]
    return sorted(whole, key=lambda q: not _QUESTION.search(q))  # questions before keyword-style phrasings


def examples(sections: Sequence[Section], meta: Callable[[str], Any],
             limit: int = MAX_EXAMPLES) -> list[dict[str, str]]:
    """Up to ``limit`` example questions for the welcome, one per document, largest document first;
    Chinese and English alternate when the curated phrasings offer both."""
    by_source: dict[str, list[Section]] = {}
    for section in sections:
        if not _is_intro(section):
            by_source.setdefault(section.source, []).append(section)
    documents = sorted(by_source.values(), key=len, reverse=True)
    out: list[str] = []
    for n, document in enumerate(documents):
        want_zh = n % 2 == 0
        for section in document:
            questions = _questions(section, meta(section.key))
            if not questions:
                continue
            preferred = [q for q in questions if bool(re.search(r"[\u4e00-\u9fff]", q)) == want_zh]
            question = (preferred or questions)[0]
            if question not in out:
                out.append(question)
                break
        if len(out) >= limit:
            break
    return [{"text": q, "display_text": q} for q in out]
