"""2nd-edition agents: rules of thumb that see only their own hand, and the parametric family.

``BOTS`` is this edition's manifest (entry point ``psygym.agents``); :mod:`.heuristics` holds
the heuristics and :mod:`.parametric` the ``second-thresholds`` family.
"""

from __future__ import annotations

from psygym_agents.second.heuristics import HEURISTICS
from psygym_agents.second.parametric import FAMILY

from psygym.policies import Bots

BOTS = Bots(
    edition="2nd",
    heuristics=HEURISTICS,
    descriptions={
        "cast-biggest": "casts the most valuable power it can pay for first; answers powers "
        "worth at least 1 wound",
        "cast-cheapest": "casts the power that costs the fewest Force cards first",
        "hoard-nullify": "casts like cast-biggest and keeps its response cards for powers worth "
        "at least 2 wounds (hoard-nullify:2.5 sets the bar)",
        "nullify-always": "casts like cast-biggest and answers every power, Nullify first",
        "pass": "never casts and never answers",
    },
    reference="cast-biggest",
    family=FAMILY,
    tools={"board_features": "psygym_agents.second.board_features:board_features"},
)
"""The 2nd edition's agents."""

__all__ = ["BOTS"]
