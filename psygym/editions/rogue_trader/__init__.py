"""Rogue Trader (1st edition) psionics: psi-points, the 12-point threshold and secret bids.

Rules spec: rules/rogue-trader.md (RT-1 to RT-6); the rules module's docstring describes the game
flow, the action layout and every default chosen where the spec is silent.

```python
from psygym.editions import load
rules = load("rt", "duel")           # or "psyker-vs-squad", or a path to a TOML file
```
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from psygym.core import Information
from psygym.edition import Edition

if TYPE_CHECKING:
    from psygym.editions.rogue_trader.rules import RogueTraderRules

SCENARIO_DIR = Path(__file__).resolve().parent / "scenarios"
"""Folder of the shipped scenarios."""


def rules_from_data(data: Mapping[str, Any], source: str) -> RogueTraderRules:
    """Validate scenario data (as read from TOML) and build the rules.

    Raises:
        ScenarioError: naming ``source``, the field and what is allowed.
    """
    from psygym.editions.rogue_trader.rules import RogueTraderRules
    from psygym.editions.rogue_trader.spec import RTScenario
    from psygym.scenario import validate

    return RogueTraderRules(validate(RTScenario, data, source), source)


EDITION = Edition(
    id="rt",
    title="Rogue Trader",
    env_id="psygym/RogueTrader-v0",
    information=Information.SIMULTANEOUS,
    scenario_dir=SCENARIO_DIR,
    default_scenario="duel",
    rules=rules_from_data,
    engine="psygym.editions.rogue_trader.engine:CODEC",
    generator="psygym.editions.rogue_trader.random_scenario:random_scenario",
    aliases=("1st", "rogue-trader", "rogue_trader", "roguetrader", "1"),
    odds={
        "works": "psygym.editions.rogue_trader.odds:works_table",
        "psychic-save": "psygym.editions.rogue_trader.odds:psychic_save_table",
        "attacks": "psygym.editions.rogue_trader.odds:attacks_table",
    },
    summary=(
        "each psyker spends its own psi-points over the battle; 2D6 tests below 12 "
        "points; secret simultaneous bids for enhanced attack and augmented save"
    ),
    solvable_scenarios=(),
)
"""This edition's declaration (found through the ``psygym.editions`` entry point)."""

DEFAULT_SCENARIO = EDITION.default_scenario

__all__ = ["DEFAULT_SCENARIO", "EDITION", "SCENARIO_DIR", "rules_from_data"]
