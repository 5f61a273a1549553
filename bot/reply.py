"""Answer -> chat reply in markdown, in the language of the question, with citations.

Everything here is a pure function of its arguments (no engine, no I/O), so the
chat UI and the JSON API format replies the same way and tests need no model.

Safety: user text is always escaped or put in code, and document text goes
through :func:`bot.safe_markdown.doc_markdown`, so nothing typed by a user or
written in a document runs in the chat (which renders HTML).

    >>> escape_text('<img src=x onerror="alert(1)">')
    '&lt;img src=x onerror="alert(1)"&gt;'
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlencode

from bot.meta import SectionMeta
from bot.parse import FIX_FIELDS
from bot.records import Answer, Event, Hit, Section
from bot.safe_markdown import code_block, code_blocks, code_span, doc_markdown, escape_inline, escape_text
from bot.texts import TEXTS, text

__all__ = [  # the escaping and text helpers are part of this module's interface too
    "TEXTS", "code_block", "code_span", "doc_markdown", "escape_inline", "escape_text", "text",
]

MetaLookup = Callable[[str], "SectionMeta | None"]

FIX_CHARS = 1_800  # fix text shown up front
FULL_CHARS = 4_000  # rest of a section shown in a collapsed block
RELATED_CHARS = 900  # text of a related section
USER_ECHO_LINES = 40  # lines of a pasted log echoed back in the user's bubble
USER_ECHO_CHARS = 4_000
MAX_TERMS = 20


# ---------------------------------------------------------------- citations

@dataclass(frozen=True)
class Shown:
    """One section as shown in a reply: the citation the UI displays and the API returns."""

    hit: Hit
    role: str  # "answer" | "related" | "suggestion" | "option"
    url: str

    def citation(self) -> dict:
        data = self.hit.citation()
        data.update(
            title=self.hit.section.title,
            key=self.hit.section.key,
            role=self.role,
            url=self.url,
            matched_terms=list(self.hit.matched_terms[:MAX_TERMS]),
        )
        return data


def source_url(base: str, section: Section, terms: Sequence[str] = (), language: str = "zh") -> str:
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
    return f"{base.rstrip('/')}/source?{urlencode(query)}#L{section.start_line}"


def citation_line(section: Section, url: str, language: str) -> str:
    """``**Source:** Doc › Heading · `file` lines a–b · [open source text](url)``"""
    where = text(language, "lines", start=section.start_line, end=section.end_line)
    return (
        f"**{text(language, 'source')}:** {escape_inline(section.breadcrumb)} · "
        f"{code_span(section.source)} {where} · [{text(language, 'open')}]({url})"
    )


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
    label = " ".join(label.split())
    return label if len(label) <= limit else label[: limit - 1] + "…"


def signature_line(signature: str, language: str) -> str:
    """``**Detected:** `EnforceNotMet: ...` ``"""
    return f"**{text(language, 'detected')}:** {code_span(signature)}" if signature else ""


def truncation_notice(truncated_from: int, limit: int, language: str) -> str:
    """The visible notice for an input that was cut to the server-side limit (empty when it was not)."""
    if not truncated_from:
        return ""
    return text(language, "truncated", total=truncated_from, limit=limit)


def user_echo(value: str, is_log: bool | None = None) -> str:
    """The user's message as shown in their chat bubble: inert, and short even for a huge paste."""
    value = value.rstrip()
    lines = value.splitlines()
    multi = len(lines) > 1
    if is_log or multi:
        shown = "\n".join(line[:300] for line in lines[:USER_ECHO_LINES])[:USER_ECHO_CHARS]
        more = ""
        if len(shown) < len(value):
            rest = max(0, len(lines) - len(shown.splitlines()))
            more = "\n\n" + (f"… (+{rest} lines, {len(value):,} chars)" if rest else f"… ({len(value):,} chars)")
        return code_block(shown) + more
    shown = value[:USER_ECHO_CHARS]
    more = f" … ({len(value):,} chars)" if len(shown) < len(value) else ""
    return escape_inline(shown) + more


# ---------------------------------------------------------------- section bodies

def _fix_field(section: Section, terms: Sequence[str]) -> tuple[str, str] | None:
    """(field name, text) holding the fix; for Q&A lists the pair that best matches ``terms``."""
    questions = [value for name, value in section.fields if name == "问"]
    if len(questions) > 1:  # a list of Q&A pairs: pick the pair the question matched
        pairs: list[tuple[str, str]] = []
        pending = ""
        for name, value in section.fields:
            if name == "问":
                pending = value
            elif name == "答" and pending:
                pairs.append((pending, value))
                pending = ""
        if pairs:
            lowered = [t.lower() for t in terms]
            best = max(pairs, key=lambda p: sum(t in (p[0] + p[1]).lower() for t in lowered))
            return "问", f"**问：** {best[0]}\n\n**答：** {best[1]}"
    for wanted in FIX_FIELDS:
        value = section.field(wanted)
        if value.strip():
            return wanted, value
    return None


