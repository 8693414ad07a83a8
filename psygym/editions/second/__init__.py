"""2nd edition (1993): the warp-card psychic phase with hidden hands (rules/second.md).

Exposes :data:`EDITION`, :data:`DEFAULT_SCENARIO`, :data:`SCENARIO_DIR`, :func:`rules_from_data`
and :class:`SecondRules`. See :mod:`psygym.editions.second.rules` for the action and observation
layouts and the defaults chosen where the rules are silent.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from psygym.core import Information
from psygym.edition import Edition

SCENARIO_DIR = Path(__file__).resolve().parent / "scenarios"
"""Folder of the shipped scenarios."""


def rules_from_data(data: Mapping[str, Any], source: str) -> Any:
    """Validate scenario data (as read from TOML) and build the rules.

    Raises:
        ScenarioError: naming ``source``, the field and what is allowed.
    """
    from psygym.editions.second.rules import SecondRules
    from psygym.editions.second.spec import SecondScenario
    from psygym.scenario import validate

    scenario = validate(SecondScenario, data, source)
    return SecondRules(scenario, deck=scenario.deck_counts())


EDITION = Edition(
    id="2nd",
    title="2nd edition",
    env_id="psygym/Second-v0",
    information=Information.HIDDEN,
    scenario_dir=SCENARIO_DIR,
    default_scenario="duel",
    rules=rules_from_data,
    engine="psygym.editions.second.engine:CODEC",
    generator="psygym.editions.second.random_scenario:random_scenario",
    aliases=("second", "2"),
    odds={
        "flux-cards": "psygym.editions.second.odds:flux_table",
        "flux-cap": "psygym.editions.second.odds:flux_cap_table",
        "hand-force": "psygym.editions.second.odds:hand_table",
        "hand-force-nullify": "psygym.editions.second.odds:hand_nullify_table",
        "nullify": "psygym.editions.second.odds:nullify_table",
    },
    summary=(
        "a card game: warp flux deals from a 36-card deck that lasts the battle; Force "
        "cards pay for powers, Nullify and specials answer them; hidden hands"
    ),
    solvable_scenarios=(),
)
"""This edition's declaration (found through the ``psygym.editions`` entry point)."""

DEFAULT_SCENARIO = EDITION.default_scenario

__all__ = ["DEFAULT_SCENARIO", "EDITION", "SCENARIO_DIR", "rules_from_data"]
