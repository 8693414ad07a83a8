"""8th-edition agents: which psyker and power next and when to deny, and the parametric family.

``BOTS`` is this edition's manifest (entry point ``psygym.agents``); :mod:`.heuristics` holds
the heuristics, :mod:`.parametric` the ``eighth-weights`` family and :mod:`.situations` the
situations ``psygym advise`` builds.
"""

from __future__ import annotations

from psygym_agents.eighth.heuristics import HEURISTICS
from psygym_agents.eighth.parametric import FAMILY

from psygym.policies import Bots

BOTS = Bots(
    edition="8th",
    heuristics=HEURISTICS,
    descriptions={
        "smite-first": "attempts Smite before any other power, then the most valuable; denies "
        "every power it can",
        "best-power-first": "attempts the power with the highest expected effect first; denies "
        "every power it can",
        "cheapest-first": "attempts the power of lowest warp charge first; denies every power "
        "it can",
        "deny-always": "casts like best-power-first and denies every power it can",
        "deny-never": "casts like best-power-first and never denies",
        "deny-high-roll": "casts like best-power-first and denies only tests totalling 7 or "
        "more (deny-high-roll:9 sets the bar)",
        "save-deny-for-best": "casts like best-power-first and denies when the deny's chance "
        "of beating the test times the power's expected effect is at least what the deny would "
        "save if kept for a power still to come this phase",
    },
    reference="smite-first",
    family=FAMILY,
    tools={
        "answer_tables": "psygym_agents.eighth.deny_table:answer_tables",
        "board_features": "psygym_agents.eighth.board_features:board_features",
        "situation": "psygym_agents.eighth.situations:eighth_situation",
        "parse_situation": "psygym_agents.eighth.situations:parse_situation",
        "normalize_situation": "psygym_agents.eighth.situations:normalize",
        "question": "psygym_agents.eighth.situations:question",
    },
)
"""The 8th edition's agents."""

__all__ = ["BOTS"]
