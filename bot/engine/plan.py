"""One plan per turn: what the message is (its act) and how it is searched, decided once, before any scoring.

A turn is read (:class:`bot.engine.message.Message`), its cheap features computed (:class:`TurnFeatures`: the word
lists of :mod:`bot.engine.case`, the message's own words against the off-topic questions, the section they point to
and the section shown), its act decided (:func:`act_of`) and the plan built from the act (:func:`plan`). Scoring,
ranking and judging then run once on the plan; nothing downstream changes the act, the sections left out or the
tier's bounds. The retry rule lives here only: a message that says the fix failed never leads with a section an
earlier turn led with, in this case or an earlier one.

    >>> case = Case(search="loss nan", problem=frozenset({"NaN"}), shown=("faq#nan",), best="faq#nan", led=("faq#oom", "faq#nan"))
    >>> p = plan(read("没用", failed=True, not_helpful=True), case, Reading(rule_move="retry"))
    >>> p.act, p.move, p.exclude, p.own_weight, p.cap
    ('failed_fix', 'retry', ('faq#oom', 'faq#nan'), 0.0, 'tentative')
    >>> p = plan(read("那多机呢？", follow_up=True), case, Reading(rule_move="follow_up", setting=frozenset({"multi-machine"})))
    >>> p.act, p.move, p.focus, p.exclude, p.joined
    ('detail', 'follow_up', 'faq#nan', (), '那多机呢？\\nloss nan')
    >>> plan(read("显存不足怎么办"), Case(), Reading(rule_move="new")).act
    'new'

:func:`act_of` is a function of a frozen record of features, so a learned act model can replace it as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, get_args

from bot.engine.message import Cues, Message
from bot.records import Act, Case, Move, Tier

ACTS: tuple[Act, ...] = get_args(Act)
# How each act moves the case (Answer.move, read by the reply). "leave" is decided with the message's form.
MOVE_OF_ACT: dict[Act, Move] = {
    "new": "new",
    "switch": "switch",
    "detail": "follow_up",
    "follow_up": "follow_up",
    "failed_fix": "retry",
    "report": "retry",
    "environment": "retry",
    "leave": "switch",
}
# A follow-up ("那多机呢？") is ranked by its own words plus the words joined with the previous question;
# its own words count double, or the previous question (which already had its answer) drowns them.
FOLLOW_UP_OWN_WEIGHT = 2.0
# A follow-up that only names a setting ("what about TensorFlow?") says nothing about the problem: its words
# count less than the case's. Up to this many tokens such a message is "only a setting".
SETTING_FOLLOW_UP_WEIGHT = 0.5
SETTING_ONLY_TOKENS = 6
MAX_LED = 30  # section keys an earlier turn led with, remembered per conversation

_TIER_ORDER: dict[Tier, int] = {"none": 0, "tentative": 1, "answer": 2}


@dataclass(frozen=True)
class Reading:
    """What the engine read about the message in its case, cheaply and once (``Engine.reading``): the word lists'
    move, the subjects and frameworks, and the message's own search scores summarised. Everything :func:`plan`
    needs that depends on the index or the lexicon; the plan itself is a pure function of it.

    ``margin``: the own words' best match over the off-topic questions (<= 0: closer to everyday questions);
    ``own_lead``: the section the message's own words rank first (dense + BM25, nothing of the case);
    ``shown_similarity`` / ``other_similarity``: cosine of the message's e5 vector with the shown section's stored
    vector and with the nearest other section's.
    """

    rule_move: Move = "new"
    named: frozenset[str] = frozenset()
    problems: frozenset[str] = frozenset()
    setting: frozenset[str] = frozenset()  # the case's setting carried with the message's (follow-ups, retries)
    frameworks_named: frozenset[str] = frozenset()
    frameworks_carried: frozenset[str] = frozenset()
    frameworks_shown: frozenset[str] = frozenset()  # the main framework(s) of the answer the case showed
    foreign: frozenset[str] = frozenset()  # named frameworks or devices no section covers
    foreign_product: frozenset[str] = frozenset()  # products no section covers, asked about with no problem named
    own_tokens: int = 0
    margin: float = 1.0
    own_lead: str = ""
    own_lead_asked: str = ""  # the same among the sections a follow-up is ranked in (its framework, its new setting)
    shown_similarity: float = 0.0
    other_similarity: float = 0.0
    asks_more: bool = False  # a question about the answer shown rather than a report (case.move_on_the_lead)


@dataclass(frozen=True)
class TurnFeatures:
    """The features an act is decided from (a frozen record: a learned model reads the same)."""

    open_case: bool
    rule_move: Move  # the word lists' reading (bot.engine.case.move_of)
    failed: bool  # says the fix shown did not work ("没用", "still OOM after allow_growth")
    not_helpful: bool  # only that ("没用", "that didn't help")
    elliptical: bool  # only makes sense with the case ("那多机呢？") or points back into it ("那三个 FLAGS")
    new_topic: bool  # "unrelated: …", "另外一个问题"
    is_log: bool
    shows_environment: bool  # versions, GPUs, packages pasted
    asks_more: bool
    foreign: bool  # names a framework or device the documents do not cover
    foreign_product: bool  # asks about a product the documents do not cover, naming no problem
    margin: float
    own_lead_shown: bool  # the message's own words rank a section the case led with first
    own_lead_asked_shown: bool  # and among the sections a follow-up is ranked in
    shown_similarity: float
    other_similarity: float


def features_of(message: Message, case: Case, reading: Reading) -> TurnFeatures:
    cues = message.cues
    return TurnFeatures(
        open_case=case.is_open,
        rule_move=reading.rule_move,
        failed=cues.failed,
        not_helpful=cues.not_helpful,
        elliptical=cues.follow_up or cues.points_back,
        new_topic=cues.new_topic,
        is_log=message.is_log,
        shows_environment=not message.environment.is_empty,
        asks_more=reading.asks_more,
        foreign=bool(reading.foreign),
        foreign_product=bool(reading.foreign_product),
        margin=reading.margin,
        own_lead_shown=bool(reading.own_lead) and reading.own_lead in case.shown,
        own_lead_asked_shown=bool(reading.own_lead_asked) and reading.own_lead_asked in case.shown,
        shown_similarity=reading.shown_similarity,
        other_similarity=reading.other_similarity,
    )


def act_of(f: TurnFeatures) -> Act:
    """The turn's act, decided from its features (the rules below; a learned model may take its place).

    >>> base = TurnFeatures(True, "switch", False, False, False, False, False, False, True, False, False, 0.1, True,
    ...                     True, 0.0, 0.0)
    >>> act_of(base)  # a "new problem" whose own words lead to the section shown: a question about it
    'follow_up'
    >>> from dataclasses import replace
    >>> act_of(replace(base, asks_more=False)), act_of(replace(base, own_lead_shown=False))
    ('report', 'switch')
    >>> act_of(replace(base, rule_move="follow_up", own_lead_shown=False, margin=-0.02))  # "how do I bake bread?"
    'leave'
    >>> act_of(replace(base, rule_move="retry", failed=True)), act_of(replace(base, open_case=False))
    ('failed_fix', 'new')
    """
    if not f.open_case:
        return "new"
    move = f.rule_move
    if f.foreign and not f.failed:
        return "leave"  # another framework or device: not a detail or a retry of what the documents say
    if f.foreign_product and not f.failed and f.other_similarity > f.shown_similarity:
        return "leave"  # a product the documents do not cover, and the words are not about the answer shown
    if move == "follow_up" and not f.elliptical and f.margin <= 0:
        return "leave"  # a full question closer to everyday off-topic questions than to the documents
    if move == "switch" and f.own_lead_shown and not f.new_topic:
        # A "new problem" (or a pasted log) whose own words lead to the section the case already led with is the
        # same problem described again: a question about that answer, or a report that it did not settle it.
        move = "follow_up" if f.asks_more else "retry"
    if move in ("new", "switch"):
        return "switch"
    if move == "follow_up":
        return "detail" if f.elliptical else "follow_up"
    if f.failed:
        return "failed_fix"
    if f.is_log or f.shows_environment:
        return "environment"
    return "report"


class ActModel(Protocol):
    """A learned act decider (:class:`bot.engine.acts.ActModel`): the plan's act of an open case's turn from its
    features and the message's own e5 vector."""

    def act(self, features: TurnFeatures, vector: Any, message: Message, case: Case) -> Act: ...


