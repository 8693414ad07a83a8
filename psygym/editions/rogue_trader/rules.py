"""Rules of Rogue Trader (1st edition) psionics, rules/rogue-trader.md RT-1 to RT-6.

There is no shared dice pool: every psyker spends its own psi-points, which carry over from turn
to turn, so the game is about budgeting energy over a whole battle and about secret bids.

Game flow
---------
1. Set-up (chance nodes, only when the scenario asks for random generation, RT-1): for each psyker
   in scenario order, its random psi-level (3D6 per mastery grade), then, for ``abilities =
   "random"``, its number of abilities (typical, or 1D6..4D6 capped at 10 and at intelligence)
   and one chance node per ability drawn. A repeated roll is re-rolled (RT-1.3): D(mastery) for
   the level then D10 on that chart, re-rolled when already held, is exactly a uniform draw among
   the abilities of level <= mastery not yet held, which is what each draw node lists.
2. Turns alternate (``game.turns`` player turns in all, default 6, so 3 each; ``first_player``
   starts; RT-6.1). At the start of a turn, psykers of the active player that rested during their
   previous turn regain 1 psi-point, never above their psi-level (RT-5); each confused unit of
   that player then makes a psychic save to recover (chance node).
3. The active player's psykers act one after the other in scenario order (RT-2.1). A psyker
   whose mind is stolen or that is still confused does nothing. Otherwise it chooses an ability
   (cost <= remaining points, RT-2.2) or rests; then the target (skipped when only one is legal)
   and, for Cure Wounds, the number of wounds to heal (10 points each).
4. With ``no_test_at`` (12) points or more the ability works; otherwise a 2D6 chance node: it
   works if the total <= remaining points (RT-2.3). The cost is deducted either way (RT-2.4).
   Cure Injury failing its test wounds its target instead (RT-2.5).
5. An ability allowing a psychic save (RT-3): the attacker bids ``k`` points of enhanced attack
   (0..min(points, max_bid)), then the target, if it is a psyker, bids ``j`` points of augmented
   save WITHOUT seeing ``k``. Both bids are deducted whatever happens. One chance node then
   resolves the save (2D6 <= WP - k + j) together with the effect (wounds, duration...).
   See :meth:`RogueTraderRules.simultaneous_info` for solving the pair as a matrix game.
6. The game ends after the last turn or as soon as a side has no unit left in the fight.
   Score (RT-6.2), from player 0's point of view: value of wounds inflicted (``value_per_wound``)
   minus suffered, plus abilities' ``value`` when they work, plus the remaining wounds of units
   put out of the fight; healing gives back the value of the wounds healed.

Decision nodes where the rules leave one choice (an ability with one legal target, a bid with
no points to spend, a psyker with no usable ability, which can only rest) are advanced
automatically, as are chance nodes with a single outcome (a test with 1 point left).

Action layout (``Discrete(num_actions)``, fixed per scenario)
----------------------------------------------------------------
* ``0`` REST: the psyker does nothing for its whole turn (RT-5).
* ``1`` END: end the psyker's turn after using an ability (only with ``abilities_per_turn`` > 1).
* ``2 .. 41`` use ability ``a - 2`` (ids are positions in ``data/abilities.toml``).
* ``42 .. 42+U-1`` target unit ``a - 42`` (U units in scenario order, side 0's first).
* ``42+U .. 42+U+N`` the number ``a - 42 - U``: a bid (0..max_bid) or the wounds Cure Wounds heals.

Chance outcomes: test 1 = works / 0 = fails; recovery 1 = recovered / 0 = still confused;
resolution 0 = psychic save made, then for attacks 1 = no wound, ``1 + w`` = ``w`` wounds, for
Steal Mind ``d`` = lost turns, for other effects 1 = takes hold; set-up: the psi-level, the
number of abilities or the ability id drawn.

Defaults chosen where the spec or the seed is silent
----------------------------------------------------
* ``turns`` counts player turns (6: three each).
* Doing nothing is resting: in a psychic-phase game a psyker that uses no ability is inactive.
  A psyker whose mind is stolen or confused does not rest. Spending points on an augmented save
  is psychic activity and cancels a rest (``augment_breaks_rest``, default true).
* Psi-points of every psyker are public; only the attacker's pending bid is secret.
* The ability's cost is deducted before bidding, so a bid comes from the points left after it.
* Steal Mind allows a psychic save (the seed: "any individual suffering from psychic attack may
  attempt a saving throw"); its D6 duration is rolled openly when it takes hold and counts the
  target's own turns; a mind already stolen cannot be stolen again. A stolen mind cannot augment
  its save; a confused psyker can.
* Cause Confusion: the unit does nothing until it passes a psychic save at the start of one of
  its turns (then acts normally that turn); it cannot be confused again while confused.
  Cause Fear: no effect in a psychic phase beyond its ``value``; not twice on the same unit.
* Rout and Change Allegiance put the target out of the fight; it scores its remaining wounds'
  value (``removal_scores_wounds``) plus the ability's value.
* Auras (RT-4.3): one at a time; a new aura replaces the old one, so only a higher level may be
  raised; they add +level to the armour save against telekinesis missiles (no armour: 7 - level;
  a natural 1 always fails) and do nothing against mental attacks. Destroy Aura needs a target
  bearing an aura of level 1-2; Transfer Aura moves the caster's aura onto another friendly
  character (single-model unit) within 2" bearing a lower one.
* Telekinesis missiles hit automatically; the armour save is not modified by strength.
* Wounds of one hit never spill over to the next model of a squad.
* Cure Injury and Cure Wounds reach "by touch": the caster or a friendly character within 1".
  Cure Injury may only be aimed at a character exactly 1 wound down.
* Strength of Mind raises will power only (the characteristic that matters here).
* Abilities with no fighting effect ("value" in the data) target nobody and score their
  ``value`` (default 0, overridable per scenario with ``game.ability_values``).
* Telepathy 2 is missing from the seed's text: it costs 3 points here.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from typing import Any

import numpy as np

from psygym.combat import capped, roll_chance, save_chance, to_wound_rt
from psygym.core import (
    CHANCE,
    TERMINAL,
    ActionView,
    Event,
    Information,
    RulesBase,
    SimultaneousMove,
)
from psygym.dice import distribution
from psygym.editions.rogue_trader.abilities import AbilityData, load_data
from psygym.editions.rogue_trader.spec import RTScenario
from psygym.editions.rogue_trader.state import DECISIONS, Phase, State, UnitState, evolve
from psygym.scenario import distance

REST = 0
"""Action: rest (do nothing for the whole turn, RT-5)."""
END = 1
"""Action: end this psyker's turn after using an ability."""
ABILITY_BASE = 2
"""Action ``ABILITY_BASE + id``: use ability ``id``."""

