"""A conversation with the assistant: one turn at a time, in the conversation's case.

The chat UI, ``POST /api/ask`` and ``/v1`` all go through :meth:`Conversation.respond`, which
reads the message once (``engine.read``) and hands that record on. The APIs are stateless: they
continue a conversation whose history was seen before (:class:`bot.answer.turn.HistoryStates`) or
rebuild it by replaying the user turns they are sent (:meth:`Conversation.replay`).

Every message is asked of the engine once, in its case, as a turn (``engine.ask(..., turn=True)``); the turn's plan
(:mod:`bot.engine.plan`, on the answer) says what the reply is and the conversation phrases it:

1. empty -> a friendly prompt;
2. exactly a section key (a clicked suggestion or clarification option) -> that section;
3. "没用" with nothing open -> nothing to retry;
4. thanks, greetings, "talk to a person" -> answered as such (not a search);
5. otherwise the engine's ranked and judged answer *in its case*: a new question, a follow-up ("那多机呢？":
   searched with the case), a retry ("没用", "still OOM after allow_growth": what was shown is not shown again) or
   a switch to a new problem. What the turn records, whether a clarifying question may be asked and whether a
   person is offered are the plan's fields; the conversation reads no word list.

An answer whose top sections are close in score but about different problems
becomes a clarifying question with the sections as clickable options (never
twice in a row); no confident match becomes an honest "no match" with the
nearest sections as options and a request for logs and versions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from bot.answer.blocks import Environment as EnvironmentBlock
from bot.answer.blocks import Note
from bot.answer.environment_text import describe
from bot.answer.focus import focus_reply
from bot.answer.reply import (
    Contact,
    Reply,
    escape_inline,
    format_answer,
    format_clarify,
    format_empty,
    format_exhausted,
    format_intent,
    format_no_match,
    text,
    with_blocks,
)
from bot.diagnose.compat import check, table_for
from bot.diagnose.environment import merge
from bot.engine.answerer import Answerer
from bot.engine.facts import SectionFacts
from bot.engine.message import Message
from bot.engine.plan import MAX_LED, Plan
from bot.limits import HISTORY_TURNS_REPLAYED, QUESTION_CHARS
from bot.records import Answer, Case, Environment, Event, Hit

CLOSE_GAP = 0.3  # sections within this much of the best fused score (z-score units) are "close"
CLARIFY_MAX_CHARS = 40  # only short, vague questions get a clarifying question
MAX_REPLAY_TURNS = HISTORY_TURNS_REPLAYED  # user turns replayed from an API history

# key -> language of each loaded index generation's sections, by the identity of its facts (a reload brings new ones)
_LANGUAGES: dict[int, tuple[Sequence[SectionFacts], dict[str, str]]] = {}


def languages_of(facts: Sequence[SectionFacts]) -> dict[str, str]:
    """Section key -> the language it is written in, from the facts its build stored (computed once per index)."""
    held = _LANGUAGES.get(id(facts))
    if held is None or held[0] is not facts:
        if len(_LANGUAGES) >= 4:  # a live reload leaves the old generation behind
            _LANGUAGES.clear()
        held = _LANGUAGES[id(facts)] = (facts, {f.key: f.language for f in facts})
    return held[1]


@dataclass
class Turn:
    """One exchange, as much as later turns need of it (flat fields: the UI keeps it in the browser tab;
    a restored snapshot's unknown keys are dropped, see ``bot.web.ui.restore``)."""

    question: str
    language: str
    search: str  # the case's search text after this turn
    kind: str  # Reply.kind
    answered: bool
    shown: list[str] = field(default_factory=list)  # section keys shown in this turn
    signature: str = ""
    best: str = ""  # key of the section last given as the answer in this case
    top_score: float = 0.0
    problem: list[str] = field(default_factory=list)  # the case's problem subjects
    setting: list[str] = field(default_factory=list)  # the case's setting subjects
    case_shown: list[str] = field(default_factory=list)  # every section shown for this case
    tried: list[str] = field(default_factory=list)  # the user's words about what they tried
    move: str = "new"
    environment: dict = field(default_factory=dict)  # the versions shown so far (Environment.as_dict)
    led: list[str] = field(default_factory=list)  # every section a turn of the conversation led with, so far

    def case(self) -> Case:
        return Case(
            search=self.search,
            problem=frozenset(self.problem),
            setting=frozenset(self.setting),
            shown=tuple(self.case_shown or self.shown),
            best=self.best,
            tried=tuple(self.tried),
            language=self.language,
            signature=self.signature,
            turns=1,
            environment=Environment.from_dict(self.environment),
            led=tuple(self.led),
        )


def _clip(value: str, limit: int = 60) -> str:
    value = " ".join(value.split())
    return value if len(value) <= limit else value[: limit - 1] + "…"


# Lines a person pastes but did not write: an nvidia-smi table row or border ("|", "+----"), a glog or timestamped log
# line, a traceback's frame.
_NOT_WORDS = re.compile(r"^\s*[|+]|^\s*[IWEF]\d{4} |^\s*\[?\d{4}[-/]\d\d[-/]\d\d|^\s*(?:Traceback \(|File \")")
_LETTER = re.compile(r"[^\W\d_]")


def user_words(message: str) -> str:
    """The line of a message that says what the user asks: the first with letters that is not a pasted table or log
    line (the whole message when every line is one).

    >>> user_words("+-----------------+\\n| NVIDIA-SMI 535.104.05  Driver Version: 535.104.05 |\\n训练时报错 CUDA error 35")
    '训练时报错 CUDA error 35'
    """
    for line in message.splitlines():
        if _LETTER.search(line) and not _NOT_WORDS.match(line):
            return line
    return message


def clarify_candidates(answer: Answer, question: str) -> list[Hit]:
    """The top sections to ask about, or [] when the answer is clear enough to give.

    Asked only for short questions whose runners-up are within ``CLOSE_GAP`` of the
    best section, when the best does not lead both dense and lexical evidence among
    them, and when they are about different problems (other documents, or separate
    FAQ entries).
    """
    hits = answer.hits
    if answer.signature or not answer.answered or len(hits) < 2 or len(question.strip()) > CLARIFY_MAX_CHARS:
        return []
    top = hits[0]
    close = [h for h in hits[:3] if top.score - h.score <= CLOSE_GAP]
    if len(close) < 2:
        return []
    if all(top.dense >= h.dense and top.lexical >= h.lexical for h in close):  # the evidence agrees
        return []
    documents = {h.section.source for h in close}
    separate_faqs = all(h.section.fields for h in close)
    return close if len(documents) > 1 or separate_faqs else []


@dataclass
class Conversation:
    """The turns so far, and how to answer the next message."""

    engine: Answerer
    base_url: str = ""
    contact: Contact = field(default_factory=Contact)  # where to ask a person (BOT_CONTACT_URL)
    turns: list[Turn] = field(default_factory=list)
    planned: Plan | None = None  # the last message's plan (what the turn evaluation reads)

    @property
    def last(self) -> Turn | None:
        return self.turns[-1] if self.turns else None

    @property
    def case(self) -> Case:
        """What the conversation is about now (empty before the first question), with every section an earlier
        turn led with (the plan leaves them out when the user says the fix failed)."""
        last = self.last
        case = last.case() if last is not None and last.search and last.kind != "empty" else Case()
        return _replace(case, led=self._leads(), clarified=last.kind == "clarify") if last is not None else case

    def _meta(self, key: str):
        return self.engine.meta(key)

    def _written_in(self, key: str) -> str:
        """The language section ``key`` is written in, as the index's build stored it (``SectionFacts.language``)."""
        return languages_of(self.engine.facts)[key]

    def _limit(self) -> int:
        return self.engine.settings.max_input_chars

    # ------------------------------------------------------------ entry points

    def respond(self, message: object) -> Reply:
        """The reply to one message; the message is read once (:meth:`Answerer.read`) and that record travels, and
        asked once: the answer carries the turn's plan, which says what the reply is."""
        read = self.engine.read(message)
        case = self.case
        answer = self.engine.ask(read, k=10, case=case, turn=True)
        plan = self.planned = answer.plan
        if plan.reply == "empty":
            return format_empty(plan.language)  # not a turn: nothing to follow up on
        if plan.reply == "section":
            return self._chosen(answer)
        if plan.reply == "nothing_to_retry":
            return Reply(kind="empty", language=plan.language, markdown=text(plan.language, "nothing_to_retry"))
        if not plan.searched:
            # thanks, greetings, "转人工": answered as such, not a search, nothing to log
            return format_intent(plan.reply, plan.language, self.contact)
        return self._ask(read, case, answer)

    @classmethod
    def replay(cls, engine: Answerer, history: Iterable[str], **kwargs) -> Conversation:
        """Rebuild a conversation from prior user messages (the API is stateless); their events are dropped."""
        conversation = cls(engine, **kwargs)
        for message in list(history)[-MAX_REPLAY_TURNS:]:
            conversation.respond(message)
        return conversation

    # ------------------------------------------------------------ cases

    def _ask(self, read: Message, case: Case, answer: Answer) -> Reply:
        message = read.sent
        plan = answer.plan  # asked once: the plan decided the act and the reply, and left out every earlier lead
        # The machine does not change with the problem: what this message shows joins what earlier turns showed.
        environment = merge(case.environment, read.environment)
        answer = _replace(answer, case=_replace(answer.case, environment=environment))
        language = answer.language
        notes: list[str] = []
        if plan.move == "follow_up":
            previous = self.last.question if self.last is not None else ""
            notes.append("_" + text(language, "followup", previous=escape_inline(_clip(user_words(previous)))) + "_")
        top = answer.hits[0].score if answer.hits else 0.0
        answer = _replace(answer, hits=answer.hits[: answer.worth_showing])
        if not plan.shows_signature:
            answer = _replace(answer, signature="", truncated_from=0)
        if plan.reply == "retry":
            reply = self._retry_reply(answer, language)
        else:
            reply = self._decide(answer, message, language, notes, allow_clarify=plan.clarify)
            if plan.focus:  # a detail of the section shown: that part only
                reply = self._detail(plan.focus, answer, message, language, notes, plan.detail) or reply
        events = [self._not_helpful_event(case, language)] if plan.records_failure else []
        if plan.records_question:
            events.append(self._question_event(message, language, reply, answer))
        reply.events.extend(events)
        reply.offer_person = plan.offers_person
        self._with_environment(reply, environment, read.environment, language)
        question = self._case_question() if plan.restates_case else message[:QUESTION_CHARS]
        self._remember(question, reply, answer, top_score=top)
        return reply

    def _with_environment(self, reply: Reply, environment: Environment, shown_now: Environment, language: str) -> None:
        """The environment and its mismatches on the reply (for the APIs), and the diagnosis in words above it when
        this message showed versions: the mismatch with its source and fix, "consistent", or the one command to run."""
        if environment.is_empty:
            return
        diagnosis = check(environment, table_for(getattr(self.engine.settings, "seeds_dir", None)))
        reply.environment = environment.as_dict()
        reply.mismatches = tuple(m.as_dict() for m in diagnosis.mismatches)
        said = "" if shown_now.is_empty else describe(diagnosis, language)
        if said:  # first, or right after a pasted log's detected error line (the reply leads with the user's error)
            reply.blocks = with_blocks(reply, EnvironmentBlock(said), after="detected").blocks

    def _not_helpful_event(self, case: Case, language: str) -> Event:
        return Event(
            "not_helpful",
            self._case_question(),
            language,
            tier="answer" if self._last_answered() else "",
            cited=tuple(case.shown[-3:]),
            signature=case.signature,
        )

    def _question_event(self, message: str, language: str, reply: Reply, answer: Answer) -> Event:
        return Event(
            "question",
            message[:QUESTION_CHARS],
            language,
            tier=reply.tier,
            confidence=answer.confidence,
            cited=tuple(s.hit.section.key for s in reply.shown),
            signature=answer.signature,
        )

    def _decide(self, answer: Answer, message: str, language: str, notes: list[str], *, allow_clarify: bool) -> Reply:
        limit = self._limit()
        if not answer.hits:
            return format_exhausted(language, notes, contact=self.contact)
        if not answer.answered:
            return format_no_match(
                answer,
                self._meta,
                self.base_url,
                limit=limit,
                language=language,
                notes=notes,
                contact=self.contact,
                written_in=self._written_in,
            )
        candidates = clarify_candidates(answer, message) if allow_clarify else []
        if candidates:
            return format_clarify(
                answer, candidates, self._meta, self.base_url, limit=limit, language=language, notes=notes
            )
        return format_answer(
            answer, self._meta, self.base_url, limit=limit, language=language, notes=notes, written_in=self._written_in
        )

    def _detail(
        self, key: str, answer: Answer, message: str, language: str, notes: list[str], kind: str = ""
    ) -> Reply | None:
        hit = next((h for h in answer.hits if h.section.key == key), None)
        section = self.engine.section(key)
        if hit is None and section is not None:
            hit = Hit(section=section, score=0.0, matched_terms=self.engine.terms_in(message, key))
        if hit is None:
            return None
        return focus_reply(hit, self._meta, self.base_url, language, message, notes, answer.confidence, kind)

    def _retry_reply(self, answer: Answer, language: str) -> Reply:
        """ "That didn't help" / "still OOM after …": the next sections for the case, never one already shown."""
        if not answer.hits:
            return format_exhausted(language, [text(language, "sorry")], contact=self.contact)
        if answer.answered:
            return format_answer(
                answer,
                self._meta,
                self.base_url,
                limit=self._limit(),
                language=language,
                notes=[text(language, "not_helpful")],
                ask_more=True,
                written_in=self._written_in,
            )
        reply = format_no_match(
            answer,
            self._meta,
            self.base_url,
            limit=self._limit(),
            language=language,
            contact=self.contact,
            written_in=self._written_in,
        )
        return with_blocks(reply, Note(text(language, "sorry"), "apology"))  # the apology first, then how sure

    def _chosen(self, answer: Answer) -> Reply:
        """A clicked suggestion or clarification option: that section, with the case's words that occur in it marked
        (the engine's answer to the turn: the case after it remembers the section as shown and best)."""
        last = self.last
        section = answer.hits[0].section
        language = answer.language
        reply = format_answer(
            answer,
            self._meta,
            self.base_url,
            limit=self._limit(),
            language=language,
            notes=[text(language, "chosen")],
            related=0,
            kind="section",
            written_in=self._written_in,
        )
        self._remember(
            last.question if last else section.heading,
            reply,
            answer,
            top_score=last.top_score if last else 0.0,
        )
        return reply

    # ------------------------------------------------------------ bookkeeping

    def _case_question(self) -> str:
        """The question that opened the current case (what "didn't help" is about)."""
        for turn in reversed(self.turns):
            if turn.move in ("new", "switch"):
                return turn.question
        return self.last.question if self.last else ""

    def _leads(self) -> tuple[str, ...]:
        """Every section an earlier turn of this conversation led with: what each reply showed first and what the
        engine's cases recorded (a restored state may hold only one of the two)."""
        leads = [key for turn in self.turns for key in (*turn.led, *turn.shown[:1], *turn.case_shown)]
        return tuple(dict.fromkeys(leads))[-MAX_LED:]

    def _last_answered(self) -> bool:
        return bool(self.last and self.last.answered)

    def _remember(self, question: str, reply: Reply, answer: Answer, top_score: float = 0.0) -> None:
        # The case remembers what each reply led with; a clarifying question leads with all its options.
        case = answer.case
        shown = [s.hit.section.key for s in reply.shown]
        best = next((s.hit.section.key for s in reply.shown if s.role == "answer"), "") or case.best
        self.turns.append(
            Turn(
                question=question[:QUESTION_CHARS],
                language=answer.language,
                search=case.search,
                kind=reply.kind,
                answered=reply.answered,
                shown=shown,
                signature=case.signature,
                best=best,
                top_score=top_score,
                problem=sorted(case.problem),
                setting=sorted(case.setting),
                case_shown=list(dict.fromkeys((*case.shown, *(shown if reply.kind == "clarify" else ())))),
                tried=list(case.tried),
                move=answer.move,
                environment=case.environment.as_dict(),
                led=list(dict.fromkeys((*self._leads(), *case.led, *shown[:1])))[-MAX_LED:],
            )
        )


def _replace(answer: Answer, **changes: object) -> Answer:
    from dataclasses import replace

    return replace(answer, **changes)
