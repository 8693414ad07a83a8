"""Parametric policy families (searched by ``psygym tune --target parametric``) and tuned agents.

Each edition has at most one small family (``FAMILIES[edition]``): a handful of numbers that
shape a sensible rule of thumb. Optuna samples them with the family's ``sample(trial, rules)``;
``build(rules, params)`` turns them into a :class:`~psygym.core.Policy`. There is no
edition-generic family: an edition without one cannot be tuned this way (the error says which
editions can).

- **7th** (``seventh-threshold``): dice to commit = round(``dice_a`` x WC + ``dice_b``) clipped to
  [WC, pool]; stop casting when fewer than ``stop_pool`` dice are left; deny a power only if its
  expected value is at least ``deny_min_value`` and its successes are at most ``deny_ratio`` x
  the deny dice available, then with the fewest dice giving at least ``deny_confidence`` chance
  (or all of them).
- **8th** (``eighth-weights``): each power's expected value (``psygym_agents.eighth.attempt_value``)
  is multiplied by its weight ``w:<power>`` to order the attempts; attempt only while the best
  weighted value exceeds ``cast_min``; deny when the test total is at least ``deny_total``.
- **2nd** (``second-thresholds``): cast the most valuable affordable power while its expected
  value exceeds ``cast_min``; answer a power worth at least ``respond_min`` (Nullify first if
  ``nullify_first``); play Psychic Duel when its expected value exceeds ``duel_min``; Energy
  Drain if ``drain``. Like every 2nd-edition heuristic it reads only its own view.
- **Rogue Trader** (``rogue-trader-bids``): rest while below ``rest_below`` points; use the best
  ability only if its expected worth exceeds ``min_worth``; bid the fraction ``attack_bid`` (as
  attacker) or ``save_bid`` (as target) of what it may bid.

Tuned parameters are saved as JSON (``best.json``: edition, scenario, family, params, value) and
load as the agent ``tuned:<path>`` (:func:`make_tuned`). A ``best.json`` written by a
``--target maskable-ppo`` study names a trained model instead and loads it through
:func:`psygym_agents.sb3.make_sb3` (an SB3 archive: trusted files only).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from psygym_agents.base import DeterministicPolicy
from psygym_agents.seventh import SeventhHeuristic


@dataclass(frozen=True)
class Family:
    """A parametric policy family of one edition.

    Attributes:
        edition: the edition id it plays.
        name: the family's name (stored in ``best.json``).
        sample: ``(optuna trial, rules) -> params``: the search space.
        build: ``(rules, params) -> Policy``.
        defaults: ``rules -> params``: a reasonable starting point (enqueued as the first trial).
    """

    edition: str
    name: str
    sample: Callable[[Any, Any], dict[str, Any]]
    build: Callable[[Any, dict[str, Any]], Any]
    defaults: Callable[[Any], dict[str, Any]]


# ------------------------------------------------------------------------------------ 7th
class SeventhParametric(SeventhHeuristic):
    """The 7th-edition threshold family (see the module docstring for the parameters).

    It decides like every 7th-edition heuristic (``psygym_agents.seventh.SeventhHeuristic``), with its
    own dice rule (:meth:`dice`) and deny rule (:meth:`deny`).
    """

    KEYS = ("dice_a", "dice_b", "stop_pool", "deny_ratio", "deny_confidence", "deny_min_value")

    def __init__(self, params: dict[str, Any], name: str = "tuned"):
        missing = [k for k in self.KEYS if k not in params]
        if missing:
            raise ValueError(f"7th parametric policy needs {', '.join(missing)}")
        self.p = {k: float(params[k]) for k in self.KEYS}
        super().__init__(name, self.dice, self.deny)

    def dice(self, wc: int, pool: int) -> int:
        """Dice to commit to a power of warp charge ``wc`` with ``pool`` dice left (0: stop)."""
        if pool < max(wc, self.p["stop_pool"]):
            return 0
        n = int(math.floor(self.p["dice_a"] * wc + self.p["dice_b"] + 0.5))
        return max(wc, min(pool, n))

    def deny(self, rules: Any, s: Any) -> int:
        """Dice to deny the pending cast with (0: let it through)."""
        from psygym_agents.seventh import expected_value
        from psygym.editions.seventh.odds import deny_probability

        c = s.cast
        dice = s.pools[1 - s.active]
        if expected_value(rules, s, c.caster, c.power, c.target) < self.p["deny_min_value"]:
            return 0
        if c.successes > self.p["deny_ratio"] * dice:
            return 0
        _, threshold = rules.deny_unit_and_threshold(s, c)
        want = Fraction(self.p["deny_confidence"]).limit_denominator(1000)
        for m in range(1, dice + 1):
            if deny_probability(m, c.successes, threshold) >= want:
                return m
        return dice


def _seventh_sample(trial: Any, rules: Any) -> dict[str, Any]:
    return {
        "dice_a": trial.suggest_float("dice_a", 0.5, 3.0),
        "dice_b": trial.suggest_float("dice_b", -1.0, 3.0),
        "stop_pool": trial.suggest_int("stop_pool", 0, 6),
        "deny_ratio": trial.suggest_float("deny_ratio", 0.1, 2.0),
        "deny_confidence": trial.suggest_float("deny_confidence", 0.05, 0.95),
        "deny_min_value": trial.suggest_float("deny_min_value", 0.0, 6.0),
    }


def _seventh_defaults(rules: Any) -> dict[str, Any]:
    # Close to the "double-wc" heuristic with a fair deny.
    return {"dice_a": 2.0, "dice_b": 0.0, "stop_pool": 0, "deny_ratio": 2.0,
            "deny_confidence": 0.5, "deny_min_value": 0.0}  # fmt: skip


# ------------------------------------------------------------------------------------ 8th
class EighthParametric(DeterministicPolicy):
    """The 8th-edition weights family (see the module docstring for the parameters)."""

    def __init__(self, params: dict[str, Any], name: str = "tuned"):
        self.params = dict(params)
        self.cast_min = float(params.get("cast_min", 0.0))
        self.deny_total = float(params.get("deny_total", 2))
        self.name = name

    def _weight(self, rules: Any, action: int) -> float:
        p, _ = rules.decode_cast(action)
        return float(self.params.get(f"w:{rules.powers[p].name}", 1.0))

    def _best(self, rules: Any, s: Any, unit: int) -> tuple[float, int]:
        from psygym_agents.eighth import _unit_options, attempt_value

        best = (-math.inf, -1)
        for a in _unit_options(rules, s, unit):
            v = self._weight(rules, a) * attempt_value(rules, s, unit, a)
            if v > best[0]:
                best = (v, a)
        return best

    def choose(self, rules: Any, state: Any, player: int) -> int:
        """The family's action in ``state``."""
        from psygym.editions.eighth.state import Stage

        s = state
        if s.stage == Stage.SELECT:
            choice, value = rules.END_PHASE, self.cast_min
            for unit in rules.legal_actions(s):
                if unit == rules.END_PHASE:
                    continue
                v, _ = self._best(rules, s, unit)
                if v > value:
                    choice, value = unit, v
            return choice
        if s.stage == Stage.POWER:
            v, a = self._best(rules, s, s.caster)
            return a if a >= 0 and v > self.cast_min else rules.STOP
        if s.stage == Stage.DENY:
            deniers = rules.deniers(s)
            if not deniers or s.total < self.deny_total:
                return rules.NO_DENY
            return rules.DENY + max(deniers, key=lambda u: (s.deny_left[u], -u))
        raise ValueError(f"{self.name} has no decision at stage {s.stage.name}")


