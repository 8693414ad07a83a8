"""7th-edition agents: heuristics for dice and denies, the parametric family, advise tools.

``BOTS`` is this edition's manifest (entry point ``psygym.agents``); the modules hold the
heuristics (:mod:`.heuristics`), the ``seventh-threshold`` family (:mod:`.parametric`), the
situations ``psygym advise`` builds (:mod:`.situations`) and the exact dice table
(:mod:`.dice_table`).
"""

from __future__ import annotations

from psygym_agents.seventh.heuristics import HEURISTICS
from psygym_agents.seventh.parametric import FAMILY

from psygym.policies import Bots

BOTS = Bots(
    edition="7th",
    heuristics=HEURISTICS,
    descriptions={
        "double-wc": "commits twice the warp charge in dice to the best power; denies every "
        "power with the fewest dice that give an even chance (all its dice when none does, "
        "none when the deny cannot succeed)",
        "double-wc-plus1": "commits twice the warp charge plus one die; denies like double-wc",
        "all-in": "commits every die left to the best power; denies like double-wc",
        "minimum": "commits exactly the warp charge in dice; denies like double-wc",
        "deny-always": "denies every power it can deny with every die it has left and casts "
        "like double-wc",
        "deny-never": "casts like double-wc and never denies",
        "deny-big": "casts like double-wc and denies only powers worth more than 2 wounds "
        "(deny-big:3 sets the bar)",
    },
    reference="double-wc",
    family=FAMILY,
    tools={
        "situation": "psygym_agents.seventh.situations:seventh_situation",
        "parse_situation": "psygym_agents.seventh.situations:parse_situation",
        "normalize_situation": "psygym_agents.seventh.situations:normalize",
        "question": "psygym_agents.seventh.situations:question",
        "generation_state": "psygym_agents.seventh.situations:generation_state",
        "dice_table": "psygym_agents.seventh.dice_table:optimal_dice_table",
        "plot_dice_table": "psygym_agents.seventh.dice_table:plot_dice_table",
        "commit_table": "psygym_agents.seventh.dice_table:commit_table",
        "deny_table": "psygym_agents.seventh.dice_table:deny_table",
        "answer_tables": "psygym_agents.seventh.dice_table:answer_tables",
        "board_features": "psygym_agents.seventh.board_features:board_features",
    },
)
"""The 7th edition's agents."""

__all__ = ["BOTS"]
