"""Question or pasted log -> distinct cited sections, best first, with a tier and its reason.

Ranking, per section: z(dense) + w_lex z(BM25) + w_subj (share of the question's subjects
the section covers), where

- dense is the best cosine between the query and any key of the section (body chunks,
  the heading, curated phrasings and English titles);
- BM25 runs over section text with a tokenizer that keeps error strings whole;
- subjects are what the question is specifically about (PyTorch, Jetson, PaddleOCR, …,
  :mod:`bot.engine.subjects`).

Confidence is a calibrated probability (:mod:`bot.engine.calibration`) from a few features:
the margin of the best match over a shipped set of off-topic questions
(``bot/data/background.txt``; e5 scores off-topic questions as high as real ones, so no
raw-cosine cut works), how much of the question the knowledge base and the best section
know, and which of its subjects no section or not the best one covers. The tier —
answer, tentative, none — follows from thresholds fitted by ``python -m bot calibrate``.
Every message is read once (:meth:`Engine.read` -> :class:`bot.engine.message.Message`) and
ranked and judged in its conversation's case (:class:`bot.records.Case`, :mod:`bot.engine.case`):
``Engine.ask`` is :meth:`Engine.evidence` (the turn's plan, :mod:`bot.engine.plan`, decided once
from the message, the case and the message's own scores, then the evidence that plan asks for),
:func:`rank` (a pure function of evidence, weights and the :class:`Scorer` s in :data:`SCORERS`)
and :func:`judge` (tier, probability, reason code, within the plan's bounds), each run once per
message; nothing after the plan changes its act — and ``python -m bot calibrate`` uses the same three. What never changes about a section is computed
when the index is built and stored with it (:class:`bot.engine.facts.SectionFacts`). The engine
returns reason codes and section keys; :mod:`bot.answer` writes the words.

Why one module of ~1,300 lines: it is the one ranking and judging step, and its parts share the engine's arrays
(keys, vectors, facts, BM25 ids) and the calibration's weights; reading (:mod:`bot.engine.message`), the plan
(:mod:`bot.engine.plan`), the features (:mod:`bot.engine.facts`) and fitting (``bot.engine.calibrate*``) already
live apart. Splitting :func:`rank` and :func:`judge` from :class:`Engine` would pass those arrays across modules.
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Protocol

import numpy as np

from bot.engine.acts import ActModel, acts_path
from bot.engine.acts import load_for as load_acts
from bot.engine.calibration import Calibration, Weights, calibration_path, load_for, sources_fingerprint
from bot.engine.case import (
    advance,
    asks,
    asks_briefly,
    is_follow_up,
    is_not_helpful,
    matching_lines,
    move_of,
    move_on_the_lead,
    points_back,
    says_failed,
    starts_new_topic,
)
from bot.engine.environment import read_environment
from bot.engine.facts import SectionFacts, build, facts_of
from bot.engine.intents import classify
from bot.engine.learned import Adapter, adapter_path
from bot.engine.learned import load_for as load_adapter
from bot.engine.message import Cues, Message
from bot.engine.plan import Plan, Reading, reply_of
from bot.engine.plan import plan as make_plan
from bot.engine.precedents import Precedents
from bot.engine.subjects import Lexicon
from bot.kb.embed import Embedder, make_embedder
from bot.kb.eras import newer_release
from bot.kb.index import IndexProblem, KnowledgeIndex, load_index, section_documents
from bot.kb.meta import SectionMeta
from bot.kb.signature import extract_signature, looks_like_log
from bot.kb.tokenize import detect_language, tokenize, warm_up
from bot.records import Answer, Case, Environment, Hit, Move, Reason, Section, Tier
from bot.settings import Settings

DENSE_CANDIDATES = 400  # nearest keys looked at per query
QUERY_CACHE_SIZE = 1024
LEXICAL_CHARS = 5_000  # the lexical search reads a search text's head this long
# Head of a cut input kept for what the user typed; the rest of the budget keeps the log's tail (the error).
HEAD_SHARE = 0.2
# Frameworks, operating systems and devices: a fix for another one does not carry over, so a
# question naming one the cited section does not cover is never a confident answer.
HARD_CATEGORIES = ("framework", "hardware")
MAJOR_CATEGORIES = ("framework", "hardware", "product")
# What a question asks about (the problem) as opposed to where it happens (the setting).
PROBLEM_CATEGORIES = ("error", "library", "feature", "task")
# Setting subjects that never make a framework-level fix wrong by themselves (Docker, Windows,
# conda, Kubernetes); a section that contradicts one (a Linux-only guide) is checked apart.
SETTING_ONLY_CATEGORIES = ("os", "tool", "scale")
# Sections shown beside the best one need this share of its fused score (fused scores are relative z-scores).
RELEVANT_SHARE = 0.3
CATEGORY_ORDER = ("framework", "hardware", "os", "product", "tool", "feature", "library", "error", "task", "scale")

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_QUANTITY = re.compile(r"^\d[\d.]*[a-z]{0,3}$")
_CJK_LINE = re.compile(r"[\u4e00-\u9fff]{2,}")


def query_key(text: str) -> bytes:
    """The query cache's key: 16 bytes whatever the text's length (a collision needs 2**64 questions).

    >>> len(query_key("显存不足" * 25_000)) == len(query_key("oom")) == 16
    True
    """
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


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


def read_message(message: object, *, limit: int, lexicon: Lexicon) -> Message:
    """Read ``message`` once (:class:`bot.engine.message.Message`): cleaned and cut to ``limit``, its language,
    cues, intent, whether it is a pasted log, what to search and the subjects it names."""
    sent = "" if message is None else message if isinstance(message, str) else str(message)
    text, truncated_from = sanitize(sent, limit)
    worded = _has_words(text)
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
        intent=classify(text.strip()),
        cues=Cues(
            not_helpful=not_helpful,
            follow_up=is_follow_up(text),
            new_topic=starts_new_topic(text),
            points_back=points_back(text) or (asks_briefly(text) and not subjects),
            failed=says_failed(text, not_helpful=not_helpful),
        ),
        environment=read_environment(text) if worded else Environment(),
    )


def _search_text(text: str, is_log: bool) -> tuple[str, str]:
    """(error signature or "", what to search): for a pasted log, its error lines and the user's own words."""
    if not is_log:
        return "", text.strip()
    sig = extract_signature(text)
    # The user's own words around a paste (usually Chinese) say what they ask.
    asked = [line.strip() for line in text.splitlines()[:50] if _CJK_LINE.search(line) and len(line) < 300]
    return sig.headline, ("\n".join([sig.search_text(), *asked[:3]]).strip() or text.strip())


def _zscore(values: np.ndarray) -> np.ndarray:
    spread = float(values.std()) if len(values) else 0.0
    if spread < 1e-9:
        return np.zeros_like(values, dtype=np.float32)
    return ((values - values.mean()) / spread).astype(np.float32)


@dataclass
class _Scores:
    """Per-section evidence for one search text."""

    query_vector: np.ndarray
    dense: np.ndarray
    lexical: np.ndarray
    matched: list[str]
    coverage: float
    best_by_language: dict[bool, float]
    tokens: list[str]
    # The same scores from each section's own text only (no curated phrasings): the shared rule every section is
    # ranked by when some documents have per-section evidence and others none (:func:`gate`); None: not needed.
    plain: _Scores | None = None

    @cached_property
    def z_dense(self) -> np.ndarray:
        """``dense`` z-scored, once: calibration ranks the same scores under every weight of its grid."""
        return _zscore(self.dense)

    @cached_property
    def z_lexical(self) -> np.ndarray:
        """``lexical`` z-scored, once (as :attr:`z_dense`)."""
        return _zscore(self.lexical)

    def fused(self, lexical_weight: float) -> np.ndarray:
        """:func:`fuse` of these scores, from the z-scores kept on them.

        >>> s = _Scores(np.zeros(2), np.array([0.9, 0.8, 0.7]), np.array([0.0, 0.0, 9.0]), [], 0.0, {}, [])
        >>> s.fused(0.5).round(2)
        array([ 0.87, -0.35, -0.52], dtype=float32)
        """
        return self.z_dense + lexical_weight * self.z_lexical


