"""Rogue Trader agents: when to spend psi-points, what to bid, and the parametric family.

``BOTS`` is this edition's manifest (entry point ``psygym.agents``); :mod:`.heuristics` holds
the heuristics, :mod:`.parametric` the ``rogue-trader-bids`` family and :mod:`.situations`
the situations ``psygym advise`` builds.
"""

from __future__ import annotations

from psygym_agents.rogue_trader.heuristics import HEURISTICS
from psygym_agents.rogue_trader.parametric import FAMILY

from psygym.policies import Bots

BOTS = Bots(
    edition="rt",
    heuristics=HEURISTICS,
    descriptions={
        "spend-freely": "uses the best ability every turn while one is worth anything, else "
        "rests; bids half of what it may",
        "conserve": "keeps 12 or more psi-points so it never takes a test, resting back up "
        "below 12; bids only points above 12",
        "rest-when-low": "rests below 7 psi-points, otherwise plays like spend-freely",
        "biggest-attack": "uses the most expensive attack it can afford where it is worth "
        "most; rests when it has none",
        "bid-none": "casts like spend-freely and never bids",
        "bid-half": "casts like spend-freely and bids half of what it may",
        "bid-all": "casts like spend-freely and bids everything it may",
    },
    reference="spend-freely",
    family=FAMILY,
    tools={
        "situation": "psygym_agents.rogue_trader.situations:rt_situation",
        "parse_situation": "psygym_agents.rogue_trader.situations:parse_situation",
        "normalize_situation": "psygym_agents.rogue_trader.situations:normalize",
        "question": "psygym_agents.rogue_trader.situations:question",
        "board_features": "psygym_agents.rogue_trader.board_features:board_features",
    },
)
"""Rogue Trader's agents."""

__all__ = ["BOTS"]
