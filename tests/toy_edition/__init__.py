"""A toy plug-in edition that lives only in the tests: a two-player dice game with a chance node.

Each player in turn may roll a D6 or bank the turn's points; rolling a 1 loses the turn's points
and ends the turn; a turn has at most ``max_rolls`` rolls; after ``turns`` turns each the game
ends. It is declared and registered exactly as a third-party edition would be
(:data:`EDITION`, :data:`BOTS`), to show that every layer finds editions only through those
declarations. Nothing outside this folder and the test modules knows it exists.
"""

from __future__ import annotations

from pathlib import Path

from psygym.core import Information
from psygym.edition import Edition
from psygym.policies import Bots
from toy_edition.bots import HEURISTICS
from toy_edition.rules import odds_table, rules_from_data

TOY_ID = "toy-dice"
"""The toy's edition id (the ``edition`` field of its scenario files)."""

EDITION = Edition(
    id=TOY_ID,
    title="toy dice game",
    env_id="psygym-tests/ToyDice-v0",
    information=Information.PERFECT,
    scenario_dir=Path(__file__).resolve().parent / "scenarios",
    default_scenario="duel",
    rules=rules_from_data,
    aliases=("toydice",),
    odds={"keep": odds_table},
    summary="roll a D6 or bank; a 1 loses the turn's points",
    solvable_scenarios=("quick",),
)
"""The toy edition's declaration."""

BOTS = Bots(
    edition=TOY_ID,
    heuristics=HEURISTICS,
    descriptions={
        "cautious": "rolls while the turn's points are below 6, then banks",
        "greedy": "rolls while it may, banking only when no roll is left",
    },
    reference="cautious",
)
"""The toy edition's agents."""

__all__ = ["BOTS", "EDITION", "TOY_ID"]
