"""User and document text -> markdown that renders inert in the chat.

The chat renders HTML, so user text is always escaped or put in code, and document
text goes through :func:`doc_markdown`, which keeps the markdown (lists, code, links)
but escapes every HTML tag, turns the few harmless tags documents use
(``<a href>``, ``<br>``) into markdown, keeps only ``http(s)``/``mailto`` links and replaces
images by links (no request leaves the page to load a document's image).

Prose is parsed by markdown-it-py (CommonMark) and written back from its tokens, so every
link the chat's renderer could see is seen here first: reference definitions (``[x]: url``,
resolved over the whole document and never passed on), links spanning lines, entity-encoded
schemes. Literal text is written back with ``[``, ``]`` and ``\\`` escaped, so text can never
turn into a link on the way out.

    >>> escape_text('<img src=x onerror="alert(1)">')
    '&lt;img src=x onerror="alert(1)"&gt;'
    >>> doc_markdown('run `a<b` then <br>see <a href="https://x.org/a">docs</a>')[0]
    'run `a<b` then \\nsee [docs](https://x.org/a)'
"""

from __future__ import annotations

import html
import re

from markdown_it import MarkdownIt
from markdown_it.token import Token

from bot.answer.texts import text

# ---------------------------------------------------------------- escaping


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
_SAFE_URL = re.compile(r"^(?:https?://|mailto:)", re.IGNORECASE)
_BR_TAG = re.compile(r"<br\s*/?>", re.IGNORECASE)
_A_START = re.compile(r"<a\s", re.IGNORECASE)
_HREF = re.compile(r"\bhref\s*=\s*[\"']([^\"'<>]*)[\"']", re.IGNORECASE)  # the value scan stops at a quote: linear
_A_CLOSE = re.compile(r"</a\s*>", re.IGNORECASE)
_IMG_START = re.compile(r"<img\s", re.IGNORECASE)
_SRC = re.compile(r"\bsrc\s*=\s*[\"']([^\"'<>]*)[\"']", re.IGNORECASE)
_ALT = re.compile(r"\balt\s*=\s*[\"']([^\"'<>]*)[\"']", re.IGNORECASE)
_TEXT_SPECIALS = re.compile(r"([\\\[\]])")


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": True})
    # Every link is parsed as a link, whatever its scheme, so that a bad one is *recognised* (label kept, URL
    # dropped by _target below) instead of falling back to text that still reads "[x](javascript:…)".
    md.validateLink = lambda url: True
    return md


_MD = _parser()
_REFERENCES = _parser().disable("inline")  # the first pass only collects "[x]: url" definitions


def _target(url: str) -> str:
    """The URL as a markdown link target when it is http(s)/mailto, else "" (the link is dropped).

    Percent-encoded by markdown-it's normalizeLink, parentheses too, so no URL can end the target early.

    >>> _target("https://en.wikipedia.org/wiki/A_(b) c"), _target("javascript:alert(1)")
    ('https://en.wikipedia.org/wiki/A_%28b%29%20c', '')
    """
    url = url.strip()
    if not _SAFE_URL.match(url):
        return ""
    url = _MD.normalizeLink(url).replace("(", "%28").replace(")", "%29")
    return "" if re.search(r"[\s\"'<>\\]", url) else url


def _text(value: str) -> str:
    """Literal text from the parser -> markdown that stays literal: no tag, no entity, no link brackets."""
    return _TEXT_SPECIALS.sub(r"\\\1", escape_text(value))


def _inline(tokens: list[Token], language: str) -> str:
    """Inline tokens -> inert markdown: safe links kept, images as links, HTML escaped except <br> and <a href>."""
    out: list[str] = []
    links: list[tuple[int, str]] = []  # (where the label starts in out, href) of open links

    def open_link(href: str) -> None:
        links.append((len(out), href))

    def close_link() -> None:
        if not links:
            return
        start, href = links.pop()
        label = "".join(out[start:]).strip() or _text(href)
        del out[start:]
        out.append(f"[{label}]({target})" if (target := _target(href)) else label)

    for token in tokens:
        kind = token.type
        if kind == "text":
            out.append(_text(token.content))
        elif kind == "code_inline":
            out.append(code_span(token.content))
        elif kind in ("softbreak", "hardbreak"):
            out.append("\n")
        elif kind == "link_open":
            open_link(str(token.attrGet("href") or ""))
        elif kind == "link_close":
            close_link()
        elif kind == "image":
            url = str(token.attrGet("src") or "")
            alt = "".join(_text(child.content) for child in token.children or [] if child.type == "text").strip()
            out.append(_image(url, alt, language))
        elif kind in ("em_open", "em_close", "strong_open", "strong_close"):
            out.append(token.markup)
        elif kind == "html_inline":
            tag = token.content
            if _BR_TAG.fullmatch(tag.strip()):
                out.append("\n")
            elif _A_START.match(tag) and (match := _HREF.search(tag)):
                open_link(html.unescape(match.group(1)).strip())
            elif _A_CLOSE.fullmatch(tag.strip()):
                close_link()
            elif _IMG_START.match(tag):  # a document's <img>: named like a markdown image, never loaded
                src = html.unescape(match.group(1)).strip() if (match := _SRC.search(tag)) else ""
                alt = _text(html.unescape(match.group(1)).strip()) if (match := _ALT.search(tag)) else ""
                named = "" if re.match(r"[a-z][a-z0-9+.-]*:", src, re.IGNORECASE) else src.rsplit("/", 1)[-1]
                out.append(_image(src, alt or _text(named), language))
            else:
                out.append(escape_text(tag))
        else:
            out.append(_text(token.content))
    while links:  # an <a> never closed: keep its words
        close_link()
    return "".join(out)


