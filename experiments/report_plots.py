"""Plots of the comparison report: leaderboards and head-to-head heat maps.

Every plot has a legend or a labelled colour bar, numbers with two decimals, text that stays
readable on every cell colour, and a colour scale that one outlier cannot wash out (it is
clipped at a robust limit, and the plot says so).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

KIND_COLORS = {
    "optimal": ("#d62728", "optimal (exact solver)"),
    "ppo": ("#9467bd", "PPO (trained network)"),
    "tuned": ("#2ca02c", "tuned parametric rule"),
    "baseline": ("#7f7f7f", "random baseline"),
    "reference": ("#ff7f0e", "reference rule of thumb"),
    "heuristic": ("#1f77b4", "rule of thumb"),
}
"""Bar colour and legend text of each kind of agent."""


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def robust_limit(values: np.ndarray) -> tuple[float, bool]:
    """A symmetric colour limit for ``values`` and whether any value lies beyond it.

    The limit is the largest absolute value unless that is more than three times the median
    absolute value: then that, so one outlying agent (a row and a column of extreme cells) does
    not wash out the scale.
    """
    a = np.abs(values[np.isfinite(values)])
    if a.size == 0:
        return 1.0, False
    top = float(a.max())
    robust = 3.0 * float(np.median(a))
    if robust > 0 and top > robust:
        return robust, True
    return max(top, 1e-9), False


def text_color(rgba: Sequence[float]) -> str:
    """Black or white, whichever reads better on a cell of colour ``rgba`` (WCAG luminance)."""

    def lin(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (lin(float(c)) for c in rgba[:3])
    luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return "black" if luminance > 0.179 else "white"


def plot_leaderboard(board: Sequence[Any], path: Path, title: str, reference: str = "") -> Path:
    """Horizontal bars of each agent's mean score with 95% intervals (and exact values).

    ``board`` holds ``Standing`` rows; ``reference`` is the rule of thumb drawn in its own
    colour. A legend names every colour used and the exact-value marker.
    """
    plt = _plt()
    from matplotlib.patches import Patch

    rows = list(reversed(board))
    y = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(8.0, 0.42 * len(rows) + 2.0))
    kinds = []
    for r in rows:
        kind = "reference" if r.label == reference and r.kind == "heuristic" else r.kind
        kinds.append(kind if kind in KIND_COLORS else "heuristic")
    means = [r.mean for r in rows]
    ax.barh(y, means, color=[KIND_COLORS[k][0] for k in kinds], alpha=0.8)
    ax.errorbar(means, y, xerr=[r.ci95 if math.isfinite(r.ci95) else 0.0 for r in rows],
                color="black", capsize=3, lw=1, ls="none")  # fmt: skip
    exact = [(r.exact, k) for k, r in enumerate(rows) if r.exact is not None]
    if exact:
        ax.plot(*zip(*exact, strict=True), marker="x", color="black", ms=7, ls="none")
    ax.set_yticks(y, [r.label for r in rows])
    ax.axvline(0, color="grey", lw=0.8)
    ax.set_xlabel("mean score per game vs all opponents, both seats (bar: sampled, 95% CI)")
    ax.set_title(title)
    handles = [Patch(color=KIND_COLORS[k][0], label=KIND_COLORS[k][1])
               for k in dict.fromkeys(kinds)]  # fmt: skip
    if exact:
        from matplotlib.lines import Line2D

        handles.append(Line2D([], [], marker="x", color="black", ls="none", label="exact value"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=3,
              fontsize=8, frameon=False)  # fmt: skip
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_head_to_head(matrix: np.ndarray, order: Sequence[str], path: Path, title: str) -> Path:
    """Heat map of the row agent's mean score against the column agent over both seats.

    Cells show two decimals in black or white by the cell's colour; the colour scale is clipped
    at a robust limit (:func:`robust_limit`) when an outlier would wash it out, and the colour
    bar says so. A ``nan`` cell (the two agents never met) shows ``-``.
    """
    plt = _plt()
    n = len(order)
    off = matrix[~np.eye(n, dtype=bool)] if n > 1 else np.zeros(0)
    off = off[np.isfinite(off)]  # nan: two agents that play the same one seat never meet
    lim, clipped = robust_limit(off)
    fig, ax = plt.subplots(figsize=(0.75 * n + 3.2, 0.6 * n + 2.4))
    cmap = plt.get_cmap("RdBu")
    shown = np.where(np.eye(n, dtype=bool), np.nan, matrix)
    im = ax.imshow(np.clip(shown, -lim, lim), cmap=cmap, vmin=-lim, vmax=lim)
    ax.set_xticks(range(n), order, rotation=60, ha="right")
    ax.set_yticks(range(n), order)
    for r in range(n):
        for c in range(n):
            v = matrix[r, c]
            if r == c or not np.isfinite(v):
                ax.text(
                    c,
                    r,
                    "·" if r == c else "-",
                    ha="center",
                    va="center",
                    fontsize=8,
                    in_layout=False,
                )
                continue
            rgba = cmap((np.clip(v, -lim, lim) + lim) / (2 * lim))
            mark = "*" if abs(v) > lim else ""
            ax.text(c, r, f"{v:+.2f}{mark}", ha="center", va="center", fontsize=7,
                    color=text_color(rgba), in_layout=False)  # fmt: skip
    label = "row's score vs column, both seats (exact where known)"
    if clipped:
        label += f"\ncolours clipped at ±{lim:.2f}; * beyond"
    fig.colorbar(im, ax=ax, label=label)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


__all__ = ["KIND_COLORS", "plot_head_to_head", "plot_leaderboard", "robust_limit", "text_color"]
