"""7th edition: warp charge pools, casting dice, Perils of the Warp and Deny the Witch.

See ``rules.py`` for the rules (rules/seventh.md 7E-1 to 7E-9; its docstring says which module
holds each rule section), ``facts.py`` for a scenario's read-only facts, ``actions.py`` for the
public action layout, ``views.py`` for observations, action views and the text picture,
``state.py`` for the state, ``spec.py`` for the scenario and data formats, ``odds.py`` for the
exact casting, deny and generation tables.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from psygym.core import Information
from psygym.edition import Edition

if TYPE_CHECKING:
    from psygym.editions.seventh.rules import SeventhRules

SCENARIO_DIR = Path(__file__).resolve().parent / "scenarios"
"""Folder of the shipped scenarios."""


def rules_from_data(data: Mapping[str, Any], source: str) -> SeventhRules:
    """Validate scenario data (as read from TOML) and build the rules.

    Raises:
        ScenarioError: naming ``source``, the field and what is allowed.
    """
    from psygym.editions.seventh.rules import load_rules
    from psygym.editions.seventh.spec import Scenario
    from psygym.scenario import validate

    return load_rules(validate(Scenario, data, source), source)


EDITION = Edition(
    id="7th",
    title="7th edition",
    env_id="psygym/Seventh-v0",
    information=Information.PERFECT,
    scenario_dir=SCENARIO_DIR,
    default_scenario="duel",
    rules=rules_from_data,
    aliases=("seventh", "7"),
    odds={
        "casting": "psygym.editions.seventh.odds:casting_table",
        "deny": "psygym.editions.seventh.odds:deny_table",
        "generation": "psygym.editions.seventh.odds:generation_table",
    },
    summary=(
        "a shared pool of warp charge dice, 4+ to harness, Perils on two 6s, Deny the "
        "Witch on 6+ with modifiers; powers generated before the game"
    ),
    solvable_scenarios=("single-phase",),
    engine="psygym.editions.seventh.engine:CODEC",
    generator="psygym.editions.seventh.random_scenario:random_scenario",
    default=True,
)
"""This edition's declaration (found through the ``psygym.editions`` entry point)."""

DEFAULT_SCENARIO = EDITION.default_scenario

__all__ = ["DEFAULT_SCENARIO", "EDITION", "SCENARIO_DIR", "rules_from_data"]
