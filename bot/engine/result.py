"""The engine's result as a record (:func:`answer_of` -> :class:`bot.records.Answer`): hits, tier, reason, and the
case after this turn (:func:`advance_case`). Codes and keys only: :mod:`bot.answer` writes the words.
"""

from __future__ import annotations

from dataclasses import replace

from bot.engine.case import advance, matching_lines
from bot.engine.catalog import Catalog
from bot.engine.evidence import Evidence
from bot.engine.judge import Verdict
from bot.engine.message import Message
from bot.engine.plan import Plan
from bot.engine.rank import Ranking
from bot.records import Answer, Case, Hit, Reason

# Sections shown beside the best one need this share of its fused score (fused scores are relative z-scores).
RELEVANT_SHARE = 0.3


def answer_of(catalog: Catalog, evidence: Evidence, ranking: Ranking, verdict: Verdict) -> Answer:
    """The engine's result as a record: hits, tier, reason, and the case after this turn."""
    subjects = tuple(sorted(evidence.problem | evidence.setting))
    if not ranking.order:
        code = "empty" if evidence.empty else ("retry_none" if evidence.move == "retry" else "nothing")
        after = advance_case(evidence, ())
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
            section=catalog.sections[n],
            score=float(ranking.scores[n]),
            dense=float(scores.dense[n]),
            lexical=float(scores.lexical[n]),
            matched_terms=tuple(catalog.terms_in_section(scores.matched, n)),
        )
        for n in ranking.order
    )
    best = hits[0].score
    worth = 1 + sum(1 for h in hits[1:] if best > 0 and h.score >= RELEVANT_SHARE * best)
    shown = (hits[0].section.key,)  # what the reply leads with; related sections may be the next answer
    after = advance_case(evidence, shown, best=hits[0].section.key if verdict.tier == "answer" else "")
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


def unsearched(catalog: Catalog, message: Message, case: Case, plan: Plan) -> Answer:
    """The answer to a turn the plan does not search: nothing, or the clicked section with the case's words that
    occur in it (no search is run for them), the case after it remembering it as shown and best."""
    answer = Answer(query=message.text, language=plan.language, tier="none", hits=(), move=plan.move, act=plan.act)
    if plan.reply != "section":
        return replace(answer, case=case, plan=plan)
    key = message.stripped
    section = catalog.section(key)
    assert section is not None
    terms = catalog.terms_in(case.search, key) if case.search else ()
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


def advance_case(evidence: Evidence, shown: tuple[str, ...], best: str = "") -> Case:
    """The case after this turn: its search, problem and setting as the turn's move leaves them, what was shown."""
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
