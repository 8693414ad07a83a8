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
   (0 up to all its remaining points), then the target, if it is a psyker, bids ``j`` points of
   augmented save (0 up to all its points) WITHOUT seeing ``k``. The books set no other limit;
   the optional house rule ``game.max_bid`` caps each bid. Both bids are deducted whatever
   happens. One chance node then resolves the save (2D6 <= WP - k + j) together with the
   effect (wounds, duration...).
   See :meth:`RogueTraderRules.simultaneous_info` for solving the pair as a matrix game.
6. The game ends after the last turn or as soon as a side has no unit left in the fight.
   Score (RT-6.2), from player 0's point of view: value of wounds inflicted (``value_per_wound``)
   minus suffered, plus abilities' ``value`` when they work, plus the remaining wounds of units
   put out of the fight; healing gives back the value of the wounds healed.

Decision nodes where the rules leave one choice (an ability with one legal target, a bid with
no points to spend, a psyker with no usable ability, which can only rest) are advanced
automatically, as are chance nodes with a single outcome (a test with 1 point left).

Where each rule lives
---------------------
:class:`RogueTraderRules` (this module) holds the public API, the chance tables and the
transition loop; each rule section is a class of its own module, mixed into it:

* RT-1 psykers, psi-levels and abilities (set-up): :mod:`.generation` (``RTGeneration``);
* RT-2 using an ability (legal actions, targets, costs, the test): :mod:`.casting`
  (``RTCasting``);
* RT-3 the secret bids and the matrix game of RT-3.4: :mod:`.bids` (``RTBids``);
* RT-3.1 and RT-4 the resolution and the effects: :mod:`.effects` (``RTEffects``);
* RT-5 resting and RT-6 turns, the end and the score bounds: :mod:`.turns` (``RTTurns``).

The scenario's read-only facts (names, sizes, tables) are :class:`~.facts.RTFacts`, which the
views read instead of the rules; :mod:`.units` shares unit values; :mod:`.graph` is the fast
walk's memoised move graph; :mod:`.chances` the exact chance formulas.

