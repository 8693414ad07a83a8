"""Warhammer 40,000 8th edition: the Psychic phase (rules/eighth.md, 8E-1 .. 8E-8).

PSYKER units are selected one at a time, attempt powers with a 2D6 psychic test (Smite's warp
charge rising with every earlier Smite of the army this phase), may be denied by one enemy PSYKER
within 24" rolling higher, and peril on a double 1 or double 6. See :mod:`.rules` for the action
layout and every default chosen where the spec is silent.
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
    from psygym.editions.eighth.rules import EighthRules
    from psygym.editions.eighth.spec import load_scenario

    scenario, catalogue = load_scenario(data, source)
    return EighthRules(scenario, catalogue)


EDITION = Edition(
    id="8th",
    title="8th edition",
    env_id="psygym/Eighth-v0",
    information=Information.PERFECT,
    scenario_dir=SCENARIO_DIR,
    default_scenario="duel",
    rules=rules_from_data,
    aliases=("eighth", "8"),
    odds={
        "casting": "psygym.editions.eighth.odds:casting_table",
        "smite-damage": "psygym.editions.eighth.odds:smite_damage_table",
        "deny": "psygym.editions.eighth.odds:deny_table",
    },
    summary=(
        "2D6 psychic tests, Smite's warp charge rising with each attempt, one-shot denies "
        'within 24"'
    ),
    solvable_scenarios=("single-phase",),
    engine="psygym.editions.eighth.engine:CODEC",
    generator="psygym.editions.eighth.random_scenario:random_scenario",
)
"""This edition's declaration (found through the ``psygym.editions`` entry point)."""

DEFAULT_SCENARIO = EDITION.default_scenario

__all__ = ["DEFAULT_SCENARIO", "EDITION", "SCENARIO_DIR", "rules_from_data"]