def _image(url: str, alt: str, language: str) -> str:
    """An image as a link to it (http(s) only), else nothing: the chat never loads it, and a placeholder such as
    "(图片: GPU)" reads as a fault in the reply (issue 35); the cited source shows the document's images.

    >>> _image("https://x.org/a.png", "diagram", "en"), _image("images/data_parallel.png", "data_parallel.png", "en")
    ('[image: diagram](https://x.org/a.png)', '')
    """
    word = text(language, "image")
    name = f"{word}: {alt}" if alt else word
    return f"[{name}]({target})" if (target := _target(url)) else ""


def _html_lines(content: str, language: str) -> list[str]:
    """An HTML block (escaped as text, <br> and <a href> turned into markdown)."""
    tokens = _MD.parseInline(content.strip("\n"), {})
    return _inline(tokens[0].children or [], language).split("\n") if tokens else []


class _Node:
    def __init__(self, token: Token | None) -> None:
        self.token = token
        self.children: list[_Node | Token] = []


def _tree(tokens: list[Token]) -> _Node:
    root = _Node(None)
    stack = [root]
    for token in tokens:
        if token.nesting == 1:
            node = _Node(token)
            stack[-1].children.append(node)
            stack.append(node)
        elif token.nesting == -1:
            if len(stack) > 1:
                stack.pop()
        else:
            stack[-1].children.append(token)
    return root


def _render(node: _Node | Token, language: str) -> list[str]:
    """One block -> its markdown lines (inert)."""
    if isinstance(node, Token):
        if node.type == "inline":
            return _inline(node.children or [], language).split("\n")
        if node.type in ("fence", "code_block"):
            return code_block(node.content.rstrip("\n"), re.sub(r"[^\w+\-.#]", "", node.info)[:20]).split("\n")
        if node.type == "html_block":
            return _html_lines(node.content, language)
        return []  # hr: separators between FAQ entries are noise in a reply
    kind = node.token.type if node.token else "root"
    if kind == "heading_open":
        line = " ".join(" ".join(_render(c, language)) for c in node.children)
        return [f"{node.token.markup} {line}"]
    if kind in ("bullet_list_open", "ordered_list_open"):
        lines: list[str] = []
        start = int(node.token.attrGet("start") or 1) if kind == "ordered_list_open" else 0
        for n, item in enumerate(c for c in node.children if isinstance(c, _Node)):
            marker = f"{start + n}." if start else "-"
            body = _blocks_of(item, language, tight=_tight(item))
            if lines and not _tight(item):
                lines.append("")
            for i, line in enumerate(body or [""]):
                lines.append(f"{marker} {line}" if i == 0 else (" " * (len(marker) + 1) + line if line else ""))
        return lines
    if kind == "blockquote_open":
        return [f"> {line}" if line else ">" for line in _blocks_of(node, language)]
    if kind == "table_open":
        rows = []
        for row in _walk_rows(node):
            rows.append("| " + " | ".join(" ".join(_render(cell, language)).replace("|", "\\|") for cell in row) + " |")
        if rows:
            rows.insert(1, "|" + " --- |" * rows[0].count(" | ") + " --- |")
        return rows
    return _blocks_of(node, language)


def _tight(item: _Node) -> bool:
    return all(c.token.hidden for c in item.children if isinstance(c, _Node) and c.token.type == "paragraph_open")


def _walk_rows(table: _Node) -> list[list[Token]]:
    rows = []
    for section in table.children:
        for row in section.children if isinstance(section, _Node) else []:
            if isinstance(row, _Node):
                rows.append([c.children[0] for c in row.children if isinstance(c, _Node) and c.children])
    return rows


def _blocks_of(node: _Node, language: str, tight: bool = False) -> list[str]:
    lines: list[str] = []
    for child in node.children:
        part = _render(child, language)
        if not part:
            continue
        if lines and not tight:
            lines.append("")
        lines.extend(part)
    return lines


def _prose(block: str, env: dict, language: str) -> str:
    """A prose block -> inert markdown, parsed by markdown-it with the document's reference definitions."""
    return "\n".join(_blocks_of(_tree(_MD.parse(block, env)), language)).strip("\n")


def markdown_blocks(value: str) -> list[tuple[str, str]]:
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
    env: dict = {}
    _REFERENCES.parse(value, env)  # reference definitions ("[x]: url") anywhere in the document, for every block
    for kind, block in markdown_blocks(value):
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
        rendered = _code(block) if kind == "code" else _prose(block, env, language)
        if rendered:
            out.append(rendered)
        used += len(block)
        if cut:
            break
    return "\n\n".join(out), cut