KINDS = ("choose", "target", "amount", "attack_bid", "save_bid", "none")
"""Kinds of decision, in the order of the observation's one-hot."""
_KIND_OF = {
    Phase.CHOOSE: 0, Phase.TARGET: 1, Phase.AMOUNT: 2, Phase.ATTACK_BID: 3, Phase.SAVE_BID: 4,
}  # fmt: skip
_GLOBAL = 10
_UNIT_FEATURES = 16
_NORM = 20.0


# ----------------------------------------------------------------------------- exact chances
@cache
def two_d6_at_most(n: int) -> Fraction:
    """Chance that 2D6 totals ``n`` or less (psychic test RT-2.3, psychic save RT-3.1)."""
    return sum((p for total, p in distribution("2D6").items() if total <= n), Fraction(0))


@cache
def works_chance(points: int, no_test_at: int = 12) -> Fraction:
    """Chance that an ability works with ``points`` psi-points remaining (RT-2.3)."""
    return Fraction(1) if points >= no_test_at else two_d6_at_most(points)


@cache
def psychic_save_chance(will_power: int, enhanced: int = 0, augmented: int = 0) -> Fraction:
    """Chance of a psychic save: 2D6 <= WP - enhanced + augmented (RT-3.1 to RT-3.3)."""
    return two_d6_at_most(will_power - enhanced + augmented)


def armour_needed(save: int, aura: int) -> int | None:
    """Save roll needed against physical attacks with an aura of ``aura`` levels (RT-4.3)."""
    if aura <= 0:
        return save if save <= 6 else None
    return min(save, 7) - aura


@cache
def attack_outcomes(
    p_save: Fraction, p_damage: Fraction, damage: str, cap: int
) -> tuple[tuple[int, Fraction], ...]:
    """Outcomes of an attack: 0 saved, 1 no wound, ``1 + w`` for ``w`` wounds (capped at ``cap``).

    Args:
        p_save: chance of a psychic save (0 when none is allowed).
        p_damage: chance that the hit becomes an unsaved wound once the psychic save failed.
        damage: wounds of a damaging hit, a dice expression.
        cap: wounds the current model has left (wounds do not spill over).
    """
    out: dict[int, Fraction] = {0: p_save, 1: (1 - p_save) * (1 - p_damage)}
    for w, p in capped(distribution(damage), cap).items():
        out[1 + w] = out.get(1 + w, Fraction(0)) + (1 - p_save) * p_damage * p
    return tuple((o, p) for o, p in sorted(out.items()) if p > 0)


@cache
def _binary(p: Fraction) -> tuple[tuple[int, float], ...]:
    return tuple((o, float(q)) for o, q in ((0, 1 - p), (1, p)) if q > 0)


@cache
def _floats(outcomes: tuple[tuple[int, Fraction], ...]) -> tuple[tuple[int, float], ...]:
    return tuple((o, float(p)) for o, p in outcomes if p > 0)


# ----------------------------------------------------------------------------- action views
@dataclass(frozen=True, kw_only=True)
class UseAbility(ActionView):
    """A psyker uses an ability (target chosen next)."""

    psyker: str
    ability: str
    cost: int
    works: float


@dataclass(frozen=True, kw_only=True)
class Rest(ActionView):
    """A psyker rests for the whole turn (RT-5)."""

    psyker: str


@dataclass(frozen=True, kw_only=True)
class EndTurn(ActionView):
    """A psyker stops using abilities this turn."""

    psyker: str


@dataclass(frozen=True, kw_only=True)
class ChooseTarget(ActionView):
    """The target of the ability being used."""

    psyker: str
    ability: str
    target: str


@dataclass(frozen=True, kw_only=True)
class ChooseAmount(ActionView):
    """How many wounds Cure Wounds heals, for 10 points each (RT-4.6)."""

    psyker: str
    ability: str
    wounds: int
    cost: int


@dataclass(frozen=True, kw_only=True)
class Bid(ActionView):
    """A secret bid of psi-points: ``enhance`` (attacker, RT-3.2) or ``augment`` (RT-3.3)."""

    psyker: str
    role: str
    points: int


@dataclass(frozen=True, kw_only=True)
class Roll(ActionView):
    """A chance outcome: ``kind`` is test, recover, resolve, psi-level, count or draw."""

    kind: str
    outcome: int