def _other_fields(section: Section, fix_name: str) -> str:
    parts = []
    for name, value in section.fields:
        if name in (fix_name, "版本号", "标签", "关键字") or not value.strip():
            continue
        parts.append(f"**{name}：**\n\n{value}")
    return "\n\n".join(parts)


def _details(summary: str, body: str) -> str:
    """A collapsed block; ``summary`` is plain text (escaped here), ``body`` markdown."""
    return f"<details><summary>{html.escape(summary, quote=False)}</summary>\n\n{body}\n\n</details>"


def section_body(hit: Hit, meta: SectionMeta | None, language: str, limit: int = FIX_CHARS,
                 compact: bool = False) -> str:
    """The fix up front, the rest collapsed; for English, the English summary first.

    ``compact`` (related sections, already inside a collapsed block) keeps only the
    fix, or for English the summary and commands.
    """
    section = hit.section
    fix = _fix_field(section, hit.matched_terms)
    parts: list[str] = []
    if language != "zh" and meta is not None and meta.summary_en.strip():
        summary, _ = doc_markdown(meta.summary_en, limit, language)
        parts.append(summary)
        if fix:
            commands = code_blocks(fix[1])
            if commands:
                parts.append(f"**{text(language, 'commands')}:**\n\n" + "\n\n".join(commands[:3]))
        if compact:
            return "\n\n".join(parts)
        original, cut = doc_markdown(section.text, FULL_CHARS, "zh")
        if cut:
            original += "\n\n" + text(language, "cut")
        parts.append(_details(f"{text(language, 'original')}: {section.heading}", original))
        return "\n\n".join(parts)

    if fix:
        name, value = fix
        body, cut = doc_markdown(value, limit, language)
        label = "问答" if name == "问" and language == "zh" else text(language, "fix")
        parts.append(f"**{label}：**\n\n{body}" if language == "zh" else f"**{label}:**\n\n{body}")
        if cut:
            parts.append(text(language, "cut"))
        rest = "" if compact else _other_fields(section, name) if name != "问" else section.text
        if rest:
            rest_md, rest_cut = doc_markdown(rest, FULL_CHARS, language)
            if rest_cut:
                rest_md += "\n\n" + text(language, "cut")
            parts.append(_details(text(language, "details" if name != "问" else "rest"), rest_md))
    else:
        body, cut = doc_markdown(section.text, limit, language)
        parts.append(body)
        if cut:
            parts.append(text(language, "cut"))
    if language == "zh" and meta is not None and meta.summary_en.strip() and not compact:
        summary, _ = doc_markdown(meta.summary_en, FULL_CHARS, "en")
        parts.append(_details(f"{text('en', 'en_summary')}: {meta.title_en}", summary))
    if language != "zh" and meta is None:
        parts.insert(0, "_(No English summary for this section yet; the original Chinese text follows.)_")
    return "\n\n".join(parts)


def section_title(section: Section, meta: SectionMeta | None, language: str) -> str:
    if language != "zh" and meta is not None and meta.title_en.strip():
        return meta.title_en.strip()
    return section.heading


# ---------------------------------------------------------------- whole replies

@dataclass
class Reply:
    """What the assistant says for one turn: markdown, clickable options and the citations behind it."""

    kind: str  # "answer" | "no_match" | "clarify" | "empty" | "exhausted" | "section"
    language: str
    markdown: str
    shown: list[Shown] = field(default_factory=list)
    options: list[dict] = field(default_factory=list)  # [{"label": str, "value": section key}]
    answered: bool = False
    signature: str = ""
    truncated_from: int = 0
    confidence: float = 0.0
    tier: str = "none"  # "answer" | "tentative" | "none", as decided by the engine (see bot.records.Answer)
    reason: str = ""  # one line in the reply language; empty for a plain answer
    events: list[Event] = field(default_factory=list)  # what the edge should record for this turn

    def citations(self) -> list[dict]:
        return [s.citation() for s in self.shown]

    def to_json(self) -> dict:
        return {
            "kind": self.kind,
            "tier": self.tier,
            "answered": self.answered,
            "reason": self.reason,
            "language": self.language,
            "reply": self.markdown,
            "signature": self.signature or None,
            "truncated_from": self.truncated_from or None,
            "confidence": round(self.confidence, 4),
            "options": self.options,
            "hits": self.citations(),
        }


def _preamble(answer: Answer | None, language: str, limit: int, notes: Iterable[str] = ()) -> list[str]:
    parts = [n for n in notes if n]
    if answer is not None:
        parts.append(truncation_notice(answer.truncated_from, limit, language))
        parts.append(signature_line(answer.signature, language))
    return [p for p in parts if p]


def _sources(shown: Sequence[Shown], language: str) -> str:
    lines = [f"**{text(language, 'sources')}:**", ""]
    for n, item in enumerate(shown, 1):
        s = item.hit.section
        where = text(language, "lines", start=s.start_line, end=s.end_line)
        lines.append(
            f"{n}. {escape_inline(s.breadcrumb)} — {code_span(s.source)} {where} · [{text(language, 'open')}]({item.url})"
        )
    return "\n".join(lines)