def _eighth_power_names(rules: Any) -> list[str]:
    return [p.name for p in rules.powers]


def _eighth_sample(trial: Any, rules: Any) -> dict[str, Any]:
    params = {f"w:{n}": trial.suggest_float(f"w:{n}", 0.0, 2.0) for n in _eighth_power_names(rules)}
    params["cast_min"] = trial.suggest_float("cast_min", -0.5, 1.0)
    params["deny_total"] = trial.suggest_int("deny_total", 2, 12)
    return params


def _eighth_defaults(rules: Any) -> dict[str, Any]:
    params: dict[str, Any] = {f"w:{n}": 1.0 for n in _eighth_power_names(rules)}
    params.update(cast_min=0.0, deny_total=2)  # like best-power-first + deny-always
    return params


# ------------------------------------------------------------------------------------ 2nd
def _second_class() -> type:
    from psygym_agents.second import _NULLIFY_FIRST, _SURE_FIRST, SecondHeuristic
    from psygym.editions.second.rules import DUEL_BASE, ENERGY_DRAIN, PASS

    class SecondParametric(SecondHeuristic):
        """The 2nd-edition thresholds family; like every 2nd heuristic it reads only its view."""

        def __init__(self, params: dict[str, Any], name: str = "tuned"):
            order = _NULLIFY_FIRST if bool(params.get("nullify_first", False)) else _SURE_FIRST
            super().__init__(threshold=float(params.get("respond_min", 1.0)), order=order)
            self.cast_min = float(params.get("cast_min", 0.0))
            self.duel_min = float(params.get("duel_min", 0.0))
            self.drain = bool(params.get("drain", True))
            self.name = name

        def pick_cast(self, rules: Any, view: Any, casts: list[int]) -> int | None:
            """The most valuable cast if it is worth more than ``cast_min``."""
            best = max((rules.cast_value(view, a), -a) for a in casts)
            return -best[1] if best[0] > self.cast_min else None

        def turn(self, rules: Any, view: Any, legal: list[int]) -> int:
            """Cast, else duel (if worth ``duel_min``), else nullify in play, else drain."""
            casts = [a for a in legal if a >= rules.cast_base]
            if casts:
                chosen = self.pick_cast(rules, view, casts)
                if chosen is not None:
                    return chosen
            duels = [a for a in legal if DUEL_BASE <= a < rules.end_base]
            if duels:
                value, action = max((rules.duel_value(view, a), a) for a in duels)
                if value > self.duel_min:
                    return action
            nullify = [a for a in legal if rules.nullify_base <= a < rules.cast_base]
            if nullify:
                return nullify[0]
            if self.drain and ENERGY_DRAIN in legal and view.opponent_hand_size > 0:
                return ENERGY_DRAIN
            return PASS

    return SecondParametric


