"""A message read once: cleaned and cut (:func:`sanitize`), its language, cues, intent, log signature, search text,
subjects and environment (:func:`read_message` -> :class:`bot.engine.message.Message`); and what the plan needs to
know of the index and the lexicon about it (:func:`reading` -> :class:`bot.engine.plan.Reading`).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from bot.diagnose.environment import read_environment
from bot.engine.case import (
    asks,
    asks_briefly,
    asks_for_another,
    is_follow_up,
    is_not_helpful,
    move_of,
    move_on_the_lead,
    points_back,
    requests,
    says_failed,
    says_still,
    starts_new_topic,
)
from bot.engine.catalog import HARD_CATEGORIES, PROBLEM_CATEGORIES, Catalog
from bot.engine.intents import classify
from bot.engine.message import Cues, Message
from bot.engine.plan import SETTING_ONLY_TOKENS, Reading
from bot.engine.scores import LEXICAL_CHARS, margin
from bot.engine.subjects import Lexicon
from bot.kb.domain import Domain, shipped
from bot.kb.patterns import Patterns
from bot.kb.signature import extract_signature, looks_like_log
from bot.kb.tokenize import detect_language, tokenize
from bot.records import Case, Environment

if TYPE_CHECKING:
    from bot.engine.calibration import Weights
    from bot.engine.scores import Scores

# Head of a cut input kept for what the user typed; the rest of the budget keeps the log's tail (the error).
HEAD_SHARE = 0.2
# A question about a detail of the answer shown is short ("具体改哪个参数？", "which flag exactly?"): longer ones
# that name a parameter or a command are questions of their own.
DETAIL_MAX_CJK = 16
DETAIL_MAX_WORDS = 8
DETAIL_KINDS = ("parameter", "command", "file", "step")  # the domain's lists detail_<kind>, the first found wins

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_CJK_LINE = re.compile(r"[\u4e00-\u9fff]{2,}")


def sanitize(text: str, limit: int) -> tuple[str, int]:
    """Make user text safe to process: valid Unicode, no control characters, at most ``limit`` chars.

    Returns the text and its original length when it had to be cut (else 0). A cut keeps
    the first lines (what the user typed above a paste) and the tail (where a traceback's
    error is), joined by a line saying what was left out.

    >>> sanitize("a\\x00b\\ud800c", 10)
    ('a b\\ufffdc', 0)
    >>> cut, total = sanitize("why?\\n" + "noise\\n" * 50 + "Error: boom", 40)
    >>> cut.splitlines()[0], cut.splitlines()[-1], total, len(cut) <= 40
    ('why?', 'Error: boom', 316, True)
    """
    if not isinstance(text, str):
        text = str(text)
    original = len(text)
    if original > limit:
        text = _head_and_tail(text, limit)
    # Lone surrogates (from broken clipboards or JSON) become U+FFFD instead of crashing encoders.
    text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    text = _CONTROL.sub(" ", text)
    return text, (original if original > limit else 0)


def _head_and_tail(text: str, limit: int) -> str:
    marker = "\n…\n"
    budget = max(limit - len(marker), 0)
    head = text[: int(budget * HEAD_SHARE)]
    if "\n" in head:  # whole lines only
        head = head[: head.rindex("\n")]
    tail = text[len(text) - (budget - len(head)) :] if budget > len(head) else ""
    if "\n" in tail[:-1]:
        tail = tail[tail.index("\n") + 1 :]
    return (head + marker + tail)[:limit]


def detail_asked(text: str, domain: Domain) -> str:
    """What detail of the answer shown a short question asks for (one of :data:`DETAIL_KINDS`), or "": a word of
    the domain's list ``detail_<kind>`` and one of ``detail_asks`` in a short message.

    >>> [detail_asked(m, shipped()) for m in ("具体改哪个参数？", "which command do I run?", "具体怎么做", "显存不足怎么办")]
    ['parameter', 'command', 'step', '']
    >>> detail_asked("模型训练完很大，能压缩吗", shipped()), detail_asked("how do I set the parameter server port for distributed training on 8 nodes?", shipped())
    ('', '')
    """
    stripped = text.strip()
    if not stripped or "\n" in stripped:
        return ""
    short = len(stripped) <= DETAIL_MAX_CJK if _CJK_LINE.search(stripped) else len(stripped.split()) <= DETAIL_MAX_WORDS
    if not short or not domain.word("detail_asks").search(stripped):
        return ""
    return next((kind for kind in DETAIL_KINDS if domain.word(f"detail_{kind}").search(stripped)), "")


def read_message(
    message: object,
    *,
    limit: int,
    lexicon: Lexicon,
    patterns: Patterns | None = None,
    domain: Domain | None = None,
) -> Message:
    """Read ``message`` once (:class:`bot.engine.message.Message`): cleaned and cut to ``limit``, its language,
    cues, intent, whether it is a pasted log, what to search, the subjects it names and the environment it shows
    (read with ``patterns``, the domain's: :mod:`bot.kb.patterns`; ``domain``: whose word lists the cues read, the
    shipped one unless given)."""
    domain = domain or shipped()
    sent = "" if message is None else message if isinstance(message, str) else str(message)
    text, truncated_from = sanitize(sent, limit)
    worded = has_words(text)
    is_log = worded and looks_like_log(text)
    signature, search_text = _search_text(text, is_log) if worded else ("", text.strip())
    subjects = frozenset(lexicon.find(text)) if worded else frozenset()
    not_helpful = is_not_helpful(text)
    return Message(
        sent=sent,
        text=text,
        truncated_from=truncated_from,
        language="zh" if detect_language(text) == "zh" else "en",
        has_words=worded,
        is_log=is_log,
        signature=signature,
        search_text=search_text,
        tokens=tuple(dict.fromkeys(tokenize(search_text[:LEXICAL_CHARS]))) if worded else (),
        subjects=subjects,
        intent=classify(text.strip(), domain),
        cues=Cues(
            not_helpful=not_helpful,
            follow_up=is_follow_up(text),
            new_topic=starts_new_topic(text),
            points_back=points_back(text) or (asks_briefly(text) and not subjects),
            failed=says_failed(text, not_helpful=not_helpful),
            anaphora=points_back(text),
            still=says_still(text) or asks_for_another(text),
            detail=detail_asked(text, domain) if worded else "",
        ),
        environment=read_environment(text, patterns) if worded else Environment(),
    )


def _search_text(text: str, is_log: bool) -> tuple[str, str]:
    """(error signature or "", what to search): for a pasted log, its error lines and the user's own words."""
    if not is_log:
        return "", text.strip()
    sig = extract_signature(text)
    # The user's own words around a paste (usually Chinese) say what they ask.
    asked = [line.strip() for line in text.splitlines()[:50] if _CJK_LINE.search(line) and len(line) < 300]
    return sig.headline, ("\n".join([sig.search_text(), *asked[:3]]).strip() or text.strip())