def format_answer(
    answer: Answer,
    meta: MetaLookup,
    base: str,
    *,
    limit: int,
    language: str | None = None,
    related: int = 2,
    notes: Iterable[str] = (),
    hits: Sequence[Hit] | None = None,
    kind: str = "answer",
    ask_more: bool = False,
) -> Reply:
    """Best section with its fix first, then up to ``related`` more sections collapsed, then sources."""
    language = language or answer.language
    hits = list(hits if hits is not None else answer.hits)[: 1 + related]
    parts = _preamble(answer, language, limit, notes)
    shown: list[Shown] = []
    for n, hit in enumerate(hits):
        s = hit.section
        url = source_url(base, s, hit.matched_terms, language)
        shown.append(Shown(hit, "answer" if n == 0 else "related", url))
        m = meta(s.key)
        if n == 0:
            title = section_title(s, m, language)
            if title == s.heading:  # the review mark and FAQ number say nothing to the reader; the citation keeps them
                title = clean_heading(s.heading)
            parts.append(f"### {escape_inline(title)}")
            parts.append(section_body(hit, m, language))
            parts.append(citation_line(s, url, language))
        else:
            if n == 1:
                parts.append(f"**{text(language, 'related')}:**")
            title = section_title(s, m, language)
            where = text(language, "lines", start=s.start_line, end=s.end_line)
            body = section_body(hit, m, language, limit=RELATED_CHARS, compact=True) + "\n\n" + citation_line(s, url, language)
            parts.append(_details(f"{n + 1}. {title} — {s.source} {where}", body))
    if len(shown) > 1:
        parts.append(_sources(shown, language))
    if ask_more:
        parts.append(text(language, "ask_more"))
    return Reply(
        kind=kind,
        language=language,
        markdown="\n\n".join(parts),
        shown=shown,
        answered=True,
        signature=answer.signature,
        truncated_from=answer.truncated_from,
        confidence=answer.confidence,
        tier="answer",
    )


def _option_list(hits: Sequence[Hit], meta: MetaLookup, base: str, language: str, role: str) -> tuple[list[Shown], list[dict], str]:
    shown, options, lines = [], [], []
    for n, hit in enumerate(hits, 1):
        s = hit.section
        url = source_url(base, s, hit.matched_terms, language)
        shown.append(Shown(hit, role, url))
        label = short_title(s, meta(s.key), language)
        options.append({"label": label, "value": s.key})
        where = text(language, "lines", start=s.start_line, end=s.end_line)
        lines.append(
            f"{n}. **{escape_inline(label)}** — {escape_inline(s.title)} · {code_span(s.source)} {where} · "
            f"[{text(language, 'open')}]({url})"
        )
    return shown, options, "\n".join(lines)


def format_no_match(answer: Answer, meta: MetaLookup, base: str, *, limit: int, language: str | None = None,
                    notes: Iterable[str] = (), suggestions: int = 3) -> Reply:
    """Say plainly there is no confident match, offer the nearest sections, ask for what would help."""
    language = language or answer.language
    parts = _preamble(answer, language, limit, notes)
    parts.append(text(language, "no_match"))
    shown, options, listing = _option_list(answer.hits[:suggestions], meta, base, language, "suggestion")
    if listing:
        parts.append(text(language, "nearest") + "\n\n" + listing)
    parts.append(text(language, "ask_more"))
    return Reply(
        kind="no_match", language=language, markdown="\n\n".join(parts), shown=shown, options=options,
        answered=False, signature=answer.signature, truncated_from=answer.truncated_from,
        confidence=answer.confidence, tier=answer.tier if answer.tier != "answer" else "tentative",
        reason=answer.reason,
    )


def format_clarify(answer: Answer, hits: Sequence[Hit], meta: MetaLookup, base: str, *, limit: int,
                   language: str | None = None, notes: Iterable[str] = ()) -> Reply:
    """Ask which of several different problems the user means; the options are clickable."""
    language = language or answer.language
    parts = _preamble(answer, language, limit, notes)
    shown, options, listing = _option_list(hits, meta, base, language, "option")
    parts.append(text(language, "clarify") + "\n\n" + listing)
    return Reply(
        kind="clarify", language=language, markdown="\n\n".join(parts), shown=shown, options=options,
        answered=True, signature=answer.signature, truncated_from=answer.truncated_from,
        confidence=answer.confidence, tier="answer",
    )


def format_exhausted(language: str, notes: Iterable[str] = ()) -> Reply:
    parts = [n for n in notes if n] + [text(language, "exhausted"), text(language, "ask_more")]
    return Reply(kind="exhausted", language=language, markdown="\n\n".join(parts))


def format_empty(language: str) -> Reply:
    return Reply(kind="empty", language=language, markdown=text(language, "empty"))
