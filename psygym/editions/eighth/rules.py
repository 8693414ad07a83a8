"""The 8th-edition psychic phase as an exact game (rules/eighth.md, 8E-1 .. 8E-8).

## Flow of one Psychic phase

``SELECT`` (active player: a PSYKER unit or end the phase, 8E-2.1) -> ``POWER`` (a power and
target for that unit, or stop with it, 8E-2.2, 8E-3) -> ``TEST`` chance (the 2D6 total, 8E-4) ->
``PERILS`` chance (D3 wounds on a double 1 or double 6, before any deny, 8E-4.3, 8E-6.1) ->
``BLAST`` chance per unit within 6" if Perils slew the caster (8E-6.2) -> ``DENY`` decision (the
opponent: which eligible PSYKER unit denies, or none, after seeing the total, 8E-5.1) ->
``DENY_ROLL`` chance (one binary outcome, P(2D6 > total), 8E-5.2) -> ``EFFECT`` chance (wounds the
target loses, 8E-7) -> back to ``POWER`` while the unit has attempts left, then ``SELECT``.
Battle rounds: the first player's phase then the second's (8E-8.1).

## Action indices (``Discrete(num_actions)``, N units, P powers of the scenario)

The layout is :mod:`.actions` (``rules.actions``, an :class:`~.actions.ActionLayout`): select a
unit ``[0, N)``, end the phase ``N``, cast ``N + 1 + p * N + t``, stop ``N + 1 + P * N``, deny
with unit ``d`` ``N + 2 + P * N + d``, do not deny ``2 * N + 2 + P * N``. Units are numbered in
scenario order (side 0's units, then side 1's); powers are the powers some unit of the scenario
knows, in data-file order. Chance outcomes: the test total (2..12), the number of wounds lost
(PERILS, BLAST, EFFECT), or 1 = denied / 0 = not denied (DENY_ROLL).

## Defaults where the spec or the book is silent

* Units are points: ranges and "within" distances are measured centre to centre and are
  inclusive (a unit exactly 18" away is within 18"). Every unit is visible.
* Smite and ``closest_enemy`` powers: ties for closest go to the lowest unit index (8E-7.1).
* The test outcome is the total alone: a total of 2 is always a double 1 and 12 a double 6, so
  the total says whether Perils happens (8E-4.3): 11 outcomes, not 36.
* A deny cannot succeed against a test of 12 (no 2D6 beats it), so no deny decision is asked
  then; nor when no eligible PSYKER unit is within range (8E-5.1).
* Powers whose effect is a ``value`` score the same whatever their target, so their target is
  not a decision: the lowest-index legal target is used (it only has to exist, 8E-3.4).
  Damaging powers with an ``enemy`` target let the caster choose among the enemies in range.
* A unit is selectable only if it has a power it may attempt now; selecting it then stopping at
  once is allowed (8E-2.2). A unit with no attempt left or no legal power stops automatically;
  a phase with no selectable unit ends automatically.
* "Once per battle round" (8E-3.2, 8E-3.3) is checked on the current phase's records: each army
  casts only in its own Psychic phase, once per battle round.
* Deny attempts (8E-1.2) refill at the start of every Psychic phase. A deny roll never perils
  (8E-5.3).
* Perils kills: the caster is removed after the blast; the blast hits every other unit within
  6" that still has wounds, each with its own D3 (8E-6.2). Units slain by a blast do not blast.
* A dead psyker's remaining attempts are lost. The game ends at once when a side has no units
  left (checked when a power's resolution is complete, so a blast still lands, 8E-8.1).
* Damage from an ``attack`` does not spill over models (excess damage is lost); mortal wounds do
  (8E-7.2). ``rolloff`` effects (Psychic Scourge, Mind War) use both units' Leadership.
* Chance nodes with a single possible outcome (a D3 against a unit with one wound left, a
  ``value`` effect) are resolved at once instead of being asked.
* Every PSYKER knows Smite (``known_by_all_psykers`` in the data) whether or not its ``powers``
  list it. A PSYKER with ``manifest = 0`` only denies.
* ``game.phase_limit`` stops the game after that many Psychic phases (``single-phase``: 1).
* Score (8E-8.2): player 0's score = value of wounds side 1 lost - value of wounds side 0 lost +
  value effects of side 0 - value effects of side 1, whatever caused the wounds (own Perils and
  blasts included).
* The "phase" event of the game's first Psychic phase is not reported (no transition leads to the
  initial state); every later phase reports one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from typing import Any

import numpy as np

from psygym.core import CHANCE, TERMINAL, ActionView, Event, EventKind, GameInfo, RulesBase
from psygym.editions.eighth.actions import ActionLayout
from psygym.editions.eighth.effects import (
    attack_distribution,
    deny_chance,
    is_perils,
    mortal_distribution,
    rolloff_distribution,
    two_d6,
)
from psygym.editions.eighth.spec import Effect, PowerFile, Scenario, TargetKind, Unit
from psygym.editions.eighth.state import DECISION_STAGES, Stage, State
from psygym.editions.eighth.views import EighthView, observation_size
from psygym.kernel import ChanceCache, ChanceTable, evolve
from psygym.scenario import distance
from psygym.text import plural

_CACHE_LIMIT = 200_000
_PHASE_START: dict[str, Any] = {
    "stage": Stage.SELECT,
    "selected": 0,
    "caster": -1,
    "manifests_left": 0,
    "unit_powers": 0,
    "power": -1,
    "target": -1,
    "warp_charge": 0,
    "total": 0,
    "denier": -1,
    "blast": (),
}
"""Per-phase fields of a state at the start of a Psychic phase (the ``State`` defaults)."""


@dataclass(frozen=True, slots=True)
class PowerDef:
    """A power as the rules use it (from the data file, with scenario value overrides)."""

    name: str
    warp_charge: int
    range: float
    target: TargetKind
    character_only: bool
    repeatable: bool
    escalation: int
    effect: Effect
    value: float | None  # value effects (8E-7.3), after ``game.power_values``
    chosen_target: bool  # the caster chooses among targets (a damaging ``enemy`` power)


def _data(**kw: Any) -> tuple[tuple[str, Any], ...]:
    """Event data as given: call sites name the keys in sorted order (``Event.data`` is sorted)."""
    return tuple(kw.items())


@cache
def _deniable(total: int) -> bool:
    """Whether some Deny the Witch roll beats the test ``total`` (8E-5.2), as a plain bool."""
    return deny_chance(total) > 0


_FAST_HOOKS = ("_step", "_dispatch", "_chance", "_chance_result", "_decide_and_walk")
"""What the one-copy walks call or stand in for (``RulesBase._own_chance_walk``)."""


def _update(s: State, **changes: Any) -> None:
    """Set fields of ``s`` in place: only ever a transition's own new copy, before it returns.

    Each transition copies its input once with :func:`~psygym.kernel.evolve` and builds the next
    state in that copy, so it costs one copy however many steps it chains (a test, its Perils,
    the deny, the effect, the decisions skipped, the next phase). Nothing else has seen the copy
    yet (it is neither hashed nor shared), so every state a caller receives stays immutable.
    """
    s.__dict__.update(changes)


class EighthRules(RulesBase):
    """8th-edition psychic phase rules for one scenario (see the module docstring).

    Attributes:
        scenario: the validated scenario.
        units: every unit's spec, in index order; ``side_of[i]`` its player.
        powers: the scenario's powers (``PowerDef``), in action-index order.
        known: power indices each unit knows (empty for non-psykers).
        actions: the action layout (:class:`~.actions.ActionLayout`); ``END_PHASE``, ``CAST``,
            ``STOP``, ``DENY`` and ``NO_DENY`` are its bases, repeated here.
        view: observations, action views and rendering (:class:`~.views.EighthView`).
    """

    edition = "8th"
    fast_walk_hooks = _FAST_HOOKS

    def __init__(self, scenario: Scenario, catalogue: PowerFile):
        self.scenario = scenario
        self.catalogue = catalogue  # the power data as loaded (descriptions for the views)
        self.game = game = scenario.game
        self.side_names = tuple(side.name for side in scenario.sides)
        pairs = [(i, u) for i, side in enumerate(scenario.sides) for u in side.units]
        self.units: tuple[Unit, ...] = tuple(u for _, u in pairs)
        self.side_of: tuple[int, ...] = tuple(i for i, _ in pairs)
        self.names = tuple(u.name for u in self.units)
        n = self.n_units = len(self.units)
        self.max_wounds = tuple(u.models * u.wounds for u in self.units)
        self.side_units = tuple(
            tuple(i for i in range(n) if self.side_of[i] == side) for side in (0, 1)
        )
        self.side_psykers = tuple(
            tuple(i for i in units if self.units[i].psyker and self.units[i].manifest > 0)
            for units in self.side_units
        )

        # Powers: those some unit knows (every psyker knows the universal ones: Smite, 8E-1.2).
        universal = {p.name for p in catalogue.powers if p.known_by_all_psykers}
        knows = [(set(u.powers) | universal) if u.psyker else set() for u in self.units]
        used = [p for p in catalogue.powers if any(p.name in k for k in knows)]
        overrides = game.power_values
        self.powers: tuple[PowerDef, ...] = tuple(
            PowerDef(
                name=p.name,
                warp_charge=p.warp_charge,
                range=p.range,
                target=p.target,
                character_only=p.character_only,
                repeatable=p.repeatable,
                escalation=p.escalation,
                effect=p.effect,
                value=overrides.get(p.name, p.effect.value) if p.effect.value is not None else None,
                chosen_target=p.target == "enemy" and p.effect.value is None,
            )
            for p in used
        )
        self.power_index = {p.name: i for i, p in enumerate(self.powers)}
        n_powers = self.n_powers = len(self.powers)
        self.known: tuple[tuple[int, ...], ...] = tuple(
            tuple(i for i, p in enumerate(self.powers) if p.name in k) for k in knows
        )

        # Geometry, precomputed once (8E-3.4, 8E-5.1, 8E-6.2, 8E-7.1).
        d = [[distance(a.position, b.position) for b in self.units] for a in self.units]
        self.distances = tuple(tuple(row) for row in d)
        self.targets: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
            tuple(self._candidates(c, p) for p in self.powers) for c in range(n)
        )
        self.deny_candidates = tuple(
            tuple(
                j
                for j in self.side_units[1 - self.side_of[c]]
                if self.units[j].psyker and self.units[j].deny > 0 and d[c][j] <= game.deny_range
            )
            for c in range(n)
        )
        self.blast_candidates = tuple(
            tuple(j for j in range(n) if j != c and d[c][j] <= game.perils_blast_range)
            for c in range(n)
        )

        # Action layout (actions.py).
        self.actions = layout = ActionLayout(n, n_powers)
        self.END_PHASE = layout.END_PHASE
        self.CAST = layout.CAST
        self.STOP = layout.STOP
        self.DENY = layout.DENY
        self.NO_DENY = layout.NO_DENY
        self.num_actions = layout.num_actions
        self.observation_size = observation_size(n, n_powers)

        # Bound of every observation entry: wounds, deny counts, attempts and the score.
        values = [p.value for p in self.powers if p.value is not None]
        casts = sum(u.manifest for u in self.units if u.psyker)
        score_bound = sum(m * u.value_per_wound for m, u in zip(self.max_wounds, self.units))
        score_bound += game.battle_rounds * casts * max(values, default=0.0)
        self.observation_bound = float(max(1000.0, max(self.max_wounds), score_bound + 1))
        self._game_info = self._static_game_info(values)

        self._full_deny = tuple(u.deny if u.psyker else 0 for u in self.units)
        self._no_attempts = (0,) * n_powers
        self._chance_cache = ChanceCache(_CACHE_LIMIT)
        self._test_outcomes = tuple(two_d6())
        self._mean_cache: dict[tuple[int, ...], float] = {}
        self._options_cache: dict[tuple[Any, ...], tuple[int, ...]] = {}
        self._legal_cache: dict[tuple[Any, ...], tuple[int, ...]] = {}
        self._last_legal: tuple[State | None, tuple[int, ...]] = (None, ())
        self._alive_cache: dict[tuple[int, ...], int] = {}
        self._side_masks = tuple(sum(1 << i for i in units) for units in self.side_units)
        self._event_cache: dict[tuple[Any, ...], Event] = {}
        self._blast_causes = tuple(f"the blast of {name}'s Perils" for name in self.names)
        # Who moves at each stage, by active player (8E-2.1, 8E-5.1).
        self._mover = tuple(
            (
                (0, 1)
                if st <= Stage.POWER
                else (1, 0)
                if st == Stage.DENY
                else (TERMINAL, TERMINAL)
                if st == Stage.OVER
                else (CHANCE, CHANCE)
            )
            for st in Stage
        )
        self.view = EighthView(self)

    def _static_game_info(self, values: list[float]) -> GameInfo:
        """Bounds of :meth:`game_info`, from the scenario alone (cheap upper bounds)."""
        game = self.game
        # A chance node lists 2D6 totals (11), a deny roll (2) or wounds lost, 0..the pool.
        max_chance = max(11, max(self.max_wounds) + 1)
        # Per Psychic phase of a side: each PSYKER once selected, up to ``manifest`` casts and a
        # stop, and one deny decision per cast; then ending the phase (8E-2, 8E-5.1).
        per_phase = [
            1 + sum(2 + 2 * self.units[i].manifest for i in self.side_psykers[side])
            for side in (0, 1)
        ]
        phases = 2 * game.battle_rounds
        if game.phase_limit is not None:
            phases = min(phases, game.phase_limit)
        first = game.first_player
        order = [first if k % 2 == 0 else 1 - first for k in range(phases)]
        length = sum(per_phase[side] for side in order)
        # Scores (8E-8.2): every wound of every unit, plus every value effect of every cast.
        casts = game.battle_rounds * sum(
            self.units[i].manifest for side in (0, 1) for i in self.side_psykers[side]
        )
        bound = sum(m * abs(u.value_per_wound) for m, u in zip(self.max_wounds, self.units))
        bound += casts * max((abs(v) for v in values), default=0.0)
        return evolve(
            super().game_info(),
            max_chance_outcomes=max_chance,
            max_game_length=length,
            min_utility=-bound,
            max_utility=bound,
        )

    def game_info(self) -> GameInfo:
        """Static facts of this scenario's game, with cheap upper bounds.

        The bounds: chance outcomes per node, decisions per game and the score (8E-8.2).
        """
        return self._game_info

    def _candidates(self, c: int, p: PowerDef) -> tuple[int, ...]:
        """Units power ``p`` may target from caster ``c`` when alive, in preference order."""
        if p.target in ("self", "none"):
            return (c,)
        side = self.side_of[c]
        pool = (
            self.side_units[1 - side]
            if p.target in ("closest_enemy", "enemy")
            else (self.side_units[side])
        )
        out = [
            j
            for j in pool
            if self.distances[c][j] <= p.range and (self.units[j].character or not p.character_only)
        ]
        if p.target == "closest_enemy":
            out.sort(key=lambda j: (self.distances[c][j], j))  # ties: lowest index (8E-7.1)
        return tuple(out)

    # ------------------------------------------------------------------ game API

    def initial_state(self) -> State:
        """Battle round 1, the first player's Psychic phase, at its first decision."""
        first = self.game.first_player
        s = State(
            stage=Stage.SELECT,
            wounds=self.max_wounds,
            deny_left=self._full_deny,
            attempts=self._no_attempts,
            active=first,
        )
        self._advance(s, None)  # the first phase is not reported (module docstring)
        return s

    def current_player(self, state: State) -> int:
        """The active player at SELECT/POWER, the opponent at DENY, else CHANCE or TERMINAL."""
        return self._mover[state.stage][state.active]

    def is_response(self, state: State) -> bool:
        """True at the opponent's deny decision (8E-5.1)."""
        return state.stage == Stage.DENY

    def legal_actions(self, state: State) -> list[int]:
        """Sorted legal actions (empty at chance and terminal nodes).

        The last answer is kept with the state it was asked about: the env's mask, the
        opponent and the caller ask about the same state object in a row. Only finished
        states come here (the copies transitions edit in place use :meth:`_legal`).
        """
        last_state, last = self._last_legal
        if last_state is state:
            return list(last)
        legal = self._legal(state)
        self._last_legal = (state, legal)
        return list(legal)

    def _legal(self, state: State) -> tuple[int, ...]:
        stage = state.stage
        # Memoised by the fields legality reads (8E-2.1, 8E-3, 8E-5.1); of the wounds, only which
        # units are alive matters.
        if stage == Stage.SELECT:
            alive = self._alive(state.wounds)
            key: tuple[Any, ...] = (stage, state.active, state.selected, state.attempts, alive)
        elif stage == Stage.POWER:
            alive = self._alive(state.wounds)
            key = (stage, state.caster, state.unit_powers, state.attempts, alive)
        elif stage == Stage.DENY:
            alive = self._alive(state.wounds)
            key = (stage, state.caster, state.total, alive, state.deny_left)
        else:
            return ()
        cached = self._legal_cache.get(key)
        if cached is None:
            if len(self._legal_cache) >= _CACHE_LIMIT:
                self._legal_cache.clear()
            cached = self._legal_cache[key] = tuple(self._find_legal(state))
        return cached

    def _find_legal(self, state: State) -> list[int]:
        stage = state.stage
        if stage == Stage.SELECT:
            out = [i for i in self.side_psykers[state.active] if self._selectable(state, i)]
            out.append(self.END_PHASE)
            return out
        if stage == Stage.POWER:
            return [*self._cast_options(state, state.caster, state.unit_powers), self.STOP]
        out = [self.actions.deny(d) for d in self.deniers(state)]
        out.append(self.NO_DENY)
        return out

    def chance_outcomes(self, state: State) -> list[tuple[int, float]]:
        """Exact aggregated outcomes of the pending roll (see the module docstring)."""
        if self.current_player(state) != CHANCE:
            return []
        return list(self._chance(state).outcomes)

    def sample_chance(self, state: State, rng: np.random.Generator) -> int:
        """Draw a chance outcome from the same cached table ``chance_outcomes`` lists (one draw)."""
        return self._chance(state).sample(rng)

    def sample_chance_run(
        self, state: State, rng: np.random.Generator, events: list[Event]
    ) -> State:
        """Walk chance nodes to the next decision in one copy of the state.

        The same draws (one per node, from :meth:`_chance`) and the same transition code as
        :meth:`sample_chance` and :meth:`_apply` node by node; the states in between are seen by
        nobody, so the walk builds every node's result in one copy (see :func:`_update`).
        """
        mover = self._mover
        if mover[state.stage][state.active] != CHANCE:
            return state
        # Not while sample_chance or the transition code below is replaced (tests do).
        if not self._own_chance_walk():
            return super().sample_chance_run(state, rng, events)
        s = evolve(state)
        while True:
            self._chance_result(s, self._chance(s).sample(rng), events)
            if mover[s.stage][s.active] != CHANCE:
                return s

    def _decide_and_walk(
        self, state: State, action: int, rng: np.random.Generator, events: list[Event]
    ) -> State:
        """A decision and the chance nodes after it, in one copy of the state.

        The same transition code, draws and events as :meth:`apply_with_events` and then
        :meth:`sample_chance_run`; nobody sees the state between them, so one copy serves both.
        """
        s = evolve(state)
        self._dispatch(s, action, events)
        mover = self._mover
        while mover[s.stage][s.active] == CHANCE:
            self._chance_result(s, self._chance(s).sample(rng), events)
        return s

    def horizon(self, state: State) -> tuple[int, int]:
        """``(battle round, step)``: one step per cast, the unit of ``search`` lookahead.

        A step runs from a choice of psyker or power through the resolution of that attempt
        (8E-2 to 8E-7), so ``search`` looks ahead one cast at a time.
        """
        in_cast = state.stage not in DECISION_STAGES or state.stage == Stage.DENY
        return (state.round, state.phase * 256 + sum(state.attempts) - in_cast)

    def returns(self, state: State) -> tuple[float, float]:
        """Zero-sum scores (8E-8.2)."""
        return (state.score, -state.score)

    # ------------------------------------------------------------------ legality helpers

    def _alive(self, wounds: tuple[int, ...]) -> int:
        """Bit ``i`` set: unit ``i`` has wounds left (8E-1.3); memoised by the wounds."""
        alive = self._alive_cache.get(wounds)
        if alive is None:
            if len(self._alive_cache) >= _CACHE_LIMIT:
                self._alive_cache.clear()
            alive = self._alive_cache[wounds] = sum(1 << i for i, w in enumerate(wounds) if w > 0)
        return alive

    def _selectable(self, s: State, i: int) -> bool:
        if (s.selected >> i) & 1 or not s.wounds[i]:
            return False
        return bool(self._cast_options(s, i, 0))

    def cast_options(self, state: State, unit: int) -> list[int]:
        """Sorted cast actions ``unit`` may attempt now (8E-3), whether or not it is selected.

        For the selected unit this is what it may still attempt (its own earlier powers this
        phase locked out, 8E-3.3); for another unit, what it could attempt once selected.
        """
        unit_powers = state.unit_powers if state.caster == unit else 0
        return list(self._cast_options(state, unit, unit_powers))

    def _cast_options(self, s: State, c: int, unit_powers: int) -> tuple[int, ...]:
        """Cast actions of unit ``c`` (8E-3): known, not locked out, with a living target."""
        key = (c, unit_powers, s.attempts, self._alive(s.wounds))  # aliveness only, as _legal
        cached = self._options_cache.get(key)
        if cached is None:
            if len(self._options_cache) > _CACHE_LIMIT:
                self._options_cache.clear()
            cached = self._options_cache[key] = tuple(self._find_cast_options(s, c, unit_powers))
        return cached

    def _find_cast_options(self, s: State, c: int, unit_powers: int) -> list[int]:
        out: list[int] = []
        wounds = s.wounds
        for p in self.known[c]:
            power = self.powers[p]
            if power.repeatable:
                if (unit_powers >> p) & 1:  # the same unit, once per round (8E-3.3)
                    continue
            elif s.attempts[p]:  # once per round for the whole army (8E-3.2)
                continue
            cast = self.actions.cast
            if power.chosen_target:
                out.extend(cast(p, t) for t in self.targets[c][p] if wounds[t] > 0)
            else:
                for t in self.targets[c][p]:
                    if wounds[t] > 0:
                        out.append(cast(p, t))
                        break
        out.sort()
        return out

    def deniers(self, state: State) -> list[int]:
        """Units that may deny the pending power (8E-5.1): PSYKERs within range with denies left."""
        if state.caster < 0 or not _deniable(state.total):
            return []
        return [
            d
            for d in self.deny_candidates[state.caster]
            if state.wounds[d] > 0 and state.deny_left[d] > 0
        ]

    def decode_cast(self, action: int) -> tuple[int, int]:
        """``(power index, target unit)`` of a cast action (typed: ``actions.decode_cast``)."""
        cast = self.actions.decode_cast(action)
        return cast.power, cast.target

    def cast_action(self, power: int | str, target: int) -> int:
        """The action that attempts ``power`` (index or name) on unit ``target``."""
        p = self.power_index[power] if isinstance(power, str) else power
        return self.actions.cast(p, target)

    def warp_charge(self, state: State, power: int) -> int:
        """Warp charge of ``power`` for the active army now (8E-4.2: Smite's escalation)."""
        p = self.powers[power]
        return p.warp_charge + p.escalation * state.attempts[power]

    # ------------------------------------------------------------------ exact distributions

    def effect_distribution(
        self, power: int, caster: int, target: int, total: int, remaining: int | None = None
    ) -> tuple[tuple[int, Fraction], ...]:
        """Exact distribution of wounds the target loses if ``power`` is manifested (8E-7).

        Args:
            power: power index.
            caster: casting unit.
            target: target unit.
            total: the psychic test total (for ``boosted`` effects such as Smite's D6).
            remaining: the target's wounds left (default: all of them).
        """
        eff = self.powers[power].effect
        unit = self.units[target]
        left = self.max_wounds[target] if remaining is None else remaining
        if eff.mortal_wounds is not None:
            expr = eff.mortal_wounds
            if eff.boosted_at is not None and total >= eff.boosted_at:
                expr = eff.boosted  # type: ignore[assignment]
            return mortal_distribution(expr, left)
        if eff.attack is not None:
            a = eff.attack
            return attack_distribution(
                a.hits,
                a.strength,
                a.ap,
                a.damage,
                unit.toughness,
                unit.save,
                unit.invulnerable,
                left,
                unit.wounds,
            )
        if eff.rolloff is not None:
            r = eff.rolloff
            return rolloff_distribution(
                r.dice, r.win, r.tie, self.units[caster].leadership, unit.leadership, left
            )
        return ((0, Fraction(1)),)

    def expected_effect(
        self, state: State, power: int, caster: int, target: int, total: int
    ) -> float:
        """Expected score, for the caster's side, of ``power`` taking effect now (8E-7, 8E-8.2)."""
        return self.mean_effect(power, caster, target, total, state.wounds[target])

    def mean_effect(
        self, power: int, caster: int, target: int, total: int, remaining: int
    ) -> float:
        """Expected score of ``power`` taking effect on a target with ``remaining`` wounds."""
        p = self.powers[power]
        if p.value is not None:
            return p.value
        eff = p.effect
        boosted = eff.boosted_at is not None and total >= eff.boosted_at
        key = (power, caster, target, remaining, boosted)
        value = self._mean_cache.get(key)
        if value is None:
            dist = self.effect_distribution(power, caster, target, total, remaining)
            value = float(sum(w * q for w, q in dist)) * self.units[target].value_per_wound
            self._mean_cache[key] = value
        return value

    def _chance(self, s: State) -> ChanceTable:
        """The chance table of ``s``, memoised by the fields its distribution depends on."""
        stage = s.stage
        if stage == Stage.TEST:
            key: tuple[Any, ...] = ("test",)
        elif stage == Stage.PERILS:
            key = ("mw", self.game.perils_mortal_wounds, s.wounds[s.caster])
        elif stage == Stage.BLAST:
            key = ("mw", self.game.perils_blast_mortal_wounds, s.wounds[s.blast[0]])
        elif stage == Stage.DENY_ROLL:
            key = ("deny", s.total)
        else:
            eff = self.powers[s.power].effect
            boosted = eff.boosted_at is not None and s.total >= eff.boosted_at
            key = ("effect", s.power, s.caster, s.target, s.wounds[s.target], boosted)
        return self._chance_cache.get(key, lambda: self._exact_chance(s, key))

    def _exact_chance(self, s: State, key: tuple[Any, ...]) -> Any:
        """Exact ``(outcome, Fraction)`` pairs of the chance node ``s`` (``key``: its kind)."""
        if key[0] == "test":  # 8E-4.1
            return self._test_outcomes
        if key[0] == "mw":  # 8E-6.1, 8E-6.2
            return mortal_distribution(key[1], key[2])
        if key[0] == "deny":  # 8E-5.2
            q = deny_chance(s.total)
            return [(o, p) for o, p in ((0, 1 - q), (1, q)) if p]
        return self.effect_distribution(s.power, s.caster, s.target, s.total, s.wounds[s.target])

    # ------------------------------------------------------------------ transitions

    def _apply(self, state: State, action: int) -> tuple[State, tuple[Event, ...]]:
        events: list[Event] = []
        return self._step(state, action, events), tuple(events)

    def _transition(self, state: State, action: int) -> State:
        """The next state through the same code as :meth:`_apply`, building no events (search)."""
        return self._step(state, action, None)

    def _step(self, state: State, action: int, events: list[Event] | None) -> State:
        """The state after ``action``; what happened goes to ``events`` unless it is ``None``.

        The one copy of the transition is made here; the steps below build the next state in
        it (see :func:`_update`).
        """
        s = evolve(state)
        self._dispatch(s, action, events)
        return s

    def _dispatch(self, s: State, action: int, events: list[Event] | None) -> None:
        """Run the handler of ``s``'s stage on ``s`` itself (a transition's own copy)."""
        stage = s.stage
        if stage == Stage.SELECT:
            self._select(s, action, events)
        elif stage == Stage.POWER:
            self._power(s, action, events)
        elif stage == Stage.DENY:
            self._deny(s, action, events)
        else:
            self._chance_result(s, action, events)

    def _select(self, s: State, a: int, events: list[Event] | None) -> None:
        if a == self.END_PHASE:  # 8E-2.1
            self._next_phase(s, events)
            return self._advance(s, events)
        self._emit(events, self._select_event, a, s.active)
        _update(
            s,
            stage=Stage.POWER,
            caster=a,
            manifests_left=self.units[a].manifest,
            unit_powers=0,
            selected=s.selected | (1 << a),
        )

    def _power(self, s: State, a: int, events: list[Event] | None) -> None:
        if a == self.STOP:  # 8E-2.2
            _update(s, stage=Stage.SELECT, caster=-1, manifests_left=0, unit_powers=0)
            return self._advance(s, events)
        layout = self.actions
        p, t = divmod(a - layout.CAST, layout.n_units)  # decode_cast, without the typed view
        wc = self.warp_charge(s, p)  # 8E-4.2
        attempts = list(s.attempts)
        attempts[p] += 1
        self._emit(events, self._attempt_event, s.caster, p, t, wc, s.active)
        _update(
            s,
            stage=Stage.TEST,
            attempts=tuple(attempts),
            unit_powers=s.unit_powers | (1 << p),
            manifests_left=s.manifests_left - 1,
            power=p,
            target=t,
            warp_charge=wc,
            total=0,
        )

    def _deny(self, s: State, a: int, events: list[Event] | None) -> None:
        if a == self.NO_DENY:
            return self._to_effect(s, events)
        d = a - self.actions.DENY  # decode(a).unit, without the typed view
        deny_left = list(s.deny_left)
        deny_left[d] -= 1
        self._emit(events, self._deny_attempt_event, d, s.power, s.total, 1 - s.active)
        _update(s, stage=Stage.DENY_ROLL, denier=d, deny_left=tuple(deny_left))

    def _chance_result(self, s: State, a: int, events: list[Event] | None) -> None:
        stage = s.stage
        if stage == Stage.TEST:  # 8E-4.1, 8E-4.3
            _update(s, total=a)
            self._emit(events, self._test_event, s.caster, s.power, s.warp_charge, a, s.active)
            if is_perils(a):
                self._emit(events, self._perils_event, s.caster, a, s.active)
                _update(s, stage=Stage.PERILS)
                return self._enter_chance(s, events)
            if s.passed:
                return self._to_deny(s, events)
            return self._after_attempt(s, events)
        if stage == Stage.PERILS:  # 8E-6.1
            self._hurt(s, s.caster, a, events, "Perils of the Warp")
            if s.wounds[s.caster] == 0:  # 8E-6.2: the power fails, then the blast
                self._emit(events, self._perils_slain_event, s.power, s.caster, s.active)
                blast = tuple(j for j in self.blast_candidates[s.caster] if s.wounds[j] > 0)
                if blast:
                    _update(s, stage=Stage.BLAST, blast=blast)
                    return self._enter_chance(s, events)
                return self._after_attempt(s, events)
            if s.passed:
                return self._to_deny(s, events)
            return self._after_attempt(s, events)
        if stage == Stage.BLAST:  # 8E-6.2
            self._hurt(s, s.blast[0], a, events, self._blast_causes[s.caster])
            _update(s, blast=s.blast[1:])
            if s.blast:
                return self._enter_chance(s, events)
            return self._after_attempt(s, events)
        if stage == Stage.DENY_ROLL:  # 8E-5.2
            self._emit(events, self._deny_roll_event, bool(a), s.denier, s.power, 1 - s.active)
            if a:
                return self._after_attempt(s, events)
            return self._to_effect(s, events)
        # Stage.EFFECT (8E-7)
        self._emit(events, self._manifest_event, s.power, s.target, a, s.active)
        self._hurt(s, s.target, a, events, self.powers[s.power].name)
        self._after_attempt(s, events)

    def _to_deny(self, s: State, events: list[Event] | None) -> None:
        if self.deniers(s):  # 8E-5.1
            return _update(s, stage=Stage.DENY)
        self._to_effect(s, events)

    def _to_effect(self, s: State, events: list[Event] | None) -> None:
        power = self.powers[s.power]
        if power.value is not None:  # value effects score for the caster (8E-7.3, 8E-8.2)
            sign = 1.0 if s.active == 0 else -1.0
            self._emit(events, self._value_event, s.power, s.active)
            _update(s, score=s.score + sign * power.value)
            return self._after_attempt(s, events)
        _update(s, stage=Stage.EFFECT)
        self._enter_chance(s, events)

    def _enter_chance(self, s: State, events: list[Event] | None) -> None:
        """Resolve a chance node at once when it has a single outcome."""
        outcomes = self._chance(s).outcomes
        if len(outcomes) == 1:
            self._chance_result(s, outcomes[0][0], events)

    def _hurt(
        self, s: State, unit: int, amount: int, events: list[Event] | None, cause: str
    ) -> None:
        """Remove ``amount`` wounds from ``unit`` (spilling over models, 8E-7.2) and score them."""
        if amount <= 0:
            return
        wounds = list(s.wounds)
        wounds[unit] -= amount
        owner = self.side_of[unit]
        delta = amount * self.units[unit].value_per_wound
        self._emit(events, self._wounds_event, unit, amount, cause)
        if wounds[unit] == 0:  # 8E-1.3
            self._emit(events, self._slain_event, unit)
        _update(s, wounds=tuple(wounds), score=s.score + (delta if owner else -delta))

    def _after_attempt(self, s: State, events: list[Event] | None) -> None:
        _update(
            s, stage=Stage.POWER, power=-1, target=-1, warp_charge=0, total=0, denier=-1, blast=()
        )
        self._advance(s, events)

    def _advance(self, s: State, events: list[Event] | None) -> None:
        """Skip decisions the rules leave no choice in; end the game when it is over."""
        if s.stage == Stage.OVER:
            return
        alive = self._alive(s.wounds)  # the wounds do not change below
        if not (alive & self._side_masks[0] and alive & self._side_masks[1]):  # 8E-8.1
            return _update(s, stage=Stage.OVER)
        while True:
            # A decision with more than one legal action is asked (the last one is stop/end).
            if s.stage == Stage.POWER:
                if s.wounds[s.caster] > 0 and s.manifests_left > 0 and len(self._legal(s)) > 1:
                    return
                _update(s, stage=Stage.SELECT, caster=-1, manifests_left=0, unit_powers=0)
            elif s.stage == Stage.SELECT:
                if len(self._legal(s)) > 1:
                    return
                self._next_phase(s, events)
            else:
                return

    def _next_phase(self, s: State, events: list[Event] | None) -> None:
        """The next Psychic phase (8E-8.1), or the end of the game."""
        played = s.phases_played + 1
        limit = self.game.phase_limit
        phase, rnd = (1, s.round) if s.phase == 0 else (0, s.round + 1)
        if (limit is not None and played >= limit) or rnd > self.game.battle_rounds:
            return _update(s, stage=Stage.OVER, caster=-1)
        first = self.game.first_player
        active = first if phase == 0 else 1 - first
        self._emit(events, self._phase_event, rnd, active)
        # Wounds and score carry over; everything else starts afresh (8E-1.2, 8E-2).
        _update(
            s,
            **_PHASE_START,
            deny_left=self._full_deny,
            attempts=self._no_attempts,
            round=rnd,
            phase=phase,
            phases_played=played,
            active=active,
        )

    # ------------------------------------------------------------------ events

    def _emit(self, events: list[Event] | None, make: Callable[..., Event], *args: Any) -> None:
        """Append the event ``make(*args)`` to ``events``; nothing when ``events`` is ``None``.

        An event is an immutable value fixed by its builder's arguments, so each one is built
        (text formatted) once per scenario and shared afterwards.
        """
        if events is None:
            return
        key = (make.__func__, args)  # type: ignore[attr-defined]
        event = self._event_cache.get(key)
        if event is None:
            if len(self._event_cache) >= _CACHE_LIMIT:
                self._event_cache.clear()
            event = self._event_cache[key] = make(*args)
        events.append(event)

    def _select_event(self, unit: int, player: int) -> Event:
        name = self.names[unit]
        text = f"{name} is selected to manifest powers."
        return Event(EventKind.SELECT, text, player, _data(unit=name))

    def _attempt_event(self, caster: int, p: int, t: int, wc: int, player: int) -> Event:
        power = self.powers[p]
        at = "" if power.target in ("self", "none") else f" at {self.names[t]}"
        text = f"{self.names[caster]} attempts {power.name} (WC {wc}){at}."
        data = _data(
            caster=self.names[caster], power=power.name, target=self.names[t], warp_charge=wc
        )
        return Event(EventKind.ATTEMPT, text, player, data)

    def _deny_attempt_event(self, unit: int, p: int, total: int, player: int) -> Event:
        name, power = self.names[unit], self.powers[p].name
        text = f"{name} attempts to deny {power} (test {total})."
        return Event(EventKind.DENY_ATTEMPT, text, player, _data(power=power, unit=name))

    def _test_event(self, caster: int, p: int, wc: int, total: int, player: int) -> Event:
        power = self.powers[p].name
        passed = total >= wc > 0  # State.passed (8E-4.1)
        text = (
            f"{self.names[caster]} rolls {total} for {power} (WC {wc}): "
            f"{'passed' if passed else 'failed'}."
        )
        kind = EventKind.PASSED if passed else EventKind.FAILED
        return Event(kind, text, player, _data(power=power, total=total))

    def _perils_event(self, caster: int, total: int, player: int) -> Event:
        name = self.names[caster]
        text = f"{name} suffers Perils of the Warp (double {1 if total == 2 else 6})."
        return Event(EventKind.PERILS, text, player, _data(unit=name))

    def _perils_slain_event(self, p: int, caster: int, player: int) -> Event:
        power = self.powers[p].name
        text = f"{power} fails: {self.names[caster]} is destroyed by Perils of the Warp."
        return Event(EventKind.FAILED, text, player, _data(power=power))

    def _deny_roll_event(self, denied: bool, denier: int, p: int, player: int) -> Event:
        name, power = self.names[denier], self.powers[p].name
        data = _data(power=power, unit=name)
        if denied:
            return Event(EventKind.DENIED, f"{name} denies {power}.", player, data)
        return Event(EventKind.DENY_FAILED, f"{name} fails to deny {power}.", player, data)

    def _manifest_event(self, p: int, target: int, wounds: int, player: int) -> Event:
        power = self.powers[p].name
        value = wounds * self.units[target].value_per_wound
        text = f"{power} is manifested: {self.names[target]} loses {plural(wounds, 'wound')}."
        return Event(
            EventKind.MANIFEST, text, player, _data(power=power, value=value, wounds=wounds)
        )

    def _value_event(self, p: int, player: int) -> Event:
        power = self.powers[p]
        text = f"{power.name} is manifested (worth {power.value:g})."
        return Event(EventKind.MANIFEST, text, player, _data(power=power.name, value=power.value))

    def _wounds_event(self, unit: int, amount: int, cause: str) -> Event:
        name = self.names[unit]
        text = f"{name} loses {plural(amount, 'wound')} to {cause}."
        return Event(EventKind.WOUNDS, text, self.side_of[unit], _data(amount=amount, unit=name))

    def _slain_event(self, unit: int) -> Event:
        name = self.names[unit]
        return Event(EventKind.SLAIN, f"{name} is destroyed.", self.side_of[unit], _data(unit=name))

    def _phase_event(self, rnd: int, active: int) -> Event:
        text = f"Battle round {rnd}: {self.side_names[active]}'s Psychic phase."
        return Event(EventKind.PHASE, text, active, _data(round=rnd))

    # ------------------------------------------------------------------ views (views.py)

    def observe(self, state: State, player: int) -> np.ndarray:
        """Everything ``player`` may see (8th edition has no hidden information), float32.

        Layout (N units, P powers):

        * ``[0:5]`` kind of node: select a unit, choose a power, deny, chance, game over.
        * ``[5:13]`` battle round / battle rounds; 1 if it is this player's Psychic phase; 1 if
          this player is the first player; pending test total / 12; pending warp charge / 12;
          1 if the pending test perilled; chance that a deny beats the pending total; score from
          this player's view.
        * ``[13:13+10N]`` per unit: mine, alive, wounds left / wound pool, wounds left, psyker,
          deny attempts left, selected this phase, is the caster, is the pending target, is the
          denier.
        * then ``4P`` per power: warp charge now / 12 (with Smite's escalation), attempts this
          phase by the active army, known by the selected unit, is the pending power.

        Every entry lies within ``[-observation_bound, observation_bound]`` (at least 1000; more
        for scenarios with bigger wound pools or scores).
        """
        return self.view.observe(state, player)

    def describe(self, state: State, action: int) -> ActionView:
        """Typed view of a decision, or of a chance outcome at chance nodes (views.py)."""
        return self.view.describe(state, action)

    def render(self, state: State, player: int | None = None) -> str:
        """Text picture of the state for terminal play (everything is public in 8th edition)."""
        return self.view.render(state, player)

    def power_texts(self, state: State, player: int | None = None) -> dict[str, str]:
        """One line of rules text per power a living PSYKER knows (views.py)."""
        return self.view.power_texts(state, player)


# The one-copy decision and walk of RulesBase.apply_with_chance (see _decide_and_walk).
