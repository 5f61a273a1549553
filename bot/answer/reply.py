"""Answer -> chat reply, in the language of the question, shaped for a small widget: the builders (``format_*``).

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
conversation adds blocks by kind (:func:`with_blocks`), and :func:`compose` (:mod:`bot.answer.composition`) fills
in what only the turn knows and renders the markdown once (:mod:`bot.answer.render`). Nothing searches a reply's
text to change it. The other pieces live by concern: a section's title, link and fix in
:mod:`bot.answer.sections_text` (its steps in :mod:`bot.answer.steps`), the contact in :mod:`bot.answer.contact`,
the knowledge base's scope in :mod:`bot.answer.scope`; their public names are importable from here too, as callers
always have (``__all__``).

Everything here is a pure function of its arguments (no engine, no I/O), so the chat UI and the JSON API format
replies the same way and tests need no model.

    >>> reply = format_empty("en").adding(Note("Sorry that didn't help.", "apology"))
    >>> [b.kind for b in reply.blocks], reply.markdown.splitlines()[0]
    (['note', 'note'], "Sorry that didn't help.")
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from bot.answer.blocks import (
    AnswerBlock,
    Block,
    Caution,
    Citation,
    Collect,
    Details,
    Detected,
    Note,
    Option,
    Options,
    Person,
    Related,
    ScopeBlock,
)
from bot.answer.composition import (
    Reply,
    Shown,
    citation_line,
    citation_of,
    cited_labels,
    compose,
    person_line,
    with_blocks,
    with_person,
    with_scope,
)
from bot.answer.contact import HANDOFF_CHARS, Contact
from bot.answer.reasons import reason_text
from bot.answer.render import (
    ECHO_HEAD_LINES,
    ECHO_TAIL_LINES,
    USER_ECHO_CHARS,
    details_markdown,
    own_error_line,
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
from bot.answer.steps import MAX_STEPS, Step, english_lead, english_steps, fix_steps, render_steps
from bot.answer.texts import TEXTS, text
from bot.kb.meta import SectionMeta
from bot.records import Answer, Hit, Section

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
    "english_steps",
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
    person = Person(contact or Contact(), cited_labels(shown), collect=False)
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
    blocks.append(Person(contact or Contact(), cited_labels(shown)))
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
        "person": "intent_human",  # the plan's reply kind (bot.engine.plan.REPLY_OF_INTENT)
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
