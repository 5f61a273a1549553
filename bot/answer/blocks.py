"""A reply as typed blocks: what each part *is*, so nothing has to find it again by its words.

The builders (:mod:`bot.answer.reply`) put blocks in order, the conversation adds blocks by kind
(:func:`inserted`), and :func:`bot.answer.composition.compose` fills in what only the turn knows (the knowledge base's
scope, what the conversation already holds, signed links) on the blocks themselves before the markdown is
rendered once (:mod:`bot.answer.render`). Changing a sentence in :mod:`bot.answer.texts` changes what a block
says, never where a block is: no code looks for a reply's text.

    >>> blocks = (Note("Sorry that didn't help.", "apology"), Detected("CUDA error: out of memory"))
    >>> [b.kind for b in inserted(blocks, (Environment("Driver too old"),), after="detected")]
    ['note', 'detected', 'environment']
    >>> [b.kind for b in inserted(blocks, (Environment("x"),), after="caution")]  # no caution: first
    ['environment', 'note', 'detected']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Literal

from bot.answer.contact import Contact
from bot.answer.scope import Scope

Kind = Literal[
    "caution",  # "May not apply: <reason>", first in a tentative reply
    "detected",  # the error line of a pasted log
    "note",  # follow-up note, apology, truncation, era, a fixed sentence
    "answer",  # a section's summary line and its fix (steps and code)
    "focus",  # the steps of a shown section that answer a follow-up's detail
    "citation",  # the one "Source:" line
    "details",  # a collapsed block: background, original text, more steps
    "related",  # other possibly related sections, collapsed
    "options",  # numbered sections to pick from (clarify, other candidates, pointers)
    "environment",  # the diagnosis of the versions the user showed
    "collect",  # what to send to pin the problem down
    "person",  # "talk to a person", or what to collect for a colleague
    "scope",  # what this knowledge base covers
]

NoteRole = Literal[
    "followup", "apology", "truncation", "era", "chosen", "headline", "reason", "plain", "handoff_failed"
]


@dataclass(frozen=True)
class Caution:
    """How sure, first: the reason the reply may not apply (plain text, escaped when rendered)."""

    reason: str
    kind: Literal["caution"] = "caution"


@dataclass(frozen=True)
class Detected:
    """The error the user's log shows (the engine's signature, as the log says it)."""

    error: str
    kind: Literal["detected"] = "detected"


@dataclass(frozen=True)
class Note:
    """One line or paragraph of markdown said as it is: ``role`` tells which (a follow-up note, an apology, …)."""

    markdown: str
    role: NoteRole = "plain"
    kind: Literal["note"] = "note"


@dataclass(frozen=True)
class AnswerBlock:
    """A section's summary line (plain text) and its fix: steps with their code, as inert markdown."""

    title: str
    body: str
    kind: Literal["answer"] = "answer"


@dataclass(frozen=True)
class Focus:
    """The steps (numbered ``steps`` in the section) of a section just shown that a follow-up is about."""

    title: str
    steps: tuple[int, ...]
    body: str
    kind: Literal["focus"] = "focus"


@dataclass(frozen=True)
class Citation:
    """A section cited by link: ``label`` (plain text), the source view ``url``, the document's file ``source``.

    Signed links are made here (:meth:`signed`), on the url itself, never by searching the rendered markdown.
    """

    label: str
    url: str
    source: str = ""
    kind: Literal["citation"] = "citation"

    def signed(self, sign: Callable[[str], str]) -> Citation:
        return replace(self, url=sign(self.url))


@dataclass(frozen=True)
class Option:
    """One numbered section to pick: its short ``label`` and where it is (``where`` is the citation's link)."""

    label: str
    where: Citation


@dataclass(frozen=True)
class Options:
    """Numbered sections: under ``prompt`` (a clarifying question), or collapsed under ``collapsed``."""

    items: tuple[Option, ...]
    prompt: str = ""
    collapsed: str = ""
    kind: Literal["options"] = "options"


