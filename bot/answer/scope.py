"""What the knowledge base covers, from its own documents (said in a "nothing close" reply and to "what can you do?")."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

from bot.answer.safe_markdown import escape_inline
from bot.answer.texts import text
from bot.kb.domain import Domain, shipped
from bot.records import Section

MAX_SCOPE_TITLES = 8


@dataclass(frozen=True)
class Scope:
    """What the knowledge base is about, from its own documents (not text written for one company's seeds)."""

    titles: tuple[str, ...] = ()  # document titles, in index order
    documents: int = 0
    gpu: bool = False  # most documents are about GPUs: ask for `nvidia-smi`, CUDA and cuDNN versions


def kb_scope(sections: Sequence[Section], domain: Domain | None = None) -> Scope:
    """The :class:`Scope` of ``engine.sections``: document titles, and whether the documents are about GPUs (they
    name the domain's list ``gpu``; the shipped domain's unless given).

    >>> s = [Section(f"{n}.md", "h", ("T",), 1, 2, "h", body, title) for n, (title, body) in
    ...      enumerate([("GPU FAQ", "CUDA error"), ("GPU FAQ", "nccl"), ("Billing", "invoices")])]
    >>> kb_scope(s)
    Scope(titles=('GPU FAQ', 'Billing'), documents=3, gpu=True)
    """
    gpu_words = (domain or shipped()).word("gpu")
    titles: dict[str, None] = {}
    sources: dict[str, bool] = {}
    for section in sections:
        title = " ".join((section.title or section.source).split())
        if title:
            titles.setdefault(title[:60], None)
        about = bool(gpu_words.search(f"{section.title} {section.heading} {section.text[:600]}"))
        sources[section.source] = sources.get(section.source, False) or about
    gpu = bool(sources) and sum(sources.values()) * 2 > len(sources)
    return Scope(tuple(list(titles)[:MAX_SCOPE_TITLES]), len(sources), gpu)


_SCOPE_CACHE: list[tuple[Sequence[Section], Scope]] = []  # the last sections list and its scope
_SCOPE_LOCK = threading.Lock()


def scope_of(sections: Sequence[Section], domain: Domain | None = None) -> Scope:
    """:func:`kb_scope` of ``sections``, computed once per loaded index rather than on every turn
    (a new index generation is a new list, so it is recomputed once then)."""
    with _SCOPE_LOCK:
        if _SCOPE_CACHE and _SCOPE_CACHE[0][0] is sections:
            return _SCOPE_CACHE[0][1]
    scope = kb_scope(sections, domain)
    with _SCOPE_LOCK:
        _SCOPE_CACHE[:] = [(sections, scope)]
    return scope


def scope_text(language: str, scope: Scope | None) -> str:
    """ "What the knowledge base covers", from its document titles (a generic line without them).

    >>> scope_text("en", Scope(("GPU FAQ", "Billing"), 2))
    'This assistant answers from the 2 documents in its knowledge base: “GPU FAQ”, “Billing”.'
    """
    if scope is None or not scope.titles:
        return text(language, "covers_generic")
    if language == "zh":
        names = "、".join(f"《{t}》" for t in scope.titles)
    else:
        names = ", ".join(f"“{t}”" for t in scope.titles)
    more = len(scope.titles) < scope.documents
    names = escape_inline(names) + (text(language, "scope_more") if more else "")
    return text(language, "covers", n=scope.documents, titles=names)
