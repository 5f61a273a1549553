"""A :class:`~.report.Report` as text for a terminal (``python -m bot report``): totals with sparklines, then the
groups with their questions in context.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.web.admin.charts import binned_series, trimmed
from bot.web.admin.report import Example, Report
from bot.web.admin.texts import TEXTS

# Words, not emoji: a server-side Chromium or a terminal without an emoji font shows 👍/👎 as empty boxes.
WORDS = TEXTS["en"]

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


def in_context(example: Example) -> str:
    """One line for a terminal or a CSV cell.

    >>> in_context(Example("那多机呢？", 2, "none", "", ("多卡训练 NCCL 报错",), (("wrong_section", 1),)))
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
        out.append(f"  {WORDS[name]:<12} |{_spark_text(sums[name])}| {sum(sums[name])}")
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
        kinds = ", ".join(f"{WORDS[k]} {v}" for k, v in sorted(g.kinds.items(), key=lambda kv: -kv[1]))
        out.append(f"  {n:>2}. {g.size:>4}×  {g.label[:90]}  [{kinds}; {g.trend}]")
        for example in g.examples:
            out.append(f"          {example.times:>3}× {in_context(example)[:110]}")
        if g.section:
            out.append(f"          nearest section: {g.section[:90]}")
    out += ["", f"{'section':<60} {'cited':>6} {'up':>4} {'down':>4} {'didnt help':>10}  down-vote reasons"]
    for s in report.sections[:40]:
        out.append(f"{_fit(s.title, 60)} {s.cited:>6} {s.up:>4} {s.down:>4} {s.not_helpful:>10}  {s.reasons_text}")
    if not report.sections:
        out.append("  (none)")
    return "\n".join(out)
