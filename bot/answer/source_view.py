"""The source view: a cited section's lines, its own matched terms highlighted, as an HTML page.

HTML comes from a Jinja2 template (``bot/answer/templates/source.html``, autoescaped); this
module only decides what to show:

- which terms to highlight: a term is marked only when it occurs in *that* section
  (a query's matched terms span several sections) and is not noise ("gi", "b", "00");
- whether the section was written for an old release (Fluid 1.x, CUDA 7.5, the
  PaddlePaddle v1/v2 API, TensorFlow 1.x sessions), which the page and the chat say.

    >>> section_terms(["显存", "gi", "b", "00", "batch_size", "NCCL"], "减小 batch_size 以降低显存占用")
    ['batch_size', '显存']
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape

from bot.kb.eras import old_release
from bot.kb.formats import CACHE_DIR, ConversionCache, Unreadable, is_converted, read_document
from bot.kb.parse import MAX_SEED_BYTES
from bot.records import Section

if TYPE_CHECKING:
    from bot.engine.answerer import Answerer
    from bot.settings import Settings

MAX_TERMS = 20
TEMPLATES = Path(__file__).with_name("templates")

# Short Latin terms that do mean something in this domain (others of two letters or fewer are noise).
_SHORT_KEEP = {"tf", "nn", "op", "io", "ps", "dp", "mp", "cpu", "gpu", "oom", "nan", "so", "xpu", "npu"}
_STOP = {
    "the",
    "and",
    "for",
    "how",
    "what",
    "why",
    "with",
    "when",
    "this",
    "that",
    "does",
    "can",
    "not",
    "are",
    "was",
    "you",
    "use",
    "using",
    "from",
    "into",
    "after",
    "before",
    "about",
    "have",
    "has",
    "get",
    "got",
    "but",
    # everyday words of error messages: they say nothing about which lines matter
    "open",
    "find",
    "cannot",
    "shared",
    "object",
    "file",
    "failed",
    "fail",
    "such",
    "directory",
    "error",
    "found",
    "please",
    "set",
    "issue",
    "command",
    "instance",
    "line",
    "call",
    "last",
    "most",
    "recent",
    "traceback",
}


def is_noise(term: str) -> bool:
    """A matched term not worth highlighting: numbers, one or two stray letters, stop words, one CJK character.

    >>> [is_noise(t) for t in ("gi", "b", "00", "1.2", "the", "显", "tf", "显存", "CUDA_VISIBLE_DEVICES")]
    [True, True, True, True, True, True, False, False, False]
    """
    word = term.strip()
    if not word or len(word) > 60:
        return True
    if re.fullmatch(r"[\d\W_]+", word):
        return True
    if re.fullmatch(r"[A-Za-z]+", word):
        lowered = word.lower()
        return lowered in _STOP or (len(word) <= 2 and lowered not in _SHORT_KEEP)
    if re.fullmatch(r"[\u4e00-\u9fff]", word):
        return True
    return False


def _term_pattern(term: str) -> str:
    """Latin terms match whole words only ("met" must not light up "Method"); CJK terms match anywhere."""
    escaped = re.escape(term)
    if re.fullmatch(r"[\w.\-+]+", term, re.ASCII):
        escaped = rf"(?<![A-Za-z0-9_]){escaped}(?![A-Za-z0-9_])"
    return escaped


def terms_pattern(terms: Sequence[str]) -> re.Pattern[str] | None:
    """One case-insensitive pattern for ``terms``, longest first (so "libnccl.so" wins over "nccl")."""
    ordered = sorted(dict.fromkeys(terms), key=len, reverse=True)
    return re.compile("|".join(_term_pattern(t) for t in ordered), re.IGNORECASE) if ordered else None


def section_terms(terms: Iterable[str], text: str, limit: int = MAX_TERMS) -> list[str]:
    """The terms worth highlighting in ``text``: not noise, and occurring in it. Longest first.

    >>> section_terms(["nccl", "libnccl.so", "met"], "Method: install libnccl.so, then set NCCL_DEBUG")
    ['libnccl.so']
    """
    out = []
    for term in sorted(dict.fromkeys(t.strip() for t in terms if t), key=len, reverse=True):
        if is_noise(term):
            continue
        if re.search(_term_pattern(term), text, re.IGNORECASE):
            out.append(term)
        if len(out) >= limit:
            break
    return out


FOCUS_LINES = 18  # lines of a long section shown around the lines that match the question


def focus_lines(text: str, terms: Iterable[str], size: int = FOCUS_LINES) -> tuple[int, int] | None:
    """[first, last) line indices of ``text``'s ``size``-line window that matches the most distinct terms,
    or None when its first lines match as well (nothing to move to) or nothing matches.

    A long section used to be shown from its top, so a question about its line 199 got lines 17–33.

    >>> doc = "\\n".join(["intro"] * 40 + ["set CUDA_VISIBLE_DEVICES=0 for nccl"] + ["more"] * 40)
    >>> focus_lines(doc, ["CUDA_VISIBLE_DEVICES", "nccl"])
    (38, 56)
    >>> focus_lines("nccl first\\n" + "x\\n" * 50, ["nccl"]) is None
    True
    """
    lines = text.splitlines()
    pattern = terms_pattern(section_terms(terms, text))
    if pattern is None or len(lines) <= size:
        return None
    found = [{m.group(0).lower() for m in pattern.finditer(line)} for line in lines]

    def score(first: int) -> int:
        window: set[str] = set()
        for words in found[first : first + size]:
            window |= words
        return len(window) * 1_000 + sum(len(words) for words in found[first : first + size])

    top = score(0)
    best = max(range(0, len(lines) - size + 1), key=lambda first: (score(first), -first))
    if score(best) <= top:
        return None
    first_hit = next(n for n in range(best, best + size) if found[n])
    start = max(0, min(first_hit - 2, len(lines) - size))  # two lines of context before the first match
    return start, min(len(lines), start + size)


def highlight(line: str, pattern: re.Pattern[str] | None) -> list[tuple[str, bool]]:
    """A line as (text, marked) pieces for the template (which escapes them).

    >>> highlight("set NCCL_DEBUG=INFO", terms_pattern(["NCCL_DEBUG"]))
    [('set ', False), ('NCCL_DEBUG', True), ('=INFO', False)]
    """
    if pattern is None:
        return [(line, False)] if line else []
    pieces: list[tuple[str, bool]] = []
    last = 0
    for match in pattern.finditer(line):
        if match.start() == match.end():
            continue
        if match.start() > last:
            pieces.append((line[last : match.start()], False))
        pieces.append((match.group(), True))
        last = match.end()
    if last < len(line):
        pieces.append((line[last:], False))
    return pieces


# ---------------------------------------------------------------- old releases

# The page's warning that a section targets an old release (bot.kb.eras.old_release names the era).
ERA_NOTE = {
    "zh": "注意：这一节是为 {era} 时代的版本写的；如果你用的是 PaddlePaddle 2.x 或 TensorFlow 2.x，命令和 API 可能已经不同。",
    "en": "Note: this section was written for {era}; on PaddlePaddle 2.x or TensorFlow 2.x the commands and API may differ.",
}


# ---------------------------------------------------------------- the page

CSS_FILE = "source.css"  # next to the template; inlined in the page (its CSP allows inline styles only)
TEXT = {
    "zh": {
        "lines": "第 {a}–{b} 行",
        "terms": "匹配词",
        "whole": "显示整个文件",
        "section": "只显示本章节",
        "missing": "找不到这个章节。它可能已被修改或删除，请重新提问。",
        "back": "← 返回对话",
        "title": "原文",
        "image": "图片",
        "image_off": "图片不在此处显示",
    },
    "en": {
        "lines": "lines {a}–{b}",
        "terms": "matched terms",
        "whole": "show the whole file",
        "section": "show only this section",
        "missing": "This section was not found. It may have changed or been removed; please ask again.",
        "back": "← Back to the chat",
        "title": "Source",
        "image": "image",
        "image_off": "the image is not shown here",
    },
}


@lru_cache(maxsize=1)
def _environment() -> Environment:
    return Environment(
        loader=FileSystemLoader(str(TEMPLATES)),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )


def template(name: str):
    return _environment().get_template(name)


@lru_cache(maxsize=1)
def page_css() -> str:
    return (TEMPLATES / CSS_FILE).read_text(encoding="utf-8")


def document_name(section: Section) -> str:
    """What the page calls the document: its title, not the file name (seed files are named by a hash).

    >>> document_name(Section("004_c9562597aefa3d00.txt", "h", ("TF GPU", "h"), 1, 2, "h", "x", "TF GPU"))
    'TF GPU'
    >>> document_name(Section("notes/nccl.md", "h", ("h",), 1, 2, "h", "x", ""))
    'nccl.md'

    A converted document is shown under its original's name (its text is the Markdown it was converted to):

    >>> document_name(Section("wiki/GPU.html", "h", ("GPU FAQ", "h"), 1, 2, "h", "x", "GPU FAQ"))
    'GPU FAQ (GPU.html)'
    """
    title = " ".join(section.title.split())
    if is_converted(section.source):
        return f"{title} ({Path(section.source).name})" if title else Path(section.source).name
    return title or Path(section.source).name


def section_name(section: Section) -> str:
    """The section's own heading as the document numbers it, without a leading review mark in backticks.

    >>> section_name(Section("a.md", "`已审核`2.问题：多卡训练报错", ("D", "x"), 1, 2, "h", "x", "D"))
    '2.问题：多卡训练报错'
    """
    return " ".join(re.sub(r"^`[^`]*`\s*", "", section.heading).split()) or document_name(section)


# ---------------------------------------------------------------- markdown, line by line

# Inline markdown a document line may hold: an image, a link, code, bold. The page keeps one row per source line
# (a citation links to its line), so markdown is rendered within each line; it showed raw `![GPU](/img/GPU-02.png)`.
_INLINE = re.compile(
    r"!\[(?P<alt>[^\]]*)\]\((?P<src>[^)\s]*)[^)]*\)"
    r"|\[(?P<label>[^\]]+)\]\((?P<href>[^)\s]+)[^)]*\)"
    r"|<a\s[^>]*?href=[\"'](?P<ahref>[^\"']+)[\"'][^>]*>(?P<atext>.*?)</a>"
    r"|`(?P<code>[^`]+)`"
    r"|\*\*(?P<strong>[^*]+)\*\*"
)
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
# A thematic break or a setext underline ("----------", "***", "====="): a rule, not text (issue 35).
_RULE_LINE = re.compile(r"^\s{0,3}([-*_=])(\s*\1){2,}\s*$")
_ITEM = re.compile(r"^\s*[-+*]\s+(.*)$")  # a list item ("+ 答复：", "- step"): a bullet, not its marker
Style = Literal["text", "img", "link", "code", "strong"]


def _safe_href(url: str) -> str:
    """A link target the page may follow: http(s) only (a relative image path has nothing to point at here)."""
    return url if re.match(r"https?://", url, re.IGNORECASE) else ""


def inline_pieces(line: str) -> list[tuple[str, Style, str]]:
    """A line of markdown as (text, style, href) pieces; an image becomes its alt text (a link when its address is
    absolute), so the page never shows markdown syntax.

    >>> inline_pieces("see ![GPU](/img/GPU-02.png) and `nvidia-smi`")
    [('see ', 'text', ''), ('GPU', 'img', ''), (' and ', 'text', ''), ('nvidia-smi', 'code', '')]
    >>> inline_pieces("![](https://x.org/a.png) [docs](https://x.org)")
    [('image', 'img', 'https://x.org/a.png'), (' ', 'text', ''), ('docs', 'link', 'https://x.org')]
    >>> inline_pieces('- <a href="https://x.org/ml" target="_blank">https://x.org/ml</a>')
    [('- ', 'text', ''), ('https://x.org/ml', 'link', 'https://x.org/ml')]
    """
    pieces: list[tuple[str, Style, str]] = []
    last = 0
    for match in _INLINE.finditer(line):
        if match.start() > last:
            pieces.append((line[last : match.start()], "text", ""))
        if match.group("src") is not None:
            pieces.append((match.group("alt").strip() or "image", "img", _safe_href(match.group("src"))))
        elif match.group("href") is not None:
            pieces.append((match.group("label"), "link", _safe_href(match.group("href"))))
        elif match.group("ahref") is not None:  # an HTML link written into a markdown document
            pieces.append(
                (
                    re.sub(r"<[^>]+>", "", match.group("atext")) or match.group("ahref"),
                    "link",
                    _safe_href(match.group("ahref")),
                )
            )
        elif match.group("code") is not None:
            pieces.append((match.group("code"), "code", ""))
        else:
            pieces.append((match.group("strong"), "strong", ""))
        last = match.end()
    if last < len(line):
        pieces.append((line[last:], "text", ""))
    return pieces


RowKind = Literal["text", "heading", "fence", "code", "rule", "item"]


def markdown_rows(lines: Sequence[str]) -> list[tuple[RowKind, str]]:
    """Each line's kind and the text to show: a heading without its #s, a code fence's marker line, a line inside
    a fence (shown as it is), or text (inline markdown rendered by :func:`inline_pieces`).

    >>> markdown_rows(["## Fix", "```bash", "export A=1", "```", "done"])
    [('heading', 'Fix'), ('fence', 'bash'), ('code', 'export A=1'), ('fence', ''), ('text', 'done')]

    A list item shows its text after a bullet (the page draws it), a rule line is a rule:

    >>> markdown_rows(["+ 答复：减小 batch_size", "----------", "- a - b"])
    [('item', '答复：减小 batch_size'), ('rule', ''), ('item', 'a - b')]
    """
    out: list[tuple[RowKind, str]] = []
    fenced = False
    for line in lines:
        if _FENCE.match(line):
            fenced = not fenced
            out.append(("fence", _FENCE.sub("", line).strip()))
        elif fenced:
            out.append(("code", line))
        elif heading := _HEADING.match(line):
            out.append(("heading", heading.group(2)))
        elif _RULE_LINE.match(line):
            out.append(("rule", ""))
        elif item := _ITEM.match(line):
            out.append(("item", item.group(1)))
        else:
            out.append(("text", line))
    return out


@dataclass(frozen=True)
class Piece:
    text: str
    marked: bool
    style: Style = "text"
    href: str = ""


@dataclass(frozen=True)
class Row:
    n: int
    inside: bool
    pieces: list[Piece]
    kind: RowKind = "text"


def row_pieces(kind: RowKind, text: str, pattern: re.Pattern[str] | None) -> list[Piece]:
    """A row's pieces: inline markdown rendered (text rows and headings), matched terms marked in every piece."""
    parts = inline_pieces(text) if kind in ("text", "heading", "item") else [(text, "text", "")]
    return [
        Piece(chunk, marked, style, href) for part, style, href in parts for chunk, marked in highlight(part, pattern)
    ]