def reading(catalog: Catalog, weights: Weights, message: Message, case: Case, own: Scores | None) -> Reading:
    """What the plan needs to know of the index and the lexicon about this message, read cheaply: the word
    lists' move, the subjects, and the message's own scores summarised (its margin over off-topic questions,
    the section its own words rank first, its e5 vector against the shown section's and the others')."""
    named = catalog.main_subjects(message.subjects)
    problems = frozenset(s for s in named if catalog.lexicon.category(s) in PROBLEM_CATEGORIES)
    move = move_of(message.text, case, problems=problems, is_log=message.is_log, cues=message.cues)
    setting = catalog.carry_setting(case.setting, named - problems) if case.is_open else named - problems
    # What the documents do not cover: another framework or device (a hard subject), or a product asked about
    # with no problem of its own (a PaddleOCR user's out-of-memory is answered by the framework's section;
    # "Paddle Serving deployment, which card?" may not be: the plan weighs it with where the words point).
    uncovered = [s for s in named if s not in catalog.covered_anywhere]
    foreign = frozenset(s for s in uncovered if catalog.lexicon.category(s) in HARD_CATEGORIES)
    product = frozenset(
        s
        for s in uncovered
        if catalog.lexicon.category(s) == "product"
        and not problems
        and (asks(message.text) or message.cues.points_back)
    )
    reading = Reading(
        rule_move=move,
        named=named,
        problems=problems,
        setting=setting,
        frameworks_named=catalog.frameworks(named),
        frameworks_carried=catalog.frameworks(setting),
        frameworks_shown=catalog.frameworks_shown(case),
        on_problem=catalog.on_problem(case.problem | problems) if case.is_open else (),
        foreign=foreign,
        foreign_product=product,
        own_tokens=len(own.tokens) if own is not None else 0,
        asks_more=move_on_the_lead(message.text) == "follow_up",
        needs_case=needs_case(message, named, problems, len(own.tokens) if own is not None else 0),
    )
    if own is None or not case.is_open:
        return reading
    words = own.fused(weights.lexical) + weights.subject * catalog.subject_share(named)
    lead = catalog.sections[int(np.argmax(words))].key if len(words) else ""
    # And among the sections a follow-up would be ranked in (its framework, its new setting's sections).
    asked = np.ones(len(words), dtype=bool)
    frameworks = catalog.frameworks(named)
    if frameworks:
        asked &= np.array([not main or bool(main & frameworks) for main in catalog.main_frameworks], dtype=bool)
    changed = (named - problems) - case.setting
    if changed:
        covering = asked & np.array([changed <= covered for covered in catalog.coverage], dtype=bool)
        asked = covering if covering.any() else asked
    # (scored as a follow-up is: with the share of the case's subjects, not only the message's)
    follow_words = words + weights.subject * (
        catalog.subject_share(case.problem | problems | setting) - catalog.subject_share(named)
    )
    lead_asked = catalog.sections[int(np.argmax(np.where(asked, follow_words, -np.inf)))].key if asked.any() else ""
    shown_similarity = other_similarity = 0.0
    stored = catalog.section_vectors()
    shown = case.best or (case.shown[-1] if case.shown else "")
    if stored is not None and shown in stored[0]:
        by_key, vectors = stored
        similarity = vectors @ own.query_vector
        shown_similarity = float(similarity[by_key[shown]])
        others = np.ones(len(similarity), dtype=bool)
        others[[by_key[key] for key in case.shown if key in by_key]] = False
        other_similarity = float(similarity[others].max()) if others.any() else -1.0
    return replace(
        reading,
        margin=margin(catalog.index, own),
        own_lead=lead,
        own_lead_asked=lead_asked,
        shown_similarity=shown_similarity,
        other_similarity=other_similarity,
    )


