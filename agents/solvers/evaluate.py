"""Exact evaluation of policies: expected score of a pair, best responses, exploitability.

Everything here is the expectiminimax of :mod:`psygym_agents.solvers.expectiminimax` with some
players' decisions fixed: a fixed player's decisions are chance nodes weighted by its
``action_probabilities`` (OpenSpiel's ``expected_game_score.policy_value`` and
``best_response`` in one search). Values are expected *final* scores of player 0.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

from psygym_agents.solvers import require_perfect_information
from psygym_agents.solvers.expectiminimax import Solver

from psygym.core import Policy

DEFAULT_MAX_STATES = 3_000_000
"""States beyond which the functions here give up with ``NotSolvable`` (about 1-2 GB)."""


def policy_value(
    rules: Any,
    policies: Sequence[Policy],
    state: Hashable | None = None,
    *,
    max_states: int | None = DEFAULT_MAX_STATES,
) -> float:
    """Exact expected final score of player 0 when player ``i`` plays ``policies[i]``.

    Args:
        rules: the edition's rules.
        policies: one policy per player (player 0 first).
        state: where to start (default: the initial state).
        max_states: give up beyond this many states (``None``: no limit).

    Raises:
        NotSolvable: hidden information (``rules.information``) or more than ``max_states``
            states.
    """
    require_perfect_information(rules)
    if len(policies) != rules.num_players:
        raise ValueError(f"policy_value needs {rules.num_players} policies, got {len(policies)}")
    solver = Solver(rules, max_states=max_states, fixed=dict(enumerate(policies)))
    return solver.value(state)


def best_response_value(
    rules: Any,
    fixed: Policy,
    fixed_player: int,
    state: Hashable | None = None,
    *,
    max_states: int | None = DEFAULT_MAX_STATES,
) -> float:
    """Expected final score of player 0 when ``fixed_player`` plays ``fixed``, the other best.

    The other player best-responds: it maximises its own score knowing the fixed policy.

    Raises:
        NotSolvable: hidden information (``rules.information``) or more than ``max_states``
            states.
    """
    require_perfect_information(rules)
    if fixed_player not in range(rules.num_players):
        raise ValueError(f"fixed_player must be 0 or 1, got {fixed_player}")
    solver = Solver(rules, max_states=max_states, fixed={fixed_player: fixed})
    return solver.value(state)


def best_response_solver(
    rules: Any, fixed: Policy, fixed_player: int, *, max_states: int | None = DEFAULT_MAX_STATES
) -> Solver:
    """A :class:`Solver` whose ``best_action`` is the best response to ``fixed``."""
    require_perfect_information(rules)
    return Solver(rules, max_states=max_states, fixed={fixed_player: fixed})


def exploitability(
    rules: Any, policy: Policy, *, max_states: int | None = DEFAULT_MAX_STATES
) -> float:
    """Average over the two seats of what a best response gains against ``policy``.

    With ``v`` the game value (expected score of player 0 under optimal play), ``b0`` the value
    when ``policy`` is player 0 and player 1 best-responds, ``b1`` when ``policy`` is player 1
    and player 0 best-responds: ``((v - b0) + (b1 - v)) / 2``, which is 0 exactly for an
    optimal policy and positive otherwise.

    Raises:
        NotSolvable: hidden information (``rules.information``) or more than ``max_states``
            states.
    """
    require_perfect_information(rules)
    v = Solver(rules, max_states=max_states).value()
    b0 = best_response_value(rules, policy, 0, max_states=max_states)
    b1 = best_response_value(rules, policy, 1, max_states=max_states)
    return ((v - b0) + (b1 - v)) / 2


__all__ = [
    "DEFAULT_MAX_STATES",
    "best_response_solver",
    "best_response_value",
    "exploitability",
    "policy_value",
]