class Engine:
    """The retrieval engine over one loaded index: ranking, confidence and tier are decided here only."""

    def __init__(
        self, index: KnowledgeIndex, embedder: Embedder, settings: Settings, calibration: Calibration | None = None
    ) -> None:
        self.index = index
        self.embedder = embedder
        self.settings = settings
        fingerprint = sources_fingerprint(index.manifest.get("sources", {}))
        self.calibration = calibration or load_for(settings.index_dir, embedder.id, fingerprint)
        # The learned relevance fitted with this calibration (bot.engine.learned); None: rank and judge without it.
        self.adapter: Adapter | None = load_adapter(
            adapter_path(calibration_path(settings.index_dir, embedder.id)),
            embedder.id,
            fingerprint,
            expected="learned" in self.calibration.figures,  # fitted with one: its absence is news
            dim=embedder.dim,
        )
        # The learned turn-act model fitted for this embedder (bot.engine.acts); None: the plan's rule decides acts.
        self.acts: ActModel | None = load_acts(
            acts_path(calibration_path(settings.index_dir, embedder.id)), embedder.id, embedder.dim
        )
        self.lexicon = Lexicon.load()
        self.facts: tuple[SectionFacts, ...] = facts_of(index)  # computed by the build (bot.engine.facts)
        self._by_key = {s.key: n for n, s in enumerate(index.sections)}
        self._query_cache: OrderedDict[bytes, np.ndarray] = OrderedDict()  # query_key(text) -> vector
        self._cache_lock = threading.Lock()
        self._section_tokens: dict[int, frozenset[str]] = {}
        self.query_cache_size = QUERY_CACHE_SIZE  # calibration raises it: every labelled question embedded once
        # Documents treated as never labelled and never curated (calibration's leave-one-document-out): their
        # curated phrasings are ignored and they count as unknown to the per-section evidence (:meth:`known`).
        self.hidden: frozenset[str] = frozenset()
        self._known: dict[tuple[int, frozenset[str]], tuple[Precedents | None, np.ndarray]] = {}

    @classmethod
    def open(
        cls, settings: Settings, embedder: Embedder | None = None, *, auto_build: bool = False, progress: bool = False
    ) -> Engine:
        """Load the index; with ``auto_build`` a missing, stale or broken index is rebuilt instead of refused."""
        embedder = embedder or make_embedder(settings.embedder)
        # jieba's dictionary first: reading its 9 MB cache at once is a transient buffer, freed to the system
        # before the index is loaded rather than on top of a large index (the peak RSS the bench measures).
        warm_up()
        try:
            index = load_index(settings, embedder.id, embedder.dim)
        except IndexProblem:
            if not auto_build:
                raise
            build(settings, embedder, progress=progress)
            index = load_index(settings, embedder.id, embedder.dim)
        return cls(index, embedder, settings)

    # ------------------------------------------------------------ lookups

    @property
    def sections(self) -> list[Section]:
        return self.index.sections

    def section(self, key: str) -> Section | None:
        n = self._by_key.get(key)
        return None if n is None else self.index.sections[n]

    def meta(self, key: str) -> SectionMeta | None:
        return self.index.meta.get(key)

    def section_vectors(self) -> tuple[dict[str, int], np.ndarray] | None:
        """Per section, the normalised mean of its keys' vectors (stored by the build), or None when the index
        holds none."""
        if self.index.section_vectors is None:
            return None
        return self._by_key, self.index.section_vectors

    @cached_property
    def main_frameworks(self) -> list[frozenset[str]]:
        """Per section, the main framework(s) of its document (a Paddle FAQ that mentions TensorFlow once is Paddle)."""
        return [f.frameworks for f in self.facts]

    @cached_property
    def coverage(self) -> list[frozenset[str]]:
        """Per section, the subjects it covers: its own mentions plus its document's main frameworks."""
        return [f.covers for f in self.facts]

    @cached_property
    def covered_anywhere(self) -> frozenset[str]:
        return frozenset().union(*self.coverage) if self.coverage else frozenset()

    @cached_property
    def _cover_matrix(self) -> tuple[dict[str, int], np.ndarray]:
        names = sorted(self.covered_anywhere)
        row = {name: n for n, name in enumerate(names)}
        matrix = np.zeros((len(names), len(self.sections)), dtype=np.float32)
        for col, covered in enumerate(self.coverage):
            for name in covered:
                matrix[row[name], col] = 1.0
        return row, matrix

    @cached_property
    def answer_bearing(self) -> np.ndarray:
        """Sections that answer something on their own: FAQ entries, prose — not a bare code step."""
        return np.array([f.answers for f in self.facts], dtype=bool)

    def _frameworks_shown(self, case: Case) -> frozenset[str]:
        """The main framework(s) of the answer the case gave (its best section, else the first one shown)."""
        for key in (case.best, *case.shown):
            i = self._by_key.get(key) if key else None
            if i is not None and self.main_frameworks[i]:
                return self.main_frameworks[i]
        return frozenset()

    def known(self, precedents: Precedents | None | str = "serving") -> np.ndarray:
        """Per section: whether it has evidence of its own — labelled ``precedents`` that it answers (default: the
        calibration's; they also taught the adapter) or curated phrasings in ``seeds/meta`` — and its document is
        not :attr:`hidden`. A section nobody labelled or curated is ranked by the shared rule alone, and the others'
        evidence never pulls a question away from it (:func:`gate`) — also in a document whose other sections a
        company has labelled: a few labels for a page must not leave its other sections to the seeds' hundreds."""
        if isinstance(precedents, str):
            precedents = self.calibration.precedents
        stamp = (id(precedents), self.hidden)
        cached = self._known.get(stamp)
        if cached is not None and cached[0] is precedents:
            return cached[1]
        evidenced = {key for answers in (precedents.answers if precedents is not None else ()) for key in answers}
        evidenced |= set(self.index.meta)
        mask = np.array([s.key in evidenced and s.source not in self.hidden for s in self.sections], dtype=bool)
        while len(self._known) >= 64:  # calibration tries a few dozen precedent sets; each kept alive here
            self._known.pop(next(iter(self._known)))
        self._known[stamp] = (precedents, mask)
        return mask

    def frameworks(self, subjects: Iterable[str]) -> frozenset[str]:
        return frozenset(s for s in subjects if self.lexicon.category(s) == "framework")

    def subjects_of(self, text: str) -> frozenset[str]:
        return frozenset(self.lexicon.find(text))

    # ------------------------------------------------------------ asking

    def read(self, message: object) -> Message:
        """The message read once for this turn (cut to the input limit); every later stage reads this record."""
        return (
            message
            if isinstance(message, Message)
            else read_message(message, limit=self.settings.max_input_chars, lexicon=self.lexicon)
        )

    def evidence(
        self,
        message: object,
        case: Case | None = None,
        *,
        use_meta: bool = True,
        exclude: Iterable[str] = (),
        turn: bool = False,
    ) -> Evidence:
        """Everything the ranking and the judgement need about one message in its case, built once on its plan
        (:meth:`plan`): the plan is decided first, from the message, the case and the message's own scores, and
        the evidence follows it."""
        message = self.read(message)
        case = case or Case()
        own = self._own(message, use_meta)
        planned = self.plan(message, case, own=own, exclude=exclude, turn=turn)
        return self._evidence(message, case, planned, own, use_meta)

    def _own(self, message: Message, use_meta: bool = True) -> _Scores | None:
        return self._scores(message.search_text, use_meta, tokens=message.tokens) if message.has_words else None

    def weigh(
        self,
        message: Message,
        case: Case | None = None,
        *,
        use_meta: bool = True,
        exclude: Iterable[str] = (),
        k: int = 10,
    ) -> tuple[Evidence, Ranking]:
        """The message's evidence in its case (built once on its plan) and its ranking (computed once)."""
        found = self.evidence(message, case, use_meta=use_meta, exclude=exclude)
        return found, rank(found, self.calibration.weights, k=k)

    def reading(self, message: Message, case: Case, own: _Scores | None) -> Reading:
        """What the plan needs to know of the index and the lexicon about this message, read cheaply: the word
        lists' move, the subjects, and the message's own scores summarised (its margin over off-topic questions,
        the section its own words rank first, its e5 vector against the shown section's and the others')."""
        named = self._main_subjects(message.subjects)
        problems = frozenset(s for s in named if self.lexicon.category(s) in PROBLEM_CATEGORIES)
        move = move_of(message.text, case, problems=problems, is_log=message.is_log, cues=message.cues)
        setting = self._carry_setting(case.setting, named - problems) if case.is_open else named - problems
        # What the documents do not cover: another framework or device (a hard subject), or a product asked about
        # with no problem of its own (a PaddleOCR user's out-of-memory is answered by the framework's section;
        # "Paddle Serving deployment, which card?" may not be: the plan weighs it with where the words point).
        uncovered = [s for s in named if s not in self.covered_anywhere]
        foreign = frozenset(s for s in uncovered if self.lexicon.category(s) in HARD_CATEGORIES)
        product = frozenset(
            s
            for s in uncovered
            if self.lexicon.category(s) == "product"
            and not problems
            and (asks(message.text) or message.cues.points_back)
        )
        reading = Reading(
            rule_move=move,
            named=named,
            problems=problems,
            setting=setting,
            frameworks_named=self.frameworks(named),
            frameworks_carried=self.frameworks(setting),
            frameworks_shown=self._frameworks_shown(case),
            foreign=foreign,
            foreign_product=product,
            own_tokens=len(own.tokens) if own is not None else 0,
            asks_more=move_on_the_lead(message.text) == "follow_up",
        )
        if own is None or not case.is_open:
            return reading
        weights = self.calibration.weights
        words = own.fused(weights.lexical) + weights.subject * self.subject_share(named)
        lead = self.sections[int(np.argmax(words))].key if len(words) else ""
        # And among the sections a follow-up would be ranked in (its framework, its new setting's sections).
        asked = np.ones(len(words), dtype=bool)
        frameworks = self.frameworks(named)
        if frameworks:
            asked &= np.array([not main or bool(main & frameworks) for main in self.main_frameworks], dtype=bool)
        changed = (named - problems) - case.setting
        if changed:
            covering = asked & np.array([changed <= covered for covered in self.coverage], dtype=bool)
            asked = covering if covering.any() else asked
        # (scored as a follow-up is: with the share of the case's subjects, not only the message's)
        follow_words = words + weights.subject * (
            self.subject_share(case.problem | problems | setting) - self.subject_share(named)
        )
        lead_asked = self.sections[int(np.argmax(np.where(asked, follow_words, -np.inf)))].key if asked.any() else ""
        shown_similarity = other_similarity = 0.0
        stored = self.section_vectors()
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
            margin=self._margin(own),
            own_lead=lead,
            own_lead_asked=lead_asked,
            shown_similarity=shown_similarity,
            other_similarity=other_similarity,
        )

    def plan(
        self,
        message: object,
        case: Case | None = None,
        *,
        own: _Scores | None = None,
        exclude: Iterable[str] = (),
        turn: bool = False,
    ) -> Plan:
        """The turn's plan (:mod:`bot.engine.plan`), decided once before any ranking; ``own``: the message's own
        scores when computed already (the evidence reuses them); ``turn``: a conversation's turn, whose reply may be
        no search (then nothing is scored)."""
        message = self.read(message)
        case = case or Case()
        early = self._before_search(message, case) if turn else None
        if early is not None:
            return early
        if own is None and message.has_words:
            own = self._scores(message.search_text, tokens=message.tokens)
        return make_plan(
            message,
            case,
            self.reading(message, case, own),
            turn=turn,
            exclude=tuple(exclude),
            title=_title(message.text),
            model=self.acts,
            vector=own.query_vector if own is not None else None,
        )

    def _before_search(self, message: Message, case: Case) -> Plan | None:
        """The plan of a turn whose reply is no search (:func:`bot.engine.plan.reply_of`), else None: nothing scored."""
        stripped = message.stripped
        chosen = self.section(stripped) if len(stripped) < 300 else None
        if reply_of(message, case, section=chosen is not None) is None:
            return None
        language = detect_language(chosen.heading) if chosen is not None else ""
        return make_plan(message, case, turn=True, section=chosen is not None, section_language=language)

    def _unsearched(self, message: Message, case: Case, plan: Plan) -> Answer:
        """The answer to a turn the plan does not search: nothing, or the clicked section with the case's words that
        occur in it (no search is run for them), the case after it remembering it as shown and best."""
        answer = Answer(query=message.text, language=plan.language, tier="none", hits=(), move=plan.move, act=plan.act)
        if plan.reply != "section":
            return replace(answer, case=case, plan=plan)
        key = message.stripped
        section = self.section(key)
        assert section is not None
        terms = self.terms_in(case.search, key) if case.search else ()
        after = advance(
            case,
            move=plan.move,
            search=case.search or section.heading,
            problem=case.problem,
            setting=case.setting,
            shown=(key,),
            best=key,
            language=plan.language,
            signature=case.signature,
            message=key,
        )
        hit = Hit(section=section, score=0.0, matched_terms=terms)
        return replace(answer, query=key, tier="answer", hits=(hit,), case=after, plan=plan)

    def _evidence(
        self, message: Message, case: Case, plan: Plan, own: _Scores | None, use_meta: bool = True
    ) -> Evidence:
        """The evidence the plan asks for: the joined and title scores it names, the sections it allows."""
        text, truncated_from, language = message.text, message.truncated_from, plan.language
        n = len(self.sections)
        if not message.has_words or own is None:
            return Evidence(
                text=text,
                language=language,
                truncated_from=truncated_from,
                case=case,
                move=plan.move,
                plan=plan,
                empty=True,
                allowed=np.zeros(n, dtype=bool),
                subject_share=np.zeros(n, dtype=np.float32),
            )
        title = self._scores(plan.title, use_meta) if plan.title else None
        # The message first: the embedder reads only the head of a long text (a first post with its log). A message
        # long enough that neither the embedder nor the lexical search reaches the case's words after it scores the
        # same joined as alone: its own scores are reused, not computed again (exactly equal, half the cost).
        joined = None
        if plan.joined:
            joined = own if self._reads_only_head(plan.search) else self._scores(plan.joined, use_meta)
        allowed = np.ones(n, dtype=bool)
        for key in plan.exclude:
            i = self._by_key.get(key)
            if i is not None:
                allowed[i] = False
        if plan.answer_bearing:
            allowed &= self.answer_bearing
        if plan.frameworks:  # after a TensorFlow answer, or asked "what about PaddlePaddle?": that framework's only
            allowed &= np.array([not main or bool(main & plan.frameworks) for main in self.main_frameworks], dtype=bool)
        preferred = None
        if plan.prefer:
            # A TensorFlow question is answered from TensorFlow material when there is any; the rest still follows
            # (ranked after it), so the list stays complete.
            mask = np.array([bool(main & plan.prefer) for main in self.main_frameworks], dtype=bool) & allowed
            preferred = mask if mask.any() else None
        if plan.cover:  # "那多机呢？" asks about the new setting: sections that cover it, when any does
            covering = allowed & np.array([plan.cover <= covered for covered in self.coverage], dtype=bool)
            if covering.any():
                allowed = covering
        not_lead = None
        if plan.not_lead:
            not_lead = np.zeros(n, dtype=bool)
            not_lead[[self._by_key[key] for key in plan.not_lead if key in self._by_key]] = True
        found = Evidence(
            text=text,
            language=language,
            truncated_from=truncated_from,
            case=case,
            signature=message.signature,
            search_text=message.search_text,
            move=plan.move,
            plan=plan,
            named=plan.named,
            problem=plan.problem,
            setting=plan.setting,
            is_log=message.is_log,
            own=own,
            title=title,
            joined=joined,
            own_weight=plan.own_weight,
            allowed=allowed,
            preferred=preferred,
            not_lead=not_lead,
            subject_share=self.subject_share(plan.problem | plan.setting if plan.move != "new" else plan.named),
            known=self.known(),
        )
        return self.with_learned(self.with_precedents(found, self.calibration.precedents), self.adapter)

    def with_precedents(
        self, evidence: Evidence, precedents: Precedents | None, among: np.ndarray | None = None
    ) -> Evidence:
        """A new question's evidence with the vote of the labelled precedents nearest to it (``among``: those
        allowed to vote; calibration leaves out the question's own thread). A follow-up's words alone ("那多机呢？")
        are not a question the precedents were asked: it gets none."""
        if precedents is None or not len(precedents) or evidence.own is None or evidence.move not in ("new", "switch"):
            if evidence.precedent is None and evidence.precedent_lean == 0.0:
                return evidence  # nothing to take away: no copy on every follow-up
            return replace(evidence, precedent=None, precedent_lean=0.0)
        vote = precedents.vote(evidence.own.query_vector, self._by_key, among)
        # The documents these precedents answered are the labelled ones (the evidence's may be another set's).
        known = self.known(precedents) if evidence.known is not None else None
        return replace(evidence, precedent=vote.sections, precedent_lean=vote.lean, known=known)

    def ask(
        self,
        text: object,
        *,
        k: int = 10,
        case: Case | None = None,
        exclude: Iterable[str] = (),
        turn: bool = False,
    ) -> Answer:
        """Answer one message in its case: up to ``k`` distinct sections, a tier and its reason, and the turn's plan.

        ``ask`` is :meth:`evidence` (on the turn's plan), :func:`rank` and :func:`judge`, each once and nothing
        else (calibration uses the same three). ``turn``: a conversation's turn, answered as its plan says (an empty
        message, a clicked section, a thanks … are not searched); a question asked alone is always searched. The
        evaluation's baselines take their own path (:func:`bot.engine.evaluate.baseline_ask`): serving has no switch
        for them.
        """
        message = self.read(text)
        case = case or Case()
        early = self._before_search(message, case) if turn else None
        if early is not None:
            return self._unsearched(message, case, early)
        evidence = self.evidence(message, case, exclude=exclude, turn=turn)
        ranking = rank(evidence, self.calibration.weights, k=k)
        return self.answer(evidence, ranking, judge(self, evidence, ranking, self.calibration))

    def answer(self, evidence: Evidence, ranking: Ranking, verdict: Verdict) -> Answer:
        """The engine's result as a record: hits, tier, reason, and the case after this turn."""
        subjects = tuple(sorted(evidence.problem | evidence.setting))
        if not ranking.order:
            code = "empty" if evidence.empty else ("retry_none" if evidence.move == "retry" else "nothing")
            after = self._advance(evidence, ())
            return Answer(
                query=evidence.text,
                language=evidence.language,
                tier="none",
                hits=(),
                signature=evidence.signature,
                search_text=evidence.search_text,
                truncated_from=evidence.truncated_from,
                reason=Reason(code),
                subjects=subjects,
                move=evidence.move,
                act=evidence.plan.act,
                case=after,
                plan=evidence.plan,
            )
        scores = evidence.own
        hits = tuple(
            Hit(
                section=self.sections[n],
                score=float(ranking.scores[n]),
                dense=float(scores.dense[n]),
                lexical=float(scores.lexical[n]),
                matched_terms=tuple(self._terms_in(scores.matched, n)),
            )
            for n in ranking.order
        )
        best = hits[0].score
        worth = 1 + sum(1 for h in hits[1:] if best > 0 and h.score >= RELEVANT_SHARE * best)
        shown = (hits[0].section.key,)  # what the reply leads with; related sections may be the next answer
        after = self._advance(evidence, shown, best=hits[0].section.key if verdict.tier == "answer" else "")
        again = shown[0] in evidence.case.shown  # never after a failure word: what was shown is left out then
        focus = matching_lines(hits[0].section.text, hits[0].matched_terms) if again else ()
        return Answer(
            query=evidence.text,
            language=evidence.language,
            tier=verdict.tier,
            hits=hits,
            signature=evidence.signature,
            search_text=evidence.search_text,
            truncated_from=evidence.truncated_from,
            confidence=verdict.probability,
            worth_showing=worth,
            reason=verdict.reason,
            subjects=subjects,
            uncovered=verdict.uncovered,
            move=evidence.move,
            act=evidence.plan.act,
            focus_key=evidence.plan.focus,
            case=after,
            plan=evidence.plan,
            focus=focus,
        )

    def _advance(self, evidence: Evidence, shown: tuple[str, ...], best: str = "") -> Case:
        case = evidence.case
        search = evidence.search_text
        if evidence.move in ("follow_up", "retry") and case.is_open:
            own = "" if evidence.own_weight == 0 else evidence.search_text
            search = f"{case.search}\n{own}".strip()
        return advance(
            case,
            move=evidence.move,
            search=search,
            problem=evidence.problem,
            setting=evidence.setting,
            shown=shown,
            best=best,
            language=evidence.language,
            signature=evidence.signature,
            message=evidence.text,
        )

    def _carry_setting(self, old: frozenset[str], named: frozenset[str]) -> frozenset[str]:
        """The case's setting after a follow-up that names ``named``: a newly named framework, product,
        OS or device replaces the old one of its kind (and products built on a replaced framework)."""
        replaced = {self.lexicon.category(s) for s in named}
        dropped = {s for s in old if self.lexicon.category(s) in replaced}
        gone = self.frameworks(dropped) - named
        kept = {
            s
            for s in old - dropped
            if not (self.lexicon.category(s) == "product" and set(self.lexicon.subjects[s].implies) & gone)
        }
        return frozenset(kept) | named

    # ------------------------------------------------------------ evidence

    def _scores(self, search_text: str, use_meta: bool = True, tokens: Sequence[str] | None = None) -> _Scores:
        query_vector = self._embed_query(search_text)
        dense, best_by_language = self._dense_scores(query_vector, use_meta)
        lexical, matched, coverage, tokens = self._lexical_scores(search_text, use_meta, tokens)
        plain = None
        if use_meta and not self.known().all() and self.index.meta:
            # Some documents have no curated phrasings: the shared rule reads every section's own text only.
            plain_dense, _ = self._dense_scores(query_vector, use_meta=False)
            plain_lexical, _, _, _ = self._lexical_scores(search_text, False, tokens)
            plain = _Scores(query_vector, plain_dense, plain_lexical, matched, coverage, best_by_language, tokens)
        return _Scores(query_vector, dense, lexical, matched, coverage, best_by_language, tokens, plain)

    def subject_share(self, subjects: Iterable[str]) -> np.ndarray:
        row, matrix = self._cover_matrix
        rows = [row[s] for s in subjects if s in row]
        n = len(set(subjects))
        if not rows or not n:
            return np.zeros(len(self.sections), dtype=np.float32)
        return matrix[rows].sum(axis=0) / n

    def features(self, evidence: Evidence, scores: _Scores, top: int) -> dict[str, float]:
        """The confidence model's inputs for one set of scores (see :data:`bot.engine.calibration.FEATURES`)."""
        covered = self.coverage[top] if self.coverage else frozenset()
        asked = evidence.named if evidence.move == "new" else evidence.problem | evidence.setting
        built_on = [s for s in asked if self._built_on(s, covered)]
        subjects = self.effective_subjects(evidence, top) - frozenset(built_on)
        foreign = [s for s in subjects if s not in self.covered_anywhere]
        major = [s for s in foreign if self.lexicon.category(s) in MAJOR_CATEGORIES]
        problem = (
            evidence.problem
            if evidence.move != "new"
            else frozenset(s for s in evidence.named if self.lexicon.category(s) in PROBLEM_CATEGORIES)
        )
        elsewhere = [s for s in subjects if s in self.covered_anywhere and s not in covered]
        specific = [t for t in scores.tokens if len(t) > 1 and not _QUANTITY.match(t)]
        section_tokens = self._tokens_of(top)
        overlap = sum(1 for t in specific if t in section_tokens) / len(specific) if specific else 0.0
        return {
            "margin": self._margin(scores),
            "coverage": scores.coverage,
            "top_overlap": overlap,
            "foreign_major": float(min(len(major), 3)),
            "foreign_minor": float(min(len(foreign) - len(major), 3)),
            "uncovered_top": float(min(len(elsewhere), 3)),
            "dense_top": float(scores.dense[top]),
            "is_log": 1.0 if evidence.is_log else 0.0,
            "problem_match": (1.0 if problem & covered else -1.0) if problem else 0.0,
            "product_setting": float(min(len(built_on), 3)),
            "precedent_lean": evidence.precedent_lean,
            "precedent_top": float(evidence.precedent[top]) if evidence.precedent is not None else 0.0,
            # NaN without an adapter: the confidence model counts it as its mean (neither for nor against).
            "learned_top": float(evidence.learned[top]) - evidence.learned_none
            if evidence.learned is not None
            else math.nan,
        }

    def with_learned(self, evidence: Evidence, adapter: Adapter | None) -> Evidence:
        """A new question's evidence with the adapter's learned score per section and its "none" score (calibration
        passes an adapter fitted without the question's gathering batch). Like the precedents, a follow-up's own
        words are not a question the adapter learned from: it gets none."""
        if adapter is None or evidence.own is None or evidence.move not in ("new", "switch"):
            return evidence if evidence.learned is None else replace(evidence, learned=None, learned_none=0.0)
        vectors, owners = self._key_vectors
        relevance = adapter.relevance(evidence.own.query_vector, vectors, owners, len(self.sections))
        return replace(evidence, learned=relevance.sections, learned_none=relevance.none)

    @cached_property
    def _key_vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """Every retrieval key's vector and its section, as the dense index holds them (once per loaded index)."""
        dense = self.index.dense
        return dense.reconstruct_n(0, dense.ntotal), self.index.key_sections

    def _built_on(self, subject: str, covered: frozenset[str]) -> bool:
        """A product built on a framework the section covers (PaddleDetection on a Paddle FAQ)."""
        implies = self.lexicon.subjects[subject].implies if subject in self.lexicon.subjects else ()
        return self.lexicon.category(subject) == "product" and bool(implies) and set(implies) <= covered

    def follow_features(self, evidence: Evidence, top: int, first: Sequence[dict[str, float]] = ()) -> dict[str, float]:
        """The follow-up model's inputs: the message's own evidence, the case's, and how the turn moved it.

        ``first``: :meth:`features` of the own and joined scores when the caller has them already.
        """
        own = first[0] if first else self.features(evidence, evidence.own, top)
        joined = (
            (first[1] if len(first) > 1 else self.features(evidence, evidence.joined, top))
            if evidence.joined is not None
            else own
        )
        key = self.sections[top].key
        return {
            "own_margin": own["margin"] if evidence.own_weight else -0.05,
            "own_overlap": own["top_overlap"] if evidence.own_weight else 0.0,
            "joined_margin": joined["margin"],
            "foreign": own["foreign_major"] + own["foreign_minor"],
            "uncovered_top": joined["uncovered_top"],
            "retry": 1.0 if evidence.move == "retry" else 0.0,
            "shown_before": 1.0 if key in evidence.case.shown else 0.0,
            "own_words": float(min(len([t for t in evidence.own.tokens if len(t) > 1]), 30)) / 30.0,
        }

    def effective_subjects(self, evidence: Evidence, top: int) -> frozenset[str]:
        """The subjects that count against the section at ``top``.

        A framework-level section answers a product user's framework-level problem: when the
        question's problem (OOM, NaN, NCCL, hang …) is covered by the section, the products built
        on a framework the section covers, and the OS or tool it happens on, are the setting, not
        what is asked. Without a covered problem (PaddleOCR accuracy, TensorRT shapes) they count.
        """
        subjects = evidence.named if evidence.move == "new" else evidence.problem | evidence.setting
        covered = self.coverage[top] if self.coverage else frozenset()
        if not (evidence.problem & covered):
            return subjects
        return frozenset(
            s
            for s in subjects
            if not self._built_on(s, covered) and self.lexicon.category(s) not in SETTING_ONLY_CATEGORIES
        )

    def named_through_children(self, subjects: Iterable[str]) -> list[str]:
        """Drop implied parents: PaddleOCR stands for PaddlePaddle too, so name PaddleOCR only."""
        subjects = list(subjects)
        implied = {i for s in subjects for i in self.lexicon.subjects[s].implies} if subjects else set()
        return [s for s in subjects if s not in implied]

    def hard_uncovered(self, uncovered: Iterable[str]) -> bool:
        return any(self.lexicon.category(s) in HARD_CATEGORIES for s in uncovered)

    def uncovered(self, evidence: Evidence, top: int) -> list[str]:
        covered = self.coverage[top] if self.coverage else frozenset()
        missing = [s for s in self.effective_subjects(evidence, top) if s not in covered]
        order = {c: n for n, c in enumerate(CATEGORY_ORDER)}
        return sorted(missing, key=lambda s: (order.get(self.lexicon.category(s), 99), s))

    def blockers(self, evidence: Evidence, top: int) -> tuple[list[str], list[str], tuple[str, str]]:
        """What keeps the section at ``top`` from being a confident answer, whatever the probability:
        subjects it does not cover, operating systems its document contradicts, a newer release."""
        return self.uncovered(evidence, top), self.conflicts(evidence, top), self.old_release_named(evidence, top)

    def blocked(self, evidence: Evidence, top: int) -> bool:
        uncovered, conflicts, (newer, _) = self.blockers(evidence, top)
        return self.hard_uncovered(uncovered) or bool(conflicts) or bool(newer)

    def conflicts(self, evidence: Evidence, top: int) -> list[str]:
        """Operating systems of the question that the section's document contradicts (Windows vs a Linux-only guide)."""
        section_os = self.facts[top].os
        if not section_os:
            return []
        asked = [s for s in evidence.setting | evidence.named if self.lexicon.category(s) == "os"]
        return sorted(s for s in asked if s not in section_os)

    def old_release_named(self, evidence: Evidence, top: int) -> tuple[str, str]:
        """(newer release the user named, old release the section was written for), or ("", "")."""
        asked = "\n".join((evidence.case.search if evidence.move != "new" else "", evidence.text))
        for era in self.facts[top].eras:
            newer = newer_release(asked, era)
            if newer:
                return newer, era
        return "", ""

    def _main_subjects(self, subjects: Iterable[str]) -> frozenset[str]:
        """Drop frameworks named in passing: "之前用torch时…" in a Paddle question is not about PyTorch.

        When the question names a framework the knowledge base covers, the other frameworks it
        names are comparisons or history, not what it asks about.
        """
        subjects = frozenset(subjects)
        named = self.frameworks(subjects)
        if named & self.covered_anywhere:
            subjects = subjects - (named - self.covered_anywhere)
        return subjects

    def _tokens_of(self, n: int) -> frozenset[str]:
        tokens = self._section_tokens.get(n)
        if tokens is None:
            section = self.sections[n]
            tokens = frozenset(tokenize(section_documents(section, self.meta(section.key))[:20_000]))
            self._section_tokens[n] = tokens
        return tokens

    def terms_in(self, search: str, key: str) -> tuple[str, ...]:
        """The words of ``search`` the knowledge base knows that occur in section ``key`` (what to highlight
        there), without ranking anything."""
        n = self._by_key.get(key)
        if n is None:
            return ()
        vocab = self.index.bm25.vocab_dict
        known = [t for t in dict.fromkeys(tokenize(search[:5_000])) if t in vocab]
        return tuple(self._terms_in(known, n))

    def _terms_in(self, matched: list[str], n: int) -> list[str]:
        """The matched query terms that occur in this section (highlighting is per section)."""
        tokens = self._tokens_of(n)
        return [t for t in matched if t in tokens][:12]

    def _margin(self, scores: _Scores) -> float:
        """Best KB match minus the best off-topic question *in that match's language*.

        Matching across languages costs e5 about 0.06 of cosine, so an English question on
        Chinese-only documents would otherwise lose to any English off-topic question.
        """
        background = self.index.background
        if not scores.best_by_language or not len(background):
            return -1.0
        match_is_zh = max(scores.best_by_language, key=scores.best_by_language.get)
        same_language = background[self.index.background_is_zh == match_is_zh]
        if not len(same_language):
            same_language = background
        return scores.best_by_language[match_is_zh] - float((same_language @ scores.query_vector).max())

    def _reads_only_head(self, search_text: str) -> bool:
        """True when the embedder and the lexical search both read only a head of ``search_text``: anything joined
        after it changes neither its vector nor its tokens."""
        cut = getattr(self.embedder, "max_chars", 0)
        return bool(cut) and len(search_text) >= max(cut, LEXICAL_CHARS)

    def _what_the_embedder_reads(self, text: str) -> str:
        """The head of ``text`` the embedder reads (its ``max_chars``, when it cuts): the query cache's key and input."""
        cut = getattr(self.embedder, "max_chars", 0)
        return text[:cut] if cut else text

    def cache_key(self, search_text: str) -> bytes:
        """The key a search text's vector is remembered under (:meth:`remember`, :meth:`remembered`)."""
        return query_key(self._what_the_embedder_reads(search_text))

    def prefetch(self, texts: Iterable[str], *, batch: int = 32, progress: Callable[[int], None] | None = None) -> int:
        """Embed the search texts not yet remembered, ``batch`` at a time, and remember them (calibration reads
        thousands of labelled messages: one call per message costs several times as much). Returns how many were
        embedded."""
        missing: dict[bytes, str] = {}
        with self._cache_lock:
            for text in texts:
                text = self._what_the_embedder_reads(text)  # keyed as _embed_query keys it
                key = query_key(text)
                if key not in self._query_cache:
                    missing[key] = text
        items = list(missing.items())
        for start in range(0, len(items), batch):
            chunk = items[start : start + batch]
            vectors = self.embedder.embed([text for _, text in chunk], role="query")
            self.remember({key: vector for (key, _), vector in zip(chunk, vectors)})
            if progress is not None:
                progress(len(chunk))
        return len(items)

    def remember(self, vectors: dict[bytes, np.ndarray]) -> None:
        """Query vectors by :func:`query_key` (a calibration's stored ones), most recent last."""
        with self._cache_lock:
            for key, vector in vectors.items():
                self._query_cache[key] = np.asarray(vector, dtype=np.float32)
            while len(self._query_cache) > self.query_cache_size:
                self._query_cache.popitem(last=False)

    def remembered(self) -> dict[bytes, np.ndarray]:
        with self._cache_lock:
            return dict(self._query_cache)

    def _embed_query(self, search_text: str) -> np.ndarray:
        """Query vector, remembered for repeated questions (clicked examples, suggestions, retries).

        Keyed by a digest of the text, not the text: a question may be 100,000 characters (4 bytes each in
        CPython once it holds an emoji), and 1,024 of them as keys held about 440 MB. Keyed by what the embedder
        reads (its ``max_chars``, when it cuts): a follow-up joined with its case's words after a long message is
        the same head, the same vector.
        """
        search_text = self._what_the_embedder_reads(search_text)
        key = query_key(search_text)
        with self._cache_lock:
            cached = self._query_cache.get(key)
            if cached is not None:
                self._query_cache.move_to_end(key)
                return cached
        vector = self.embedder.embed([search_text], role="query")[0]
        with self._cache_lock:
            self._query_cache[key] = vector
            while len(self._query_cache) > self.query_cache_size:
                self._query_cache.popitem(last=False)
        return vector

    def _dense_scores(self, query_vector: np.ndarray, use_meta: bool = True) -> tuple[np.ndarray, dict[bool, float]]:
        """Per section, the best cosine between the query and any of its keys;
        and the best cosine among Chinese keys (True) and among the other keys (False)."""
        n_sections = len(self.index.sections)
        scores = np.full(n_sections, -1.0, dtype=np.float32)
        if n_sections == 0 or self.index.dense.ntotal == 0:
            return scores, {}
        top = min(DENSE_CANDIDATES, self.index.dense.ntotal)
        sims, rows = self.index.dense.search(query_vector[None, :], top)
        owners = self.index.key_sections
        key_is_zh = self.index.key_is_zh
        is_meta = None if use_meta else self.index.key_is_meta
        if is_meta is None and self.hidden:  # a held-out document's curated phrasings are not there
            is_meta = self.index.key_is_meta & self._hidden_sections[owners]
        best_by_language: dict[bool, float] = {}
        for sim, row in zip(sims[0], rows[0]):
            if row < 0 or (is_meta is not None and is_meta[row]):
                continue
            owner = owners[row]
            if sim > scores[owner]:
                scores[owner] = sim
            is_zh = bool(key_is_zh[row])
            if sim > best_by_language.get(is_zh, -2.0):
                best_by_language[is_zh] = float(sim)
        # HNSW may return fewer rows than asked (row -1, score -3.4e38): the floor is the lowest real score.
        found = rows[0] >= 0
        floor = float(sims[0][found].min()) if found.any() else 0.0
        scores[scores < -0.5] = floor  # sections with no key among the candidates
        return scores, best_by_language

    def _lexical_scores(
        self,
        search_text: str,
        use_meta: bool = True,
        tokens: Sequence[str] | None = None,
    ) -> tuple[np.ndarray, list[str], float, list[str]]:
        """BM25 per section, the query tokens the KB knows, their share of all query tokens, and all tokens
        (``tokens``: the search text's tokens when the message was read already)."""
        tokens = list(tokens) if tokens is not None else list(dict.fromkeys(tokenize(search_text[:LEXICAL_CHARS])))
        bm25 = self.index.bm25 if use_meta else self._plain_bm25
        vocab = bm25.vocab_dict
        known = [t for t in tokens if t in vocab]
        # Sizes and counts ("1024", "1.5gb") say nothing about the topic.
        worded = [t for t in tokens if not _QUANTITY.match(t)]
        coverage = sum(1 for t in worded if t in vocab) / len(worded) if worded else 0.0
        if not known:
            return np.zeros(len(self.index.sections), dtype=np.float32), [], coverage, tokens
        scores = np.asarray(bm25.get_scores(known), dtype=np.float32)
        if use_meta and self.hidden:  # a held-out document's sections scored on their own text
            hidden = self._hidden_sections
            plain_known = [t for t in tokens if t in self._plain_bm25.vocab_dict]
            plain = self._plain_bm25.get_scores(plain_known) if plain_known else np.zeros(len(scores))
            scores = np.where(hidden, np.asarray(plain, dtype=np.float32), scores)
        return scores, known, coverage, tokens

    @property
    def _hidden_sections(self) -> np.ndarray:
        return np.array([s.source in self.hidden for s in self.sections], dtype=bool)

    @cached_property
    def _plain_bm25(self):
        """BM25 without curated metadata, built on demand for the evaluation's "no meta" figures."""
        import bm25s

        bm25 = bm25s.BM25()
        corpus = [tokenize(section_documents(s, None)) or ["\u2205"] for s in self.sections]
        bm25.index(corpus or [["\u2205"]], show_progress=False)
        return bm25


