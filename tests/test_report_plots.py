"""Plots of the comparison report: robust colour scale, readable cell text, legends."""

from __future__ import annotations

import numpy as np
from psygym_experiments.report_plots import (
    KIND_COLORS,
    plot_head_to_head,
    plot_leaderboard,
    robust_limit,
    text_color,
)


def test_one_outlier_does_not_wash_out_the_scale():
    values = np.array([0.05, -0.1, 0.2, -0.3, 0.15, 0.1, -0.05, 0.25, -0.2, -17.0])
    lim, clipped = robust_limit(values)
    assert clipped and lim < 1.0
    lim2, clipped2 = robust_limit(values[:-1])
    assert not clipped2 and lim2 == 0.3


def test_text_is_white_on_dark_cells_and_black_on_light_ones():
    import matplotlib

    cmap = matplotlib.colormaps["RdBu"]
    assert text_color(cmap(0.0)) == "white"  # darkest red
    assert text_color(cmap(1.0)) == "white"  # darkest blue
    assert text_color(cmap(0.5)) == "black"  # near white


def test_plots_are_written(tmp_path):
    from types import SimpleNamespace

    board = [SimpleNamespace(label=n, kind=k, mean=m, ci95=0.1, exact=m)
             for n, k, m in [("optimal", "optimal", 0.3), ("double-wc", "heuristic", 0.1),
                             ("random", "baseline", -0.4)]]  # fmt: skip
    assert plot_leaderboard(board, tmp_path / "l.png", "t", "double-wc").is_file()
    m = np.array([[0, 0.048, 17.0], [-0.048, 0, 0.2], [-17.0, -0.2, 0]])
    assert plot_head_to_head(m, ["a", "b", "pass"], tmp_path / "h.png", "t").is_file()
    assert {"optimal", "ppo", "tuned", "baseline", "heuristic"} <= set(KIND_COLORS)
