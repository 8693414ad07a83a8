"""What the engine tests run over: every edition with a compiled twin and its shipped scenarios.

The differential and fuzz tests are generic: they take each edition whose declaration names a
codec (``Edition.engine``) and whose twin the core has compiled, so a new twin is tested as
soon as it is declared. ``PSYGYM_DIFF_GAMES`` sets the seeded games per scenario (the sanitizer
run of ``.ci/run`` uses a sample).
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Hashable, Iterator
from typing import Any

import pytest

from psygym.edition import editions
from psygym.editions import scenario_names
from psygym.engine import compiled_game, core_module

DIFF_GAMES = int(os.environ.get("PSYGYM_DIFF_GAMES", "1000"))
"""Seeded games per scenario in the differential test (the issue asks for at least 1,000)."""


def compiled_editions() -> list[str]:
    """Ids of the editions whose compiled twin the core has (none without a core)."""
    core = core_module()
    if core is None:
        return []
    known = set(core.registered_games())
    return [e.id for e in editions() if e.engine is not None and e.id in known]


def scenario_cases() -> list[tuple[str, str]]:
    """``(edition, scenario)`` for every shipped scenario of every compiled edition."""
    return [(e, name) for e in compiled_editions() for name in scenario_names(e)]


def default_scenario(edition: str) -> str:
    """The scenario ``"default"`` means for an edition."""
    from psygym.edition import get

    return get(edition).default_scenario


def compiled_pair(edition: str, scenario: str):
    """The reference rules of a shipped scenario and their compiled twin."""
    from psygym.editions import load

    rules = load(edition, scenario)
    compiled = compiled_game(rules)
    assert compiled is not None, f"{edition} {scenario} has no compiled twin"
    return rules, compiled


needs_core = pytest.mark.skipif(core_module() is None, reason="the compiled engine is not built")


def random_game(rules: Any, seed: int) -> list[Hashable]:
    """Every state of one game of random moves, chance by its odds (``psygym.core.play_game``)."""
    import numpy as np
    from psygym_agents.base import RandomPolicy

    from psygym.core import play_game

    states: list[Hashable] = []
    rng = np.random.default_rng(seed)
    end = play_game(rules, [RandomPolicy()] * 2, rng, on_step=lambda s, a, e: states.append(s))
    return [*states, end]


def decision_states(
    rules: Any, games: int, seed: int, choose: Callable[[Hashable, int], int] | None = None
) -> Iterator[Hashable]:
    """Every decision state of ``games`` seeded games.

    Chance is drawn with its exact probabilities; a decision is ``choose(state, player)`` half
    the time where it is given, else uniform among the legal actions.
    """
    from psygym.core import CHANCE, TERMINAL

    rng = random.Random(seed)
    for _ in range(games):
        s = rules.initial_state()
        while (p := rules.current_player(s)) != TERMINAL:
            if p == CHANCE:
                outcomes = rules.chance_outcomes(s)
                a = rng.choices([o for o, _ in outcomes], [w for _, w in outcomes])[0]
            else:
                yield s
                legal = rules.legal_actions(s)
                a = choose(s, p) if choose and rng.random() < 0.5 else rng.choice(legal)
            s = rules.apply(s, a)