@dataclass(frozen=True, eq=False)
class Evidence:
    """What the engine knows about one message in its case, before any ranking choice.

    ``own``/``title``/``joined``: scores of the message's own search text, of its first line
    (a long new post) and of the case's search joined with it (follow-ups and retries);
    ``own_weight``: how much the own words count against the joined ones (0 for a bare "没用");
    ``allowed``: sections that may be shown (a retry never shows the case's sections again).
    """

    text: str
    language: str
    truncated_from: int = 0
    case: Case = field(default_factory=Case)
    signature: str = ""
    search_text: str = ""
    move: Move = "new"
    plan: Plan = Plan("new", "new")  # the turn's plan, decided before any scoring (bot.engine.plan)
    named: frozenset[str] = frozenset()  # the message's own subjects
    problem: frozenset[str] = frozenset()  # the case's problem after this message
    setting: frozenset[str] = frozenset()  # the case's setting after this message
    is_log: bool = False
    empty: bool = False
    own: _Scores | None = None
    title: _Scores | None = None
    joined: _Scores | None = None
    own_weight: float = 1.0
    allowed: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    preferred: np.ndarray | None = None  # ranked before the other allowed sections (the one framework asked about)
    not_lead: np.ndarray | None = None  # may be ranked, but not first (the plan's ``not_lead``)
    subject_share: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float32))
    precedent: np.ndarray | None = None  # a new question: the labelled precedents' vote per section
    precedent_lean: float = 0.0  # and how much closer it is to an answered precedent than to an unanswered one
    learned: np.ndarray | None = None  # a new question: the adapter's learned score per section (bot.engine.learned)
    learned_none: float = 0.0  # and its score for "the knowledge base does not answer this", on the same scale
    known: np.ndarray | None = None  # sections with per-section evidence (:meth:`Engine.known`); None: all


