"""Answer -> chat reply, in the language of the question, shaped for a small widget: the builders and :func:`compose`.

The shape of an answer (the first screen of a 400×640 widget holds the first two)::

    ### one-line summary                 (English title, or the cleaned Chinese heading)
    **1.** first step … ```code```      (the fix as steps, code in blocks, commands once)
    **2.** …
    **Source:** [Doc › Section · lines a–b](source view)     (one citation line)
    <details> problem and analysis / original text / related sections </details>

Confidence is shown in words: an answer is plain; a *tentative* reply starts with
"May not apply: <reason>" and lists the closest sections; *none* says what the
knowledge base covers, which details would help and where to ask a person.

A reply is a sequence of typed blocks (:mod:`bot.answer.blocks`): the builders here put them in order, the
conversation adds blocks by kind (:func:`with_blocks`), and :func:`compose` fills in what only the turn knows and
renders the markdown once (:mod:`bot.answer.render`). Nothing searches a reply's text to change it. The pieces
live by concern: a section's title, link and fix in :mod:`bot.answer.sections_text` (steps in
:mod:`bot.answer.steps`), the contact in :mod:`bot.answer.contact`, the knowledge base's scope in
:mod:`bot.answer.scope`; their public names are importable from here too, as callers always have.

Everything here is a pure function of its arguments (no engine, no I/O), so the chat UI and the JSON API format
replies the same way and tests need no model.

    >>> reply = format_empty("en").adding(Note("Sorry that didn't help.", "apology"))
    >>> [b.kind for b in reply.blocks], reply.markdown.splitlines()[0]
    (['note', 'note'], "Sorry that didn't help.")
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import FrozenInstanceError, dataclass, field, replace

from bot.answer.blocks import (
    AnswerBlock,
    Block,
    Caution,
    Citation,
    Collect,
    Details,
    Detected,
    Kind,
    Note,
    Option,
    Options,
    Person,
    Related,
    ScopeBlock,
    as_json,
    inserted,
    signed,
)
from bot.answer.contact import HANDOFF_CHARS, Contact
from bot.answer.reasons import reason_text
from bot.answer.render import (
    ECHO_HEAD_LINES,
    ECHO_TAIL_LINES,
    USER_ECHO_CHARS,
    details_markdown,
    own_error_line,
    person_text,
    render,
    render_block,
    signature_line,
    truncation_notice,
    user_echo,
)
from bot.answer.safe_markdown import code_block, code_span, doc_markdown, escape_inline, escape_text
from bot.answer.scope import MAX_SCOPE_TITLES, Scope, kb_scope, scope_of, scope_text
from bot.answer.sections_text import (
    FIX_CHARS,
    FULL_CHARS,
    MAX_TERMS,
    citation_label,
    clean_heading,
    era_line,
    focus,
    section_body,
    section_fix,
    section_language,
    section_title,
    section_url,
    short_title,
    source_url,
    text_line,
)
from bot.answer.steps import MAX_STEPS, Step, _english_steps, english_lead, fix_steps, render_steps
from bot.answer.texts import TEXTS, text
from bot.kb.meta import SectionMeta
from bot.records import Answer, Event, Hit, Section

__all__ = [  # what callers import from here, wherever it lives now
    "ECHO_HEAD_LINES",
    "ECHO_TAIL_LINES",
    "FIX_CHARS",
    "FULL_CHARS",
    "HANDOFF_CHARS",
    "MAX_FOLLOW_UPS",
    "MAX_SCOPE_TITLES",
    "MAX_STEPS",
    "MAX_TERMS",
    "TEXTS",
    "USER_ECHO_CHARS",
    "Contact",
    "Reply",
    "Scope",
    "Shown",
    "Step",
    "_english_steps",
    "citation_label",
    "citation_line",
    "clean_heading",
    "code_block",
    "code_span",
    "compose",
    "details_markdown",
    "doc_markdown",
    "english_lead",
    "era_line",
    "escape_inline",
    "escape_text",
    "fix_steps",
    "focus",
    "follow_up_options",
    "format_answer",
    "format_clarify",
    "format_empty",
    "format_exhausted",
    "format_intent",
    "format_no_match",
    "format_none",
    "format_tentative",
    "kb_scope",
    "own_error_line",
    "person_line",
    "render_steps",
    "scope_of",
    "scope_text",
    "section_body",
    "section_language",
    "section_title",
    "section_url",
    "short_title",
    "signature_line",
    "source_url",
    "text",
    "text_line",
    "truncation_notice",
    "user_echo",
    "with_blocks",
    "with_person",
    "with_scope",
]

MetaLookup = Callable[[str], "SectionMeta | None"]
# Section key -> the language it is written in, as the build stored it (``SectionFacts.language``, read through
# ``Conversation._written_in``); a section outside a built index (a test's, a script's) has it detected instead.
LanguageLookup = Callable[[str], str]

MAX_FOLLOW_UPS = 3
SUGGESTION_CHARS = 300  # a suggested follow-up's label is its whole heading (longer ones are not headings)

# Reasons specific enough to say in a "nothing close" reply (a generic "weak" adds nothing there).
SPECIFIC_REASONS = ("uncovered", "uncovered_top", "old_release", "setting_conflict")


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


def _cited(shown: Sequence[Shown]) -> tuple[str, ...]:
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
    environment: dict = field(default_factory=dict)  # the versions the conversation has shown (Environment.as_dict)
    mismatches: tuple[dict, ...] = ()  # each with code, values and source row (bot.engine.compat.Mismatch.as_dict)

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
        environment: dict | None = None,
        mismatches: tuple[dict, ...] = (),
    ) -> None:
        self.kind, self.language = kind, language
        self.blocks = (*((Note(markdown),) if markdown else ()), *blocks)
        self.shown, self.options, self.events = list(shown), list(options), list(events)
        self.answered, self.signature, self.truncated_from = answered, signature, truncated_from
        self.confidence, self.tier, self.reason, self.handoff = confidence, tier, reason, handoff
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
    retry is where the user said the last one failed, so a person is offered there too.
    """
    contact = contact or Contact()
    if not contact.configured or reply.kind == "intent":
        return reply
    retry = any(e.kind == "not_helpful" for e in reply.events)
    offered = any(isinstance(b, Person) and b.offers_contact for b in reply.blocks)
    if (retry or reply.tier in ("tentative", "none")) and not offered:
        return replace(reply, blocks=(*reply.blocks, Person(contact, _cited(reply.shown), collect=False)))
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
    finished = replace(
        reply,
        blocks=blocks,
        truncated_from=truncated,
        shown=shown,
        options=tuple(dict(o) for o in reply.options),
        events=events,
    )
    object.__setattr__(finished, "shown", shown)  # tuples: __init__ made lists of them
    object.__setattr__(finished, "options", tuple(dict(o) for o in reply.options))
    object.__setattr__(finished, "events", events)
    object.__setattr__(finished, "markdown", render(blocks, language))  # rendered once, here
    object.__setattr__(finished, "_finished", True)
    return finished


