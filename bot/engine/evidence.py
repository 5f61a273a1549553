"""What the engine knows about one message in its case, before any ranking choice (:class:`Evidence`), built on
the turn's plan (:func:`build`), with the labelled precedents' vote (:func:`with_precedents`) and the adapter's
learned scores (:func:`with_learned`) for a new question.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from bot.engine.beside import Boost
from bot.engine.catalog import Catalog
from bot.engine.learned import Adapter
from bot.engine.message import Message
from bot.engine.plan import Plan
from bot.engine.precedents import Precedents
from bot.engine.scores import Scores
from bot.records import Case, Move


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
    own: Scores | None = None
    title: Scores | None = None
    joined: Scores | None = None
    own_weight: float = 1.0
    allowed: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    preferred: np.ndarray | None = None  # ranked before the other allowed sections (the one framework asked about)
    not_lead: np.ndarray | None = None  # may be ranked, but not first (the plan's ``not_lead``)
    subject_share: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float32))
    precedent: np.ndarray | None = None  # a new question: the labelled precedents' vote per section
    precedent_lean: float = 0.0  # and how much closer it is to an answered precedent than to an unanswered one
    learned: np.ndarray | None = None  # a new question: the adapter's learned score per section (bot.engine.learned)
    learned_none: float = 0.0  # and its score for "the knowledge base does not answer this", on the same scale
    known: np.ndarray | None = None  # sections with per-section evidence (:meth:`Catalog.known`); None: all
    # A new question: what the company's labels add for the sections of its documents (bot.engine.beside: their
    # vote, after the gate; the lexical weight of the shared rule there); None: no labels beside the fit.
    beside: Boost | None = None


def build(
    catalog: Catalog,
    message: Message,
    case: Case,
    plan: Plan,
    own: Scores | None,
    *,
    score: Callable[[str], Scores],
    reads_only_head: Callable[[str], bool],
    known: np.ndarray | None,
) -> Evidence:
    """The evidence the plan asks for: the joined and title scores it names (``score``: a search text's scores),
    the sections it allows; ``known``: the sections with evidence of their own (:meth:`Catalog.known`). Without the
    precedents' vote and the learned scores (:func:`with_precedents`, :func:`with_learned` add them)."""
    text, truncated_from, language = message.text, message.truncated_from, plan.language
    n = len(catalog.sections)
    if not message.has_words or own is None:
        nothing = np.zeros(n, dtype=bool)  # no section may be shown
        share = np.zeros(n, dtype=np.float32)
        return Evidence(
            text,
            language,
            truncated_from,
            case,
            move=plan.move,
            plan=plan,
            empty=True,
            allowed=nothing,
            subject_share=share,
        )
    title = score(plan.title) if plan.title else None
    # The message first: the embedder reads only the head of a long text (a first post with its log). A message
    # long enough that neither the embedder nor the lexical search reaches the case's words after it scores the
    # same joined as alone: its own scores are reused, not computed again (exactly equal, half the cost).
    joined = None
    if plan.joined:
        joined = own if reads_only_head(plan.search) else score(plan.joined)
    allowed = np.ones(n, dtype=bool)
    for key in plan.exclude:
        i = catalog.by_key.get(key)
        if i is not None:
            allowed[i] = False
    if plan.answer_bearing:
        allowed &= catalog.answer_bearing
    if plan.frameworks:  # after a TensorFlow answer, or asked "what about PaddlePaddle?": that framework's only
        allowed &= np.array([not main or bool(main & plan.frameworks) for main in catalog.main_frameworks], dtype=bool)
    preferred = None
    if plan.prefer:
        # A TensorFlow question is answered from TensorFlow material when there is any; the rest still follows
        # (ranked after it), so the list stays complete.
        mask = np.array([bool(main & plan.prefer) for main in catalog.main_frameworks], dtype=bool) & allowed
        preferred = mask if mask.any() else None
    if plan.lead_on and preferred is None:  # after a failed fix: the sections left on the case's problem first
        on = allowed & np.array([bool(plan.lead_on & covered) for covered in catalog.coverage], dtype=bool)
        preferred = on if on.any() else None
    if plan.cover:  # "那多机呢？" asks about the new setting: sections that cover it, when any does
        covering = allowed & np.array([plan.cover <= covered for covered in catalog.coverage], dtype=bool)
        if covering.any():
            allowed = covering
    not_lead = None
    if plan.not_lead:
        not_lead = np.zeros(n, dtype=bool)
        not_lead[[catalog.by_key[key] for key in plan.not_lead if key in catalog.by_key]] = True
    return Evidence(
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
        subject_share=catalog.subject_share(plan.problem | plan.setting if plan.move != "new" else plan.named),
        known=known,
    )


def with_precedents(
    catalog: Catalog,
    evidence: Evidence,
    precedents: Precedents | None,
    among: np.ndarray | None = None,
    *,
    hidden: frozenset[str] = frozenset(),
) -> Evidence:
    """A new question's evidence with the vote of the labelled precedents nearest to it (``among``: those
    allowed to vote; calibration leaves out the question's own thread). A follow-up's words alone ("那多机呢？")
    are not a question the precedents were asked: it gets none."""
    if precedents is None or not len(precedents) or evidence.own is None or evidence.move not in ("new", "switch"):
        if evidence.precedent is None and evidence.precedent_lean == 0.0:
            return evidence  # nothing to take away: no copy on every follow-up
        return replace(evidence, precedent=None, precedent_lean=0.0)
    vote = precedents.vote(evidence.own.query_vector, catalog.by_key, among)
    votes = vote.sections
    if hidden:  # a document added or changed since the precedents were labelled: they say nothing of its sections
        votes = np.where(catalog.hidden_sections(hidden), 0.0, votes).astype(np.float32)
    # The documents these precedents answered are the labelled ones (the evidence's may be another set's).
    known = catalog.known(precedents, hidden) if evidence.known is not None else None
    return replace(evidence, precedent=votes, precedent_lean=vote.lean, known=known)


def with_learned(catalog: Catalog, evidence: Evidence, adapter: Adapter | None) -> Evidence:
    """A new question's evidence with the adapter's learned score per section and its "none" score (calibration
    passes an adapter fitted without the question's gathering batch). Like the precedents, a follow-up's own
    words are not a question the adapter learned from: it gets none."""
    if adapter is None or evidence.own is None or evidence.move not in ("new", "switch"):
        return evidence if evidence.learned is None else replace(evidence, learned=None, learned_none=0.0)
    vectors, owners = catalog.key_vectors
    relevance = adapter.relevance(evidence.own.query_vector, vectors, owners, len(catalog.sections))
    return replace(evidence, learned=relevance.sections, learned_none=relevance.none)