@dataclass(frozen=True, eq=False)
class Ranking:
    """Fused score per section (-inf where not allowed) and the best ``k`` allowed sections, best first."""

    scores: np.ndarray
    order: tuple[int, ...]

    def within(self, allowed: np.ndarray, preferred: np.ndarray | None = None, *, k: int = 10) -> Ranking:
        """The same scores with fewer sections allowed (a subset of those allowed before): no second fusion."""
        return _ordered(np.where(allowed, self.scores, -np.inf).astype(np.float32), allowed, preferred, k)


def _ordered(
    masked: np.ndarray, allowed: np.ndarray, preferred: np.ndarray | None, k: int, not_lead: np.ndarray | None = None
) -> Ranking:
    """The allowed sections best first (``preferred`` ones before the rest); a ``not_lead`` section may follow but
    not lead: the best of the others goes first.

    >>> _ordered(np.array([3.0, 2.0, 1.0]), np.ones(3, bool), None, 3, np.array([True, False, False])).order
    (1, 0, 2)
    """
    order_by = masked if preferred is None else np.where(preferred, masked + 1e6, masked)
    ranked = np.argsort(-order_by, kind="stable")
    ranked = ranked[allowed[ranked]]
    if not_lead is not None and len(ranked) and not_lead[ranked[0]]:
        leads = np.flatnonzero(~not_lead[ranked])
        if len(leads):
            ranked = np.concatenate(([ranked[leads[0]]], np.delete(ranked, leads[0])))
    return Ranking(masked, tuple(int(n) for n in ranked[:k]))


