"""reStructuredText (Sphinx sources) -> Markdown, through docutils: the document tree's sections become headings,
their ids (the anchors Sphinx gives the built pages) the citation's anchors.

docutils writes the tree as HTML, which the HTML converter turns into Markdown. What could reach outside the
document is off: ``.. include::`` and ``.. raw::`` (a seed must not read ``/etc/passwd`` into the index).
Sphinx's own directives and roles that hold text (``code-block``, ``:ref:``, ``:func:``…) are read as docutils'
code block and literal text; other unknown markup is left out without a word (no error box in the text).

    >>> c = convert("Guide\\n=====\\n\\nOOM\\n---\\n\\nUse :func:`torch.cuda.empty_cache`.\\n".encode(), 10_000)
    >>> c.text.splitlines(), c.anchors
    (['# Guide', '', '## OOM', '', 'Use `torch.cuda.empty_cache`.'], {1: 'guide', 3: 'oom'})
"""

from __future__ import annotations

import io
from functools import cache

from bot.kb.formats import Converted, Unreadable, html

VERSION = 1
SPHINX_ROLES = ("ref", "doc", "func", "class", "meth", "mod", "attr", "obj", "data", "envvar", "option", "command")
SPHINX_ROLES += ("file", "program", "term", "kbd", "exc", "py:func", "py:class", "py:meth", "abbr", "samp")
SETTINGS = {
    "report_level": 5,  # no system messages in the text
    "halt_level": 5,
    "file_insertion_enabled": False,
    "raw_enabled": False,
    "doctitle_xform": False,  # the first heading stays a section (the title comes from it, as in Markdown)
    "initial_header_level": 1,
    "syntax_highlight": "none",
    "section_self_link": False,
    "toc_backlinks": "none",
    "footnote_backlinks": False,
    "_disable_config": True,  # no docutils.conf of the machine's
    "input_encoding": "unicode",
}


@cache
def _register_sphinx() -> None:
    from docutils import nodes
    from docutils.parsers.rst import directives, roles
    from docutils.parsers.rst.directives.body import CodeBlock

    for name in ("code-block", "sourcecode"):
        directives.register_directive(name, CodeBlock)
    for name in SPHINX_ROLES:
        roles.register_generic_role(name, nodes.literal)


def convert(data: bytes, max_bytes: int) -> Converted:
    from docutils.core import publish_parts
    from docutils.utils import SystemMessage

    try:
        source = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise Unreadable(f"is not UTF-8 (byte 0x{data[exc.start]:02x} at {exc.start}); re-save it as UTF-8") from None
    _register_sphinx()
    try:
        parts = publish_parts(source, writer="html5", settings_overrides={**SETTINGS, "warning_stream": io.StringIO()})
    except (SystemMessage, ValueError, AttributeError, TypeError, IndexError) as exc:
        raise Unreadable(f"is not readable reStructuredText ({type(exc).__name__}: {exc})") from None
    return html.convert(f"<body>{_inline_code(parts['body'])}</body>".encode(), max_bytes, chrome=False)


def _inline_code(body: str) -> str:
    """docutils writes an inline literal as ``<span class="docutils literal">``: made ``<code>``, it reads as code."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(body, "html.parser")
    for tag in soup.select("span.literal"):
        tag.name = "code"
        for inner in tag.find_all("span"):
            inner.unwrap()
    return str(soup)