def _lines(section: Section, seeds_dir: Path, settings: Settings | None = None) -> list[str]:
    """The document's lines from disk (an HTML, Word, PDF or rst file: its converted text, from the build's cache),
    or the indexed text when the file is gone or changed."""
    seeds = Path(seeds_dir).resolve()
    path = (seeds / section.source).resolve()
    lines: list[str] | None = None
    if path.is_relative_to(seeds) and path.is_file():
        try:
            if is_converted(path):
                cache = ConversionCache(Path(settings.index_dir) / CACHE_DIR if settings is not None else None)
                max_bytes = settings.max_seed_bytes if settings is not None else MAX_SEED_BYTES
                lines = read_document(path, max_bytes, cache).text.splitlines()
            else:
                lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except (OSError, Unreadable):
            lines = None
    if lines is None or len(lines) < section.end_line:
        lines = [""] * (section.start_line - 1) + [section.heading] + section.text.splitlines()
    return lines


WHOLE_CONTEXT = 400  # lines shown before and after the section in the "whole file" view
MAX_SECTION_LINES = 2_000  # lines of one section shown at most


def render_source(
    engine: Answerer, settings: Settings, key: str, terms: str, language: str, whole: bool
) -> tuple[int, str]:
    """(status, HTML page) showing a cited section's lines with its own matched terms marked."""
    lang = "zh" if language == "zh" else "en"
    page = template("source.html")
    section = engine.section(key) if key else None
    if section is None:
        return 404, page.render(lang=lang, t=TEXT[lang], css=page_css(), section=None)
    lines = _lines(section, settings.seeds_dir, settings)
    start, end = section.start_line, min(section.end_line, len(lines))
    own_text = "\n".join(lines[start - 1 : end])
    words = section_terms(re.split(r"\s+", terms or ""), own_text)
    pattern = terms_pattern(words)
    # "Whole file" is a window around the section: a multi-megabyte document must not become a page of it.
    last = min(end, start + MAX_SECTION_LINES - 1)  # a runaway section (a pasted dump) is cut too
    shown = (
        range(max(1, start - WHOLE_CONTEXT), min(len(lines), last + WHOLE_CONTEXT) + 1)
        if whole
        else range(start, last + 1)
    )
    kinds = markdown_rows(lines[: shown[-1]] if shown else [])  # from line 1: a fence opened above counts
    rows = [Row(n, start <= n <= end, row_pieces(*kinds[n - 1], pattern), kinds[n - 1][0]) for n in shown]
    toggle = urlencode({"key": key, "terms": terms or "", "lang": lang, **({} if whole else {"whole": "1"})})
    era = old_release(section)
    return 200, page.render(
        lang=lang,
        t=TEXT[lang],
        css=page_css(),
        section=section,
        terms=words,
        rows=rows,
        whole=whole,
        toggle=toggle,
        heading=section_name(section),
        document=document_name(section),
        era=ERA_NOTE[lang].format(era=era) if era else "",
    )