@dataclass(frozen=True)
class Plan:
    """The turn, decided once: its act and how it is searched, what may be shown and how sure it may be.

    ``search``: the message's own search text; ``joined``: the message's words before the case's ("" when the
    message is searched alone); ``title``: a long new post's first line ("" otherwise); ``own_weight``: the own
    words against the joined ones; ``exclude``: sections never shown; ``answer_bearing``: only sections that answer
    on their own; ``not_lead``: sections that may follow but not lead; ``frameworks``: only sections of these frameworks (empty: any); ``prefer``: sections of these
    frameworks first; ``cover``: sections covering this new setting, when any does; ``focus``: the shown section a
    detail is about ("" otherwise); ``floor``/``cap``: the tier's bounds for the judge.
    """

    act: Act
    move: Move
    search: str = ""
    joined: str = ""
    title: str = ""
    own_weight: float = 1.0
    exclude: tuple[str, ...] = ()
    not_lead: tuple[str, ...] = ()
    answer_bearing: bool = False
    frameworks: frozenset[str] = frozenset()
    prefer: frozenset[str] = frozenset()
    cover: frozenset[str] = frozenset()
    focus: str = ""
    named: frozenset[str] = frozenset()
    problem: frozenset[str] = frozenset()
    setting: frozenset[str] = frozenset()
    says_failed: bool = False
    floor: Tier | None = None
    cap: Tier | None = None
    features: TurnFeatures | None = None

    def bound(self, tier: Tier) -> Tier:
        """The judge's tier within the plan's bounds.

        >>> Plan("failed_fix", "retry", floor="tentative", cap="tentative").bound("answer")
        'tentative'
        >>> Plan("report", "retry", floor="tentative").bound("none"), Plan("new", "new").bound("none")
        ('tentative', 'none')
        """
        if self.floor is not None and _TIER_ORDER[tier] < _TIER_ORDER[self.floor]:
            tier = self.floor
        if self.cap is not None and _TIER_ORDER[tier] > _TIER_ORDER[self.cap]:
            tier = self.cap
        return tier


