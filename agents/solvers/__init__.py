"""Exact solvers over the generic ``Rules`` API (no edition-specific code).

- :mod:`.expectiminimax`: memoised expectiminimax (:class:`~.expectiminimax.Solver`): the
  equilibrium value of a state, the value of every legal action, and best responses to fixed
  policies (their decisions become chance nodes weighted by their action probabilities).
- :mod:`.matrix`: the linear program that solves a simultaneous-move node as a matrix game.
- :mod:`.evaluate`: exact expected score of a pair of policies, best-response value,
  exploitability.
- :mod:`.policy`: the ``optimal`` agent (exact where the edition allows it, otherwise the
  information-set search of :mod:`.ismcts`, which is *not* exact).
- :mod:`.situations`: naming single states for ``psygym advise`` (a replayed game or a state
  file); an edition's own situation tools live with its agents (its ``BOTS.tools``).
"""

from __future__ import annotations

from typing import Any

from psygym.core import Information


class NotSolvable(ValueError):
    """The game cannot be solved exactly: hidden information, or more states than allowed."""


def has_hidden_information(rules: Any) -> bool:
    """Whether the players of ``rules`` see different things (then exact search does not apply).

    The rules say so with ``rules.information`` (:class:`psygym.core.Information`).
    """
    return getattr(rules, "information", Information.PERFECT) == Information.HIDDEN


def require_perfect_information(rules: Any) -> None:
    """Raise :class:`NotSolvable` for an edition with hidden information.

    Raises:
        NotSolvable: the players of ``rules`` do not see the whole state.
    """
    if has_hidden_information(rules):
        raise NotSolvable(
            f"edition {rules.edition} has hidden information (secret hands): exact solving does "
            "not apply; use the 'optimal' agent, which falls back to an information-set search"
        )


__all__ = [
    "NotSolvable",
    "has_hidden_information",
    "require_perfect_information",
]