# ---------------------------------------------------------------- the builders


def _preamble(answer: Answer | None, language: str, limit: int, notes: Iterable[str] = ()) -> list[Block]:
    parts: list[Block] = [Note(n, "followup") for n in notes if n]
    if answer is not None:
        cut = truncation_notice(answer.truncated_from, limit, language)
        if cut:
            parts.append(Note(cut, "truncation"))
        error = own_error_line(answer.signature, answer.query)
        if error:
            parts.append(Detected(error))
    return parts


def _reply(
    answer: Answer,
    language: str,
    blocks: Sequence[Block],
    *,
    tier: str,
    shown: Sequence[Shown] = (),
    options: Sequence[dict] = (),
    kind: str = "no_match",
    reason: str = "",
) -> Reply:
    """The reply to a searched question: its blocks, with what the engine said of it (signature, cut input,
    confidence); answered exactly when the tier is "answer"."""
    return Reply(
        kind=kind,
        language=language,
        blocks=tuple(blocks),
        shown=list(shown),
        options=list(options),
        answered=tier == "answer",
        signature=answer.signature,
        truncated_from=answer.truncated_from,
        confidence=answer.confidence,
        tier=tier,
        reason=reason,
    )


def _section_blocks(
    item: Shown, meta: MetaLookup, language: str, written_in: LanguageLookup | None
) -> tuple[list[Block], list[Details]]:
    """(summary line and fix, citation, era) of the section ``item`` shows, and its collapsed details."""
    section = item.hit.section
    m = meta(section.key)
    body, details = section_fix(item.hit, m, language, written_in=written_in(section.key) if written_in else None)
    blocks: list[Block] = [
        AnswerBlock(section_title(section, m, language), body),
        citation_of(section, item.url, language, m),
    ]
    era = era_line(section, language)
    if era:
        blocks.append(Note(era, "era"))
    return blocks, details


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
    written_in: LanguageLookup | None = None,
) -> Reply:
    """Summary line, the fix as steps, one citation line; details and related sections collapsed."""
    language = language or answer.language
    hits = list(hits if hits is not None else answer.hits)[: 1 + related]
    blocks = _preamble(answer, language, limit, notes)
    shown = [
        Shown(hit, "answer" if n == 0 else "related", section_url(base, hit.section, hit.matched_terms, language))
        for n, hit in enumerate(hits)
    ]
    if shown:
        first, details = _section_blocks(shown[0], meta, language, written_in)
        blocks += [*first, *details]
    if len(shown) > 1:  # one citation link each, collapsed (no second source list)
        blocks.append(
            Related(
                tuple(
                    Citation(citation_label(s.hit.section, meta(s.hit.section.key), language), s.url) for s in shown[1:]
                )
            )
        )
    if ask_more:
        blocks.append(Collect())
    return _reply(answer, language, blocks, tier="answer", shown=shown, kind=kind)


