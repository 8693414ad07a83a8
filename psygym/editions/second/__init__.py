"""2nd edition (1993): the warp-card psychic phase with hidden hands (rules/second.md).

Exposes :data:`EDITION`, :data:`DEFAULT_SCENARIO`, :data:`SCENARIO_DIR`, :func:`rules_from_data`
and :class:`SecondRules`. See :mod:`psygym.editions.second.rules` for the action and observation
layouts and the defaults chosen where the rules are silent.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from psygym.editions.second.rules import EDITION, SecondRules
from psygym.editions.second.spec import SecondScenario
from psygym.scenario import validate

DEFAULT_SCENARIO = "duel"
"""Name of the scenario ``load("2nd")`` uses."""
SCENARIO_DIR = Path(__file__).resolve().parent / "scenarios"
"""Folder of the shipped scenarios."""


def rules_from_data(data: Mapping[str, Any], source: str) -> SecondRules:
    """Validate scenario data (as read from TOML) and build its rules.

    Raises:
        ScenarioError: naming ``source``, the field and what is allowed.
    """
    return SecondRules(validate(SecondScenario, data, source))


__all__ = ["DEFAULT_SCENARIO", "EDITION", "SCENARIO_DIR", "SecondRules", "rules_from_data"]
