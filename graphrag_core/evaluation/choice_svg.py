"""The choice on one criterion as a standalone SVG picture (evaluation spec section 8), for the
report and slides: the same drawing as the Evaluate page's chart, with no plotting library.

Prompt tokens per answer on the x axis (log scale), overall win rate on the y axis (0-100, the
even line at 50) with each condition's 95% interval as an error bar; points coloured by method,
the Pareto front as a dashed line, the recommended condition a star. Pure: a :class:`Choice` in,
SVG text out; every text is XML-escaped.
"""

from __future__ import annotations

import math
from xml.sax.saxutils import escape

from ..methods import METHOD_WORDS
from .choice import Choice, ChoicePoint

METHOD_COLORS = {"global": "#2166ac", "text": "#d95f02", "vector": "#1b9e77"}
"""One colour per method, the same in every choice picture (the app's chart uses them too)."""
RECOMMENDED_COLOR = "#e6ab02"
WIDTH, HEIGHT = 760, 420
LEFT, RIGHT, TOP, BOTTOM = 64, 230, 44, 52
FONT = "font-family='Helvetica, Arial, sans-serif'"


def _ticks(low: float, high: float) -> list[float]:
    """1-2-5 ticks of a log axis between ``low`` and ``high``."""
    ticks = []
    for exponent in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1):
        for mantissa in (1, 2, 5):
            value = mantissa * 10**exponent
            if low <= value <= high:
                ticks.append(float(value))
    return ticks


def _tokens(value: float) -> str:
    if value >= 1_000_000:
        return f"{value / 1_000_000:g}M"
    return f"{value / 1000:g}k" if value >= 1000 else f"{value:g}"


def _star(x: float, y: float, outer: float) -> str:
    points = []
    for i in range(10):
        radius = outer if i % 2 == 0 else outer * 0.45
        angle = math.pi / 2 + i * math.pi / 5
        points.append(f"{x + radius * math.cos(angle):.1f},{y - radius * math.sin(angle):.1f}")
    return " ".join(points)


def choice_svg(choice: Choice) -> str:
    """The SVG picture of ``choice`` (see the module docstring)."""
    plotted = [p for p in choice.points if p.win_rate is not None and p.prompt_tokens_per_answer]
    title = f"{choice.criterion}{' (heuristic judge)' if choice.heuristic else ''}: cost against quality"
    parts = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{WIDTH}' height='{HEIGHT}' viewBox='0 0 {WIDTH} {HEIGHT}'>",
        f"<rect width='{WIDTH}' height='{HEIGHT}' fill='white'/>",
        f"<text x='{LEFT}' y='24' {FONT} font-size='15' font-weight='bold'>{escape(title)}</text>",
    ]
    if not plotted:
        parts += [f"<text x='{LEFT}' y='{HEIGHT / 2}' {FONT} font-size='13'>Nothing was judged on this criterion.</text>", "</svg>"]
        return "\n".join(parts)
    costs = [p.prompt_tokens_per_answer or 1.0 for p in plotted]
    low, high = min(costs) / 1.4, max(costs) * 1.4
    inner_w, inner_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x_of(cost: float) -> float:
        return LEFT + inner_w * (math.log10(cost) - math.log10(low)) / (math.log10(high) - math.log10(low))

    def y_of(rate: float) -> float:
        return TOP + inner_h * (1 - rate / 100.0)

    for rate in (0, 25, 50, 75, 100):
        y = y_of(rate)
        dash = " stroke-dasharray='3,3'" if rate == 50 else ""
        parts.append(f"<line x1='{LEFT}' y1='{y:.1f}' x2='{LEFT + inner_w}' y2='{y:.1f}' stroke='{'#999' if rate == 50 else '#e5e5e5'}'{dash}/>")
        parts.append(f"<text x='{LEFT - 8}' y='{y + 4:.1f}' {FONT} font-size='11' text-anchor='end' fill='#555'>{rate}</text>")
    parts.append(f"<text x='{LEFT + 4}' y='{y_of(50) - 4:.1f}' {FONT} font-size='10' fill='#888'>even (50)</text>")
    for tick in _ticks(low, high):
        x = x_of(tick)
        parts.append(f"<line x1='{x:.1f}' y1='{TOP}' x2='{x:.1f}' y2='{TOP + inner_h}' stroke='#f0f0f0'/>")
        parts.append(f"<text x='{x:.1f}' y='{TOP + inner_h + 16}' {FONT} font-size='11' text-anchor='middle' fill='#555'>{_tokens(tick)}</text>")
    parts.append(f"<rect x='{LEFT}' y='{TOP}' width='{inner_w}' height='{inner_h}' fill='none' stroke='#bbb'/>")
    parts.append(
        f"<text x='{LEFT + inner_w / 2:.1f}' y='{HEIGHT - 12}' {FONT} font-size='12' text-anchor='middle' fill='#333'>prompt tokens per answer (log scale)</text>"
    )
    parts.append(
        f"<text x='16' y='{TOP + inner_h / 2:.1f}' {FONT} font-size='12' text-anchor='middle' fill='#333' "
        f"transform='rotate(-90 16 {TOP + inner_h / 2:.1f})'>overall win rate (95% CI)</text>"
    )
    front = sorted((p for p in plotted if p.pareto), key=lambda p: p.prompt_tokens_per_answer or 0)
    if len(front) > 1:
        path = " ".join(f"{x_of(p.prompt_tokens_per_answer or 1):.1f},{y_of(p.win_rate or 0):.1f}" for p in front)
        parts.append(f"<polyline points='{path}' fill='none' stroke='#555' stroke-width='1.5' stroke-dasharray='6,4'/>")
    for point in sorted(plotted, key=lambda p: p.recommended):
        parts += _point(point, x_of(point.prompt_tokens_per_answer or 1), y_of)
    parts += _legend(choice)
    parts.append("</svg>")
    return "\n".join(parts)


