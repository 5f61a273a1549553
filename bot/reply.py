"""Answer -> chat reply in markdown, in the language of the question, with citations.

Everything here is a pure function of its arguments (no engine, no I/O), so the
chat UI and the JSON API format replies the same way and tests need no model.

Safety: every piece of text that reaches the markdown comes from a user or a
document, and the chat renders HTML. So user text is always escaped or put in
code, and document text goes through :func:`doc_markdown`, which keeps the
markdown (lists, code, links) but escapes every HTML tag, turns the few
harmless tags documents use (``<a href>``, ``<br>``) into markdown, drops
``javascript:`` links and replaces images by links (no request leaves the page
to load a document's image).

    >>> escape_text('<img src=x onerror="alert(1)">')
    '&lt;img src=x onerror="alert(1)"&gt;'
    >>> doc_markdown('run `a<b` then <br>see <a href="https://x.org/a">docs</a>')[0]
    'run `a<b` then \\nsee [docs](https://x.org/a)'
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from urllib.parse import urlencode

from bot.meta import SectionMeta
from bot.parse import FIX_FIELDS
from bot.records import Answer, Hit, Section

MetaLookup = Callable[[str], "SectionMeta | None"]

FIX_CHARS = 1_800  # fix text shown up front
FULL_CHARS = 4_000  # rest of a section shown in a collapsed block
RELATED_CHARS = 900  # text of a related section
USER_ECHO_LINES = 40  # lines of a pasted log echoed back in the user's bubble
USER_ECHO_CHARS = 4_000
MAX_TERMS = 20

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


# ---------------------------------------------------------------- escaping

_ENTITY = re.compile(r"&(?:#\d{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")


def escape_text(value: str) -> str:
    """Make text inert in markdown that is rendered as HTML: no tag, no entity trick.

    >>> escape_text("a < b && <script>alert(1)</script>")
    'a &lt; b &amp;&amp; &lt;script&gt;alert(1)&lt;/script&gt;'
    """
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def escape_inline(value: str) -> str:
    """Escape user text shown inline: HTML, and markdown that could load or link (images, links).

    >>> escape_inline("![x](http://e/t.png) *hi*")
    '\\\\!\\\\[x\\\\](http://e/t.png) \\\\*hi\\\\*'
    """
    value = escape_text(value)
    return re.sub(r"([\\`*_\[\]!|~#])", r"\\\1", value)


def code_span(value: str) -> str:
    """Inline code that stays one code span whatever backticks the text holds.

    >>> code_span("a`b"), code_span("")
    ('``a`b``', '` `')
    """
    value = " ".join(value.split()) or " "
    longest = max((len(run) for run in re.findall(r"`+", value)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def code_block(value: str, language: str = "") -> str:
    """A fenced code block that the text itself cannot close.

    >>> code_block("x\\n```\\ny")
    '````\\nx\\n```\\ny\\n````'
    """
    longest = max((len(run) for run in re.findall(r"`{3,}", value)), default=2)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{value.rstrip()}\n{fence}"


# ---------------------------------------------------------------- document markdown

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_RULE = re.compile(r"^ {0,3}(?:-{3,}|={3,}|\*{3,}|_{3,}|(?:- ){3,}-?|(?:\* ){3,}\*?)\s*$")
_A_TAG = re.compile(r"<a\s[^<>]*?href\s*=\s*[\"']([^\"'<>]*)[\"'][^<>]*>(.*?)</a\s*>", re.IGNORECASE | re.DOTALL)
_BR_TAG = re.compile(r"<br\s*/?>", re.IGNORECASE)
_AUTOLINK = re.compile(r"<(https?://[^<>\s]+)>")
_URL = r"\s*<?((?:[^()\s<>]|\([^()\s<>]*\))*)>?(?:\s+\"[^\"\n]*\")?\s*"  # one level of (...) as renderers allow
_MD_IMAGE = re.compile(r"!\[([^\]\n]*)\]\(" + _URL + r"\)")
_MD_LINK = re.compile(r"(?<!!)\[([^\]\n]*)\]\(" + _URL + r"\)")
_CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)", re.DOTALL)
_SAFE_URL = re.compile(r"^(?:https?://|mailto:)", re.IGNORECASE)


def _safe_url(url: str) -> bool:
    return bool(_SAFE_URL.match(url.strip())) and not re.search(r"[\s\"'<>\\]", url)


def _prose(value: str, language: str) -> str:
    """Escape HTML in prose (outside code), keeping safe links as markdown."""

    def link(match: re.Match[str]) -> str:
        label, url = match.group(1).strip(), match.group(2).strip()
        label = label or url
        if _safe_url(url):
            return f"[{label}]({url})"
        return label  # relative or script links cannot be followed from the chat: keep the words

    def image(match: re.Match[str]) -> str:
        alt, url = match.group(1).strip(), match.group(2).strip()
        word = text(language, "image")
        name = f"{word}: {alt}" if alt else word
        return f"[{name}]({url})" if _safe_url(url) else f"({name})"

    def a_tag(match: re.Match[str]) -> str:
        url = html.unescape(match.group(1)).strip()
        label = re.sub(r"<[^<>]*>", "", match.group(2)).strip() or url
        return f"[{label}]({url})" if _safe_url(url) else label

    value = _A_TAG.sub(a_tag, value)
    value = _BR_TAG.sub("\n", value)
    value = _AUTOLINK.sub(r"\1", value)
    value = _MD_IMAGE.sub(image, value)
    value = _MD_LINK.sub(link, value)
    # Escape every remaining tag; keep well-formed entities (they render as characters, never as tags).
    out: list[str] = []
    last = 0
    for match in _ENTITY.finditer(value):
        out.append(escape_text(value[last : match.start()]))
        out.append(match.group())
        last = match.end()
    out.append(escape_text(value[last:]))
    value = "".join(out)
    # Escaped link labels may now contain "[...]"; that is harmless text.
    return value


def _inline(line: str, language: str) -> str:
    """Escape one prose line, leaving inline code spans as they are (the renderer escapes code)."""
    out: list[str] = []
    last = 0
    for match in _CODE_SPAN.finditer(line):
        out.append(_prose(line[last : match.start()], language))
        out.append(match.group())
        last = match.end()
    out.append(_prose(line[last:], language))
    return "".join(out)


def _blocks(value: str) -> list[tuple[str, str]]:
    """Split markdown into ("code", fenced block) and ("prose", paragraph) blocks."""
    blocks: list[tuple[str, str]] = []
    current: list[str] = []
    fence: str | None = None
    kind = "prose"

    def flush() -> None:
        nonlocal current
        if any(line.strip() for line in current):
            blocks.append((kind, "\n".join(current).strip("\n")))
        current = []

    for line in value.splitlines():
        match = _FENCE.match(line)
        if fence is None:
            if _RULE.match(line):  # horizontal rules are separators between FAQ entries: noise in a reply
                flush()
                continue
            if match:
                flush()
                fence = match.group(1)[0] * len(match.group(1))
                kind = "code"
                current = [line]
                continue
            if not line.strip():
                flush()
                continue
            current.append(line)
        else:
            current.append(line)
            if match and match.group(1).startswith(fence) and line.strip() == match.group(1):
                flush()
                fence = None
                kind = "prose"
    if fence is not None and current:  # an unclosed fence is closed where the text ends
        current.append(fence)
    flush()
    return blocks


def _code(block: str) -> str:
    """Re-fence a code block so its body can never close it early."""
    lines = block.splitlines()
    opener = lines[0].strip()
    language = re.sub(r"[^\w+\-.#]", "", opener.lstrip("`~"))[:20]
    body = "\n".join(lines[1:-1]) if len(lines) >= 2 else ""
    return code_block(body, language)


def doc_markdown(value: str, limit: int | None = None, language: str = "zh") -> tuple[str, bool]:
    """Document markdown -> inert markdown, cut at a block boundary near ``limit`` characters.

    Returns the markdown and whether it was cut.

    >>> doc_markdown("para one\\n\\n```\\n<b>x</b>\\n```\\n\\npara <script>two</script>", limit=30)
    ('para one\\n\\n```\\n<b>x</b>\\n```', True)
    """
    out: list[str] = []
    used = 0
    cut = False
    for kind, block in _blocks(value):
        if limit is not None and used + len(block) > limit and out:
            cut = True
            break
        if limit is not None and len(block) > limit:  # a single huge block: keep its first lines
            kept, size = [], 0
            for line in block.splitlines():
                if size + len(line) > limit:
                    break
                kept.append(line)
                size += len(line) + 1
            if kind == "code":
                kept = kept[:-1] if len(kept) > 1 and _FENCE.match(kept[-1]) else kept
                kept.append(kept[0].strip()[:3] if kept else "```")
            block = "\n".join(kept)
            cut = True
        out.append(_code(block) if kind == "code" else "\n".join(_inline(line, language) for line in block.splitlines()))
        used += len(block)
        if cut:
            break
    return "\n\n".join(out), cut


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


def _code_blocks(markdown: str) -> list[str]:
    return [block for kind, block in _blocks(markdown) if kind == "code"]


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
            commands = _code_blocks(fix[1])
            if commands:
                parts.append(f"**{text(language, 'commands')}:**\n\n" + "\n\n".join(_code(c) for c in commands[:3]))
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

    def citations(self) -> list[dict]:
        return [s.citation() for s in self.shown]

    def to_json(self) -> dict:
        return {
            "kind": self.kind,
            "answered": self.answered,
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
        confidence=answer.confidence,
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
        confidence=answer.confidence,
    )


def format_exhausted(language: str, notes: Iterable[str] = ()) -> Reply:
    parts = [n for n in notes if n] + [text(language, "exhausted"), text(language, "ask_more")]
    return Reply(kind="exhausted", language=language, markdown="\n\n".join(parts))


def format_empty(language: str) -> Reply:
    return Reply(kind="empty", language=language, markdown=text(language, "empty"))
