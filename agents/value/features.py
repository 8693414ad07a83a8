"""Board features: a fixed-size reading of any scenario's board, so one value serves an edition.

A scenario's observation (``rules.observe(state, 0)``) has a layout of its own: one block per
unit, one entry per power, so its length and meaning change from list to list. Board features
are the same named quantities for every scenario of an edition: the points each side still has
on the table, its living psykers and their mastery, what the powers they know are worth against
the enemy, the dice pools, the battle round and rounds left, the pending cast.

Each edition computes them as a **linear map of the observation** built from the scenario's
facts (``phi = obs @ matrix + offset``): the facts fix the coefficients (a unit's points per
wound, a power's expected damage against the best enemy target), the observation brings what
changes. A general value (an MLP over ``phi``, :mod:`psygym_agents.value.general`) composed
with that map is an ordinary board value over the scenario's observation, so the compiled
search evaluates it with no new code: the first layer absorbs the map.

An edition declares its map as the tool ``board_features`` of its agents' manifest
(``Bots.tools``): ``f(rules) -> BoardFeatures``, the names in a fixed order of its own.

An edition may also say which features the rules make **monotone**: a resource its holder
may use but never has to (psi-points that carry over, the point a resting psyker gets back)
is never worth less to its own side, whatever else is on the board. A fit keeps the
value monotone in them (:func:`psygym_agents.value.fit.fit_value`), because games between
heuristics confound them: the psykers that keep their points are the ones with nothing to use
them on, and a value fitted to those games alone learns that points are bad.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

TOOL = "board_features"
"""Name of an edition's board-features tool in its agents' manifest."""


@dataclass(frozen=True, eq=False)
class BoardFeatures:
    """One scenario's board features: ``phi = obs @ matrix + offset``.

    Attributes:
        names: the features, in the edition's fixed order.
        matrix: ``observation_size x len(names)`` coefficients.
        offset: ``len(names)`` constants (what the scenario alone fixes).
        monotone: directions in which the rules say the board is worth no less to player 0,
            each as ``(name, step)`` pairs: one more of a resource, say (a step of -1 for the
            enemy's).
    """

    names: tuple[str, ...]
    matrix: np.ndarray
    offset: np.ndarray
    monotone: tuple[tuple[tuple[str, float], ...], ...] = ()

    def directions(self) -> np.ndarray:
        """The monotone directions as rows over the features (``len(monotone) x len(names)``)."""
        index = {n: i for i, n in enumerate(self.names)}
        rows = np.zeros((len(self.monotone), len(self.names)))
        for r, direction in enumerate(self.monotone):
            for name, step in direction:
                rows[r, index[name]] += step
        return rows

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        """Features of one observation or of a batch of them (rows)."""
        return np.asarray(obs, np.float64) @ self.matrix + self.offset


class FeatureBuilder:
    """Collects the coefficients of a :class:`BoardFeatures` one feature at a time.

    Args:
        names: the edition's feature names, in order.
        observation_size: the scenario's observation length.
        monotone: the directions the rules make monotone, each a mapping from feature name
            to step (:class:`BoardFeatures`).

    Raises:
        ValueError: a monotone direction names an unknown feature or a step that is 0 or not
            finite.
    """

    def __init__(self, names: Sequence[str], observation_size: int,
                 monotone: Sequence[Mapping[str, float]] = ()):  # fmt: skip
        self.names = tuple(names)
        self._index = {n: i for i, n in enumerate(self.names)}
        for direction in monotone:
            for name, step in direction.items():
                if name not in self._index or not (np.isfinite(step) and step != 0):
                    raise ValueError(f"board features: monotone step {name}={step} is not a "
                                     "feature with a finite, non-zero step")  # fmt: skip
        self.monotone = tuple(tuple((str(n), float(v)) for n, v in d.items()) for d in monotone)
        self.matrix = np.zeros((observation_size, len(self.names)))
        self.offset = np.zeros(len(self.names))

    def add(self, name: str, entry: int, coefficient: float = 1.0) -> None:
        """Feature ``name`` gains ``coefficient`` times observation entry ``entry``."""
        self.matrix[entry, self._index[name]] += coefficient

    def constant(self, name: str, value: float) -> None:
        """Feature ``name`` gains the constant ``value``."""
        self.offset[self._index[name]] += value

    def build(self) -> BoardFeatures:
        """The finished features (every number finite)."""
        if not (np.isfinite(self.matrix).all() and np.isfinite(self.offset).all()):
            raise ValueError("board features: a coefficient is not a finite number")
        return BoardFeatures(self.names, self.matrix.copy(), self.offset.copy(), self.monotone)


def features_tool(edition: str) -> Any:
    """The edition's ``board_features`` function, or ``None`` when its agents declare none."""
    from psygym.edition import resolve
    from psygym.policies import bots_for

    bots = bots_for(edition)
    target = None if bots is None else bots.tools.get(TOOL)
    return None if target is None else resolve(target)


def board_features(rules: Any) -> BoardFeatures | None:
    """``rules``' board features, or ``None`` when its edition has no board-features tool."""
    tool = features_tool(rules.edition)
    return None if tool is None else tool(rules)


__all__ = ["TOOL", "BoardFeatures", "FeatureBuilder", "board_features", "features_tool"]
