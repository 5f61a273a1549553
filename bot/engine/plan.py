"""One plan per turn: every decision about the turn, made once, before any scoring (:class:`bot.records.Plan`).

A turn is read (:class:`bot.engine.message.Message`); what the reply is when it is no search is decided first
(:func:`reply_of`: empty, a clicked section, nothing to retry, thanks, a greeting, small talk, a person). A searched
turn's cheap features are computed (:class:`TurnFeatures`: the word lists' reading of :mod:`bot.engine.case` as
``rule_move``, the message's own words against the off-topic questions, the section they point to and the section
shown), its act decided (:func:`act_of`, weighed against a learned model's :class:`Proposal` by :func:`decide_act`)
and the plan built from the act (:func:`plan`): how it is searched, what may be shown, the tier's bounds, whether a
clarifying question may be asked, what the turn records, whether a person is offered, the reply's language.
Scoring, ranking, judging, the conversation, the reply's composition and the edges read the plan's fields; none of
them reads the message's words again. The retry rule lives here only: a message that says the fix failed never leads
with a section an earlier turn led with, in this case or an earlier one.

    >>> case = Case(search="loss nan", problem=frozenset({"NaN"}), shown=("faq#nan",), best="faq#nan", led=("faq#oom", "faq#nan"))
    >>> p = plan(read("没用", failed=True, not_helpful=True), case, Reading(rule_move="retry"))
    >>> p.act, p.move, p.exclude, p.own_weight, p.cap
    ('failed_fix', 'retry', ('faq#oom', 'faq#nan'), 0.0, 'tentative')
    >>> p = plan(read("那多机呢？", follow_up=True), case, Reading(rule_move="follow_up", setting=frozenset({"multi-machine"})))
    >>> p.act, p.move, p.focus, p.exclude, p.joined
    ('detail', 'follow_up', 'faq#nan', (), '那多机呢？\\nloss nan')
    >>> plan(read("显存不足怎么办"), Case(), Reading(rule_move="new")).act
    'new'

:func:`act_of` is a function of a frozen record of features; a learned act model reads the same record and only
proposes (:func:`decide_act` decides).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, get_args

from bot.engine.message import Cues, Message
from bot.records import Act, Case, Move, Plan, ReplyKind, Tier, TurnFeatures

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


@dataclass(frozen=True)
class Finding:
    """What one reading of a message finds when it is searched, ranked and judged (``Engine.plan``): the section it
    leads with, whether the judge finds that lead clear (tier "answer") and its calibrated probability."""

    lead: str = ""
    clear: bool = False
    probability: float = 0.0


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
    # Each section on the case's problem (a subject of the case's or the message's problem that the section covers;
    # :meth:`bot.engine.catalog.Catalog.on_problem`): its key and main framework(s). A retry keeps its framework only
    # while that framework holds one (after a failed fix, one the conversation has not led with or shown).
    on_problem: tuple[tuple[str, frozenset[str]], ...] = ()
    foreign: frozenset[str] = frozenset()  # named frameworks or devices no section covers
    foreign_product: frozenset[str] = frozenset()  # products no section covers, asked about with no problem named
    own_tokens: int = 0
    margin: float = 1.0
    own_lead: str = ""
    own_lead_asked: str = ""  # the same among the sections a follow-up is ranked in (its framework, its new setting)
    shown_similarity: float = 0.0
    other_similarity: float = 0.0
    asks_more: bool = False  # a question about the answer shown rather than a report (case.move_on_the_lead)
    needs_case: bool = True  # the message's cues say it needs the conversation (bot.engine.read.needs_case)
    # A complete question in an open case is searched both ways, once each (Engine.plan): on its own words as a new
    # question (``alone``) and joined with the case (``together``); the plan picks by what each finds.
    alone: Finding | None = None
    together: Finding | None = None


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


# ---------------------------------------------------------------- a complete question: its own words or the case's

WEIGHED: tuple[Act, ...] = ("follow_up", "detail")  # the acts that join the case's words


def weighs_readings(act: Act, reading: Reading, case: Case) -> bool:
    """Whether the turn is searched both ways before its act is final (:func:`chosen_reading`): a message the rule
    joins with the case although none of its cues says it needs the case (a complete question), in an open case.

    >>> weighs_readings("follow_up", Reading(needs_case=False), Case(search="oom"))
    True
    >>> weighs_readings("follow_up", Reading(needs_case=True), Case(search="oom")), weighs_readings("switch", Reading(needs_case=False), Case(search="oom"))
    (False, False)
    """
    return case.is_open and act in WEIGHED and not reading.needs_case


def chosen_reading(act: Act, alone: Finding, together: Finding, case: Case) -> tuple[Act, bool]:
    """The act of a complete question searched both ways, and whether the chosen reading's lead is clear (the turn
    may be confident only then). Its own words lead to a section the case showed: it is about the case's answer.
    Else it is a new question, searched alone, when its own words find a clear lead; about the case when only the
    case's words find one; when neither does, about the case, not confidently (a new case on an unclear reading
    would carry the next turns away from the conversation).

    >>> case = Case(search="nccl error", shown=("faq#nccl",), best="faq#nccl")
    >>> chosen_reading("follow_up", Finding("faq#cpu", True, 0.8), Finding("faq#nccl", True, 0.9), case)
    ('switch', True)
    >>> chosen_reading("follow_up", Finding("faq#cpu", False, 0.3), Finding("faq#nccl", True, 0.9), case)
    ('follow_up', True)
    >>> chosen_reading("detail", Finding("faq#cpu", False, 0.5), Finding("faq#nccl", False, 0.4), case)
    ('detail', False)
    >>> chosen_reading("detail", Finding("faq#nccl", True, 0.9), Finding("faq#nccl", True, 0.9), case)
    ('detail', True)
    >>> chosen_reading("follow_up", Finding("faq#conv", False, 0.4), Finding("faq#conv", True, 0.8), case)
    ('follow_up', True)
    """
    if alone.lead in case.shown:
        return act, together.clear
    if alone.clear:
        return "switch", True
    return act, together.clear


# ---------------------------------------------------------------- the learned act model's proposal

# The labellers' acts (eval/acts/README.md) as plan acts: a label's family, the first used when the rule's act is not
# in it. A label answered before the engine (thanks, person) keeps the rule's act.
FAMILY: dict[str, tuple[Act, ...]] = {
    "detail": ("detail", "follow_up"),
    "failed_fix": ("failed_fix", "report"),
    "new_covered": ("switch",),
    "new_uncovered": ("leave",),
    "environment": ("environment",),
}


@dataclass(frozen=True)
class Guard:
    """When a learned act model's proposal overrules the rule: only when it is at least ``threshold`` sure of its
    label, and never where the rule reads one of ``keep``. Fitted with the model and stored with it
    (``python -m bot acts``; ``--guard`` chooses one); written as text, e.g. "none", "threshold 0.8",
    "never on failed fix", "threshold 0.8, never on failed fix".

    >>> g = Guard.parse("threshold 0.8, never on failed fix")
    >>> g.threshold, sorted(g.keep)
    (0.8, ['failed_fix', 'report'])
    >>> str(Guard.parse("none")), str(Guard.parse("never on failed fix")), str(Guard(0.6))
    ('none', 'never on failed fix', 'threshold 0.6')
    """

    threshold: float = 0.0
    keep: frozenset[Act] = frozenset()

    @classmethod
    def parse(cls, text: str) -> Guard:
        threshold, keep = 0.0, frozenset()
        for part in (p.strip().lower() for p in text.split(",")):
            if part in ("", "none"):
                continue
            if part == "never on failed fix":
                keep = RULE_KEPT
                continue
            words = part.replace("=", " ").split()
            try:
                if len(words) != 2 or words[0] != "threshold":
                    raise ValueError(part)
                threshold = float(words[1])
            except ValueError:
                raise ValueError(
                    f"guard {text!r}: {part!r} is not one of none, threshold T (0 <= T <= 1), never on failed fix; "
                    'e.g. --guard "threshold 0.8, never on failed fix"'
                ) from None
            if not 0.0 <= threshold <= 1.0:
                raise ValueError(f"guard {text!r}: the threshold must be between 0 and 1")
        return cls(threshold, keep)

    def __str__(self) -> str:
        parts = [f"threshold {self.threshold:g}"] if self.threshold else []
        parts += ["never on failed fix"] if self.keep else []
        return ", ".join(parts) or "none"


# The rule's turns a "never on failed fix" guard keeps: it reads a failed fix or a report (the retry rule's turns).
RULE_KEPT: frozenset[Act] = frozenset({"failed_fix", "report"})
# Guards a model is fitted and scored with (python -m bot acts): cross-validation picks one, --guard another.
GUARDS: tuple[str, ...] = (
    "none",
    "threshold 0.5",
    "threshold 0.6",
    "threshold 0.7",
    "threshold 0.8",
    "never on failed fix",
    "threshold 0.6, never on failed fix",
    "threshold 0.8, never on failed fix",
)
# A model file stored before guards were stored is read with the guard it shipped with then.
STORED_BEFORE = "threshold 0.8, never on failed fix"


@dataclass(frozen=True)
class Proposal:
    """What a learned act model proposes for an open case's turn: a labeller's act and how sure it is of it (among
    the labels the engine answers)."""

    label: str
    probability: float


class ActModel(Protocol):
    """A learned act model (:class:`bot.engine.acts.ActModel`): a proposal for an open case's turn from its features
    and the message's own e5 vector, and the guard it was fitted with. An input of the plan; :func:`decide_act`
    decides."""

    @property
    def guard(self) -> Guard: ...

    def propose(self, features: TurnFeatures, vector: Any, message: Message, case: Case) -> Proposal: ...


def plan_act(label: str, rule: Act) -> Act:
    """The plan's act for a labeller's label: the rule's own act when it is in the label's family, else the family's
    first (a label answered before the engine keeps the rule's act).

    >>> plan_act("failed_fix", "report"), plan_act("failed_fix", "detail"), plan_act("new_covered", "new")
    ('report', 'failed_fix', 'switch')
    """
    family = FAMILY.get(label)
    if family is None:
        return rule
    return rule if rule in family else family[0]


def decide_act(rule: Act, proposal: Proposal | None, guard: Guard = Guard()) -> Act:
    """The turn's act from the rule's (:func:`act_of`) and a learned model's proposal, if any, under the model's
    ``guard``: the proposal's unless it is less sure than the guard's threshold or the rule reads an act it keeps.

    >>> strict = Guard.parse("threshold 0.8, never on failed fix")
    >>> decide_act("detail", Proposal("new_uncovered", 0.9), strict), decide_act("detail", Proposal("new_uncovered", 0.5), strict)
    ('leave', 'detail')
    >>> decide_act("failed_fix", Proposal("detail", 0.99), strict), decide_act("switch", None, strict)
    ('failed_fix', 'switch')
    >>> decide_act("failed_fix", Proposal("detail", 0.4))  # no guard: the model decides
    'detail'
    """
    if proposal is None or rule in guard.keep or proposal.probability < guard.threshold:
        return rule
    return plan_act(proposal.label, rule)


# ---------------------------------------------------------------- the reply, before any search

# A message that is not a question (bot.engine.intents) is answered as such.
REPLY_OF_INTENT: dict[str, ReplyKind] = {
    "thanks": "thanks",
    "greeting": "greeting",
    "small_talk": "small_talk",
    "human": "person",
}
UNSEARCHED: tuple[ReplyKind, ...] = (
    "empty",
    "section",
    "nothing_to_retry",
    "thanks",
    "greeting",
    "small_talk",
    "person",
)


def reply_of(message: Message, case: Case, *, section: bool = False) -> ReplyKind | None:
    """What the reply is when it is not a search, in this order, else None (the engine searches):

    1. an empty message: a friendly prompt (not a turn);
    2. exactly a section key (``section``: a clicked suggestion or clarification option): that section;
    3. "没用" with no open case: nothing to retry;
    4. thanks, a greeting, small talk, "转人工": answered as such (not a search, nothing recorded).

    >>> reply_of(read("  "), Case()), reply_of(read("没用", not_helpful=True), Case())
    ('empty', 'nothing_to_retry')
    >>> reply_of(read("没用", not_helpful=True), Case(search="oom")) is None
    True
    """
    if not message.stripped:
        return "empty"
    if section:
        return "section"
    if message.cues.not_helpful and not case.is_open:
        return "nothing_to_retry"
    if not message.cues.not_helpful and message.intent is not None:
        return REPLY_OF_INTENT.get(message.intent, "small_talk")
    return None


def _unsearched(kind: ReplyKind, message: Message, case: Case, section_language: str, features) -> Plan:
    """The plan of a turn the engine does not search: its reply kind and language; a clicked section is a detail of
    the case (its reply shows that section; the case remembers it as shown and best)."""
    if kind == "empty":
        language = case.language or message.language  # not a turn: the conversation's language
    elif kind == "section":
        language = case.language or section_language
    else:
        language = message.language
    act: Act = "detail" if kind == "section" else "new"
    return Plan(
        act=act,
        move=MOVE_OF_ACT[act],
        reply=kind,
        language=language,
        says_failed=message.cues.failed and case.is_open,
        features=features,
    )


# ---------------------------------------------------------------- the plan


def plan(
    message: Message,
    case: Case,
    reading: Reading | None = None,
    *,
    turn: bool = False,
    section: bool = False,
    section_language: str = "",
    exclude: tuple[str, ...] = (),
    title: str = "",
    act: Act | None = None,
    model: ActModel | None = None,
    vector: Any = None,
) -> Plan:
    """The plan of one message in its case: every decision about the turn, made here once.

    ``reading``: what the engine read cheaply (:class:`Reading`; None when the reply is not a search: it is not
    needed then); ``turn``: a conversation's turn, whose reply may be no search (:func:`reply_of`; a question asked
    alone, by the evaluation or the CLI, is always searched); ``section``: the message is exactly a section key
    (``section_language``: that section's);
    ``exclude``: sections the caller leaves out; ``title``: the message's first line when it reads as one; ``act``:
    decided elsewhere instead of :func:`act_of`; ``model``: a learned act model, whose :class:`Proposal` for an open
    case's turn (with the message's own e5 ``vector``) :func:`decide_act` weighs against the rule's act.

    >>> class Says:
    ...     guard = Guard.parse("threshold 0.8")
    ...     def propose(self, features, vector, message, case): return Proposal("new_uncovered", 0.9)
    >>> case = Case(search="oom", shown=("faq#oom",), best="faq#oom")
    >>> plan(read("那多机呢？", follow_up=True), case, Reading(rule_move="follow_up"), model=Says(), vector=[0.0]).act
    'leave'
    >>> plan(read("显存不足"), Case(), Reading(rule_move="new"), model=Says(), vector=[0.0]).act  # a first turn
    'new'
    >>> plan(read("谢谢", intent="thanks"), case, turn=True).reply, plan(read(""), case, turn=True).reply
    ('thanks', 'empty')
    """
    features = features_of(message, case, reading) if reading is not None else None
    unsearched = reply_of(message, case, section=section) if turn else None
    if unsearched is not None:
        return _unsearched(unsearched, message, case, section_language, features)
    if features is None or reading is None:
        raise ValueError("a searched turn is planned from its reading (Engine.reading)")
    if act is None:
        rule = act_of(features)
        proposal = None
        if model is not None and vector is not None and case.is_open:
            proposal = model.propose(features, vector, message, case)
        act = decide_act(rule, proposal, model.guard if model is not None else Guard())
    clear = True
    if reading.alone is not None and reading.together is not None and weighs_readings(act, reading, case):
        act, clear = chosen_reading(act, reading.alone, reading.together, case)
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
        # Paddle out-of-memory answer that did not help is not followed by TensorFlow's ConfigProto) -- while that
        # framework has a section on the case's problem that the retry may still show. When it has none left (the
        # framework's only section on it failed, or it never had one), the other documents' sections on the problem
        # are the next candidates: left to the framework, the retry would lead with an unrelated section of it.
        frameworks = reading.frameworks_carried or reading.frameworks_shown
        shown_or_led = {*case.led, *case.shown} if failed else set()
        remaining = [main for key, main in reading.on_problem if key not in shown_or_led]
        if frameworks and problem and not any(not main or main & frameworks for main in remaining):
            frameworks = frozenset()
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
    if not clear:
        cap = "tentative"  # a complete question whose readings both find no clear lead: the likelier, not sure
    elif act == "leave" or (move == "retry" and cues.not_helpful):
        cap = "tentative"  # the documents do not cover it, or a bare "没用" adds nothing that makes the next one sure
    elif act == "failed_fix" and (
        not (problems - case.problem)
        or (reading.shown_similarity and reading.shown_similarity >= reading.other_similarity)
    ):
        # Its words name no other problem, or are about the fix that failed rather than another section: the next
        # candidate is a guess ("that did not help, still uses GPU 0" is not an out-of-memory question).
        cap = "tentative"
    # "Didn't help" is recorded only when the user says it, about what the case showed; it offers a person too.
    records_failure = failed and bool(case.shown)
    language = message.language
    if message.bare_log and case.language in ("zh", "en"):
        language = case.language  # a log without the user's words: the conversation's language (issue 35)
    return Plan(
        act=act,
        move=move,
        # A report without a failure word ("ping 是通的") or a new question read as one ("Keras model.fit does not
        # use my GPU") is answered as a question: no apology for what the user never said.
        reply="retry" if act == "failed_fix" else "answer",
        language=language,
        search=search,
        joined=f"{search}\n{case.search}" if move in ("follow_up", "retry") else "",
        title=title if move in ("new", "switch") else "",
        own_weight=own_weight,
        exclude=left,
        not_lead=not_lead,
        answer_bearing=move == "retry",
        frameworks=frameworks,
        prefer=prefer,
        # A fix that failed is followed by the next section on the same problem when one is left (the subject share
        # alone let a section on another subject lead: "加了 ClipGradByGlobalNorm 还是 nan" -> a gradient-printing FAQ).
        lead_on=problem if failed else frozenset(),
        cover=cover,
        focus=focus,
        detail=cues.detail if focus else "",
        named=named,
        problem=problem,
        setting=setting,
        says_failed=failed,
        floor="tentative" if move == "retry" else None,  # the user asked for the next candidate: show it as doubtful
        cap=cap,
        continues=move in ("follow_up", "retry"),  # judged as a turn of its case (the follow-up model, when fitted)
        clarify=move in ("new", "switch") and not case.clarified,  # a clarifying question, never two in a row
        records_failure=records_failure,
        records_question=not cues.not_helpful,  # anything else the user types is a question of its own
        restates_case=move in ("follow_up", "retry") and cues.not_helpful,
        offers_person=records_failure,
        shows_signature=move != "retry",  # the next candidate is for the case, not for the log's error line
        features=features,
    )


def read(text: str, intent: str | None = None, **cues: bool) -> Message:
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
        intent=intent,
        cues=Cues(**cues),
    )


__all__ = [
    "ACTS",
    "ActModel",
    "Finding",
    "GUARDS",
    "Guard",
    "Plan",
    "Proposal",
    "Reading",
    "TurnFeatures",
    "act_of",
    "chosen_reading",
    "decide_act",
    "features_of",
    "plan",
    "reply_of",
    "weighs_readings",
]
