"""7th-edition rules of thumb: how many dice to commit and when to deny.

Casting heuristics pick the castable power with the highest expected value (a power's ``value``,
or the expected wounds times the target's value per wound), commit a number of dice given by
their rule, and stop when the pool cannot pay for the rule (keeping at least the warp charge).
Denying heuristics answer with the fewest dice that give a fair (>= 1/2) chance, or all their
dice when even that is out of reach, subject to their rule; a deny that cannot succeed (fewer
dice than the caster's successes) keeps its dice. ``deny-always`` instead throws every die left
at every power it can deny. Each kind fills the other role with a sensible default: casters deny
like ``double-wc``; deniers cast like ``double-wc``.

Power generation decisions (7E-2) are answered by every heuristic the same way: roll on the first
discipline offered and keep the rolled power.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from weakref import WeakKeyDictionary

from psygym_agents.base import DeterministicPolicy

from psygym.dice import mean
from psygym.editions.seventh.odds import deny_probability
from psygym.editions.seventh.rules import SeventhRules
from psygym.editions.seventh.state import Cast, Stage, State
from psygym.kernel import evolve

DiceRule = Callable[[int, int], int]
"""(warp charge, dice left) -> dice to commit (0: do not cast)."""


_EXPECTED: WeakKeyDictionary[SeventhRules, dict[tuple, float]] = WeakKeyDictionary()
"""Expected values per rules object and key (exact ``Fraction`` sums are slow to redo)."""


def expected_value(rules: SeventhRules, s: State, caster: int, power: int, target: int) -> float:
    """Expected score of a power if it takes effect (value, or wounds x value per wound).

    The exact sum depends only on the power, the caster, its targets and their wounds and Warp
    Surge (what ``rules.effect_distribution`` reads), so it is memoised per that key.
    """
    p = rules.powers[power]
    if p.effect.value is not None:
        return float(p.effect.value)
    targets = rules.nova_targets(s, caster, p) if p.target == "enemies" else (target,)
    key = (caster, power, target, tuple((t, s.units[t].wounds, s.units[t].surge) for t in targets))
    memo = _EXPECTED.get(rules)
    if memo is None:
        memo = _EXPECTED[rules] = {}
    hit = memo.get(key)
    if hit is None:
        probe = evolve(s, cast=Cast(caster, power, target))
        hit = memo[key] = float(
            sum(
                mean(rules.effect_distribution(probe, t)) * Fraction(rules.specs[t].value_per_wound)
                for t in targets
            )
        )
    return hit


def ranked_casts(rules: SeventhRules, s: State) -> list[tuple[float, int, int]]:
    """Legal cast choices as (expected value, action, warp charge), best first."""
    out = []
    for a in rules.legal_actions(s):
        if a == 0:
            continue
        c, p, t = rules.actions.decode_cast(a)
        out.append((expected_value(rules, s, c, p, t), a, rules.powers[p].warp_charge))
    out.sort(key=lambda x: (-x[0], x[1]))
    return out


@cache
def deny_chance(dice: int, successes: int, threshold: int) -> Fraction:
    """``odds.deny_probability``, memoised (exact binomial sums at every deny are slow)."""
    return deny_probability(dice, successes, threshold)


def fair_deny_dice(dice_left: int, successes: int, threshold: int) -> int:
    """Fewest dice giving at least an even chance to negate every success, else all dice.

    A deny that cannot succeed (fewer dice than successes, 7E-5.3) keeps its dice: 0.
    """
    if dice_left < successes or not deny_chance(dice_left, successes, threshold):
        return 0
    for m in range(1, dice_left + 1):
        if deny_chance(m, successes, threshold) >= Fraction(1, 2):
            return m
    return dice_left


class SeventhHeuristic(DeterministicPolicy):
    """A casting rule plus a denying rule for 7th edition.

    Args:
        name: the agent's short name.
        dice_rule: (warp charge, dice left) -> dice to commit, 0 to stop casting.
        deny_rule: (rules, state) -> dice to deny with (0: no deny).
    """

    def __init__(
        self, name: str, dice_rule: DiceRule, deny_rule: Callable[[SeventhRules, State], int]
    ):
        self.name = name
        self.dice_rule = dice_rule
        self.deny_rule = deny_rule

    def choose(self, rules: SeventhRules, state: State, player: int) -> int:
        """The action this rule of thumb takes."""
        s = state
        if s.stage == Stage.DISCIPLINE:
            return rules.legal_actions(s)[0]
        if s.stage == Stage.SWAP:
            return rules.actions.swap(False)
        if s.stage == Stage.SELECT:
            dice = s.pools[s.active]
            for _, action, wc in ranked_casts(rules, s):
                if self.dice_rule(wc, dice) > 0:
                    return action
            return 0
        if s.stage == Stage.DICE:
            wc = rules.powers[s.cast.power].warp_charge
            n = max(1, min(self.dice_rule(wc, s.pools[s.active]), s.pools[s.active]))
            return rules.actions.dice(n)
        if s.stage == Stage.DENY:
            m = min(self.deny_rule(rules, s), s.pools[1 - s.active])
            return rules.actions.deny(max(0, m))
        raise ValueError(f"{self.name} has no decision at stage {s.stage.name}")


@dataclass(frozen=True)
class Commit:
    """A dice rule: ``extra_per_wc`` x WC + ``extra`` dice, or everything left with ``all_in``.

    The rule casts only while the pool holds at least the warp charge, and commits what is left
    when the pool is short of its target. A class, not a closure, so a policy using it pickles.
    """

    extra_per_wc: int
    extra: int = 0
    all_in: bool = False

    def __call__(self, wc: int, dice_left: int) -> int:
        """Dice to commit to a power of warp charge ``wc`` with ``dice_left`` in the pool."""
        if dice_left < wc:
            return 0
        return dice_left if self.all_in else min(dice_left, self.extra_per_wc * wc + self.extra)


def commit(extra_per_wc: int, extra: int = 0, *, all_in: bool = False) -> DiceRule:
    """The dice rule :class:`Commit` (``extra_per_wc`` x WC + ``extra``, or all in)."""
    return Commit(extra_per_wc, extra, all_in)


def deny_fair(rules: SeventhRules, s: State) -> int:
    """Deny every power with the fewest dice that give an even chance."""
    _, threshold = rules.deny_unit_and_threshold(s, s.cast)
    return fair_deny_dice(s.pools[1 - s.active], s.cast.successes, threshold)


def deny_all(rules: SeventhRules, s: State) -> int:
    """Deny every power that can be denied, with every die left (the best chance of all)."""
    _, threshold = rules.deny_unit_and_threshold(s, s.cast)
    dice = s.pools[1 - s.active]
    if dice < s.cast.successes or not deny_chance(dice, s.cast.successes, threshold):
        return 0
    return dice


def deny_never(rules: SeventhRules, s: State) -> int:
    """Never deny."""
    return 0


@dataclass(frozen=True)
class DenyBig:
    """Deny only powers whose expected value exceeds ``threshold`` wound-equivalents."""

    threshold: float = 2.0

    def __call__(self, rules: SeventhRules, s: State) -> int:
        """Deny dice for the pending cast (0: let it through)."""
        c = s.cast
        if expected_value(rules, s, c.caster, c.power, c.target) <= self.threshold:
            return 0
        return deny_fair(rules, s)


def deny_big(threshold: float = 2.0) -> Callable[[SeventhRules, State], int]:
    """The deny rule :class:`DenyBig` (a class, not a closure, so a policy using it pickles)."""
    return DenyBig(threshold)


DOUBLE_WC = commit(2)

HEURISTICS: dict[str, Callable[..., SeventhHeuristic]] = {
    "double-wc": lambda rules: SeventhHeuristic("double-wc", DOUBLE_WC, deny_fair),
    "double-wc-plus1": lambda rules: SeventhHeuristic("double-wc-plus1", commit(2, 1), deny_fair),
    "all-in": lambda rules: SeventhHeuristic("all-in", commit(0, all_in=True), deny_fair),
    "minimum": lambda rules: SeventhHeuristic("minimum", commit(1), deny_fair),
    "deny-always": lambda rules: SeventhHeuristic("deny-always", DOUBLE_WC, deny_all),
    "deny-never": lambda rules: SeventhHeuristic("deny-never", DOUBLE_WC, deny_never),
    "deny-big": lambda rules, threshold="2": SeventhHeuristic(
        "deny-big", DOUBLE_WC, deny_big(float(threshold))
    ),
}
"""Short name -> factory(rules) for every 7th-edition heuristic."""