def _option_list(
    hits: Sequence[Hit], meta: MetaLookup, base: str, language: str, role: str
) -> tuple[list[Shown], list[dict], tuple[Option, ...]]:
    shown, options, items = [], [], []
    for hit in hits:
        s = hit.section
        url = section_url(base, s, hit.matched_terms, language)
        shown.append(Shown(hit, role, url))
        m = meta(s.key)
        label = short_title(s, m, language)
        options.append({"label": label, "value": s.key})
        where = citation_label(s, m, language).rsplit(" · ", 1)[-1]
        items.append(Option(label, Citation(where, url, s.source)))
    return shown, options, tuple(items)


def best_fix(item: Shown, meta: MetaLookup, language: str, written_in: LanguageLookup | None = None) -> str:
    """The closest section as a tentative reply shows it: its summary line, its fix (steps and code, the
    section's details left out) and its citation line."""
    blocks, _ = _section_blocks(item, meta, language, written_in)
    return render(blocks, language)


def format_tentative(
    answer: Answer,
    meta: MetaLookup,
    base: str,
    *,
    limit: int,
    language: str | None = None,
    notes: Iterable[str] = (),
    suggestions: int = 3,
    contact: Contact | None = None,
    written_in: LanguageLookup | None = None,
) -> Reply:
    """The closest section's fix under a caution line naming the reason, the other candidates collapsed below
    (and "talk to a person" when a contact is configured).

    The fix is what a person acts on: a list of headings one click away from it gave nothing to do (issue 26).
    """
    language = language or answer.language
    reason = " ".join(reason_text(answer, meta, language).split()) or text(language, "tentative_reason")
    blocks: list[Block] = [Caution(reason)]  # how sure, first
    blocks += _preamble(answer, language, limit, notes)
    shown, options, items = _option_list(answer.hits[:suggestions], meta, base, language, "suggestion")
    if shown:
        blocks += _section_blocks(shown[0], meta, language, written_in)[0]
    if items[1:]:
        blocks.append(Options(items[1:], collapsed=f"{text(language, 'other_candidates')} ({len(shown) - 1})"))
    blocks.append(Collect())
    person = Person(contact or Contact(), _cited(shown), collect=False)
    if person.offers_contact:
        blocks.append(person)
    return _reply(answer, language, blocks, tier="tentative", shown=shown, options=options, reason=reason)


def format_none(
    answer: Answer,
    meta: MetaLookup,
    base: str,
    *,
    limit: int,
    language: str | None = None,
    notes: Iterable[str] = (),
    contact: Contact | None = None,
    suggestions: int = 3,
    scope: Scope | None = None,
) -> Reply:
    """Nothing close: what the knowledge base covers, which details would help, where to ask a person."""
    language = language or answer.language
    # No icon: without a colour-emoji font (a Linux desktop, this machine's Chromium) "ℹ️" draws as a bare "i" that
    # reads as a typo ("i The knowledge base…"); the bold title says it alone.
    blocks: list[Block] = [Note(f"**{text(language, 'no_match_title')}**", "headline")]
    blocks += _preamble(answer, language, limit, notes)
    reason = reason_text(answer, meta, language)
    if answer.reason is not None and answer.reason.code in SPECIFIC_REASONS:  # "No document here covers Jetson"
        blocks.append(Note(escape_inline(" ".join(reason.split())), "reason"))
    blocks += [ScopeBlock(scope), Collect()]
    shown, _, items = _option_list(answer.hits[:suggestions], meta, base, language, "suggestion")
    blocks.append(Person(contact or Contact(), _cited(shown)))
    if items:
        blocks.append(Options(items, collapsed=text(language, "pointers")))
    return _reply(answer, language, blocks, tier="none", shown=shown, reason=reason)


