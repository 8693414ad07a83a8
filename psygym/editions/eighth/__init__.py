"""Warhammer 40,000 8th edition: the Psychic phase (rules/eighth.md, 8E-1 .. 8E-8).

PSYKER units are selected one at a time, attempt powers with a 2D6 psychic test (Smite's warp
charge rising with every earlier Smite of the army this phase), may be denied by one enemy PSYKER
within 24" rolling higher, and peril on a double 1 or double 6. See :mod:`.rules` for the action
layout and every default chosen where the spec is silent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from psygym.editions.eighth.rules import EighthRules
from psygym.editions.eighth.spec import load_scenario

EDITION = "8th"
DEFAULT_SCENARIO = "duel"
SCENARIO_DIR = Path(__file__).parent / "scenarios"

__all__ = ["DEFAULT_SCENARIO", "EDITION", "SCENARIO_DIR", "EighthRules", "rules_from_data"]


def rules_from_data(data: dict[str, Any], source: str) -> EighthRules:
    """Validate scenario data (read from ``source``) and build its rules.

    Raises:
        ScenarioError: naming ``source`` (or the power data file), the field and what is allowed.
    """
    scenario, catalogue = load_scenario(data, source)
    return EighthRules(scenario, catalogue)
