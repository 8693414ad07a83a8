"""The parametric family ``second-thresholds`` (searched by ``psygym tune --target parametric``).

cast the most valuable affordable power while its expected value
exceeds ``cast_min``; answer a power worth at least ``respond_min`` (Nullify first if
``nullify_first``); play Psychic Duel when its expected value exceeds ``duel_min``; Energy Drain
if ``drain``. Like every 2nd-edition heuristic it reads only its own view.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from psygym_agents.parametric import Family

if TYPE_CHECKING:
    from psygym.editions.second.rules import SecondRules
    from psygym.editions.second.views import SecondView


def _second_class() -> type:
    from psygym_agents.second.heuristics import (
        _NULLIFY_FIRST,
        _SURE_FIRST,
        SecondHeuristic,
    )

    class SecondParametric(SecondHeuristic):
        """The 2nd-edition thresholds family; like every 2nd heuristic it reads only its view."""

        def __init__(self, params: dict[str, Any], name: str = "tuned"):
            order = _NULLIFY_FIRST if bool(params.get("nullify_first", False)) else _SURE_FIRST
            super().__init__(threshold=float(params.get("respond_min", 1.0)), order=order)
            self.cast_min = float(params.get("cast_min", 0.0))
            self.duel_min = float(params.get("duel_min", 0.0))
            self.drain = bool(params.get("drain", True))
            self.name = name

        def pick_cast(self, rules: SecondRules, view: SecondView, casts: list[int]) -> int | None:
            """The most valuable cast if it is worth more than ``cast_min``."""
            best = max((rules.cast_value(view, a), -a) for a in casts)
            return -best[1] if best[0] > self.cast_min else None

    return SecondParametric


def _second_sample(trial: Any, rules: SecondRules) -> dict[str, Any]:
    return {
        "cast_min": trial.suggest_float("cast_min", -0.5, 2.0),
        "respond_min": trial.suggest_float("respond_min", 0.0, 4.0),
        "duel_min": trial.suggest_float("duel_min", -1.0, 2.0),
        "nullify_first": trial.suggest_categorical("nullify_first", [False, True]),
        "drain": trial.suggest_categorical("drain", [False, True]),
    }


def _second_defaults(rules: SecondRules) -> dict[str, Any]:
    # Like cast-biggest.
    return {"cast_min": 0.0, "respond_min": 1.0, "duel_min": 0.0, "nullify_first": False,
            "drain": True}  # fmt: skip


FAMILY = Family(
    name="second-thresholds",
    sample=_second_sample,
    build=lambda rules, p: _second_class()(p),
    defaults=_second_defaults,
)
"""This edition's parametric family (named by its ``BOTS`` manifest)."""
