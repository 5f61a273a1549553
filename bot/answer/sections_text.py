"""One section as a reply shows it: its title, its citation label, its source-view link and its fix with details.

Pure functions of the section, its metadata and the reply language; the reply's blocks (:mod:`bot.answer.blocks`)
carry what these return.

    >>> s = Section("f.md", "`已审核`2.问题：多卡训练报错", ("Paddle GPU", "2.问题：多卡训练报错"), 18, 59, "x", "y", "Paddle GPU")
    >>> section_title(s, None, "zh"), short_title(s, None, "zh")
    ('问题：多卡训练报错', 'Paddle GPU › 多卡训练报错')
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import urlencode

from bot.answer.blocks import Details
from bot.answer.reasons import shorten
from bot.answer.render import details_markdown
from bot.answer.safe_markdown import doc_markdown
from bot.answer.source_view import focus_lines, old_release, section_terms
from bot.answer.steps import (
    FIRST_ITEM,
    MAX_STEPS,
    english_lead,
    english_steps,
    fix_steps,
    render_steps,
    summary_parts,
)
from bot.answer.texts import text
from bot.kb.formats import is_converted
from bot.kb.meta import SectionMeta
from bot.kb.tokenize import detect_language
from bot.records import Hit, Section

FIX_CHARS = 1_800  # fix text shown up front
FULL_CHARS = 4_000  # rest of a section shown in a collapsed block
MAX_TERMS = 20


def source_url(base: str, section: Section, terms: Sequence[str] = (), language: str = "zh", line: int = 0) -> str:
    """The in-app source view of a section, with the terms to highlight.

    >>> s = Section("a b.md", "H", ("Doc", "H"), 3, 9, "h", "x", "Doc")
    >>> source_url("http://host/bot", s, ["显存", "oom"], "en")
    'http://host/bot/source?key=a+b.md%23h&terms=%E6%98%BE%E5%AD%98+oom&lang=en#L3'
    """
    terms = [t for t in dict.fromkeys(terms) if t and len(t) <= 60][:MAX_TERMS]
    query = {"key": section.key}
    if terms:
        query["terms"] = " ".join(terms)
    query["lang"] = "zh" if language == "zh" else "en"
    return f"{base.rstrip('/')}/source?{urlencode(query)}#L{line or section.start_line}"


def text_line(section: Section, index: int) -> int:
    """The document line of line ``index`` (0-based) of ``section.text`` (the text ends at ``end_line``)."""
    return section.end_line - len(section.text.splitlines()) + 1 + index


def focus(section: Section, terms: Sequence[str]) -> tuple[int, int] | None:
    """[first, last) lines of ``section.text`` around the lines matching ``terms`` (None: its top is the place)."""
    return focus_lines(section.text, terms)


def section_url(base: str, section: Section, terms: Sequence[str], language: str) -> str:
    """:func:`source_url` with only the terms that occur in that section and are not noise, opened at the
    lines that match them (a long section's top may be far from what the question is about)."""
    own = section_terms(terms, "\n".join([section.heading, section.text]))
    window = focus(section, own)
    return source_url(base, section, own, language, line=text_line(section, window[0]) if window else 0)


def clean_heading(heading: str) -> str:
    """A heading without the FAQ's review mark and number ("已审核2.问题：…" -> "问题：…").

    >>> clean_heading("`已审核`2.问题：使用Fluid训练模型时，使用多卡训练报错"), clean_heading("2.1 准备多机多卡环境")
    ('问题：使用Fluid训练模型时，使用多卡训练报错', '2.1 准备多机多卡环境')
    """
    label = heading.replace("`", "").strip()
    label = re.sub(r"^已审核\s*(?:\d+\s*[.、．]\s*)?", "", label)
    label = re.sub(r"^\d+\s*[.、．]\s*(?=问题)", "", label)
    return label.strip() or heading


def short_title(section: Section, meta: SectionMeta | None, language: str, limit: int = 80) -> str:
    """A short plain label for a section: English title for English, heading without numbering for Chinese.

    >>> s = Section("a.md", "`已审核`2.问题：使用Fluid训练模型时，使用多卡训练报错", ("D",), 1, 2, "x", "y", "D")
    >>> short_title(s, None, "zh")
    '使用Fluid训练模型时，使用多卡训练报错'
    >>> short_title(Section("a.md", "3. FAQ", ("Multi-GPU", "3. FAQ"), 1, 2, "x", "y", "Multi-GPU"), None, "zh")
    'Multi-GPU › 3. FAQ'
    """
    label = ""
    if language != "zh" and meta is not None and meta.title_en.strip():
        label = meta.title_en.strip()
    if not label:
        label = clean_heading(section.heading)
        label = re.sub(r"^问题\s*[:：]\s*", "", label).strip() or label
        if len(label) < 10 and section.title and section.title != label:  # "3. FAQ" alone says little
            label = f"{section.title} › {label}"
    return shorten(label, limit)  # at a word boundary: "… install tensorflow-gpu, v" read as a typo


def citation_label(section: Section, meta: SectionMeta | None, language: str) -> str:
    """``Doc › Section · lines a–b`` (plain text) for the one citation line.

    >>> s = Section("f.md", "`已审核`2.问题：多卡训练报错", ("Paddle GPU", "2.问题：多卡训练报错"), 18, 59, "x", "y", "Paddle GPU")
    >>> citation_label(s, None, "zh")
    'Paddle GPU › 多卡训练报错 · 第 18–59 行'
    """
    title = short_title(section, meta, language, limit=70)
    where = place_label(section, language)
    if section.title and not title.startswith(section.title) and section.title != title:
        title = f"{section.title} › {title}"
    return f"{title} · {where}"


def place_label(section: Section, language: str) -> str:
    """Where a citation points: a Markdown document's lines; a converted document's file name and its place there
    (a PDF's page, an HTML heading's anchor; a Word file's place is the heading the label already names).

    >>> s = Section("wiki/faq.pdf", "OOM", ("FAQ", "OOM"), 9, 12, "oom", "x", "FAQ", locator="#page=3")
    >>> place_label(s, "en"), place_label(Section("faq.html", "OOM", ("OOM",), 3, 5, "oom", "x", "", locator="#oom"), "zh")
    ('faq.pdf · page 3', 'faq.html#oom')
    """
    if not is_converted(section.source):
        return text(language, "lines", start=section.start_line, end=section.end_line)
    name = section.source.rsplit("/", 1)[-1]
    if section.locator.startswith("#page="):
        return f"{name} · {text(language, 'page', page=section.locator.removeprefix('#page='))}"
    return f"{name}{section.locator}"


def era_line(section: Section, language: str) -> str:
    """A short warning when the section was written for an old release ("" otherwise)."""
    era = old_release(section)
    return f"_{text(language, 'era', era=era)}_" if era else ""


# ---------------------------------------------------------------- section bodies


def _fix_field(section: Section, terms: Sequence[str]) -> tuple[str, str, bool] | None:
    """(field name, text, whether it is a Q&A pair) holding the fix; for Q&A lists the pair that best matches
    ``terms``. Which fields hold the fix, and which pair up, the parser read from the domain (``section.roles``)."""
    asks, says = section.having("question"), section.having("answer")
    question = asks[0] if asks else ""
    questions = [value for name, value in section.fields if name == question]
    if len(questions) > 1:  # a list of Q&A pairs: pick the pair the question matched
        answer = says[0]
        pairs: list[tuple[str, str]] = []
        pending = ""
        for name, value in section.fields:
            if name == question:
                pending = value
            elif name == answer and pending:
                pairs.append((pending, value))
                pending = ""
        if pairs:
            lowered = [t.lower() for t in terms]
            best = max(pairs, key=lambda p: sum(t in (p[0] + p[1]).lower() for t in lowered))
            return question, f"**{question}：** {best[0]}\n\n**{answer}：** {best[1]}", True
    for wanted in section.having("fix"):
        value = section.field(wanted)
        if value.strip():
            return wanted, value, False
    return None


def _other_fields(section: Section, fix_name: str) -> str:
    parts = []
    quiet = section.having("quiet")
    for name, value in section.fields:
        if name == fix_name or name in quiet or not value.strip():
            continue
        parts.append(f"**{name}：**\n\n{value}")
    return "\n\n".join(parts)


def _steps_or_text(markdown: str) -> tuple[str, str]:
    """(up-front steps, the rest for the details) of inert fix markdown."""
    lead, steps, notes = fix_steps(markdown)
    if not steps:
        return markdown, ""
    shown, rest = steps[:MAX_STEPS], steps[MAX_STEPS:]
    more = render_steps("", rest, ()) if rest else ""
    return render_steps(lead, shown, notes if not rest else ()), "\n\n".join(p for p in (more, *notes) if p and rest)


def section_body(
    hit: Hit, meta: SectionMeta | None, language: str, limit: int = FIX_CHARS, *, written_in: str | None = None
) -> tuple[str, list[str]]:
    """(the fix as steps, collapsed details as markdown) of one section in the reply language (:func:`section_fix`)."""
    body, details = section_fix(hit, meta, language, limit, written_in=written_in)
    return body, [details_markdown(d.summary, d.body) for d in details]


def section_fix(
    hit: Hit, meta: SectionMeta | None, language: str, limit: int = FIX_CHARS, *, written_in: str | None = None
) -> tuple[str, list[Details]]:
    """(the fix as steps, collapsed details) of one section in the reply language; ``written_in`` is the
    section's own language (``SectionFacts.language``), detected only for a section outside an index."""
    section = hit.section
    fix = _fix_field(section, hit.matched_terms)
    details: list[Details] = []
    doc_language = written_in or section_language(section)
    if language != "zh" and meta is not None and meta.summary_en.strip():
        parts = summary_parts(meta.summary_en)
        lead, fix_text = english_lead(parts.get("fix") or parts.get("other") or meta.summary_en)
        remark = parts.get("other", "") if parts.get("fix") else ""
        if parts.get("fix") or lead or FIRST_ITEM.match(fix_text):
            steps = english_steps(fix_text)
            body = render_steps(lead, steps[:MAX_STEPS], [remark] if remark else ())
        else:  # a summary in prose lists no steps: its sentences are not numbered as if it did
            body = " ".join(fix_text.split())
        body, _ = doc_markdown(body, limit, "en")
        context = " ".join(parts[k] for k in ("problem", "background") if parts.get(k))
        if context:
            context_md, _ = doc_markdown(context, FULL_CHARS, "en")
            details.append(Details(text(language, "background"), context_md))
        if doc_language == "zh":  # an English section needs no "original Chinese" copy of itself
            original, cut = doc_markdown(section.text, FULL_CHARS, "zh")
            if cut:
                original += "\n\n" + text(language, "cut")
            details.append(Details(f"{text(language, 'original')}: {clean_heading(section.heading)}", original))
        return body, details

    if fix:
        name, value, pair = fix
        fix_md, cut = doc_markdown(value, limit, language)
        body, rest = (fix_md, "") if pair else _steps_or_text(fix_md)
        if cut:
            body += "\n\n" + text(language, "cut")
        if rest:
            details.append(Details(text(language, "more_steps"), rest))
        other = _other_fields(section, name) if not pair else section.text
        if other:
            other_md, other_cut = doc_markdown(other, FULL_CHARS, language)
            if other_cut:
                other_md += "\n\n" + text(language, "cut")
            details.append(Details(text(language, "details" if not pair else "rest"), other_md))
    else:
        shown_text, note = section.text, ""
        window = focus(section, hit.matched_terms) if len(section.text) > limit // 2 else None
        if window:  # a long section: the lines that match the question, not its first screen
            first, last = window
            shown_text = "\n".join(section.text.splitlines()[first:last])
            note = (
                "_" + text(language, "showing", start=text_line(section, first), end=text_line(section, last - 1)) + "_"
            )
        text_md, cut = doc_markdown(shown_text, limit, language)
        body, rest = _steps_or_text(text_md)
        if note:
            body = note + "\n\n" + body
        if cut or window:
            body += "\n\n" + text(language, "cut")
        if rest:
            details.append(Details(text(language, "more_steps"), rest))
    if language == "zh" and meta is not None and meta.summary_en.strip():
        summary, _ = doc_markdown(meta.summary_en, FULL_CHARS, "en")
        details.append(Details(f"{text('en', 'en_summary')}: {meta.title_en}", summary))
    if language != "zh" and meta is None and doc_language == "zh":
        body = text(language, "no_english") + "\n\n" + body
    return body, details


def section_language(section: Section) -> str:
    """The language a section is written in ("zh" or "en"), from its heading and text: the default
    :data:`LanguageLookup` for a section outside a built index, whose build stores it as ``SectionFacts.language``."""
    return "zh" if detect_language(f"{section.heading}\n{section.text[:3_000]}") == "zh" else "en"


def section_title(section: Section, meta: SectionMeta | None, language: str) -> str:
    """The one-line summary: the English title for English, the cleaned heading for Chinese."""
    if language != "zh" and meta is not None and meta.title_en.strip():
        return meta.title_en.strip()
    return clean_heading(section.heading)
