"""The compiled twins against the Python reference at every node of seeded games.

For every edition the core compiles and every shipped scenario, ``PSYGYM_DIFF_GAMES`` seeded
games (1,000 by default) are played on the reference with random legal actions and exactly
weighted chance; at every node the state, player, legal actions, chance outcomes with their
probabilities (``==``), next state and returns must be those of the twin
(:func:`psygym.engine.differential.check_games`).
"""

from __future__ import annotations

import pytest
from engine_cases import DIFF_GAMES, compiled_pair, needs_core, scenario_cases

from psygym.engine.differential import check_games


@needs_core
@pytest.mark.parametrize(("edition", "scenario"), scenario_cases())
def test_twin_matches_reference_at_every_node(edition, scenario):
    rules, compiled = compiled_pair(edition, scenario)
    count = check_games(rules, compiled, DIFF_GAMES, seed=35)
    assert count.games == DIFF_GAMES
    assert count.decisions > 0 and count.chance > 0
    print(f"{edition} {scenario}: {count.games} games, {count.nodes} nodes "
          f"({count.decisions} decisions, {count.chance} chance)")  # fmt: skip