def format_no_match(
    answer: Answer,
    meta: MetaLookup,
    base: str,
    *,
    limit: int,
    language: str | None = None,
    notes: Iterable[str] = (),
    suggestions: int = 3,
    contact: Contact | None = None,
    written_in: LanguageLookup | None = None,
) -> Reply:
    """A reply for a question without a confident answer: tentative or none, by the engine's tier."""
    if answer.tier == "none" or not answer.hits:
        return format_none(
            answer, meta, base, limit=limit, language=language, notes=notes, contact=contact, suggestions=suggestions
        )
    return format_tentative(
        answer,
        meta,
        base,
        limit=limit,
        language=language,
        notes=notes,
        suggestions=suggestions,
        contact=contact,
        written_in=written_in,
    )


def format_clarify(
    answer: Answer,
    hits: Sequence[Hit],
    meta: MetaLookup,
    base: str,
    *,
    limit: int,
    language: str | None = None,
    notes: Iterable[str] = (),
) -> Reply:
    """Ask which of several different problems the user means; the options are clickable."""
    language = language or answer.language
    blocks = _preamble(answer, language, limit, notes)
    shown, options, items = _option_list(hits, meta, base, language, "option")
    blocks.append(Options(items, prompt=text(language, "clarify")))
    return _reply(answer, language, blocks, tier="answer", shown=shown, options=options, kind="clarify")


def format_exhausted(language: str, notes: Iterable[str] = (), contact: Contact | None = None) -> Reply:
    blocks = [
        *(Note(n, "apology") for n in notes if n),
        Note(text(language, "exhausted")),
        Collect(),
        Person(contact or Contact()),
    ]
    return Reply(kind="exhausted", language=language, blocks=blocks)


def format_empty(language: str) -> Reply:
    return Reply(kind="empty", language=language, blocks=(Note(text(language, "empty")),))


def format_intent(label: str, language: str, contact: Contact | None = None) -> Reply:
    """The answer to thanks, a greeting, small talk or a request for a person (see :mod:`bot.engine.intents`).

    Not a search: no citations, no events (nothing to log as unanswered). Small talk ("what can you do?") says
    what these documents cover once the turn knows them (:func:`compose`).

    >>> format_intent("human", "en", Contact("https://help.example.com", "GPU support")).markdown.split("\\n")[0]
    'You can reach a person here: [GPU support](https://help.example.com).'
    >>> format_intent("human", "en").markdown.startswith("No support contact is set up here")
    True
    >>> format_intent("thanks", "zh").kind, format_intent("thanks", "zh").events
    ('intent', [])
    """
    key = {
        "thanks": "intent_thanks",
        "greeting": "intent_greeting",
        "small_talk": "intent_small_talk",
        "human": "intent_human",
    }.get(label, "intent_small_talk")
    if key != "intent_human":
        scope = (ScopeBlock(always=False),) if key == "intent_small_talk" else ()
        return Reply(kind="intent", language=language, blocks=(Note(text(language, key)), *scope), tier="none")
    # a link, the webhook's hand-over (bot.web.handoff posts the transcript), or — no channel configured — what a
    # colleague will need instead of an empty promise
    person = Person(contact or Contact(), handoff=True)
    return Reply(kind="intent", language=language, blocks=(person,), tier="none", handoff=True)


# ---------------------------------------------------------------- suggested follow-ups


def follow_up_options(
    cited: Section,
    sections: Sequence[Section],
    meta: MetaLookup,
    language: str,
    exclude: Iterable[str] = (),
    limit: int = MAX_FOLLOW_UPS,
) -> list[dict]:
    """Up to ``limit`` suggested next questions: the cited section's neighbours in its document.

    ``sections`` is in document order (``engine.sections``); the next section comes first, then the
    one before, then further ones. Document introductions (the text above the first heading) and
    sections in ``exclude`` are skipped.

    >>> doc = [Section("d.md", h, ("D", h), n, n, h, "x", "D") for n, h in enumerate(["D", "a", "b", "c", "d"], 1)]
    >>> [o["label"] for o in follow_up_options(doc[2], doc, lambda k: None, "zh")]
    ['D › c', 'D › a', 'D › d']
    """
    same = [s for s in sections if s.source == cited.source]
    keys = [s.key for s in same]
    if cited.key not in keys:
        return []
    at = keys.index(cited.key)
    skip = set(exclude) | {cited.key}
    order: list[Section] = []
    for distance in range(1, len(same)):
        for index in (at + distance, at - distance):
            if 0 <= index < len(same):
                order.append(same[index])
    out = []
    for s in order:
        if s.key in skip or (s.heading == s.title and s.path == (s.title,)):
            continue
        # the whole heading: a chip wraps, and a cut one ("… in TensorFl…") reads as a different question
        out.append({"label": short_title(s, meta(s.key), language, limit=SUGGESTION_CHARS), "value": s.key})
        if len(out) >= limit:
            break
    return out
