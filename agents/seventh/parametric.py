"""The parametric family ``seventh-threshold`` (searched by ``psygym tune --target parametric``).

dice to commit = round(``dice_a`` x WC + ``dice_b``) clipped to
[WC, pool]; stop casting when fewer than ``stop_pool`` dice are left; deny a power only if its
expected value is at least ``deny_min_value`` and its successes are at most ``deny_ratio`` x
the deny dice available, then with the fewest dice giving at least ``deny_confidence`` chance
(or all of them).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from psygym_agents.parametric import Family
from psygym_agents.seventh.heuristics import SeventhHeuristic, deny_chance, expected_value

from psygym.editions.seventh.rules import SeventhRules
from psygym.editions.seventh.state import State


class SeventhParametric(SeventhHeuristic):
    """The 7th-edition threshold family (see the module docstring for the parameters).

    It decides like every 7th-edition heuristic (``heuristics.SeventhHeuristic``), with its
    own dice rule (:meth:`dice`) and deny rule (:meth:`deny`).
    """

    KEYS = ("dice_a", "dice_b", "stop_pool", "deny_ratio", "deny_confidence", "deny_min_value")

    def __init__(self, params: dict[str, Any], name: str = "tuned"):
        missing = [k for k in self.KEYS if k not in params]
        if missing:
            raise ValueError(f"7th parametric policy needs {', '.join(missing)}")
        self.p = {k: float(params[k]) for k in self.KEYS}
        self.want = Fraction(self.p["deny_confidence"]).limit_denominator(1000)
        super().__init__(name, self.dice, self.deny)

    def dice(self, wc: int, pool: int) -> int:
        """Dice to commit to a power of warp charge ``wc`` with ``pool`` dice left (0: stop)."""
        if pool < max(wc, self.p["stop_pool"]):
            return 0
        n = int(math.floor(self.p["dice_a"] * wc + self.p["dice_b"] + 0.5))
        return max(wc, min(pool, n))

    def deny(self, rules: SeventhRules, s: State) -> int:
        """Dice to deny the pending cast with (0: let it through)."""
        c = s.cast
        dice = s.pools[1 - s.active]
        if expected_value(rules, s, c.caster, c.power, c.target) < self.p["deny_min_value"]:
            return 0
        if c.successes > self.p["deny_ratio"] * dice:
            return 0
        _, threshold = rules.deny_unit_and_threshold(s, c)
        for m in range(1, dice + 1):
            if deny_chance(m, c.successes, threshold) >= self.want:
                return m
        return dice


def _seventh_sample(trial: Any, rules: SeventhRules) -> dict[str, Any]:
    return {
        "dice_a": trial.suggest_float("dice_a", 0.5, 3.0),
        "dice_b": trial.suggest_float("dice_b", -1.0, 3.0),
        "stop_pool": trial.suggest_int("stop_pool", 0, 6),
        "deny_ratio": trial.suggest_float("deny_ratio", 0.1, 2.0),
        "deny_confidence": trial.suggest_float("deny_confidence", 0.05, 0.95),
        "deny_min_value": trial.suggest_float("deny_min_value", 0.0, 6.0),
    }


def _seventh_defaults(rules: SeventhRules) -> dict[str, Any]:
    # Close to the "double-wc" heuristic with a fair deny.
    return {"dice_a": 2.0, "dice_b": 0.0, "stop_pool": 0, "deny_ratio": 2.0,
            "deny_confidence": 0.5, "deny_min_value": 0.0}  # fmt: skip


FAMILY = Family(
    name="seventh-threshold",
    sample=_seventh_sample,
    build=lambda rules, p: SeventhParametric(p),
    defaults=_seventh_defaults,
)
"""This edition's parametric family (named by its ``BOTS`` manifest)."""
