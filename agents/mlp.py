"""The forward pass of a small dense network in NumPy.

Shared by the trained policies that play without torch (:mod:`psygym_agents.policy_net`) and
the board value (:mod:`psygym_agents.value.model`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np


def dense_forward(
    h: np.ndarray,
    layers: Sequence[tuple[np.ndarray, np.ndarray]],
    activation: Callable[[np.ndarray], np.ndarray],
) -> np.ndarray:
    """``h @ W + b`` for each ``(W, b)`` in turn, ``activation`` after every layer but the last.

    ``h`` is one input (a vector) or a batch (rows); each ``W`` has one row per input.
    """
    last = len(layers) - 1
    for i, (w, b) in enumerate(layers):
        h = h @ w + b
        if i < last:
            h = activation(h)
    return h


__all__ = ["dense_forward"]
