"""Charts for /admin as inline SVG (no script, no CDN), from one template: ``templates/chart.svg``.

One function, :func:`chart`, for every chart and the per-group sparklines. It reads well with one
day of data or a year:

- the axis starts at the first day with any data (a fresh install's single day is not a spike at
  the right edge of an empty month);
- up to 31 days are shown per day, up to 26 weeks per week, longer per month (:func:`bins`);
- with few bins (:data:`FEW`) every bin is a labelled bar: one day of traffic reads as four bars
  with their numbers, not a point; with many, lines (or stacked bars) and a few dated ticks.

Geometry is computed here (plain frozen records); the template only draws it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from functools import lru_cache
from pathlib import Path
from typing import Literal

from markupsafe import Markup

TEMPLATES = Path(__file__).parent / "templates"
Unit = Literal["day", "week", "month"]
Style = Literal["lines", "stacked"]
FEW = 14  # at most this many bins: labelled bars, every bin named on the axis
# The phone's twin of each chart is drawn this wide, so that on a 360-430 px phone (about 310-380 px of card) it is
# shown at 1-1.25x and its 11 px axis text stays 11 px or more: the 560 wide chart shrank to 0.6x there (6.7 px type).
PHONE_WIDTH = 300
LABEL_MIN_WIDTH = 18.0  # side-by-side bars narrower than this could not carry their numbers: lines instead
COLORS = {
    "questions": "#0969da",
    "answered": "#1a7f37",
    "tentative": "#bf8700",
    "unanswered": "#cf222e",
    "up": "#1a7f37",
    "down": "#cf222e",
    "not_helpful": "#8250df",
    "gaps": "#cf222e",
}


@dataclass(frozen=True)
class Bin:
    start: date
    end: date  # inclusive

    def label(self, unit: Unit) -> str:
        return self.start.strftime("%Y-%m") if unit == "month" else self.start.strftime("%m-%d")

    def span(self) -> str:
        return self.start.isoformat() if self.start == self.end else f"{self.start} … {self.end}"


def bins(days: Sequence[date]) -> tuple[Unit, list[Bin]]:
    """The bins for a run of consecutive days: per day up to 31, per week (Monday first) up to 26, else per month.

    >>> d = [date(2026, 1, 1) + timedelta(n) for n in range(365)]
    >>> unit, found = bins(d); unit, len(found), found[0].span(), found[-1].label(unit)
    ('month', 12, '2026-01-01 … 2026-01-31', '2026-12')
    >>> unit, found = bins(d[:60]); unit, len(found), found[0].span()
    ('week', 9, '2026-01-01 … 2026-01-04')
    >>> bins(d[:1])[0], len(bins(d[:1])[1])
    ('day', 1)
    """
    if not days:
        return "day", []
    first, last = days[0], days[-1]
    n = (last - first).days + 1
    if n <= 31:
        return "day", [Bin(d, d) for d in days]
    unit: Unit = "week" if n <= 26 * 7 else "month"
    out: list[Bin] = []
    start = first
    while start <= last:
        if unit == "week":
            end = start + timedelta(days=6 - start.weekday())
        else:
            following = date(start.year + start.month // 12, start.month % 12 + 1, 1)
            end = following - timedelta(days=1)
        end = min(end, last)
        out.append(Bin(start, end))
        start = end + timedelta(days=1)
    return unit, out


def trimmed(days: Sequence[date], series: Mapping[str, Sequence[int]]) -> int:
    """Index of the first day any series has data (0 when none has): the charts start there.

    >>> trimmed([date(2026, 1, n) for n in (1, 2, 3)], {"a": [0, 0, 2], "b": [0, 1, 0]})
    1
    """
    firsts = [next((i for i, v in enumerate(values) if v), len(days)) for values in series.values()]
    first = min(firsts, default=0)
    return 0 if first >= len(days) else first


def binned_series(
    days: Sequence[date], series: Mapping[str, Sequence[int]], names: Sequence[str], start: int = 0
) -> tuple[Unit, list[Bin], dict[str, list[int]]]:
    """Daily ``series`` from day ``start`` on, summed per :func:`bins` bin.

    >>> d = [date(2026, 1, 1) + timedelta(n) for n in range(40)]
    >>> unit, found, sums = binned_series(d, {"q": [1] * 40}, ["q"]); unit, sums["q"][:2], sum(sums["q"])
    ('week', [4, 7], 40)
    """
    unit, found = bins(list(days[start:]))
    first = days[start] if found else None
    return (
        unit,
        found,
        {
            name: [sum(series[name][start + (b.start - first).days : start + (b.end - first).days + 1]) for b in found]
            for name in names
        },
    )


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    color: str
    title: str
    value: int
    label: bool  # the number is written above the bar


@dataclass(frozen=True)
class Line:
    """One series as an SVG polyline, with its dots."""

    points: str
    color: str
    title: str
    dots: tuple[tuple[float, float, str], ...]  # x, y, tooltip (few points: each one visible)


@dataclass(frozen=True)
class Tick:
    """An axis label at (x, y)."""

    x: float
    y: float
    text: str
    anchor: str = "middle"


@dataclass(frozen=True)
class Legend:
    """One series' colour and name under a chart."""

    color: str
    text: str


