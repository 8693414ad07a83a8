"""The parametric family ``rogue-trader-bids`` (searched by ``psygym tune --target parametric``).

rest while below ``rest_below`` points; use the best ability only if its
expected worth exceeds ``min_worth``; bid the fraction ``attack_bid`` (as attacker) or
``save_bid`` (as target) of what it may bid.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from psygym_agents.parametric import Family

if TYPE_CHECKING:
    from psygym.editions.rogue_trader.rules import RogueTraderRules
    from psygym.editions.rogue_trader.state import State


def _rt_class() -> type:
    from psygym_agents.rogue_trader.heuristics import RTHeuristic, best_use

    from psygym.editions.rogue_trader.state import Phase

    class RogueTraderParametric(RTHeuristic):
        """The Rogue Trader family: rest threshold, minimum worth and bid fractions."""

        def __init__(self, params: dict[str, Any], name: str = "tuned"):
            super().__init__(name, "freely", "half")
            self.rest_below = int(params.get("rest_below", 0))
            self.min_worth = float(params.get("min_worth", 0.0))
            self.attack_bid = float(params.get("attack_bid", 0.5))
            self.save_bid = float(params.get("save_bid", 0.5))

        def _choose(self, rules: RogueTraderRules, state: State, legal: list[int]) -> int:
            u = state.actor
            if state.units[u].points < self.rest_below:
                return legal[0]  # rest (or end after an ability)
            abilities = rules.actions.abilities_in(legal)
            best = best_use(rules, state, u, abilities)
            if best is None or best[0] <= self.min_worth:
                return legal[0]
            return rules.actions.ability(best[1])

        def _bid(self, rules: RogueTraderRules, state: State, legal: list[int], points: int) -> int:
            share = self.attack_bid if state.phase == Phase.ATTACK_BID else self.save_bid
            cap = len(legal) - 1
            return legal[max(0, min(cap, int(math.floor(share * cap + 0.5))))]

    return RogueTraderParametric


def _rt_sample(trial: Any, rules: RogueTraderRules) -> dict[str, Any]:
    return {
        "rest_below": trial.suggest_int("rest_below", 0, 14),
        "min_worth": trial.suggest_float("min_worth", 0.0, 2.0),
        "attack_bid": trial.suggest_float("attack_bid", 0.0, 1.0),
        "save_bid": trial.suggest_float("save_bid", 0.0, 1.0),
    }


def _rt_defaults(rules: RogueTraderRules) -> dict[str, Any]:
    # Like spend-freely (bids half).
    return {"rest_below": 0, "min_worth": 0.0, "attack_bid": 0.5, "save_bid": 0.5}


FAMILY = Family(
    name="rogue-trader-bids",
    sample=_rt_sample,
    build=lambda rules, p: _rt_class()(p),
    defaults=_rt_defaults,
)
"""This edition's parametric family (named by its ``BOTS`` manifest)."""
