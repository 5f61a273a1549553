"""The gaps of ``/admin`` read from store rows: which questions were unanswered, tentative, down-voted or "didn't
help", each in its session (a follow-up with the questions before it), what it is about, and what is no gap at all
(thanks, greetings, a chat front-end's own prompts).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import lru_cache
from typing import Literal

from bot.engine.intents import classify
from bot.engine.subjects import Lexicon
from bot.web.admin.clusters import PRIORITY
from bot.web.openai_api import front_end_task

GapKind = Literal["unanswered", "tentative", "downvoted", "not_helpful"]
FOLLOW_UP_CHARS = 40  # a question this short in a session with earlier questions leans on them ("那多机呢？")
CONTEXT_QUESTIONS = 2  # earlier questions shown with a follow-up
SETTING_CATEGORIES = PRIORITY[: PRIORITY.index("framework") + 1]  # what a question is on, not what went wrong


@dataclass(frozen=True)
class Gap:
    """One gap event, read in its session: what was asked, and what came before it."""

    at: datetime
    kind: GapKind
    text: str  # the question, or the error signature of a pasted log (what the engine searched)
    tier: str  # answer | tentative | none: what the bot did with it
    section: str  # key of the section the reply led with ("" when none)
    context: tuple[str, ...] = ()  # earlier questions of the session, oldest first, for a follow-up
    reasons: tuple[str, ...] = ()  # 👎 reasons given for this answer
    subjects: frozenset[str] = frozenset()
    session: str = ""  # the store's salted hash: which questions came before
    answer_id: str = ""  # the reply's id, which the votes on it name (rows stored before schema version 3: "")


# ---------------------------------------------------------------- reading rows


def _item_kind(row: dict) -> GapKind | None:
    if row["kind"] == "question" and row["tier"] in ("none", "tentative"):
        return "unanswered" if row["tier"] == "none" else "tentative"
    if row["kind"] == "vote" and row["vote"] == "down":
        return "downvoted"
    if row["kind"] == "not_helpful":
        return "not_helpful"
    return None


def text_of(row: dict) -> str:
    r"""What a gap is about: the error signature of a pasted log (what the engine searched), else the question, on one
    line; a pasted table's rules are left out (an ``nvidia-smi`` table read as long ``+-----`` runs, issue 35).

    >>> smi = "+-------------+\n| NVIDIA-SMI 535.104   CUDA Version: 12.2 |\n|=====+=====|\n| 0  RTX 3060 |  Off |\n+---+"
    >>> text_of({"question": smi + "\n为什么不用 GPU？"})
    'NVIDIA-SMI 535.104 CUDA Version: 12.2 · 0 RTX 3060 | Off · 为什么不用 GPU？'
    """
    text = str(row.get("signature") or row.get("question") or "")
    kept = [" ".join(line.strip().strip("|").split()) for line in text.splitlines() if not _RULE.fullmatch(line)]
    return " · ".join(line for line in kept if line)


_RULE = re.compile(r"[\s+|=\-:]*")  # a table's rule line: +-----+, |=====+=====|, or nothing at all


@lru_cache(maxsize=8192)  # a year of rows repeats a few thousand wordings
def not_a_gap(text: str) -> str | None:
    """Why a message is no coverage gap (an intent label, or ``front_end``), or None for a real question.

    >>> not_a_gap("谢谢"), not_a_gap("hello"), not_a_gap("### Task:\\nGenerate a concise title\\n<chat_history>\\nx")
    ('thanks', 'greeting', 'front_end')
    >>> not_a_gap("Jetson Nano 上训练显存不足") is None
    True
    """
    label = classify(text)
    if label is not None:
        return label
    if front_end_task([{"role": "user", "content": text}]) is not None:
        return "front_end"
    return None


def shown_in_context(text: str, earlier: Sequence[str], signature: str = "") -> bool:
    """A short question (not a pasted log) after other questions of the same session: /admin shows it with them.

    Not :func:`bot.engine.case.is_follow_up` (the engine's reading of one message's words, "那多机呢？", "what about
    TensorFlow?"), on purpose: an operator reading a gap needs the session's earlier questions for any short one
    ("cuda 11.2?", "还是不行"), cue words or not, and the store may keep only the signature of a pasted log.

    >>> shown_in_context("那多机呢？", ["多卡训练 NCCL 报错"]), shown_in_context("那多机呢？", [])
    (True, False)
    >>> shown_in_context("PaddleOCR on a Jetson Nano runs out of GPU memory while training", ["hi"])
    False
    """
    return bool(earlier) and not signature and len(text) <= FOLLOW_UP_CHARS


def gap_subjects(text: str, context: Sequence[str], lexicon: Lexicon) -> frozenset[str]:
    """The subjects a gap is about: its own; a follow-up that names no device, product, tool, OS, feature,
    library or framework of its own is about what its context named.

    "那多机呢？" after a Jetson question is a Jetson question; "jetson xavier 推理很慢" after a Jetson memory
    question is about Jetson, not about memory.

    >>> lex = Lexicon.load()
    >>> sorted(gap_subjects("那多机呢？", ["Jetson 上训练显存不足"], lex))
    ['GPU out of memory', 'Jetson', 'multi-machine']
    >>> sorted(gap_subjects("jetson xavier 推理很慢", ["Jetson 上训练显存不足"], lex))
    ['Jetson']
    """
    own = lexicon.find(text)
    if any(lexicon.category(s) in SETTING_CATEGORIES for s in own):
        return frozenset(own)
    return frozenset(own | lexicon.find(" ".join(context)))


def repeated_answers(rows: Sequence[dict]) -> set[int]:
    """The ``id()`` of each answered question whose answer led with the same section as the session's previous
    answer: the user asked again and got the same answer back, which is no answer (issue 35: it counted as
    answered). Rows oldest first; a new chat is a new session.

    >>> rows = [{"kind": "question", "session": "s", "tier": "answer", "cited": ["oom"]},
    ...         {"kind": "question", "session": "s", "tier": "answer", "cited": ["oom"]},
    ...         {"kind": "question", "session": "t", "tier": "answer", "cited": ["oom"]},
    ...         {"kind": "question", "session": "s", "tier": "answer", "cited": ["nccl"]}]
    >>> [n for n, row in enumerate(rows) if id(row) in repeated_answers(rows)]
    [1]
    """
    last: dict[str, str] = {}
    out: set[int] = set()
    for row in rows:
        if row["kind"] != "question" or row.get("tier") != "answer" or not row.get("session"):
            continue
        first = (row.get("cited") or [""])[0]
        if first and last.get(row["session"]) == first:
            out.add(id(row))
        last[row["session"]] = first
    return out


def questions_by_answer(rows: Sequence[dict]) -> dict[str, dict]:
    """Each question row by the id of its reply, which the votes on that reply name (schema version 3 on).

    >>> questions_by_answer([{"kind": "question", "answer_id": "a1"}, {"kind": "vote", "answer_id": "a1"},
    ...                      {"kind": "question", "answer_id": None}])
    {'a1': {'kind': 'question', 'answer_id': 'a1'}}
    """
    return {row["answer_id"]: row for row in rows if row["kind"] == "question" and row.get("answer_id")}


def with_tiers(rows: Sequence[dict]) -> list[dict]:
    """``rows`` (oldest first) where a vote or a "didn't help" that carries no tier (one sent through /api/feedback,
    a row stored before tiers were recorded) takes the tier of the answer it is about: the question with its answer
    id, else the session's latest question before it. A row that says nothing either way keeps none ("–" on /admin;
    a PyTorch "didn't help" showed "–" although its answer was tentative).

    >>> from datetime import datetime as d
    >>> rows = [{"kind": "question", "tier": "tentative", "session": "s", "at": d(2026, 1, 1), "answer_id": "a"},
    ...         {"kind": "not_helpful", "tier": "", "session": "s", "at": d(2026, 1, 2)},
    ...         {"kind": "vote", "vote": "down", "session": "x", "at": d(2026, 1, 3), "answer_id": "a"}]
    >>> [r["tier"] for r in with_tiers(rows)]
    ['tentative', 'tentative', 'tentative']
    """
    by_answer: dict[str, str] = {}
    last_in_session: dict[str, str] = {}
    out = []
    for row in sorted(rows, key=lambda r: r["at"]):
        if row["kind"] == "question" and row.get("tier"):
            if row.get("answer_id"):
                by_answer[row["answer_id"]] = row["tier"]
            if row.get("session"):
                last_in_session[row["session"]] = row["tier"]
        elif not row.get("tier"):
            tier = by_answer.get(row.get("answer_id") or "") or last_in_session.get(row.get("session") or "", "")
            row = {**row, "tier": tier}
        out.append(row)
    return out


def read_gaps(rows: Sequence[dict], lexicon: Lexicon) -> tuple[list[Gap], Counter[str]]:
    """The gaps among ``rows`` (oldest first), each in its session's context, and the votes and "didn't help"
    on messages that are not questions (thanks, small talk …), by why. Such questions themselves are counted
    by :func:`build_report`.

    A 👎 names the answer it is about (``answer_id``): on a tentative or unanswered question it is attached to
    that question (its reason shown with it) instead of counting as a second gap; on a confident answer it is
    the gap, shown with that question's wording, tier, section and session. Rows stored before schema
    version 3 have no answer id on their question: such a vote is matched by session and wording instead.
    """
    rows = with_tiers(rows)
    left_out: Counter[str] = Counter()
    asked: dict[str, list[tuple[datetime, str]]] = defaultdict(list)  # session -> its questions, oldest first
    for row in rows:
        if row["kind"] == "question" and row.get("session") and (text := text_of(row)) and not_a_gap(text) is None:
            asked[row["session"]].append((row["at"], " ".join(str(row.get("question") or "").split()) or text))
    answered = questions_by_answer(rows)
    gaps: list[Gap] = []
    votes: list[tuple[dict, str]] = []
    for row in rows:
        kind = _item_kind(row)
        if kind is None:
            continue
        question = answered.get(row.get("answer_id") or "") if kind == "downvoted" else None
        text = text_of(question or row)  # a vote through /api/feedback may carry no wording: its question does
        if text and (why := not_a_gap(text)) is not None:
            if row["kind"] != "question":
                left_out[why] += 1
            continue
        if question is not None or (kind == "downvoted" and row.get("session")):
            votes.append((row, text))  # attached below when its question is a gap too
            continue
        gaps.append(_gap(row, kind, text, asked, lexicon))
    by_answer = {
        gap.answer_id: i for i, gap in enumerate(gaps) if gap.kind in ("unanswered", "tentative") and gap.answer_id
    }
    # Before version 3: a vote comes after its question, the latest gap question of the session with that wording.
    latest: dict[tuple[str, str], int] = {}
    for i, gap in sorted(enumerate(gaps), key=lambda pair: pair[1].at):
        if gap.kind in ("unanswered", "tentative") and gap.session and not gap.answer_id:
            latest[(gap.session, gap.text.casefold())] = i
    for row, text in votes:
        reason = row.get("reason") or "no reason"
        question = answered.get(row.get("answer_id") or "")
        if question is not None:
            i = by_answer.get(row["answer_id"])
            if i is None:  # a confident answer voted down: the vote is the gap, shown as its question was answered
                gap = _gap(question, "downvoted", text, asked, lexicon)
                gaps.append(replace(gap, at=row["at"], reasons=(reason,)))
                continue
        else:
            i = latest.get((row["session"], text.casefold()))
            i = i if i is not None and gaps[i].at <= row["at"] else None
        if i is not None:
            gaps[i] = replace(gaps[i], reasons=(*gaps[i].reasons, reason))
        else:
            gaps.append(_gap(row, "downvoted", text, asked, lexicon))
    gaps.sort(key=lambda g: g.at)
    return gaps, left_out


def _gap(row: dict, kind: GapKind, text: str, asked: dict, lexicon: Lexicon) -> Gap:
    earlier = [
        q for at, q in asked.get(row.get("session") or "", ()) if at < row["at"] and q.casefold() != text.casefold()
    ]
    context = tuple(earlier[-CONTEXT_QUESTIONS:]) if shown_in_context(text, earlier, row.get("signature") or "") else ()
    reasons = (row.get("reason") or "no reason",) if kind == "downvoted" else ()
    return Gap(
        row["at"],
        kind,
        text,
        row.get("tier") or "",
        (row.get("cited") or [""])[0],
        context,
        reasons,
        gap_subjects(text, context, lexicon) if text else frozenset(),
        row.get("session") or "",
        row.get("answer_id") or "" if row["kind"] == "question" else "",
    )
