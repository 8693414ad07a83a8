"""7th edition: warp charge pools, casting dice, Perils of the Warp and Deny the Witch.

See ``rules.py`` for the rules (rules/seventh.md 7E-1 to 7E-9), ``spec.py`` for the scenario and
data formats, ``odds.py`` for the exact casting, deny and generation tables.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from psygym.editions.seventh.rules import SeventhRules, load_rules
from psygym.editions.seventh.spec import Scenario
from psygym.scenario import validate

EDITION = "7th"
DEFAULT_SCENARIO = "duel"
SCENARIO_DIR = Path(__file__).parent / "scenarios"


def rules_from_data(data: dict[str, Any], source: str) -> SeventhRules:
    """Validate a scenario's data and build its rules."""
    return load_rules(validate(Scenario, data, source), source)


__all__ = ["EDITION", "DEFAULT_SCENARIO", "SCENARIO_DIR", "SeventhRules", "rules_from_data"]
