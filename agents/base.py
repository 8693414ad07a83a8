"""Building blocks shared by every policy: deterministic rules of thumb and the random policy."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable
from typing import Any


class DeterministicPolicy(ABC):
    """A policy that picks one action; subclasses implement :meth:`choose`."""

    name: str = "deterministic"

    @abstractmethod
    def choose(self, rules: Any, state: Hashable, player: int) -> int:
        """The action to take (must be legal)."""

    def action_probabilities(self, rules: Any, state: Hashable, player: int) -> dict[int, float]:
        """The chosen action with probability 1."""
        return {self.choose(rules, state, player): 1.0}

    def __repr__(self) -> str:
        return f"<policy {self.name}>"


class RandomPolicy:
    """Uniform over the legal actions."""

    name = "random"
    uniform = True
    """``action_probabilities`` is exactly uniform over ``rules.legal_actions``, so
    :func:`psygym.core.sample_action` draws from the legal list without building it."""

    def action_probabilities(self, rules: Any, state: Hashable, player: int) -> dict[int, float]:
        """Every legal action with equal probability."""
        legal = rules.legal_actions(state)
        return {a: 1.0 / len(legal) for a in legal}