@dataclass(frozen=True)
class Verdict:
    """How sure the engine is of a ranking's first section, and why not more."""

    tier: Tier
    probability: float
    reason: Reason | None = None
    uncovered: tuple[str, ...] = ()


def fuse(dense: np.ndarray, lexical: np.ndarray, lexical_weight: float = 0.5) -> np.ndarray:
    """z(dense) + lexical_weight * z(lexical), per section.

    >>> fuse(np.array([0.9, 0.8, 0.7]), np.array([0.0, 0.0, 9.0])).round(2)
    array([ 0.87, -0.35, -0.52], dtype=float32)
    """
    return _zscore(dense) + lexical_weight * _zscore(lexical)


class Scorer(Protocol):
    """One kind of evidence for ranking: a per-section score added to the message's own fused score, or None
    when it has nothing to say about this message (see :data:`SCORERS`). A learned scorer is one more of these."""

    def __call__(self, evidence: Evidence, weights: Weights, mode: str) -> np.ndarray | None: ...


def _fused(scores: _Scores, evidence: Evidence, weights: Weights, mode: str, *, subjects: bool = True) -> np.ndarray:
    if mode == "dense":
        return scores.z_dense
    if mode == "bm25":
        return scores.z_lexical
    out = scores.fused(weights.lexical)
    return out + weights.subject * evidence.subject_share if subjects else out