def _second_sample(trial: Any, rules: Any) -> dict[str, Any]:
    return {
        "cast_min": trial.suggest_float("cast_min", -0.5, 2.0),
        "respond_min": trial.suggest_float("respond_min", 0.0, 4.0),
        "duel_min": trial.suggest_float("duel_min", -1.0, 2.0),
        "nullify_first": trial.suggest_categorical("nullify_first", [False, True]),
        "drain": trial.suggest_categorical("drain", [False, True]),
    }


def _second_defaults(rules: Any) -> dict[str, Any]:
    # Like cast-biggest.
    return {"cast_min": 0.0, "respond_min": 1.0, "duel_min": 0.0, "nullify_first": False,
            "drain": True}  # fmt: skip


# ------------------------------------------------------------------------------------ RT
def _rt_class() -> type:
    from psygym_agents.rogue_trader import RTHeuristic, best_use
    from psygym.editions.rogue_trader.rules import ABILITY_BASE
    from psygym.editions.rogue_trader.state import Phase

    class RogueTraderParametric(RTHeuristic):
        """The Rogue Trader family: rest threshold, minimum worth and bid fractions."""

        def __init__(self, params: dict[str, Any], name: str = "tuned"):
            super().__init__(name, "freely", "half")
            self.rest_below = int(params.get("rest_below", 0))
            self.min_worth = float(params.get("min_worth", 0.0))
            self.attack_bid = float(params.get("attack_bid", 0.5))
            self.save_bid = float(params.get("save_bid", 0.5))

        def _choose(self, rules: Any, state: Any, legal: list[int]) -> int:
            u = state.actor
            if state.units[u].points < self.rest_below:
                return legal[0]  # rest (or end after an ability)
            abilities = [a - ABILITY_BASE for a in legal if a >= ABILITY_BASE]
            best = best_use(rules, state, u, abilities)
            if best is None or best[0] <= self.min_worth:
                return legal[0]
            return ABILITY_BASE + best[1]

        def _bid(self, rules: Any, state: Any, legal: list[int], points: int) -> int:
            share = self.attack_bid if state.phase == Phase.ATTACK_BID else self.save_bid
            cap = len(legal) - 1
            return legal[max(0, min(cap, int(math.floor(share * cap + 0.5))))]

    return RogueTraderParametric


