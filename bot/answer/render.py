"""Blocks -> markdown, once: each block kind is written here and nowhere else (:func:`render`).

A block's words come from :mod:`bot.answer.texts` when it is rendered; the order is the reply's. Empty blocks
(a "please add" with nothing left to ask) leave no blank paragraph.

    >>> from bot.answer.blocks import Caution, Citation, Detected
    >>> print(render((Caution("the closest is about Jetson"), Detected("CUDA error: out of memory"),
    ...               Citation("Doc › OOM · lines 3–9", "http://h/source?key=a#L3", "a.md")), "en"))
    ⚠️ **May not apply:** the closest is about Jetson
    <BLANKLINE>
    **Detected:** `CUDA error: out of memory`
    <BLANKLINE>
    **Source:** [Doc › OOM · lines 3–9](http://h/source?key=a#L3 "a.md")

Safety: user text is always escaped or put in code, and document text goes through
:func:`bot.answer.safe_markdown.doc_markdown` before it is a block, so nothing typed by a user or written in a
document runs in the chat (which renders HTML).

    >>> escape_text('<img src=x onerror="alert(1)">')
    '&lt;img src=x onerror="alert(1)"&gt;'
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

from bot.answer.blocks import (
    AnswerBlock,
    Block,
    Caution,
    Citation,
    Collect,
    Details,
    Detected,
    Environment,
    Focus,
    Note,
    Options,
    Person,
    Related,
    ScopeBlock,
)
from bot.answer.collect import collect_text
from bot.answer.safe_markdown import code_block, code_span, escape_inline, escape_text
from bot.answer.scope import scope_text
from bot.answer.texts import text

USER_ECHO_CHARS = 4_000


def render(blocks: Iterable[Block], language: str) -> str:
    """The markdown of ``blocks`` in ``language``: each rendered, the non-empty ones joined by a blank line."""
    return "\n\n".join(filter(None, (render_block(b, language) for b in blocks)))


def render_block(block: Block, language: str) -> str:  # noqa: C901  (one branch per block kind, on purpose)
    """One block's markdown ("" when it has nothing to say)."""
    if isinstance(block, Caution):
        return f"⚠️ **{text(language, 'may_not_apply')}:** {escape_inline(block.reason)}"
    if isinstance(block, Detected):
        return f"**{text(language, 'detected')}:** {code_span(block.error)}" if block.error else ""
    if isinstance(block, Note):
        return block.markdown
    if isinstance(block, AnswerBlock):
        return f"### {escape_inline(block.title)}\n\n{block.body}"
    if isinstance(block, Focus):
        steps = ", ".join(str(n) for n in block.steps)
        detail = "_" + text(language, "detail_of", steps=steps) + "_"
        return f"### {escape_inline(block.title)}\n\n{detail}\n\n{block.body}"
    if isinstance(block, Citation):
        title = escape_text(block.source.replace('"', "'"))
        return f'**{text(language, "source")}:** [{escape_inline(block.label)}]({block.url} "{title}")'
    if isinstance(block, Details):
        return details_markdown(block.summary, block.body)
    if isinstance(block, Related):
        links = "\n".join(f"- [{escape_inline(c.label)}]({c.url})" for c in block.links)
        return details_markdown(f"{text(language, 'related')} ({len(block.links)})", links)
    if isinstance(block, Options):
        listing = "\n".join(
            f"{n}. **{escape_inline(o.label)}** · [{escape_inline(o.where.label)}]({o.where.url})"
            for n, o in enumerate(block.items, 1)
        )
        if block.collapsed:
            return details_markdown(block.collapsed, listing) if listing else ""
        return f"{block.prompt}\n\n{listing}" if block.prompt else listing
    if isinstance(block, Environment):
        return block.markdown
    if isinstance(block, Collect):
        if not block.gpu:  # nvidia-smi and cuDNN versions mean nothing for another company's documents
            return text(language, "ask_more_generic")
        return collect_text(language, block.held) if block.held else text(language, "ask_more")
    if isinstance(block, Person):
        return person_text(block, language)
    if isinstance(block, ScopeBlock):
        if block.scope is not None and block.scope.titles or block.always:
            return scope_text(language, block.scope)
        return ""
    raise TypeError(f"no rendering for block {block!r}: add its kind to bot/answer/render.py render_block")