def words_scorer(evidence: Evidence, weights: Weights, mode: str) -> np.ndarray | None:
    """Dense and BM25 over the message's own search text, plus the share of its subjects a section covers."""
    return _fused(evidence.own, evidence, weights, mode)


def precedent_scorer(evidence: Evidence, weights: Weights, mode: str) -> np.ndarray | None:
    """Labelled real questions like this one were answered by these sections."""
    if evidence.precedent is None or not weights.precedent or mode != "hybrid":
        return None
    return weights.precedent * evidence.precedent


def title_scorer(evidence: Evidence, weights: Weights, mode: str) -> np.ndarray | None:
    """The first line of a long post says what it is about; the body dilutes it."""
    if evidence.title is None or not weights.title or mode != "hybrid":
        return None
    return weights.title * _fused(evidence.title, evidence, weights, mode, subjects=False)


def learned_scorer(evidence: Evidence, weights: Weights, mode: str) -> np.ndarray | None:
    """What the labelled questions taught about which section answers which question (bot.engine.learned)."""
    if evidence.learned is None or not weights.learned or mode != "hybrid":
        return None
    return weights.learned * _zscore(evidence.learned)


# The scorers of the message's own words, summed in this order (the first gives the base score).
SCORERS: tuple[Scorer, ...] = (words_scorer, precedent_scorer, title_scorer, learned_scorer)