@dataclass(frozen=True)
class ChartView:
    """Everything the chart template draws, in pixels."""

    title: str
    width: int
    height: int
    left: int
    right: int
    grid: tuple[Tick, ...]  # y ticks: a grid line at y, the number at the left
    xticks: tuple[Tick, ...]
    bars: tuple[Bar, ...]
    lines: tuple[Line, ...]
    legend: tuple[Legend, ...]
    empty: str  # shown instead of the plot when there is no data
    small: bool = False
    unit_note: str = ""


def _nice_max(peak: int) -> tuple[int, int]:
    """(step, top) for about four grid lines.

    >>> _nice_max(0), _nice_max(7), _nice_max(103)
    ((1, 1), (2, 8), (26, 104))
    """
    peak = max(1, peak)
    step = max(1, math.ceil(peak / 4))
    return step, step * math.ceil(peak / step)


def _fits(value: int, room: float) -> bool:
    """Whether a number written above a bar fits the room its bin has (11 px type: about 7 px a digit); a
    phone's narrow chart of a year has 18 px a month, too little for "280" beside "256".

    >>> _fits(280, 38.0), _fits(280, 18.2), _fits(56, 18.2)
    (True, False, True)
    """
    return 7 * len(str(value)) + 2 <= room


def chart(
    days: Sequence[date],
    series: Mapping[str, Sequence[int]],
    names: Sequence[str],
    title: str,
    *,
    style: Style = "lines",
    words: Mapping[str, str] | None = None,
    small: bool = False,
    start: int | None = None,
    width: int = 560,
    height: int = 200,
) -> Markup:
    """An SVG chart of ``names`` from daily ``series``, as markup for a template (text escaped by Jinja2).

    ``words`` names the series and units in the page's language; ``start`` is the first day to show
    (default: the first with data, see :func:`trimmed`); ``small`` draws a 120x24 sparkline.
    """
    words = words or {}
    start = trimmed(days, {n: series[n] for n in names}) if start is None else start
    unit, found, binned = binned_series(days, series, names, start)
    if small:
        width, height = 120, 24
    left, right, top, bottom = (1, 1, 2, 2) if small else (36, 28, 40, 24)
    # top: the title, then room for the numbers above bars; right: half a date label past the last bin
    plot_w, plot_h = width - left - right, height - top - bottom
    n = max(len(found), 1)
    slot = plot_w / n
    few = len(found) <= FEW
    stacked = style == "stacked" or small
    peak = max(
        [
            0,
            *(
                sum(binned[name][i] for name in names) if stacked else max(binned[name][i] for name in names)
                for i in range(len(found))
            ),
        ]
    )
    step, y_max = _nice_max(peak)

    def y(v: float) -> float:
        return top + plot_h - plot_h * v / y_max

    def center(i: int) -> float:
        return left + slot * (i + 0.5)

    def name_of(name: str) -> str:
        return words.get(name, name)

    bars: list[Bar] = []
    lines: list[Line] = []
    # Side-by-side bars only while each can carry its number; more bins read better as lines with dots.
    grouped = not stacked and few and slot * 0.8 / len(names) >= LABEL_MIN_WIDTH
    if stacked or grouped:
        per = 1 if stacked else len(names)
        bar = min(40.0 if stacked else 26.0, slot * (0.7 if stacked else 0.8) / per)
        if small:
            bar = max(1.0, slot * 0.8)
        for i, b in enumerate(found):
            base = 0
            for j, name in enumerate(names):
                v = binned[name][i]
                if not v and stacked:
                    continue
                x = center(i) - bar * per / 2 + (0 if stacked else j * bar)
                top_v = base + v if stacked else v
                bars.append(
                    Bar(
                        round(x, 1),
                        round(y(top_v), 1),
                        round(bar, 1),
                        round(y(base if stacked else 0) - y(top_v), 1),
                        COLORS[name],
                        f"{b.span()}: {v} {name_of(name)}",
                        v,
                        few and not small and not stacked,
                    )
                )
                if stacked:
                    base += v
            # One number per stack, its total; every stack's or none (a lone "56" beside unlabelled bars misleads).
            if stacked and few and not small and base and _fits(peak, slot):
                bars.append(
                    Bar(
                        round(center(i) - bar / 2, 1),
                        round(y(base), 1),
                        round(bar, 1),
                        0.0,
                        "none",
                        f"{b.span()}: {base}",
                        base,
                        True,
                    )
                )
    else:
        for name in names:
            points = [(round(center(i), 1), round(y(v), 1)) for i, v in enumerate(binned[name])]
            dots = (
                tuple(
                    (px, py, f"{found[i].span()}: {binned[name][i]} {name_of(name)}")
                    for i, (px, py) in enumerate(points)
                )
                if len(found) <= 62
                else ()
            )
            lines.append(Line(" ".join(f"{px},{py}" for px, py in points), COLORS[name], name_of(name), dots))

    grid = () if small else tuple(Tick(left - 6, round(y(v), 1), str(v), "end") for v in range(0, y_max + 1, step))
    if small or not found:
        xticks: tuple[Tick, ...] = ()
    else:
        # As many dated ticks as fit side by side (11 px type: about 7 px a character), the last bin always named.
        every = max(1, math.ceil((7 * len(found[0].label(unit)) + 10) / slot))
        shown = [i for i in range(len(found)) if (len(found) - 1 - i) % every == 0]
        # A label centred under a narrow first bin would reach under the counts' axis ("0"): it starts at the plot.
        xticks = tuple(
            Tick(left, height - bottom + 16, found[i].label(unit), "start")
            if center(i) - 3.5 * len(found[i].label(unit)) < left
            else Tick(round(center(i), 1), height - bottom + 16, found[i].label(unit))
            for i in shown
        )
    legend = tuple(Legend(COLORS[name], f"{name_of(name)} ({sum(binned[name])})") for name in names)
    note = words.get(f"per_{unit}", f"per {unit}") if not small else ""
    view = ChartView(
        title,
        width,
        height,
        left,
        right,
        grid,
        xticks,
        tuple(bars),
        tuple(lines),
        legend,
        words.get("no_data", "no data in this period") if peak == 0 else "",
        small,
        note,
    )
    return Markup(_template().render(chart=view))


@lru_cache(maxsize=1)
def _template():
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, trim_blocks=True, lstrip_blocks=True
    )
    return env.get_template("chart.svg")
