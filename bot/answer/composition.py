"""A reply and its composition: :class:`Reply` holds typed blocks (:mod:`bot.answer.blocks`), :func:`with_blocks`
adds blocks by kind, and :func:`compose` finishes a turn's reply once — scope, person, what to collect, hand-off,
truncation note, answer id, signed citations — and renders its markdown from the blocks (:mod:`bot.answer.render`).

    >>> from bot.answer.blocks import Detected
    >>> said = Reply("answer", "en", blocks=(Detected("CUDA error: out of memory"),))
    >>> done = compose(with_blocks(said, Note("Sorry that didn't help.", "apology")), scope=Scope())
    >>> print(done.markdown)
    Sorry that didn't help.
    <BLANKLINE>
    **Detected:** `CUDA error: out of memory`
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import FrozenInstanceError, dataclass, field, replace

from bot.answer.blocks import (
    Block,
    Citation,
    Collect,
    Kind,
    Note,
    Person,
    ScopeBlock,
    as_json,
    inserted,
    signed,
)
from bot.answer.contact import Contact
from bot.answer.render import person_text, render, render_block, truncation_notice
from bot.answer.scope import Scope
from bot.answer.sections_text import MAX_TERMS, citation_label
from bot.answer.texts import text
from bot.kb.meta import SectionMeta
from bot.records import Event, Hit, Section


def person_line(language: str, contact: Contact | None, cited: Sequence[str] = (), *, collect: bool = True) -> str:
    """ "Talk to a person: <link>" when a contact is configured; otherwise what to collect for a colleague
    (``collect``) or nothing — never a promise of a channel that does not exist (the :class:`Person` block's words).

    >>> person_line("en", Contact()).startswith("No support contact is set up here")
    True
    >>> person_line("en", Contact(), collect=False)
    ''
    """
    return person_text(Person(contact or Contact(), tuple(cited), collect), language)


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


def citation_of(section: Section, url: str, language: str, meta: SectionMeta | None = None) -> Citation:
    """The :class:`Citation` block of ``section``: ``Doc › Section · lines a–b``, its source view and its file."""
    return Citation(citation_label(section, meta, language), url, section.source)


def citation_line(section: Section, url: str, language: str, meta: SectionMeta | None = None) -> str:
    """``**Source:** [Doc › Section · lines a–b](url "file")``: one line, the link opens the source view."""
    return render_block(citation_of(section, url, language, meta), language)


def cited_labels(shown: Sequence[Shown]) -> tuple[str, ...]:
    return tuple(citation_label(s.hit.section, None, "en") for s in shown[:5])


# ---------------------------------------------------------------- the reply


class _Rendered:
    """``Reply.markdown``: rendered from the blocks while the reply is being built; a finished reply holds the
    markdown :func:`compose` rendered once as a plain attribute (this non-data descriptor then steps aside)."""

    def __get__(self, reply: Reply | None, owner: type) -> object:
        if reply is None:
            return self
        return render(reply.blocks, reply.language)


@dataclass(init=False)
class Reply:
    """What the assistant says for one turn: its blocks (rendered as ``markdown``), clickable options and the
    citations behind them. ``Reply(kind, language, "text")`` is a reply of one plain note."""

    kind: str  # "answer" | "no_match" | "clarify" | "empty" | "exhausted" | "section" | "intent"
    language: str
    blocks: tuple[Block, ...] = ()
    shown: list[Shown] = field(default_factory=list)
    options: list[dict] = field(default_factory=list)  # [{"label": str, "value": section key}]
    answered: bool = False
    signature: str = ""
    truncated_from: int = 0
    confidence: float = 0.0
    tier: str = "none"  # "answer" | "tentative" | "none", as decided by the engine (see bot.records.Answer)
    reason: str = ""  # one line in the reply language; empty for a plain answer
    events: list[Event] = field(default_factory=list)  # what the edge should record for this turn
    handoff: bool = False  # the user asked for a person: the edge sends the transcript to BOT_HANDOFF_WEBHOOK
    offer_person: bool = False  # the turn's plan offers a person (the user said the fix shown did not help)
    environment: dict = field(default_factory=dict)  # the versions the conversation has shown (Environment.as_dict)
    mismatches: tuple[dict, ...] = ()  # each with code, values and source row (bot.diagnose.compat.Mismatch.as_dict)

    markdown = _Rendered()  # not a field: the blocks are the reply, the markdown is how they read

    def __init__(
        self,
        kind: str,
        language: str,
        markdown: str = "",
        *,
        blocks: Iterable[Block] = (),
        shown: Iterable[Shown] = (),
        options: Iterable[dict] = (),
        answered: bool = False,
        signature: str = "",
        truncated_from: int = 0,
        confidence: float = 0.0,
        tier: str = "none",
        reason: str = "",
        events: Iterable[Event] = (),
        handoff: bool = False,
        offer_person: bool = False,
        environment: dict | None = None,
        mismatches: tuple[dict, ...] = (),
    ) -> None:
        self.kind, self.language = kind, language
        self.blocks = (*((Note(markdown),) if markdown else ()), *blocks)
        self.shown, self.options, self.events = list(shown), list(options), list(events)
        self.answered, self.signature, self.truncated_from = answered, signature, truncated_from
        self.confidence, self.tier, self.reason, self.handoff = confidence, tier, reason, handoff
        self.offer_person = offer_person
        self.environment, self.mismatches = dict(environment or {}), mismatches

    def __setattr__(self, name: str, value: object) -> None:
        # A reply from compose() is finished: the edges serialise and record it, they never edit it.
        if self.__dict__.get("_finished"):
            raise FrozenInstanceError(
                f"cannot set {name!r}: a finished reply is composed once, in "
                "bot.answer.reply.compose (called by bot.answer.turn.take_turn)"
            )
        if name == "markdown":
            raise AttributeError(
                "a reply's markdown is rendered from its blocks: add blocks with bot.answer.reply.with_blocks "
                "(or Reply.adding), never edit the text"
            )
        object.__setattr__(self, name, value)

    @property
    def finished(self) -> bool:
        """True for a reply from :func:`compose`: its fields and lists can no longer change."""
        return bool(self.__dict__.get("_finished"))

    def adding(self, *blocks: Block, after: Kind | None = None) -> Reply:
        """A new reply with ``blocks`` right after the last block of kind ``after`` (first without one); this
        reply is left as it was."""
        return replace(self, blocks=inserted(self.blocks, blocks, after=after))

    def of_kind(self, kind: Kind) -> list[Block]:
        return [b for b in self.blocks if b.kind == kind]

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
            "options": list(self.options),
            "hits": self.citations(),
            "environment": dict(self.environment),
            "mismatches": list(self.mismatches),
            "blocks": [as_json(b) for b in self.blocks],
        }


def with_blocks(reply: Reply, *blocks: Block, after: Kind | None = None) -> Reply:
    """:meth:`Reply.adding`: ``reply`` with ``blocks`` after its last block of kind ``after`` (first without one).

    >>> from bot.answer.blocks import Detected
    >>> said = Reply("answer", "en", blocks=(Detected("CUDA error: out of memory"), Note("### Fix")))
    >>> [b.kind for b in with_blocks(said, Note("pasted versions look fine"), after="detected").blocks]
    ['detected', 'note', 'note']
    """
    return reply.adding(*blocks, after=after)


def with_scope(reply: Reply, scope: Scope) -> Reply:
    """``reply`` saying what *this* knowledge base covers, asking for GPU details only when it is about GPUs
    (a new reply; ``reply`` is left as it was).

    The conversation formats replies without the engine's document list; :func:`compose` passes every
    reply through here with :func:`scope_of` ``engine.sections``. Blocks are filled in by kind.
    """

    def scoped(block: Block) -> Block:
        if isinstance(block, ScopeBlock) and not (block.scope and block.scope.titles):
            return replace(block, scope=scope)
        if isinstance(block, (Collect, Person)):
            return replace(block, gpu=scope.gpu)
        return block

    blocks = tuple(scoped(b) for b in reply.blocks)
    return replace(reply, blocks=blocks) if blocks != reply.blocks else reply


def with_person(reply: Reply, contact: Contact | None) -> Reply:
    """``reply`` with "talk to a person" added after "that didn't help" (a retry) when a contact is configured
    (a new reply; ``reply`` is left as it was).

    Tentative and none replies carry it already (:func:`format_no_match`); an answer given after a
    retry is where the user said the last one failed, so a person is offered there too (the turn's plan says so:
    :attr:`Reply.offer_person`).
    """
    contact = contact or Contact()
    if not contact.configured or reply.kind == "intent":
        return reply
    offered = any(isinstance(b, Person) and b.offers_contact for b in reply.blocks)
    if (reply.offer_person or reply.tier in ("tentative", "none")) and not offered:
        return replace(reply, blocks=(*reply.blocks, Person(contact, cited_labels(reply.shown), collect=False)))
    return reply


def compose(
    reply: Reply,
    *,
    scope: Scope,
    contact: Contact | None = None,
    answer_id: str = "",
    truncated_from: int = 0,
    limit: int = 0,
    handoff_failed: bool = False,
    sign: Callable[[str], str] | None = None,
    held: Sequence[str] = (),
) -> Reply:
    """The finished reply, written once: what the conversation said, then in this order what this knowledge
    base covers (:func:`with_scope`), "talk to a person" after "that didn't help" (:func:`with_person`; ``contact``
    already carries the conversation), only what the conversation (``held``) lacks in "please add", the failed
    hand-off's fallback, the note on an input cut before the engine saw it (``truncated_from`` characters, over
    ``limit``), the votes' ``answer_id`` on every event and the ``/source`` links of the citations through ``sign``
    (an API reply read by a browser without a credential). The markdown is rendered from the blocks once; lists
    become tuples and no field can be set again.

    >>> said = Reply(kind="empty", language="en", markdown="Type a question", events=[Event("question", "q", "en")])
    >>> done = compose(said, scope=Scope(), answer_id="a1", truncated_from=150_000, limit=100_000)
    >>> done.markdown.startswith("Note: your input was too long"), done.events[0].answer_id, done.truncated_from
    (True, 'a1', 150000)
    >>> done.markdown = "edited"
    Traceback (most recent call last):
    ...
    dataclasses.FrozenInstanceError: cannot set 'markdown': a finished reply is composed once, in bot.answer.reply.compose (called by bot.answer.turn.take_turn)
    """
    contact = contact or Contact()
    reply = with_person(with_scope(reply, scope), contact)
    language, blocks = reply.language, reply.blocks
    if held:  # ask only for what the conversation lacks
        blocks = tuple(replace(b, held=tuple(held)) if isinstance(b, Collect) else b for b in blocks)
    if handoff_failed:  # the link (as configured, not carrying the failed transcript), or what to collect
        plain = replace(contact, webhook="", transcript="", question="")
        blocks = (Note(text(language, "handoff_failed"), "handoff_failed"), Person(plain, gpu=scope.gpu))
    truncated = reply.truncated_from
    if truncated_from and not truncated:  # cut by the edge (head + tail) before the engine saw it
        truncated = truncated_from
        blocks = (Note(truncation_notice(truncated_from, limit, language), "truncation"), *blocks)
    shown = tuple(reply.shown)
    if sign is not None:  # on the citations themselves: the text around them is never searched for links
        blocks = tuple(signed(b, sign) for b in blocks)
        shown = tuple(replace(s, url=sign(s.url)) for s in shown)
    events = tuple(replace(e, answer_id=answer_id) if answer_id else e for e in reply.events)
    finished = replace(reply, blocks=blocks, truncated_from=truncated)
    for name, value in (("shown", shown), ("options", tuple(dict(o) for o in reply.options)), ("events", events)):
        object.__setattr__(finished, name, value)  # tuples: nothing can be appended to a finished reply
    object.__setattr__(finished, "markdown", render(blocks, language))  # rendered once, here
    object.__setattr__(finished, "_finished", True)
    return finished