def _point(point: ChoicePoint, x: float, y_of) -> list[str]:  # noqa: ANN001 - the y scale
    color = METHOD_COLORS.get(point.method, "#333")
    y = y_of(point.win_rate or 0)
    parts = []
    if point.ci_low is not None and point.ci_high is not None:
        top, bottom = y_of(point.ci_high), y_of(point.ci_low)
        parts += [
            f"<line x1='{x:.1f}' y1='{top:.1f}' x2='{x:.1f}' y2='{bottom:.1f}' stroke='{color}' stroke-width='1.5'/>",
            f"<line x1='{x - 4:.1f}' y1='{top:.1f}' x2='{x + 4:.1f}' y2='{top:.1f}' stroke='{color}' stroke-width='1.5'/>",
            f"<line x1='{x - 4:.1f}' y1='{bottom:.1f}' x2='{x + 4:.1f}' y2='{bottom:.1f}' stroke='{color}' stroke-width='1.5'/>",
        ]
    if point.recommended:
        parts.append(f"<polygon points='{_star(x, y, 13)}' fill='{RECOMMENDED_COLOR}' stroke='{color}' stroke-width='1.5'/>")
    else:
        parts.append(f"<circle cx='{x:.1f}' cy='{y:.1f}' r='6.5' fill='{color}' stroke='white' stroke-width='1'/>")
    label = escape(point.condition) + (" (recommended)" if point.recommended else "")
    parts.append(f"<text x='{x + 12:.1f}' y='{y + 4:.1f}' {FONT} font-size='12' fill='#222'>{label}</text>")
    return parts


def _legend(choice: Choice) -> list[str]:
    x, y = WIDTH - RIGHT + 20, TOP + 10
    parts = []
    methods = [m for m in METHOD_COLORS if any(p.method == m for p in choice.points)]
    for method in methods:
        parts.append(f"<circle cx='{x + 6}' cy='{y}' r='6' fill='{METHOD_COLORS[method]}'/>")
        parts.append(f"<text x='{x + 18}' y='{y + 4}' {FONT} font-size='11' fill='#333'>{escape(METHOD_WORDS[method])}</text>")
        y += 22
    parts.append(f"<line x1='{x}' y1='{y}' x2='{x + 14}' y2='{y}' stroke='#555' stroke-width='1.5' stroke-dasharray='6,4'/>")
    parts.append(f"<text x='{x + 18}' y='{y + 4}' {FONT} font-size='11' fill='#333'>Pareto front</text>")
    y += 24
    parts.append(f"<polygon points='{_star(x + 7, y, 8)}' fill='{RECOMMENDED_COLOR}' stroke='#555'/>")
    parts.append(f"<text x='{x + 18}' y='{y + 4}' {FONT} font-size='11' fill='#333'>recommended</text>")
    return parts


__all__ = ["METHOD_COLORS", "RECOMMENDED_COLOR", "choice_svg"]