def plan(
    message: Message,
    case: Case,
    reading: Reading,
    *,
    exclude: tuple[str, ...] = (),
    title: str = "",
    act: Act | None = None,
    model: ActModel | None = None,
    vector: Any = None,
) -> Plan:
    """The plan of one message in its case (``reading``: what the engine read cheaply, :class:`Reading`;
    ``exclude``: sections the caller leaves out; ``title``: the message's first line when it reads as one;
    ``act``: decided elsewhere instead of :func:`act_of`; ``model``: a learned act model, asked for an open case's
    turn with the message's own e5 ``vector`` (:mod:`bot.engine.acts`); the rule decides without one).

    >>> class Says:
    ...     def act(self, features, vector, message, case): return "leave"
    >>> case = Case(search="oom", shown=("faq#oom",), best="faq#oom")
    >>> plan(read("那多机呢？", follow_up=True), case, Reading(rule_move="follow_up"), model=Says(), vector=[0.0]).act
    'leave'
    >>> plan(read("显存不足"), Case(), Reading(rule_move="new"), model=Says(), vector=[0.0]).act  # no case: a first turn
    'new'
    """
    features = features_of(message, case, reading)
    if act is None and model is not None and vector is not None and case.is_open:
        act = model.act(features, vector, message, case)
    act = act or act_of(features)
    move: Move = MOVE_OF_ACT[act]
    if act == "leave" and features.elliptical:
        move = "follow_up"  # "what about PyTorch?": the case's problem, in a setting the documents do not cover
    search = message.search_text
    named, problems = reading.named, reading.problems
    if move in ("new", "switch"):
        problem, setting = problems, named - problems
    else:
        problem, setting = case.problem | problems, reading.setting
    cues = message.cues
    failed = cues.failed and case.is_open
    left_out = list(exclude)
    if failed:
        # The retry rule: a message that says the fix failed never leads with any section an earlier turn led with,
        # in this case or an earlier one, whatever else it asks.
        left_out += [*case.led, *case.shown]
    left = tuple(dict.fromkeys(left_out))
    not_lead: tuple[str, ...] = ()
    if act == "follow_up" and not features.own_lead_asked_shown:
        # A full question about the case whose own words point elsewhere: the case's words alone would put the answer
        # already shown first, and the user would get it again to a new question. It may still follow.
        not_lead = tuple(key for key in case.shown if key not in left)
    own_weight = 1.0
    if move == "retry":
        own_weight = 0.0 if cues.not_helpful else 1.0
    elif move == "follow_up":
        only_setting = (named and not problems) or (not named and cues.points_back)
        own_weight = (
            SETTING_FOLLOW_UP_WEIGHT
            if only_setting and reading.own_tokens <= SETTING_ONLY_TOKENS
            else FOLLOW_UP_OWN_WEIGHT
        )
    if act == "leave":
        frameworks = frozenset()  # the framework asked about is the one not covered: no section would be left
    elif move == "retry":
        # A retry stays with the case's framework: the one its words carried, else the one of the answer shown (a
        # Paddle out-of-memory answer that did not help is not followed by TensorFlow's ConfigProto).
        frameworks = reading.frameworks_carried or reading.frameworks_shown
    elif move == "follow_up":
        frameworks = reading.frameworks_named
    else:
        frameworks = frozenset()
    prefer = (
        reading.frameworks_named if move in ("new", "switch") and len(reading.frameworks_named) == 1 else frozenset()
    )
    cover = (named - problems) - case.setting if move == "follow_up" else frozenset()
    # A follow-up is read as a detail of the answer shown first (the reply shows the part of it that matches, when one
    # does), even when its own words may not put that answer first again.
    focus = case.best if move == "follow_up" and case.best and not failed and case.best not in left else ""
    cap: Tier | None = None
    if act == "leave" or (move == "retry" and cues.not_helpful):
        cap = "tentative"  # the documents do not cover it, or a bare "没用" adds nothing that makes the next one sure
    elif act == "failed_fix" and (
        not (problems - case.problem)
        or (reading.shown_similarity and reading.shown_similarity >= reading.other_similarity)
    ):
        # Its words name no other problem, or are about the fix that failed rather than another section: the next
        # candidate is a guess ("that did not help, still uses GPU 0" is not an out-of-memory question).
        cap = "tentative"
    return Plan(
        act=act,
        move=move,
        search=search,
        joined=f"{search}\n{case.search}" if move in ("follow_up", "retry") else "",
        title=title if move in ("new", "switch") else "",
        own_weight=own_weight,
        exclude=left,
        not_lead=not_lead,
        answer_bearing=move == "retry",
        frameworks=frameworks,
        prefer=prefer,
        cover=cover,
        focus=focus,
        named=named,
        problem=problem,
        setting=setting,
        says_failed=failed,
        floor="tentative" if move == "retry" else None,  # the user asked for the next candidate: show it as doubtful
        cap=cap,
        features=features,
    )


def read(text: str, **cues: bool) -> Message:
    """A message record for examples and tests: ``text`` with the given cues, nothing else read.

    >>> read("没用", not_helpful=True).cues.not_helpful
    True
    """
    return Message(
        sent=text,
        text=text,
        truncated_from=0,
        language="zh" if any("\u4e00" <= c <= "\u9fff" for c in text) else "en",
        has_words=True,
        is_log=False,
        signature="",
        search_text=text,
        tokens=(),
        subjects=frozenset(),
        intent=None,
        cues=Cues(**cues),
    )


__all__ = ["ACTS", "ActModel", "Plan", "Reading", "TurnFeatures", "act_of", "features_of", "plan"]
