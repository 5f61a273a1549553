"""HTML (an exported wiki or Confluence page) -> Markdown, through BeautifulSoup and markdownify.

The page's chrome is left out before converting: scripts, styles, forms, images, and the navigation a site
wraps around its content (``nav``, a site ``header``/``footer`` outside the article, ``aside``, menus and
breadcrumbs by role, id or class). When the page marks its content (``main``, ``role=main``, one ``article``),
only that is read. Each heading keeps the id the page gives it (its own, or that of the ``section`` it opens),
so a citation links to the place on the original page.

    >>> page = b'<nav>Home</nav><main><h1 id="faq">FAQ</h1><h2 id="oom">OOM</h2><p>Lower batch_size.</p></main>'
    >>> c = convert(page, 10_000)
    >>> c.text.splitlines()[0], c.text.splitlines()[2], c.anchors
    ('# FAQ', '## OOM', {1: 'faq', 3: 'oom'})
"""

from __future__ import annotations

import re

from bot.kb.formats import Converted, Unreadable, check_text_size

VERSION = 2

DROP_TAGS = ("script", "style", "noscript", "template", "iframe", "object", "embed", "svg", "canvas", "img", "picture")
DROP_TAGS += ("form", "button", "input", "select", "textarea", "nav", "aside", "menu", "dialog", "link", "meta")
CHROME_ROLES = {"navigation", "banner", "contentinfo", "search", "complementary", "menu", "menubar", "toolbar"}
# Ids and classes of navigation (Confluence's breadcrumb-section and footer, a theme's sidebar or "skip to" link).
CHROME_NAME = re.compile(
    r"^(?:breadcrumbs?(?:-section)?|nav|navbar|navigation|menu|main-menu|sidebar|site-(?:header|footer|nav)|"
    r"footer|page-footer|header|page-header|skip-link|cookie-banner|toc|table-of-contents)$",
    re.IGNORECASE,
)
HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_MARK = re.compile("\ue000(\\d+)\ue001 ?")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HASH_LINE = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")


def convert(data: bytes, max_bytes: int, *, chrome: bool = True) -> Converted:
    """An HTML page's bytes -> Markdown (``chrome=False``: HTML a converter wrote, with nothing to leave out)."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(data, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup.find_all(DROP_TAGS if chrome else ("script", "style", "img")):
        tag.decompose()
    if chrome:
        _drop_chrome(soup)
    root = _content(soup) if chrome else (soup.body or soup)
    anchors: dict[int, str] = {}
    ids: list[str] = []
    for heading in root.find_all(HEADINGS):
        ids.append(_heading_id(heading))
        heading.insert(0, f"\ue000{len(ids) - 1}\ue001 ")
    text = to_markdown(root).strip("\n")
    lines = []
    fence = ""
    for n, line in enumerate(text.splitlines(), start=1):
        match = _MARK.search(line)
        if match:
            if ids[int(match.group(1))]:
                anchors[n] = ids[int(match.group(1))]
            line = _MARK.sub("", line)
        elif opened := _FENCE.match(line):
            fence = opened.group(1) if not fence else "" if opened.group(1).startswith(fence) else fence
        elif not fence and _HASH_LINE.match(line):  # "# Ok" wrapped onto a paragraph's line: text, not a heading
            line = "\\" + line.lstrip()
        lines.append(line)
    text = "\n".join(lines)
    if not re.search(r"\w", text):
        raise Unreadable(
            "has no text once scripts, styles and navigation are left out (a page its scripts fill in?); "
            "nothing to index: save the page as it shows, or as Markdown"
        )
    if title and not root.find("h1"):  # the page's <title> names it when no H1 does
        text = f"---\ntitle: {title}\n---\n{text}"
        anchors = {n + 3: a for n, a in anchors.items()}
    return Converted(check_text_size(text, max_bytes) + "\n", (), anchors)


def to_markdown(root) -> str:
    """Markdown of a parsed tree: ATX headings, fenced code, ``-`` bullets, no escaping (the text is indexed)."""
    from markdownify import MarkdownConverter

    converter = MarkdownConverter(
        heading_style="ATX",
        bullets="-",
        escape_asterisks=False,
        escape_underscores=False,
        escape_misc=False,
        code_language_callback=_code_language,
    )
    text = converter.convert_soup(root)
    return re.sub(r"\n{3,}", "\n\n", text)


def _code_language(pre) -> str:
    for tag in (pre, pre.find("code")):
        for name in (tag.get("class") or []) if tag is not None else []:
            if name not in ("sourceCode", "code", "literal-block", "highlight") and not name.startswith("language-"):
                return name
            if name.startswith("language-"):
                return name.removeprefix("language-")
    return ""


def _drop_chrome(soup) -> None:
    inside = ("main", "article")
    for tag in soup.find_all(True):
        if tag.decomposed:
            continue
        role = (tag.get("role") or "").lower()
        names = [tag.get("id") or "", *(tag.get("class") or [])]
        if role in CHROME_ROLES or any(CHROME_NAME.match(n) for n in names if n):
            if not tag.find(HEADINGS) or tag.find_parent(inside) is None:
                tag.decompose()
        elif tag.name in ("header", "footer") and tag.find_parent(inside) is None and not tag.find(HEADINGS):
            tag.decompose()
        elif tag.name == "footer":
            tag.decompose()


def _content(soup):
    """The part of the page that is its content: ``main`` (or role=main), a lone ``article``, else the body."""
    main = soup.find("main") or soup.find(attrs={"role": "main"})
    if main is not None:
        return main
    articles = soup.find_all("article")
    if len(articles) == 1:
        return articles[0]
    return soup.body or soup


def _heading_id(heading) -> str:
    """The id a reader's link reaches the heading by: its own, an anchor inside it, an empty anchor just before it
    (an older page's ``<a name>``; mammoth writes a Word bookmark so), or its section's.

    >>> from bs4 import BeautifulSoup
    >>> _heading_id(BeautifulSoup('<p>x</p><a id="oom"></a><h2>OOM</h2>', "html.parser").h2)
    'oom'
    >>> _heading_id(BeautifulSoup('<a id="top">Top</a><h2>OOM</h2>', "html.parser").h2)
    ''
    """
    if heading.get("id"):
        return heading["id"]
    inner = heading.find(attrs={"id": True}) or heading.find("a", attrs={"name": True})
    if inner is not None:
        return inner.get("id") or inner.get("name")
    before = heading.find_previous_sibling(True)
    if before is not None and before.name == "a" and not before.get_text(strip=True) and not before.get("href"):
        if before.get("id") or before.get("name"):
            return before.get("id") or before.get("name")
    parent = heading.parent
    if parent is not None and parent.name in ("section", "div") and parent.get("id"):
        first = parent.find(True)
        if first is heading:
            return parent["id"]
    return ""
