"""Rogue Trader (1st edition) psionics: psi-points, the 12-point threshold and secret bids.

Rules spec: rules/rogue-trader.md (RT-1 to RT-6); the rules module's docstring describes the game
flow, the action layout and every default chosen where the spec is silent.

```python
from psygym.editions import load
rules = load("rt", "duel")           # or "psyker-vs-squad", or a path to a TOML file
```
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from psygym.editions.rogue_trader.rules import RogueTraderRules
from psygym.editions.rogue_trader.spec import RTScenario
from psygym.scenario import validate

EDITION = "rt"
"""Edition id."""
DEFAULT_SCENARIO = "duel"
"""Scenario loaded by ``load("rt")``."""
SCENARIO_DIR = Path(__file__).parent / "scenarios"
"""Folder of the shipped scenarios."""


def rules_from_data(data: dict[str, Any], source: str) -> RogueTraderRules:
    """Validate scenario data (raising one ``ScenarioError``) and build the rules."""
    scenario = validate(RTScenario, data, source)
    return RogueTraderRules(scenario, source)


__all__ = ["DEFAULT_SCENARIO", "EDITION", "SCENARIO_DIR", "RogueTraderRules", "rules_from_data"]