def needs_case(message: Message, named: frozenset[str], problems: frozenset[str], own_tokens: int) -> bool:
    """Whether the message cannot be understood without the conversation, by its cues: "那…呢" or "what about …",
    a pronoun, a setting alone, "still" or "any other way", a detail of the answer, a request about it ("我想把显存限制在
    30%": what the user wants next, after the answer), a failed fix, a log or versions.
    A message without any of these is a complete question: searched on its own words unless the evidence says
    otherwise (:func:`bot.engine.plan.chosen_reading`)."""
    cues = message.cues
    setting_alone = bool(named) and not problems and own_tokens <= SETTING_ONLY_TOKENS
    return (
        cues.follow_up
        or cues.anaphora
        or cues.still
        or cues.failed
        or cues.not_helpful
        or bool(cues.detail)
        or requests(message.text)
        or setting_alone
        or message.is_log
        or not message.environment.is_empty
    )


def title_of(text: str) -> str:
    """The first line of a multi-line message when it reads like a title (short), else "".

    >>> title_of("Training hangs on 8 GPUs\\nlog line 1\\nlog line 2"), title_of("one line only")
    ('Training hangs on 8 GPUs', '')
    """
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0] if len(lines) > 1 and len(lines[0]) <= 200 and has_words(lines[0]) else ""


def has_words(text: str) -> bool:
    """Anything to search: at least two letters, digits or CJK characters in a row."""
    return bool(re.search(r"[^\W_]{2}", text))
