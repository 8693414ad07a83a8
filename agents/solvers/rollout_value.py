"""A board value from rollouts of the edition's reference heuristic, where no value is shipped.

Counting the board beyond a search's horizon as worth nothing makes the first power of a phase
take every die and every enemy power look worth denying at any price. Where an edition ships no
learned value (a plug-in edition, say), the ``search`` agent values a leaf instead by playing the
rest of the game out with the edition's reference heuristic in both seats, ``rollouts`` times,
and averaging what player 0 gains: the value of the reference heuristic's own play from the
board. A search over that value improves on the heuristic (one step of policy improvement); it
is no substitute for a learned value's speed, since every leaf costs whole games.

Every board's playouts throw the same dice (common random numbers: one seed for all boards).
A search compares sibling leaves, and what tells them apart (a psi-point kept, a die saved) is
far smaller than one game's luck; with the same dice behind each, most of that luck cancels in
their difference, and the value is a fixed function of the board, whatever was asked before.
On ten small Rogue Trader lists, at 64 playouts a board, it took the seats that lose more
than 0.02 a game to the exact optimum from 6 to 3 (docs/strength.md).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np

from psygym.core import CHANCE, TERMINAL

ROLLOUTS = 8
"""Games played out per leaf (psygym default: the mean's noise is about a third of one game's)."""


class RolloutValue:
    """``V(state)``: the mean points player 0 gains from ``state`` in ``rollouts`` playouts.

    Both seats play ``policy``; chance follows the rules' exact odds. Each board's playouts
    draw from a generator seeded with ``seed`` afresh (common random numbers), so the value of
    a board does not depend on which boards were valued before it. Memoised by state.

    Args:
        policy: the policy of both seats (the edition's reference heuristic).
        rollouts: games played out per board (at least 1).
        seed: seeds the playouts' dice and the policy's random choices, for every board.
    """

    def __init__(self, policy: Any, rollouts: int = ROLLOUTS, seed: int = 0):
        if rollouts < 1:
            raise ValueError(f"rollouts must be at least 1, got {rollouts}")
        self.policy = policy
        self.rollouts = rollouts
        self.seed = seed
        self.meta: dict[str, Any] = {"rollouts": rollouts}
        self._memo: dict[Hashable, float] = {}

    @property
    def error_note(self) -> str:
        """What the value is, in player words (the ``search`` agent's note quotes it)."""
        return f"the reference heuristic's play, the mean of {self.rollouts} games played out"

    def __call__(self, rules: Any, state: Hashable) -> float:
        """Mean gain of player 0 from ``state`` to the end of the game."""
        hit = self._memo.get(state)
        if hit is None:
            if len(self._memo) > 200_000:
                self._memo.clear()
            start = rules.returns(state)[0]
            rng = np.random.default_rng(self.seed)
            total = sum(self._play_out(rules, state, rng) - start for _ in range(self.rollouts))
            hit = self._memo[state] = total / self.rollouts
        return hit

    def _play_out(self, rules: Any, s: Hashable, rng: np.random.Generator) -> float:
        """Player 0's final score of one playout from ``s``, its dice and choices from ``rng``."""
        policy = self.policy
        while True:
            player = rules.current_player(s)
            if player == TERMINAL:
                return float(rules.returns(s)[0])
            if player == CHANCE:
                outcomes = rules.chance_outcomes(s)
                probs = np.fromiter((p for _, p in outcomes), float, len(outcomes))
                a = outcomes[int(rng.choice(len(outcomes), p=probs / probs.sum()))][0]
            else:
                dist = policy.action_probabilities(rules, s, player)
                if len(dist) == 1:
                    (a,) = dist
                else:
                    actions = list(dist)
                    weights = np.fromiter(dist.values(), float, len(actions))
                    a = actions[int(rng.choice(len(actions), p=weights / weights.sum()))]
            s = rules.apply(s, a)


__all__ = ["ROLLOUTS", "RolloutValue"]
