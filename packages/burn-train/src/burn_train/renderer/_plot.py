"""Line plots drawn with braille characters (2x4 dots per terminal cell), for the dashboard."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from rich.text import Text

_BRAILLE = 0x2800
# Bit of dot (dx, dy) inside a braille cell, dy growing downwards.
_DOT = {(0, 0): 0x01, (0, 1): 0x02, (0, 2): 0x04, (1, 0): 0x08,
        (1, 1): 0x10, (1, 2): 0x20, (0, 3): 0x40, (1, 3): 0x80}  # fmt: skip


@dataclass
class Series:
    """Points `(x, y)` of one curve and its rich colour."""

    label: str
    color: str
    points: list[tuple[float, float]] = field(default_factory=list)


def _finite(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    return [(x, y) for x, y in points if math.isfinite(x) and math.isfinite(y)]


def _fmt(v: float) -> str:
    return f"{v:.3g}" if abs(v) < 1e4 else f"{v:.2e}"


def braille_plot(series: Sequence[Series], width: int, height: int) -> Text:
    """Render curves into `height` lines of `width` cells (y labels included).

    Example:
        >>> text = braille_plot([Series("train", "blue", [(0, 0), (1, 1)])], 20, 4)
        >>> len(text.plain.splitlines()), any("\\u2800" < c <= "\\u28ff" for c in text.plain)
        (4, True)
    """
    pts = [p for s in series for p in _finite(s.points)]
    if not pts:
        return Text("\n".join(["(no data yet)"] + [""] * (height - 1)), style="dim")
    ys = [y for _, y in pts]
    xs = [x for x, _ in pts]
    y_lo, y_hi = min(ys), max(ys)
    if y_hi - y_lo < 1e-12:  # a flat curve still needs a non-empty range
        y_lo, y_hi = y_lo - 0.5, y_hi + 0.5
    x_lo, x_hi = min(xs), max(xs)
    if x_hi - x_lo < 1e-12:
        x_hi = x_lo + 1.0
    label_w = max(len(_fmt(y_hi)), len(_fmt(y_lo))) + 1
    cols = max(width - label_w, 4)
    dots_w, dots_h = cols * 2, height * 4
    cells: dict[tuple[int, int], int] = {}
    colors: dict[tuple[int, int], str] = {}

    def dot(px: int, py: int, color: str) -> None:
        key = (px // 2, py // 4)
        cells[key] = cells.get(key, 0) | _DOT[(px % 2, py % 4)]
        colors[key] = color

    for s in series:
        prev = None
        for x, y in _finite(s.points):
            px = round((x - x_lo) / (x_hi - x_lo) * (dots_w - 1))
            py = round((y_hi - y) / (y_hi - y_lo) * (dots_h - 1))
            if prev is None:
                dot(px, py, s.color)
            else:  # join consecutive points so sparse curves stay readable
                steps = max(abs(px - prev[0]), abs(py - prev[1]), 1)
                for i in range(1, steps + 1):
                    dot(
                        round(prev[0] + (px - prev[0]) * i / steps),
                        round(prev[1] + (py - prev[1]) * i / steps),
                        s.color,
                    )
            prev = (px, py)

    text = Text()
    for row in range(height):
        label = _fmt(y_hi) if row == 0 else _fmt(y_lo) if row == height - 1 else ""
        text.append(label.rjust(label_w - 1) + "┤", style="dim")
        for col in range(cols):
            bits = cells.get((col, row), 0)
            text.append(chr(_BRAILLE + bits) if bits else " ", style=colors.get((col, row)))
        if row < height - 1:
            text.append("\n")
    return text
