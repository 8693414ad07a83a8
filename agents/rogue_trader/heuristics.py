"""Rule-of-thumb policies for Rogue Trader psionics (rules/rogue-trader.md RT-2, RT-3, RT-5).

Every policy plays both roles: a casting heuristic (``spend-freely``, ``conserve``,
``rest-when-low``, ``biggest-attack``) bids with a default rule, and a bidding heuristic
(``bid-none``, ``bid-half``, ``bid-all``) casts like ``spend-freely``.

Casting rules judge an ability at a target by its immediate expected score: the chance that it
works (RT-2.3) times the exact expected value of its resolution with no bids (wounds x value per
wound, a removal's remaining wounds, the ability's ``value``...), computed from the rules' own
exact chance distributions. Defensive abilities get small rule-of-thumb worths (an aura is worth
something only against an enemy that knows a telekinesis missile).

Bids only use what the bidding player may see: the target's bid never looks at the attacker's
pending bid (RT-3.4).

* ``spend-freely``: the best ability every turn while one has positive worth; rests otherwise.
  Default bid: half of what it may bid.
* ``conserve``: keeps 12+ points while it can and never takes a test: with 12 or more points it
  prefers the best ability that leaves it 12 or more, else the best ability (which still works
  without a test); below 12 it rests back up to 12. It bids only points above 12.
* ``rest-when-low``: rests when it has fewer than 7 points (an ability would work less than
  21/36 of the time), otherwise like ``spend-freely``.
* ``biggest-attack``: the most expensive attack it can afford (mental, telekinesis, Rout...),
  at the target where it is worth most; rests when it has none.
* ``bid-none``, ``bid-half``, ``bid-all``: bid 0, half (rounded down) or all of what they may bid,
  as attacker and as target.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from weakref import WeakKeyDictionary

from psygym_agents.base import DeterministicPolicy

from psygym.editions.rogue_trader.chances import works_chance
from psygym.editions.rogue_trader.rules import RogueTraderRules
from psygym.editions.rogue_trader.state import Phase, State
from psygym.kernel import evolve

ATTACKS = frozenset({"mental", "missile", "remove", "steal_mind", "confuse"})
"""Effects that count as attacks for ``biggest-attack``."""

LOW_POINTS = 7
"""``rest-when-low`` rests below this many points."""

_EXPECTED: WeakKeyDictionary[RogueTraderRules, dict[tuple[int, ...], tuple[float, float]]] = (
    WeakKeyDictionary()
)


def _expected_effect(
    rules: RogueTraderRules, state: State, u: int, a: int, t: int
) -> tuple[float, float]:
    """``(chance that a takes effect, expected wounds of an attack)`` at ``t``, no bids, memoised.

    The exact ``Fraction`` sums are done once per key: the resolution depends only on the
    ability, the target and the target's will power bonus, wounds and aura (RT-3, RT-4).
    """
    ts = state.units[t]
    key = (a, t, ts.wp_bonus, ts.hp, ts.aura)
    memo = _EXPECTED.get(rules)
    if memo is None:
        memo = _EXPECTED[rules] = {}
    hit = memo.get(key)
    if hit is None:
        probe = evolve(
            state, phase=Phase.RESOLVE, actor=u, ability=a, target=t, attack_bid=0, save_bid=0
        )
        dist = rules.resolve_distribution(probe)
        p_effect = float(sum((p for o, p in dist if o > 0), Fraction(0)))
        wounds = float(sum((p * (o - 1) for o, p in dist if o > 1), Fraction(0)))
        hit = memo[key] = (p_effect, wounds)
    return hit


def _resolution_worth(rules: RogueTraderRules, state: State, u: int, a: int, t: int) -> float:
    """Expected score (for the caster) of ability ``a`` at ``t`` once it works, with no bids."""
    ab = rules.abilities[a]
    effect = ab.effect
    owner = rules.owner
    ts = state.units[t]
    value = rules.value[a]
    if effect in ("mental", "missile", "steal_mind", "remove", "confuse", "fear"):
        p_effect, wounds = _expected_effect(rules, state, u, a, t)
        if effect in ("mental", "missile"):
            return wounds * rules.vpw[t] + p_effect * value
        if effect == "remove":
            worth = ts.hp * rules.vpw[t] if rules.game.removal_scores_wounds else 0.0
            return p_effect * (worth + value)
        if effect in ("steal_mind", "confuse"):
            idle = 0.5 * ts.points / rules.game.no_test_at if rules.psyker[t] else 0.0
            return p_effect * (idle + value)
        return p_effect * value
    if effect == "aura":
        enemies = [i for i in rules.side_units[1 - owner[u]] if state.units[i].fighting]
        threat = any(
            rules.abilities[b].effect == "missile"
            for i in enemies
            for b in state.units[i].abilities
        )
        return (0.4 if threat else 0.0) + value
    if effect == "destroy_aura":
        return 0.3 + value
    if effect == "transfer_aura":
        return 0.1 + value
    if effect in ("cure_injury", "cure_wounds"):
        return rules.vpw[t] * max(1, state.amount) + value
    if effect == "strength_of_mind":
        return 0.3 + value
    return value


def ability_worth(rules: RogueTraderRules, state: State, u: int, a: int, t: int) -> float:
    """Immediate expected score of psyker ``u`` using ability ``a`` at ``t`` (no bids)."""
    ab = rules.abilities[a]
    points = state.units[u].points
    works = float(works_chance(points, rules.game.no_test_at))
    worth = works * _resolution_worth(rules, state, u, a, t)
    if ab.effect == "cure_injury":  # RT-2.5: a failure wounds the target instead
        worth -= (1 - works) * rules.vpw[t]
    return worth


def best_use(
    rules: RogueTraderRules, state: State, u: int, abilities: list[int]
) -> tuple[float, int, int] | None:
    """``(worth, ability, target)`` of the best of ``abilities`` for psyker ``u``, if any."""
    best = None
    for a in abilities:
        for t in rules.targets(state, u, a):
            w = ability_worth(rules, state, u, a, t)
            if best is None or w > best[0] + 1e-12:
                best = (w, a, t)
    return best


class RTHeuristic(DeterministicPolicy):
    """A casting rule combined with a bidding rule.

    Args:
        name: the short name.
        cast: ``freely``, ``conserve``, ``rest-when-low`` or ``biggest``.
        bid: ``none``, ``half``, ``all`` or ``conserve`` (only points above 12).
    """

    def __init__(self, name: str, cast: str = "freely", bid: str = "half"):
        self.name = name
        self.cast = cast
        self.bid = bid

    def choose(self, rules: RogueTraderRules, state: State, player: int) -> int:
        """The heuristic's action (always legal)."""
        legal = rules.legal_actions(state)
        if len(legal) == 1:
            return legal[0]
        phase = state.phase
        if phase == Phase.CHOOSE:
            return self._choose(rules, state, legal)
        if phase == Phase.TARGET:
            u, a = state.actor, state.ability
            target_of = rules.actions.target_of
            return max(legal, key=lambda x: (ability_worth(rules, state, u, a, target_of(x)), -x))
        if phase == Phase.AMOUNT:
            return legal[-1]
        if phase in (Phase.ATTACK_BID, Phase.SAVE_BID):
            bidder = state.actor if phase == Phase.ATTACK_BID else state.target
            return self._bid(rules, state, legal, state.units[bidder].points)
        return legal[0]

    def _choose(self, rules: RogueTraderRules, state: State, legal: list[int]) -> int:
        u = state.actor
        points = state.units[u].points
        layout = rules.actions
        abilities = layout.abilities_in(legal)
        fallback = legal[0]  # REST, or END after an ability
        threshold = rules.game.no_test_at
        if self.cast == "rest-when-low" and points < LOW_POINTS:
            return fallback
        if self.cast == "conserve":
            if points < threshold:  # never take a test: rest back up to the threshold
                return fallback
            keep = [a for a in abilities if points - rules.abilities[a].cost >= threshold]
            best = best_use(rules, state, u, keep)
            if best is not None and best[0] > 0:
                return layout.ability(best[1])
        if self.cast == "biggest":
            attacks = [a for a in abilities if rules.abilities[a].effect in ATTACKS]
            if not attacks:
                return fallback
            top = max(rules.abilities[a].cost for a in attacks)
            abilities = [a for a in attacks if rules.abilities[a].cost == top]
            best = best_use(rules, state, u, abilities)
            return layout.ability(best[1]) if best is not None else fallback
        best = best_use(rules, state, u, abilities)
        if best is None or best[0] <= 0:
            return fallback
        return layout.ability(best[1])

    def _bid(self, rules: RogueTraderRules, state: State, legal: list[int], points: int) -> int:
        cap = len(legal) - 1
        if self.bid == "none":
            k = 0
        elif self.bid == "all":
            k = cap
        elif self.bid == "conserve":
            k = min(cap, max(0, points - rules.game.no_test_at))
        else:
            k = cap // 2
        return legal[k]


def _factory(name: str, cast: str, bid: str) -> Callable[..., RTHeuristic]:
    def make(rules: RogueTraderRules | None = None, arg: str | None = None) -> RTHeuristic:
        return RTHeuristic(name, cast, bid)

    make.__doc__ = f"Build the {name!r} heuristic."
    return make


HEURISTICS: dict[str, Callable[..., RTHeuristic]] = {
    "spend-freely": _factory("spend-freely", "freely", "half"),
    "conserve": _factory("conserve", "conserve", "conserve"),
    "rest-when-low": _factory("rest-when-low", "rest-when-low", "half"),
    "biggest-attack": _factory("biggest-attack", "biggest", "half"),
    "bid-none": _factory("bid-none", "freely", "none"),
    "bid-half": _factory("bid-half", "freely", "half"),
    "bid-all": _factory("bid-all", "freely", "all"),
}
"""Short name -> factory ``f(rules) -> policy`` (found by ``psygym_agents.registry``)."""