@dataclass(frozen=True)
class Related:
    """Other possibly related sections, collapsed: one citation link each."""

    links: tuple[Citation, ...]
    kind: Literal["related"] = "related"


@dataclass(frozen=True)
class Details:
    """A collapsed block: ``summary`` is plain text, ``body`` inert markdown."""

    summary: str
    body: str
    kind: Literal["details"] = "details"


@dataclass(frozen=True)
class Environment:
    """The environment diagnosis in words (:func:`bot.answer.environment_text.describe`)."""

    markdown: str
    kind: Literal["environment"] = "environment"


@dataclass(frozen=True)
class Collect:
    """What to send to pin the problem down: only what ``held`` (the conversation's messages) lacks once the turn
    is composed; the generic list when the knowledge base is not about GPUs (``gpu``)."""

    held: tuple[str, ...] = ()
    gpu: bool = True
    kind: Literal["collect"] = "collect"


@dataclass(frozen=True)
class Person:
    """ "Talk to a person" (the link carries the conversation and ``cited``), the webhook's hand-over line, or —
    with no contact — what to collect for a colleague (``collect``). ``handoff``: the user asked for a person."""

    contact: Contact
    cited: tuple[str, ...] = ()
    collect: bool = True
    handoff: bool = False
    gpu: bool = True
    kind: Literal["person"] = "person"

    @property
    def offers_contact(self) -> bool:
        """True when this block points at a person (a link or the webhook), not only at what to collect."""
        return self.contact.configured


@dataclass(frozen=True)
class ScopeBlock:
    """What the knowledge base covers; ``always``: say the generic line when its documents are not known."""

    scope: Scope | None = None
    always: bool = True
    kind: Literal["scope"] = "scope"


Block = (
    Caution
    | Detected
    | Note
    | AnswerBlock
    | Focus
    | Citation
    | Details
    | Related
    | Options
    | Environment
    | Collect
    | Person
    | ScopeBlock
)


def inserted(blocks: Iterable[Block], new: Iterable[Block], *, after: Kind | None = None) -> tuple[Block, ...]:
    """``blocks`` with ``new`` right after the last block of kind ``after`` (first when there is none, or when
    ``after`` is None)."""
    blocks, new = tuple(blocks), tuple(new)
    at = next((n + 1 for n in range(len(blocks) - 1, -1, -1) if blocks[n].kind == after), 0) if after else 0
    return (*blocks[:at], *new, *blocks[at:])


def signed(block: Block, sign: Callable[[str], str]) -> Block:
    """``block`` with every citation in it signed (a block without links as it was)."""
    if isinstance(block, Citation):
        return block.signed(sign)
    if isinstance(block, Related):
        return replace(block, links=tuple(c.signed(sign) for c in block.links))
    if isinstance(block, Options):
        return replace(block, items=tuple(replace(o, where=o.where.signed(sign)) for o in block.items))
    return block


def as_json(block: Block) -> dict:
    """``{"kind": …, …fields}`` of a block, JSON-ready (a contact by its label only: its link carries the
    conversation, which the reply's markdown has already)."""
    if isinstance(block, Person):
        return {"kind": "person", "collect": block.collect, "handoff": block.handoff}
    if isinstance(block, ScopeBlock):
        return {"kind": "scope", "titles": list(block.scope.titles) if block.scope else []}
    if isinstance(block, Collect):
        return {"kind": "collect", "gpu": block.gpu}
    if isinstance(block, Related):
        return {"kind": "related", "links": [{"label": c.label, "url": c.url} for c in block.links]}
    if isinstance(block, Options):
        items = [{"label": o.label, "where": o.where.label, "url": o.where.url} for o in block.items]
        return {"kind": "options", "items": items, "prompt": block.prompt}
    data = {k: v for k, v in vars(block).items()}
    if "steps" in data:
        data["steps"] = list(data["steps"])
    return data