def rank(
    evidence: Evidence, weights: Weights, *, mode: str = "hybrid", k: int = 10, scorers: Sequence[Scorer] = SCORERS
) -> Ranking:
    """Order the sections for one message: a pure function of the evidence, the weights and the scorers.

    hybrid: ``own_weight * (fuse(own) + w_subj share + w_prec precedents' vote + w_title fuse(title)
    + w_learned z(learned))
    + fuse(joined) + w_subj share``,
    the ``preferred`` sections (if any) first;
    "dense" or "bm25" use one kind of evidence only (baselines).
    """
    if mode not in ("hybrid", "dense", "bm25"):
        raise ValueError(f"mode must be 'hybrid', 'dense' or 'bm25', not {mode!r}")
    if evidence.empty or evidence.own is None or not len(evidence.allowed):
        return Ranking(np.zeros(0, dtype=np.float32), ())
    fused = _combined(evidence, weights, mode, scorers)
    known = evidence.known
    if mode == "hybrid" and known is not None and len(known) == len(fused) and not known.all():
        # Some documents have no labels or curated phrasings: the shared rule (each section's own text, the
        # question's subjects) ranks them; the others' own evidence adds only where it cannot pull past them.
        shared = _combined(_shared_only(evidence), weights, mode, scorers)
        fused = gate(shared, fused, known)
    masked = np.where(evidence.allowed, fused, -np.inf).astype(np.float32)
    return _ordered(masked, evidence.allowed, evidence.preferred, k, evidence.not_lead)


