"""A conversation with the assistant: follow-ups, "that didn't help", clarifying questions.

The chat UI and ``POST /api/ask`` both go through :meth:`Conversation.respond`;
the API is stateless, so it rebuilds a conversation by replaying the user turns
it is sent (:meth:`Conversation.replay`).

Rules, in order, for one user message:

1. empty -> a friendly prompt;
2. exactly a section key (a clicked suggestion or clarification option) -> that section;
3. "that didn't help" / "没用" after an answer -> the same search again, excluding
   every section already shown for it;
4. a short follow-up ("那多机呢？", "what about TensorFlow?") -> searched together
   with the previous question;
5. otherwise a new question (or pasted log).

An answer whose top sections are close in score but about different problems
becomes a clarifying question with the sections as clickable options (never
twice in a row); no confident match becomes an honest "no match" with the
nearest sections as options and a request for logs and versions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from bot.records import Answer, Event, Hit
from bot.engine.intents import classify
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
)
from bot.engine.retrieve import Context, Engine
from bot.kb.tokenize import detect_language

CLOSE_GAP = 0.3  # sections within this much of the best fused score (z-score units) are "close"
CLARIFY_MAX_CHARS = 40  # only short, vague questions get a clarifying question
MAX_REPLAY_TURNS = 8  # user turns replayed from an API history

_NOT_HELPFUL_EN = re.compile(
    r"\b(?:did ?n[o']?t|does ?n[o']?t|do ?n[o']?t|not|never|wo ?n[o']?t)\s+(?:really\s+)?"
    r"(?:help|helped|helping|work|worked|working|fix|fixed|solve|solved)\b|"
    r"\bno luck\b|\bnot helpful\b|\bunhelpful\b|\buseless\b|\bsame (?:error|problem|issue)\b|"
    r"\bstill\s+(?:fails|failing|broken|crashes|crashing|the same|happens|there)\b|"
    r"\b(?:something|anything) else\b|\bother (?:options?|solutions?|ideas?|fix(?:es)?|answers?|causes?)\b|"
    r"\bnext (?:one|option|answer|suggestion)\b|^\s*(?:nope|no|wrong|next)\W*$",
    re.IGNORECASE,
)
_FILLER_EN = set(
    ["that", "this", "it", "the", "a", "an", "still", "sorry", "thanks", "thank", "you", "ok", "okay", "please", "try", "another", "one", "answer", "suggestion", "solution", "so", "but", "and", "unfortunately", "really", "at", "all", "for", "me", "i", "tried", "any", "have", "has", "was", "is", "still"]
)
_NOT_HELPFUL_ZH = re.compile(
    r"没用|没有用|不管用|没啥用|不行|没解决|没有解决|无效|不对|不是这个|换一个|其他方法|其它方法|别的方法|"
    r"还有别的|还有其他|试过了|不起作用|没效果|没有效果|还是报错|还是一样|依然报错|仍然报错"
)
_FOLLOW_ZH_START = re.compile(r"^(?:那|那么|如果|要是|换成|改成|还有|另外|同样|用|在)")
_FOLLOW_ZH_END = re.compile(r"(?:呢|怎么办|怎么样|行吗|可以吗)\s*[？?!！。.]*$")
_FOLLOW_EN_START = re.compile(
    r"^(?:what about|how about|and|what if|same (?:for|with|on|in)|also|for|with|on|in|using|if i use|"
    r"instead|but (?:for|with|on|in)|then)\b",
    re.IGNORECASE,
)
_FOLLOW_EN_END = re.compile(r"\b(?:too|instead|then|as well)\s*[?.!]*$", re.IGNORECASE)
_CJK = re.compile(r"[\u4e00-\u9fff]")


@dataclass
class Turn:
    """One exchange, as much as later turns need of it."""

    question: str
    language: str
    search: str  # what was searched (the question, or it joined with the previous one)
    kind: str  # Reply.kind
    answered: bool
    shown: list[str] = field(default_factory=list)  # section keys shown in this turn
    excluded: list[str] = field(default_factory=list)  # keys shown earlier for the same search
    signature: str = ""
    best: str = ""  # key of the section given as the answer, if any
    top_score: float = 0.0  # fused score of the best section of the search, to judge later candidates
    subjects: tuple[str, ...] = ()  # what the conversation is about (framework, product, ...), for follow-ups


def is_not_helpful(message: str) -> bool:
    """True for short "that didn't help" messages, not for real questions that happen to say "doesn't work".

    >>> [is_not_helpful(m) for m in ("that didn't help", "没用", "还是不行", "nope")]
    [True, True, True, True]
    >>> [is_not_helpful(m) for m in ("NCCL doesn't work on two machines", "显存不足怎么办")]
    [False, False]
    """
    message = message.strip()
    if not message or len(message) > 80 or "\n" in message:
        return False
    if _CJK.search(message):
        if not _NOT_HELPFUL_ZH.search(message):
            return False
        rest = _NOT_HELPFUL_ZH.sub("", message)
        rest = re.sub(r"[\s\W]|还是|依然|仍然|好像|似乎|这个|那个|方法|办法|试了|一下|了|啊|呀|吧|的|也|都|还|再|给|我|换", "", rest)
        return len(rest) <= 2
    match = _NOT_HELPFUL_EN.search(message)
    if not match:
        return False
    rest = (message[: match.start()] + " " + message[match.end() :]).lower()
    words = [w for w in re.findall(r"[a-z0-9_.]+", rest) if w not in _FILLER_EN]
    return len(words) <= 1


def is_follow_up(message: str) -> bool:
    """A short message that only makes sense with the previous question.

    >>> [is_follow_up(m) for m in ("那多机呢？", "what about TensorFlow?", "and on Windows?")]
    [True, True, True]
    >>> [is_follow_up(m) for m in ("显存不足", "Loss becomes NaN after a few steps", "多卡训练报错怎么办")]
    [False, False, False]
    """
    message = message.strip()
    if not message or "\n" in message:
        return False
    if _CJK.search(message):
        if len(message) > 16:
            return False
        if _FOLLOW_ZH_START.search(message) and _FOLLOW_ZH_END.search(message):
            return True
        return bool(re.search(r"呢\s*[？?]*$", message)) or (
            bool(re.match(r"^(?:那|那么|那如果|换成|改成)", message)) and len(message) <= 10
        )
    words = message.split()
    if len(words) > 8:
        return False
    return bool(_FOLLOW_EN_START.search(message) or (_FOLLOW_EN_END.search(message) and len(words) <= 5))


def _clip(value: str, limit: int = 60) -> str:
    value = " ".join(value.split())
    return value if len(value) <= limit else value[: limit - 1] + "…"


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

    engine: Engine
    base_url: str = ""
    contact: Contact = field(default_factory=Contact)  # where to ask a person (BOT_CONTACT_URL)
    turns: list[Turn] = field(default_factory=list)

    @property
    def last(self) -> Turn | None:
        return self.turns[-1] if self.turns else None

    def _meta(self, key: str):
        return self.engine.meta(key)

    def _limit(self) -> int:
        return self.engine.settings.max_input_chars

    # ------------------------------------------------------------ entry points

    def respond(self, message: object) -> Reply:
        message = "" if message is None else message if isinstance(message, str) else str(message)
        stripped = message.strip()
        last = self.last
        if not stripped:
            language = last.language if last else ("zh" if detect_language(message) == "zh" else "en")
            reply = format_empty(language)
            return reply  # not a turn: nothing to follow up on
        if len(stripped) < 300 and self.engine.section(stripped) is not None:
            return self._chosen(stripped)
        if last is not None and last.search and last.kind != "empty" and is_not_helpful(stripped):
            return self._next_candidates(stripped, last)
        intent = classify(stripped)
        if intent is not None:  # thanks, greetings, "转人工": answered as such, not a search, nothing to log
            return format_intent(intent, detect_language(stripped), self.contact)
        if last is not None and last.search and is_follow_up(stripped):
            return self._ask(message, follow_up_of=last)
        return self._ask(message, follow_up_of=None)

    @classmethod
    def replay(cls, engine: Engine, history: Iterable[str], **kwargs) -> Conversation:
        """Rebuild a conversation from prior user messages (the API is stateless); their events are dropped."""
        conversation = cls(engine, **kwargs)
        for message in list(history)[-MAX_REPLAY_TURNS:]:
            conversation.respond(message)
        return conversation

    # ------------------------------------------------------------ cases

    def _ask(self, message: str, *, follow_up_of: Turn | None) -> Reply:
        notes: list[str] = []
        if follow_up_of is not None:
            # The previous answer is not given again as the answer; the follow-up's own words move the ranking.
            context = Context(previous=follow_up_of.search, subjects=frozenset(follow_up_of.subjects),
                              skip=frozenset([follow_up_of.best]) if follow_up_of.best else frozenset(), follow_up=True)
            answer = self.engine.ask(message, k=10, context=context)
            language = detect_language(message)
            search = f"{follow_up_of.search}\n{answer.search_text}"
            notes.append("_" + text(language, "followup", previous=escape_inline(_clip(follow_up_of.question))) + "_")
        else:
            answer = self.engine.ask(message, k=10)
            language = answer.language
            search = answer.search_text
        top = answer.hits[0].score if answer.hits else 0.0
        answer = _replace(answer, hits=answer.hits[: answer.worth_showing])
        allow_clarify = follow_up_of is None and (self.last is None or self.last.kind != "clarify")
        reply = self._decide(answer, message, language, notes, allow_clarify=allow_clarify)
        reply.events.append(Event(
            "question", message[:2_000], language, tier=reply.tier, confidence=answer.confidence,
            cited=tuple(s.hit.section.key for s in reply.shown), signature=answer.signature,
        ))
        self._remember(message, language, search, reply, [], answer.signature, top_score=top,
                       subjects=answer.subjects)
        return reply

    def _decide(self, answer: Answer, message: str, language: str, notes: list[str], *, allow_clarify: bool) -> Reply:
        limit = self._limit()
        if not answer.hits:
            return format_exhausted(language, notes, contact=self.contact)
        if not answer.answered:
            return format_no_match(answer, self._meta, self.base_url, limit=limit, language=language, notes=notes,
                                   contact=self.contact)
        candidates = clarify_candidates(answer, message) if allow_clarify else []
        if candidates:
            return format_clarify(answer, candidates, self._meta, self.base_url, limit=limit, language=language, notes=notes)
        return format_answer(answer, self._meta, self.base_url, limit=limit, language=language, notes=notes)

    def _next_candidates(self, message: str, last: Turn) -> Reply:
        """ "That didn't help": the next section that answers something, on the conversation's framework."""
        language = detect_language(message)
        event = Event("not_helpful", self._question_of(last), last.language, tier="answer" if last.answered else "",
                      cited=tuple(last.shown), signature=last.signature)
        excluded = list(dict.fromkeys([*last.excluded, *last.shown]))
        context = Context(previous=last.search, subjects=frozenset(last.subjects), skip=frozenset(excluded), retry=True)
        answer = self.engine.ask(last.search, k=10, context=context)
        answer = _replace(answer, hits=answer.hits[: answer.worth_showing], signature="", truncated_from=0)
        notes = [text(language, "not_helpful")]
        if not answer.hits:
            reply = format_exhausted(language, [text(language, "sorry")], contact=self.contact)
        elif answer.answered:
            reply = format_answer(answer, self._meta, self.base_url, limit=self._limit(), language=language,
                                  notes=notes, ask_more=True)
        else:
            reply = format_no_match(answer, self._meta, self.base_url, limit=self._limit(), language=language,
                                    notes=[text(language, "sorry")], contact=self.contact)
        self._remember(message, language, last.search, reply, excluded, last.signature, question=last.question,
                       top_score=last.top_score, subjects=last.subjects)
        reply.events.append(event)
        return reply

    def _chosen(self, key: str) -> Reply:
        """A clicked suggestion or clarification option: show that section, searched with the last question's words."""
        last = self.last
        section = self.engine.section(key)
        assert section is not None
        language = last.language if last else detect_language(section.heading)
        terms: tuple[str, ...] = ()
        if last is not None and last.search:
            probe = self.engine.ask(last.search, k=1)
            terms = probe.hits[0].matched_terms if probe.hits else ()
        hit = Hit(section=section, score=0.0, matched_terms=terms)
        answer = Answer(query=key, language=language, tier="answer", hits=(hit,))
        notes = [text(language, "chosen")]
        reply = format_answer(answer, self._meta, self.base_url, limit=self._limit(), language=language, notes=notes,
                              related=0, kind="section")
        search = last.search if last else section.heading
        excluded = list(dict.fromkeys([*(last.excluded if last else []), *(last.shown if last else [])]))
        excluded = [k for k in excluded if k != key]
        self._remember(section.heading, language, search, reply, excluded, "",
                       question=last.question if last else section.heading, top_score=last.top_score if last else 0.0,
                       subjects=last.subjects if last else ())
        return reply

    # ------------------------------------------------------------ bookkeeping

    def _question_of(self, turn: Turn) -> str:
        return turn.question

    def _remember(self, message: str, language: str, search: str, reply: Reply, excluded: Sequence[str],
                  signature: str, question: str | None = None, top_score: float = 0.0,
                  subjects: Sequence[str] = ()) -> None:
        best = next((s.hit.section.key for s in reply.shown if s.role == "answer"), "")
        self.turns.append(Turn(
            question=question if question is not None else message[:2_000],
            language=language,
            search=search or "",
            kind=reply.kind,
            answered=reply.answered,
            shown=[s.hit.section.key for s in reply.shown],
            excluded=list(excluded),
            signature=signature,
            best=best,
            top_score=top_score,
            subjects=tuple(subjects),
        ))


def _replace(answer: Answer, **changes: object) -> Answer:
    from dataclasses import replace

    return replace(answer, **changes)