Action layout
-------------
``Discrete(num_actions)``, fixed per scenario: REST, END, one action per ability, one per target
unit, then the numbers (bids and Cure Wounds amounts). :mod:`.actions` defines it and encodes and
decodes actions (``rules.actions`` is the scenario's :class:`~.actions.ActionLayout`);
:mod:`.views` holds the observation, the action views and the text.

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
* Bids have no cap: the books have none (RT-3.2, RT-3.3), so a psyker may bid every point it
  has. ``game.max_bid`` (default ``None``) is an optional house rule capping each bid.
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

Changes
-------
* Bids are no longer capped by default (rules-fidelity fix). Neither the seed nor RT-3.2/RT-3.3
  limits an enhanced-attack or augmented-save bid: a psyker may bid any of the psi-points it
  has. ``game.max_bid`` used to default to 4 (and the shipped duel set 3); it is now optional
  (``None``, no cap), kept as a house rule for groups that want one. The number actions cover
  the largest possible bid (:attr:`RogueTraderRules.bid_limit`, the most psi-points any psyker
  of the scenario can hold), so the action space of a scenario grows with its psi-levels (the
  duel: 48 -> 57 actions). The duel's exact value moved from -0.0883 (cap 3) to +0.1074.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import numpy as np

from psygym.core import ActionView, Event, Information, RulesBase
from psygym.editions.rogue_trader.abilities import AbilityData, load_data
from psygym.editions.rogue_trader.actions import ABILITY_BASE, END, REST
from psygym.editions.rogue_trader.bids import RTBids
from psygym.editions.rogue_trader.casting import RTCasting
from psygym.editions.rogue_trader.chances import (
    armour_needed,
    attack_outcomes,
    binary,
    psychic_save_chance,
    two_d6_at_most,
    works_chance,
)
from psygym.editions.rogue_trader.effects import RTEffects
from psygym.editions.rogue_trader.facts import RTFacts
from psygym.editions.rogue_trader.generation import RTGeneration
from psygym.editions.rogue_trader.graph import MoveGraph
from psygym.editions.rogue_trader.spec import RTScenario
from psygym.editions.rogue_trader.state import DECISIONS, Events, Phase, State
from psygym.editions.rogue_trader.turns import RTTurns
from psygym.editions.rogue_trader.views import RTViews
from psygym.kernel import ChanceCache, ChanceTable
from psygym.scenario import distance

# Attribute access on an Enum class is slow; the hot paths compare against these aliases.
(
    _SETUP_LEVEL, _SETUP_COUNT, _SETUP_DRAW, _RECOVER, _CHOOSE, _TARGET, _AMOUNT, _TEST,
    _ATTACK_BID, _SAVE_BID, _RESOLVE, _OVER,
) = Phase  # fmt: skip
_MAX_EVENTS = 50_000  # memoised events kept (each a few hundred bytes)


# ----------------------------------------------------------------------------- rules
_FAST_HOOKS = ("_step", "_settle", "chance_table", "_decide_and_walk", "_walk", "_legal")
"""What the fast walks call or stand in for (``RulesBase._own_chance_walk``)."""


class RogueTraderRules(RTGeneration, RTCasting, RTBids, RTEffects, RTTurns, RulesBase):
    """Rogue Trader psionics over a validated scenario (see the module docstring).

    Besides the ``RulesBase`` API it offers ``is_response(state)`` (true at the target's save
    bid), ``targets(state, psyker, ability)``, ``will_power(state, unit)``,
    ``resolve_distribution(state)`` (exact ``Fraction`` outcomes of a resolution node),
    ``chance_table(state)`` / ``chance_distribution(state)`` (the one memoised table of a chance
    node, exact and float) and ``simultaneous_info(state)`` for the secret bids of RT-3.4:

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

    The rule sections live in the mixed-in classes (see "Where each rule lives" in the module
    docstring); this class holds the public API, the chance tables and the transition loop.

    Attributes:
        scenario: the validated :class:`~psygym.editions.rogue_trader.spec.RTScenario`.
        facts: the scenario's :class:`~.facts.RTFacts`; each of its fields is also an
            attribute of the rules (``game``, ``names``, ``owner``, ``specs``, ``actions``,
            ``max_psi_points``, ``bid_limit``, ``max_number``, ``target_base``,
            ``number_base``...), see there.
        game: its ``[game]`` settings.
        names, owner, specs: per unit, in scenario order (side 0's units first).
        actions: the scenario's :class:`~.actions.ActionLayout` (encode and decode actions).
        max_psi_points: the most psi-points any psyker of the scenario can hold (its psi-level,
            or the highest random roll, RT-1.1).
        bid_limit: the largest bid of the scenario (RT-3.2, RT-3.3): ``max_psi_points``, or the
            optional house cap ``game.max_bid`` when lower.
        max_number: the largest number action (``bid_limit`` or the most wounds Cure Wounds
            can heal, whichever is larger).
        target_base, number_base: first target action and first number (bid/amount) action.
        dist: distances between units, by unit pair.
        views: the :class:`~.views.RTViews` that ``observe``, ``describe`` and ``render`` use.
    """

    edition = "rt"
    fast_walk_hooks = _FAST_HOOKS
    information = Information.SIMULTANEOUS  # RT-3.4: the two bids are secret and simultaneous

    def __init__(self, scenario: RTScenario, source: str = "<scenario>"):
        self.scenario = scenario
        self.source = source
        self.data: AbilityData = load_data()
        self.facts = facts = RTFacts.build(scenario, self.data)
        # The facts' fields are the rules' attributes too: the hot paths read ``self.names``,
        # not ``self.facts.names``.
        self.__dict__.update(facts.fields())
        specs = self.specs
        self.dist = tuple(tuple(distance(a.position, b.position) for b in specs) for a in specs)
        # Static geometry: who each psyker could target with each ability (RT-4 ranges).
        self._cands: dict[tuple[int, int], tuple[int, ...]] = {}
        for u in range(self.n_units):
            if not self.psyker[u]:
                continue
            for a, ab in enumerate(self.abilities):
                self._cands[(u, a)] = self._candidates(u, ab)
        # How each (psyker, ability) can move the score, target by target (rest_bounds).
        self._moves = {key: self.score_moves(*key) for key in self._cands}
        nb = self.number_base
        self._bids = tuple(tuple(range(nb, nb + cap + 1)) for cap in range(self.bid_limit + 1))
        """The legal bids up to each cap (:meth:`_legal`)."""
        self._legal_state: State | None = None
        self._legal_last: tuple[int, ...] = ()
        self._legal_memo: dict[tuple, tuple[int, ...]] = {}
        """:meth:`_legal` by the fields it reads (about three asks in four repeat one)."""
        self._table_state: State | None = None
        self._table_last: ChanceTable | None = None
        """The chance node :meth:`_settle` last stopped at, and its table (the graph's next ask)."""
        self._chance = ChanceCache()
        self._initial: State | None = None
        self._event_memo: dict[tuple, Event] = {}
        self._graph = MoveGraph(self)
        """The fast walk's memoised transitions (:mod:`.graph`)."""
        self.views = RTViews(facts)
        self._steps = {
            _CHOOSE: self._choose,
            _TARGET: self._on_target,
            _AMOUNT: self._on_amount,
            _ATTACK_BID: self._on_attack_bid,
            _SAVE_BID: self._on_save_bid,
            _TEST: self._on_test,
            _RESOLVE: self._resolve,
            _RECOVER: self._on_recover,
            _SETUP_LEVEL: self._set_level,
            _SETUP_COUNT: self._set_count,
            _SETUP_DRAW: self._draw,
        }
        self.observation_size = self.views.size

    # One definition each, in the facts: the views ask the facts, the rules the same function.
    current_player = RTFacts.current_player
    will_power = RTFacts.will_power

    # ------------------------------------------- API: state, players, legal actions and chance
    def initial_state(self) -> State:
        """Start of the game: set-up chance nodes if anything is random, else the first turn.

        The state depends on the scenario only, so it is built once (states are immutable).
        A new game usually begins with the env's questions about it, so its node of the fast
        walk's graph becomes the graph's last node.
        """
        if self._initial is None:
            self._initial = self._build_initial_state()
        self._graph.start(self._initial)
        return self._initial

    def legal_actions(self, state: State) -> list[int]:
        """Sorted legal actions (see the module docstring's layout)."""
        graph = self._graph
        if state is graph.last_state:  # the state the fast walk just returned
            return list(graph.legal[graph.last])
        if state is self._legal_state:  # the same (immutable) state asked again
            return list(self._legal_last)
        legal = self._legal(state)
        self._legal_state, self._legal_last = state, legal
        return list(legal)

    def chance_outcomes(self, state: State) -> list[tuple[int, float]]:
        """Exact outcomes of the chance node (see the module docstring for their meaning)."""
        table = self.chance_table(state)
        return [] if table is None else list(table.outcomes)

    def chance_distribution(self, state: State) -> list[tuple[int, Fraction]]:
        """The outcomes of :meth:`chance_outcomes` with exact ``Fraction`` probabilities."""
        table = self.chance_table(state)
        return [] if table is None else list(table.exact)

    def sample_chance(self, state: State, rng: np.random.Generator) -> int:
        """Draw one chance outcome from the node's table (one uniform draw, none if certain)."""
        table = self.chance_table(state)
        if table is None:
            raise ValueError("sample_chance needs a chance node")
        if len(table.outcomes) == 1:
            return table.outcomes[0][0]
        return table.sample(rng)

    def sample_chance_run(
        self, state: State, rng: np.random.Generator, events: list[Event]
    ) -> State:
        """Walk chance nodes to the next decision, events going straight into ``events``.

        The same draws (:meth:`sample_chance`: none when a node is certain) and transitions as
        :meth:`apply_with_events` node by node, without a list and a tuple of events per node.
        """
        phase = state.phase
        if phase == _OVER or phase in DECISIONS:
            return state
        # Not while sample_chance or the transition code below is replaced (tests do).
        if not self._own_chance_walk():
            return super().sample_chance_run(state, rng, events)
        return self._walk(state, rng, events)

    def _decide_and_walk(
        self, state: State, action: int, rng: np.random.Generator, events: list[Event]
    ) -> State:
        """A decision and the chance nodes after it (as :meth:`sample_chance_run` walks them).

        Through the memoised graph of :mod:`.graph`: each ``(state, action)`` runs ``_step``
        and ``_settle`` once, with the same draws and events every time.
        """
        graph = self._graph
        return graph.walk(graph.enter(state), action, rng, events)

    def _walk(self, state: State, rng: np.random.Generator, events: list[Event]) -> State:
        """The chance nodes from ``state`` (one) to the next decision or the end."""
        graph = self._graph
        return graph.walk(graph.enter(state), None, rng, events)

    def legal_mask(self, state: State) -> np.ndarray:
        """Boolean mask over ``range(num_actions)`` of :meth:`legal_actions` (its own copy)."""
        graph = self._graph
        if state is not graph.last_state:
            return super().legal_mask(state)
        mask = graph.masks[graph.last]
        if mask is None:
            mask = graph.masks[graph.last] = super().legal_mask(state)
            mask.flags.writeable = False
        return mask.copy()

    # -------------------------------------------------------------------- views (see views.py)
    def observe(self, state: State, player: int) -> np.ndarray:
        """What ``player`` may see (layout: :meth:`.views.RTViews.observe`; hides bids, RT-3.4).

        The state the fast walk last returned (:mod:`.graph`) keeps its observations, so the
        env's question about it is a copy.
        """
        graph = self._graph
        if state is not graph.last_state:  # player is 0 or 1 (RulesBase checks it)
            return self.views.observe(state, player)
        cache = graph.obs1 if player else graph.obs0
        obs = cache[graph.last]
        if obs is None:
            obs = cache[graph.last] = self.views.observe(state, player)
            obs.flags.writeable = False
        return obs.copy()

    def describe(self, state: State, action: int) -> ActionView:
        """Typed view of a decision or chance outcome in ``state`` (:mod:`.views`)."""
        return self.views.describe(state, action)

    def render(self, state: State, player: int | None = None) -> str:
        """Text picture of the state; the attacker's pending bid is hidden from anyone else."""
        return self.views.render(state, player)

    def power_texts(self, state: State, player: int | None = None) -> dict[str, str]:
        """One line of rules text per ability a living psyker holds (:mod:`.views`)."""
        return self.views.power_texts(state, player)

    # ---------------------------------------------------------------------------- chance nodes
    def chance_table(self, s: State) -> ChanceTable | None:
        """The :class:`~psygym.kernel.ChanceTable` of the chance node ``s`` (``None`` elsewhere).

        One table per node key serves ``chance_outcomes``, ``chance_distribution`` and
        ``sample_chance``, so sampling and exact solving read the same numbers.
        """
        phase = s.phase
        if phase == _TEST:
            points = s.units[s.actor].points
            return self._chance.get(
                (phase, points), lambda: binary(works_chance(points, self.game.no_test_at))
            )
        if phase == _RESOLVE:
            ts = s.units[s.target]
            net = ts.wp_bonus - s.attack_bid + s.save_bid
            key = (phase, s.ability, s.target, net, ts.hp, ts.aura)
            return self._chance.get(key, lambda: self.resolve_distribution(s))
        if phase == _RECOVER:
            u = s.actor
            wp = self.will_power(s, u)
            return self._chance.get((phase, u, wp), lambda: binary(psychic_save_chance(wp)))
        if phase == _SETUP_LEVEL:
            return self._chance.get((phase, s.actor), lambda: self._level_outcomes(s.actor))
        if phase == _SETUP_COUNT:
            return self._chance.get((phase, s.actor), lambda: self._count_outcomes(s.actor))
        if phase == _SETUP_DRAW:
            u = s.actor
            pool = self._draw_pool(s, u)
            return self._chance.get(
                (phase, u, pool), lambda: [(a, Fraction(1, len(pool))) for a in pool]
            )
        return None

    # ----------------------------------------------------------------------------- transitions
    def _transition(self, state: State, action: int) -> State:
        """The next state through the same code as :meth:`_apply`, recording no events."""
        return self._settle(self._step(state, action, None), None)

    def _apply(self, state: State, action: int) -> tuple[State, tuple[Event, ...]]:
        """The next state and the events of the transition (``RulesBase.apply_with_events``)."""
        ev: list[Event] = []
        s = self._step(state, action, ev)
        return self._settle(s, ev), tuple(ev)

    def _note(self, ev: Events, make: Callable[[], Event], key: tuple | None = None) -> None:
        """Record the event ``make()`` builds, unless ``ev`` is ``None`` (event-free search).

        Events are immutable, so with a ``key`` (everything the event depends on) one is built
        once and shared by every transition that records it.
        """
        if ev is None:
            return
        if key is None:
            ev.append(make())
            return
        event = self._event_memo.get(key)
        if event is None:
            if len(self._event_memo) >= _MAX_EVENTS:
                self._event_memo.clear()
            event = self._event_memo[key] = make()
        ev.append(event)

    def _settle(self, s: State, ev: Events) -> State:
        """Advance through nodes that offer a single action or outcome.

        The legal actions (decision) or chance table (chance node) of the state it stops at
        are remembered with it (``_legal_state``, ``_table_state``): the next question is
        usually about that state.
        """
        step = self._step
        while True:
            phase = s.phase
            if phase == _OVER:
                return s
            if phase in DECISIONS:
                legal = self._legal(s)
                if len(legal) != 1:
                    self._legal_state, self._legal_last = s, legal
                    return s
                s = step(s, legal[0], ev)
            else:
                table = self.chance_table(s)
                outcomes = table.outcomes
                if len(outcomes) != 1:
                    self._table_state, self._table_last = s, table
                    return s
                s = step(s, outcomes[0][0], ev)

    def _step(self, s: State, a: int, ev: Events) -> State:
        """One transition from ``s`` (no settling); dispatched on the phase."""
        return self._steps[s.phase](s, a, ev)

    def _on_target(self, s: State, a: int, ev: Events) -> State:
        """The target of the ability under way is chosen (RT-2.2)."""
        return self._after_target(s, s.ability, a - self.target_base, s.amount, ev)

    def _on_amount(self, s: State, a: int, ev: Events) -> State:
        """The wounds Cure Wounds heals are chosen (RT-4.6); the ability is attempted."""
        return self._attempt(s, ev, s.ability, s.target, a - self.number_base)

    def _on_test(self, s: State, a: int, ev: Events) -> State:
        """The 2D6 test came up: 1 works, 0 fails (RT-2.3)."""
        return self._tested(s, a == 1, ev)

    def _on_recover(self, s: State, a: int, ev: Events) -> State:
        """The confused unit's psychic save came up: 1 recovered, 0 still confused."""
        return self._recovered(s, a == 1, ev)


__all__ = [
    "ABILITY_BASE",
    "END",
    "REST",
    "RogueTraderRules",
    "armour_needed",
    "attack_outcomes",
    "psychic_save_chance",
    "two_d6_at_most",
    "works_chance",
]