def _combined(evidence: Evidence, weights: Weights, mode: str, scorers: Sequence[Scorer]) -> np.ndarray:
    """The scorers summed, and a follow-up's case words joined with them."""
    fused: np.ndarray | None = None
    for scorer in scorers:
        score = scorer(evidence, weights, mode)
        if score is not None:
            fused = score if fused is None else fused + score
    if fused is None:
        fused = np.zeros(len(evidence.allowed), dtype=np.float32)
    if evidence.joined is not None:
        # A follow-up or retry: the case's words joined with the message's, against the message's own.
        fused = evidence.own_weight * fused + _fused(evidence.joined, evidence, weights, mode)
    return fused


def _plain(scores: _Scores | None) -> _Scores | None:
    return scores.plain if scores is not None and scores.plain is not None else scores


def _shared_only(evidence: Evidence) -> Evidence:
    """The evidence every section has alike: its own text's scores, the question's subjects; no precedents, no
    adapter, no curated phrasings."""
    return replace(
        evidence,
        own=_plain(evidence.own),
        title=_plain(evidence.title),
        joined=_plain(evidence.joined),
        precedent=None,
        learned=None,
        known=None,
    )


def gate(shared: np.ndarray, total: np.ndarray, known: np.ndarray) -> np.ndarray:
    """``total`` where per-section evidence (curated phrasings, precedents, the adapter) exists; a section without it
    (``known`` false) gets its ``shared`` score plus the largest extra (``total - shared``) of any known section the
    shared rule puts no higher than it — what a section like it would get — so no known section's own evidence
    lifts it past an unknown one the shared rule put first, and the unknown ones keep their order.

    >>> gate(np.array([2.0, 1.0, 0.0]), np.array([2.0, 4.0, 0.5]), np.array([False, True, True])).tolist()
    [5.0, 4.0, 0.5]
    >>> gate(np.array([2.0, 1.0]), np.array([2.5, 9.0]), np.array([False, False])).tolist()
    [2.0, 1.0]
    """
    if not known.any():
        return shared.astype(np.float32)
    extra = total - shared
    order = np.argsort(shared[known], kind="stable")
    below = shared[known][order]
    running = np.maximum.accumulate(extra[known][order])
    position = np.searchsorted(below, shared[~known], side="right")
    imputed = np.where(position > 0, running[np.maximum(position - 1, 0)], float(extra[known].min()))
    out = total.astype(np.float32).copy()
    out[~known] = shared[~known] + imputed
    return out


def judge(engine: Engine, evidence: Evidence, ranking: Ranking, calibration: Calibration) -> Verdict:
    """The tier of a ranking's first section, its calibrated probability and the reason (codes and keys).

    First questions use the first-turn model; follow-ups and retries the follow-up model when
    one was fitted. A subject the section does not cover (framework, device), an operating system
    its document contradicts, or a newer release than the section was written for keeps it from
    being a confident answer.
    """
    if not ranking.order:
        code = "empty" if evidence.empty else ("retry_none" if evidence.move == "retry" else "nothing")
        return Verdict("none", 0.0, Reason(code))
    top = ranking.order[0]
    first = [engine.features(evidence, s, top) for s in (evidence.own, evidence.joined) if s is not None]
    continuing = evidence.plan.continues  # the follow-up model judges a turn of its case, when one was fitted
    if continuing and calibration.follow is not None:
        probability = calibration.follow.probability(engine.follow_features(evidence, top, first))
    else:
        probability = max(calibration.probability(f) for f in first)
    uncovered, conflicts, (newer, era) = engine.blockers(evidence, top)
    thresholds = calibration.follow if continuing and calibration.follow is not None else calibration
    tier = calibration.tier(
        probability,
        hard_uncovered=engine.hard_uncovered(uncovered) or bool(conflicts) or bool(newer),
        margin=max(f["margin"] for f in first),
        coverage=max(f["coverage"] for f in first),
        thresholds=thresholds,
    )
    tier = evidence.plan.bound(tier)  # the plan's bounds (a failed fix's next candidate is doubtful), decided there
    if tier == "answer":
        return Verdict("answer", probability, None, tuple(uncovered))
    closest = engine.sections[top].key
    foreign = [s for s in uncovered if s not in engine.covered_anywhere]
    if newer:
        reason = Reason("old_release", closest=closest, release=newer, era=era)
    elif conflicts:
        reason = Reason("setting_conflict", subjects=tuple(conflicts), closest=closest)
    elif foreign:
        reason = Reason("uncovered", subjects=tuple(engine.named_through_children(foreign))[:3], closest=closest)
    elif uncovered:
        reason = Reason("uncovered_top", subjects=tuple(engine.named_through_children(uncovered))[:3], closest=closest)
    else:
        reason = Reason("nothing" if tier == "none" else "weak", closest=closest)
    return Verdict(tier, probability, reason, tuple(uncovered))


def _title(text: str) -> str:
    """The first line of a multi-line message when it reads like a title (short), else "".

    >>> _title("Training hangs on 8 GPUs\\nlog line 1\\nlog line 2"), _title("one line only")
    ('Training hangs on 8 GPUs', '')
    """
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0] if len(lines) > 1 and len(lines[0]) <= 200 and _has_words(lines[0]) else ""


def _has_words(text: str) -> bool:
    """Anything to search: at least two letters, digits or CJK characters in a row."""
    return bool(re.search(r"[^\W_]{2}", text))
