"""The toy edition's heuristics."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from toy_edition.rules import ROLL, STOP


class HoldAt:
    """Roll while the pot is below ``target`` and a roll is left, else bank."""

    def __init__(self, name: str, target: int):
        self.name = name
        self.target = target

    def action_probabilities(self, rules: Any, state: Hashable, player: int) -> dict[int, float]:
        """Roll or bank with probability 1."""
        legal = rules.legal_actions(state)
        roll = ROLL in legal and state.pot < self.target
        return {ROLL if roll else STOP: 1.0}


def cautious(rules: Any, arg: str | None = None) -> HoldAt:
    """Banks once the pot reaches 6 (``cautious:N`` sets the bar)."""
    return HoldAt("cautious", int(arg) if arg else 6)


def greedy(rules: Any, arg: str | None = None) -> HoldAt:
    """Rolls while it may."""
    return HoldAt("greedy", 10**6)


HEURISTICS = {"cautious": cautious, "greedy": greedy}
"""Name -> factory."""
