"""User and document text -> markdown that renders inert in the chat.

The chat renders HTML, so user text is always escaped or put in code, and document
text goes through :func:`doc_markdown`, which keeps the markdown (lists, code, links)
but escapes every HTML tag, turns the few harmless tags documents use
(``<a href>``, ``<br>``) into markdown, drops ``javascript:`` links and replaces
images by links (no request leaves the page to load a document's image).

    >>> escape_text('<img src=x onerror="alert(1)">')
    '&lt;img src=x onerror="alert(1)"&gt;'
    >>> doc_markdown('run `a<b` then <br>see <a href="https://x.org/a">docs</a>')[0]
    'run `a<b` then \\nsee [docs](https://x.org/a)'
"""

from __future__ import annotations

import html
import re

from bot.texts import text

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


def code_blocks(markdown: str) -> list[str]:
    """The fenced code blocks of a markdown text, each re-fenced safely (commands to show up front)."""
    return [_code(block) for kind, block in _blocks(markdown) if kind == "code"]