def _rt_sample(trial: Any, rules: Any) -> dict[str, Any]:
    return {
        "rest_below": trial.suggest_int("rest_below", 0, 14),
        "min_worth": trial.suggest_float("min_worth", 0.0, 2.0),
        "attack_bid": trial.suggest_float("attack_bid", 0.0, 1.0),
        "save_bid": trial.suggest_float("save_bid", 0.0, 1.0),
    }


def _rt_defaults(rules: Any) -> dict[str, Any]:
    # Like spend-freely (bids half).
    return {"rest_below": 0, "min_worth": 0.0, "attack_bid": 0.5, "save_bid": 0.5}


# ------------------------------------------------------------------------------------ registry
FAMILIES: dict[str, Family] = {
    "7th": Family("7th", "seventh-threshold", _seventh_sample,
                  lambda rules, p: SeventhParametric(p), _seventh_defaults),
    "8th": Family("8th", "eighth-weights", _eighth_sample,
                  lambda rules, p: EighthParametric(p), _eighth_defaults),
    "2nd": Family("2nd", "second-thresholds", _second_sample,
                  lambda rules, p: _second_class()(p), _second_defaults),
    "rt": Family("rt", "rogue-trader-bids", _rt_sample,
                 lambda rules, p: _rt_class()(p), _rt_defaults),
}  # fmt: skip
"""Edition id -> its parametric family."""


def family_for(edition: str) -> Family:
    """The parametric family of an edition.

    Raises:
        ValueError: the edition has none; the message lists the editions that do.
    """
    fam = FAMILIES.get(edition)
    if fam is None:
        raise ValueError(
            f"no parametric policy family for edition {edition}; families exist for: "
            f"{', '.join(sorted(FAMILIES))} (tune an RL agent instead: --target maskable-ppo)"
        )
    return fam


def build(rules: Any, params: dict[str, Any], name: str = "tuned") -> Any:
    """The family policy of ``rules``' edition with ``params``."""
    policy = family_for(rules.edition).build(rules, params)
    policy.name = name
    return policy


def save_best(
    path: str | Path, *, edition: str, scenario: str, family: str, params: dict[str, Any],
    value: float, **extra: Any,
) -> Path:  # fmt: skip
    """Write tuned parameters as JSON: edition, scenario, family, params, value and extras."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    doc = {"edition": edition, "scenario": scenario, "family": family, "params": params,
           "value": value, **extra}  # fmt: skip
    p.write_text(json.dumps(doc, indent=2) + "\n")
    return p


def make_tuned(rules: Any, path: str | None = None) -> Any:
    """The ``tuned`` agent: parameters (or a tuned model) saved in a ``best.json``.

    Raises:
        ValueError: no path, an unreadable file, or parameters for another edition.
        FileNotFoundError: no such file.
    """
    if not path:
        raise ValueError("the tuned agent needs a file: tuned:runs/.../best.json")
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no tuned parameters file {p}")
    try:
        doc = json.loads(p.read_text())
    except ValueError as exc:
        raise ValueError(f"{p} is not JSON: {exc}") from None
    if not isinstance(doc, dict) or "family" not in doc:
        raise ValueError(f"{p} is not a tuned-parameters file (no 'family' field)")
    if doc.get("edition") != rules.edition:
        raise ValueError(f"{p} holds parameters for edition {doc.get('edition')}, "
                         f"not {rules.edition}")  # fmt: skip
    if doc["family"] in ("maskable-ppo", "ppo", "dqn"):
        from psygym_agents.sb3 import make_sb3

        model = Path(str(doc.get("model", "")))
        if not model.is_absolute():
            model = p.parent / model
        policy = make_sb3(rules, str(model))
        policy.name = f"tuned:{path}"
        return policy
    fam = family_for(rules.edition)
    if doc["family"] != fam.name:
        raise ValueError(f"{p} is for family {doc['family']!r}; {rules.edition} has {fam.name!r}")
    return build(rules, dict(doc.get("params", {})), name=f"tuned:{path}")


__all__ = [
    "EighthParametric", "FAMILIES", "Family", "SeventhParametric", "build", "family_for",
    "make_tuned", "save_best",
]  # fmt: skip
