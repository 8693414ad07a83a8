"""Gymnasium wrappers for learning: illegal-action fallback, alternating seats, opponent swaps.

- :class:`LegalActionWrapper` lets algorithms without action masks (plain PPO, DQN) act in an
  env whose actions are not all legal: an illegal action is replaced by a legal one (the lowest
  legal action, or a uniformly random one) and an optional penalty is subtracted from the
  reward. ``info["illegal_action"]`` tells when it happened.
- :class:`AlternateSeats` swaps the learner's seat (0, 1, 0, ...) at every reset, so one model
  learns both sides (used for self-play).
- :class:`OpponentControl` adds ``set_opponent(policy)`` so a vectorised env can replace its
  opponent with ``VecEnv.env_method("set_opponent", policy)``, in subprocesses too.

All three keep ``action_masks()`` reachable (``get_wrapper_attr`` finds it on the base env).
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import gymnasium as gym
import numpy as np

from psygym.envs.psychic import integer_action

FALLBACKS = ("lowest", "random")
"""How :class:`LegalActionWrapper` replaces an illegal action."""


class LegalActionWrapper(gym.Wrapper):
    """Replace an illegal action by a legal one, with an optional reward penalty.

    Args:
        env: a psygym env (anything with ``action_masks()``).
        fallback: ``"lowest"`` (the lowest legal action) or ``"random"`` (uniform among the
            legal actions, drawn with the env's ``np_random``).
        penalty: subtracted from the step's reward when the action was illegal (finite, >= 0).
    """

    def __init__(self, env: gym.Env, fallback: str = "lowest", penalty: float = 0.0):
        super().__init__(env)
        if fallback not in FALLBACKS:
            raise ValueError(f"fallback {fallback!r} is not one of: {', '.join(FALLBACKS)}")
        if not isinstance(penalty, numbers.Real) or not math.isfinite(penalty) or penalty < 0:
            raise ValueError(f"penalty must be a finite number >= 0, not {penalty!r}")
        self.fallback = fallback
        self.penalty = float(penalty)

    def legal_action(self, action: int) -> tuple[int, bool]:
        """``(action to play, whether the given one was illegal)``."""
        mask = self.env.get_wrapper_attr("action_masks")()
        action = integer_action(action)
        if 0 <= action < len(mask) and mask[action]:
            return action, False
        legal = np.flatnonzero(mask)
        if self.fallback == "lowest":
            return int(legal[0]), True
        return int(legal[self.env.unwrapped.np_random.integers(len(legal))]), True

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Play ``action``, or its legal replacement (then the penalty applies)."""
        played, illegal = self.legal_action(action)
        obs, reward, terminated, truncated, info = self.env.step(played)
        info["illegal_action"] = illegal
        if illegal:
            reward -= self.penalty
        return obs, float(reward), terminated, truncated, info


class AlternateSeats(gym.Wrapper):
    """Switch the learner's seat at every reset: seat ``first``, then the other, and so on."""

    def __init__(self, env: gym.Env, first: int = 0):
        super().__init__(env)
        self._next = int(first)

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        """Take the next seat, then reset."""
        self.env.unwrapped.seat = self._next
        self._next = 1 - self._next
        return self.env.reset(**kwargs)


class OpponentControl(gym.Wrapper):
    """Expose ``set_opponent(policy)``; the new opponent plays from the next decision on."""

    def set_opponent(self, policy: Any) -> None:
        """Replace the env's opponent policy (an object with ``action_probabilities``)."""
        if not hasattr(policy, "action_probabilities"):
            raise TypeError(f"{policy!r} is not a Policy")
        self.env.unwrapped.opponent = policy


__all__ = ["AlternateSeats", "FALLBACKS", "LegalActionWrapper", "OpponentControl"]
