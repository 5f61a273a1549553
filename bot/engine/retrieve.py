"""The engine: question or pasted log -> distinct cited sections, best first, with a tier and its reason.

:class:`Engine` is a facade over one loaded index: it holds what serving loaded (the index's
:class:`bot.engine.catalog.Catalog`, the calibration, the adapter, the turn-act model, the query vectors
remembered) and delegates each step to the module that does it:

- reading a message once (:mod:`bot.engine.read` -> :class:`bot.engine.message.Message`) and the turn's plan
  (:mod:`bot.engine.plan`), decided once from the message, the case and the message's own scores;
- scores per section for a search text (:mod:`bot.engine.scores`): z(dense) + w_lex z(BM25), where dense is the
  best cosine between the query and any key of the section (body chunks, the heading, curated phrasings and English
  titles) and BM25 runs over section text with a tokenizer that keeps error strings whole;
- the evidence the plan asks for (:mod:`bot.engine.evidence`), the ranking (:func:`bot.engine.rank.rank`, a sum of
  :class:`bot.engine.rank.Scorer` s: the words, the share of the question's subjects a section covers
  (:mod:`bot.engine.subjects`), labelled precedents, a long post's title, the learned relevance);
- the judgement (:func:`bot.engine.judge.judge`): a calibrated probability (:mod:`bot.engine.calibration`) from a
  few features — the margin of the best match over a shipped set of off-topic questions (``bot/data/background.txt``;
  e5 scores off-topic questions as high as real ones, so no raw-cosine cut works), how much of the question the
  knowledge base and the best section know, which of its subjects no section or not the best one covers — and the
  tier (answer, tentative, none) from thresholds fitted by ``python -m bot calibrate``, within the plan's bounds;
- the result as a record (:mod:`bot.engine.result`).

``Engine.ask`` is :meth:`Engine.evidence`, :func:`rank` and :func:`judge`, each run once per message; nothing after
the plan changes its act — and ``python -m bot calibrate`` (:mod:`bot.fit.calibrate`) uses the same three. The
engine returns reason codes and section keys; :mod:`bot.answer` writes the words.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

import numpy as np

from bot.engine import evidence as evidence_of
from bot.engine import judge as judging
from bot.engine.acts import ActModel, acts_path
from bot.engine.acts import load_for as load_acts
from bot.engine.beside import Beside
from bot.engine.calibration import Calibration, calibration_path, load_for, sources_fingerprint
from bot.engine.catalog import Catalog
from bot.engine.evidence import Evidence
from bot.engine.facts import build, facts_of
from bot.engine.judge import Verdict, judge
from bot.engine.learned import Adapter, adapter_path
from bot.engine.learned import load_for as load_adapter
from bot.engine.message import Message
from bot.engine.plan import Finding, Plan, Reading, reply_of, weighs_readings
from bot.engine.plan import plan as make_plan
from bot.engine.precedents import Precedents
from bot.engine.rank import Ranking, rank
from bot.engine.read import read_message, title_of
from bot.engine.read import reading as read_for_plan
from bot.engine.result import answer_of, unsearched
from bot.engine.scores import QueryCache, Scores, score
from bot.engine.subjects import Lexicon
from bot.kb.embed import Embedder, make_embedder
from bot.kb.index import IndexProblem, KnowledgeIndex, load_index
from bot.kb.selftest import SelfTest
from bot.kb.selftest import read as read_selftest
from bot.kb.tokenize import detect_language, warm_up
from bot.records import Act, Answer, Case, Section
from bot.settings import Settings


def _once(score: Callable[[str], Scores]) -> Callable[[str], Scores]:
    """``score`` remembering its last few texts: a turn's joined search, run to weigh its readings, is not run again
    for its answer."""
    held: dict[str, Scores] = {}

    def once(text: str) -> Scores:
        if text not in held:
            held[text] = score(text)
        return held[text]

    return once


class Engine:
    """The retrieval engine over one loaded index: ranking, confidence and tier are decided here only."""

    def __init__(
        self, index: KnowledgeIndex, embedder: Embedder, settings: Settings, calibration: Calibration | None = None
    ) -> None:
        self.index = index
        self.queries = QueryCache(embedder)  # query vectors remembered (calibration raises its size)
        self.settings = settings
        sources = index.manifest.get("sources", {})
        self.calibration = calibration or load_for(settings.index_dir, embedder.id, sources)
        # The learned relevance fitted with this calibration (bot.engine.learned); None: rank and judge without it.
        # It belongs to the calibration's fit (the same documents); a calibration serving every document as unseen
        # ranks without it.
        whole = "documents_changed" in self.calibration.figures
        self.adapter: Adapter | None = load_adapter(
            adapter_path(calibration_path(settings.index_dir, embedder.id)),
            embedder.id,
            "(every document changed)" if whole else self.calibration.sources_hash or sources_fingerprint(sources),
            expected="learned" in self.calibration.figures and not whole,  # fitted with one: its absence is news
            dim=embedder.dim,
        )
        # The learned turn-act model fitted for this embedder (bot.engine.acts); None: the plan's rule decides acts.
        self.acts: ActModel | None = load_acts(
            acts_path(calibration_path(settings.index_dir, embedder.id)), embedder.id, embedder.dim
        )
        # The index's sections and what is known of them (bot.engine.catalog); facts computed by the build.
        self.catalog = catalog = Catalog(index, Lexicon.load(), facts_of(index))
        self.lexicon, self.facts = self.catalog.lexicon, self.catalog.facts
        # Lookups, as the catalog answers them: a section and its curated metadata by key, the sections' mean
        # vectors, the words of a search found in a section, the subjects a text names.
        self.section, self.meta, self.section_vectors = catalog.section, catalog.meta, catalog.section_vectors
        self.terms_in, self.subjects_of = catalog.terms_in, catalog.subjects_of
        # Documents treated as never labelled and never curated: their curated phrasings are ignored, they count as
        # unknown to the per-section evidence (:meth:`known`: no precedents, no adapter) and a first section of theirs
        # is judged by the fit for documents nobody labelled (:meth:`verdict`). Serving: the documents added or
        # changed since the calibration was fitted (the others keep the fitted model); calibration's
        # leave-one-document-out sets one document at a time.
        self.hidden: frozenset[str] = self.calibration.unfitted(sources)
        # The company's labels for its own documents, beside the fit (bot.engine.beside); None: none.
        self.beside: Beside | None = Beside.load(calibration_path(settings.index_dir, embedder.id), embedder.dim)
        # Of those, the documents the fit had in another text (changed since, not added): the fitted statistics
        # (z-scores, BM25) counted them, so they stay counted (:func:`bot.engine.scores.score`'s ``new``).
        self.changed: frozenset[str] = self.hidden & frozenset(self.calibration.documents)

    @classmethod
    def open(
        cls, settings: Settings, embedder: Embedder | None = None, *, auto_build: bool = False, progress: bool = False
    ) -> Engine:
        """Load the index; with ``auto_build`` a missing, stale or broken index is rebuilt instead of refused."""
        embedder = embedder or make_embedder(settings.embedder, batching=settings.embed_batching)
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

    def known(self, precedents: Precedents | None | str = "serving") -> np.ndarray:
        """Per section: whether it has evidence of its own (:meth:`Catalog.known`; default: the calibration's
        precedents), its document not :attr:`hidden`."""
        return self.catalog.known(
            self.calibration.precedents if isinstance(precedents, str) else precedents, self.hidden
        )

    @property
    def selftest(self) -> tuple[SelfTest | None, str]:
        """The self-test its build stored (bot.kb.selftest), or None and what is wrong with the fix: /admin shows
        either; serving never needs it."""
        return read_selftest(self.index.path)

    @property
    def key_vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """Every retrieval key's vector and its section, as the dense index holds them (once per loaded index)."""
        return self.catalog.key_vectors

    # ------------------------------------------------------------ asking

    def read(self, message: object) -> Message:
        """The message read once for this turn (cut to the input limit); every later stage reads this record."""
        return (
            message
            if isinstance(message, Message)
            else read_message(
                message,
                limit=self.settings.max_input_chars,
                lexicon=self.lexicon,
                patterns=self.index.domain.environment,  # the seeds' own (seeds/environment.toml) over the shipped
                domain=self.index.domain,
            )
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
        own = self.scores(message.search_text, use_meta, tokens=message.tokens) if message.has_words else None
        score = _once(lambda text: self.scores(text, use_meta))  # the joined search runs once, weighed or not
        planned = self.plan(message, case, own=own, exclude=exclude, turn=turn, score=score)
        return self._built(message, case, planned, own, score)

    def _built(self, message: Message, case: Case, planned: Plan, own: Scores | None, score) -> Evidence:
        found = evidence_of.build(
            self.catalog,
            message,
            case,
            planned,
            own,
            score=score,
            reads_only_head=self.queries.reads_only_head,
            known=self.known(),
        )
        return self.with_beside(
            self.with_learned(self.with_precedents(found, self.calibration.precedents), self.adapter)
        )

    def with_beside(self, evidence: Evidence, beside: Beside | None | str = "served") -> Evidence:
        """A new question's evidence with the company's labels' vote (:mod:`bot.engine.beside`; ``beside``: the
        served one by default, ``bot tune`` passes each candidate). A follow-up's own words get none."""
        beside = self.beside if isinstance(beside, str) else beside
        if beside is None or evidence.own is None or evidence.move not in ("new", "switch"):
            return evidence if evidence.beside is None else replace(evidence, beside=None)
        sources = [s.source for s in self.sections]
        vote = beside.boost(
            evidence.own.query_vector, self.catalog.by_key, sources, self.index.manifest.get("sources", {})
        )
        return replace(evidence, beside=vote)

    def _finding(self, message: Message, case: Case, planned: Plan, own: Scores | None, score) -> Finding:
        """What one reading of the message finds: its evidence ranked and judged, the lead and how clear it is."""
        found = self._built(message, case, planned, own, score)
        ranking = rank(found, self.calibration.weights, k=3)
        verdict = judge(self.catalog, found, ranking, self.calibration)
        lead = self.catalog.sections[ranking.order[0]].key if ranking.order else ""
        return Finding(lead, verdict.tier == "answer", verdict.probability)

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

    def reading(self, message: Message, case: Case, own: Scores | None) -> Reading:
        """What the plan needs to know of the index and the lexicon about this message (:func:`bot.engine.read.reading`)."""
        return read_for_plan(self.catalog, self.calibration.weights, message, case, own)

    def plan(
        self,
        message: object,
        case: Case | None = None,
        *,
        own: Scores | None = None,
        exclude: Iterable[str] = (),
        turn: bool = False,
        score=None,
    ) -> Plan:
        """The turn's plan (:mod:`bot.engine.plan`), decided once before the answer's ranking; ``own``: the message's
        own scores when computed already (the evidence reuses them); ``turn``: a conversation's turn, whose reply may
        be no search (then nothing is scored); ``score``: a search text's scores (the evidence's, so that a search
        run here is not run again).

        A complete question the rule would join with its case (:func:`bot.engine.plan.weighs_readings`) is searched
        both ways first, once each: alone, as a new question, and joined; the plan picks by what each finds."""
        message = self.read(message)
        case = case or Case()
        early = self._before_search(message, case) if turn else None
        if early is not None:
            return early
        if own is None and message.has_words:
            own = self.scores(message.search_text, tokens=message.tokens)
        score = score or _once(self.scores)
        reading = self.reading(message, case, own)
        options = {
            "turn": turn,
            "exclude": tuple(exclude),
            "title": title_of(message.text),
            "model": self.acts,
            "vector": own.query_vector if own is not None else None,
        }
        planned = make_plan(message, case, reading, **options)
        if own is None or not weighs_readings(planned.act, reading, case):
            return planned
        weighed = self.weighed(message, case, own, reading, planned.act, score=score, options=options)
        return make_plan(message, case, weighed, **{**options, "act": planned.act})

    def weighed(
        self,
        message: Message,
        case: Case,
        own: Scores,
        reading: Reading,
        act: Act,
        *,
        score: Callable[[str], Scores] | None = None,
        options: dict | None = None,
    ) -> Reading:
        """``reading`` with what the message finds searched both ways, once each: alone, as a new question, and
        joined with the case as ``act`` (a follow-up or a detail) joins it (:func:`bot.engine.plan.chosen_reading`
        picks)."""
        score = score or _once(self.scores)
        options = {**(options or {"turn": True, "title": title_of(message.text)}), "model": None}
        alone = self._finding(
            message, case, make_plan(message, case, reading, **{**options, "act": "switch"}), own, score
        )
        together = self._finding(
            message, case, make_plan(message, case, reading, **{**options, "act": act}), own, score
        )
        return replace(reading, alone=alone, together=together)

    def _before_search(self, message: Message, case: Case) -> Plan | None:
        """The plan of a turn whose reply is no search (:func:`bot.engine.plan.reply_of`), else None: nothing scored."""
        stripped = message.stripped
        chosen = self.section(stripped) if len(stripped) < 300 else None
        if reply_of(message, case, section=chosen is not None) is None:
            return None
        language = detect_language(chosen.heading) if chosen is not None else ""
        return make_plan(message, case, turn=True, section=chosen is not None, section_language=language)

    def with_precedents(
        self, evidence: Evidence, precedents: Precedents | None, among: np.ndarray | None = None
    ) -> Evidence:
        """A new question's evidence with the vote of the labelled precedents nearest to it (``among``: those
        allowed to vote; calibration leaves out the question's own thread). A follow-up's words alone ("那多机呢？")
        are not a question the precedents were asked: it gets none."""
        return evidence_of.with_precedents(self.catalog, evidence, precedents, among, hidden=self.hidden)

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
        evaluation's baselines take their own path (:func:`bot.fit.evaluate.baseline_ask`): serving has no switch
        for them.
        """
        message = self.read(text)
        case = case or Case()
        early = self._before_search(message, case) if turn else None
        if early is not None:
            return unsearched(self.catalog, message, case, early)
        evidence = self.evidence(message, case, exclude=exclude, turn=turn)
        ranking = rank(evidence, self.calibration.weights, k=k)
        return self.answer(evidence, ranking, self.verdict(evidence, ranking))

    def verdict(self, evidence: Evidence, ranking: Ranking) -> Verdict:
        """The judgement of a ranking (:func:`bot.engine.judge.judge`) by the model fitted for its first section's
        document: the calibration as fitted, or its fit for documents nobody labelled when that document is
        :attr:`hidden` (added or changed since the fit)."""
        model = self.calibration
        if self.hidden and ranking.order and self.sections[ranking.order[0]].source in self.hidden:
            model = model.for_unseen_documents()
        return judge(self.catalog, evidence, ranking, model)

    def answer(self, evidence: Evidence, ranking: Ranking, verdict: Verdict) -> Answer:
        """The engine's result as a record: hits, tier, reason, and the case after this turn."""
        return answer_of(self.catalog, evidence, ranking, verdict)

    # ------------------------------------------------------------ evidence

    def scores(self, search_text: str, use_meta: bool = True, tokens: Sequence[str] | None = None) -> Scores:
        """One search text's scores per section (:func:`bot.engine.scores.score`; ``tokens``: its tokens when the
        message was read already)."""
        return score(
            self.catalog,
            self.queries,
            search_text,
            use_meta,
            tokens,
            hidden=self.hidden,
            all_known=self.known().all(),
            new=self.hidden - self.changed,
        )

    def with_learned(self, evidence: Evidence, adapter: Adapter | None) -> Evidence:
        """A new question's evidence with the adapter's learned score per section and its "none" score (calibration
        passes an adapter fitted without the question's gathering batch). Like the precedents, a follow-up's own
        words are not a question the adapter learned from: it gets none."""
        return evidence_of.with_learned(self.catalog, evidence, adapter)

    def features(self, evidence: Evidence, scores: Scores, top: int) -> dict[str, float]:
        """The confidence model's inputs for one set of scores (:func:`bot.engine.judge.features`)."""
        return judging.features(self.catalog, evidence, scores, top)

    def follow_features(self, evidence: Evidence, top: int, first: Sequence[dict[str, float]] = ()) -> dict[str, float]:
        """The follow-up model's inputs (:func:`bot.engine.judge.follow_features`)."""
        return judging.follow_features(self.catalog, evidence, top, first)

    def blocked(self, evidence: Evidence, top: int) -> bool:
        """Whether the section at ``top`` may not be a confident answer whatever the probability."""
        return judging.blocked(self.catalog, evidence, top)

    def hard_uncovered(self, uncovered: Iterable[str]) -> bool:
        return judging.hard_uncovered(self.catalog, uncovered)

    # ------------------------------------------------------------ query vectors

    @property
    def embedder(self) -> Embedder:
        """The embedder of the index's keys, which embeds the questions too (:attr:`queries`)."""
        return self.queries.embedder

    @embedder.setter
    def embedder(self, embedder: Embedder) -> None:
        self.queries.embedder = embedder

    def cache_key(self, search_text: str) -> bytes:
        """The key a search text's vector is remembered under (:meth:`remember`, :meth:`remembered`)."""
        return self.queries.cache_key(search_text)

    def prefetch(self, texts: Iterable[str], *, batch: int = 32, progress: Callable[[int], None] | None = None) -> int:
        """Embed the search texts not yet remembered, ``batch`` at a time (:meth:`QueryCache.prefetch`)."""
        return self.queries.prefetch(texts, batch=batch, progress=progress)

    def remember(self, vectors: dict[bytes, np.ndarray]) -> None:
        """Query vectors by :func:`bot.engine.scores.query_key` (a calibration's stored ones), most recent last."""
        self.queries.remember(vectors)

    def remembered(self) -> dict[bytes, np.ndarray]:
        return self.queries.remembered()
