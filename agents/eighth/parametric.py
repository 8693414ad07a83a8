"""The parametric family ``eighth-weights`` (searched by ``psygym tune --target parametric``).

each power's expected value (``heuristics.attempt_value``) is multiplied
by its weight ``w:<power>`` to order the attempts; attempt only while the best weighted value
exceeds ``cast_min``; deny when the test total is at least ``deny_total``.
"""

from __future__ import annotations

import math
from typing import Any

from psygym_agents.base import DeterministicPolicy
from psygym_agents.eighth.heuristics import attempt_value
from psygym_agents.parametric import Family

from psygym.editions.eighth.rules import EighthRules
from psygym.editions.eighth.state import Stage, State


class EighthParametric(DeterministicPolicy):
    """The 8th-edition weights family (see the module docstring for the parameters)."""

    def __init__(self, params: dict[str, Any], name: str = "tuned"):
        self.params = dict(params)
        self.cast_min = float(params.get("cast_min", 0.0))
        self.deny_total = float(params.get("deny_total", 2))
        self.name = name

    def _weight(self, rules: EighthRules, action: int) -> float:
        p = rules.actions.decode_cast(action).power
        return float(self.params.get(f"w:{rules.powers[p].name}", 1.0))

    def _best(self, rules: EighthRules, s: State, unit: int) -> tuple[float, int]:
        best = (-math.inf, -1)
        for a in rules.cast_options(s, unit):
            v = self._weight(rules, a) * attempt_value(rules, s, unit, a)
            if v > best[0]:
                best = (v, a)
        return best

    def choose(self, rules: EighthRules, state: State, player: int) -> int:
        """The family's action in ``state``."""
        s = state
        layout = rules.actions
        if s.stage == Stage.SELECT:
            choice, value = layout.END_PHASE, self.cast_min
            for unit in rules.legal_actions(s):
                if unit == layout.END_PHASE:
                    continue
                v, _ = self._best(rules, s, unit)
                if v > value:
                    choice, value = unit, v
            return choice
        if s.stage == Stage.POWER:
            v, a = self._best(rules, s, s.caster)
            return a if a >= 0 and v > self.cast_min else layout.STOP
        if s.stage == Stage.DENY:
            deniers = rules.deniers(s)
            if not deniers or s.total < self.deny_total:
                return layout.NO_DENY
            return layout.deny(max(deniers, key=lambda u: (s.deny_left[u], -u)))
        raise ValueError(f"{self.name} has no decision at stage {s.stage.name}")


def _eighth_power_names(rules: EighthRules) -> list[str]:
    return [p.name for p in rules.powers]


def _eighth_sample(trial: Any, rules: EighthRules) -> dict[str, Any]:
    params = {f"w:{n}": trial.suggest_float(f"w:{n}", 0.0, 2.0) for n in _eighth_power_names(rules)}
    params["cast_min"] = trial.suggest_float("cast_min", -0.5, 1.0)
    params["deny_total"] = trial.suggest_int("deny_total", 2, 12)
    return params


def _eighth_defaults(rules: EighthRules) -> dict[str, Any]:
    params: dict[str, Any] = {f"w:{n}": 1.0 for n in _eighth_power_names(rules)}
    params.update(cast_min=0.0, deny_total=2)  # like best-power-first + deny-always
    return params


FAMILY = Family(
    name="eighth-weights",
    sample=_eighth_sample,
    build=lambda rules, p: EighthParametric(p),
    defaults=_eighth_defaults,
)
"""This edition's parametric family (named by its ``BOTS`` manifest)."""