def person_text(block: Person, language: str) -> str:
    """ "Talk to a person: <link>" when a contact is configured (the words of a hand-off when the user asked for
    one); otherwise what to collect for a colleague (``collect``) or nothing — never a promise of a channel that
    does not exist."""
    link = block.contact.link(language, block.cited)
    if link:
        return text(language, "intent_human" if block.handoff else "ask_person", contact=link)
    if block.contact.configured:  # a webhook only: asking for a person hands the conversation over
        return text(language, "intent_human_webhook" if block.handoff else "ask_person_webhook")
    if not block.collect:
        return ""
    return text(language, "collect_for_colleague" if block.gpu else "collect_for_colleague_generic")


def details_markdown(summary: str, body: str) -> str:
    """A collapsed block; ``summary`` is plain text (escaped here), ``body`` markdown."""
    return f"<details><summary>{html.escape(summary, quote=False)}</summary>\n\n{body}\n\n</details>"


def signature_line(signature: str, language: str) -> str:
    """``**Detected:** `EnforceNotMet: ...` ``"""
    return render_block(Detected(signature), language)


_BARE_ERROR = re.compile(r"^[\w.]*(?:Error|Exception|Exhausted)\s*:?\s*$")
_ERROR_WITH_MESSAGE = re.compile(r"(?:[A-Za-z_][\w]*\.)*([A-Z]\w*(?:Error|Exception)):\s*(\S.*)$")


def own_error_line(signature: str, log: str) -> str:
    """The error as the log says it: when the detected signature is a bare name ("MemoryError"), the log's last
    error line that carries a message ("ResourceExhaustedError: OOM … cannot allocate 2.25 GB"), module path dropped.

    >>> own_error_line("MemoryError", "MemoryError\\nx.errors_impl.ResourceExhaustedError: OOM, cannot allocate 2.25 GB")
    'ResourceExhaustedError: OOM, cannot allocate 2.25 GB'
    >>> own_error_line("EnforceNotMet: no libnccl.so", "whatever")
    'EnforceNotMet: no libnccl.so'
    """
    if not signature or not _BARE_ERROR.match(signature.strip()):
        return signature
    for line in reversed(log.splitlines()[-400:]):
        match = _ERROR_WITH_MESSAGE.search(line.strip()[:1_000])
        if match:
            return f"{match.group(1)}: {match.group(2).strip()}"[:200]
    return signature


def truncation_notice(truncated_from: int, limit: int, language: str) -> str:
    """The visible notice for an input that was cut to the server-side limit (empty when it was not).

    The head line(s) and the tail of a log (where the error is) are kept; the notice says so.

    >>> truncation_notice(150_000, 100_000, "en").split(". ")[0]
    'Note: your input was too long: 150,000 characters, over the limit of 100,000'
    """
    if not truncated_from:
        return ""
    return text(language, "truncated", total=truncated_from, limit=limit, cut=max(0, truncated_from - limit))


ECHO_HEAD_LINES = 2  # of a long pasted log: its first lines (the command), then its end (where the error is)
ECHO_TAIL_LINES = 12  # a bubble of ~15 lines: the widget's first screen still shows the answer after it


def user_echo(value: str, is_log: bool | None = None) -> str:
    """The user's message as shown in their chat bubble: inert, and short even for a huge paste.

    A log is a code block of its first lines and its *last* ones (the error is at the end; the bubble
    used to show the first 40 INFO lines); a typed question of a few lines stays text.

    >>> user_echo("显存不足怎么办？\\n用的是 V100")
    '显存不足怎么办？  \\n用的是 V100'
    """
    value = value.rstrip()
    lines = value.splitlines()
    code_like = any(line.startswith(("    ", "\t")) for line in lines) or len(lines) > 6
    if is_log or (len(lines) > 1 and code_like):
        kept = [line[:300] for line in lines]
        if len(kept) > ECHO_HEAD_LINES + ECHO_TAIL_LINES + 1:
            tail = kept[-ECHO_TAIL_LINES:]
            kept = kept[:ECHO_HEAD_LINES] + [f"… (+{len(lines) - len(tail) - ECHO_HEAD_LINES:,} lines) …"] + tail
        shown = "\n".join(kept)
        if len(shown) > USER_ECHO_CHARS:  # keep the end: that is where the error is
            shown = "…" + shown[-USER_ECHO_CHARS:]
        more = f"\n\n… ({len(value):,} chars)" if len(shown) < len(value) else ""
        return code_block(shown) + more
    shown = value[:USER_ECHO_CHARS]
    more = f" … ({len(value):,} chars)" if len(shown) < len(value) else ""
    return "  \n".join(escape_inline(line) for line in shown.splitlines()) + more
