"""8th-edition rules of thumb: which psyker and power next, and when to deny.

Casting heuristics rank the powers a unit may attempt now and select the psyker unit whose
top-ranked power is best; they stop (with a unit, or end the phase) when no attempt has a
positive expected value (:func:`attempt_value`). Deny heuristics decide, after seeing the test
total, whether to spend a deny and with which unit (the eligible one with the most deny attempts
left). Each kind fills the other role with a sensible default: casters deny like
``deny-always``; deniers cast like ``best-power-first``.

8th edition has no hidden information, so the heuristics read the full state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from psygym_agents.base import DeterministicPolicy

from psygym.editions.eighth.effects import deny_chance, is_perils, mortal_distribution, two_d6
from psygym.editions.eighth.rules import EighthRules
from psygym.editions.eighth.state import Stage, State
from psygym.per_rules import memo_per_rules

_PERILS = float(sum((p for t, p in two_d6() if is_perils(t)), Fraction(0)))


def deny_threat(rules: EighthRules, s: State, caster: int) -> bool:
    """Whether an enemy PSYKER could still deny a power of ``caster`` this phase (8E-5.1)."""
    return any(s.wounds[d] > 0 and s.deny_left[d] > 0 for d in rules.deny_candidates[caster])


def attempt_value(rules: EighthRules, s: State, caster: int, action: int) -> float:
    """Expected score of attempting a cast action now, for the caster's side.

    Sum over test totals that pass of P(total) x P(not denied) x E[effect | total], where a deny
    is assumed whenever an enemy PSYKER in range has a deny left, minus the expected value of the
    wounds Perils costs the caster (blasts ignored).
    """
    p, t = rules.actions.decode_cast(action)
    return _attempt_value(
        rules,
        caster,
        p,
        t,
        rules.warp_charge(s, p),
        deny_threat(rules, s, caster),
        s.wounds[t],
        s.wounds[caster],
    )


@memo_per_rules
def _attempt_value(
    rules: EighthRules,
    caster: int,
    p: int,
    t: int,
    wc: int,
    threat: bool,
    target_wounds: int,
    caster_wounds: int,
) -> float:
    value = 0.0
    for total, q in two_d6():
        if total >= wc:
            weight = 1.0 - float(deny_chance(total)) if threat else 1.0
            value += float(q) * weight * rules.mean_effect(p, caster, t, total, target_wounds)
    perils = mortal_distribution(rules.game.perils_mortal_wounds, caster_wounds)
    lost = float(sum(w * q for w, q in perils)) * rules.units[caster].value_per_wound
    return value - _PERILS * lost


def deny_now_value(rules: EighthRules, s: State) -> float:
    """What denying the pending power saves in expectation, for the denier's side (8E-5.2).

    P(a 2D6 deny beats the known test total) x the power's expected effect at that total.
    """
    stake = rules.expected_effect(s, s.power, s.caster, s.target, s.total)
    return float(deny_chance(s.total)) * stake


def deny_gain(rules: EighthRules, s: State, caster: int, action: int) -> float:
    """What a deny kept for a future cast action is expected to save (8E-5.2).

    The sum over the 2D6 test totals T that pass (T >= warp charge, 8E-4.1) of
    P(T) x P(deny beats T) x effect(T): a deny kept for a test that then fails saves nothing, so
    the chance that the test passes is part of the value. It is exact for effects that depend on
    the total (Smite's D6 on 11+, 8E-7.1). The warp charge is today's (later Smite escalation,
    8E-4.2, is not foreseen).
    """
    p, t = rules.actions.decode_cast(action)
    return _deny_gain(rules, caster, p, t, rules.warp_charge(s, p), s.wounds[t])


@memo_per_rules
def _deny_gain(
    rules: EighthRules, caster: int, p: int, t: int, wc: int, target_wounds: int
) -> float:
    saved = Fraction(0)
    for total, q in two_d6():
        if total >= wc:
            effect = rules.mean_effect(p, caster, t, total, target_wounds)
            saved += q * deny_chance(total) * Fraction(effect)
    return float(saved)


def future_deny_gains(rules: EighthRules, s: State) -> list[float]:
    """:func:`deny_gain` of each enemy attempt still to come this phase, best first.

    Attempts still to come: the pending caster's ``manifests_left`` and ``manifest`` for every
    living enemy PSYKER not yet selected (8E-2.2, 8E-2.3), counted only if one of the denier's
    living units with a deny left is within deny range of that caster (8E-5.1). Each unit is
    given its best powers, at most one attempt per power (8E-3.3), and a power other than Smite
    at most once for the whole army (8E-3.2). Each attempt takes at most one deny (8E-5.3).
    """
    mine = 1 - s.active
    reach = {d for d in rules.side_units[mine] if s.wounds[d] > 0 and s.deny_left[d] > 0}
    slots: dict[int, int] = {}
    best: dict[tuple[int, int], float] = {}  # (unit, power) -> its best gain over targets
    for unit in rules.side_psykers[s.active]:
        if s.wounds[unit] == 0:
            continue
        if unit == s.caster:
            count = s.manifests_left
        elif (s.selected >> unit) & 1:
            continue
        else:
            count = rules.units[unit].manifest
        if not count or reach.isdisjoint(rules.deny_candidates[unit]):
            continue
        slots[unit] = count
        for a in rules.cast_options(s, unit):
            key = (unit, rules.actions.decode_cast(a).power)
            gain = deny_gain(rules, s, unit, a)
            if key not in best or gain > best[key]:
                best[key] = gain
    gains: list[float] = []
    army_once: set[int] = set()
    for (unit, p), gain in sorted(best.items(), key=lambda item: (-item[1], item[0])):
        if not slots[unit] or p in army_once:
            continue
        slots[unit] -= 1
        if not rules.powers[p].repeatable:
            army_once.add(p)
        gains.append(gain)
    return gains


CastKey = Callable[[EighthRules, State, int, int], tuple[float, ...]]
"""(rules, state, caster, cast action) -> sort key, smaller is better."""


def by_value(rules: EighthRules, s: State, caster: int, action: int) -> tuple[float, ...]:
    """Highest expected value per attempt first (``best-power-first``)."""
    return (-attempt_value(rules, s, caster, action), action)


def smite_first(rules: EighthRules, s: State, caster: int, action: int) -> tuple[float, ...]:
    """Smite before anything else, then by expected value (``smite-first``)."""
    p = rules.actions.decode_cast(action).power
    is_smite = rules.powers[p].name == "Smite"
    return (0.0 if is_smite else 1.0, -attempt_value(rules, s, caster, action), action)


def cheapest(rules: EighthRules, s: State, caster: int, action: int) -> tuple[float, ...]:
    """Lowest warp charge first, then by expected value (``cheapest-first``)."""
    p = rules.actions.decode_cast(action).power
    return (rules.warp_charge(s, p), -attempt_value(rules, s, caster, action), action)


def _best(rules: EighthRules, s: State, unit: int, key: CastKey) -> tuple[tuple[float, ...], int]:
    """Best-ranked worthwhile cast of ``unit`` as (key, action), or ((inf,), -1) if none."""
    options = [a for a in rules.cast_options(s, unit) if attempt_value(rules, s, unit, a) > 0]
    if not options:
        return ((float("inf"),), -1)
    best = min(options, key=lambda a: key(rules, s, unit, a))
    return key(rules, s, unit, best), best


DenyRule = Callable[[EighthRules, State], bool]
"""(rules, state at a DENY decision) -> whether to deny."""


def deny_always(rules: EighthRules, s: State) -> bool:
    """Deny every power that can be denied."""
    return True


def deny_never(rules: EighthRules, s: State) -> bool:
    """Never deny."""
    return False


@dataclass(frozen=True)
class DenyHighRoll:
    """Deny only tests whose total is at least ``threshold`` (a class, so a policy pickles)."""

    threshold: int = 7

    def __call__(self, rules: EighthRules, s: State) -> bool:
        """Whether to deny the pending test."""
        return s.total >= self.threshold


def deny_high_roll(threshold: int = 7) -> DenyRule:
    """The deny rule :class:`DenyHighRoll`: deny only tests totalling ``threshold`` or more."""
    return DenyHighRoll(threshold)


def save_deny_for_best(rules: EighthRules, s: State) -> bool:
    """Deny when that saves at least as much as keeping the deny for a power still to come.

    Denying now is worth :func:`deny_now_value` (the chance a deny beats the known test total x
    the pending power's stake, 8E-5.2); keeping a deny is worth the :func:`future_deny_gains` of
    the enemy attempts still to come this phase (denies do not carry over, 8E-1.2). With k deny
    attempts left, deny now if its value is at least the k-th best future gain (the use the
    spent deny takes away), and whenever there are more denies than future attempts.
    """
    mine = 1 - s.active
    k = sum(s.deny_left[d] for d in rules.side_units[mine] if s.wounds[d] > 0)
    future = future_deny_gains(rules, s)
    if k > len(future):
        return True
    return deny_now_value(rules, s) >= future[k - 1]


class EighthHeuristic(DeterministicPolicy):
    """A casting ranking plus a deny rule for 8th edition.

    Args:
        name: the agent's short name.
        cast_key: ranks cast actions (smaller first).
        deny_rule: whether to deny the pending power.
    """

    def __init__(self, name: str, cast_key: CastKey, deny_rule: DenyRule):
        self.name = name
        self.cast_key = cast_key
        self.deny_rule = deny_rule

    def choose(self, rules: EighthRules, state: State, player: int) -> int:
        """The action this rule of thumb takes."""
        s = state
        layout = rules.actions
        if s.stage == Stage.SELECT:
            best_key: tuple[float, ...] = (float("inf"),)
            choice = layout.END_PHASE
            for a in rules.legal_actions(s):
                if a == layout.END_PHASE:
                    continue
                key, action = _best(rules, s, a, self.cast_key)
                if action >= 0 and key < best_key:
                    best_key, choice = key, a
            return choice
        if s.stage == Stage.POWER:
            _, action = _best(rules, s, s.caster, self.cast_key)
            return layout.STOP if action < 0 else action
        if s.stage == Stage.DENY:
            deniers = rules.deniers(s)
            if not deniers or not self.deny_rule(rules, s):
                return layout.NO_DENY
            d = max(deniers, key=lambda u: (s.deny_left[u], -u))
            return layout.deny(d)
        raise ValueError(f"{self.name} has no decision at stage {s.stage.name}")


HEURISTICS: dict[str, Callable[..., EighthHeuristic]] = {
    "smite-first": lambda rules: EighthHeuristic("smite-first", smite_first, deny_always),
    "best-power-first": lambda rules: EighthHeuristic("best-power-first", by_value, deny_always),
    "cheapest-first": lambda rules: EighthHeuristic("cheapest-first", cheapest, deny_always),
    "deny-always": lambda rules: EighthHeuristic("deny-always", by_value, deny_always),
    "deny-never": lambda rules: EighthHeuristic("deny-never", by_value, deny_never),
    "deny-high-roll": lambda rules, threshold="7": EighthHeuristic(
        "deny-high-roll", by_value, deny_high_roll(int(threshold))
    ),
    "save-deny-for-best": lambda rules: EighthHeuristic(
        "save-deny-for-best", by_value, save_deny_for_best
    ),
}
"""Short name -> factory(rules[, argument]) for every 8th-edition heuristic."""
