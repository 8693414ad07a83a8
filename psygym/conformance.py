"""The conformance checker every edition passes: the game API's invariants along random playouts.

:func:`check_rules` plays seeded random games on a rules object (:class:`psygym.core.RulesBase`)
and checks at every node what the API promises; the first broken invariant raises
:class:`RulesCheckError`.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np

from psygym.core import CHANCE, TERMINAL, RulesBase


class RulesCheckError(AssertionError):
    """A rules implementation broke one of the API's invariants."""


@dataclass
class CheckReport:
    """What :func:`check_rules` visited."""

    games: int = 0
    decision_nodes: int = 0
    chance_nodes: int = 0
    max_length: int = 0


def check_rules(
    rules: RulesBase, *, games: int = 20, seed: int = 0, max_steps: int = 100_000
) -> CheckReport:
    """Check the invariants every edition must satisfy along random playouts.

    Checks: chance probabilities are positive and sum to 1 with unique outcomes, and
    ``chance_outcomes`` is ``[]`` at decision and terminal nodes; legal actions are
    non-empty, sorted, unique and inside ``range(num_actions)`` at decision nodes; the mask equals
    the legal actions; states are hashable and ``apply`` leaves its input unchanged and is
    deterministic; every legal action has a label; observations have the declared shape and are
    finite; returns are zero-sum; playouts terminate within ``max_steps``; what the rest of the
    game added to player 0's score after each state lies within that state's ``rest_bounds``.

    Raises:
        RulesCheckError: naming the broken invariant and where.
    """
    rng = np.random.default_rng(seed)
    report = CheckReport()

    def fail(msg: str, s: Hashable) -> None:
        raise RulesCheckError(f"{rules.edition}: {msg} (state: {s!r})")

    for _ in range(games):
        s = rules.initial_state()
        rests: list[tuple[Hashable, float, float, float]] = []  # (state, score, low, high)
        for step in range(max_steps + 1):
            hash(s)
            r = rules.returns(s)
            if not math.isclose(sum(r), 0.0, abs_tol=1e-9):
                fail(f"returns {r} are not zero-sum", s)
            low, high = rules.rest_bounds(s)
            if not low <= high:
                fail(f"rest_bounds {(low, high)} has its low above its high", s)
            rests.append((s, r[0], low, high))
            for p in range(rules.num_players):
                obs = rules.observe(s, p)
                if obs.shape != (rules.observation_size,) or obs.dtype != np.float32:
                    fail(f"observe gave shape {obs.shape} {obs.dtype}", s)
                if not np.all(np.isfinite(obs)):
                    fail("observation has a non-finite value", s)
            player = rules.current_player(s)
            if player != CHANCE and rules.chance_outcomes(s):
                fail("chance_outcomes is not [] at a decision or terminal node", s)
            if player == TERMINAL:
                if rules.legal_actions(s):
                    fail("terminal state has legal actions", s)
                for at, score, low, high in rests:
                    added = r[0] - score
                    if not low - 1e-9 <= added <= high + 1e-9:
                        fail(f"the rest of the game added {added:+g} to player 0's score, "
                             f"outside this state's rest_bounds {(low, high)}", at)  # fmt: skip
                break
            if step == max_steps:
                fail(f"game did not end within {max_steps} steps", s)
            before = copy.deepcopy(s)
            if player == CHANCE:
                report.chance_nodes += 1
                outcomes = rules.chance_outcomes(s)
                keys = [o for o, _ in outcomes]
                if not outcomes or len(set(keys)) != len(keys):
                    fail(f"chance outcomes empty or repeated: {keys}", s)
                if any(p <= 0 for _, p in outcomes):
                    fail("a chance outcome has probability <= 0", s)
                total = sum(p for _, p in outcomes)
                if not math.isclose(total, 1.0, abs_tol=1e-9):
                    fail(f"chance probabilities sum to {total}", s)
                a = rules.sample_chance(s, rng)
                if a not in keys:
                    fail(f"sample_chance drew {a}, not an outcome", s)
            else:
                if player not in range(rules.num_players):
                    fail(f"current_player {player} is not a player", s)
                report.decision_nodes += 1
                legal = rules.legal_actions(s)
                if not legal:
                    fail("no legal actions at a decision node", s)
                if legal != sorted(set(legal)):
                    fail(f"legal actions not sorted and unique: {legal}", s)
                if legal[0] < 0 or legal[-1] >= rules.num_actions:
                    fail(f"legal actions outside range({rules.num_actions}): {legal}", s)
                mask = rules.legal_mask(s)
                if list(np.flatnonzero(mask)) != legal:
                    fail("legal_mask differs from legal_actions", s)
                for a in legal:
                    if not str(rules.describe(s, a)):
                        fail(f"action {a} has an empty label", s)
                a = legal[int(rng.integers(len(legal)))]
            nxt = rules.apply(s, a)
            if s != before:
                fail("apply modified its input state", s)
            if rules.apply(s, a) != nxt:
                fail(f"apply is not deterministic for action {a}", s)
            s = nxt
            report.max_length = max(report.max_length, step + 1)
        report.games += 1
    return report
