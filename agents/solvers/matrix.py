"""Zero-sum matrix games solved by linear programming (simultaneous moves, e.g. secret bids).

A simultaneous-move node is a matrix game: the row player picks a row, the column player a
column without seeing it, and the row player gets ``payoff[i][j]`` (the column player its
negative). Its value and optimal mixed strategies come from one linear program per player::

    max v  s.t.  sum_i x_i A[i, j] >= v  for every column j,  sum_i x_i = 1,  x >= 0
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def _maximin(a: np.ndarray) -> tuple[float, np.ndarray]:
    """Value and optimal mixed strategy of the row player (who maximises) of ``a``."""
    from scipy.optimize import linprog

    rows, cols = a.shape
    # Variables: x_0..x_{rows-1}, v. Minimise -v.
    c = np.zeros(rows + 1)
    c[-1] = -1.0
    a_ub = np.hstack([-a.T, np.ones((cols, 1))])  # v - sum_i x_i A[i, j] <= 0
    b_ub = np.zeros(cols)
    a_eq = np.zeros((1, rows + 1))
    a_eq[0, :rows] = 1.0
    bounds = [(0, None)] * rows + [(None, None)]
    res = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=[1.0], bounds=bounds, method="highs")
    if res.status != 0:  # pragma: no cover - a finite matrix game always has a solution
        raise RuntimeError(f"linear program failed: {res.message}")
    x = np.clip(res.x[:rows], 0.0, None)
    x /= x.sum()
    return float(res.x[-1]), x


def solve_matrix_game(
    payoff: Sequence[Sequence[float]] | np.ndarray,
) -> tuple[float, np.ndarray, np.ndarray]:
    """Solve a two-player zero-sum matrix game exactly (up to the LP solver's tolerance).

    Args:
        payoff: ``payoff[i][j]`` is what the row player (maximiser) gets when it plays row ``i``
            and the column player (minimiser) plays column ``j``.

    Returns:
        ``(value, row_strategy, col_strategy)``: the game value for the row player and optimal
        mixed strategies (probability vectors over rows and columns).

    Raises:
        ValueError: the matrix is empty or not two-dimensional.
    """
    a = np.asarray(payoff, dtype=float)
    if a.ndim != 2 or a.size == 0:
        raise ValueError(f"a matrix game needs a non-empty 2-D payoff matrix, got shape {a.shape}")
    rows, cols = a.shape
    # Pure saddle point (always the case for a single row or column): no LP needed.
    row_min = a.min(axis=1)
    col_max = a.max(axis=0)
    lower, upper = row_min.max(), col_max.min()
    if np.isclose(lower, upper, rtol=0, atol=1e-12):
        x = np.zeros(rows)
        x[int(row_min.argmax())] = 1.0
        y = np.zeros(cols)
        y[int(col_max.argmin())] = 1.0
        return float(lower), x, y
    value, x = _maximin(a)
    _, y = _maximin(-a.T)  # the column player maximises -A^T
    return value, x, y


__all__ = ["solve_matrix_game"]