# ----------------------------------------------------------------------------- rules
class RogueTraderRules(RulesBase):
    """Rogue Trader psionics over a validated scenario (see the module docstring).

    Besides the ``RulesBase`` API it offers ``is_response(state)`` (true at the target's save
    bid), ``targets(state, psyker, ability)``, ``will_power(state, unit)``,
    ``resolve_distribution(state)`` (exact ``Fraction`` outcomes of a resolution node) and
    ``simultaneous_info(state)`` for the secret bids of RT-3.4:

    * the attacker's bid node (:attr:`Phase.ATTACK_BID`) and the target's bid node
      (:attr:`Phase.SAVE_BID`) follow each other; the state holds the attacker's pending bid
      (``State.attack_bid``) but ``observe(state, target_player)`` and
      ``render(state, target_player)`` never reveal it, and the points are only deducted once
      both bids are in;
    * ``simultaneous_info(state)`` returns ``None`` except at an attacker's bid node where both
      sides have a choice; there it returns ``SimultaneousMove(row_player, row_actions,
      col_player, col_actions, fn)`` with ``fn(row, col)`` the state after both bids, so a
      solver can treat the pair as one zero-sum matrix game (solve it with a linear program)
      instead of letting the target see the attacker's bid.

    Attributes:
        scenario: the validated :class:`~psygym.editions.rogue_trader.spec.RTScenario`.
        game: its ``[game]`` settings.
        names, owner, specs: per unit, in scenario order (side 0's units first).
        target_base, number_base: first target action and first number (bid/amount) action.
    """

    edition = "rt"
    information = Information.SIMULTANEOUS  # RT-3.4: the two bids are secret and simultaneous

    def __init__(self, scenario: RTScenario, source: str = "<scenario>"):
        self.scenario = scenario
        self.source = source
        self.game = scenario.game
        self.data: AbilityData = load_data()
        data, game = self.data, self.game
        specs, owner = [], []
        for p, side in enumerate(scenario.sides):
            for unit in side.units:
                specs.append(unit)
                owner.append(p)
        self.specs = tuple(specs)
        self.owner = tuple(owner)
        self.n_units = n = len(specs)
        self.names = tuple(u.name for u in specs)
        self.side_names = tuple(side.name for side in scenario.sides)
        self.max_hp = tuple(u.wounds * u.models for u in specs)
        self.per_model = tuple(u.wounds for u in specs)
        self.single = tuple(u.models == 1 for u in specs)
        self.psyker = tuple(u.mastery > 0 for u in specs)
        self.vpw = tuple(float(u.value_per_wound) for u in specs)
        self.side_units = tuple(tuple(i for i in range(n) if owner[i] == p) for p in (0, 1))
        self.psykers_of = tuple(
            tuple(i for i in self.side_units[p] if self.psyker[i]) for p in (0, 1)
        )
        self.dist = tuple(tuple(distance(a.position, b.position) for b in specs) for a in specs)
        self.abilities = data.abilities
        self.value = tuple(float(game.ability_values.get(a.name, a.value)) for a in data.abilities)
        self.n_abilities = len(data.abilities)
        # Static geometry: who each psyker could target with each ability (RT-4 ranges).
        self._cands: dict[tuple[int, int], tuple[int, ...]] = {}
        for u in range(n):
            if not self.psyker[u]:
                continue
            for a, ab in enumerate(data.abilities):
                self._cands[(u, a)] = self._candidates(u, ab)
        # Random generation set-up (RT-1).
        self._random_level = tuple(
            u.mastery > 0 and u.psi_level is None and game.psi_level == "random" for u in specs
        )
        self._random_abilities = tuple(u.abilities == "random" for u in specs)
        cure_max = max((self.max_hp[i] for i in range(n) if self.single[i]), default=0)
        self.max_number = max(game.max_bid, cure_max)
        self.target_base = ABILITY_BASE + self.n_abilities
        self.number_base = self.target_base + n
        self.num_actions = self.number_base + self.max_number + 1
        self._legal_state: State | None = None
        self._legal_last: tuple[int, ...] = ()
        self._resolve_cache: dict[tuple[int, ...], tuple[tuple[int, float], ...]] = {}
        self._unit_size = _UNIT_FEATURES + self.n_abilities
        self._obs_units = _GLOBAL + self.n_abilities + 2 * n + 2
        self.observation_size = self._obs_units + n * self._unit_size

    def _candidates(self, u: int, ab: Any) -> tuple[int, ...]:
        if ab.target == "self" or ab.effect in ("aura", "strength_of_mind", "value"):
            return (u,)
        out = []
        for t in range(self.n_units):
            same = self.owner[t] == self.owner[u]
            if (ab.target == "enemy") == same or self.dist[u][t] > ab.range + 1e-9:
                continue
            if ab.effect in ("cure_injury", "cure_wounds", "transfer_aura") and not self.single[t]:
                continue
            if ab.effect == "transfer_aura" and t == u:
                continue
            out.append(t)
        return tuple(out)

    # ------------------------------------------------------------------ API: state and players
    def initial_state(self) -> State:
        """Start of the game: set-up chance nodes if anything is random, else the first turn."""
        units = []
        for i, u in enumerate(self.specs):
            if not self.psyker[i]:
                units.append(UnitState(hp=self.max_hp[i]))
                continue
            level = u.psi_level
            if level is None:
                level = 0 if self._random_level[i] else self.data.mastery_row(u.mastery).psi_level
            points = level if u.psi_points is None else min(u.psi_points, level)
            held = (
                ()
                if u.abilities == "random"
                else tuple(sorted(self.data.index[a] for a in u.abilities or ()))
            )
            units.append(UnitState(hp=self.max_hp[i], points=points, level=level, abilities=held))
        s = State(units=tuple(units))
        ev: list[Event] = []
        s = self._setup_from(s, 0, ev)
        return self._settle(s, ev)

    def current_player(self, state: State) -> int:
        """Player to decide, :data:`CHANCE` or :data:`TERMINAL`."""
        phase = state.phase
        if phase == Phase.OVER:
            return TERMINAL
        if phase == Phase.SAVE_BID:
            return self.owner[state.target]
        if phase in DECISIONS:
            return state.active
        return CHANCE

    def is_response(self, state: State) -> bool:
        """True when the target bids for its augmented save (answering the attacker, RT-3.3)."""
        return state.phase == Phase.SAVE_BID

    def legal_actions(self, state: State) -> list[int]:
        """Sorted legal actions (see the module docstring's layout)."""
        if state is self._legal_state:  # the same (immutable) state asked again
            return list(self._legal_last)
        legal = self._legal(state)
        self._legal_state, self._legal_last = state, tuple(legal)
        return legal

    def _legal(self, state: State) -> list[int]:
        phase = state.phase
        if phase == Phase.CHOOSE:
            u = state.actor
            us = state.units[u]
            acts = [REST] if state.used == 0 else [END]
            if state.used < self.game.abilities_per_turn:
                acts += [ABILITY_BASE + a for a in us.abilities if self._usable(state, u, a)]
            return acts
        if phase == Phase.TARGET:
            return [self.target_base + t for t in self.targets(state, state.actor, state.ability)]
        nb = self.number_base
        if phase == Phase.AMOUNT:
            return [nb + k for k in range(1, self._max_amount(state, state.target) + 1)]
        if phase == Phase.ATTACK_BID:
            cap = min(state.units[state.actor].points, self.game.max_bid)
            return list(range(nb, nb + cap + 1))
        if phase == Phase.SAVE_BID:
            t = state.target
            cap = (
                min(state.units[t].points, self.game.max_bid) if self._can_augment(state, t) else 0
            )
            return list(range(nb, nb + cap + 1))
        return []

    def chance_outcomes(self, state: State) -> list[tuple[int, float]]:
        """Exact outcomes of the chance node (see the module docstring for their meaning)."""
        return list(self._outcomes(state))

    def returns(self, state: State) -> tuple[float, float]:
        """Zero-sum scores (RT-6.2)."""
        return (state.score, -state.score)

    # ------------------------------------------------------------------ simultaneous bids
    def simultaneous_info(self, state: State) -> SimultaneousMove | None:
        """The two secret bids (RT-3.4) as a matrix game, at the attacker's bid node only.

        At an :attr:`Phase.ATTACK_BID` node where both the attacker and the target have a real
        choice, returns ``(row_player, row_actions, col_player, col_actions, fn)``: the attacker
        (rows) and the target (columns), their legal bid actions, and ``fn(row, col)``, the
        state after both bids (the attacker's then the target's). A solver should solve that
        matrix game (e.g. with a linear program) instead of treating the target's later
        :attr:`Phase.SAVE_BID` node as a decision made knowing the attacker's bid. Returns
        ``None`` everywhere else (including when only one side can bid: that is an ordinary
        decision, since psi-points are public).
        """
        if state.phase != Phase.ATTACK_BID:
            return None
        rows = self.legal_actions(state)
        probe = evolve(state, attack_bid=0, phase=Phase.SAVE_BID)
        cols = self.legal_actions(probe)
        if len(rows) < 2 or len(cols) < 2:
            return None

        def fn(row: int, col: int) -> State:
            return self.apply(self.apply(state, row), col)

        return SimultaneousMove(state.active, rows, self.owner[state.target], cols, fn)

    # ------------------------------------------------------------------ legality helpers
    def _usable(self, s: State, u: int, a: int) -> bool:
        """Whether psyker ``u`` may attempt ability ``a`` now (RT-2.2 and a legal target)."""
        if self.abilities[a].cost > s.units[u].points:
            return False
        return any(self._valid(s, u, a, t) for t in self._cands[(u, a)])

    def targets(self, s: State, u: int, a: int) -> list[int]:
        """Units psyker ``u`` may aim ability ``a`` at in ``s`` (range, effect conditions)."""
        return [t for t in self._cands[(u, a)] if self._valid(s, u, a, t)]

    def _valid(self, s: State, u: int, a: int, t: int) -> bool:
        ab = self.abilities[a]
        ts = s.units[t]
        if not ts.fighting:
            return False
        effect = ab.effect
        if effect in ("mental", "missile", "remove", "value"):
            return True
        if effect == "aura":
            return ab.aura > ts.aura
        if effect == "steal_mind":
            return ts.stolen == 0
        if effect == "confuse":
            return not ts.confused
        if effect == "fear":
            return not ts.afraid
        if effect == "destroy_aura":
            return 1 <= ts.aura <= ab.aura
        if effect == "transfer_aura":
            return s.units[u].aura > ts.aura
        if effect == "cure_injury":
            return ts.hp == self.max_hp[t] - 1
        if effect == "cure_wounds":
            return ts.hp < self.max_hp[t]
        if effect == "strength_of_mind":
            return ts.wp_bonus == 0
        return False  # pragma: no cover - the data model rejects other effects

    def _max_amount(self, s: State, t: int) -> int:
        cost = self.abilities[s.ability].cost
        by_points = s.units[s.actor].points // cost if cost else self.max_number
        return min(self.max_hp[t] - s.units[t].hp, by_points, self.max_number)

    def _can_augment(self, s: State, t: int) -> bool:
        ts = s.units[t]
        return self.psyker[t] and ts.fighting and ts.stolen == 0

    def _can_act(self, s: State, u: int) -> bool:
        us = s.units[u]
        return us.fighting and us.stolen == 0 and not us.confused

    def _cost(self, s: State) -> int:
        ab = self.abilities[s.ability]
        return ab.cost * s.amount if ab.effect == "cure_wounds" else ab.cost

    def will_power(self, s: State, t: int) -> int:
        """Current will power of unit ``t`` (with Strength of Mind)."""
        return self.specs[t].will_power + s.units[t].wp_bonus

    # ------------------------------------------------------------------ chance nodes
    def _outcomes(self, s: State) -> tuple[tuple[int, float], ...]:
        phase = s.phase
        if phase == Phase.TEST:
            return _binary(works_chance(s.units[s.actor].points, self.game.no_test_at))
        if phase == Phase.RESOLVE:
            ts = s.units[s.target]
            key = (s.ability, s.target, ts.wp_bonus - s.attack_bid + s.save_bid, ts.hp, ts.aura)
            hit = self._resolve_cache.get(key)
            if hit is None:
                hit = self._resolve_cache[key] = _floats(self.resolve_distribution(s))
            return hit
        if phase == Phase.RECOVER:
            return _binary(psychic_save_chance(self.will_power(s, s.actor)))
        if phase == Phase.SETUP_LEVEL:
            mastery = self.specs[s.actor].mastery
            return _floats(
                tuple(sorted(distribution(self.data.mastery_row(mastery).random_psi_level).items()))
            )
        if phase == Phase.SETUP_COUNT:
            spec = self.specs[s.actor]
            dist = distribution(self.data.mastery_row(spec.mastery).random_abilities)
            return _floats(tuple(sorted(capped(dist, self._count_cap(s.actor)).items())))
        if phase == Phase.SETUP_DRAW:
            pool = self._draw_pool(s, s.actor)
            p = 1.0 / len(pool)
            return tuple((a, p) for a in pool)
        return ()

    def resolve_distribution(self, s: State) -> tuple[tuple[int, Fraction], ...]:
        """Exact outcomes of the :attr:`Phase.RESOLVE` node of ``s`` (saves and effect, RT-3/4)."""
        ab = self.abilities[s.ability]
        t = s.target
        ts = s.units[t]
        p_save = Fraction(0)
        if ab.psychic_save:
            p_save = psychic_save_chance(self.will_power(s, t), s.attack_bid, s.save_bid)
        effect = ab.effect
        if effect in ("mental", "missile"):
            spec = self.specs[t]
            p = roll_chance(to_wound_rt(ab.strength, spec.toughness))
            if effect == "missile":
                p *= 1 - save_chance(armour_needed(spec.save, ts.aura))
            cap = (ts.hp - 1) % self.per_model[t] + 1
            return attack_outcomes(p_save, p, ab.damage, cap)
        if effect == "steal_mind":
            dur = distribution(ab.duration)
            out = [(0, p_save)] + [(d, (1 - p_save) * q) for d, q in sorted(dur.items()) if d > 0]
            lost = sum((q for d, q in dur.items() if d <= 0), Fraction(0))
            out[0] = (0, p_save + (1 - p_save) * lost)
            return tuple((o, q) for o, q in out if q > 0)
        return tuple((o, q) for o, q in ((0, p_save), (1, 1 - p_save)) if q > 0)

    def _count_cap(self, u: int) -> int:
        spec = self.specs[u]
        return min(
            spec.intelligence, self.data.charts.max_abilities, len(self.data.by_level(spec.mastery))
        )

    def _draw_pool(self, s: State, u: int) -> tuple[int, ...]:
        held = set(s.units[u].abilities)
        return tuple(a for a in self.data.by_level(self.specs[u].mastery) if a not in held)

    # ------------------------------------------------------------------ transitions
    def _apply(self, state: State, action: int) -> tuple[State, tuple[Event, ...]]:
        ev: list[Event] = []
        s = self._step(state, action, ev)
        return self._settle(s, ev), tuple(ev)

    def _settle(self, s: State, ev: list[Event]) -> State:
        """Advance through nodes that offer a single action or outcome."""
        while s.phase != Phase.OVER:
            if s.phase in DECISIONS:
                legal = self.legal_actions(s)
                if len(legal) != 1:
                    return s
                s = self._step(s, legal[0], ev)
            else:
                outcomes = self._outcomes(s)
                if len(outcomes) != 1:
                    return s
                s = self._step(s, outcomes[0][0], ev)
        return s

    def _step(self, s: State, a: int, ev: list[Event]) -> State:
        phase = s.phase
        if phase == Phase.CHOOSE:
            return self._choose(s, a, ev)
        if phase == Phase.TARGET:
            return self._after_target(evolve(s, target=a - self.target_base), ev)
        if phase == Phase.AMOUNT:
            return self._attempt(evolve(s, amount=a - self.number_base), ev)
        if phase == Phase.ATTACK_BID:
            return evolve(s, attack_bid=a - self.number_base, phase=Phase.SAVE_BID)
        if phase == Phase.SAVE_BID:
            return self._bids_in(s, a - self.number_base, ev)
        if phase == Phase.TEST:
            return self._tested(s, a == 1, ev)
        if phase == Phase.RESOLVE:
            return self._resolve(s, a, ev)
        if phase == Phase.RECOVER:
            return self._recovered(s, a == 1, ev)
        if phase == Phase.SETUP_LEVEL:
            return self._set_level(s, a, ev)
        if phase == Phase.SETUP_COUNT:
            return self._set_count(s, a, ev)
        if phase == Phase.SETUP_DRAW:
            return self._draw(s, a, ev)
        raise AssertionError(f"no transition from {phase!r}")  # pragma: no cover

    # set-up (RT-1) ------------------------------------------------------------------------
    def _setup_from(self, s: State, u: int, ev: list[Event], *, count_stage: bool = False) -> State:
        for i in range(u, self.n_units):
            if not count_stage and self._random_level[i]:
                return evolve(s, phase=Phase.SETUP_LEVEL, actor=i)
            count_stage = False
            if self._random_abilities[i]:
                if self.game.ability_count == "random":
                    return evolve(s, phase=Phase.SETUP_COUNT, actor=i)
                row = self.data.mastery_row(self.specs[i].mastery)
                k = min(row.abilities, self._count_cap(i))
                if k > 0:
                    return evolve(s, phase=Phase.SETUP_DRAW, actor=i, left=k)
        return self._start_game(s, ev)

    def _set_level(self, s: State, level: int, ev: list[Event]) -> State:
        u = s.actor
        spec = self.specs[u]
        points = level if spec.psi_points is None else min(spec.psi_points, level)
        units = _put(s.units, u, level=level, points=points)
        ev.append(
            Event(
                "setup",
                f"{self.names[u]}'s psi-level is {level}.",
                self.owner[u],
                (("unit", self.names[u]), ("psi_level", level)),
            )
        )
        return self._setup_from(evolve(s, units=units), u, ev, count_stage=True)

    def _set_count(self, s: State, count: int, ev: list[Event]) -> State:
        u = s.actor
        ev.append(
            Event(
                "setup",
                f"{self.names[u]} has {count} random abilities.",
                self.owner[u],
                (("unit", self.names[u]), ("abilities", count)),
            )
        )
        if count > 0:
            return evolve(s, phase=Phase.SETUP_DRAW, left=count)
        return self._setup_from(s, u + 1, ev)

    def _draw(self, s: State, a: int, ev: list[Event]) -> State:
        u = s.actor
        held = tuple(sorted((*s.units[u].abilities, a)))
        ev.append(
            Event(
                "setup",
                f"{self.names[u]} knows {self.abilities[a].name}.",
                self.owner[u],
                (("unit", self.names[u]), ("ability", self.abilities[a].name)),
            )
        )
        s = evolve(s, units=_put(s.units, u, abilities=held), left=s.left - 1)
        if s.left > 0 and self._draw_pool(s, u):
            return s
        return self._setup_from(evolve(s, left=0), u + 1, ev)

    def _start_game(self, s: State, ev: list[Event]) -> State:
        units = list(s.units)
        return self._begin_turn(s, units, False, 0, self.game.first_player, ev)

    # turns (RT-5, RT-6) -----------------------------------------------------------------------
    def _begin_turn(
        self, s: State, units: list[UnitState], changed: bool, turn: int, p: int, ev: list[Event]
    ) -> State:
        """Start turn ``turn`` of player ``p``: resting psykers regain a point (RT-5)."""
        ev.append(
            Event(
                "phase", f"Turn {turn + 1}: {self.side_names[p]}'s turn.", p, (("turn", turn + 1),)
            )
        )
        for i in self.psykers_of[p]:
            us = units[i]
            if us.resting:
                gain = min(us.points + 1, us.level) - us.points
                units[i] = evolve(us, points=us.points + gain, resting=False)
                changed = True
                if gain:
                    ev.append(
                        Event(
                            "regain",
                            f"{self.names[i]} regains 1 psi-point after resting.",
                            p,
                            (("unit", self.names[i]), ("points", us.points + gain)),
                        )
                    )
        s = evolve(
            s,
            units=tuple(units) if changed else s.units,
            turn=turn,
            active=p,
            phase=Phase.CHOOSE,
            actor=-1,
            used=0,
            ability=-1,
            target=-1,
            amount=0,
            attack_bid=0,
            save_bid=0,
            left=0,
        )
        return self._recover_from(s, 0, ev)

    def _recover_from(self, s: State, start: int, ev: list[Event]) -> State:
        for i in self.side_units[s.active]:
            if i >= start and s.units[i].confused and s.units[i].fighting:
                return evolve(s, phase=Phase.RECOVER, actor=i)
        return self._next_actor(s, -1, ev)

    def _recovered(self, s: State, ok: bool, ev: list[Event]) -> State:
        u = s.actor
        if ok:
            s = evolve(s, units=_put(s.units, u, confused=False))
            ev.append(
                Event(
                    "recovered",
                    f"{self.names[u]} shakes off its confusion.",
                    self.owner[u],
                    (("unit", self.names[u]),),
                )
            )
        else:
            ev.append(
                Event(
                    "confused",
                    f"{self.names[u]} is still confused.",
                    self.owner[u],
                    (("unit", self.names[u]),),
                )
            )
        return self._recover_from(s, u + 1, ev)

    def _next_actor(self, s: State, after: int, ev: list[Event]) -> State:
        for i in self.psykers_of[s.active]:
            if i <= after:
                continue
            us = s.units[i]
            if not us.fighting:
                continue
            if us.stolen or us.confused:
                why = "its mind is stolen" if us.stolen else "it is confused"
                ev.append(
                    Event(
                        "idle",
                        f"{self.names[i]} does nothing: {why}.",
                        s.active,
                        (("unit", self.names[i]),),
                    )
                )
                continue
            return evolve(
                s,
                phase=Phase.CHOOSE,
                actor=i,
                used=0,
                ability=-1,
                target=-1,
                amount=0,
                attack_bid=0,
                save_bid=0,
            )
        return self._end_turn(s, ev)

    def _end_turn(self, s: State, ev: list[Event]) -> State:
        """End the active player's turn: its stolen minds count one turn (RT-4.5)."""
        units = list(s.units)
        changed = False
        for i in self.side_units[s.active]:
            if units[i].stolen:
                units[i] = evolve(units[i], stolen=units[i].stolen - 1)
                changed = True
        turn = s.turn + 1
        if turn >= self.game.turns:
            s = evolve(s, units=tuple(units) if changed else s.units, turn=turn)
            return self._game_over(s, ev, "the last turn is over")
        return self._begin_turn(s, units, changed, turn, 1 - s.active, ev)

    def _game_over(self, s: State, ev: list[Event], why: str) -> State:
        ev.append(
            Event("end", f"The game ends: {why} (score {s.score:+g}).", None, (("score", s.score),))
        )
        return evolve(
            s,
            phase=Phase.OVER,
            actor=-1,
            used=0,
            ability=-1,
            target=-1,
            amount=0,
            attack_bid=0,
            save_bid=0,
        )

    # using an ability (RT-2) ------------------------------------------------------------------
    def _choose(self, s: State, a: int, ev: list[Event]) -> State:
        u = s.actor
        if a == REST:
            ev.append(
                Event("rest", f"{self.names[u]} rests.", s.active, (("unit", self.names[u]),))
            )
            s = evolve(s, units=_put(s.units, u, resting=True))
            return self._next_actor(s, u, ev)
        if a == END:
            return self._next_actor(s, u, ev)
        ability = a - ABILITY_BASE
        s = evolve(s, ability=ability, target=-1, amount=0, phase=Phase.TARGET)
        if self._cands[(u, ability)] == (u,):
            return self._after_target(evolve(s, target=u), ev)
        return s

    def _after_target(self, s: State, ev: list[Event]) -> State:
        if self.abilities[s.ability].effect == "cure_wounds":
            return evolve(s, phase=Phase.AMOUNT)
        return self._attempt(s, ev)

    def _attempt(self, s: State, ev: list[Event]) -> State:
        u = s.actor
        ab = self.abilities[s.ability]
        points = s.units[u].points
        on = "" if s.target == u else f" on {self.names[s.target]}"
        ev.append(
            Event(
                "attempt",
                f"{self.names[u]} uses {ab.name}{on} ({self._cost(s)} of {points} points).",
                s.active,
                (("power", ab.name), ("unit", self.names[u]), ("points", points)),
            )
        )
        if points >= self.game.no_test_at:
            return self._tested(s, True, ev)
        return evolve(s, phase=Phase.TEST)

    def _tested(self, s: State, works: bool, ev: list[Event]) -> State:
        """The test's result (RT-2.3); the cost is deducted either way (RT-2.4)."""
        u = s.actor
        ab = self.abilities[s.ability]
        points = s.units[u].points - self._cost(s)
        units = _put(s.units, u, points=points)
        if not works:
            ev.append(
                Event(
                    "failed",
                    f"{ab.name} fails ({points} points left).",
                    s.active,
                    (("power", ab.name),),
                )
            )
            s = evolve(s, units=units)
            if ab.effect == "cure_injury":  # RT-2.5: a failed Cure Injury wounds its target
                s = self._wound(s, s.target, 1, ev)
            return self._after_ability(s, ev)
        ev.append(
            Event(
                "passed",
                f"{ab.name} works ({points} points left).",
                s.active,
                (("power", ab.name),),
            )
        )
        if ab.psychic_save:
            return evolve(s, units=units, phase=Phase.ATTACK_BID, attack_bid=0, save_bid=0)
        if ab.effect in ("mental", "missile", "steal_mind"):
            return evolve(s, units=units, phase=Phase.RESOLVE, attack_bid=0, save_bid=0)
        return self._after_ability(self._take_effect(evolve(s, units=units), 1, ev), ev)

    def _bids_in(self, s: State, j: int, ev: list[Event]) -> State:
        """Both secret bids are known: deduct them whatever happens (RT-3.4)."""
        u, t, k = s.actor, s.target, s.attack_bid
        units = _put(s.units, u, points=s.units[u].points - k)
        if j:
            rest = units[t].resting and not self.game.augment_breaks_rest
            units = _put(units, t, points=units[t].points - j, resting=rest)
        ev.append(
            Event(
                "bids",
                f"Bids revealed: {self.names[u]} enhances the attack by {k}, "
                f"{self.names[t]} augments its save by {j}.",
                None,
                (("enhanced", k), ("augmented", j)),
            )
        )
        return evolve(s, units=units, save_bid=j, phase=Phase.RESOLVE)

    def _resolve(self, s: State, outcome: int, ev: list[Event]) -> State:
        ab = self.abilities[s.ability]
        t = s.target
        if outcome == 0:
            ev.append(
                Event(
                    "saved",
                    f"{self.names[t]} resists {ab.name}.",
                    self.owner[t],
                    (("power", ab.name),),
                )
            )
        else:
            s = self._take_effect(s, outcome, ev)
        return self._after_ability(s, ev)

    def _after_ability(self, s: State, ev: list[Event]) -> State:
        for p in (0, 1):
            if not any(s.units[i].fighting for i in self.side_units[p]):
                return self._game_over(s, ev, f"{self.side_names[p]} has no unit left in the fight")
        u = s.actor
        used = s.used + 1
        if self._can_act(s, u) and used < self.game.abilities_per_turn:
            if any(self._usable(s, u, a) for a in s.units[u].abilities):
                return evolve(
                    s,
                    used=used,
                    ability=-1,
                    target=-1,
                    amount=0,
                    attack_bid=0,
                    save_bid=0,
                    phase=Phase.CHOOSE,
                )
        return self._next_actor(s, u, ev)

    # effects (RT-4) ---------------------------------------------------------------------------
    def _take_effect(self, s: State, outcome: int, ev: list[Event]) -> State:
        """Apply the effect of ``s.ability`` on ``s.target`` (``outcome`` from RESOLVE)."""
        a, u, t = s.ability, s.actor, s.target
        ab = self.abilities[a]
        caster = self.owner[u]
        before = s.score
        effect = ab.effect
        name, tname = ab.name, self.names[t]
        text = f"{name} takes effect on {tname}."
        if effect in ("mental", "missile"):
            wounds = outcome - 1
            if wounds == 0:
                ev.append(
                    Event(
                        "no_damage", f"{name} fails to wound {tname}.", caster, (("power", name),)
                    )
                )
                return s
            s = self._wound(s, t, wounds, ev)
            text = f"{name} hits {tname} for {wounds} wound{'s' if wounds > 1 else ''}."
        elif effect == "steal_mind":
            s = evolve(s, units=_put(s.units, t, stolen=outcome))
            text = f"{name}: {tname} does nothing for its next {outcome} turn(s)."
        elif effect == "remove":
            hp = s.units[t].hp
            s = evolve(s, units=_put(s.units, t, out=True))
            if self.game.removal_scores_wounds:
                s = self._credit(s, caster, hp * self.vpw[t])
            ev.append(
                Event(
                    "slain",
                    f"{tname} is out of the fight ({name}).",
                    self.owner[t],
                    (("unit", tname), ("reason", name)),
                )
            )
            text = f"{name} puts {tname} out of the fight."
        elif effect == "confuse":
            s = evolve(s, units=_put(s.units, t, confused=True))
            text = f"{tname} is confused."
        elif effect == "fear":
            s = evolve(s, units=_put(s.units, t, afraid=True))
            text = f"{tname} becomes subject to fear."
        elif effect == "aura":
            s = evolve(s, units=_put(s.units, t, aura=ab.aura))
            text = f"{tname} raises an {name} (+{ab.aura} save)."
        elif effect == "destroy_aura":
            s = evolve(s, units=_put(s.units, t, aura=0))
            text = f"{tname}'s aura is dispelled."
        elif effect == "transfer_aura":
            level = s.units[u].aura
            s = evolve(s, units=_put(_put(s.units, u, aura=0), t, aura=level))
            text = f"{self.names[u]} transfers its aura to {tname}."
        elif effect in ("cure_injury", "cure_wounds"):
            heal = 1 if effect == "cure_injury" else s.amount
            heal = min(heal, self.max_hp[t] - s.units[t].hp)
            s = evolve(s, units=_put(s.units, t, hp=s.units[t].hp + heal))
            s = self._credit(s, self.owner[t], heal * self.vpw[t])
            text = f"{name} heals {heal} wound{'s' if heal > 1 else ''} of {tname}."
        elif effect == "strength_of_mind":
            s = evolve(s, units=_put(s.units, t, wp_bonus=1))
            text = f"{tname}'s will power rises to {self.will_power(s, t)}."
        elif effect == "value":
            text = f"{name} works."
        if self.value[a]:
            s = self._credit(s, caster, self.value[a])
        gained = (s.score - before) * (1 if caster == 0 else -1)
        ev.append(Event("manifest", text, caster, (("power", name), ("value", gained))))
        return s

    def _wound(self, s: State, t: int, wounds: int, ev: list[Event]) -> State:
        ts = s.units[t]
        wounds = min(wounds, ts.hp)
        loss = wounds * self.vpw[t]
        score = s.score + (loss if self.owner[t] == 1 else -loss)
        s = evolve(s, units=_put(s.units, t, hp=ts.hp - wounds), score=score)
        ev.append(
            Event(
                "wounds",
                f"{self.names[t]} loses {wounds} wound(s).",
                self.owner[t],
                (("unit", self.names[t]), ("amount", wounds)),
            )
        )
        if ts.hp - wounds == 0:
            ev.append(
                Event(
                    "slain", f"{self.names[t]} is slain.", self.owner[t], (("unit", self.names[t]),)
                )
            )
        return s

    @staticmethod
    def _credit(s: State, side: int, amount: float) -> State:
        return evolve(s, score=s.score + (amount if side == 0 else -amount))

    # ------------------------------------------------------------------ observation and text
    def observe(self, state: State, player: int) -> np.ndarray:
        """What ``player`` may see, as a flat float32 vector.

        Layout (U units in scenario order, A = 40 abilities):

        * ``[0:6]`` one-hot kind of decision asked: choose ability/rest, choose target, choose
          amount (Cure Wounds), attack bid, save bid, none (chance node or game over);
        * ``[6]`` 1 if ``player`` is to move; ``[7]`` 1 if it is ``player``'s turn;
          ``[8]`` turns played / turns; ``[9]`` turns left / turns;
        * ``[10:10+A]`` one-hot of the ability being used; then U one-hot of the acting psyker;
          then U one-hot of the target;
        * then ``player``'s own pending enhanced-attack bid / max_bid (only the attacker sees
          it: the defender's observation never reveals it, RT-3.4), then the Cure Wounds amount
          / max number;
        * then per unit, ``16 + A`` values: owned by ``player``, psyker, wounds left / wounds,
          in the fight, out of the fight, aura / 4, stolen turns / 6, confused, afraid, will
          power / 12, psi-points / 20, psi-level / 20, points >= 12 (no test), resting,
          Strength of Mind used, acting now; then A flags of the abilities it knows.
        """
        obs = np.zeros(self.observation_size, dtype=np.float32)
        kind = _KIND_OF.get(state.phase, 5)
        obs[kind] = 1.0
        obs[6] = float(self.current_player(state) == player)
        obs[7] = float(state.active == player)
        turns = self.game.turns
        obs[8] = state.turn / turns
        obs[9] = (turns - state.turn) / turns
        n, na = self.n_units, self.n_abilities
        if state.ability >= 0:
            obs[_GLOBAL + state.ability] = 1.0
        base = _GLOBAL + na
        if state.actor >= 0 and state.phase in DECISIONS | {Phase.TEST, Phase.RESOLVE}:
            obs[base + state.actor] = 1.0
        if state.target >= 0:
            obs[base + n + state.target] = 1.0
        if state.phase == Phase.SAVE_BID and player == state.active:
            obs[base + 2 * n] = state.attack_bid / max(1, self.game.max_bid)
        obs[base + 2 * n + 1] = state.amount / max(1, self.max_number)
        deciding = state.phase in DECISIONS
        no_test = self.game.no_test_at
        size, na = self._unit_size, self.n_abilities
        for i, us in enumerate(state.units):
            o = self._obs_units + i * size
            obs[o : o + _UNIT_FEATURES] = (
                self.owner[i] == player,
                self.psyker[i],
                us.hp / self.max_hp[i],
                us.fighting,
                us.out,
                us.aura / 4,
                us.stolen / 6,
                us.confused,
                us.afraid,
                (self.specs[i].will_power + us.wp_bonus) / 12,
                us.points / _NORM,
                us.level / _NORM,
                us.points >= no_test,
                us.resting,
                us.wp_bonus,
                deciding and state.actor == i,
            )
            if us.abilities:
                obs[o + _UNIT_FEATURES : o + size] = self._ability_flags(us.abilities, na)
        return obs

    @staticmethod
    @cache
    def _ability_flags(abilities: tuple[int, ...], n: int) -> np.ndarray:
        flags = np.zeros(n, dtype=np.float32)
        flags[list(abilities)] = 1.0
        return flags

    def render(self, state: State, player: int | None = None) -> str:
        """Text picture of the state; the attacker's pending bid is hidden from anyone else."""
        lines = []
        if state.phase == Phase.OVER:
            lines.append(f"Game over after {state.turn} turn(s). Score {state.score:+g}.")
        else:
            lines.append(
                f"Turn {min(state.turn + 1, self.game.turns)}/{self.game.turns}: "
                f"{self.side_names[state.active]}'s turn. Score {state.score:+g}."
            )
        for p in (0, 1):
            lines.append(f"{self.side_names[p]} (player {p}):")
            for i in self.side_units[p]:
                lines.append("  " + self._unit_line(state, i))
        if state.ability >= 0:
            ab = self.abilities[state.ability]
            lines.append(
                f"Using: {self.names[state.actor]} - {ab.name}"
                + (f" on {self.names[state.target]}" if state.target >= 0 else "")
            )
        if state.phase == Phase.SAVE_BID:
            seen = player is None or player == state.active
            bid = str(state.attack_bid) if seen else "secret"
            lines.append(f"Enhanced attack bid: {bid}. {self.names[state.target]} bids to augment.")
        elif state.phase in DECISIONS:
            who = self.current_player(state)
            lines.append(f"Player {who} decides: {KINDS[_KIND_OF[state.phase]]}.")
        return "\n".join(lines)

    def _unit_line(self, s: State, i: int) -> str:
        us = s.units[i]
        spec = self.specs[i]
        parts = [f"{self.names[i]}: {us.hp}/{self.max_hp[i]} W"]
        if spec.models > 1:
            models = -(-us.hp // self.per_model[i])
            parts.append(f"{models}/{spec.models} models")
        parts.append(
            f"T{spec.toughness} Sv{spec.save if spec.save <= 6 else '-'} WP{self.will_power(s, i)}"
        )
        if self.psyker[i]:
            parts.append(f"mastery {spec.mastery}, psi {us.points}/{us.level}")
        if us.aura:
            parts.append(f"aura +{us.aura}")
        flags = [
            name
            for name, on in (
                ("OUT", us.out),
                ("slain", us.hp == 0),
                ("confused", us.confused),
                ("afraid", us.afraid),
                ("resting", us.resting),
            )
            if on
        ]
        if us.stolen:
            flags.append(f"mind stolen {us.stolen}")
        if flags:
            parts.append(", ".join(flags))
        line = "; ".join(parts)
        if self.psyker[i] and us.abilities:
            line += " | " + ", ".join(self.abilities[a].name for a in us.abilities)
        return line

    def describe(self, state: State, action: int) -> ActionView:
        """Typed view of a decision or chance outcome in ``state``."""
        phase = state.phase
        u = state.actor
        name = self.names[u] if u >= 0 else ""
        if phase == Phase.CHOOSE:
            if action == REST:
                return Rest(label=f"{name} rests", psyker=name)
            if action == END:
                return EndTurn(label=f"{name} ends its turn", psyker=name)
            ab = self.abilities[action - ABILITY_BASE]
            w = float(works_chance(state.units[u].points, self.game.no_test_at))
            cost = f"{ab.cost}/wound" if ab.effect == "cure_wounds" else str(ab.cost)
            return UseAbility(
                label=f"{name} uses {ab.name} ({cost} points, works {w:.0%})",
                psyker=name,
                ability=ab.name,
                cost=ab.cost,
                works=w,
            )
        if phase == Phase.TARGET:
            ab = self.abilities[state.ability]
            t = self.names[action - self.target_base]
            return ChooseTarget(
                label=f"{name} aims {ab.name} at {t}", psyker=name, ability=ab.name, target=t
            )
        if phase == Phase.AMOUNT:
            ab = self.abilities[state.ability]
            k = action - self.number_base
            return ChooseAmount(
                label=f"{name} heals {k} wound(s) for {k * ab.cost} points",
                psyker=name,
                ability=ab.name,
                wounds=k,
                cost=k * ab.cost,
            )
        if phase == Phase.ATTACK_BID:
            k = action - self.number_base
            return Bid(
                label=f"{name} secretly enhances the attack by {k}",
                psyker=name,
                role="enhance",
                points=k,
            )
        if phase == Phase.SAVE_BID:
            j = action - self.number_base
            t = self.names[state.target]
            return Bid(
                label=f"{t} secretly augments its save by {j}", psyker=t, role="augment", points=j
            )
        return self._describe_chance(state, action)

    def _describe_chance(self, state: State, o: int) -> Roll:
        phase = state.phase
        if phase == Phase.TEST:
            pts = state.units[state.actor].points
            text = f"test: 2D6 <= {pts}, works" if o else f"test: 2D6 > {pts}, fails"
            return Roll(label=text, kind="test", outcome=o)
        if phase == Phase.RECOVER:
            return Roll(label="recovers" if o else "stays confused", kind="recover", outcome=o)
        if phase == Phase.SETUP_LEVEL:
            return Roll(label=f"psi-level {o}", kind="psi-level", outcome=o)
        if phase == Phase.SETUP_COUNT:
            return Roll(label=f"{o} abilities", kind="count", outcome=o)
        if phase == Phase.SETUP_DRAW:
            return Roll(label=f"draws {self.abilities[o].name}", kind="draw", outcome=o)
        if phase == Phase.RESOLVE:
            effect = self.abilities[state.ability].effect
            if o == 0:
                text = "psychic save made"
            elif effect in ("mental", "missile"):
                text = "no wound" if o == 1 else f"{o - 1} wound(s)"
            elif effect == "steal_mind":
                text = f"mind stolen for {o} turn(s)"
            else:
                text = "takes hold"
            return Roll(label=text, kind="resolve", outcome=o)
        return Roll(label=f"outcome {o}", kind="none", outcome=o)


def _put(units: tuple[UnitState, ...], i: int, **changes: Any) -> tuple[UnitState, ...]:
    """``units`` with unit ``i`` changed."""
    return (*units[:i], evolve(units[i], **changes), *units[i + 1 :])
