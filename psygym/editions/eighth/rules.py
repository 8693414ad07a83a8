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

## Where each rule lives

:class:`EighthRules` (this module) holds the public API, built once per scenario; each concern
is a class of its own module, mixed into it, so every method keeps its name on the rules object
and the hot paths gain no call:

* the legal actions, cast options and deniers (8E-2.1, 8E-3, 8E-5.1): :mod:`.legality`
  (``EighthLegality``);
* the chance nodes and the effect of a power (8E-4 to 8E-7): :mod:`.chances`
  (``EighthChances``; the exact distributions are :mod:`.effects`);
* the transitions through a Psychic phase and the score (8E-2 to 8E-8): :mod:`.transitions`
  (``EighthTransitions``);
* the events they report: :mod:`.events` (``EighthEvents``).

The scenario's read-only facts (units, powers, geometry) are :class:`~.facts.EighthFacts`, which
the views (:mod:`.views`) read instead of the rules; the state is :mod:`.state`.

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

from typing import Any

import numpy as np

from psygym.core import CHANCE, TERMINAL, ActionView, Event, GameInfo, RulesBase
from psygym.editions.eighth.chances import EighthChances
from psygym.editions.eighth.effects import two_d6
from psygym.editions.eighth.events import EighthEvents
from psygym.editions.eighth.facts import MEMO_SIZE, EighthFacts, PowerDef
from psygym.editions.eighth.legality import EighthLegality
from psygym.editions.eighth.spec import PowerFile, Scenario
from psygym.editions.eighth.state import DECISION_STAGES, Stage, State
from psygym.editions.eighth.transitions import EighthTransitions
from psygym.editions.eighth.views import EighthView, observation_size
from psygym.kernel import ChanceCache, evolve

_FAST_HOOKS = ("_step", "_dispatch", "_chance", "_chance_result", "_decide_and_walk")
"""What the one-copy walks call or stand in for (``RulesBase._own_chance_walk``)."""


class EighthRules(EighthLegality, EighthChances, EighthTransitions, EighthEvents, RulesBase):
    """8th-edition psychic phase rules for one scenario (see the module docstring).

    Attributes:
        facts: the scenario's :class:`~.facts.EighthFacts`; each of its fields is also an
            attribute of the rules, see there.
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
        self.facts = facts = EighthFacts.build(scenario, catalogue)
        # The facts' fields are the rules' attributes too: the hot paths read ``self.units``,
        # not ``self.facts.units``.
        self.__dict__.update(facts.fields())
        game = self.game
        n, n_powers = self.n_units, self.n_powers
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
        self._chance_cache = ChanceCache(MEMO_SIZE)
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
        self.view = EighthView(facts, self.cast_options)

    # One definition, in the facts: the views ask the facts, the rules the same function.
    warp_charge = EighthFacts.warp_charge

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

    def phase_horizon(self, state: State) -> tuple[int, int]:
        """``(battle round, phase)``: every state of one Psychic phase is one unit (8E-1)."""
        return (state.round, state.phase)

    def returns(self, state: State) -> tuple[float, float]:
        """Zero-sum scores (8E-8.2)."""
        return (state.score, -state.score)

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


__all__ = ["EighthRules", "PowerDef"]
